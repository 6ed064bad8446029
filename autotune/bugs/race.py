"""The race judged by bugs (`autotune race --judge bugs`, a target with known-bug canaries): the
objective, the ranking of a rung and the decision rule, as small pure functions of each trial's
time to trigger per bug (autotune.race.core calls them; TrialFigures.bugs carries the times).

- **Objective**: trigger the target's known bugs sooner. A trial's figure per bug is its time to
  trigger, censored at the trial's length (every trial of a rung runs the whole length, so the
  Kaplan-Meier curve is the empirical one and its RMST is the mean of min(T, length)).
- **Ranking** of a rung: most bugs triggered per trial (median), then the lowest mean over the
  rung's bugs of the RMST of time to trigger, then median yardstick edges, then name.
- **Decision** in the last rung: the best candidate is recommended when, against AFL++'s default,
  the Stouffer-combined log-rank z over the bugs either side triggered is positive (sooner) with a
  one-sided p <= alpha; else the default, with the reason. The p is a **permutation test of whole
  trials** (autotune.bugs.survival.permutation_test), not the normal tail of Stouffer's z: the bugs
  of one campaign are found together, not independently, and on the libxml2 bug study's default
  trials the normal tail called one half of a 5-vs-5 split sooner in 11.5 % of the splits at a
  nominal 5 % (benchmarks/results/bugs-judge-rule-2026-11-28.md); moving whole trials keeps that
  dependence, so the test holds its level whatever it is.
- **Too small a budget**: when no trial of the last rung triggered any bug, bugs cannot separate
  anything at that trial length; the race says so and recommends the default (raise --budget, or
  judge by edges). So it does when so few of the deciding pairs differ (a pair where both trials
  triggered the same bugs at the same times is no evidence either way) that no p <= alpha was
  possible (k differing pairs allow no one-sided p below 2^-k).
"""

from __future__ import annotations

import statistics
from typing import Mapping, Sequence

from autotune.bugs.survival import permutation_test

OBJECTIVES = ("edges", "bugs")  # autotune race --judge
# race.md's statement of the objective and the decision rule (the module's doc, in one paragraph)
RULE = ("Objective: trigger the target's known bugs sooner; a trial's figure per bug is its time to trigger, "
        "censored at the trial's length. Ranking of a rung: most bugs triggered per trial (median), then the "
        "lowest mean time to trigger over the rung's bugs (never = the trial's length), then median edges. "
        "Decision in the last rung: the best candidate is recommended when the Stouffer-combined log-rank z "
        "of time to trigger against AFL++'s default, over the bugs either side triggered, says sooner with a "
        "one-sided p <= alpha, the p from a permutation of whole trials (every swap of the two labels within "
        "the seed-paired trials), which holds its level however a campaign's bugs depend on each other; "
        "else the default. When no trial of the last rung triggered a bug, or too few of its seed-paired trials "
        "differ for any p <= alpha to be possible, the budget is too small for bugs to separate anything, and the "
        "race says so.")
BugTimes = Mapping[str, "float | None"]  # one trial: bug -> time to trigger (None: never)


def rung_bugs(trials: Sequence[BugTimes]) -> tuple[str, ...]:
    """Every bug any of the trials reached (a key of its times), by name."""
    return tuple(sorted({b for t in trials for b in t}))


def triggered_count(t: BugTimes) -> int:
    return sum(1 for v in t.values() if v is not None)


def mean_capped_time(trials: Sequence[BugTimes], bugs: Sequence[str], horizon_s: float) -> float:
    """Mean over ``bugs`` of the RMST of time to trigger (the mean of min(T, horizon) over the trials:
    every trial is censored at the horizon only); the horizon when there are no bugs."""
    if not bugs or not trials:
        return float(horizon_s)
    per_bug = [statistics.fmean(min(float(t[b]), horizon_s) if t.get(b) is not None else float(horizon_s)
                                for t in trials) for b in bugs]
    return statistics.fmean(per_bug)


def rank_key(trials: Sequence[BugTimes], bugs: Sequence[str], horizon_s: float) -> tuple[float, float]:
    """(minus median bugs triggered per trial, mean capped time): sort ascending, best first."""
    counts = [triggered_count(t) for t in trials] or [0]
    return (-statistics.median(counts), mean_capped_time(trials, bugs, horizon_s))


def decide(*, winner: str, candidate: Mapping[int, BugTimes], default: Mapping[int, BugTimes], horizon_s: float,
           alpha: float, seed: int = 0) -> tuple[bool, float, str]:
    """(recommend the winner?, one-sided p, the reason) by the rule in the module's doc; the trials
    keyed by repeat (the same repeat: the same afl-fuzz seed)."""
    if not any(triggered_count(t) for t in (*candidate.values(), *default.values())):
        return False, 1.0, (f"no trial of the last rung ({horizon_s:g} s trials) triggered any known bug: the budget "
                            "is too small for bugs to separate anything; the default is recommended (raise --budget "
                            "for longer trials, or judge by edges)")
    perm = permutation_test(candidate, default, horizon_s, alternative="greater", seed=seed)
    z, p, k, how = perm.z, perm.p, perm.bugs, perm.how
    bugs = rung_bugs([*candidate.values(), *default.values()])
    w_t = mean_capped_time(list(candidate.values()), bugs, horizon_s)
    d_t = mean_capped_time(list(default.values()), bugs, horizon_s)
    figures = (f"mean time to trigger over {len(bugs)} bugs {w_t:.1f} s vs {d_t:.1f} s (never = {horizon_s:g} s); "
               f"combined log-rank over {k} bugs z = {z:+.2f}, one-sided permutation p = {p:.3g} ({how})")
    if z > 0 and p <= alpha:
        return True, p, f"{winner} triggered the known bugs sooner than the default in {horizon_s:g} s trials: {figures} <= {alpha}"
    few = ""
    if perm.differing_pairs is not None and perm.least_p > alpha:
        few = (f"; only {perm.differing_pairs} of the {len(candidate)} seed-paired trials differ in the bugs they "
               f"triggered and when, so no p below {perm.least_p:.3g} was possible: the budget is too small for bugs "
               "to separate these configurations (raise --budget for longer trials, or --final-repeats for more pairs)")
    return False, p, (f"the best candidate by bugs, {winner}, did not trigger them significantly sooner than the default "
                      f"in {horizon_s:g} s trials ({figures}, alpha {alpha}): the default is recommended{few}")
