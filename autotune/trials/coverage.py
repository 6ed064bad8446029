"""What the yardstick is and what it measured, as the documents record them (trial.json, compare.json,
race.json): :class:`Yardstick` (its kind, binary and settings), :class:`YardstickCoverage` (a trial's
figures), the coverage curve's points. The measuring itself is autotune.trials.yardstick's (AFL++'s
PCGUARD build or our census build under afl-showmap) and autotune.trials.llvmcov's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from autotune.vocabulary import (
    COUNTER_BITS_VAR, INDEX_SIZE_VAR, KEY_HASH_VAR, LAYOUT_VAR, MAP_SIZE_VAR, METRIC_VAR, SEED_VAR,
)

SCHEMA_VERSION = 1
KIND_PCGUARD = "aflpp-pcguard"
KIND_CENSUS = "autotune-census-edge"
KIND_LLVMCOV = "llvm-cov-branches"
DESCRIPTIONS = {
    KIND_PCGUARD: "edges of AFL++'s default build (afl-clang-fast, PCGUARD) under afl-showmap, one map per input",
    KIND_CENSUS: "exact edge keys of the autotune cc build (AUTOTUNE_METRIC=edge, two-level, 2^24 index) under "
                 "afl-showmap, one map per input (afl-clang-fast was not found)",
    KIND_LLVMCOV: "branches covered in clang's source-based coverage build of the target (plain clang "
                  "-fprofile-instr-generate -fcoverage-mapping, our replay main, no fuzzer's instrumentation) "
                  "by llvm-cov export; regions, lines and functions recorded beside",
}
UNITS = {KIND_PCGUARD: "edges", KIND_CENSUS: "edges", KIND_LLVMCOV: "branches"}
# autotune compare --yardstick: pcguard is AFL++'s PCGUARD build (our census build when
# afl-clang-fast is missing), llvm-cov the source-based coverage build
CHOICES = ("pcguard", "llvm-cov")
CENSUS_ENV = {METRIC_VAR: "edge", LAYOUT_VAR: "twolevel", INDEX_SIZE_VAR: str(1 << 24),
              MAP_SIZE_VAR: str(1 << 20), KEY_HASH_VAR: "exact", COUNTER_BITS_VAR: "8",
              SEED_VAR: "0"}
REPLAY_TIMEOUT_MS = 1000  # per input; a hang costs this much, its map still counts what it ran
CURVE_POINTS = 10  # coverage over time: at 0, T/10, ..., T


@dataclass(frozen=True)
class Yardstick:
    kind: str
    binary: str
    sha256: str
    env: dict[str, str] = field(default_factory=dict)  # the runtime settings of the replay (census)
    timeout_ms: int = REPLAY_TIMEOUT_MS
    tools: dict = field(default_factory=dict)  # llvm-cov: the LLVM tools (LlvmTools.to_dict)

    @property
    def description(self) -> str:
        return DESCRIPTIONS[self.kind]

    @property
    def unit(self) -> str:
        """What the headline count (``YardstickCoverage.edges``) counts: edges or branches."""
        return UNITS[self.kind]

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "kind": self.kind, "description": self.description,
                "unit": self.unit, "binary": self.binary, "sha256": self.sha256, "env": dict(self.env),
                "timeout_ms": self.timeout_ms, "tools": dict(self.tools)}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Yardstick":
        if d.get("kind") not in DESCRIPTIONS:
            raise ValueError(f"unknown yardstick kind {d.get('kind')!r}")
        return cls(kind=str(d["kind"]), binary=str(d["binary"]), sha256=str(d["sha256"]), env=dict(d.get("env") or {}),
                   timeout_ms=int(d.get("timeout_ms", REPLAY_TIMEOUT_MS)), tools=dict(d.get("tools") or {}))


@dataclass(frozen=True)
class YardstickCoverage:
    kind: str
    edges: int  # distinct edges over every kept input
    inputs: int  # inputs replayed
    unreplayed: int  # inputs afl-showmap wrote no map for (none so far)
    curve: tuple[tuple[float, int], ...]  # (seconds since start, edges of the inputs kept by then)
    late_inputs: int  # inputs stamped after the time-box (or without time:), counted at its end
    index_keys: int | None = None  # census: keys in the replay's index file (cross-check)
    overflow_keys: int | None = None
    llvm_cov: dict | None = None  # llvm-cov-branches: totals, per-point totals, replay figures
    # several instances' inputs: per instance, edges of its own finds (imports left out), edges it
    # reached first (by the inputs' times), edges no other instance reached
    by_instance: dict | None = None
    # crashes kept, and unique by their yardstick edges (one count per distinct edge set: the same
    # crash found by two instances, or kept twice, counts once)
    unique_crashes: int | None = None

    @property
    def unit(self) -> str:
        return UNITS.get(self.kind, "edges")

    def to_dict(self) -> dict:
        return {"kind": self.kind, "unit": self.unit, "edges": self.edges, "inputs": self.inputs,
                "unreplayed": self.unreplayed, "curve": [[t, e] for t, e in self.curve],
                "late_inputs": self.late_inputs, "index_keys": self.index_keys, "overflow_keys": self.overflow_keys,
                "llvm_cov": self.llvm_cov, "by_instance": self.by_instance, "unique_crashes": self.unique_crashes}

    @classmethod
    def from_dict(cls, d: Mapping) -> "YardstickCoverage":
        return cls(kind=str(d["kind"]), edges=int(d["edges"]), inputs=int(d["inputs"]),
                   unreplayed=int(d["unreplayed"]), curve=tuple((float(t), int(e)) for t, e in d["curve"]),
                   late_inputs=int(d["late_inputs"]), index_keys=d.get("index_keys"),
                   overflow_keys=d.get("overflow_keys"), llvm_cov=d.get("llvm_cov"), by_instance=d.get("by_instance"),
                   unique_crashes=d.get("unique_crashes"))


def curve_times(seconds: float, points: int = CURVE_POINTS) -> list[float]:
    return [round(seconds * i / points, 3) for i in range(points + 1)]


def coverage_curve(*, slots_by_time: Sequence[tuple[int | None, frozenset[int]]], seconds: float,
                   points: int = CURVE_POINTS) -> tuple[tuple[tuple[float, int], ...], int, int]:
    """(curve, final edges, late inputs) from each input's (time ms, slots): the union up to each
    point; the last point takes every input, so the curve ends at the final figure."""
    limit_ms = seconds * 1000
    late = sum(1 for t, _ in slots_by_time if t is None or t > limit_ms)
    ordered = sorted(slots_by_time, key=lambda ts: limit_ms if ts[0] is None else min(ts[0], limit_ms))
    times = curve_times(seconds, points)
    seen: set[int] = set()
    curve: list[tuple[float, int]] = []
    i = 0
    for j, t in enumerate(times):
        last = j == len(times) - 1
        while i < len(ordered) and (last or (ordered[i][0] is not None and ordered[i][0] <= t * 1000)):
            seen |= ordered[i][1]
            i += 1
        curve.append((t, len(seen)))
    return tuple(curve), len(seen), late
