"""The race's search: Bayesian optimisation over what afl-fuzz finds, with successive halving.

What is searched: every configuration our runtime can run under afl-fuzz, a
:class:`~autotune.mappoint.MapPoint` (metric, layout, hash space 2^k, counter width, overflow policy);
guard has no map of its own (``map_pow2`` 0).
Each point becomes a contestant on the cheapest build kind that serves it (:func:`contestant_for`).

How a point is judged: short afl-fuzz trials, each paired with AFL++'s default trial of the same
rung and afl-fuzz seed (``-s``). One pair gives

    y_i = ln((edges_i + 1) / (default_edges_i + 1)) + SPEED_WEIGHT * ln(execs_i / default_execs_i)

(yardstick edges; the speed term only breaks near-ties: a 2x faster configuration is worth 1.4 %
more edges, because over a longer campaign speed turns into coverage). A point's observation at a
rung is the median of its pairs (one pair far out must not decide a rung: on libtiff a mean
promoted a configuration behind the default in all three pairs over one ahead in two whose third
trial ran at a quarter of its usual speed, reproducibly from that afl-fuzz seed; and `autotune
compare` judges medians too), with variance pooled over every observation so far, scaled to the
median of that many pairs: the noise is modelled, not assumed away, and no single trial is taken
at face value.

The model: a Gaussian process (scikit-optimize's ``GaussianProcessRegressor``, Matern 5/2 with
one length scale per feature) over features of the point (the census's log2 keys of its metric,
call context, N of an N-gram, layout, size, width, overflow policy, inline build) and the trial
length (the fidelity), with each observation's own noise on the diagonal. Proposals maximise
expected improvement (scikit-optimize's ``gaussian_ei``) at the first rung's length over the
points not yet tried; a batch is chosen by the constant liar (each pick joins the data at its
predicted mean before the next).

The prior is the probe and tune, not a rival: the census rules out what cannot work (Equation 1
collisions over the limit at twice the estimated keys, a map afl-fuzz's handshake cannot carry,
a flat map or dense array larger than the per-core L2 that afl-fuzz would stream every execution,
a wrapping counter where the census saw counts overflow), and tune's best configuration of each
metric family by replay (guard, edge, N-gram, call context) seeds the first batch, so afl-fuzz
time goes to what replay cannot tell. tune's evaluations are also the model's data: the cheap
fidelity (autotune.surrogate.REPLAY_FIDELITY), each on the race's scale by :func:`replay_rows`, so
one model spans both fidelities and learns from the trials how far to trust the replay.

Fidelity by successive halving (Jamieson and Talwalkar, AISTATS 2016): every proposal gets
``repeats`` trials of t0 seconds; the better 1/eta by the model's posterior mean (which pools a
point's trials with its neighbours') go on to trials eta times longer, and the model learns from
every rung. The decision is the race's (autotune.race.core): the last rung's winner against the
default by the exact one-sided test on yardstick edges (core.decision_test: signed-rank on the
seed-paired trials), else the default.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from autotune.buildkinds import KIND_VAR, kind_for
from autotune.configuration import CC_AUTOTUNE
from autotune.errors import AutotuneError
from autotune import feasibility
from autotune.mappoint import MapPoint
from autotune.race.contestants import (DEFAULT_KEYS, EDGE_KIND_MAX_MAP_SLOTS, build_kind_for, inline_kind_build,
                                       sized_settings)
from autotune.race.core import (Contestant, RaceResult, Rule, RungPlan, RunTrials, TrialFigures, check_budget_shape,
                                first_trial_s, most_that_fit, plan_rungs, rung_waves)
from autotune.race.halving import halve
from autotune.race.options import RaceBudget, RaceProgress, RaceSettings
from autotune.surrogate import REPLAY_FIDELITY, Row, Surrogate
from autotune.surrogate import features as surrogate_features
from autotune.tune.defaults import DEFAULT_MAX_COLLISION_RATE, DEFAULT_MAX_COUNTER_OVERFLOW
from autotune.vocabulary import AFL_DEFAULT_MAP_SLOTS, CONTEXT_METRICS, METRIC_VAR, RACE_MAP_POW2, has_map_size

SPEED_WEIGHT = 0.02
SEARCH_WIDTHS = (8, 16, 32)
OVERFLOWS = ("neverzero", "saturate", "wrap")
# Largest number of proposals the first rung may take however large the budget (the space has a
# few hundred feasible points; beyond this, a longer budget buys longer trials instead).
MAX_PROPOSALS = 24
DEFAULT_PAIR_SD = 0.05  # prior noise of one pair's y before any pair has been seen twice
MIN_PAIR_VAR = 1e-5
# tune's replayed evaluations on the race's scale (:func:`replay_rows`): in the first rungs of 16
# recorded searches (32 observations, AFL++ 4.04c, benchmarks/results/replay-elasticity-2026-12-02.md)
# ln(edges over the default's) followed 0.26 x ln(execs/s over the default's), r = 0.90, residual sd 0.12
SPEED_ELASTICITY = 0.26
REPLAY_SD = 0.12


@dataclass(frozen=True)
class SpaceFacts:
    """What rules points out and sizes them: the probe's census (estimated keys and the share of keys
    whose count overflows each width, per metric), the limits, the per-core L2, and whether the
    target can be rebuilt per contestant (a recipe: inline build kinds) or one binary runs them all."""

    keys: Mapping[str, float] = field(default_factory=dict)
    overflow: Mapping[str, Mapping[int, float]] = field(default_factory=dict)
    l2_bytes: int | None = None
    max_collision_rate: float = DEFAULT_MAX_COLLISION_RATE
    max_counter_overflow: float = DEFAULT_MAX_COUNTER_OVERFLOW
    inline: bool = True
    llc_bytes: int | None = None  # the last-level cache the instances share
    instances: int = 1  # afl-fuzz instances of the campaign, each scanning its own map every execution

    def keys_of(self, metric: str) -> float:
        k = self.keys.get(metric)
        return max(1.0, float(k)) if k else float(DEFAULT_KEYS)

    @property
    def limits(self) -> feasibility.Limits:
        """What the feasibility rule holds a point to (autotune.feasibility)."""
        return feasibility.Limits(max_collision_rate=self.max_collision_rate,
                                  max_counter_overflow=self.max_counter_overflow, l2_bytes=self.l2_bytes,
                                  llc_bytes=self.llc_bytes, instances=self.instances)

    def to_dict(self) -> dict[str, Any]:
        return {"keys": {m: round(float(v), 1) for m, v in self.keys.items()},
                "overflow": {m: {str(w): round(float(s), 6) for w, s in v.items()} for m, v in self.overflow.items()},
                "l2_bytes": self.l2_bytes, "max_collision_rate": self.max_collision_rate,
                "max_counter_overflow": self.max_counter_overflow, "inline": self.inline,
                "llc_bytes": self.llc_bytes, "instances": self.instances}


@dataclass(frozen=True)
class Space:
    """What the search may propose: the feasible ``points`` (:func:`enumerate_space`) for the ``facts``
    that ruled the others out, how many were ``ruled_out`` per reason, and the prior's first proposals
    (``seeds``: each point with why, :func:`prior_seeds`)."""

    points: tuple[MapPoint, ...]
    facts: SpaceFacts
    seeds: tuple[tuple[MapPoint, str], ...] = ()
    ruled_out: Mapping[str, int] = field(default_factory=dict)
    replay: tuple[tuple[MapPoint, float], ...] = ()  # tune's evaluations as observations (:func:`replay_rows`)


def _dense(point: MapPoint, facts: SpaceFacts) -> int | None:
    return feasibility.dense_slots_of(point, facts.keys_of(point.metric)) if point.hashed else None


def rule_out(point: MapPoint, facts: SpaceFacts) -> str | None:
    """Why ``point`` cannot work on this target and host (None: it can): the one rule tune obeys too
    (autotune.feasibility)."""
    return feasibility.rule_out(point, estimated_keys=facts.keys_of(point.metric),
                                overflow=facts.overflow.get(point.metric, {}), limits=facts.limits)


def enumerate_space(*, metrics: Sequence[str], facts: SpaceFacts) -> tuple[list[MapPoint], dict[str, int]]:
    """Every point the search may propose for ``metrics``, and how many were ruled out per reason."""
    points: list[MapPoint] = []
    ruled: dict[str, int] = {}
    for m in metrics:
        shapes = ([("flat", 0)] if not has_map_size(m) else
                  [(lay, k) for lay in ("flat", "twolevel") for k in range(RACE_MAP_POW2[0], RACE_MAP_POW2[1] + 1)])
        for lay, k in shapes:
            for w in SEARCH_WIDTHS:
                for ov in OVERFLOWS:
                    p = MapPoint(metric=m, layout=lay, map_pow2=k, width_bits=w, overflow=ov)
                    why = rule_out(p, facts)
                    if why is None:
                        points.append(p)
                    else:
                        key = why.split(":", 1)[0]
                        ruled[key] = ruled.get(key, 0) + 1
    return points, ruled


def _inline_build(point: MapPoint, facts: SpaceFacts) -> dict[str, str] | None:
    """The inline kind's build of a hashed 8-bit NeverZero point (what the inline kinds count): a flat
    map of at most ``EDGE_KIND_MAX_MAP_SLOTS`` slots, or a two-level map counted through its index
    (``AUTOTUNE_CC_INDEX=1``); None when the point needs a hooked kind."""
    if not facts.inline or not point.hashed or point.width_bits != 8 or point.overflow != "neverzero":
        return None
    if point.layout == "flat":
        return inline_kind_build(point.metric) if (1 << point.map_pow2) <= EDGE_KIND_MAX_MAP_SLOTS else None
    return inline_kind_build(point.metric, indexed=True)


def contestant_for(point: MapPoint, facts: SpaceFacts) -> Contestant:
    """The contestant running ``point``: the cheapest build kind serving it, and its run-time variables
    (autotune.runtime.config.RuntimeConfig, the one writer of AUTOTUNE_* settings)."""
    ov = "NeverZero" if point.overflow == "neverzero" else point.overflow
    inline = _inline_build(point, facts)
    if not point.hashed and point.width_bits == 8 and point.overflow == "neverzero":
        build, settings = {KIND_VAR: kind_for(point.metric).name}, {METRIC_VAR: point.metric}
        desc = "our runtime, guard (a counter per guard, 8-bit NeverZero, counted inline)"
    elif not point.hashed:
        build = {KIND_VAR: kind_for(point.metric, counter_bits=point.width_bits, overflow=point.overflow).name}
        settings = sized_settings(metric=point.metric, layout="flat", hash_slots=AFL_DEFAULT_MAP_SLOTS,
                                  counter_bits=point.width_bits, overflow=point.overflow)
        desc = f"our runtime, guard ({point.width_bits}-bit {ov} counters)"
    elif inline is not None and point.layout == "flat":
        build = inline
        h = 1 << point.map_pow2
        settings = sized_settings(metric=point.metric, layout="flat", hash_slots=h, key_hash="afl")
        desc = f"our runtime, {point.metric} (flat, {h} slots, 8-bit NeverZero, counted inline)"
    elif inline is not None:  # two-level, counted inline through the index
        build = inline
        dense = _dense(point, facts)
        settings = sized_settings(metric=point.metric, layout="twolevel", hash_slots=1 << point.map_pow2,
                                  dense_slots=dense, key_hash="afl", index_file="index.bin")
        desc = (f"our runtime, {point.metric} (twolevel, index 2^{point.map_pow2}, {dense} slots, 8-bit NeverZero, "
                "counted inline through the index)")
    else:
        build = {KIND_VAR: build_kind_for(point.metric)}
        dense = _dense(point, facts)
        settings = sized_settings(metric=point.metric, layout=point.layout, hash_slots=1 << point.map_pow2,
                                  dense_slots=dense, counter_bits=point.width_bits, overflow=point.overflow,
                                  index_file="index.bin")
        size = (f"index 2^{point.map_pow2}, {dense} slots" if point.layout == "twolevel"
                else f"{1 << point.map_pow2} slots")
        desc = f"our runtime, {point.metric} ({point.layout}, {size}, {point.width_bits}-bit {ov})"
    return Contestant(name=point.name, settings=tuple(sorted(settings.items())), cc_kind=CC_AUTOTUNE,
                      build=tuple(sorted(build.items())), description=f"{desc}, {build[KIND_VAR]} build")


def build_key(c: Contestant) -> tuple:
    """Contestants with the same key share one binary (and fail to build together)."""
    return (c.cc_kind, tuple(sorted(c.build)))


def family(metric: str) -> str:
    if metric == "guard":
        return "guard"
    if metric.startswith("ngram-"):
        return "N-gram"
    return "call context" if metric in CONTEXT_METRICS else "edge"


def features(point: MapPoint, facts: SpaceFacts, fidelity: float) -> list[float]:
    """The model's view of a point (autotune.surrogate.features) with this target's census and builds."""
    return surrogate_features(point, keys=facts.keys_of(point.metric), inline=_inline_build(point, facts) is not None,
                              fidelity=fidelity)


def nearest_feasible(point: MapPoint, space: Sequence[MapPoint]) -> MapPoint | None:
    """``point`` if the space holds it, else the same metric, layout, width and policy at the smallest
    larger feasible size, else the same metric's smallest feasible point (None: the metric is out)."""
    if point in space:
        return point
    same = sorted(p for p in space if (p.metric, p.layout, p.width_bits, p.overflow)
                  == (point.metric, point.layout, point.width_bits, point.overflow) and p.map_pow2 >= point.map_pow2)
    if same:
        return same[0]
    metric = sorted((p for p in space if p.metric == point.metric),
                    key=lambda p: (p.overflow != "neverzero", p.width_bits, p.layout != "flat", p.map_pow2))
    return metric[0] if metric else None


