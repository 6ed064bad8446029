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
  one-sided p <= alpha (autotune.bugs.survival's tests); else the default, with the reason.
- **Too small a budget**: when no trial of the last rung triggered any bug, bugs cannot separate
  anything at that trial length; the race says so and recommends the default (raise --budget, or
  judge by edges).
"""

from __future__ import annotations

import statistics
from typing import Mapping, Sequence

from autotune.bugs.survival import censored, logrank, stouffer

OBJECTIVES = ("edges", "bugs")  # autotune race --judge
# race.md's statement of the objective and the decision rule (the module's doc, in one paragraph)
RULE = ("Objective: trigger the target's known bugs sooner; a trial's figure per bug is its time to trigger, "
        "censored at the trial's length. Ranking of a rung: most bugs triggered per trial (median), then the "
        "lowest mean time to trigger over the rung's bugs (never = the trial's length), then median edges. "
        "Decision in the last rung: the best candidate is recommended when the Stouffer-combined log-rank test "
        "of time to trigger against AFL++'s default, over the bugs either side triggered, says sooner with a "
        "one-sided p <= alpha; else the default. When no trial of the last rung triggered a bug, the budget is "
        "too small for bugs to separate anything, and the race says so.")
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


def _durations(trials: Sequence[BugTimes], bug: str, horizon_s: float) -> tuple[list[float], list[bool]]:
    """Per trial the time to trigger ``bug``, censored at the horizon (a trigger after it is not one)."""
    times = [censored(t.get(bug), horizon_s) for t in trials]
    return [float(horizon_s) if v is None else v for v in times], [v is not None for v in times]


def combined_sooner(candidate: Sequence[BugTimes], default: Sequence[BugTimes], horizon_s: float) -> tuple[float, float, int]:
    """(Stouffer's z of the per-bug log-rank tests, candidate against default, > 0: sooner; its
    one-sided p; the bugs either side triggered)."""
    from scipy import stats

    zs = []
    for b in rung_bugs([*candidate, *default]):
        _, z, _, informative = logrank(_durations(candidate, b, horizon_s), _durations(default, b, horizon_s))
        if informative:
            zs.append(z)
    z, _ = stouffer(zs)
    return z, float(stats.norm.sf(z)) if zs else 1.0, len(zs)


def decide(*, winner: str, candidate: Sequence[BugTimes], default: Sequence[BugTimes], horizon_s: float,
           alpha: float) -> tuple[bool, float, str]:
    """(recommend the winner?, one-sided p, the reason) by the rule in the module's doc."""
    if not any(triggered_count(t) for t in (*candidate, *default)):
        return False, 1.0, (f"no trial of the last rung ({horizon_s:g} s trials) triggered any known bug: the budget "
                            "is too small for bugs to separate anything; the default is recommended (raise --budget "
                            "for longer trials, or judge by edges)")
    z, p, k = combined_sooner(candidate, default, horizon_s)
    bugs = rung_bugs([*candidate, *default])
    w_t, d_t = mean_capped_time(candidate, bugs, horizon_s), mean_capped_time(default, bugs, horizon_s)
    figures = (f"mean time to trigger over {len(bugs)} bugs {w_t:.1f} s vs {d_t:.1f} s (never = {horizon_s:g} s); "
               f"combined log-rank over {k} bugs z = {z:+.2f}, one-sided p = {p:.3g}")
    if z > 0 and p <= alpha:
        return True, p, f"{winner} triggered the known bugs sooner than the default in {horizon_s:g} s trials: {figures} <= {alpha}"
    return False, p, (f"the best candidate by bugs, {winner}, did not trigger them significantly sooner than the default "
                      f"in {horizon_s:g} s trials ({figures}, alpha {alpha}): the default is recommended")
