"""What tune needs from the probe: per metric the key estimate and counter-overflow shares, the
target's own time per execution, and where its harness, corpus and traces are."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autotune.tune.space import WIDTHS


@dataclass(frozen=True)
class MetricFacts:
    metric: str
    observed_keys: int  # distinct keys in the census
    estimated_keys: float  # the probe's estimate of all keys (observed + unseen)
    overflow_by_width: dict[int, float]  # width -> share of keys with max_hits >= 2^W
    # map slots -> collision rate the census measured for its keys with AFL++'s own hash (hk32):
    # what an afl-cc build gets (not uniform for ngram-N; docs/DESIGN.md "The map sink's index key")
    afl_hash_collision: dict[int, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "observed_keys": self.observed_keys,
                "estimated_keys": round(float(self.estimated_keys), 1),
                "overflow_by_width": {str(w): round(v, 6) for w, v in sorted(self.overflow_by_width.items())},
                "afl_hash_collision": {str(s): round(v, 6) for s, v in sorted(self.afl_hash_collision.items())}}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MetricFacts":
        return cls(metric=d["metric"], observed_keys=int(d["observed_keys"]), estimated_keys=float(d["estimated_keys"]),
                   overflow_by_width={int(w): float(v) for w, v in d["overflow_by_width"].items()},
                   afl_hash_collision={int(s): float(v) for s, v in (d.get("afl_hash_collision") or {}).items()})


@dataclass(frozen=True)
class TuneInputs:
    metrics: dict[str, MetricFacts]
    target_exec_ns: float | None  # the target's median time per execution in the probe
    probe_dir: Path | None = None
    harness: Path | None = None  # the probe's harness binary (linked with our runtime)
    corpus_dir: Path | None = None
    target: str = "unknown"
    extra: dict[str, Any] = field(default_factory=dict)

    def facts(self, metric: str) -> MetricFacts:
        return self.metrics[metric]

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "probe_dir": str(self.probe_dir) if self.probe_dir else None,
                "harness": str(self.harness) if self.harness else None,
                "corpus_dir": str(self.corpus_dir) if self.corpus_dir else None,
                "target_exec_ns": self.target_exec_ns,
                "metrics": [f.to_dict() for f in self.metrics.values()], "extra": self.extra}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TuneInputs":
        def path(key: str) -> Path | None:
            return Path(d[key]) if d.get(key) else None

        exec_ns = d.get("target_exec_ns")
        return cls(metrics={m["metric"]: MetricFacts.from_dict(m) for m in d["metrics"]},
                   target_exec_ns=None if exec_ns is None else float(exec_ns), probe_dir=path("probe_dir"),
                   harness=path("harness"), corpus_dir=path("corpus_dir"), target=str(d.get("target", "unknown")),
                   extra=dict(d.get("extra") or {}))

    def recorded(self) -> "TuneInputs":
        """These inputs as report.json holds them (figures rounded as to_dict rounds them)."""
        return TuneInputs.from_dict(self.to_dict())


def overflow_shares(max_hits) -> dict[int, float]:
    from autotune.tune.precision import counter_overflow_share  # lazy: numpy

    return {w: counter_overflow_share(max_hits=max_hits, width_bits=w) for w in WIDTHS}
