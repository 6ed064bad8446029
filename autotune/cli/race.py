"""`autotune race`: race AFL++'s default and our runtime's metrics in the real afl-fuzz."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import (BudgetOpt, BuildScriptOpt, CflagsOpt, CorpusOpt, CxxOpt, DemoOpt, HarnessArg, JsonOpt,
                                 LdflagsOpt, RaceJobsOpt, RaceMetricsOpt, RepeatsOpt, SeedOpt, SourceOpt, err,
                                 handle_errors, out, print_json)
from autotune.race.contestants import DEFAULT_METRICS

HELP = (
    "Race AFL++'s default (afl-clang-fast PCGUARD; our runtime's guard metric without afl-clang-fast) "
    "against our runtime's --metrics by successive halving in the real afl-fuzz: short paired trials "
    "for all, longer ones for the better half, until one is left; every trial measured by one "
    "yardstick. The winner is recommended only if it covers significantly more than the default "
    "(exact Mann-Whitney, p <= 0.05); otherwise the default is. Writes race.json, race.md and the "
    "recommendation's env files to --out. With --probe, the two-level maps are sized from that "
    "probe's census."
)


def register(app: typer.Typer) -> None:
    app.command("race", help=HELP)(race_cmd)


@handle_errors
def race_cmd(
    harness: HarnessArg = None,
    source: SourceOpt = None,
    cflags: CflagsOpt = "-O2 -g",
    ldflags: LdflagsOpt = "",
    cxx: CxxOpt = False,
    demo: DemoOpt = False,
    build_script: BuildScriptOpt = None,
    corpus: CorpusOpt = None,
    probe: Annotated[Optional[Path], typer.Option("--probe", help="A probe directory: its census sizes the maps.")] = None,
    budget: BudgetOpt = 600.0,
    metrics: RaceMetricsOpt = ",".join(DEFAULT_METRICS),
    jobs: RaceJobsOpt = None,
    repeats: RepeatsOpt = 3,
    min_trial: Annotated[int, typer.Option("--min-trial", min=1, help="Shortest trial in seconds (the first rung's); "
                                           "a budget too small for it is an error that names the budget needed.")] = 20,
    seed: SeedOpt = 0,
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("race-out"),
    json_out: JsonOpt = False,
) -> None:
    from autotune.race.stage import race_cli

    outcome = race_cli(harness=harness, sources=list(source or []), cflags=cflags, ldflags=ldflags, cxx=cxx,
                       demo=demo, build_script=build_script, corpus=corpus, probe_dir=probe, budget_s=budget,
                       metrics=metrics, jobs=jobs, repeats=repeats, min_trial_s=min_trial, seed=seed, out_dir=out_dir,
                       notice=lambda m: err.print(m, highlight=False),
                       progress=lambda m: err.print(f"[dim]{m}[/]", highlight=False))
    if json_out:
        print_json(outcome.to_dict())
        return
    print_race_summary(outcome, out_dir)


def print_race_summary(outcome, out_dir: Path) -> None:
    d = outcome.race.decision
    out.print(f"race: {d.reason}", highlight=False, soft_wrap=True)
    chosen = outcome.race.contestant(d.recommended)
    if chosen.cc_kind == "afl":
        out.print(f"recommended: AFL++'s default (afl-clang-fast, no variables); see {out_dir}/afl-build.env",
                  highlight=False, soft_wrap=True)
    else:
        out.print(f"recommended: {chosen.description}", highlight=False, soft_wrap=True)
        out.print(f"build: set -a; . {out_dir}/autotune-build.env; set +a   (then build with autotune cc)",
                  highlight=False, soft_wrap=True)
        out.print(f"run:   set -a; . {out_dir}/autotune-run.env; set +a   (then afl-fuzz ... -- ./target)",
                  highlight=False, soft_wrap=True)
    out.print(f"report: {out_dir}/race.md (every trial's afl-fuzz figures and yardstick edges)", highlight=False,
              soft_wrap=True)
