"""The one successive-halving loop both strategies race in: a proposer says what runs, a rule decides.

Split as Optuna splits a study into a sampler and a pruner: the **proposer** (:class:`Proposer`) names
the contestants that enter the first rung, learns from every rung's trials and ranks a rung's
contestants (a fixed list, :class:`FixedList`, ranks by the trials' figures; the search's Gaussian
process, autotune.race.search, by its posterior); the **rule** (autotune.race.core.Rule) stops the race
early and makes the decision. The scheduler (:func:`halve`) owns what is common to both: the rungs of
the plan, AFL++'s default in every rung, paired afl-fuzz seeds, the interleaved order, the promotion of
the best 1/eta.

The first rung runs in batches (``batches``: the list strategy one, the search one per round of
proposals); the first batch runs with the default's trials, which pair every batch of the rung.
"""

from __future__ import annotations

import time
from typing import Callable, Protocol, Sequence

from autotune.errors import AutotuneError
from autotune.race.core import (Contestant, RaceResult, Rule, Rung, RungPlan, RunTrials, TrialFigures, TrialPlan,
                                plan_race, rank_by_figures)
from autotune.race.options import RaceBudget, RaceProgress, RaceSettings


class Proposer(Protocol):
    """What the scheduler asks of a strategy (the sampler)."""

    def propose(self, n: int) -> list[str]:
        """The names of up to ``n`` more contestants for the first rung, ready to run; [] when none is left."""

    def observe(self, *, rung: int, seconds: int, names: Sequence[str], figures: Sequence[TrialFigures],
                base: Sequence[TrialFigures]) -> None:
        """Learn from ``names``' trials ``figures`` in ``rung``, paired with the default's trials ``base``."""

    def rank(self, *, rung: int, names: Sequence[str], figures: Sequence[TrialFigures]) -> list[str]:
        """``names`` best first after ``rung``."""

    def contestants(self) -> tuple[Contestant, ...]:
        """Every contestant that ran, as the race document lists them."""

    def history(self) -> dict | None:
        """The strategy's own record for the race document (RaceResult.search)."""


class FixedList:
    """The list strategy's proposer: its candidates in the order given, ranked by their trials' figures."""

    def __init__(self, contestants: Sequence[Contestant], *, objective: str = "edges"):
        self._all = tuple(contestants)
        self._queue = [c.name for c in contestants if not c.is_default]
        self.objective = objective

    def propose(self, n: int) -> list[str]:
        out, self._queue = self._queue[:n], self._queue[n:]
        return out

    def observe(self, **_) -> None:
        pass

    def rank(self, *, rung: int, names: Sequence[str], figures: Sequence[TrialFigures]) -> list[str]:
        return rank_by_figures(figures, names, objective=self.objective)

    def contestants(self) -> tuple[Contestant, ...]:
        return self._all

    def history(self) -> None:
        return None


def fuzz_seed(seed: int, rung: int, repeat: int) -> int:
    """afl-fuzz -s for repeat ``repeat`` of rung ``rung``: distinct per (rung, repeat), shared by the
    rung's contestants."""
    return (seed * 1_000_003 + rung * 1009 + repeat) % (1 << 31)


def _rotate(names: Sequence[str], k: int) -> list[str]:
    k %= len(names)
    return list(names[k:]) + list(names[:k])


def _check_figures(specs: Sequence[TrialPlan], figures: Sequence[TrialFigures]) -> None:
    want = sorted((s.contestant, s.repeat) for s in specs)
    got = sorted((f.contestant, f.repeat) for f in figures)
    if want != got:
        raise AutotuneError(f"the trial backend returned {len(figures)} results for {len(specs)} trials",
                            fix="report this as a bug in autotune: every trial must give one result")


def _trials(run_trials: RunTrials, names: Sequence[str], *, rung: int, step: RungPlan,
            seed: int) -> tuple[TrialFigures, ...]:
    """``step.repeats`` trials of each of ``names``, repeat i of all with one afl-fuzz seed, interleaved (the
    order rotates from repeat to repeat, so host drift hits all alike)."""
    specs = [TrialPlan(contestant=n, rung=rung, repeat=rep, seconds=step.seconds, fuzz_seed=fuzz_seed(seed, rung, rep))
             for rep in range(step.repeats) for n in _rotate(names, rep)]
    figures = tuple(run_trials(specs))
    _check_figures(specs, figures)
    return figures