def sized_point(metric: str, space: Sequence[MapPoint]) -> MapPoint | None:
    """``metric`` as the race sizes it without a model: 8-bit NeverZero, the smallest feasible map,
    flat when that is small enough to count inline, else two-level."""
    mine = [p for p in space if p.metric == metric and p.width_bits == 8 and p.overflow == "neverzero"]
    if not mine:
        return None
    if metric == "guard":
        return mine[0]
    smallest = min(p.map_pow2 for p in mine)
    layout = "flat" if (1 << smallest) <= EDGE_KIND_MAX_MAP_SLOTS else "twolevel"
    return nearest_feasible(MapPoint(metric=metric, layout=layout, map_pow2=smallest), mine)


def race_prior_bits(ev: Any) -> float:
    """What the race's first rungs reward, from one of tune's replay evaluations: log2 of its replayed
    execs/s times the share of keys the map keeps apart and counts without wrapping, that is tune's
    score without its credit for a richer metric (``sensitivity_weight``). In afl-fuzz that credit did
    not pay: tune's richest choices (ngram-7/8 on 2^20-2^22 maps) covered 2-65 % fewer edges than AFL++'s
    default in the first rung on the demo, lz4, libyaml and libjpeg-turbo, at 0.08-0.6x its execs/s
    (benchmarks/results/race-2026-11-2*-search*.md)."""
    p = ev.precision
    return (math.log2(max(float(ev.execs_per_s), 1e-9)) + math.log2(max(1e-12, 1.0 - float(p.lost_keys)))
            + math.log2(max(1e-12, 1.0 - float(p.counter_overflow))))


