"""The census analysis: from one metric's census table to the figures the tuner stands on.

For every metric: distinct exact keys; for the AFL-style hashed id ``hk32 & (H - 1)`` the
distinct slots and the collisions at every map size 2^12..2^27 bytes (8-bit counters, so one
slot per byte) beside Equation 1, and the same for the runtime's exact-key hash (its index key
of the exact key, ``AUTOTUNE_KEY_HASH=exact``: autotune.metrics.index_key); per key the largest hit count in one execution and from it
the keys that overflow 8/16/32-bit counters and how many would wrap to 0 or 1 (Sarafov et al.,
FUZZING 2024, Figure 2); frequency counts and the Chao estimate of the total.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from autotune import vocabulary
from autotune.io import scalars_from_dict
from autotune.metrics import index_key
from autotune.probe import estimators
from autotune.probe.protocol import CensusTable

MAP_LOG2_MIN, MAP_LOG2_MAX = 12, 27
MAP_LOG2_SIZES: tuple[int, ...] = tuple(range(MAP_LOG2_MIN, MAP_LOG2_MAX + 1))
COUNTER_BITS: tuple[int, ...] = (8, 16, 32)
# AFL's hit-count buckets (the classes its classify_counts maps an 8-bit counter to).
AFL_BUCKETS: tuple[tuple[int, int], ...] = ((1, 1), (2, 2), (3, 3), (4, 7), (8, 15), (16, 31), (32, 127),
                                            (128, 255))


def _ctz32(x: np.ndarray) -> np.ndarray:
    """Count of trailing zero bits of uint32 values (32 for 0)."""
    x = x.astype(np.uint64)
    low = x & (~x + np.uint64(1)) & np.uint64(0xFFFFFFFF)
    out = np.full(x.shape, 32, dtype=np.int64)
    nz = low != 0
    out[nz] = np.log2(low[nz].astype(np.float64)).astype(np.int64)
    return out


def _bit_reverse32(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint32)
    for shift, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        m = np.uint32(mask)
        x = ((x >> np.uint32(shift)) & m) | ((x & m) << np.uint32(shift))
    return (x >> np.uint32(16)) | (x << np.uint32(16))


def distinct_slots(*, hk32: np.ndarray, log2_sizes: Sequence[int] = MAP_LOG2_SIZES) -> dict[int, int]:
    """{log2 H: distinct values of hk32 & (H - 1)} for every size, from one sort.

    Sorting by the bit-reversed value puts ids with equal low k bits next to each other for every
    k at once; the number of groups at k is 1 + the adjacent pairs whose lowest differing bit is
    below k.
    """
    hk = np.asarray(hk32, dtype=np.uint32)
    if hk.size == 0:
        return {k: 0 for k in log2_sizes}
    order = np.argsort(_bit_reverse32(hk), kind="stable")
    s = hk[order]
    ctz = _ctz32(s[1:] ^ s[:-1])
    hist = np.bincount(ctz, minlength=33)
    below = np.cumsum(hist)  # below[j] = pairs with ctz <= j
    return {k: int(1 + (below[k - 1] if k > 0 else 0)) for k in log2_sizes}


@dataclass(frozen=True)
class MapSizeRow:
    """Hashed ids at one map size: what the census saw beside Equation 1's prediction."""

    map_bytes: int
    slots_used: int
    collisions: int  # keys whose slot an earlier key already had: keys - slots_used
    collision_rate: float
    eq1_collision_rate: float
    eq1_sd: float  # sampling sd of the rate under uniform hashing

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping) -> "MapSizeRow":
        return scalars_from_dict(cls, d)


@dataclass(frozen=True)
class OverflowRow:
    """Keys whose largest per-execution hit count does not fit a W-bit counter."""

    counter_bits: int
    overflow_keys: int
    overflow_share: float
    wrap_to_zero: int  # plain wrap: count % 2^W == 0, the key looks not hit
    wrap_to_one: int  # AFL++ NeverZero (c += 1; c += c == 0): the counter ends at 1, looks hit once

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping) -> "OverflowRow":
        return scalars_from_dict(cls, d)


def overflow_rows(*, max_hits: np.ndarray, counter_bits: Sequence[int] = COUNTER_BITS) -> list[OverflowRow]:
    mh = np.asarray(max_hits, dtype=np.uint64)
    n = int(mh.size)
    rows = []
    for w in counter_bits:
        limit = np.uint64((1 << w) - 1)
        over = mh > limit
        k = int(over.sum())
        m = mh[over]
        to_zero = int((m % np.uint64(1 << w) == 0).sum())
        to_one = int(((m - np.uint64(1)) % limit == 0).sum())
        rows.append(OverflowRow(counter_bits=w, overflow_keys=k, overflow_share=(k / n) if n else 0.0,
                                wrap_to_zero=to_zero, wrap_to_one=to_one))
    return rows


