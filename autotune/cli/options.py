"""Options used by several commands, each defined once, with one name per idea.

Durations, all in seconds:
- ``--probe-time`` (``--time``, ``-t``): the probe's campaign (probe, run, preflight);
- ``--budget``: the whole race in afl-fuzz, every trial on ``--jobs`` cores (race, run);
- ``--fuzz-time``: one afl-fuzz run (``-V``): each validate variant, each compare trial;
- ``--min-trial``: the race's shortest trial (race, run).
Parallelism: ``--jobs`` is afl-fuzz runs at once (race, compare); ``--instances`` is the
campaign's fuzzer instances sharing the last-level cache that tune sizes the map for (tune, run).

Option groups: the options of one idea that several commands take together (the target, the
race) are a dataclass whose fields are typer parameters. ``option_group`` puts a group's
fields into a command's signature in place of one parameter and hands the command the group's
object, so a command reads ``target.recipe()`` instead of repeating eight parameters.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from pathlib import Path
from typing import Annotated, Any, Callable, Mapping, Optional, Sequence

import typer

from autotune.errors import AutotuneError
from autotune.race.options import (DEFAULT_BUDGET_S, DEFAULT_FINAL_REPEATS, DEFAULT_MIN_TRIAL_S, DEFAULT_REPEATS,
                                   RaceBudget, RaceSettings)
from autotune.target import make_spec, probe_harness
from autotune.tune.defaults import DEFAULT_MAX_COLLISION_RATE
from autotune.target.recipe import DEFAULT_CFLAGS, TargetSpec
from autotune.vocabulary import METRICS

# ---- output and reproducibility ---------------------------------------------------------------
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for every random choice (afl-fuzz: trial k gets -s SEED+k).")]
OutDirOpt = Annotated[Path, typer.Option("--out", "-o", help="Output directory.")]
NoPlotOpt = Annotated[bool, typer.Option("--no-plot", help="Do not write the PNG plot.")]
SysfsRootOpt = Annotated[Path, typer.Option("--sysfs-root", help="Root of the sysfs tree to read (tests use fake trees).")]
ProcfsRootOpt = Annotated[Path, typer.Option("--procfs-root", help="Root of the procfs tree to read.")]

# ---- durations and parallelism ------------------------------------------------------------------
ProbeTimeOpt = Annotated[float, typer.Option(
    "--probe-time", "--time", "-t",
    help="Seconds of the probe's campaign (building the harness excepted).")]
ProbeEngineOpt = Annotated[str, typer.Option(
    "--probe-engine", "--engine",
    help="What mutates during the probe: havoc (the probe's own loop; it reached more keys in 60 s on the demo "
         "and libyaml), afl (afl-fuzz on a map of every metric's keys; the census replays what it kept), or auto "
         "(afl when afl-fuzz is installed).")]
BudgetOpt = Annotated[Optional[float], typer.Option(
    "--budget", min=1.0, show_default=False,
    help="Wall seconds for the race in afl-fuzz (all trials, on --jobs cores). Default: 480 s a portfolio's "
         "instance (480 x --instances: each trial of N instances holds N cores, so the race gets the core-seconds "
         "of a one-instance race).")]
FuzzTimeOpt = Annotated[Optional[int], typer.Option(
    "--fuzz-time", min=1, help="Seconds of each afl-fuzz run (afl-fuzz -V).")]
MinTrialOpt = Annotated[int, typer.Option(
    "--min-trial", min=1, help="Shortest race trial in seconds (the first rung's); a budget too small for it is an "
                               "error that names the budget needed.")]
JobsOpt = Annotated[Optional[int], typer.Option(
    "--jobs", "-j", min=1, help="afl-fuzz runs at once, one per core (default: the cores).")]
InstancesOpt = Annotated[int, typer.Option(
    "--instances", help="afl-fuzz instances the campaign runs at once, sharing the last-level cache (tune sizes "
                               "the map for them; with N > 1 `autotune run`'s race runs N-instance portfolios, one "
                               "core each: AFL++'s default portfolio against portfolios with AFL++'s default as "
                               "the -M main and the search's configurations on the -S secondaries; default 1; the "
                               "race's summary names the `autotune portfolio` command that runs its recommendation on "
                               "every core).")]

# ---- probe, tune and race settings -----------------------------------------------------------------
ProbeDirOpt = Annotated[Optional[Path], typer.Option(
    "--probe", "-p", help="A probe's output directory (autotune probe --out).")]
TimeoutMsOpt = Annotated[int, typer.Option(
    "--timeout-ms", help="Per-input time limit in ms during the probe; slower inputs are hangs (a sanitizer "
                         "report counts: keep it loose for ASan builds).")]
CallsOpt = Annotated[int, typer.Option("--calls", help="Optimiser calls (evaluations).")]
MaxCollisionRateOpt = Annotated[float, typer.Option(
    "--max-collision-rate", help="Largest acceptable collision rate (0..1).")]
MinMapBytesOpt = Annotated[int, typer.Option("--min-map-bytes", help="Smallest map (slots = bytes of an 8-bit map; a power of two).")]
MaxMapBytesOpt = Annotated[int, typer.Option("--max-map-bytes", help="Largest map (slots = bytes of an 8-bit map; a power of two).")]
RaceMetricsOpt = Annotated[str, typer.Option(
    "--metrics", help="Metrics the race may try (comma list). --strategy search: the search's space (default: "
                      "all); --strategy list: the candidates in priority order, the last left out when the budget "
                      "is short (default: guard,edge,ngram-4,caller; with --judge bugs: ngram-4,caller,guard,edge).")]
StrategyOpt = Annotated[str, typer.Option(
    "--strategy", help="search: Bayesian optimisation over metric, layout, map size, counter width and overflow "
                       "policy, judged by paired afl-fuzz trials against AFL++'s default (successive halving); "
                       "list: race the fixed --metrics list, each sized by the probe's census.")]
JudgeOpt = Annotated[str, typer.Option(
    "--judge", help="What decides the race: edges (the yardstick's edges), or bugs (a recipe whose build has "
                    "known-bug canaries, kernels/canary.h, with --strategy list): time to trigger, the rule in "
                    "race.md and docs/BUGS.md.")]
RepeatsOpt = Annotated[int, typer.Option("--repeats", min=1, help="Trials per contestant and rung (paired seeds).")]
FinalRepeatsOpt = Annotated[int, typer.Option(
    "--final-repeats", min=1, help="Trials per contestant in the last rung, which decides (at least --repeats): the "
                                   "exact Wilcoxon signed-rank test on the seed-paired differences when there are 5 "
                                   "pairs or more (all 5 won: p = 1/32), else Mann-Whitney.")]

# ---- the target -------------------------------------------------------------------------------------
HarnessArg = Annotated[Optional[Path], typer.Argument(help="Harness binary built with `autotune cc -fsanitize=fuzzer`.")]
SourceOpt = Annotated[Optional[list[Path]], typer.Option(
    "--source", "-s", help="Harness source file (repeat), built by each compiler; with --build-script: a file the "
                           "script compiles (a change rebuilds).")]
CflagsOpt = Annotated[str, typer.Option("--cflags", help="Compiler flags of the recipe's builds ($CFLAGS of a build script).")]
LdflagsOpt = Annotated[str, typer.Option("--ldflags", help="Extra linker flags for --source builds (e.g. -lz).")]
CxxOpt = Annotated[bool, typer.Option("--cxx", help="Build --source files as C++.")]
DemoOpt = Annotated[bool, typer.Option("--demo", help="The bundled demo target and its seeds.")]
CorpusOpt = Annotated[Optional[Path], typer.Option("--corpus", "-c", help="Seed corpus directory.")]
BuildScriptOpt = Annotated[Optional[Path], typer.Option(
    "--build-script", help="OSS-Fuzz style build script (uses $CC $CXX $CFLAGS $LIB_FUZZING_ENGINE, writes $OUT/fuzzer).")]


@dataclasses.dataclass(frozen=True)
class TargetOptions:
    """The target: a harness binary, or a recipe (--demo, --source files, --build-script), and seeds."""

    harness: HarnessArg = None
    source: SourceOpt = None
    cflags: CflagsOpt = DEFAULT_CFLAGS
    ldflags: LdflagsOpt = ""
    cxx: CxxOpt = False
    demo: DemoOpt = False
    build_script: BuildScriptOpt = None
    corpus: CorpusOpt = None

    def recipe(self) -> TargetSpec | None:
        """The recipe the options give (None: none, e.g. a harness binary alone)."""
        return make_spec(demo=self.demo, sources=list(self.source or []), cflags=self.cflags, ldflags=self.ldflags,
                         cxx=self.cxx, script=self.build_script)

    def binary_or_recipe(self) -> tuple[Path | None, TargetSpec | None]:
        """(harness, recipe), exactly one of them set; AutotuneError for none or both."""
        spec = self.recipe()
        if (self.harness is None) == (spec is None):
            raise AutotuneError("give exactly one target: a harness binary, --source files, --build-script or --demo",
                                fix="e.g. `--demo`, or `./fuzz_target --corpus seeds/`, or `--build-script build.sh`")
        if self.harness is not None and not self.harness.is_file():
            raise AutotuneError(f"harness {self.harness} does not exist",
                                fix="build it with `autotune cc -fsanitize=fuzzer`, or give its recipe")
        return self.harness, spec

    def probe_harness(self) -> Path:
        """The binary the probe runs: the harness given, or the recipe built by `autotune cc`."""
        harness, spec = self.binary_or_recipe()
        return probe_harness(harness=harness, spec=spec)

    def seeds(self, *, required: bool) -> Path | None:
        """--corpus, else the demo's seeds with --demo; ``required``: an error without either."""
        if self.corpus is not None:
            if not self.corpus.is_dir():
                raise AutotuneError(f"corpus {self.corpus} is not a directory", fix="pass the corpus directory with --corpus")
            return self.corpus
        if self.demo:
            from autotune import demo  # it reads the kernels directory when imported (target/recipe.py)

            return demo.seed_dir()
        if required:
            raise AutotuneError("no seed corpus given", fix="pass --corpus DIR")
        return None