def prior_seeds(*, space: Sequence[MapPoint], tune_evaluations: Sequence[Any] = (),
                fallback: Sequence[str] = ("guard", "edge", "ngram-4", "caller")) -> list[tuple[MapPoint, str]]:
    """The first proposals: guard, then tune's best feasible configuration of each metric family by
    replay (edge, N-gram, call context) by :func:`race_prior_bits`, best first, each mapped onto the
    space; without tune's evaluations, ``fallback`` metrics sized by the race's rule."""
    out: list[tuple[MapPoint, str]] = []

    def add(p: MapPoint | None, why: str) -> None:
        if p is not None and all(p != q for q, _ in out):
            out.append((p, why))

    add(sized_point("guard", space), "prior: AFL++'s coverage (a counter per guard) at our runtime's cost")
    best: dict[str, Any] = {}
    for ev in tune_evaluations:
        fam = family(ev.config.metric)
        if fam == "guard" or not ev.feasible:
            continue
        if fam not in best or race_prior_bits(ev) > race_prior_bits(best[fam]):
            best[fam] = ev
    for fam, ev in sorted(best.items(), key=lambda kv: -race_prior_bits(kv[1])):
        c = ev.config
        k = min(max(c.map_pow2, RACE_MAP_POW2[0]), RACE_MAP_POW2[1])
        p = MapPoint(metric=c.metric, layout=c.layout, map_pow2=k, width_bits=min(c.width_bits, SEARCH_WIDTHS[-1]))
        add(nearest_feasible(p, space), f"prior: tune's fastest precise {fam} configuration by replay "
                                        f"({c.metric}, {c.layout}, 2^{c.map_pow2}, {c.width_bits}-bit; "
                                        f"{ev.execs_per_s:,.0f} replayed execs/s)")
    if not best:
        for m in fallback:
            add(sized_point(m, space), f"prior: {m} sized by the census (no tune result)")
    return out