@dataclass(frozen=True)
class MetricCensus:
    """Everything the census says about one metric (no timings: same seed, same census)."""

    metric: str
    keys: int
    dropped_keys: int  # keys that did not fit the server's census table
    hk32_distinct: int  # distinct 32-bit hashed ids (keys - this = collisions built into the hash)
    map_sizes: list[MapSizeRow]  # AFL-style slots: hk32 & (H - 1)
    overflow: list[OverflowRow]
    max_hits_buckets: list[int]  # keys per AFL bucket of the largest count, last = over 255
    max_hits_max: int
    hits_total: int
    freq: dict[int, int]  # keys seen in exactly k executions
    richness: estimators.RichnessEstimate
    # slots of the runtime's AUTOTUNE_KEY_HASH=exact index key (metrics.index_key) & (H - 1)
    map_sizes_exact_hash: list[MapSizeRow] = field(default_factory=list)

    def row(self, map_bytes: int) -> MapSizeRow:
        for r in self.map_sizes:
            if r.map_bytes == map_bytes:
                return r
        raise KeyError(map_bytes)

    def to_dict(self) -> dict:
        return {
            "metric": self.metric, "keys": self.keys, "dropped_keys": self.dropped_keys,
            "hk32_distinct": self.hk32_distinct,
            "map_sizes": [r.to_dict() for r in self.map_sizes],
            "overflow": [r.to_dict() for r in self.overflow],
            "max_hits_buckets": list(self.max_hits_buckets), "max_hits_max": self.max_hits_max,
            "hits_total": self.hits_total,
            "freq": {"k": list(self.freq.keys()), "keys": list(self.freq.values())},
            "richness": self.richness.to_dict(),
            "map_sizes_exact_hash": [r.to_dict() for r in self.map_sizes_exact_hash],
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> "MetricCensus":
        return cls(metric=str(d["metric"]), keys=int(d["keys"]), dropped_keys=int(d["dropped_keys"]),
                   hk32_distinct=int(d["hk32_distinct"]),
                   map_sizes=[MapSizeRow.from_dict(r) for r in d["map_sizes"]],
                   overflow=[OverflowRow.from_dict(r) for r in d["overflow"]],
                   max_hits_buckets=[int(x) for x in d["max_hits_buckets"]], max_hits_max=int(d["max_hits_max"]),
                   hits_total=int(d["hits_total"]),
                   freq={int(k): int(v) for k, v in zip(d["freq"]["k"], d["freq"]["keys"])},
                   richness=estimators.RichnessEstimate.from_dict(d["richness"]),
                   map_sizes_exact_hash=[MapSizeRow.from_dict(r) for r in d.get("map_sizes_exact_hash", [])])


def map_size_rows(*, hk32: np.ndarray, log2_sizes: Sequence[int] = MAP_LOG2_SIZES) -> list[MapSizeRow]:
    n = int(np.asarray(hk32).size)
    used = distinct_slots(hk32=hk32, log2_sizes=log2_sizes)
    rows = []
    for k in log2_sizes:
        H = 1 << k
        c = n - used[k]
        rows.append(MapSizeRow(map_bytes=H, slots_used=used[k], collisions=c, collision_rate=(c / n) if n else 0.0,
                               eq1_collision_rate=vocabulary.collision_rate(H=H, n=n),
                               eq1_sd=vocabulary.collision_rate_sd(H=H, n=n)))
    return rows


def bucket_counts(*, max_hits: np.ndarray) -> list[int]:
    mh = np.asarray(max_hits, dtype=np.uint64)
    out = [int(((mh >= lo) & (mh <= hi)).sum()) for lo, hi in AFL_BUCKETS]
    out.append(int((mh > 255).sum()))
    return out


def analyse(*, table: CensusTable, executions: int) -> MetricCensus:
    """The census figures of one metric; ``executions`` = merged (ok) executions, the sample count."""
    rec = table.records
    hk = rec["hk32"]
    mh = rec["max_hits"]
    freq = estimators.frequency_counts(incidences=rec["n_inputs"].tolist())
    return MetricCensus(
        metric=table.metric, keys=int(rec.size), dropped_keys=table.dropped,
        hk32_distinct=int(np.unique(hk).size), map_sizes=map_size_rows(hk32=hk),
        overflow=overflow_rows(max_hits=mh), max_hits_buckets=bucket_counts(max_hits=mh),
        max_hits_max=int(mh.max()) if rec.size else 0, hits_total=int(rec["total_hits"].sum(dtype=np.uint64)),
        freq=freq, richness=estimators.chao1(freq=freq, samples=executions),
        map_sizes_exact_hash=map_size_rows(hk32=(index_key(rec["key"], metric=table.metric) & np.uint64(0xFFFFFFFF)).astype(np.uint32)),
    )


@dataclass(frozen=True)
class Percentiles:
    """A distribution summarised (nanoseconds)."""

    count: int
    mean_ns: float
    p50_ns: float
    p90_ns: float
    p99_ns: float
    min_ns: int
    max_ns: int
    log2_hist: list[int] = field(default_factory=list)  # counts of exec_ns in [2^i, 2^(i+1))

    def to_dict(self) -> dict:
        return {**self.__dict__, "log2_hist": list(self.log2_hist)}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Percentiles":
        return cls(count=int(d["count"]), mean_ns=float(d["mean_ns"]), p50_ns=float(d["p50_ns"]),
                   p90_ns=float(d["p90_ns"]), p99_ns=float(d["p99_ns"]), min_ns=int(d["min_ns"]),
                   max_ns=int(d["max_ns"]), log2_hist=[int(x) for x in d.get("log2_hist", [])])


def percentiles(*, values_ns: np.ndarray) -> Percentiles:
    v = np.asarray(values_ns, dtype=np.float64)
    if v.size == 0:
        return Percentiles(count=0, mean_ns=0.0, p50_ns=0.0, p90_ns=0.0, p99_ns=0.0, min_ns=0, max_ns=0)
    p50, p90, p99 = np.percentile(v, [50, 90, 99])
    lg = np.floor(np.log2(np.maximum(v, 1.0))).astype(np.int64)
    hist = np.bincount(lg).tolist()
    return Percentiles(count=int(v.size), mean_ns=float(v.mean()), p50_ns=float(p50), p90_ns=float(p90),
                       p99_ns=float(p99), min_ns=int(v.min()), max_ns=int(v.max()), log2_hist=hist)
