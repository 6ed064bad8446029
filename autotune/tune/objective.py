"""The objective tune maximises: the rate of coverage feedback the fuzzer can trust.

For a configuration x = (metric m, layout L, map size H, counter width W)::

    score(x) = log2(execs_per_s(x, N))            measured throughput (N instances)
             + log2(1 - lost_keys(m, L, H))        keys the map can tell apart
             + log2(1 - counter_overflow(m, W))    keys whose counts stay exact
             + w_s * log2(keys(m))                 how much the metric distinguishes
             - P * (1 - exp(-max(0, lost_keys(2n) / c_max - 1)))   the precision floor

tune minimises ``-score``. In words: executions per second times the share of the metric's
keys that land in a slot of their own and count without wrapping, times a diminishing credit
for a richer metric; a configuration the feasibility rule rules out (autotune.feasibility, the race's
rule too: more than ``c_max`` of twice the estimated keys lost, a map beyond afl-fuzz's handshake or
the host's caches) is penalised.

- ``execs_per_s`` is measured (autotune.tune.backends): the probe's harness replaying its kept
  corpus through our runtime configured so, or bench.c replaying the probe's key trace plus the
  target's own time per execution from the probe.
- ``lost_keys`` = 1 - (1 - Equation 1 collision rate at H for the metric's estimated key count)
  * (1 - two-level dense overflow) (BigMap, Ahmed et al., DSN 2021, Section II-B).
- ``counter_overflow`` is the share of census keys whose hit count in one execution reaches 2^W
  (Sarafov et al., FUZZING 2024, Section 4: overflows are common at 8 bits).
- ``N`` instances share the last-level cache: the map's working set per execution (counters,
  the classified trace afl-fuzz reads and its virgin map; a two-level map touches its used region
  and one index line per key) is streamed at the per-byte cost bench measured for a map N times
  larger once N times the working set exceeds the private L2; the difference is added to the
  measured time per execution. BigMap Section V-D measured that sharing effect for parallel
  sessions (9.2x at 2 MiB and 12 instances).

Defaults and why (autotune.tune.defaults holds the values):
- ``c_max = 0.02``: BigMap's Table II puts the small FuzzBench targets (zlib 0.55 % .. libjpeg
  2.2 %) at about 2 % at AFL's 64 KiB map: tune asks every metric for at least the precision AFL's
  default gives a small target, while larger metrics must pay for it with a larger map.
- ``w_s = 0.25``: a 16x richer metric (e.g. N-gram over edges) is worth halving the throughput.
  The papers show richer metrics finding more (BigMap Section VI: N-gram 3 + laf-intel found 33 %
  more unique crashes on large maps) but give no exchange rate; this is our judgement, and 0
  ranks metrics by throughput and precision alone.
- ``P = 10`` bits: the penalty is ``P * (1 - exp(-(lost/c_max - 1)))``, bounded so that the
  GP's fit is not dominated by far-infeasible points; at twice the limit it costs 6.3 bits (a
  factor of 80). The choice itself always prefers a feasible point when one was evaluated, and
  the optimiser samples only feasible points (the constraint is known without measuring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Callable

from autotune.mappoint import MapPoint
from autotune.vocabulary import LAYOUTS
from autotune.tune.backends import Measurement
from autotune.feasibility import Limits, lost_at_headroom, rule_out
from autotune.tune.defaults import (DEFAULT_MAX_COLLISION_RATE, DEFAULT_MAX_COUNTER_OVERFLOW, DEFAULT_PENALTY_BITS,
                                    DEFAULT_SENSITIVITY_WEIGHT)
from autotune.tune.inputs import MetricFacts
from autotune.tune.precision import Precision, precision



@dataclass(frozen=True)
class ObjectiveSettings:
    max_collision_rate: float = DEFAULT_MAX_COLLISION_RATE
    sensitivity_weight: float = DEFAULT_SENSITIVITY_WEIGHT
    penalty_bits: float = DEFAULT_PENALTY_BITS
    jobs: int = 1
    l2_bytes: int | None = None
    llc_bytes: int | None = None
    max_counter_overflow: float = DEFAULT_MAX_COUNTER_OVERFLOW

    @property
    def limits(self) -> Limits:
        """What the feasibility rule (autotune.feasibility), which the race obeys too, holds a point to."""
        return Limits(max_collision_rate=self.max_collision_rate, max_counter_overflow=self.max_counter_overflow,
                      l2_bytes=self.l2_bytes, llc_bytes=self.llc_bytes, instances=self.jobs)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ObjectiveSettings":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass(frozen=True)
class Evaluation:
    config: MapPoint
    measurement: Measurement
    precision: Precision
    n_keys: float
    working_set_bytes: int
    execs_per_s: float  # with N instances sharing the cache
    score_bits: float
    feasible: bool
    notes: tuple[str, ...] = ()

    @property
    def value(self) -> float:
        """What the optimiser minimises."""
        return -self.score_bits

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config.to_tune_dict(), "measurement": self.measurement.to_dict(),
                "precision": self.precision.to_dict(), "n_keys": round(self.n_keys, 1),
                "working_set_bytes": self.working_set_bytes, "execs_per_s": round(self.execs_per_s, 3),
                "score_bits": round(self.score_bits, 6), "feasible": self.feasible, "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Evaluation":
        """An evaluation as report.json records it (its figures rounded as to_dict rounds them)."""
        return cls(config=MapPoint.from_dict(d["config"]), measurement=Measurement.from_dict(d["measurement"]),
                   precision=Precision.from_dict(d["precision"]), n_keys=float(d["n_keys"]),
                   working_set_bytes=int(d["working_set_bytes"]), execs_per_s=float(d["execs_per_s"]),
                   score_bits=float(d["score_bits"]), feasible=bool(d["feasible"]),
                   notes=tuple(str(n) for n in d.get("notes", ())))

    def recorded(self) -> "Evaluation":
        """This evaluation as report.json holds it (rounded): a result in memory and one loaded
        from its report.json are equal."""
        return type(self).from_dict(self.to_dict())


def working_set_bytes(*, config: MapPoint, n_keys: float, dense: int | None) -> int:
    """Bytes the map work touches per execution (runtime + afl-fuzz's trace and virgin maps)."""
    return LAYOUTS[config.layout].working_set_bytes(hash_slots=config.map_slots, dense_slots=dense, n_keys=n_keys,
                                                    width_bits=config.width_bits)


def shared_cache_extra_ns(*, ws_bytes: int, jobs: int, l2_bytes: int | None,
                          ns_per_byte: Callable[[int], float] | None) -> float:
    """Extra ns per execution when ``jobs`` instances share the last-level cache (see module doc)."""
    if jobs <= 1 or ns_per_byte is None:
        return 0.0
    if l2_bytes and ws_bytes * jobs <= l2_bytes:
        return 0.0
    return max(0.0, ws_bytes * (ns_per_byte(ws_bytes * jobs) - ns_per_byte(ws_bytes)))


def infeasible(*, config: MapPoint, facts: MetricFacts, settings: ObjectiveSettings) -> str | None:
    """Why ``config`` is ruled out, known without measuring (None: it is not): autotune.feasibility's
    rule, the one the race's search obeys (collisions at twice the estimated keys, the handshake, the
    host's caches, wrapping counters that overflow)."""
    return rule_out(config, estimated_keys=facts.estimated_keys, overflow=facts.overflow_by_width,
                    limits=settings.limits)


def memory_bytes(*, config: MapPoint, dense: int | None) -> int:
    """Memory the map takes per instance (counters, trace, index): the tie-breaker within noise."""
    return LAYOUTS[config.layout].memory_bytes(hash_slots=config.map_slots, dense_slots=dense,
                                               width_bits=config.width_bits)


def evaluate(*, config: MapPoint, measurement: Measurement, facts: MetricFacts, settings: ObjectiveSettings,
             ns_per_byte: Callable[[int], float] | None = None) -> Evaluation:
    n = max(1.0, float(facts.estimated_keys))
    p = precision(config=config, n_keys=n, overflow_by_width=facts.overflow_by_width)
    ws = working_set_bytes(config=config, n_keys=n, dense=p.dense_slots)
    eps1 = max(measurement.execs_per_s, 1e-9)
    extra = shared_cache_extra_ns(ws_bytes=ws, jobs=settings.jobs, l2_bytes=settings.l2_bytes,
                                  ns_per_byte=ns_per_byte)
    eps = 1e9 / (1e9 / eps1 + extra)
    lost = p.lost_keys
    score = (math.log2(eps) + math.log2(max(1e-12, 1.0 - lost)) + math.log2(max(1e-12, 1.0 - p.counter_overflow))
             + settings.sensitivity_weight * math.log2(n))
    notes = []
    why = infeasible(config=config, facts=facts, settings=settings)
    if why is not None:
        # bounded, so that far-infeasible points do not dominate the GP's fit; continuous at the
        # collision limit, a flat penalty for the rule's other reasons
        over = lost_at_headroom(config, estimated_keys=facts.estimated_keys) / settings.max_collision_rate - 1.0
        score -= settings.penalty_bits * (-math.expm1(-over) if why.startswith("collisions") else 1.0)
        notes.append(why)
    return Evaluation(config=config, measurement=measurement, precision=p, n_keys=n, working_set_bytes=ws,
                      execs_per_s=eps, score_bits=score, feasible=why is None, notes=tuple(notes))
