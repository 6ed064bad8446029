"""The document of a compare: ``compare.json`` (:class:`CompareResult`: per configuration its trials
and summaries, per pair its tests, the optional bug report) and the names of the files beside it.
autotune.compare.compare runs the campaigns that fill it; render and plot read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from autotune.bugs.survival import BugReport
from autotune.configuration import Configuration
from autotune.io import scalars_from_dict
from autotune.stats import MannWhitney, Summary
from autotune.trials import TrialResult, Yardstick

SCHEMA_VERSION = 1
JSON_NAME = "compare.json"
MD_NAME = "compare.md"
PLOT_NAME = "coverage.png"
# yardstick_edges is the yardstick's headline count (its unit: edges, or branches for llvm-cov);
# the name stays for the readers of compare.json
# mean_edges: the yardstick's count averaged over the campaign (mean_coverage): who got there sooner
MEASURES = ("yardstick_edges", "mean_edges", "unique_crashes", "execs_per_s")
LLVM_COV_MEASURES = {"llvm_cov_regions": "regions", "llvm_cov_lines": "lines"}  # when the yardstick is llvm-cov


@dataclass(frozen=True)
class CurvePoint:
    t_s: float
    median: float
    low: float  # min over trials
    high: float  # max
    q1: float
    q3: float

    def to_dict(self) -> dict:
        return {"t_s": self.t_s, "median": self.median, "min": self.low, "max": self.high, "q1": self.q1,
                "q3": self.q3}

    @classmethod
    def from_dict(cls, d: Mapping) -> "CurvePoint":
        return cls(t_s=float(d["t_s"]), median=float(d["median"]), low=float(d["min"]), high=float(d["max"]),
                   q1=float(d["q1"]), q3=float(d["q3"]))


@dataclass(frozen=True)
class ConfigOutcome:
    config: Configuration
    binary: str
    trials: tuple[TrialResult, ...]
    coverage: Summary  # the yardstick's final edges per trial
    execs_per_s: Summary
    corpus_count: Summary
    curve: tuple[CurvePoint, ...]

    def to_dict(self) -> dict:
        return {"config": self.config.to_compare_dict(), "binary": self.binary, "coverage": self.coverage.to_dict(),
                "execs_per_s": self.execs_per_s.to_dict(), "corpus_count": self.corpus_count.to_dict(),
                "curve": [p.to_dict() for p in self.curve], "trials": [t.to_dict() for t in self.trials]}

    @classmethod
    def from_dict(cls, d: Mapping) -> "ConfigOutcome":
        return cls(config=Configuration.from_dict(d["config"]), binary=str(d["binary"]),
                   trials=tuple(TrialResult.from_dict(t) for t in d["trials"]),
                   coverage=Summary.from_dict(d["coverage"]), execs_per_s=Summary.from_dict(d["execs_per_s"]),
                   corpus_count=Summary.from_dict(d["corpus_count"]),
                   curve=tuple(CurvePoint.from_dict(p) for p in d["curve"]))


@dataclass(frozen=True)
class PairOutcome:
    a: str
    b: str
    measure: str  # one of MEASURES (or LLVM_COV_MEASURES)
    median_a: float
    median_b: float
    test: MannWhitney
    a12: float  # P(a's trial beats b's), ties half
    magnitude: str

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "measure": self.measure, "median_a": self.median_a,
                "median_b": self.median_b, "mann_whitney": self.test.to_dict(), "a12": self.a12,
                "magnitude": self.magnitude}

    @classmethod
    def from_dict(cls, d: Mapping) -> "PairOutcome":
        return scalars_from_dict(cls, d, test=MannWhitney.from_dict(d["mann_whitney"]))


@dataclass(frozen=True)
class CompareResult:
    target: dict
    corpus: str
    seeds: int
    seconds: int
    trials: int
    jobs: int
    rng_seed: int
    yardstick: Yardstick
    configs: tuple[ConfigOutcome, ...]
    pairs: tuple[PairOutcome, ...]
    out_dir: str
    wall_s: float
    host: dict | None = None
    notes: tuple[str, ...] = ()
    remeasure: dict | None = None  # a re-measure: the source directory, its yardstick and pairs (remeasure.py)
    bugs: "BugReport | None" = None  # --yardstick bugs: time-to-bug survival statistics (optional block)
    compilers: dict | None = None  # the clang behind afl-clang-fast and autotune cc (autotune.llvm.compilers)
    schema_version: int = SCHEMA_VERSION

    def config(self, name: str) -> ConfigOutcome:
        return next(c for c in self.configs if c.config.name == name)

    def to_dict(self) -> dict:
        return {"schema_version": self.schema_version, "target": dict(self.target), "corpus": self.corpus,
                "seeds": self.seeds, "seconds": self.seconds, "trials": self.trials, "jobs": self.jobs,
                "rng_seed": self.rng_seed, "yardstick": self.yardstick.to_dict(),
                "configs": [c.to_dict() for c in self.configs], "pairs": [p.to_dict() for p in self.pairs],
                "out_dir": self.out_dir, "wall_s": self.wall_s, "host": self.host, "notes": list(self.notes),
                "remeasure": self.remeasure, "compilers": self.compilers,
                **({"bugs": self.bugs.to_dict()} if self.bugs is not None else {})}

    @classmethod
    def from_dict(cls, d: Mapping) -> "CompareResult":
        if int(d.get("schema_version", 0)) != SCHEMA_VERSION:
            raise ValueError(f"compare schema_version {d.get('schema_version')!r}, expected {SCHEMA_VERSION}")
        return cls(target=dict(d["target"]), corpus=str(d["corpus"]), seeds=int(d["seeds"]), seconds=int(d["seconds"]),
                   trials=int(d["trials"]), jobs=int(d["jobs"]), rng_seed=int(d["rng_seed"]),
                   yardstick=Yardstick.from_dict(d["yardstick"]),
                   configs=tuple(ConfigOutcome.from_dict(c) for c in d["configs"]),
                   pairs=tuple(PairOutcome.from_dict(p) for p in d["pairs"]), out_dir=str(d["out_dir"]),
                   wall_s=float(d["wall_s"]), host=d.get("host"), notes=tuple(d.get("notes") or ()),
                   remeasure=d.get("remeasure"), bugs=_bug_report_from(d.get("bugs")), compilers=d.get("compilers"))


def _bug_report_from(d: Mapping | None) -> "BugReport | None":
    if not d:
        return None
    return BugReport.from_dict(d)


