"""`autotune race`: race AFL++'s default and our runtime's metrics in the real afl-fuzz."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import (InstancesOpt, JobsOpt, JsonOpt, OutDirOpt, ProbeDirOpt, RaceOptions, SeedOpt,
                                  TargetOptions, option_group)
from autotune.configuration import CC_AFL
from autotune.race.options import RaceInputs

HELP = (
    "Race AFL++'s default (afl-clang-fast PCGUARD; our runtime's guard metric without afl-clang-fast) "
    "against configurations of our runtime in the real afl-fuzz, by successive halving: short trials paired "
    "with the default's on the same afl-fuzz seeds for all, longer ones for the better half, until one is "
    "left; every trial measured by one yardstick. --strategy search (the default) lets Bayesian optimisation "
    "propose the configurations (metric, layout, map size, counter width, overflow), learning from every "
    "rung, with the probe's census and the tune stage's replay (--tune-dir) as its prior; --strategy list "
    "races the fixed --metrics. The winner is recommended only if it covers significantly more than the "
    "default (p <= 0.05: the exact Wilcoxon signed-rank test on the seed-paired trials of the last rung, "
    "Mann-Whitney with fewer than 5 pairs); otherwise the default is. Writes race.json, race.md, the "
    "recommendation's env files and recommendation.json to --out. The target: a recipe (--demo, --source files, an OSS-Fuzz style "
    "--build-script), which each contestant's compiler builds, or a harness binary alone, which every "
    "contestant runs."
)


@command("race", HELP)
@option_group("target", TargetOptions)
@option_group("race_opts", RaceOptions)
def race_cmd(
    target: TargetOptions = TargetOptions(),
    probe: ProbeDirOpt = None,
    tune_dir: Annotated[Optional[Path], typer.Option(
        "--tune", help="tune's output directory: its best configuration of each metric family by replay are the "
                       "search's first proposals.")] = None,
    race_opts: RaceOptions = RaceOptions(),
    jobs: JobsOpt = None,
    instances: InstancesOpt = 1,
    seed: SeedOpt = 0,
    out_dir: OutDirOpt = Path("race-out"),
    json_out: JsonOpt = False,
) -> None:
    from autotune.cli.board import TrialBoard
    from autotune.race.stage import race_target

    harness, spec = target.binary_or_recipe()
    with TrialBoard(err) as board:
        inputs = RaceInputs(out_dir=out_dir, corpus=target.seeds(required=True), spec=spec, binary=harness,
                            probe_dir=probe, tune_dir=tune_dir)
        settings = race_opts.settings(jobs=jobs, instances=instances, seed=seed)
        outcome = race_target(inputs=inputs, settings=settings, progress=board.race_progress())
    if json_out:
        print_json(outcome.to_dict())
        return
    print_race_summary(outcome, out_dir)


def print_race_summary(outcome, out_dir: Path) -> None:
    from autotune.race.evidence import secondaries_line
    from autotune.race.report import portfolio_line, races_portfolios
    from autotune.trials import host_cores

    d = outcome.race.decision
    out.print(f"race: {d.reason}", highlight=False, soft_wrap=True)
    recommended = outcome.race.contestant(d.recommended)
    launch = portfolio_line(outcome, out_dir=out_dir, cores=len(host_cores()))
    if launch:
        out.print(f"{'portfolio' if recommended.members else 'all cores'}: {launch}", highlight=False, soft_wrap=True)
    if races_portfolios(outcome):
        out.print(f"evidence: {secondaries_line()}; figures in {out_dir}/race.md", highlight=False, soft_wrap=True)
    chosen = outcome.recommended  # a portfolio's: the configuration it tuned
    if chosen.cc_kind == CC_AFL:
        out.print(f"recommended: AFL++'s default (afl-clang-fast, no variables); see {out_dir}/afl-build.env",
                  highlight=False, soft_wrap=True)
    else:
        out.print(f"recommended: {chosen.description}", highlight=False, soft_wrap=True)
        out.print(f"build: set -a; . {out_dir}/autotune-build.env; set +a   (then build with autotune cc)",
                  highlight=False, soft_wrap=True)
        out.print(f"run:   set -a; . {out_dir}/autotune-run.env; set +a   (then afl-fuzz ... -- ./target)",
                  highlight=False, soft_wrap=True)
    out.print(f"report: {out_dir}/race.md (every trial's afl-fuzz figures and yardstick edges"
              + (", the search's proposals, predictions and convergence" if outcome.race.search else "") + ")",
              highlight=False, soft_wrap=True)
    out.print(f"check:  autotune preflight {out_dir} ...   (CI; autotune validate {out_dir} replays and fuzzes it)",
              highlight=False, soft_wrap=True)
