"""Successive halving over configurations, measured by trials in the real afl-fuzz.

Why racing: what a map configuration is worth is what afl-fuzz finds with it, and that depends on
more than the map's cost (a richer metric's queue grows 4-35x, each entry calibrated and
scheduled). A short afl-fuzz trial measures all of it; successive halving (Jamieson and
Talwalkar, AISTATS 2016; Li et al., "Hyperband", JMLR 2018) spends the budget on the candidates
that keep up: every candidate gets a short trial, the better 1/eta of them a trial eta times
longer, and so on until one is left. autofz (USENIX Security 2023) races fuzzers the same way.

The rules here:
- **AFL++'s default is in every rung** and never eliminated, so the last rung compares the
  winner and the default at the same trial length, side by side.
- **Trials are paired**: in a rung, repeat i of every contestant runs with the same afl-fuzz
  seed (``-s``), so the contestants differ by configuration, not by luck of the RNG.
- **Ranking** by median yardstick coverage (one yardstick for every contestant), then median
  execs/s, then name (deterministic).
- **Stop early** when, after a rung other than the first, every candidate of that rung covered
  significantly less than the default (exact one-sided Mann-Whitney p <= alpha). Not after the
  first: its trials are the shortest, where a richer metric's slower start (a larger queue to
  calibrate) weighs most.
- **Decision**: the winner is recommended only if its median coverage in the last rung is above
  the default's and the exact one-sided test says so at ``alpha`` (default 0.05): the Wilcoxon
  signed-rank test on the seed-paired differences when there are 5 pairs or more (the default
  last rung: all 5 won, p = 1/32), else Mann-Whitney (3 against 3: all 3 of its trials beat all 3
  of the default's, p = 1/20); see ``decision_test``.
  Otherwise the default is recommended, and the result says why: a tuned configuration that
  cannot show it beats the default is not worth a user's rebuild.
- **Judged by bugs** (``objective="bugs"``, a target with known-bug canaries): the trials run with
  fatal canaries and each trial's time to trigger per bug is measured beside its edges; a rung is
  ranked by bugs triggered, then time to trigger, and the last rung decides by the combined
  log-rank test of time to trigger against the default, or says the budget is too small for bugs
  to separate anything (autotune.bugs.race, which states the rule). No early stop: that rule is
  about edges.

The trials themselves are run by a callable (``run_trials``: a batch of ``TrialPlan`` in, one
``TrialFigures`` each out), so the logic is tested on recorded figures and run for real through
the afl-fuzz trial backend.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, TypeVar

from autotune.configuration import Configuration
from autotune.errors import AutotuneError
# the race's defaults are options.py's (re-exported here, where the race's modules have always read them)
from autotune.race.options import (DEFAULT_ALPHA, DEFAULT_BUDGET_S, DEFAULT_ETA, DEFAULT_FINAL_REPEATS,  # noqa: F401
                                   DEFAULT_MIN_TRIAL_S, DEFAULT_OVERHEAD_S, DEFAULT_REPEATS, RaceBudget)
from autotune.stats import a12, mann_whitney, signed_rank

SCHEMA_VERSION = 1


# a configuration in the race (autotune.configuration, the one configuration type)
Contestant = Configuration


def portfolio_of(*, default: Contestant, secondary: Contestant | None, instances: int) -> Contestant:
    """An ``instances``-instance portfolio: AFL++'s default as the -M main, then ``secondary`` (None:
    AFL++'s default again) as every -S; AFL++'s variations on the secondaries are the trial's."""
    single = Contestant(name=default.name, cc_kind=default.cc_kind, build=default.build, settings=default.settings,
                        description=default.description)
    if secondary is None:
        return Configuration.portfolio(name=f"{default.name}-x{instances}", is_default=True,
                                       members=(single,) * instances,
                                       description=f"AFL++'s default portfolio: {instances} x ({default.description}), "
                                                   "one -M, the rest -S with AFL++'s variations")
    return Configuration.portfolio(name=f"x{instances}-{secondary.name}",
                                   members=(single,) + (secondary,) * (instances - 1),
                                   description=f"{instances} instances: -M AFL++'s default, -S {secondary.description}")


@dataclass(frozen=True)
class TrialPlan:
    """One trial the race wants run: which contestant, in which rung, for how long, with which afl-fuzz
    seed. race/stage.py turns it into the one afl-fuzz trial type, autotune.trials.TrialSpec."""

    contestant: str
    rung: int
    repeat: int
    seconds: int
    fuzz_seed: int  # afl-fuzz -s: the same for every contestant's repeat i of a rung