def _first_rung(proposer: Proposer, *, step: RungPlan, batches: Sequence[int], default: str,
                run_trials: RunTrials, seed: int) -> tuple[list[str], list[TrialFigures]]:
    """(the contestants that entered the first rung, its trials): batch by batch, the default's trials
    with the first."""
    entered: list[str] = []
    figures: list[TrialFigures] = []
    base: list[TrialFigures] = []
    for b, size in enumerate(batches):
        names = proposer.propose(size)
        if not names:
            break
        got = _trials(run_trials, names + ([default] if b == 0 else []), rung=0, step=step, seed=seed)
        if b == 0:
            base = [t for t in got if t.contestant == default]
        proposer.observe(rung=0, seconds=step.seconds, names=names, figures=got, base=base)
        entered += names
        figures += got
    return entered, figures


def halve(*, proposer: Proposer, rule: Rule, plan: Sequence[RungPlan], batches: Sequence[int], default: str,
          run_trials: RunTrials, budget: RaceBudget, on_rung: Callable[[Rung], None] | None = None) -> RaceResult:
    """Run ``plan``'s rungs: the first with what ``proposer`` proposes (in ``batches``), each later one with
    the best of the rung before; stop early or decide by ``rule`` (whose seed seeds afl-fuzz's -s).
    ``budget``: what the plan was made for, as the result records it."""
    seed = rule.seed
    t_start = time.monotonic()
    rungs: list[Rung] = []
    stopped_early = False
    for index, step in enumerate(plan):
        if index == 0:
            entered, figures = _first_rung(proposer, step=step, batches=batches, default=default,
                                           run_trials=run_trials, seed=seed)
        else:
            entered = list(rungs[-1].kept[:step.candidates])
            figures = list(_trials(run_trials, (*entered, default), rung=index, step=step, seed=seed))
            proposer.observe(rung=index, seconds=step.seconds, names=entered, figures=figures,
                             base=[t for t in figures if t.contestant == default])
        ranking = tuple(proposer.rank(rung=index, names=entered, figures=figures))
        kept = ranking[:plan[index + 1].candidates] if index + 1 < len(plan) else ranking[:1]
        rungs.append(Rung(index=index, seconds=step.seconds, entered=tuple(entered), trials=tuple(figures),
                          ranking=ranking, kept=kept))
        if on_rung is not None:
            on_rung(rungs[-1])
        if 0 < index < len(plan) - 1 and rule.stops_early(rungs[-1], default=default):
            stopped_early = True
            break
    decision = rule.decide(rungs[-1], default=default, stopped_early=stopped_early)
    return RaceResult(contestants=proposer.contestants(), plan=tuple(plan), rungs=tuple(rungs), decision=decision,
                      budget_s=float(budget.budget_s), jobs=budget.jobs, repeats=budget.repeats, eta=budget.eta,
                      seed=seed, stopped_early=stopped_early, elapsed_s=round(time.monotonic() - t_start, 3),
                      search=proposer.history())


def run_race(*, contestants: Sequence[Contestant], run_trials: RunTrials, settings: RaceSettings,
             progress: RaceProgress = RaceProgress(), plan: Sequence[RungPlan] | None = None) -> RaceResult:
    """Race ``contestants`` (exactly one of them the default) and decide what to recommend, by edges
    or (``settings.judge`` ``bugs``, the trials' figures carrying their time to trigger) by bugs, at
    ``settings.alpha``, afl-fuzz seeded by ``settings.seed``; ``progress.on_rung`` hears each rung.
    ``plan``: the rungs when already planned (race_target's fit_to_budget), else plan_race's for
    ``settings.budget`` (its ``jobs`` set)."""
    rule = Rule(alpha=settings.alpha, objective=settings.judge, seed=settings.seed)
    defaults = [c for c in contestants if c.is_default]
    if len(defaults) != 1:
        raise AutotuneError(f"the race needs exactly one default contestant, got {len(defaults)}",
                            fix="mark AFL++'s default configuration (and only it) as the default")
    names = [c.name for c in contestants]
    if len(set(names)) != len(names):
        raise AutotuneError("two contestants share a name", fix="give every configuration its own name")
    if plan is None:
        plan = plan_race(candidates=len(names) - 1, budget=settings.budget)
    return halve(proposer=FixedList(contestants, objective=settings.judge), rule=rule, plan=plan,
                 batches=(plan[0].candidates,), default=defaults[0].name, run_trials=run_trials,
                 budget=settings.budget, on_rung=progress.on_rung)
