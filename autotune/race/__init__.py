"""Racing configurations in the real afl-fuzz: successive halving with AFL++'s default always in
the race, and a stated decision rule for recommending anything other than the default.

    from autotune.race import Contestant, plan_race, run_race
    result = run_race(contestants=[...], run_trials=..., budget_s=600, jobs=2, seed=0)
"""

from autotune.race.core import Contestant, Decision, RaceResult, Rung, TrialFigures, TrialPlan, plan_race
from autotune.race.halving import run_race

__all__ = ["Contestant", "Decision", "RaceResult", "Rung", "TrialFigures", "TrialPlan", "plan_race", "run_race"]