def replay_rows(tune_evaluations: Sequence[Any]) -> tuple[tuple[MapPoint, float], ...]:
    """tune's replay evaluations as observations of the race's objective at the replay fidelity: each
    point with ``ln(1 - lost keys) + ln(1 - counts overflowed) + (SPEED_ELASTICITY + SPEED_WEIGHT) *
    ln(execs/s over the reference's)``, the reference being the fastest guard configuration replayed
    (our runtime's count of AFL++'s default coverage), else the fastest configuration. The keys a map
    loses are edges afl-fuzz cannot tell apart; a faster configuration covers more in a rung by the
    measured elasticity. Infeasible evaluations are data too (they are what the rule keeps out)."""
    evs = [ev for ev in tune_evaluations if float(ev.execs_per_s) > 0]
    if not evs:
        return ()
    guards = [float(ev.execs_per_s) for ev in evs if ev.config.metric == "guard"]
    ref = max(guards or [float(ev.execs_per_s) for ev in evs])
    out = []
    for ev in evs:
        p, c = ev.precision, ev.config
        y = (math.log(max(1e-6, 1.0 - float(p.lost_keys))) + math.log(max(1e-6, 1.0 - float(p.counter_overflow)))
             + (SPEED_ELASTICITY + SPEED_WEIGHT) * math.log(float(ev.execs_per_s) / ref))
        point = MapPoint(metric="guard", layout="flat", map_pow2=0, width_bits=c.width_bits,
                         overflow=c.overflow) if c.metric == "guard" else c
        out.append((point, y))
    return tuple(out)


# ---- the model ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Observation:
    point: MapPoint
    name: str  # the contestant that ran it (the point's name, or its portfolio's)
    rung: int
    seconds: int
    fidelity: float
    pairs: tuple[float, ...]  # y of each pair (trial vs the default's trial of the same -s)
    coverage: tuple[int, ...]
    default_coverage: tuple[int, ...]
    execs_ratio: float  # median execs/s over the default's
    predicted: tuple[float, float] | None  # the model's (mean, sd) just before this observation

    @property
    def y(self) -> float:
        """The median of the pairs: one pair far out (a trial whose afl-fuzz seed led it to slow
        inputs: 14k execs/s against 60-68k in the same configuration's other trials) moves it far
        less than it moves a mean."""
        return statistics.median(self.pairs)

    @property
    def y_var_factor(self) -> float:
        """The variance of :attr:`y` over one pair's variance: 1/n for a mean of n, pi/(2n) for the
        median of n >= 3 (its large-sample variance under normal noise; a mean for n <= 2)."""
        n = len(self.pairs)
        return 1.0 / n if n <= 2 else math.pi / (2 * n)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "point": self.point.to_race_dict(), "rung": self.rung, "seconds": self.seconds,
                "objective": round(self.y, 6), "pairs": [round(v, 6) for v in self.pairs],
                "coverage": list(self.coverage), "default_coverage": list(self.default_coverage),
                "execs_ratio": round(self.execs_ratio, 4),
                "predicted": None if self.predicted is None else {"mean": round(self.predicted[0], 6),
                                                                  "sd": round(self.predicted[1], 6)}}


