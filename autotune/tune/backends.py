"""Measurement backends: the execs/s of a configuration on this host.

- :class:`BenchMeasurer`: kernels/bench.c replays the probe's key trace of the metric into the
  configured map (reset, update, classify+compare, hash per execution) and adds the target's own
  time per execution from the probe: ``execs_per_s = 1e9 / (target_exec_ns + map_ns)``.
- ``ReplayMeasurer`` (autotune.tune.replay): the probe's harness replays its kept corpus through
  our runtime configured by AUTOTUNE_* variables (the driver's replay mode), a real run.
- :class:`RecordedMeasurer`: figures recorded earlier (a report's measurements), for tests and
  for re-tuning without re-running; it refuses a configuration it has no figure for.
- :class:`CachedMeasurer`: each configuration is measured once per run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from autotune.errors import AutotuneError
from autotune.mappoint import MapPoint


@dataclass(frozen=True)
class Measurement:
    execs_per_s: float
    source: str  # "bench", "replay", "recorded"
    map_ns: float | None = None  # per-exec map work, when the backend knows it
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"execs_per_s": round(float(self.execs_per_s), 3), "source": self.source,
                "map_ns": None if self.map_ns is None else round(float(self.map_ns), 3), "detail": self.detail}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Measurement":
        return cls(execs_per_s=float(d["execs_per_s"]), source=str(d["source"]), map_ns=d.get("map_ns"),
                   detail=dict(d.get("detail") or {}))


class Measurer(Protocol):
    name: str

    def measure(self, config: MapPoint) -> Measurement: ...


class RecordedMeasurer:
    """Figures recorded earlier: {config key: execs_per_s}."""

    name = "recorded"

    def __init__(self, figures: dict[str, float]):
        self.figures = dict(figures)
        self.calls: list[MapPoint] = []

    def measure(self, config: MapPoint) -> Measurement:
        self.calls.append(config)
        try:
            eps = self.figures[config.key()]
        except KeyError:
            raise AutotuneError(f"no recorded figure for {config.key()}",
                                fix="record that configuration, or narrow the search space") from None
        return Measurement(execs_per_s=float(eps), source="recorded")


class CachedMeasurer:
    """Measure each configuration once; later requests return the cached figure."""

    def __init__(self, inner: Measurer, *, on_measure: Callable[[MapPoint, Measurement], None] | None = None):
        self.inner = inner
        self.name = inner.name
        self.cache: dict[str, Measurement] = {}
        self.hits = 0
        self.on_measure = on_measure

    def measure(self, config: MapPoint) -> Measurement:
        k = config.key()
        if k in self.cache:
            self.hits += 1
            return self.cache[k]
        # as measurements.json records it (rounded): a figure measured now and the same figure read back
        # by a later run (autotune.tune.cache) then score alike, to the last digit of report.json
        m = Measurement.from_dict(self.inner.measure(config).to_dict())
        self.cache[k] = m
        if self.on_measure:
            self.on_measure(config, m)
        return m

    @property
    def measured(self) -> int:
        return len(self.cache)


class BenchMeasurer:
    """bench.c on the probe's traces plus the target's own time per execution."""

    name = "bench"

    def __init__(self, *, traces: Callable[[str], Any], target_exec_ns: float,
                 dense_for: Callable[[MapPoint], int | None], rounds: int = 3, round_s: float = 0.01):
        self.traces = traces  # metric -> KeyTrace
        self.target_exec_ns = float(target_exec_ns)
        self.dense_for = dense_for
        self.rounds = rounds
        self.round_s = round_s

    def measure(self, config: MapPoint) -> Measurement:
        from autotune.measure import native  # lazy: numpy
        from autotune.measure.bench import case_from_raw  # lazy: numpy

        raw = native.run_case(trace=self.traces(config.metric), layout=config.layout, width_bits=config.width_bits,
                              map_slots=config.map_slots, capacity=self.dense_for(config),
                              timing=native.Timing(rounds=self.rounds, round_s=self.round_s, min_execs=2))
        case = case_from_raw(raw, layout=config.layout, width_bits=config.width_bits, map_slots=config.map_slots)
        map_ns = case.total_ns
        eps = 1e9 / (self.target_exec_ns + map_ns)
        return Measurement(execs_per_s=eps, source="bench", map_ns=map_ns,
                           detail={"reset_ns": round(case.reset_ns, 1), "update_ns": round(case.update_ns, 1),
                                   "classify_compare_ns": round(case.classify_compare_ns, 1),
                                   "hash_ns": round(case.hash_ns, 1), "target_exec_ns": round(self.target_exec_ns, 1),
                                   "used_key": case.used_key})
