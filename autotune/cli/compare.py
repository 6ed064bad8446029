"""`autotune compare`: configurations side by side under the real afl-fuzz (K trials x T minutes),
measured by one yardstick; medians, Mann-Whitney U, A12, coverage over time."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.bugs.depth import BugScope
from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import FuzzTimeOpt, JobsOpt, JsonOpt, NoPlotOpt, SeedOpt, TargetOptions, option_group
from autotune.errors import AutotuneError

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
    "(uses $CC $CXX $CFLAGS $LIB_FUZZING_ENGINE and writes $OUT/fuzzer).\n\n"
    "--yardstick llvm-cov measures by the target's clang source-based coverage build instead (covered "
    "branches by llvm-cov; regions and lines beside): a measure that is no contestant's own feedback map. "
    "--yardstick bugs judges by known bugs as well (a target with AUTOTUNE_BUG canaries, kernels/canary.h): the "
    "trials run with fatal canaries, edges are measured by pcguard as ever, and every kept input is replayed "
    "through the canary build for each bug's time to reach and to trigger; compare.md gains Kaplan-Meier, "
    "RMST and log-rank figures against the first configuration, bugs.png the curves (docs/BUGS.md).\n\n"
    "--remeasure DIR measures a finished compare's trials again by --yardstick, without running afl-fuzz, "
    "and writes the result to --out (default DIR-<yardstick>); DIR is only read.\n\n"
    "--resume finishes a compare that was stopped (a long campaign cut short): the trials it finished are "
    "kept, the rest run, with the same arguments."
)


@command("compare", HELP)
@option_group("target", TargetOptions, omit=("harness",))
def compare_cmd(
    target: TargetOptions = TargetOptions(),
    config: Annotated[Optional[list[str]], typer.Option(
        "--config", help="A configuration: default, runtime, FILE.env, BUILD.env+RUN.env, as NAME=SPEC to "
                         "label it (repeat; default: default).")] = None,
    portfolio: Annotated[Optional[list[str]], typer.Option(
        "--portfolio", help="A portfolio: NAME=SPEC,SPEC[,...] (each SPEC as --config takes it, the first the -M "
                            "main; a secondary's as FIRST@SECONDSs>THEN moves from FIRST to THEN that far into each trial): each trial "
                            "runs them all as afl-fuzz instances syncing one output directory, one core each, "
                            "measured as the union (repeat).")] = None,
    instances: Annotated[int, typer.Option(
        "--instances", min=1, help="Run every --config as a portfolio of this many instances of itself (one -M, the "
                                   "rest -S with AFL++'s variations); 1: one afl-fuzz a trial.")] = 1,
    trials: Annotated[int, typer.Option("--trials", "-k", min=1, help="Trials per configuration.")] = 5,
    minutes: Annotated[float, typer.Option("--minutes", "-m", min=0.0, help="afl-fuzz time per trial in minutes.")] = 10.0,
    fuzz_s: FuzzTimeOpt = None,
    jobs: JobsOpt = None,
    seed: SeedOpt = 0,
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Output directory (default: compare-out; with --remeasure DIR, DIR-<yardstick>).")] = None,
    yardstick: Annotated[str, typer.Option(
        "--yardstick", help="What every trial is measured by: pcguard (AFL++'s default PCGUARD build under "
                            "afl-showmap; our census build without afl-clang-fast) or llvm-cov (the target's "
                            "clang source-based coverage build, covered branches), or bugs (pcguard edges plus "
                            "time-to-bug of the target's known-bug canaries).")] = "pcguard",
    remeasure: Annotated[Optional[Path], typer.Option(
        "--remeasure", help="A finished compare's output directory: measure its trials again by --yardstick "
                            "(no afl-fuzz run; the target is the one it recorded unless given).")] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Finish a stopped compare in --out: keep every trial it finished (run as this compare "
                         "asks; anything else is an error) and run the rest.")] = False,
    depth: Annotated[Optional[list[str]], typer.Option(
        "--depth", help="With --yardstick bugs: judge on the bugs of these depth classes only (shallow, mid, deep; "
                        "repeat or comma-separate), by --depths; chosen before the study (docs/BUGS.md, Depth).")] = None,
    depths: Annotated[Optional[Path], typer.Option(
        "--depths", help="Where --depth's classes come from: a bug table's JSON (benchmarks/bugs/table.py) or a "
                         "calibration compare's compare.json (its first configuration's trials).")] = None,
    no_plot: NoPlotOpt = False,
    json_out: JsonOpt = False,
) -> None:
    from autotune.compare.compare import JSON_NAME, MD_NAME, PLOT_NAME, run_compare
    from autotune.compare.config import parse_configs
    from autotune.compare.options import CompareSettings, MeasureSettings
    from autotune.trials.coverage import CHOICES

    from autotune.bugs.yardstick import CHOICE as BUGS
    from autotune.bugs.yardstick import PLOT_NAME as BUGS_PLOT

    if yardstick not in (*CHOICES, BUGS):
        raise AutotuneError(f"--yardstick {yardstick!r} is not one of {', '.join((*CHOICES, BUGS))}",
                            fix="pass --yardstick pcguard, --yardstick llvm-cov or --yardstick bugs")
    scope = None
    if depth or depths is not None:
        if yardstick != BUGS or not depth or depths is None:
            raise AutotuneError("--depth and --depths restrict a judgement by bugs and go together",
                                fix="pass --yardstick bugs --depth mid --depths benchmarks/results/bugtable-*.json")
        scope = BugScope.read(depth, depths)
    measure = MeasureSettings(yardstick=yardstick, bug_scope=scope, jobs=jobs, plot=not no_plot)
    spec = target.recipe()
    say = lambda m: err.print(f"[dim]{m}[/]", highlight=False)  # noqa: E731
    if remeasure is not None:
        from autotune.compare.remeasure import remeasure_compare

        if resume:
            raise AutotuneError("--resume finishes a stopped compare; --remeasure measures a finished one again",
                                fix="drop one of them")
        if config or portfolio or target.corpus is not None:
            raise AutotuneError("--remeasure takes the configurations and seeds of the compare it re-measures",
                                fix="drop --config/--corpus")
        src = remeasure.resolve()
        res = remeasure_compare(source=src, out_dir=out_dir or src.with_name(f"{src.name}-{yardstick}"),
                                settings=measure, spec=spec, progress=say)
    else:
        if spec is None:
            raise AutotuneError("no target given", fix="pass --demo, --source FILE (repeat), or --build-script FILE")
        corpus = target.seeds(required=True)
        secs = fuzz_s if fuzz_s is not None else int(round(minutes * 60))
        if secs < 1:
            raise AutotuneError(f"--minutes {minutes} is under a second", fix="pass --minutes > 0 or --fuzz-time N")
        from autotune.compare.config import parse_portfolio, with_instances

        configs = with_instances(parse_configs(list(config or ([] if portfolio else ["default"]))) if config or not portfolio
                                 else [], instances)
        configs += [parse_portfolio(p) for p in portfolio or []]
        names = [c.name for c in configs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise AutotuneError(f"two configurations are named {dup[0]!r}", fix="give each --portfolio its own NAME")
        settings = CompareSettings(trials=trials, seconds=secs, rng_seed=seed, measure=measure, resume=resume)
        res = run_compare(spec=spec, corpus=corpus, configs=configs, out_dir=out_dir or Path("compare-out"),
                          settings=settings, progress=say)
    if json_out:
        print_json(res.to_dict())
        return
    from autotune.compare.render import markdown

    out.print(markdown(res), highlight=False, markup=False, soft_wrap=True)
    files = [JSON_NAME, MD_NAME] + ([] if no_plot else [PLOT_NAME] + ([BUGS_PLOT] if res.bugs is not None else []))
    out.print(f"written: {', '.join(str(Path(res.out_dir) / f) for f in files)}", highlight=False, markup=False,
              soft_wrap=True)
