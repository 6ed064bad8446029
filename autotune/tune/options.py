"""tune's settings as one typed value (the CLI builds it, the pipeline passes it on, tune reads it).

Standard library and autotune.tune.defaults only, so pipeline.py and the CLI import it without
loading tune's machinery.
"""

from __future__ import annotations

from dataclasses import dataclass

from autotune.tune.defaults import (DEFAULT_CALLS, DEFAULT_CONFIRM, DEFAULT_CONFIRM_REPEATS, DEFAULT_MAP_POW2,
                                     DEFAULT_MAX_COLLISION_RATE, DEFAULT_SENSITIVITY_WEIGHT)


@dataclass(frozen=True)
class TuneSettings:
    """What tune searches and how: the ``metric`` (None: every metric the probe counted), the map sizes
    ``map_pow2`` (2^lo..2^hi slots), the objective's collision limit and credit per doubling of a
    metric's keys, the afl-fuzz instances the campaign runs (``jobs``: the caches they share), the
    optimiser's ``calls`` and ``seed``, the measuring ``backend`` (auto, replay, bench), ``fresh`` to
    ignore measurements kept from an earlier run, and the confirmation round (``confirm_k`` leaders,
    0 skips it; ``confirm_repeats`` each)."""

    metric: str | None = None
    map_pow2: tuple[int, int] = DEFAULT_MAP_POW2
    max_collision_rate: float = DEFAULT_MAX_COLLISION_RATE
    sensitivity_weight: float = DEFAULT_SENSITIVITY_WEIGHT
    jobs: int = 1
    calls: int = DEFAULT_CALLS
    seed: int = 0
    backend: str = "auto"
    fresh: bool = False
    confirm_k: int = DEFAULT_CONFIRM
    confirm_repeats: int = DEFAULT_CONFIRM_REPEATS
