"""`autotune bench`: the per-exec cost of the map work per layout, counter width and map size.

For every configuration, kernels/bench.c replays a key trace (from a probe or synthetic) into
the map and times reset, update, classify+compare and hash per execution (see bench.c for the
protocol). Each figure is the median over ``rounds`` timed rounds after an untimed warm-up.
Flat and two-level run in the same process, one size after the other, so their ratio compares
like with like.

The map size is counted in slots (H, the hash space: bytes of AFL's 8-bit map); a W-bit
counter array takes H * W/8 bytes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from autotune.errors import AutotuneError
from autotune.measure import native
from autotune.measure.stats import mad, median, pow2_range
from autotune.measure.trace import KeyTrace

SCHEMA_VERSION = 1
PHASES = ("reset_ns", "update_ns", "classify_compare_ns", "hash_ns")
MIN_MAP_SLOTS = 8 << 10
MAX_MAP_SLOTS = 128 << 20
# BigMap (DSN 2021), Section V-B / Figure 6: mean fuzzer throughput of BigMap over AFL.
PAPER_RATIOS: dict[int, float] = {64 << 10: 0.98, 256 << 10: 1.4, 2 << 20: 4.5, 8 << 20: 33.1}
PAPER_CITATION = ("BigMap (Ahmed et al., DSN 2021), Section V-B and Figure 6: mean test-case "
                  "throughput of BigMap over AFL, whole fuzzer, 19 benchmarks")


@dataclass(frozen=True)
class BenchSettings:
    map_slots: tuple[int, ...]
    widths: tuple[int, ...] = native.WIDTHS
    layouts: tuple[str, ...] = ("flat", "twolevel")
    policy: str = "neverzero"
    warmup_rounds: int = 1
    rounds: int = 5
    round_s: float = 0.02
    min_execs: int = 3
    hugepages: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"map_slots": list(self.map_slots), "widths": list(self.widths), "layouts": list(self.layouts),
                "policy": self.policy, "warmup_rounds": self.warmup_rounds, "rounds": self.rounds,
                "round_s": self.round_s, "min_execs": self.min_execs, "hugepages": self.hugepages}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BenchSettings":
        return cls(map_slots=tuple(d["map_slots"]), widths=tuple(d["widths"]), layouts=tuple(d["layouts"]),
                   policy=d["policy"], warmup_rounds=d["warmup_rounds"], rounds=d["rounds"], round_s=d["round_s"],
                   min_execs=d["min_execs"], hugepages=d["hugepages"])


@dataclass(frozen=True)
class BenchCase:
    """Median per-exec figures of one layout/width/size (ns per execution unless named otherwise)."""

    layout: str
    width_bits: int
    map_slots: int
    reset_ns: float
    update_ns: float
    classify_compare_ns: float
    hash_ns: float
    total_ns: float  # median of the rounds' totals
    total_ns_min: float
    total_ns_mad: float
    update_ns_per_hit: float
    hits_per_exec: float
    execs: int  # timed executions over all rounds
    used_key: int
    overflow_keys: int
    hugepage_bytes: int | None

    @property
    def counter_bytes(self) -> int:
        return self.map_slots * self.width_bits // 8

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["counter_bytes"] = self.counter_bytes
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BenchCase":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class BenchResult:
    settings: BenchSettings
    trace: dict[str, Any]
    cases: tuple[BenchCase, ...]
    host: dict[str, Any] | None
    variant: str
    timer_overhead_ns: float
    elapsed_s: float
    target_exec_ns: float | None = None  # the target's own time per execution (from the probe), if known
    schema_version: int = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)

    # -- queries -------------------------------------------------------------------------------
    def case(self, layout: str, width_bits: int, map_slots: int) -> BenchCase | None:
        for c in self.cases:
            if (c.layout, c.width_bits, c.map_slots) == (layout, width_bits, map_slots):
                return c
        return None

    def cost_ns(self, layout: str, width_bits: int, map_slots: int) -> float:
        """Per-exec map cost at any size: measured, else log-log interpolated/extrapolated."""
        pts = sorted((c.map_slots, c.total_ns) for c in self.cases
                     if c.layout == layout and c.width_bits == width_bits)
        if not pts:
            raise AutotuneError(f"the bench figures have no {layout}/{width_bits}-bit case",
                                fix="re-run `autotune bench` with that layout and width")
        return _loglog(pts, map_slots)

    def ratios(self, *, width_bits: int = 8) -> list[dict[str, Any]]:
        """Flat over two-level per size: map work alone, and modelled fuzzer throughput."""
        rows = []
        for s in self.settings.map_slots:
            f, t = self.case("flat", width_bits, s), self.case("twolevel", width_bits, s)
            if not f or not t:
                continue
            row: dict[str, Any] = {"map_slots": s, "width_bits": width_bits, "flat_ns": round(f.total_ns, 3),
                                   "twolevel_ns": round(t.total_ns, 3),
                                   "map_work_ratio": round(f.total_ns / max(t.total_ns, 1e-9), 3)}
            if self.target_exec_ns:
                e = self.target_exec_ns
                row["throughput_ratio"] = round((e + f.total_ns) / (e + t.total_ns), 3)
            if s in PAPER_RATIOS:
                row["paper_throughput_ratio"] = PAPER_RATIOS[s]
            rows.append(row)
        return rows

    def shape(self, *, width_bits: int = 8) -> dict[str, Any]:
        """Figure 6's shape: growth of each layout's cost from the smallest to the largest map."""
        out: dict[str, Any] = {}
        for layout in self.settings.layouts:
            pts = sorted((c.map_slots, c.total_ns) for c in self.cases
                         if c.layout == layout and c.width_bits == width_bits)
            if len(pts) >= 2:
                out[layout] = {"smallest_map_slots": pts[0][0], "largest_map_slots": pts[-1][0],
                               "growth": round(pts[-1][1] / max(pts[0][1], 1e-9), 3)}
        return out

    # -- the document --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "kind": "bench",
            "settings": self.settings.to_dict(),
            "trace": self.trace,
            "variant": self.variant,
            "timer_overhead_ns": self.timer_overhead_ns,
            "elapsed_s": round(self.elapsed_s, 3),
            "target_exec_ns": self.target_exec_ns,
            "cases": [c.to_dict() for c in self.cases],
            "ratios": self.ratios(),
            "shape": self.shape(),
            "paper": {"citation": PAPER_CITATION, "ratios": {str(k): v for k, v in PAPER_RATIOS.items()}},
            "host": self.host,
            "extra": self.extra,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "BenchResult":
        return cls(settings=BenchSettings.from_dict(d["settings"]), trace=d["trace"],
                   cases=tuple(BenchCase.from_dict(c) for c in d["cases"]), host=d.get("host"),
                   variant=d["variant"], timer_overhead_ns=d["timer_overhead_ns"], elapsed_s=d["elapsed_s"],
                   target_exec_ns=d.get("target_exec_ns"), schema_version=d["schema_version"],
                   extra=d.get("extra", {}))


def _loglog(pts: list[tuple[int, float]], x: int) -> float:
    import math

    for s, v in pts:
        if s == x:
            return v
    if len(pts) == 1:
        return pts[0][1]
    if x <= pts[0][0]:
        a, b = pts[0], pts[1]
        if x < pts[0][0]:
            return a[1]  # below the smallest measured map the cost does not fall further
    elif x >= pts[-1][0]:
        a, b = pts[-2], pts[-1]
    else:
        i = next(i for i in range(1, len(pts)) if pts[i][0] > x)
        a, b = pts[i - 1], pts[i]
    la, lb, lx = math.log(a[0]), math.log(b[0]), math.log(x)
    ya, yb = math.log(max(a[1], 1e-3)), math.log(max(b[1], 1e-3))
    return math.exp(ya + (yb - ya) * (lx - la) / (lb - la))


def default_map_slots(*, min_slots: int = MIN_MAP_SLOTS, max_slots: int = MAX_MAP_SLOTS) -> tuple[int, ...]:
    try:
        return tuple(pow2_range(min_slots, max_slots))
    except ValueError as exc:
        raise AutotuneError(f"map sizes must be powers of two: {exc}",
                            fix="pass --min-map-bytes/--max-map-bytes as powers of two, e.g. 8192 and 134217728") \
            from exc


def case_from_raw(raw: native.RawRun, *, layout: str, width_bits: int, map_slots: int) -> BenchCase:
    """Medians over the rounds of one native run."""
    r = raw.rounds
    col = {name: [float(x) for x in r[:, i]] for i, name in enumerate(native.FIELDS)}
    execs = int(sum(col["execs"]))
    hits_per_exec = sum(col["hits"]) / max(execs, 1)
    upd = median(col["update_ns"])
    return BenchCase(
        layout=layout, width_bits=width_bits, map_slots=map_slots,
        reset_ns=median(col["reset_ns"]), update_ns=upd, classify_compare_ns=median(col["classify_compare_ns"]),
        hash_ns=median(col["hash_ns"]), total_ns=median(col["total_ns"]), total_ns_min=min(col["total_ns"]),
        total_ns_mad=mad(col["total_ns"]), update_ns_per_hit=upd / hits_per_exec if hits_per_exec else 0.0,
        hits_per_exec=hits_per_exec, execs=execs, used_key=raw.used_key, overflow_keys=raw.overflow_keys,
        hugepage_bytes=raw.hugepage_bytes,
    )


def measure_case(*, trace: KeyTrace, layout: str, width_bits: int, map_slots: int,
                 settings: BenchSettings) -> tuple[BenchCase, native.RawRun]:
    raw = native.run_case(trace=trace, layout=layout, width_bits=width_bits, map_slots=map_slots,
                          policy=settings.policy, hugepages=settings.hugepages,
                          timing=native.Timing(warmup_rounds=settings.warmup_rounds, rounds=settings.rounds,
                                               round_s=settings.round_s, min_execs=settings.min_execs))
    return case_from_raw(raw, layout=layout, width_bits=width_bits, map_slots=map_slots), raw


def run_bench(*, trace: KeyTrace, settings: BenchSettings, host: dict[str, Any] | None = None,
              target_exec_ns: float | None = None,
              progress: Callable[[str], None] | None = None) -> BenchResult:
    """Measure every (size, width, layout) of ``settings``; flat and two-level alternate per size."""
    t0 = time.monotonic()
    cases: list[BenchCase] = []
    variant, overhead = "unknown", 0.0
    for s in settings.map_slots:
        for w in settings.widths:
            for layout in settings.layouts:
                if progress:
                    progress(f"{layout} {w}-bit {s} slots")
                case, raw = measure_case(trace=trace, layout=layout, width_bits=w, map_slots=s, settings=settings)
                cases.append(case)
                variant, overhead = raw.variant, raw.timer_overhead_ns
    return BenchResult(settings=settings, trace=trace.summary(), cases=tuple(cases), host=host, variant=variant,
                       timer_overhead_ns=overhead, elapsed_s=time.monotonic() - t0, target_exec_ns=target_exec_ns)