@dataclasses.dataclass(frozen=True)
class RaceOptions:
    """The race in afl-fuzz: its budget, candidates, repeats, shortest trial and what judges it."""

    budget: BudgetOpt = None
    strategy: StrategyOpt = "search"
    metrics: RaceMetricsOpt = ""
    repeats: RepeatsOpt = DEFAULT_REPEATS
    final_repeats: FinalRepeatsOpt = DEFAULT_FINAL_REPEATS
    min_trial: MinTrialOpt = DEFAULT_MIN_TRIAL_S
    judge: JudgeOpt = "edges"

    def metric_names(self) -> tuple[str, ...] | None:
        """The --metrics given, checked; None when not given (each strategy has its default)."""
        from autotune.race.stage import STRATEGIES

        if self.strategy not in STRATEGIES:
            raise AutotuneError(f"unknown --strategy {self.strategy!r}", fix=f"use one of: {', '.join(STRATEGIES)}")
        if not self.metrics.strip():
            return None
        names = tuple(m.strip() for m in self.metrics.split(",") if m.strip())
        if not names:
            raise AutotuneError("no metric to race", fix=f"pass --metrics with some of: {', '.join(METRICS)}")
        bad = [m for m in names if m not in METRICS]
        if bad:
            raise AutotuneError(f"unknown metric {bad[0]!r} in --metrics", fix=f"use some of: {', '.join(METRICS)}")
        return names

    def budget_s(self, instances: int) -> float:
        """--budget, or by default DEFAULT_BUDGET_S for each instance of a portfolio: a trial of N instances
        holds N cores, so N x 480 s races as many contestants, with trials as long, as 480 s races single
        instances on those cores."""
        return float(self.budget) if self.budget is not None else DEFAULT_BUDGET_S * max(1, instances)

    def settings(self, *, jobs: int | None, instances: int, seed: int,
                 max_collision_rate: float = DEFAULT_MAX_COLLISION_RATE) -> RaceSettings:
        """The race's settings (autotune.race.options) from these options and the command's own."""
        return RaceSettings(strategy=self.strategy, metrics=self.metric_names(), judge=self.judge, seed=seed,
                            instances=instances, max_collision_rate=max_collision_rate,
                            budget=RaceBudget(budget_s=self.budget_s(instances), jobs=jobs, repeats=self.repeats,
                                              min_trial_s=self.min_trial, final_repeats=self.final_repeats))