@dataclass(frozen=True)
class TrialFigures:
    """What one trial gave: yardstick coverage of everything afl-fuzz kept, and its own figures."""

    contestant: str
    rung: int
    repeat: int
    seconds: int
    coverage: int
    execs_per_s: float
    queue: int
    stability: str | None = None
    afl_version: str | None = None  # fuzzer_stats' afl_version (++4.04c)
    bugs: dict[str, float | None] | None = None  # judged by bugs: time to trigger per bug reached (None: never)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TrialFigures":
        return cls(contestant=str(d["contestant"]), rung=int(d["rung"]), repeat=int(d["repeat"]),
                   seconds=int(d["seconds"]), coverage=int(d["coverage"]), execs_per_s=float(d["execs_per_s"]),
                   queue=int(d["queue"]), stability=None if d.get("stability") is None else str(d["stability"]),
                   afl_version=None if d.get("afl_version") is None else str(d["afl_version"]),
                   bugs=None if d.get("bugs") is None else {str(k): None if v is None else float(v)
                                                            for k, v in d["bugs"].items()})


RunTrials = Callable[[Sequence[TrialPlan]], Sequence[TrialFigures]]


@dataclass(frozen=True)
class RungPlan:
    seconds: int  # trial length
    candidates: int  # non-default contestants entering the rung
    repeats: int = DEFAULT_REPEATS  # trials per contestant (the last rung: DEFAULT_FINAL_REPEATS)

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": self.seconds, "candidates": self.candidates, "repeats": self.repeats}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, repeats: int) -> "RungPlan":
        return cls(seconds=int(d["seconds"]), candidates=int(d["candidates"]), repeats=int(d.get("repeats", repeats)))


@dataclass(frozen=True)
class Rung:
    index: int
    seconds: int
    entered: tuple[str, ...]  # non-default contestants, best first by the previous rung
    trials: tuple[TrialFigures, ...]
    ranking: tuple[str, ...]  # non-default contestants, best first by this rung
    kept: tuple[str, ...]  # those entering the next rung

    def coverage(self, name: str) -> list[int]:
        return [t.coverage for t in self.trials if t.contestant == name]

    def execs_per_s(self, name: str) -> list[float]:
        return [t.execs_per_s for t in self.trials if t.contestant == name]

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "seconds": self.seconds, "entered": list(self.entered),
                "trials": [t.to_dict() for t in self.trials], "ranking": list(self.ranking), "kept": list(self.kept)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Rung":
        return cls(index=int(d["index"]), seconds=int(d["seconds"]), entered=tuple(d["entered"]),
                   trials=tuple(TrialFigures.from_dict(t) for t in d["trials"]), ranking=tuple(d["ranking"]),
                   kept=tuple(d["kept"]))


@dataclass(frozen=True)
class Decision:
    recommended: str
    is_default: bool
    winner: str | None  # the best non-default contestant of the last rung run
    reason: str
    trial_s: int | None  # the trial length the decision compares at
    winner_median: float | None
    default_median: float | None
    p_value: float | None  # exact one-sided, winner > default: signed-rank on the pairs (decision_test)
    a12: float | None  # Vargha-Delaney, winner vs default
    alpha: float
    objective: str = "edges"  # edges, or bugs (autotune.bugs.race: medians are bugs triggered per trial)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Decision":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


@dataclass(frozen=True)
class RaceResult:
    contestants: tuple[Contestant, ...]
    plan: tuple[RungPlan, ...]
    rungs: tuple[Rung, ...]
    decision: Decision
    budget_s: float
    jobs: int
    repeats: int
    eta: int
    seed: int
    stopped_early: bool
    elapsed_s: float
    search: dict | None = None  # the search's history (autotune.race.search); None for a fixed list
    schema_version: int = field(default=SCHEMA_VERSION)

    def contestant(self, name: str) -> Contestant:
        return next(c for c in self.contestants if c.name == name)

    @property
    def default(self) -> Contestant:
        return next(c for c in self.contestants if c.is_default)

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "contestants": [c.to_race_dict() for c in self.contestants],
                "plan": [p.to_dict() for p in self.plan],
                "rungs": [r.to_dict() for r in self.rungs], "decision": self.decision.to_dict(),
                "budget_s": self.budget_s, "jobs": self.jobs, "repeats": self.repeats, "eta": self.eta,
                "seed": self.seed, "stopped_early": self.stopped_early, "elapsed_s": self.elapsed_s,
                "search": self.search}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RaceResult":
        if d.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"race result schema_version {d.get('schema_version')!r}, expected {SCHEMA_VERSION}")
        return cls(contestants=tuple(Configuration.from_dict(c) for c in d["contestants"]),
                   plan=tuple(RungPlan.from_dict(p, repeats=int(d["repeats"])) for p in d["plan"]),
                   rungs=tuple(Rung.from_dict(r) for r in d["rungs"]), decision=Decision.from_dict(d["decision"]),
                   budget_s=float(d["budget_s"]), jobs=int(d["jobs"]), repeats=int(d["repeats"]), eta=int(d["eta"]),
                   seed=int(d["seed"]), stopped_early=bool(d["stopped_early"]), elapsed_s=float(d["elapsed_s"]),
                   search=d.get("search"))


