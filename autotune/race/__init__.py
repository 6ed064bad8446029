"""Racing configurations in the real afl-fuzz: successive halving with AFL++'s default always in
the race, and a stated decision rule for recommending anything other than the default.

    from autotune.race import Contestant, RaceBudget, RaceSettings, plan_race, run_race
    result = run_race(contestants=[...], run_trials=...,
                      settings=RaceSettings(seed=0, budget=RaceBudget(budget_s=600, jobs=2)))
"""

from autotune.race.core import Contestant, Decision, RaceResult, Rung, TrialFigures, TrialPlan, plan_race
from autotune.race.halving import run_race
from autotune.race.options import RaceBudget, RaceInputs, RaceProgress, RaceSettings

__all__ = ["Contestant", "Decision", "RaceBudget", "RaceInputs", "RaceProgress", "RaceResult", "RaceSettings", "Rung",
           "TrialFigures", "TrialPlan", "plan_race", "run_race"]
