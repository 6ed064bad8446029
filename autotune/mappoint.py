"""One point of the map-configuration space: what tune's search and the race's search both choose.

A :class:`MapPoint` is a coverage metric, a map layout, a hash space of 2^``map_pow2`` slots (flat:
the counters; two-level: the index), a counter width and an overflow policy. tune's search
(autotune.tune.space) scores points by replay, the race's (autotune.race.search) runs them under
afl-fuzz; :meth:`MapPoint.runtime` gives the runtime's variables of a point
(:class:`~autotune.runtime.config.RuntimeConfig`), the race's ``contestant_for`` the
:class:`~autotune.configuration.Configuration` that builds and fuzzes it.

Guard has no hash space of its own (a counter per guard): tune records a guard point with the one
map size of its space (``SearchSpace.guard_slots``), the race with ``map_pow2`` 0.

Two documents record a point under their own keys, kept as they are so recorded files read back:
tune's report.json, measurements.json (by :meth:`MapPoint.key`) and recommendation.json's
``recorded_execs`` (:meth:`MapPoint.to_tune_dict`: ``map_slots``, ``width_bits``), and race.json
(:meth:`MapPoint.to_race_dict`: ``map_pow2``, ``width``, ``overflow``); :meth:`MapPoint.from_dict`
reads either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from autotune.errors import AutotuneError
from autotune.runtime.config import RuntimeConfig
from autotune.vocabulary import has_map_size

DEFAULT_OVERFLOW = "neverzero"
_OVERFLOW_SHORT = {"neverzero": "nz", "saturate": "sat", "wrap": "wrap"}  # in names


@dataclass(frozen=True, order=True)
class MapPoint:
    """One configuration of the coverage map: ``map_pow2`` is the hash space's log2 (flat: the
    counters; two-level: the index; see the module doc for guard), ``width_bits`` the counter width,
    ``overflow`` what a counter does past its largest value (the runtime's AUTOTUNE_OVERFLOW)."""

    metric: str
    layout: str = "flat"
    map_pow2: int = 0
    width_bits: int = 8
    overflow: str = DEFAULT_OVERFLOW

    @classmethod
    def of_slots(cls, *, metric: str, layout: str, map_slots: int, width_bits: int,
                 overflow: str = DEFAULT_OVERFLOW) -> "MapPoint":
        """The point whose hash space is ``map_slots`` slots (a power of two)."""
        if map_slots < 1 or map_slots & (map_slots - 1):
            raise AutotuneError(f"a hash space of {map_slots} slots is not a power of two",
                                fix=f"give a power of two, e.g. {1 << max(0, map_slots.bit_length() - 1)}")
        return cls(metric=metric, layout=layout, map_pow2=map_slots.bit_length() - 1, width_bits=width_bits,
                   overflow=overflow)

    @property
    def map_slots(self) -> int:
        """The hash space H in slots, 2^``map_pow2``."""
        return 1 << self.map_pow2

    @property
    def hashed(self) -> bool:
        """Whether the metric's keys are hashed into a map whose size and layout apply (all but guard)."""
        return has_map_size(self.metric)

    @property
    def name(self) -> str:
        """The race's name of the point, directory-safe and unique: ``guard``, ``guard-w16-sat``,
        ``edge-flat17-w8``, ``ngram-4-tl20-w8``."""
        tail = f"-w{self.width_bits}" + ("" if self.overflow == DEFAULT_OVERFLOW
                                         else f"-{_OVERFLOW_SHORT[self.overflow]}")
        if not self.hashed:
            return "guard" if tail == "-w8" else f"guard{tail}"
        return f"{self.metric}-{'flat' if self.layout == 'flat' else 'tl'}{self.map_pow2}{tail}"

    def key(self) -> str:
        """tune's key of the point, "metric/layout/slots/width" (measurements.json, recorded figures)."""
        tail = "" if self.overflow == DEFAULT_OVERFLOW else f"/{self.overflow}"
        return f"{self.metric}/{self.layout}/{self.map_slots}/{self.width_bits}{tail}"

    def runtime(self, *, dense: int | None, seed: int, index_file: str | None = None) -> RuntimeConfig:
        """The runtime's configuration of this point (``dense``: a two-level map's dense slots)."""
        return RuntimeConfig.sized(metric=self.metric, layout=self.layout, hash_slots=self.map_slots,
                                   dense_slots=dense, counter_bits=self.width_bits, overflow=self.overflow,
                                   seed=seed, index_file=index_file)

    def to_tune_dict(self) -> dict[str, Any]:
        """As tune's report.json and recommendation.json's ``recorded_execs`` record it (``overflow``
        only when it is not the default, which tune never chooses)."""
        d: dict[str, Any] = {"metric": self.metric, "layout": self.layout, "map_slots": self.map_slots,
                             "width_bits": self.width_bits}
        if self.overflow != DEFAULT_OVERFLOW:
            d["overflow"] = self.overflow
        return d

    def to_race_dict(self) -> dict[str, Any]:
        """As race.json records it (its search's proposals and observations)."""
        return {"metric": self.metric, "layout": self.layout, "map_pow2": self.map_pow2, "width": self.width_bits,
                "overflow": self.overflow}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "MapPoint":
        """Either record: race.json's (``map_pow2``, ``width``) or tune's (``map_slots``, ``width_bits``);
        other keys (a record's figures) are ignored."""
        overflow = str(d.get("overflow", DEFAULT_OVERFLOW))
        if "map_pow2" in d:
            return cls(metric=str(d["metric"]), layout=str(d["layout"]), map_pow2=int(d["map_pow2"]),
                       width_bits=int(d["width"]), overflow=overflow)
        return cls.of_slots(metric=str(d["metric"]), layout=str(d["layout"]), map_slots=int(d["map_slots"]),
                            width_bits=int(d["width_bits"]), overflow=overflow)