def _entering(candidates: int, eta: int) -> list[int]:
    """Non-default contestants entering each rung: n, ceil(n/eta), ... down to 1."""
    out = [candidates]
    while out[-1] > 1:
        out.append(math.ceil(out[-1] / eta))
    return out


def _waves(trials: int, jobs: int) -> int:
    return math.ceil(trials / jobs)


def rung_repeats(*, rungs: int, repeats: int, final_repeats: int) -> list[int]:
    """Trials per contestant of each rung: ``repeats``, the last rung at least ``final_repeats``."""
    return [repeats] * (rungs - 1) + [max(repeats, final_repeats)]


def first_trial_s(*, waves: Sequence[int], eta: int, budget_s: float, overhead_s: float,
                  min_trial_s: int) -> tuple[int, float | None]:
    """(t0, None): the largest whole first-rung trial length whose rungs (``waves[r]`` waves of
    t0 * eta^r seconds plus ``overhead_s`` each) fit ``budget_s``; (t0, the budget needed) when t0
    falls short of ``min_trial_s``."""
    fixed = sum(w * overhead_s for w in waves)
    per_t0 = sum(w * eta ** r for r, w in enumerate(waves))
    t0 = math.floor((budget_s - fixed) / per_t0)
    return t0, (fixed + per_t0 * min_trial_s if t0 < min_trial_s else None)


def rung_waves(*, sizes: Sequence[int], budget: RaceBudget) -> tuple[list[int], list[int], list[int]]:
    """(contestants entering each rung besides the default, trials per contestant each rung, waves of
    ``budget.jobs`` trials each rung) when the first rung's ``sum(sizes)`` contestants run in batches of
    ``sizes``, the default's trials with the first batch."""
    jobs = budget.jobs
    entering = _entering(sum(sizes), budget.eta)
    reps = rung_repeats(rungs=len(entering), repeats=budget.repeats, final_repeats=budget.final_repeats)
    waves = [_waves((sizes[0] + 1) * reps[0], jobs) + sum(_waves(b * reps[0], jobs) for b in sizes[1:])]
    waves += [_waves((m + 1) * r, jobs) for m, r in zip(entering[1:], reps[1:])]
    return entering, reps, waves


def plan_rungs(*, sizes: Sequence[int], budget: RaceBudget, what: str, fix: str = "") -> tuple[RungPlan, ...]:
    """The rungs of a race whose first rung runs in batches of ``sizes`` (:func:`rung_waves`): t0 the
    largest whole second that fits ``budget.budget_s``. Too small a budget for trials of
    ``budget.min_trial_s`` is an error naming the budget needed; ``what`` is what it cannot do, ``fix``
    adds to the fix."""
    b = budget
    entering, reps, waves = rung_waves(sizes=sizes, budget=b)
    t0, need = first_trial_s(waves=waves, eta=b.eta, budget_s=b.budget_s, overhead_s=b.overhead_s,
                             min_trial_s=b.min_trial_s)
    if need is not None:
        raise AutotuneError(f"a budget of {b.budget_s:.0f} s cannot {what} ({b.repeats} trials each, {reps[-1]} in "
                            f"the deciding rung, {b.jobs} at a time) with trials of at least {b.min_trial_s} s",
                            fix=f"raise --budget to at least {math.ceil(need)} s{fix}")
    return tuple(RungPlan(seconds=t0 * b.eta ** r, candidates=m, repeats=n)
                 for r, (m, n) in enumerate(zip(entering, reps)))


def plan_race(*, candidates: int, budget: RaceBudget) -> tuple[RungPlan, ...]:
    """Trial lengths for each rung so the race fits ``budget.budget_s`` of wall time on ``budget.jobs`` cores.

    Rung r runs (entering_r + 1 default) x repeats_r trials of t0 * eta^r seconds, ``jobs`` at a
    time (repeats_r: ``repeats``, the last rung at least ``final_repeats``); t0 is the largest whole
    number of seconds that fits. Too small a budget for trials of ``min_trial_s`` is an error that
    names the budget needed.
    """
    if candidates < 1:
        raise AutotuneError("the race has no candidate besides the default", fix="give at least one candidate")
    check_budget_shape(budget)
    return plan_rungs(sizes=[candidates], budget=budget,
                      what=f"race {candidates} candidate{'s' if candidates != 1 else ''} and the default",
                      fix=", or race fewer candidates or repeats")