def execs_ratio(cand: Sequence[TrialFigures], default: Sequence[TrialFigures]) -> float:
    """The median execs/s of ``cand``'s trials over the default's."""
    return statistics.median(t.execs_per_s for t in cand) / max(1e-3, statistics.median(t.execs_per_s for t in default))


def pair_objective(cand: Sequence[TrialFigures], default: Sequence[TrialFigures]) -> list[float]:
    """y of each pair, matched by repeat (the same afl-fuzz -s)."""
    base = {t.repeat: t for t in default}
    out = []
    for t in sorted(cand, key=lambda t: t.repeat):
        d = base[t.repeat]
        out.append(math.log((t.coverage + 1) / (d.coverage + 1))
                   + SPEED_WEIGHT * math.log(max(t.execs_per_s, 1e-3) / max(d.execs_per_s, 1e-3)))
    return out


class Model:
    """The race's view of the one optimiser (autotune.surrogate): its observations (each the median of
    its pairs, with the pooled pair variance scaled to that median) fitted at their fidelities, beside
    tune's replayed evaluations (``replay``, :func:`replay_rows`) at the replay fidelity, each of
    variance ``REPLAY_SD`` squared."""

    def __init__(self, *, facts: SpaceFacts, seed: int, replay: Sequence[tuple[MapPoint, float]] = ()):
        self.facts = facts
        self.replay = tuple(replay)
        self.obs: list[Observation] = []
        self.surrogate = Surrogate(featurize=lambda p, f: features(p, facts, f), seed=seed)

    def pair_var(self) -> float:
        groups = [o.pairs for o in self.obs if len(o.pairs) >= 2]
        dof = sum(len(g) - 1 for g in groups)
        if dof == 0:
            return DEFAULT_PAIR_SD ** 2
        return max(MIN_PAIR_VAR, sum(statistics.variance(g) * (len(g) - 1) for g in groups) / dof)

    def _rows(self) -> list[Row]:
        var = self.pair_var()
        return ([(p, REPLAY_FIDELITY, y, REPLAY_SD ** 2) for p, y in self.replay]
                + [(o.point, o.fidelity, o.y, var * o.y_var_factor) for o in self.obs])

    def fit(self) -> bool:
        """Fit on the observations; False when there is too little to fit."""
        return self.surrogate.fit(self._rows(), floor_sd=math.sqrt(self.pair_var()))

    def predict(self, points: Sequence[MapPoint], fidelity: float) -> list[tuple[float, float]]:
        """(mean, sd) of the objective at ``points`` and ``fidelity``; requires a fitted model."""
        return self.surrogate.predict(points, fidelity)

    def propose(self, candidates: Sequence[MapPoint], n: int, *, fidelity: float, rng: random.Random
                ) -> list[tuple[MapPoint, str, tuple[float, float] | None, float | None]]:
        """``n`` points of ``candidates`` by expected improvement (constant liar), each with its origin,
        prediction and EI; random ones (seeded) while there is no model."""
        var = self.pair_var()
        return self.surrogate.propose(rows=self._rows(), candidates=candidates, n=n, fidelity=fidelity,
                                      incumbents=[o.point for o in self.obs if o.fidelity == fidelity], rng=rng,
                                      liar_var=var, floor_sd=math.sqrt(var))


# ---- the search --------------------------------------------------------------------------------


def _batches(*, candidates: int, first_batch: int, batch: int) -> list[int]:
    """The first rung's batch sizes for ``candidates`` proposals: ``first_batch``, then ``batch`` at a time."""
    sizes = [min(candidates, max(1, first_batch))]
    while sum(sizes) < candidates:
        sizes.append(min(batch, candidates - sum(sizes)))
    return sizes


def budget_for(*, candidates: int, seeds: int, budget: RaceBudget) -> int:
    """The smallest budget (whole seconds) at which :func:`fit_search` plans ``candidates`` proposals or
    more with ``budget``'s rungs (its ``budget_s`` aside). fit_search takes the most proposals with first
    trials of twice ``min_trial_s`` when two or more fit so, else the most with trials of ``min_trial_s``:
    so ``candidates`` first fit with the shorter trials, unless two already fit with the longer ones by
    then."""
    b = budget

    def need(k: int, shortest: int) -> float:
        *_, waves = rung_waves(sizes=_batches(candidates=k, first_batch=min(seeds, k) or 1, batch=b.jobs), budget=b)
        return first_trial_s(waves=waves, eta=b.eta, budget_s=0.0, overhead_s=b.overhead_s,
                             min_trial_s=shortest)[1] or 0.0

    short = need(candidates, b.min_trial_s)
    if candidates < 2 or short < need(2, 2 * b.min_trial_s):
        return math.ceil(short)
    return math.ceil(need(candidates, 2 * b.min_trial_s))


