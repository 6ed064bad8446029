"""The probe's settings as one typed value (the CLI builds it, the pipeline and preflight pass it on,
the campaign reads it). Standard library and autotune.probe.defaults only, so pipeline.py and the
CLI import it without loading the campaign (numpy)."""

from __future__ import annotations

from dataclasses import dataclass

from autotune.probe.defaults import DEFAULT_CAPACITY, DEFAULT_MAX_INPUT, DEFAULT_PROBE_TIME_S, DEFAULT_TIMEOUT_MS


@dataclass(frozen=True)
class ProbeSettings:
    """How the probe campaign runs: ``time_s`` seconds (``max_execs``: stop after that many executions,
    for a reproducible census), from ``seed``, each input within ``timeout_ms`` and ``max_input_bytes``,
    a census table of ``capacity`` keys per metric, at most ``max_trace_inputs`` kept inputs traced for
    replay, the census of ``metrics`` (None: every metric), and the ``engine`` that mutates (havoc,
    afl, auto: autotune.probe.campaign.run_probe)."""

    time_s: float = DEFAULT_PROBE_TIME_S
    max_execs: int | None = None
    seed: int = 0
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_input_bytes: int = DEFAULT_MAX_INPUT
    capacity: int = DEFAULT_CAPACITY
    max_trace_inputs: int = 1000
    metrics: tuple[str, ...] | None = None
    engine: str = "havoc"