def race_budget_for(*, candidates: int, budget: RaceBudget) -> int:
    """The smallest budget (whole seconds) at which :func:`plan_race` races ``candidates`` candidates and
    the default with ``budget``'s rungs (its ``budget_s`` aside): first-rung trials of ``min_trial_s``."""
    *_, waves = rung_waves(sizes=[candidates], budget=budget)
    need = first_trial_s(waves=waves, eta=budget.eta, budget_s=0.0, overhead_s=budget.overhead_s,
                         min_trial_s=budget.min_trial_s)[1]
    return math.ceil(need or 0.0)


def check_budget_shape(budget: RaceBudget, *, batch: int = 1) -> None:
    """Refuse rungs that cannot be planned: no trial at a time (``jobs`` unset counts as none), no
    repeat, an eta below 2 (or a search batch below 1)."""
    jobs, repeats, eta = budget.jobs, budget.repeats, budget.eta
    if jobs is None or jobs < 1 or repeats < 1 or eta < 2 or batch < 1:
        raise AutotuneError(f"bad race settings: jobs={jobs}, repeats={repeats}, eta={eta}",
                            fix="use jobs >= 1, repeats >= 1 and eta >= 2")


P = TypeVar("P")


def most_that_fit(*, top: int, plan: Callable[[int, int], P], min_trial_s: int,
                  longer_first: bool = False) -> tuple[int, P]:
    """(n, ``plan(n, shortest)``) for the most candidates n, from ``top`` down to 1, whose plan fits the
    budget (``plan`` raises AutotuneError when it does not) with first-rung trials of at least
    ``shortest`` = ``min_trial_s``; with ``longer_first``, first of at least twice ``min_trial_s`` when
    two or more fit so (short trials are noisy: more candidates are not worth trials that say little).
    When not even one fits, the error of one at ``min_trial_s``. The one budget-fitting loop of both
    strategies: the list's (race/stage.py fit_to_budget) and the search's (race/search.py fit_search)."""
    if top < 1:
        return top, plan(top, min_trial_s)  # raises: nothing to race
    last_error: AutotuneError | None = None
    for shortest in ((2 * min_trial_s,) if longer_first else ()) + (min_trial_s,):
        for n in range(top, 0, -1):
            if shortest > min_trial_s and n < 2:
                break
            try:
                return n, plan(n, shortest)
            except AutotuneError as exc:
                if shortest == min_trial_s:
                    last_error = exc
    assert last_error is not None
    raise last_error


def rank_by_figures(rung_trials: Sequence[TrialFigures], names: Sequence[str], *,
                    objective: str = "edges") -> list[str]:
    """``names`` best first by their trials in ``rung_trials``: median yardstick coverage (judged by
    bugs: autotune.bugs.race's rank key first), then median execs/s, then name."""
    from autotune.bugs import race as by_bugs  # lazy: `autotune --help` loads race.core

    bugs = by_bugs.rung_bugs([t.bugs or {} for t in rung_trials]) if objective == "bugs" else ()

    def score(name: str) -> tuple:
        ts = [t for t in rung_trials if t.contestant == name]
        cov = [t.coverage for t in ts]
        eps = [t.execs_per_s for t in ts]
        first = by_bugs.rank_key([t.bugs or {} for t in ts], bugs, float(ts[0].seconds)) if objective == "bugs" else ()
        return (*first, -statistics.median(cov), -statistics.median(eps), name)

    return sorted(names, key=score)


@dataclass(frozen=True)
class Rule:
    """The decision rule (module docstring): when the race stops early, and what it recommends from its
    last rung. ``objective``: ``edges`` (the yardstick's) or ``bugs`` (autotune.bugs.race)."""

    alpha: float = DEFAULT_ALPHA
    objective: str = "edges"
    seed: int = 0  # the race's: a sampled permutation test draws with it

    def __post_init__(self) -> None:
        from autotune.bugs.race import OBJECTIVES  # lazy: `autotune --help` loads race.core

        if self.objective not in OBJECTIVES:
            raise AutotuneError(f"unknown race objective {self.objective!r}",
                                fix=f"use one of: {', '.join(OBJECTIVES)}")

    def stops_early(self, rung: Rung, *, default: str) -> bool:
        """Every candidate of ``rung`` covered significantly less than the default (by edges only)."""
        return self.objective == "edges" and all(
            mann_whitney(rung.coverage(default), rung.coverage(name), alternative="greater").p <= self.alpha
            for name in rung.ranking)

    def decide(self, last: Rung, *, default: str, stopped_early: bool) -> Decision:
        if self.objective == "bugs":
            return _decide_by_bugs(last, default=default, alpha=self.alpha, seed=self.seed)
        return _decide(last, default=default, alpha=self.alpha, stopped_early=stopped_early)


