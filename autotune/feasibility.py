"""The one rule of which map configurations can work on a target and host, known without running them.

tune's search by replay and the race's search in afl-fuzz search the same space (:class:`MapPoint`)
and obey this rule alike, so that every point tune can recommend is one the race can run, and a
point the race rules out is one tune never scores. A point is ruled out, in this order, by:

- **counter overflow**: a wrapping counter (``AUTOTUNE_OVERFLOW=wrap``) where more than
  ``max_counter_overflow`` of the census's keys reach 2^W hits in one execution (Sarafov et al.,
  FUZZING 2024, Section 4: overflows are common at 8 bits); NeverZero and saturating counters keep
  such a key visible, and the objective charges what their wrong buckets cost;
- **collisions**: more than ``max_collision_rate`` of ``KEY_HEADROOM`` (2) x the probe's estimated
  keys lost to hash collisions (BigMap's Equation 1, Ahmed et al., DSN 2021, Section II-B) or to a
  two-level map's overflow slot: a campaign finds more keys than the probe did, and the runtime
  sizes dense arrays for the same headroom (autotune.vocabulary);
- **the handshake**: a map larger than afl-fuzz's fork-server handshake carries (2^23 slots);
- **the cache**: a flat map or dense array, which afl-fuzz resets, classifies and compares after
  every execution, larger than the per-core L2; or, with several instances on one host, their maps
  together filling more than half the shared last-level cache (BigMap Fig. 9: parallel instances'
  maps compete for it).

Guard (a counter per guard) has no hash space: only the overflow rule applies to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from autotune.mappoint import MapPoint
from autotune.vocabulary import AFL_MAX_MAP_SLOTS, KEY_HEADROOM, LAYOUTS

# The first word of each reason :func:`rule_out` gives (what reports count the ruled-out points by).
REASONS = ("counter overflow", "collisions", "map", "cache")


@dataclass(frozen=True)
class Limits:
    """What the rule holds a point to: the precision limits, and the host's caches (None: unknown, no
    cache rule) shared by ``instances`` afl-fuzz instances."""

    max_collision_rate: float
    max_counter_overflow: float
    l2_bytes: int | None = None
    llc_bytes: int | None = None
    instances: int = 1


def headroom_keys(estimated_keys: float) -> float:
    """The keys a point must hold: KEY_HEADROOM x the probe's estimate (at least one key)."""
    return KEY_HEADROOM * max(1.0, float(estimated_keys))


def rule_out(point: MapPoint, *, estimated_keys: float, overflow: Mapping[int, float], limits: Limits) -> str | None:
    """Why ``point`` cannot work for a metric with ``estimated_keys`` keys whose counts overflow each
    width for the share ``overflow[width]`` of its keys (None: it can). The reason starts with one of
    :data:`REASONS` and a colon."""
    share = float(overflow.get(point.width_bits, 0.0))
    if point.overflow == "wrap" and share > limits.max_counter_overflow:
        return (f"counter overflow: {share:.1%} of the census's keys reach 2^{point.width_bits} hits, and a wrapping "
                f"counter loses them (limit {limits.max_counter_overflow:.0%})")
    if not point.hashed:
        return None
    lay, dense = LAYOUTS[point.layout], dense_slots_of(point, estimated_keys)
    lost = lost_at_headroom(point, estimated_keys=estimated_keys, dense=dense)
    if lost > limits.max_collision_rate:
        return (f"collisions: {lost:.1%} of {KEY_HEADROOM:g}x the census's keys lost "
                f"(limit {limits.max_collision_rate:.0%})")
    slots = lay.afl_map_slots(hash_slots=1 << point.map_pow2, dense_slots=dense)
    if slots > AFL_MAX_MAP_SLOTS:
        return f"map: afl-fuzz's handshake carries at most 2^{AFL_MAX_MAP_SLOTS.bit_length() - 1} slots"
    scanned = slots * point.width_bits // 8
    what = "flat map" if point.layout == "flat" else "dense array"
    if limits.l2_bytes and scanned > limits.l2_bytes:
        return (f"cache: a {what} of {scanned:,} bytes, which afl-fuzz scans every execution, exceeds the "
                f"per-core L2 ({limits.l2_bytes:,} bytes)")
    if limits.instances > 1 and limits.llc_bytes and limits.instances * scanned > limits.llc_bytes // 2:
        return (f"cache: {limits.instances} instances' {what}s of {scanned:,} bytes each fill more than half the "
                f"shared last-level cache ({limits.llc_bytes:,} bytes)")
    return None


def lost_at_headroom(point: MapPoint, *, estimated_keys: float, dense: int | None = None) -> float:
    """The share of KEY_HEADROOM x ``estimated_keys`` keys ``point`` loses (0 for guard): the measure
    the collision rule compares with its limit. ``dense``: the point's dense slots, if the caller has them."""
    if not point.hashed:
        return 0.0
    if dense is None:
        dense = dense_slots_of(point, estimated_keys)
    return LAYOUTS[point.layout].lost_keys(hash_slots=1 << point.map_pow2, dense_slots=dense,
                                           n_keys=headroom_keys(estimated_keys))


def dense_slots_of(point: MapPoint, estimated_keys: float) -> int | None:
    """A two-level point's dense slots, sized by the runtime's rule (None for flat)."""
    return LAYOUTS[point.layout].dense_slots(hash_slots=1 << point.map_pow2, estimated_keys=float(estimated_keys))
