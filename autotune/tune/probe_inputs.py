"""Read what tune needs from a probe directory (autotune.probe.load_probe)."""

from __future__ import annotations

from pathlib import Path

from autotune.errors import AutotuneError
from autotune.probe import load_probe
from autotune.probe.result import ProbeResult
from autotune.tune.inputs import MetricFacts, TuneInputs
from autotune.tune.space import WIDTHS


def inputs_from_probe(probe: ProbeResult | str | Path) -> TuneInputs:
    """The facts tune needs from a probe: its ProbeResult (with its directory), or its directory."""
    res = probe if isinstance(probe, ProbeResult) else load_probe(probe)
    if res.out_dir is None:
        raise AutotuneError("the probe result names no directory (its corpus and census files)",
                            fix="load it with autotune.probe.load_probe(DIR)")
    probe_dir = Path(res.out_dir)
    facts = {}
    for mc in res.metrics:
        over = {int(r.counter_bits): float(r.overflow_share) for r in mc.overflow}
        for w in WIDTHS:
            if w not in over:
                # 64-bit counters never wrap within one execution; a width the probe did not report
                # is at least as good as the next smaller one it did
                smaller = [over[v] for v in sorted(over) if v < w]
                over[w] = 0.0 if w == 64 or not smaller else smaller[-1]
        est = float(mc.richness.estimate) if mc.richness and mc.richness.estimate else float(mc.keys)
        afl = {int(r.map_bytes): float(r.collision_rate) for r in (mc.map_sizes or [])}
        facts[mc.metric] = MetricFacts(metric=mc.metric, observed_keys=int(mc.keys),
                                       estimated_keys=max(est, float(mc.keys), 1.0), overflow_by_width=over,
                                       afl_hash_collision=afl)
    if not facts:
        raise AutotuneError(f"{probe_dir}: the probe holds no metric census", fix="re-run `autotune probe`")
    out_dir = probe_dir.resolve()  # report.json names it; readers resolve from elsewhere
    corpus = out_dir / "corpus"
    harness = Path(res.config.binary) if res.config.binary else None
    exec_ns = float(res.exec_time.p50_ns) if res.exec_time and res.exec_time.count else None
    return TuneInputs(metrics=facts, target_exec_ns=exec_ns, probe_dir=out_dir, harness=harness,
                      corpus_dir=corpus if corpus.is_dir() else None,
                      target=harness.name if harness else out_dir.name,
                      extra={"probe_seed": int(res.config.seed), "probe_execs": int(res.campaign.execs_ok)})


def corpus_files(inputs: TuneInputs) -> list[Path]:
    if not inputs.corpus_dir:
        return []
    return sorted(p for p in inputs.corpus_dir.iterdir() if p.is_file())