def plan_sentence(*, plan: Sequence[RungPlan], batches: Sequence[int], seeds: int, space_size: int,
                  budget: RaceBudget, max_proposals: int = MAX_PROPOSALS) -> str:
    """What the budget buys, for the user: proposals (from the prior, from the model), trial lengths, and
    the budget that buys one more proposal and the model's first (:func:`budget_for`)."""
    n = sum(batches)
    prior = min(seeds, n)
    lengths = ", ".join(f"{r.seconds} s" for r in plan)
    out = (f"the budget ({budget.budget_s:.0f} s) buys {n} proposal{'s' if n != 1 else ''} ({prior} from the prior, "
           f"{n - prior} from the model) in rungs of {lengths} trials")
    more = []
    if n < min(space_size, max_proposals):
        more.append(f"--budget {budget_for(candidates=n + 1, seeds=seeds, budget=budget)} buys {n + 1}")
    if n == prior and seeds < min(space_size, max_proposals):
        more.append(f"--budget {budget_for(candidates=seeds + 1, seeds=seeds, budget=budget)} the model's first")
    return out + ("; " + ", ".join(more) if more else "")


def plan_search(*, candidates: int, first_batch: int, batch: int, budget: RaceBudget
                ) -> tuple[tuple[RungPlan, ...], tuple[int, ...]]:
    """(rungs, first-rung batch sizes) for ``candidates`` proposals: the first batch runs with the
    default's trials, later batches (of ``batch``) each after the model has seen the earlier ones; the
    rungs after the first are successive halving's. Raises like plan_race when t0 < min_trial_s."""
    if candidates < 1:
        raise AutotuneError("the search has no configuration to try", fix="allow more metrics (--metrics)")
    check_budget_shape(budget, batch=batch)
    sizes = _batches(candidates=candidates, first_batch=first_batch, batch=batch)
    plan = plan_rungs(sizes=sizes, budget=budget,
                      what=f"try {candidates} configuration{'s' if candidates != 1 else ''} against the default")
    return plan, tuple(sizes)


def fit_search(*, space_size: int, seeds: int, budget: RaceBudget, max_proposals: int = MAX_PROPOSALS
               ) -> tuple[tuple[RungPlan, ...], tuple[int, ...]]:
    """The plan with the most proposals (at most ``max_proposals`` and the space) that fits the budget
    with first-rung trials of at least twice ``min_trial_s`` (short trials are noisy: more proposals
    are not worth trials that say little), else of at least ``min_trial_s`` (core.most_that_fit)."""
    def plan(n: int, shortest: int) -> tuple[tuple[RungPlan, ...], tuple[int, ...]]:
        return plan_search(candidates=n, first_batch=min(seeds, n) or 1, batch=budget.jobs,
                           budget=replace(budget, min_trial_s=shortest))

    return most_that_fit(top=max(1, min(space_size, max_proposals)), plan=plan, min_trial_s=budget.min_trial_s,
                         longer_first=True)[1]


Prepare = Callable[[Sequence[Contestant]], Mapping[str, str]]  # builds them; {name: reason} of those that failed