def decision_test(rung: Rung, *, candidate: str, default: str, alpha: float) -> tuple[float, str]:
    """(one-sided p that ``candidate`` covers more than ``default`` in ``rung``, the test's name).

    Repeat i of every contestant ran with the same afl-fuzz seed, and the seed moves both alike (on
    lz4 one seed gave both ~1.7k execs/s and ~600 edges in 28 s, another ~30k and ~1,400): so the
    test is the exact Wilcoxon signed-rank test on the paired differences when there are pairs enough
    for it to reach ``alpha`` at all (2^-n <= alpha: 5 pairs at 0.05), chosen by the count of pairs
    alone, never by the data; else (fewer pairs, or unpaired trials) the exact Mann-Whitney test."""
    a = {t.repeat: t.coverage for t in rung.trials if t.contestant == candidate}
    b = {t.repeat: t.coverage for t in rung.trials if t.contestant == default}
    if a and a.keys() == b.keys() and 2.0 ** -len(a) <= alpha:
        return signed_rank([a[k] - b[k] for k in sorted(a)], alternative="greater"), f"signed-rank, {len(a)} pairs"
    return mann_whitney(list(a.values()), list(b.values()), alternative="greater").p, "Mann-Whitney"


def _decide(last: Rung, *, default: str, alpha: float, stopped_early: bool) -> Decision:
    winner = last.ranking[0]
    win, base = last.coverage(winner), last.coverage(default)
    w_med, d_med = statistics.median(win), statistics.median(base)
    p, test = decision_test(last, candidate=winner, default=default, alpha=alpha)
    effect = a12(win, base)
    common = dict(winner=winner, trial_s=last.seconds, winner_median=w_med, default_median=d_med,
                  p_value=round(p, 6), a12=round(effect, 4), alpha=alpha)
    if stopped_early:
        return Decision(recommended=default, is_default=True, **common,
                        reason=f"after {last.seconds} s trials every candidate covered significantly less than "
                               f"the default (exact one-sided Mann-Whitney p <= {alpha}): the race stopped early")
    if w_med > d_med and p <= alpha:
        return Decision(recommended=winner, is_default=False, **common,
                        reason=f"{winner} covered more than the default in {last.seconds} s trials: median "
                               f"{w_med:g} vs {d_med:g} edges, {test} p = {p:.3g} <= {alpha}, A12 = {effect:.2f}")
    why = ("covered no more than" if w_med <= d_med else
           f"was ahead but not significantly ({test} p = {p:.3g} > {alpha}) of")
    return Decision(recommended=default, is_default=True, **common,
                    reason=f"the best candidate, {winner}, {why} the default in {last.seconds} s trials "
                           f"(median {w_med:g} vs {d_med:g} edges, A12 = {effect:.2f}): the default is recommended")


def _decide_by_bugs(last: Rung, *, default: str, alpha: float, seed: int) -> Decision:
    """The last rung's decision by bugs (autotune.bugs.race.decide); the medians are bugs triggered per trial."""
    from autotune.bugs import race as by_bugs  # lazy: `autotune --help` loads race.core

    missing = [t for t in last.trials if t.bugs is None]
    if missing:
        raise AutotuneError(f"{len(missing)} trials of the last rung have no bug figures to judge by",
                            fix="race by bugs with a target built with known-bug canaries (--judge bugs)")
    winner = last.ranking[0]
    cand = {t.repeat: t.bugs or {} for t in last.trials if t.contestant == winner}
    base = {t.repeat: t.bugs or {} for t in last.trials if t.contestant == default}
    ok, p, reason = by_bugs.decide(winner=winner, candidate=cand, default=base, horizon_s=float(last.seconds),
                                   alpha=alpha, seed=seed)
    wc = [float(by_bugs.triggered_count(t)) for t in cand.values()]
    dc = [float(by_bugs.triggered_count(t)) for t in base.values()]
    return Decision(recommended=winner if ok else default, is_default=not ok, winner=winner, reason=reason,
                    trial_s=last.seconds, winner_median=statistics.median(wc), default_median=statistics.median(dc),
                    p_value=round(p, 6), a12=round(a12(wc, dc), 4), alpha=alpha, objective="bugs")
