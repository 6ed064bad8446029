"""`autotune run`: the main job — profile, probe, tune and race in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import (CallsOpt, InstancesOpt, JsonOpt, MaxCollisionRateOpt, OutDirOpt, ProbeEngineOpt,
                                  ProbeTimeOpt, RaceOptions, SeedOpt, TargetOptions, TimeoutMsOpt, option_group)
from autotune.cli.race import print_race_summary
from autotune.cli.tune import calls_summary, print_summary, run_with_progress
from autotune.probe.defaults import DEFAULT_PROBE_TIME_S
from autotune.probe.options import ProbeSettings
from autotune.tune.defaults import DEFAULT_CALLS, DEFAULT_MAX_COLLISION_RATE
from autotune.tune.options import TuneSettings

HELP = (
    "Profile this host, probe the target (a census of its coverage keys per metric), tune its coverage "
    "map by replay (size, counter width, metric, layout: the prior), then search in the real afl-fuzz for "
    "--budget seconds: configurations proposed by Bayesian optimisation raced against AFL++'s default on "
    "paired seeds. The recommendation is the race's: the default unless a candidate covers significantly "
    "more (with --judge bugs and --strategy list, on a recipe with known-bug canaries: triggers its bugs "
    "significantly sooner). Ends by printing the env files and how to load them. The target is a harness "
    "binary built with `autotune cc -fsanitize=fuzzer`, its --source files, an OSS-Fuzz style "
    "--build-script, or --demo (the bundled demo target); with a binary alone, every contestant runs that "
    "binary. Every stage's output stays under --out."
)


@command("run", HELP)
@option_group("target", TargetOptions)
@option_group("race_opts", RaceOptions)
def run_cmd(
    target: TargetOptions = TargetOptions(),
    time_s: ProbeTimeOpt = DEFAULT_PROBE_TIME_S,
    engine: ProbeEngineOpt = "havoc",
    calls: CallsOpt = DEFAULT_CALLS,
    max_collision_rate: MaxCollisionRateOpt = DEFAULT_MAX_COLLISION_RATE,
    instances: InstancesOpt = 1,
    timeout_ms: TimeoutMsOpt = 1000,
    race_opts: RaceOptions = RaceOptions(),
    no_race: Annotated[bool, typer.Option("--no-race", help="Stop after tune (no afl-fuzz race).")] = False,
    seed: SeedOpt = 0,
    out_dir: OutDirOpt = Path("autotune-out"),
    json_out: JsonOpt = False,
) -> None:
    from functools import partial

    from autotune.cli.board import TrialBoard
    from autotune.pipeline import PipelineProgress, Target, run_pipeline

    race = race_opts.settings(jobs=None, instances=instances, seed=seed, max_collision_rate=max_collision_rate)
    race = None if no_race else race  # the options are checked either way
    harness, spec = target.binary_or_recipe()
    result = run_pipeline(
        out_dir=out_dir,
        target=Target(harness=harness, spec=spec, corpus=target.seeds(required=False), demo=target.demo),
        probe=ProbeSettings(time_s=time_s, engine=engine, seed=seed, timeout_ms=timeout_ms),
        tune=TuneSettings(calls=calls, seed=seed, jobs=instances, max_collision_rate=max_collision_rate),
        race=race,
        progress=PipelineProgress(on_stage=lambda s: err.print(f"[bold]==>[/] {s}", highlight=False),
                                  notice=lambda m: err.print(m, highlight=False),
                                  tune_run=lambda **kw: _tune_stage(out_dir=out_dir, **kw),
                                  race_board=partial(TrialBoard, err)))
    if json_out:
        print_json(result.to_dict())
        return
    p = result.probe
    out.print(f"host profile: {result.host_profile}", highlight=False, soft_wrap=True)
    out.print(f"probe: {result.probe_dir}/probe.json ({_probe_line(p)})", highlight=False, soft_wrap=True)
    if result.race is not None:  # one recommendation: the race's; tune's choice was its prior
        bc = result.tune.best_config
        out.print(f"tune: by replay {bc.metric}, {bc.layout}, {bc.map_slots} slots, {bc.width_bits}-bit led "
                  f"(the search's prior, not a recommendation; {result.tune_dir}/report.md)", highlight=False,
                  soft_wrap=True)
        print_race_summary(result.race, result.race_dir)
        return
    print_summary(result.tune, result.tune_dir, [w.name for w in result.written])
    out.print(f"report: {result.tune_dir}/report.md (tune's replay-based choice: figures replayed, not afl-fuzz's)",
              highlight=False, soft_wrap=True)
    if not no_race:
        out.print("no race: afl-fuzz is not installed, so tune's replay-based choice stands "
                  "(apt-get install -y afl++ to race the candidates in afl-fuzz)", highlight=False)


def _tune_stage(*, out_dir: Path, **kw):
    """The tune stage under a progress bar, then one summary line instead of a line per call (every
    call is in tune's report.md, which the pipeline writes to OUT/tune)."""
    from autotune.tune.run import run_tune

    result = run_with_progress(run_tune, calls_on_screen=False, **kw)
    err.print(calls_summary(result, Path(out_dir).resolve() / "tune" / "report.md"), highlight=False, soft_wrap=True)
    return result


def _probe_line(p) -> str:
    keys = ", ".join(f"{m.metric} {m.keys:,}" for m in p.metrics if m.metric in ("edge", "ngram-8", "ctx"))
    if p.afl is not None and p.afl.execs is not None:  # afl-fuzz mutated; the probe replayed what it kept
        return (f"afl-fuzz {p.afl.execs:,} execs, queue {p.afl.queue:,}; census of {p.campaign.execs:,} probe "
                f"executions; keys: {keys}")
    return f"{p.campaign.execs:,} execs; keys: {keys}"
