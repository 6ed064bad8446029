"""The confirmation round: re-measure the search's leaders before choosing, so noise does not choose.

The search measures each configuration once, and its top score is the maximum over ~40 noisy
figures: on a loaded host the winner is often the luckiest run, not the fastest configuration
(winner's curse). After the search, :func:`confirm` re-measures the top ``k`` distinct
configurations (feasible first) plus the incumbent's smaller-map neighbours (same metric, layout
and width: half, a quarter, and the smallest that meets the precision constraints) in
``repeats`` interleaved rounds (A B C .., A B C .., so a load drift hits them alike), scores
each by the median of its repeats, and chooses:

1. the leader: the highest median score;
2. the band: the interquartile range of the leader's repeat scores (in bits), at least the median
   of every row's interquartile range and the search's own noise estimate (``tie_bits``);
3. the choice: among configurations (of the leader's feasibility) whose median is within the band
   of the leader's, the cheapest: least map memory (a smaller index for a two-level map), then
   narrower counters, then the higher median.

Every repeat and the decision are kept (:class:`Confirmation`, report.json ``confirmation``).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from autotune.mappoint import MapPoint
from autotune.vocabulary import has_map_size
from autotune.tune.backends import Measurer
from autotune.tune.defaults import DEFAULT_CONFIRM, DEFAULT_CONFIRM_REPEATS
from autotune.tune.inputs import TuneInputs
from autotune.tune.objective import Evaluation, ObjectiveSettings, evaluate, infeasible, memory_bytes
from autotune.tune.optimise import Search
from autotune.tune.space import SearchSpace

SMALLER_NEIGHBOURS = 2  # the incumbent's map sizes /2 and /4 join the round


@dataclass(frozen=True)
class ConfirmRow:
    config: MapPoint
    search_execs_per_s: float | None  # the search's single figure (None: not measured by the search)
    repeats_execs_per_s: tuple[float, ...]
    repeats_score_bits: tuple[float, ...]
    evaluation: Evaluation  # at the median execs/s of the repeats
    memory_bytes: int

    @property
    def score_bits(self) -> float:
        return self.evaluation.score_bits

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config.to_tune_dict(), "execs_per_s": round(self.evaluation.execs_per_s, 3),
                "search_execs_per_s": None if self.search_execs_per_s is None else round(self.search_execs_per_s, 3),
                "repeats_execs_per_s": [round(r, 3) for r in self.repeats_execs_per_s],
                "repeats_score_bits": [round(s, 6) for s in self.repeats_score_bits],
                "score_bits": round(self.score_bits, 6), "feasible": self.evaluation.feasible,
                "memory_bytes": self.memory_bytes}


@dataclass(frozen=True)
class Confirmation:
    rows: tuple[ConfirmRow, ...]
    repeats: int
    search_best: MapPoint  # what the search alone would have chosen
    leader: MapPoint  # highest median score
    band_bits: float  # scores within this of the leader's are ties
    chosen: ConfirmRow
    elapsed_s: float

    @property
    def changed(self) -> bool:
        return self.chosen.config != self.search_best

    def decision(self) -> str:
        c, lead = self.chosen, next(r for r in self.rows if r.config == self.leader)
        if c.config == self.leader:
            why = f"{c.config.key()} has the highest median score ({c.score_bits:.3f} bits)"
        else:
            why = (f"{c.config.key()} ({c.score_bits:.3f} bits) is within {self.band_bits:.3f} bits (the measured "
                   f"spread) of the highest median, {lead.config.key()} ({lead.score_bits:.3f} bits), "
                   f"and uses less map memory")
        prev = ("" if not self.changed else f"; the search alone had chosen {self.search_best.key()}")
        return f"{len(self.rows)} configurations x {self.repeats} interleaved repeats: {why}{prev}"

    def to_dict(self) -> dict[str, Any]:
        return {"repeats": self.repeats, "search_best": self.search_best.to_tune_dict(),
                "leader": self.leader.to_tune_dict(),
                "band_bits": round(self.band_bits, 6), "chosen": self.chosen.config.to_tune_dict(),
                "changed": self.changed, "decision": self.decision(), "elapsed_s": round(self.elapsed_s, 3),
                "rows": [r.to_dict() for r in self.rows]}


def candidates(*, search: Search, space: SearchSpace, k: int, feasible: Callable[[MapPoint], bool]) -> list[MapPoint]:
    """The top ``k`` distinct configurations by search score (feasible first), then the incumbent's
    smaller-map neighbours (same metric, layout, width; /2, /4 and the smallest) that meet the
    precision constraints."""
    seen: dict[MapPoint, Evaluation] = {}
    for t in search.trials:
        seen.setdefault(t.evaluation.config, t.evaluation)
    ranked = sorted(seen.values(), key=lambda e: (not e.feasible, e.value, e.config))
    out = [e.config for e in ranked[:k]]
    inc = search.best.config
    if inc not in out:
        out.insert(0, inc)
    lo = space.map_pow2[0]
    if not has_map_size(inc.metric):
        return out  # guard: its map is the guard count, there are no smaller maps of it
    for d in range(1, SMALLER_NEIGHBOURS + 1):
        p = inc.map_pow2 - d
        if p < lo:
            break
        c = MapPoint(inc.metric, inc.layout, p, inc.width_bits)
        if c not in out and feasible(c):
            out.append(c)
    # and the smallest map of that kind that meets the constraints: the cheapest equivalent, if any
    smallest = next((c for p in range(lo, inc.map_pow2)
                     if feasible(c := MapPoint(inc.metric, inc.layout, p, inc.width_bits))), None)
    if smallest is not None and smallest not in out:
        out.append(smallest)
    return out


def confirm(*, search: Search, inputs: TuneInputs, space: SearchSpace, settings: ObjectiveSettings,
            measurer: Measurer, k: int = DEFAULT_CONFIRM, repeats: int = DEFAULT_CONFIRM_REPEATS,
            ns_per_byte: Callable[[int], float] | None = None,
            progress: Callable[[MapPoint, int], None] | None = None) -> Confirmation:
    """Re-measure the search's leaders ``repeats`` times each, interleaved, and choose (module doc).
    ``measurer`` must measure anew on every call (not a CachedMeasurer)."""
    t0 = time.monotonic()

    def feasible(c: MapPoint) -> bool:
        return infeasible(config=c, facts=inputs.facts(c.metric), settings=settings) is None

    cands = candidates(search=search, space=space, k=k, feasible=feasible)
    runs: dict[MapPoint, list] = {c: [] for c in cands}
    for r in range(repeats):  # interleaved: A B C .., A B C ..
        for c in cands:
            if progress:
                progress(c, r + 1)
            runs[c].append(measurer.measure(c))
    first = {}
    for t in search.trials:
        first.setdefault(t.evaluation.config, t.evaluation.measurement.execs_per_s)

    def ev(c: MapPoint, m) -> Evaluation:
        return evaluate(config=c, measurement=m, facts=inputs.facts(c.metric), settings=settings,
                        ns_per_byte=ns_per_byte)

    rows = []
    for c in cands:
        ms = runs[c]
        eps = [float(m.execs_per_s) for m in ms]
        med = replace(ms[0], execs_per_s=statistics.median(eps),
                      detail={"confirm_execs_per_s": [round(x, 1) for x in eps]})
        e = ev(c, med)
        rows.append(ConfirmRow(config=c, search_execs_per_s=first.get(c), repeats_execs_per_s=tuple(eps),
                               repeats_score_bits=tuple(ev(c, m).score_bits for m in ms), evaluation=e,
                               memory_bytes=memory_bytes(config=c, dense=e.precision.dense_slots)))
    any_feasible = any(r.evaluation.feasible for r in rows)
    pool = [r for r in rows if r.evaluation.feasible or not any_feasible]
    lead = min(pool, key=lambda r: (-r.score_bits, r.config))
    # a few repeats estimate one configuration's spread poorly: the median spread of all rows counts too
    band = max(iqr(lead.repeats_score_bits), statistics.median(iqr(r.repeats_score_bits) for r in rows),
               search.tie_bits)
    ties = [r for r in pool if r.score_bits >= lead.score_bits - band]
    chosen = min(ties, key=lambda r: (r.memory_bytes, r.config.width_bits, -r.score_bits, r.config))
    return Confirmation(rows=tuple(rows), repeats=repeats, search_best=search.best.config, leader=lead.config,
                        band_bits=band, chosen=chosen, elapsed_s=time.monotonic() - t0)


def iqr(xs) -> float:
    """Interquartile range (inclusive quartiles); 0 for fewer than two values."""
    if len(xs) < 2:
        return 0.0
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return float(q[2] - q[0])
