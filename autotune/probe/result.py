"""The probe's output document, ``probe.json`` (ProbeResult, schema_version 1), and its loader.

The census part (``metrics``) holds no timing, so the same seed and execution budget give the
same census. Later stages read it with :func:`load_probe` and the binary census/trace files
beside it with :meth:`ProbeResult.census_table` / :meth:`ProbeResult.traces`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from autotune.errors import DocumentError
from autotune.io import check_schema, read_json
from autotune.probe import protocol as P
from autotune.probe.afl_engine import AflEngineRun
from autotune.probe.census import MetricCensus, Percentiles

SCHEMA_VERSION = 1
KIND = "probe result"
FILE_NAME = "probe.json"


def _plain(obj: Any) -> Any:
    return obj.to_dict() if hasattr(obj, "to_dict") else obj


@dataclass(frozen=True)
class ProbeConfig:
    binary: str
    demo: bool
    corpus_dir: str | None
    seed: int
    time_budget_s: float
    max_execs: int | None
    timeout_ms: int
    max_input_bytes: int
    capacity: int
    metrics: list[str] | None = None  # the census's metrics; None = all 13
    engine: str = "havoc"  # what mutated: "afl" (afl-fuzz on the union map, then replayed) or "havoc"

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping) -> "ProbeConfig":
        return cls(binary=str(d["binary"]), demo=bool(d["demo"]), corpus_dir=d.get("corpus_dir"),
                   seed=int(d["seed"]), time_budget_s=float(d["time_budget_s"]),
                   max_execs=None if d.get("max_execs") is None else int(d["max_execs"]),
                   timeout_ms=int(d["timeout_ms"]), max_input_bytes=int(d["max_input_bytes"]),
                   capacity=int(d["capacity"]), metrics=None if d.get("metrics") is None else list(d["metrics"]),
                   engine=str(d.get("engine", "havoc")))


@dataclass(frozen=True)
class CampaignStats:
    execs: int  # every input run (ok, crash, hang)
    execs_ok: int  # merged into the census (the census's execution count)
    crashes: int
    hangs: int
    kept: int  # inputs kept for a new exact key
    seeds_total: int
    seeds_ok: int
    seeds_crash: int
    seeds_hang: int
    seeds_skipped: int  # too big, or beyond the corpus bounds
    census_full: bool
    stop_reason: str  # "time", "execs", "interrupt"
    elapsed_s: float  # whole probe (server start .. probe.json)
    loop_s: float  # seeds + mutation loop
    execs_per_s: float  # execs / loop_s
    server_ns_per_exec: float  # mean exec_ns the server measured (the harness in its child)
    overhead_ns_per_exec: float  # mean wall time per exec seen from Python minus exec_ns: protocol, isolation, mutation

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping) -> "CampaignStats":
        ints = ("execs", "execs_ok", "crashes", "hangs", "kept", "seeds_total", "seeds_ok", "seeds_crash",
                "seeds_hang", "seeds_skipped")
        floats = ("elapsed_s", "loop_s", "execs_per_s", "server_ns_per_exec", "overhead_ns_per_exec")
        kw = {k: int(d[k]) for k in ints} | {k: float(d[k]) for k in floats}
        return cls(census_full=bool(d["census_full"]), stop_reason=str(d["stop_reason"]), **kw)


@dataclass(frozen=True)
class Finding:
    """A crashing or hanging input, saved under crashes/ or hangs/ with a .txt reason."""

    kind: str  # "crash" or "hang"
    file: str  # relative to the output dir
    reason: str  # one line, e.g. "signal 6 (SIGABRT)" or "hang: no result within 1000 ms"
    detail: int  # signal number or timeout ms
    origin: str  # "seed:<name>" or "havoc"
    size_bytes: int
    sha1: str
    exec_index: int  # which execution (1-based over all executions)

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping) -> "Finding":
        return cls(kind=str(d["kind"]), file=str(d["file"]), reason=str(d["reason"]), detail=int(d["detail"]),
                   origin=str(d["origin"]), size_bytes=int(d["size_bytes"]), sha1=str(d["sha1"]),
                   exec_index=int(d["exec_index"]))


@dataclass(frozen=True)
class CorpusEntry:
    file: str  # relative to the output dir
    size_bytes: int
    origin: str
    exec_index: int
    new_keys: int  # new exact keys summed over metrics when it was kept
    trace_seq: int | None  # its block in traces/<metric>.bin, None when not traced

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping) -> "CorpusEntry":
        return cls(file=str(d["file"]), size_bytes=int(d["size_bytes"]), origin=str(d["origin"]),
                   exec_index=int(d["exec_index"]), new_keys=int(d["new_keys"]),
                   trace_seq=None if d.get("trace_seq") is None else int(d["trace_seq"]))


@dataclass(frozen=True)
class Curve:
    """The discovery curve: keys of every metric after ``execs[i]`` executions, at ``time_s[i]``."""

    execs: list[int]
    time_s: list[float]
    keys: dict[str, list[int]]

    def to_dict(self) -> dict:
        return {"execs": list(self.execs), "time_s": list(self.time_s),
                "keys": {m: list(v) for m, v in self.keys.items()}}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Curve":
        return cls(execs=[int(x) for x in d["execs"]], time_s=[float(x) for x in d["time_s"]],
                   keys={str(m): [int(x) for x in v] for m, v in d["keys"].items()})


@dataclass
class ProbeResult:
    config: ProbeConfig
    campaign: CampaignStats
    exec_time: Percentiles
    metrics: list[MetricCensus]
    curve: Curve
    corpus: list[CorpusEntry]
    crashes: list[Finding]
    hangs: list[Finding]
    notes: list[str] = field(default_factory=list)
    afl: AflEngineRun | None = None  # afl-fuzz's figures when it was the engine
    out_dir: Path | None = None  # where it was loaded from / written to (not serialised)
    schema_version: int = SCHEMA_VERSION

    def metric(self, name: str) -> MetricCensus:
        for m in self.metrics:
            if m.metric == name:
                return m
        raise KeyError(name)

    def census_dict(self) -> dict:
        """The part that depends only on the target, corpus, seed and execution budget."""
        return {"metrics": [m.to_dict() for m in self.metrics],
                "corpus": [c.to_dict() for c in self.corpus],
                "execs": self.campaign.execs, "execs_ok": self.campaign.execs_ok}

    def to_dict(self) -> dict:
        return {
            "schema_version": self.schema_version,
            "config": self.config.to_dict(),
            "campaign": self.campaign.to_dict(),
            "exec_time": self.exec_time.to_dict(),
            "metrics": [m.to_dict() for m in self.metrics],
            "curve": self.curve.to_dict(),
            "corpus": [c.to_dict() for c in self.corpus],
            "crashes": [c.to_dict() for c in self.crashes],
            "hangs": [c.to_dict() for c in self.hangs],
            "notes": list(self.notes),
            "afl": self.afl.to_dict() if self.afl else None,
            "files": {"census": [f"census/{m.metric}.bin" for m in self.metrics],
                      "traces": [f"traces/{m.metric}.bin" for m in self.metrics]},
        }

    @classmethod
    def from_dict(cls, d: Mapping, *, out_dir: Path | None = None) -> "ProbeResult":
        """The document's ProbeResult; DocumentError when it is of another schema version."""
        if d.get("schema_version") != SCHEMA_VERSION:
            raise DocumentError(out_dir or "<probe result>", f"schema_version {d.get('schema_version')!r} is not "
                                f"supported (this autotune reads version {SCHEMA_VERSION})", field="schema_version",
                                fix="run `autotune probe` again")
        return cls(config=ProbeConfig.from_dict(d["config"]), campaign=CampaignStats.from_dict(d["campaign"]),
                   exec_time=Percentiles.from_dict(d["exec_time"]),
                   metrics=[MetricCensus.from_dict(m) for m in d["metrics"]], curve=Curve.from_dict(d["curve"]),
                   corpus=[CorpusEntry.from_dict(c) for c in d["corpus"]],
                   crashes=[Finding.from_dict(c) for c in d["crashes"]],
                   hangs=[Finding.from_dict(c) for c in d["hangs"]], notes=[str(n) for n in d.get("notes", [])],
                   afl=AflEngineRun.from_dict(d["afl"]) if d.get("afl") else None, out_dir=out_dir, schema_version=int(d["schema_version"]))

    # --- the binary files beside probe.json ---------------------------------------------------
    def _dir(self) -> Path:
        if self.out_dir is None:
            raise ValueError("this ProbeResult has no directory (load it with load_probe)")
        return self.out_dir

    def census_table(self, metric: str) -> P.CensusTable:
        return P.read_census(P.census_path(self._dir(), metric), metric=metric)

    def traces(self, metric: str) -> dict[int, np.ndarray]:
        """{trace_seq: records} of ``traces/<metric>.bin``; corpus entries name their trace_seq."""
        return P.read_traces(P.trace_path(self._dir(), metric))

    def corpus_inputs(self) -> list[bytes]:
        return [(self._dir() / c.file).read_bytes() for c in self.corpus]


def load_probe(out_dir: str | Path) -> ProbeResult:
    """Read ``<out_dir>/probe.json`` (or the probe.json path given) (DocumentError if missing, corrupt or of another version)."""
    p = Path(out_dir)
    path = p if p.suffix == ".json" and not p.is_dir() else p / FILE_NAME
    doc = check_schema(path, read_json(path), kind=KIND, version=SCHEMA_VERSION)
    try:
        return ProbeResult.from_dict(doc, out_dir=path.parent)
    except (KeyError, TypeError, ValueError) as exc:
        raise DocumentError(path, f"incomplete or malformed probe result ({type(exc).__name__}: {exc})",
                            fix="run `autotune probe` again") from exc