class ModelProposer:
    """The search's proposer for the successive-halving scheduler (autotune.race.halving): the prior's
    seeds first, then the model's expected improvement; each proposal built by ``prepare`` as it is
    proposed (a failed build drops its build kind's points, and the next proposal takes its place); the
    model learns from every rung's pairs and ranks by its posterior mean at the rung's fidelity."""

    def __init__(self, *, default: Contestant, space: Space, prepare: Prepare, plan: Sequence[RungPlan],
                 batches: Sequence[int], seed: int, wrap: Callable[[Contestant], Contestant] | None = None,
                 on_batch: Callable[[dict], None] | None = None, alternatives: Sequence[Contestant] = ()):
        facts = space.facts
        # configurations outside the space (OSS-Fuzz's portfolio): first in the first batch, judged by
        # their own pairs, never in the model (they have no point)
        self.pending_alternatives: list[Contestant] | None = list(alternatives)
        self.alternatives: dict[str, Contestant] = {}
        self.alternative_obs: list[dict] = []
        self.default, self.facts, self.prepare, self.plan, self.batches = default, facts, prepare, plan, batches
        self.wrap = wrap or (lambda c: c)
        self.on_batch = on_batch
        self.space_size, self.ruled_out = len(space.points), dict(space.ruled_out)
        self.rng = random.Random(seed)
        self.model = Model(facts=facts, seed=seed, replay=space.replay)
        self.built: dict[str, Contestant] = {default.name: default}
        self.points: dict[str, MapPoint] = {}
        self.proposals: list[dict] = []
        self.dropped: list[dict] = []
        self.convergence: list[dict] = []
        self.afl_seconds = 0.0
        self.failed_builds: set[tuple] = set()
        self.pool = [p for p in space.points]
        self.seeds: list[tuple[MapPoint, str, Any, Any]] | None = [(p, why, None, None) for p, why in space.seeds]
        for p, *_ in self.seeds:
            self.pool.remove(p)
        self.last_fid = max(1.0, math.log2(plan[-1].seconds / plan[0].seconds)) if len(plan) > 1 else 1.0

    def fidelity(self, rung: int) -> float:
        return math.log2(self.plan[rung].seconds / self.plan[0].seconds) / self.last_fid

    def propose(self, n: int) -> list[str]:
        """Up to ``n`` proposals, built: at the first call the prior's seeds (those beyond ``n`` go back to
        the model's pool), then the model's."""
        first, queue = self.seeds is not None, []
        chosen: list[str] = []
        if self.pending_alternatives is not None:
            for c in self.pending_alternatives[:n]:
                if self._build_alternative(c):
                    chosen.append(c.name)
            self.pending_alternatives = None
        if self.seeds is not None:
            queue = self.seeds[:n - len(chosen)]
            self.pool += [p for p, *_ in self.seeds[n - len(chosen):]]
            self.seeds = None
        while len(chosen) < n:
            if not queue:
                if not self.pool:
                    break
                queue = self.model.propose(self.pool, n - len(chosen), fidelity=0.0, rng=self.rng)
                for p, *_ in queue:
                    self.pool.remove(p)
            c = self._build(*queue.pop(0))
            if c is not None:
                chosen.append(c.name)
        if first and not chosen:
            raise AutotuneError("no configuration of the search could be built",
                                fix="see the build errors in race.json's search.dropped")
        return chosen

    def _build_alternative(self, c: Contestant) -> bool:
        """An alternative built and recorded (False: its build failed, recorded as dropped)."""
        failures = self.prepare([c])
        if c.name in failures:
            self.dropped.append({"name": c.name, "reason": failures[c.name]})
            return False
        self.built[c.name] = c
        self.alternatives[c.name] = c
        return True

    def _build(self, p: MapPoint, origin: str, pred: tuple[float, float] | None, ei: float | None) -> Contestant | None:
        """``p``'s contestant built and recorded as proposed; None when its build kind failed."""
        c = self.wrap(contestant_for(p, self.facts))
        if build_key(c.tuned) in self.failed_builds:
            return None
        failures = self.prepare([c])
        if c.name in failures:
            self.failed_builds.add(build_key(c.tuned))
            self.dropped.append({"name": c.name, "reason": failures[c.name]})
            self.pool[:] = [q for q in self.pool if build_key(contestant_for(q, self.facts)) not in self.failed_builds]
            return None
        self.built[c.name] = c
        self.points[c.name] = p
        self.proposals.append({"name": c.name, "point": p.to_race_dict(), "origin": origin,
                               "batch": len(self.convergence),
                               "predicted": None if pred is None else {"mean": round(pred[0], 6),
                                                                       "sd": round(pred[1], 6)},
                               "ei": None if ei is None else round(ei, 6)})
        return c

    def observe(self, *, rung: int, seconds: int, names: Sequence[str], figures: Sequence[TrialFigures],
                base: Sequence[TrialFigures]) -> None:
        """Each of ``names`` observed at ``rung`` (its pairs with the default's trials), then the model's best."""
        self.afl_seconds += len(figures) * seconds
        fid = self.fidelity(rung)
        for name in (n for n in names if n in self.alternatives):
            mine = [t for t in figures if t.contestant == name]
            pairs = pair_objective(mine, base)
            self.alternative_obs.append({
                "name": name, "rung": rung, "seconds": seconds, "objective": round(statistics.median(pairs), 6),
                "pairs": [round(v, 6) for v in pairs], "coverage": [t.coverage for t in sorted(mine, key=lambda t: t.repeat)],
                "default_coverage": [t.coverage for t in sorted(base, key=lambda t: t.repeat)],
                "execs_ratio": round(execs_ratio(mine, base), 4)})
        names = [n for n in names if n not in self.alternatives]
        fitted = self.model.fit()
        preds = self.model.predict([self.points[n] for n in names], fid) if fitted and names else [None] * len(names)
        for name, pred in zip(names, preds):
            mine = [t for t in figures if t.contestant == name]
            ratio = execs_ratio(mine, base)
            self.model.obs.append(Observation(point=self.points[name], name=name, rung=rung, seconds=seconds,
                                              fidelity=fid, pairs=tuple(pair_objective(mine, base)),
                                              coverage=tuple(t.coverage for t in mine),
                                              default_coverage=tuple(t.coverage for t in base), execs_ratio=ratio,
                                              predicted=pred))
        self._note_progress(rung)

    def rank(self, *, rung: int, names: Sequence[str], figures: Sequence[TrialFigures]) -> list[str]:
        """By the model's posterior mean at the rung's fidelity (no model yet: the rung's observations),
        then median execs/s, then name."""
        points = [n for n in names if n not in self.alternatives]
        if points and self.model.fit():
            means = dict(zip(points, (m for m, _ in self.model.predict([self.points[n] for n in points],
                                                                      self.fidelity(rung)))))
        else:
            means = {o.name: o.y for o in self.model.obs if o.rung == rung and o.name in points}
        # an alternative by its own pairs at this rung (the model knows nothing of it)
        means.update({o["name"]: o["objective"] for o in self.alternative_obs if o["rung"] == rung and o["name"] in names})
        eps = {n: statistics.median(t.execs_per_s for t in figures if t.contestant == n) for n in names}
        return sorted(names, key=lambda n: (-means[n], -eps[n], n))

    def _note_progress(self, rung: int) -> None:
        """The model's best so far against the afl-fuzz seconds spent (RaceResult.search's convergence)."""
        names = list(self.points)
        if not names:  # only alternatives so far: nothing modelled yet
            return
        if self.model.fit():
            means = self.model.predict([self.points[n] for n in names], self.fidelity(rung))
            i = max(range(len(names)), key=lambda j: means[j][0])
            best, val = names[i], means[i][0]
        else:
            here = [o for o in self.model.obs if o.rung == rung]
            if not here:  # only alternatives ran at this rung: nothing modelled has changed
                return
            o = max(here, key=lambda o: o.y)
            best, val = o.name, o.y
        self.convergence.append({"afl_seconds": round(self.afl_seconds, 1), "rung": rung, "tried": len(self.points),
                                 "best": best, "best_objective": round(val, 6)})
        if self.on_batch is not None:
            self.on_batch(self.convergence[-1])

    def contestants(self) -> tuple[Contestant, ...]:
        return tuple([self.built[self.default.name]] + list(self.alternatives.values())
                     + [self.built[n] for n in self.points])

    def history(self) -> dict:
        out = {"strategy": "search", "speed_weight": SPEED_WEIGHT, "facts": self.facts.to_dict(),
               "space": {"points": self.space_size, "ruled_out": self.ruled_out},
               "batches": list(self.batches), "pair_sd": round(math.sqrt(self.model.pair_var()), 6),
               "proposals": self.proposals, "observations": [o.to_dict() for o in self.model.obs],
               "convergence": self.convergence, "dropped": self.dropped}
        if self.alternatives:
            out["alternatives"] = {"names": list(self.alternatives), "observations": self.alternative_obs}
        if self.model.replay:  # tune's evaluations as the model's cheap-fidelity data
            out["replay"] = {"fidelity": REPLAY_FIDELITY, "sd": REPLAY_SD, "speed_elasticity": SPEED_ELASTICITY,
                             "rows": [{"point": p.to_race_dict(), "objective": round(y, 6)} for p, y in self.model.replay]}
        return out