def option_group(name: str, group: type, *, omit: Sequence[str] = (),
                 defaults: Mapping[str, Any] | None = None) -> Callable[[Callable], Callable]:
    """Put the fields of the dataclass ``group`` into a command's signature in place of its
    parameter ``name``; the command is called with ``name=group(...)``. ``omit``: fields the
    command does not take (they keep the group's defaults); ``defaults``: the command's own."""
    hints = typing.get_type_hints(group, include_extras=True)
    defaults = dict(defaults or {})
    fields = [f for f in dataclasses.fields(group) if f.name not in omit]
    unknown = (set(omit) | set(defaults)) - {f.name for f in dataclasses.fields(group)}
    if unknown:
        raise TypeError(f"{group.__name__} has no field {sorted(unknown)}")

    def decorate(func: Callable) -> Callable:
        sig = inspect.signature(func, eval_str=True)
        if name not in sig.parameters:
            raise TypeError(f"{func.__name__} has no parameter {name!r}")
        clash = {f.name for f in fields} & set(sig.parameters)
        if clash:
            raise TypeError(f"{func.__name__}'s parameters {sorted(clash)} clash with {group.__name__}")
        params: list[inspect.Parameter] = []
        for p in sig.parameters.values():
            if p.name != name:
                params.append(p)
                continue
            params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, annotation=hints[f.name],
                                         default=defaults.get(f.name, f.default)) for f in fields]
        names = [f.name for f in fields]

        @functools.wraps(func)
        def command(*args: Any, **kwargs: Any) -> Any:
            values = {n: kwargs.pop(n) for n in names if n in kwargs}
            return func(*args, **{name: group(**{**defaults, **values})}, **kwargs)

        command.__signature__ = sig.replace(parameters=[  # type: ignore[attr-defined]
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params])
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return decorate
