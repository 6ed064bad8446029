"""`autotune run`: the main job — profile, probe and tune in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autotune.cli.common import (BudgetOpt, BuildScriptOpt, CflagsOpt, CorpusOpt, CxxOpt, DemoOpt, HarnessArg, JsonOpt,
                                 LdflagsOpt, OutDirOpt, RaceMetricsOpt, RepeatsOpt, SeedOpt, SourceOpt, err,
                                 handle_errors, out, print_json)
from autotune.race.contestants import DEFAULT_METRICS

HELP = (
    "Profile this host, probe the target (a census of its coverage keys per metric), tune its coverage "
    "map by replay (size, counter width, metric, layout), then race AFL++'s default against our "
    "runtime's metrics in the real afl-fuzz for --budget seconds: the recommendation is the race's "
    "(the default unless a candidate covers significantly more). Ends by printing the env files and how "
    "to load them. The target is a harness binary built with `autotune cc -fsanitize=fuzzer`, its "
    "--source files, an OSS-Fuzz style --build-script, or --demo (the bundled demo target); with a "
    "binary alone, every contestant runs that binary. Every stage's output stays under --out."
)


def register(app: typer.Typer) -> None:
    app.command("run", help=HELP)(run_cmd)


@handle_errors
def run_cmd(
    harness: HarnessArg = None,
    source: SourceOpt = None,
    cflags: CflagsOpt = "-O2 -g",
    ldflags: LdflagsOpt = "",
    cxx: CxxOpt = False,
    demo: DemoOpt = False,
    build_script: BuildScriptOpt = None,
    corpus: CorpusOpt = None,
    time_s: Annotated[float, typer.Option("--time", "-t", help="Probe time budget in seconds.")] = 60.0,
    calls: Annotated[int, typer.Option("--calls", help="Optimiser calls (evaluations).")] = 40,
    max_collision_rate: Annotated[float, typer.Option("--max-collision-rate", help="Largest acceptable collision rate (0..1).")] = 0.02,
    jobs: Annotated[int, typer.Option("--jobs", help="Fuzzer instances sharing the last-level cache.")] = 1,
    timeout_ms: Annotated[int, typer.Option("--timeout-ms", help="Per-input time limit in ms during the probe.")] = 1000,
    budget: BudgetOpt = 480.0,
    metrics: RaceMetricsOpt = ",".join(DEFAULT_METRICS),
    repeats: RepeatsOpt = 3,
    min_trial: Annotated[int, typer.Option("--min-trial", min=1, help="Shortest race trial in seconds.")] = 20,
    no_race: Annotated[bool, typer.Option("--no-race", help="Stop after tune (no afl-fuzz race).")] = False,
    seed: SeedOpt = 0,
    out_dir: OutDirOpt = Path("autotune-out"),
    json_out: JsonOpt = False,
) -> None:
    from autotune.cli.race import print_race_summary
    from autotune.cli.tune import print_summary, run_with_progress
    from autotune.pipeline import run_pipeline
    from autotune.probe.target import resolve_target
    from autotune.errors import AutotuneError
    from autotune.race.stage import parse_metrics
    from autotune.tune.run import run_tune

    names = parse_metrics(metrics)
    script_spec = None
    if build_script is not None:
        from autotune.afl import base_env
        from autotune.preflight.target import build, make_spec

        if harness is not None or source or demo:
            raise AutotuneError("give exactly one target: a harness, --source, --build-script or --demo",
                                fix="drop the others")
        script_spec = make_spec(demo=False, sources=[], cflags=cflags, ldflags=ldflags, cxx=cxx, script=build_script)
        harness = build(spec=script_spec, cc_kind="autotune", build_vars={}, env=base_env())
    binary, corpus_dir = resolve_target(harness=harness, sources=list(source or []), cflags=cflags,
                                        ldflags=ldflags, cxx=cxx, demo=demo, corpus=corpus)
    if not no_race and corpus_dir is None:
        raise AutotuneError("the race in afl-fuzz needs seeds", fix="pass --corpus DIR (or --no-race)")
    race = None if no_race else _race_stage(
        spec=script_spec or _recipe(demo=demo, source=list(source or []), cflags=cflags, ldflags=ldflags, cxx=cxx),
        binary=binary, corpus=corpus_dir, metrics=names, budget=budget, repeats=repeats, min_trial=min_trial,
        seed=seed)
    result = run_pipeline(
        out_dir=out_dir, binary=binary, corpus_dir=corpus_dir, demo=demo, probe_time_s=time_s, seed=seed,
        calls=calls, max_collision_rate=max_collision_rate, jobs=jobs, timeout_ms=timeout_ms,
        on_stage=lambda s: err.print(f"[bold]==>[/] {s}", highlight=False),
        tune_run=lambda **kw: run_with_progress(run_tune, **kw),
        notice=lambda m: err.print(m, highlight=False), race=race)
    if json_out:
        print_json(result.to_dict())
        return
    p = result.probe
    out.print(f"host profile: {result.host_profile}", highlight=False)
    out.print(f"probe: {result.probe_dir}/probe.json ({_probe_line(p)})", highlight=False)
    print_summary(result.tune, result.tune_dir, [w.name for w in result.written])
    out.print(f"report: {result.tune_dir}/report.md (tune's replay-based choice: figures replayed, not afl-fuzz's)",
              highlight=False)
    if result.race is not None:
        print_race_summary(result.race, result.race_dir)
    elif not no_race:
        out.print("no race: afl-fuzz is not installed, so tune's replay-based choice stands "
                  "(apt-get install -y afl++ to race the candidates in afl-fuzz)", highlight=False)


def _recipe(*, demo: bool, source: list[Path], cflags: str, ldflags: str, cxx: bool):
    """The recipe the race rebuilds each contestant from (None with a binary alone)."""
    from autotune.preflight.target import make_spec

    return make_spec(demo=demo, sources=source, cflags=cflags, ldflags=ldflags, cxx=cxx, script=None)


def _race_stage(*, spec, binary, corpus, metrics, budget, repeats, min_trial, seed):
    """The race as run_pipeline calls it, or None when afl-fuzz is missing (said in the summary)."""
    from autotune.errors import ToolMissingError
    from autotune.afl import base_env, find_tool
    from autotune.race.stage import estimated_keys_of, race_target, rung_line, trial_line

    try:
        find_tool("afl-fuzz", env=base_env())
    except ToolMissingError:
        return None

    def race(*, out_dir, probe_dir):
        return race_target(out_dir=out_dir, corpus=corpus, spec=spec, binary=None if spec else binary,
                           estimated_keys=estimated_keys_of(probe_dir), metrics=metrics, budget_s=budget,
                           repeats=repeats, min_trial_s=min_trial, seed=seed,
                           notice=lambda m: err.print(m, highlight=False),
                           on_rung=lambda r: err.print(f"[dim]{rung_line(r)}[/]", highlight=False),
                           on_trial=lambda t: err.print(f"[dim]{trial_line(t)}[/]", highlight=False))
    return race


def _probe_line(p) -> str:
    keys = ", ".join(f"{m.metric} {m.keys:,}" for m in p.metrics if m.metric in ("edge", "ngram-8", "ctx"))
    return f"{p.campaign.execs:,} execs; keys: {keys}"
