"""tune's search space: map size (powers of two), counter width, coverage metric, map layout; its points
are :class:`~autotune.mappoint.MapPoint` with the default overflow policy (NeverZero)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autotune.errors import AutotuneError
from autotune.mappoint import MapPoint
from autotune.vocabulary import METRICS, has_map_size
from autotune.vocabulary import AFL_DEFAULT_MAP_POW2, COUNTER_WIDTHS, HASH_SLOTS_POW2, LAYOUTS as LAYOUT_SPECS
from autotune.tune.defaults import DEFAULT_MAP_POW2

LAYOUTS: tuple[str, ...] = tuple(LAYOUT_SPECS)
WIDTHS: tuple[int, ...] = COUNTER_WIDTHS


def dense_slots(*, map_slots: int, estimated_keys: float) -> int:
    """Dense array size C of a two-level map of H = ``map_slots`` (autotune.vocabulary's rule)."""
    return LAYOUT_SPECS["twolevel"].dense_slots(hash_slots=map_slots, estimated_keys=estimated_keys) or map_slots


def check_map_pow2(lo: int, hi: int) -> None:
    """The map sizes 2^lo..2^hi tune may search: ordered, and hash spaces every layout of the
    runtime accepts (autotune.vocabulary.HASH_SLOTS_POW2)."""
    rlo, rhi = HASH_SLOTS_POW2
    if lo > hi:
        raise AutotuneError(f"--min-map-bytes 2^{lo} is larger than --max-map-bytes 2^{hi}", fix="swap them")
    if not rlo <= lo <= hi <= rhi:
        raise AutotuneError(f"map size range 2^{lo}..2^{hi} is outside 2^{rlo}..2^{rhi} (what the runtime accepts)",
                            fix=f"choose map sizes between {1 << rlo} and {1 << rhi} slots")


def map_pow2_range(*, min_map_slots: int, max_map_slots: int) -> tuple[int, int]:
    """(lo, hi) of --min-map-bytes / --max-map-bytes: powers of two in the range the runtime accepts."""
    pows = []
    for name, v in (("--min-map-bytes", min_map_slots), ("--max-map-bytes", max_map_slots)):
        if v < 1 or v & (v - 1):
            raise AutotuneError(f"{name} {v} is not a power of two", fix=f"e.g. {name} {1 << AFL_DEFAULT_MAP_POW2}")
        pows.append(v.bit_length() - 1)
    check_map_pow2(pows[0], pows[1])
    return pows[0], pows[1]


@dataclass(frozen=True)
class SearchSpace:
    map_pow2: tuple[int, int] = DEFAULT_MAP_POW2  # inclusive range
    widths: tuple[int, ...] = WIDTHS
    metrics: tuple[str, ...] = METRICS
    layouts: tuple[str, ...] = LAYOUTS

    def __post_init__(self) -> None:
        check_map_pow2(*self.map_pow2)
        for m in self.metrics:
            if m not in METRICS:
                raise AutotuneError(f"unknown metric {m!r}", fix=f"use one of: {', '.join(METRICS)}")
        for w in self.widths:
            if w not in WIDTHS:
                raise AutotuneError(f"unknown counter width {w}", fix="use 8, 16, 32 or 64")
        for lay in self.layouts:
            if lay not in LAYOUTS:
                raise AutotuneError(f"unknown layout {lay!r}", fix="use flat or twolevel")
        if not (self.widths and self.metrics and self.layouts):
            raise AutotuneError("the search space is empty", fix="give at least one metric, width and layout")

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(1 << p for p in range(self.map_pow2[0], self.map_pow2[1] + 1))

    @property
    def n_points(self) -> int:
        sized = sum(1 for m in self.metrics if has_map_size(m))
        return (len(self.sizes) * len(self.layouts) * sized + (len(self.metrics) - sized)) * len(self.widths)

    @property
    def guard_slots(self) -> int:
        """The one map size a guard configuration is recorded with: guard's map is the target's
        guard count whatever the size and layout (the runtime ignores both), so every guard point
        of a width is one configuration (flat, AFL++'s 2^16 when the space holds it)."""
        lo, hi = self.map_pow2
        return 1 << min(max(AFL_DEFAULT_MAP_POW2, lo), hi)

    def canonical(self, c: MapPoint) -> MapPoint:
        """``c``, or for guard the one configuration of its width (see ``guard_slots``)."""
        if c.hashed:
            return c
        return MapPoint.of_slots(metric=c.metric, layout="flat", map_slots=self.guard_slots, width_bits=c.width_bits,
                                 overflow=c.overflow)

    def grid(self) -> list[MapPoint]:
        pows = range(self.map_pow2[0], self.map_pow2[1] + 1)
        out = [self.canonical(MapPoint(m, lay, p, w)) for m in self.metrics for lay in self.layouts
               for p in pows for w in self.widths]
        return list(dict.fromkeys(out))

    def dimensions(self) -> list:
        """scikit-optimize dimensions, all ordered integers where possible: log2 map size, log2
        counter width, the metric's rank in ``metrics`` (tune orders them by estimated key count,
        so neighbouring ranks press the map alike and the GP can generalise across metrics; a
        one-hot metric would add 13 length scales to fit per call), and the layout."""
        from skopt.space import Categorical, Integer

        wp = sorted(w.bit_length() - 1 for w in self.widths)
        dims = [Integer(self.map_pow2[0], self.map_pow2[1], name="map_pow2")]
        dims.append(Integer(wp[0], wp[-1], name="width_pow2") if len(wp) > 1 and wp == list(range(wp[0], wp[-1] + 1))
                    else Categorical(wp, name="width_pow2"))
        dims.append(Integer(0, len(self.metrics) - 1, name="metric_rank") if len(self.metrics) > 1
                    else Categorical([0], name="metric_rank"))
        dims.append(Categorical(list(self.layouts), name="layout"))
        return dims

    def to_config(self, point: list) -> MapPoint:
        """A point from the optimiser (numpy scalars) -> MapPoint of plain Python values."""
        map_pow2, width_pow2, rank, layout = point
        return self.canonical(MapPoint(metric=self.metrics[int(rank)], layout=str(layout), map_pow2=int(map_pow2),
                                       width_bits=1 << int(width_pow2)))

    def to_point(self, c: MapPoint) -> list:
        layout = c.layout if c.layout in self.layouts else self.layouts[0]  # guard: any layout is the same
        return [c.map_pow2, c.width_bits.bit_length() - 1, self.metrics.index(c.metric), layout]

    def ordered(self, key) -> "SearchSpace":
        """The same space with metrics sorted by ``key`` (e.g. estimated key count)."""
        return SearchSpace(map_pow2=self.map_pow2, widths=self.widths, metrics=tuple(sorted(self.metrics, key=key)),
                           layouts=self.layouts)

    def to_dict(self) -> dict[str, Any]:
        return {"map_slots": [min(self.sizes), max(self.sizes)], "widths": list(self.widths),
                "metrics": list(self.metrics), "layouts": list(self.layouts), "n_points": self.n_points}
