"""`autotune compare`: configurations side by side under the real afl-fuzz (K trials x T minutes),
measured by one yardstick; medians, Mann-Whitney U, A12, coverage over time."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import err, handle_errors, out, print_json
from autotune.cli.options import (FuzzTimeOpt, JobsOpt, JsonOpt, NoPlotOpt, OutDirOpt, SeedOpt, TargetOptions,
                                  option_group)

HELP = (
    "Run K afl-fuzz trials of T minutes for each configuration (one afl-fuzz per core, interleaved), replay "
    "what each trial kept through one yardstick (AFL++'s default PCGUARD build under afl-showmap; our "
    "runtime's exact edge keys when afl-clang-fast is missing) and report medians with intervals, "
    "Mann-Whitney U and Vargha-Delaney A12 per pair, and coverage over time. Writes compare.json, "
    "compare.md and coverage.png to --out.\n\n"
    "Each trial runs --fuzz-time seconds (or --minutes). --config (repeat): default (AFL++'s afl-clang-fast "
    "PCGUARD build), runtime (autotune cc, runtime defaults), an env file (autotune-run.env: autotune cc build; afl-build.env: afl-clang-fast with "
    "its afl-run.env), or BUILD.env+RUN.env; label one with NAME=SPEC.\n\n"
    "The target: --demo, --source files (with --cflags/--ldflags), or an OSS-Fuzz style --build-script "
    "(uses $CC $CXX $CFLAGS $LIB_FUZZING_ENGINE and writes $OUT/fuzzer)."
)


def register(app: typer.Typer) -> None:
    app.command("compare", help=HELP)(compare_cmd)


@handle_errors
@option_group("target", TargetOptions, omit=("harness",))
def compare_cmd(
    target: TargetOptions = TargetOptions(),
    config: Annotated[Optional[list[str]], typer.Option(
        "--config", help="A configuration: default, runtime, FILE.env, BUILD.env+RUN.env, as NAME=SPEC to "
                         "label it (repeat; default: default).")] = None,
    trials: Annotated[int, typer.Option("--trials", "-k", min=1, help="Trials per configuration.")] = 5,
    minutes: Annotated[float, typer.Option("--minutes", "-m", min=0.0, help="afl-fuzz time per trial in minutes.")] = 10.0,
    fuzz_s: FuzzTimeOpt = None,
    jobs: JobsOpt = None,
    seed: SeedOpt = 0,
    out_dir: OutDirOpt = Path("compare-out"),
    no_plot: NoPlotOpt = False,
    json_out: JsonOpt = False,
) -> None:
    from autotune.compare.compare import JSON_NAME, MD_NAME, PLOT_NAME, run_compare
    from autotune.compare.config import parse_configs
    from autotune.errors import AutotuneError

    spec = target.recipe()
    if spec is None:
        raise AutotuneError("no target given", fix="pass --demo, --source FILE (repeat), or --build-script FILE")
    corpus = target.seeds(required=True)
    secs = fuzz_s if fuzz_s is not None else int(round(minutes * 60))
    if secs < 1:
        raise AutotuneError(f"--minutes {minutes} is under a second", fix="pass --minutes > 0 or --fuzz-time N")
    configs = parse_configs(list(config or ["default"]))
    res = run_compare(spec=spec, corpus=corpus, configs=configs, trials=trials, seconds=secs, out_dir=out_dir,
                      jobs=jobs, rng_seed=seed, plot=not no_plot,
                      progress=lambda m: err.print(f"[dim]{m}[/]", highlight=False))
    if json_out:
        print_json(res.to_dict())
        return
    from autotune.compare.render import markdown

    out.print(markdown(res), highlight=False, markup=False, soft_wrap=True)
    files = [JSON_NAME, MD_NAME] + ([] if no_plot else [PLOT_NAME])
    out.print(f"written: {', '.join(str(Path(res.out_dir) / f) for f in files)}", highlight=False, markup=False,
              soft_wrap=True)