def run_search(*, default: Contestant, space: Space, prepare: Prepare, run_trials: RunTrials,
               settings: RaceSettings, progress: RaceProgress = RaceProgress(),
               wrap: Callable[[Contestant], Contestant] | None = None,
               max_proposals: int = MAX_PROPOSALS, alternatives: Sequence[Contestant] = ()) -> RaceResult:
    """Search ``space`` against ``default`` in afl-fuzz and decide what to recommend (module docstring),
    by edges at ``settings.alpha``, within ``settings.budget`` (its ``jobs`` set), seeded by
    ``settings.seed``. ``wrap``: what a point's contestant becomes before it runs (autotune run
    --instances N: a portfolio with AFL++'s default as its main and the point on its secondaries;
    ``Contestant.tuned`` is the point's own). ``alternatives``: configurations outside the space (OSS-Fuzz's
    portfolio) raced first in the first batch and judged by their own pairs, never modelled.
    ``progress``: ``on_rung`` hears each rung, ``on_batch`` the model's best after each batch, ``notice``
    once what the budget buys (:func:`plan_sentence`)."""
    if not default.is_default:
        raise AutotuneError("the search needs AFL++'s default as its default contestant",
                            fix="report this as a bug in autotune")
    if not space.points:
        raise AutotuneError("every configuration was ruled out before the search",
                            fix="raise --max-collision-rate, or allow more metrics (--metrics)")
    feasible = set(space.points)
    space = replace(space, seeds=tuple((p, why) for p, why in space.seeds if p in feasible))
    budget = settings.budget
    n_alt = len(alternatives)
    plan, batches = fit_search(space_size=len(space.points) + n_alt, seeds=len(space.seeds) + n_alt, budget=budget,
                               max_proposals=max_proposals + n_alt)
    if progress.notice:
        progress.notice("search: " + plan_sentence(plan=plan, batches=batches, seeds=len(space.seeds) + n_alt,
                                                   space_size=len(space.points) + n_alt, budget=budget,
                                                   max_proposals=max_proposals + n_alt)
                        + (f" (the first {n_alt}: {', '.join(c.name for c in alternatives)}, outside the space)"
                           if n_alt else ""))
    proposer = ModelProposer(default=default, space=space, prepare=prepare, plan=plan, batches=batches,
                             seed=settings.seed, wrap=wrap, on_batch=progress.on_batch, alternatives=alternatives)
    return halve(proposer=proposer, rule=Rule(alpha=settings.alpha, seed=settings.seed), plan=plan, batches=batches,
                 default=default.name, run_trials=run_trials, budget=budget, on_rung=progress.on_rung)
