"""ctypes binding of kernels/bench.c (built as its own shared library with the bigmap sources)."""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autotune.errors import AutotuneError
from autotune.measure.trace import KeyTrace
from autotune.paths import kernels_dir
from autotune.runtime.build import build_artifact
from autotune.vocabulary import COUNTER_WIDTHS, LAYOUTS as LAYOUT_SPECS

LAYOUTS = {n: lay.bm_code for n, lay in LAYOUT_SPECS.items()}  # bench.c times the runtime's layouts
POLICIES = {"wrap": 0, "neverzero": 1, "saturate": 2}
WIDTHS = COUNTER_WIDTHS
BM_F_NO_HUGEPAGE = 1
FIELDS = ("reset_ns", "update_ns", "classify_compare_ns", "hash_ns", "total_ns", "execs", "hits")
# Optimised like the runtime the target links (autotune.runtime.artifacts.RUNTIME_CFLAGS).
BENCH_CFLAGS = ("-O2", "-g")
BENCH_NAME = "autotune-bench"


class _Spec(ctypes.Structure):
    _fields_ = [
        ("layout", ctypes.c_int32), ("width_bits", ctypes.c_uint32), ("policy", ctypes.c_int32),
        ("flags", ctypes.c_uint32), ("index_slots", ctypes.c_uint64), ("capacity", ctypes.c_uint64),
        ("warmup_rounds", ctypes.c_uint32), ("rounds", ctypes.c_uint32), ("round_ns", ctypes.c_uint64),
        ("min_execs", ctypes.c_uint64), ("max_execs", ctypes.c_uint64),
    ]


class _Info(ctypes.Structure):
    _fields_ = [
        ("timer_overhead_ns", ctypes.c_double), ("used_key", ctypes.c_uint64),
        ("overflow_keys", ctypes.c_uint64), ("hugepage_bytes", ctypes.c_int64),
        ("sink", ctypes.c_uint64), ("variant", ctypes.c_char * 16),
    ]


class _Trace(ctypes.Structure):
    _fields_ = [
        ("n_execs", ctypes.c_uint64), ("offsets", ctypes.POINTER(ctypes.c_uint64)),
        ("keys", ctypes.POINTER(ctypes.c_uint32)), ("counts", ctypes.POINTER(ctypes.c_uint32)),
    ]


def bench_sources(*, kdir: Path | None = None) -> list[Path]:
    """bench.c, the bigmap sources and the CPU-feature check (not the cov_*.c tracing runtime)."""
    kdir = kdir or kernels_dir()
    srcs = [kdir / "bench.c", *sorted(kdir.glob("bigmap*.c")), kdir / "cpu.c"]
    missing = [s for s in srcs if not s.is_file()]
    if missing or len(srcs) < 3:
        raise AutotuneError(f"the benchmark's C sources are missing ({', '.join(map(str, missing)) or 'bigmap*.c'})",
                            fix="reinstall autotune (pip install --force-reinstall autotune)")
    return srcs


@functools.lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    path = build_artifact(BENCH_NAME, bench_sources(), kind="shared", flags=BENCH_CFLAGS)
    lib = ctypes.CDLL(str(path))
    lib.at_bench_run.argtypes = [ctypes.POINTER(_Spec), ctypes.POINTER(_Trace),
                                 ctypes.POINTER(ctypes.c_double), ctypes.POINTER(_Info)]
    lib.at_bench_run.restype = ctypes.c_int
    lib.at_bench_abi.argtypes = [ctypes.c_uint32]
    lib.at_bench_abi.restype = ctypes.c_uint32
    lib.bm_strerror.argtypes = [ctypes.c_int]
    lib.bm_strerror.restype = ctypes.c_char_p
    for i, struct in enumerate((_Spec, _Info, _Trace)):
        if lib.at_bench_abi(i) != ctypes.sizeof(struct):
            raise AutotuneError(f"{path}: the bench library's struct layout does not match its Python binding",
                                fix="reinstall autotune; this is a bug if it persists")
    if lib.at_bench_abi(3) != len(FIELDS):
        raise AutotuneError(f"{path}: the bench library reports {lib.at_bench_abi(3)} fields, expected {len(FIELDS)}")
    return lib


@dataclass(frozen=True)
class RawRun:
    """The rounds of one configuration: rows of FIELDS, and what the map looked like."""

    rounds: np.ndarray  # (rounds, len(FIELDS))
    timer_overhead_ns: float
    used_key: int
    overflow_keys: int
    hugepage_bytes: int | None
    variant: str


@dataclass(frozen=True)
class Timing:
    """How bench.c times a configuration: ``warmup_rounds`` untimed, then ``rounds`` of about ``round_s``
    seconds each, every round at least ``min_execs`` whole executions of the trace (and at most
    ``max_execs``; 0: no limit)."""

    warmup_rounds: int = 1
    rounds: int = 5
    round_s: float = 0.02
    min_execs: int = 3
    max_execs: int = 0


def run_case(*, trace: KeyTrace, layout: str, width_bits: int, map_slots: int, capacity: int | None = None,
             policy: str = "neverzero", hugepages: bool = True, timing: Timing = Timing()) -> RawRun:
    """Time one configuration with bench.c (see its header for the protocol): ``layout``, ``width_bits``
    counters with the overflow ``policy``, ``map_slots`` index slots (a two-level map's dense array of
    ``capacity``, None: ``map_slots``), on huge pages when ``hugepages``, timed as ``timing`` says."""
    if layout not in LAYOUTS:
        raise AutotuneError(f"unknown layout {layout!r}", fix="use flat or twolevel")
    if width_bits not in WIDTHS:
        raise AutotuneError(f"unknown counter width {width_bits}", fix="use 8, 16, 32 or 64")
    lib = _lib()
    offsets = np.ascontiguousarray(trace.offsets, dtype=np.uint64)
    keys = np.ascontiguousarray(trace.keys, dtype=np.uint32)
    counts = np.ascontiguousarray(trace.counts, dtype=np.uint32)
    if keys.size == 0:  # bench.c needs a pointer even for an empty trace
        keys, counts = np.zeros(1, np.uint32), np.zeros(1, np.uint32)
    tr = _Trace(trace.n_execs, offsets.ctypes.data_as(ctypes.POINTER(ctypes.c_uint64)),
                keys.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
                counts.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)))
    t = timing
    spec = _Spec(LAYOUTS[layout], width_bits, POLICIES[policy], 0 if hugepages else BM_F_NO_HUGEPAGE,
                 map_slots, capacity or map_slots, t.warmup_rounds, t.rounds, int(t.round_s * 1e9), t.min_execs,
                 t.max_execs)
    out = np.zeros((t.rounds, len(FIELDS)), dtype=np.float64)
    info = _Info()
    rc = lib.at_bench_run(ctypes.byref(spec), ctypes.byref(tr), out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                          ctypes.byref(info))
    if rc != 0:
        why = "bad arguments" if rc == -10 else lib.bm_strerror(rc).decode()
        raise AutotuneError(f"benchmark of {layout} map, {map_slots} slots, {width_bits}-bit counters failed: {why}",
                            fix="choose a smaller --max-map-bytes, or free memory")
    return RawRun(rounds=out, timer_overhead_ns=float(info.timer_overhead_ns), used_key=int(info.used_key),
                  overflow_keys=int(info.overflow_keys),
                  hugepage_bytes=None if info.hugepage_bytes < 0 else int(info.hugepage_bytes),
                  variant=info.variant.decode(errors="replace"))
