"""The race's options as typed values, in place of long parameter lists (the CLI builds them, the
pipeline passes them on, race/* reads them):

- :class:`RaceBudget`: the wall-clock budget and the rungs it buys (trials at once, repeats, eta,
  the shortest trial, the per-trial overhead, the deciding rung's repeats);
- :class:`RaceSettings`: what the race decides by (strategy, metrics, judge, alpha, seed, afl-fuzz
  instances per campaign, the collision limit) and its budget;
- :class:`RaceInputs`: what the race starts from (the target, its seeds, the probe's census, tune's
  evaluations, the host) and where it writes;
- :class:`RaceProgress`: who hears the race as it runs.

The race's defaults are written once, here. Standard library and autotune.tune.defaults only, so
pipeline.py and the CLI import this module without loading the race's machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from autotune.tune.defaults import DEFAULT_MAX_COLLISION_RATE

if TYPE_CHECKING:
    from autotune.profile.model import HostProfile
    from autotune.target.recipe import TargetSpec

DEFAULT_ALPHA = 0.05
DEFAULT_ETA = 2
DEFAULT_REPEATS = 3
# The last rung, whose trials decide, runs at least this many per contestant: 5 seed-paired trials
# are the fewest the exact one-sided signed-rank test can decide on at 0.05 (all 5 pairs won,
# p = 1/32; decision_test). Unpaired, 5 against 5 reaches p <= 0.05 with 21 of 25 pairs won (3 against
# 3 needs all 9): a real but noisy lead is found about half again as often (A12 0.8: 48 % against
# 32 % of races, simulated) at the same false-positive rate.
DEFAULT_FINAL_REPEATS = 5
# The race's wall-clock budget when none is given (`autotune run`, `autotune race` and race_target
# alike): on 2 cores it races guard and edge against the default in rungs of 40 s and 80 s, so the
# demo main job (probe, tune, race) ends in about ten minutes; more cores or --budget race more.
DEFAULT_BUDGET_S = 480.0
# A trial shorter than this says little: afl-fuzz spends its first seconds calibrating the seeds.
DEFAULT_MIN_TRIAL_S = 20
# Per-trial cost besides the fuzzing itself: afl-fuzz start-up and calibration, the yardstick
# replay of what it kept. Counted in the plan so the race fits the budget in wall time.
DEFAULT_OVERHEAD_S = 5.0


@dataclass(frozen=True)
class RaceBudget:
    """The race's wall-clock budget and the rungs it buys (autotune.race.core.plan_rungs): afl-fuzz
    trials of ``jobs`` at a time, ``repeats`` trials per contestant and rung (the last, deciding rung
    at least ``final_repeats``), each rung's trials ``eta`` times longer than the one before, the first
    rung's at least ``min_trial_s``, ``overhead_s`` per trial besides the fuzzing.

    ``jobs`` None: a core each, fewer for portfolios (race_target resolves it with :meth:`at_once`
    before anything is planned; the planners need it set)."""

    budget_s: float = DEFAULT_BUDGET_S
    jobs: int | None = None
    repeats: int = DEFAULT_REPEATS
    eta: int = DEFAULT_ETA
    min_trial_s: int = DEFAULT_MIN_TRIAL_S
    overhead_s: float = DEFAULT_OVERHEAD_S
    final_repeats: int = DEFAULT_FINAL_REPEATS

    def at_once(self, jobs: int) -> "RaceBudget":
        """This budget with ``jobs`` trials at a time."""
        return replace(self, jobs=jobs)


@dataclass(frozen=True)
class RaceSettings:
    """What the race decides by: ``strategy`` (``search`` or ``list``), the ``metrics`` it may race
    (None: the strategy's own), the ``judge`` (edges, or bugs: autotune.bugs.race), the decision's
    ``alpha``, the ``seed`` of every random choice (afl-fuzz's -s, the model's), the afl-fuzz
    ``instances`` of the campaign (above 1: portfolios race), the collision limit the maps are sized
    by, and the :class:`RaceBudget`."""

    strategy: str = "search"
    metrics: tuple[str, ...] | None = None
    judge: str = "edges"
    alpha: float = DEFAULT_ALPHA
    seed: int = 0
    instances: int = 1
    max_collision_rate: float = DEFAULT_MAX_COLLISION_RATE
    budget: RaceBudget = RaceBudget()

    def at_once(self, jobs: int) -> "RaceSettings":
        """These settings with the budget's trials ``jobs`` at a time."""
        return replace(self, budget=self.budget.at_once(jobs))


@dataclass(frozen=True)
class RaceInputs:
    """What the race starts from: the target (a recipe ``spec``, built by each contestant's compiler,
    or one ``binary`` every contestant runs), its seeds ``corpus``, the probe's census (``probe_dir``,
    or ``estimated_keys`` per metric directly), tune's replay evaluations (``tune_evaluations``; None:
    those of tune's report in ``tune_dir``, if given), the ``host`` profile (None: this host's) and its
    per-core L2 (``l2_bytes``, None: the host's); ``out_dir`` is where it writes."""

    out_dir: Path
    corpus: Path
    spec: "TargetSpec | None" = None
    binary: Path | None = None
    probe_dir: Path | None = None
    estimated_keys: Mapping[str, float] | None = None
    tune_dir: Path | None = None
    tune_evaluations: Sequence[Any] | None = None
    host: "HostProfile | None" = None
    l2_bytes: int | None = None


@dataclass(frozen=True)
class RaceProgress:
    """Who hears the race as it runs (each None: nobody): ``on_rung`` each rung as it ends, ``on_trial``
    each afl-fuzz trial as it ends, ``on_batch`` the search's best after each batch, ``notice`` one-line
    messages for the user (autotune.cli.board.TrialBoard has all four)."""

    on_rung: Callable[[Any], None] | None = None  # given an autotune.race.core.Rung (core imports this module)
    on_trial: Callable[[Any], None] | None = None
    on_batch: Callable[[dict], None] | None = None
    notice: Callable[[str], None] | None = None
