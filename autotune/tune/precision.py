"""Precision terms of the objective, from the probe's census (no measurement needed).

- Hash collisions, BigMap Equation 1 (Ahmed et al., DSN 2021, Section II-B):
  ``CollisionRate(H, n) = 1 - (H/n) * (1 - ((H-1)/H)^n)`` for n keys drawn uniformly into H slots
  (autotune.vocabulary). A flat map hashes the metric's keys into its H counters; a two-level
  map hashes them into its H index entries, so the same rate applies to its index.
- Dense-array overflow (two-level only): keys beyond the C dense slots all share the overflow
  slot C-1 (docs/DESIGN.md), a share ``max(0, n - C) / n`` of the keys.
- Counter overflow (Sarafov et al., FUZZING 2024, Section 4: 49.5 % of zlib's 8-bit slots
  overflow): a key whose largest hit count in one execution (census ``max_hits``) reaches 2^W
  wraps a W-bit counter (wrap and AFL++'s NeverZero policy alike), so its bucket is wrong for
  that execution. The loss is the share of census keys with ``max_hits >= 2^W``.
- guard (AFL++'s PCGUARD) has one slot per guard: no collisions and no dense overflow at any
  configured size (the runtime's map is the guard count; size and layout do not apply).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autotune.mappoint import MapPoint
from autotune.vocabulary import has_map_size
from autotune.vocabulary import collision_rate as equation1
from autotune.vocabulary import LAYOUTS, combine_lost


def collision_rate(*, map_slots: int, n_keys: float) -> float:
    """Equation 1 with a (possibly fractional) key estimate."""
    n = max(0, int(round(n_keys)))
    return equation1(H=map_slots, n=n)


def counter_overflow_share(*, max_hits: np.ndarray, width_bits: int) -> float:
    """Share of keys whose per-execution hit count reaches 2^W at least once."""
    if max_hits.size == 0:
        return 0.0
    limit = np.uint64(1) << np.uint64(width_bits) if width_bits < 64 else None
    if limit is None:
        return 0.0
    return float(np.count_nonzero(max_hits.astype(np.uint64) >= limit)) / float(max_hits.size)


@dataclass(frozen=True)
class Precision:
    collision_rate: float  # hash collisions (flat counters / two-level index)
    dense_overflow_rate: float  # two-level: keys sharing the overflow slot
    counter_overflow: float  # keys whose counter wraps
    dense_slots: int | None  # two-level C

    @property
    def lost_keys(self) -> float:
        """Share of keys the map cannot tell apart (collided, or in the overflow slot)."""
        return combine_lost(collision_rate=self.collision_rate, dense_overflow_rate=self.dense_overflow_rate)

    def to_dict(self) -> dict:
        return {"collision_rate": round(self.collision_rate, 6),
                "dense_overflow_rate": round(self.dense_overflow_rate, 6),
                "counter_overflow": round(self.counter_overflow, 6), "dense_slots": self.dense_slots}

    @classmethod
    def from_dict(cls, d: dict) -> "Precision":
        dense = d.get("dense_slots")
        return cls(collision_rate=float(d["collision_rate"]), dense_overflow_rate=float(d["dense_overflow_rate"]),
                   counter_overflow=float(d["counter_overflow"]), dense_slots=None if dense is None else int(dense))


def precision(*, config: MapPoint, n_keys: float, overflow_by_width: dict[int, float]) -> Precision:
    if not has_map_size(config.metric):  # guard: one slot per guard, no hash, no dense array
        return Precision(collision_rate=0.0, dense_overflow_rate=0.0,
                         counter_overflow=float(overflow_by_width.get(config.width_bits, 0.0)), dense_slots=None)
    layout = LAYOUTS[config.layout]  # the dense slots and their overflow, if the layout has them
    c = collision_rate(map_slots=config.map_slots, n_keys=n_keys)
    d = layout.dense_slots(hash_slots=config.map_slots, estimated_keys=n_keys)
    dov = layout.dense_overflow_rate(dense_slots=d, n_keys=n_keys)
    return Precision(collision_rate=c, dense_overflow_rate=dov,
                     counter_overflow=float(overflow_by_width.get(config.width_bits, 0.0)), dense_slots=d)
