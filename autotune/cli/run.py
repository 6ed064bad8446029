"""`autotune run`: the main job — profile, probe and tune in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autotune.cli.common import (CxxOpt, CflagsOpt, CorpusOpt, DemoOpt, HarnessArg, JsonOpt, LdflagsOpt, OutDirOpt, SeedOpt, SourceOpt, err, handle_errors, out, print_json)

HELP = (
    "Profile this host, probe the target (a census of its coverage keys per metric) and tune its "
    "coverage map (size, counter width, metric, layout); ends by printing the env files and how to load "
    "them. The target is a harness binary built with `autotune cc -fsanitize=fuzzer`, its --source "
    "files, or --demo (the bundled demo target). Every stage's output stays under --out."
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
    corpus: CorpusOpt = None,
    time_s: Annotated[float, typer.Option("--time", "-t", help="Probe time budget in seconds.")] = 60.0,
    calls: Annotated[int, typer.Option("--calls", help="Optimiser calls (evaluations).")] = 40,
    max_collision_rate: Annotated[float, typer.Option("--max-collision-rate", help="Largest acceptable collision rate (0..1).")] = 0.02,
    jobs: Annotated[int, typer.Option("--jobs", help="Fuzzer instances sharing the last-level cache.")] = 1,
    timeout_ms: Annotated[int, typer.Option("--timeout-ms", help="Per-input time limit in ms during the probe.")] = 1000,
    seed: SeedOpt = 0,
    out_dir: OutDirOpt = Path("autotune-out"),
    json_out: JsonOpt = False,
) -> None:
    from autotune.cli.tune import print_summary, run_with_progress
    from autotune.pipeline import run_pipeline
    from autotune.probe.target import resolve_target
    from autotune.tune.run import run_tune

    binary, corpus_dir = resolve_target(harness=harness, sources=list(source or []), cflags=cflags,
                                        ldflags=ldflags, cxx=cxx, demo=demo, corpus=corpus)
    result = run_pipeline(
        out_dir=out_dir, binary=binary, corpus_dir=corpus_dir, demo=demo, probe_time_s=time_s, seed=seed,
        calls=calls, max_collision_rate=max_collision_rate, jobs=jobs, timeout_ms=timeout_ms,
        on_stage=lambda s: err.print(f"[bold]==>[/] {s}", highlight=False),
        tune_run=lambda **kw: run_with_progress(run_tune, **kw),
        notice=lambda m: err.print(m, highlight=False))
    if json_out:
        print_json(result.to_dict())
        return
    p = result.probe
    out.print(f"host profile: {result.host_profile}", highlight=False)
    out.print(f"probe: {result.probe_dir}/probe.json ({_probe_line(p)})", highlight=False)
    print_summary(result.tune, result.tune_dir, [w.name for w in result.written])
    out.print(f"report: {result.tune_dir}/report.md (which env file to use when, and why)", highlight=False)


def _probe_line(p) -> str:
    keys = ", ".join(f"{m.metric} {m.keys:,}" for m in p.metrics if m.metric in ("edge", "ngram-8", "ctx"))
    return f"{p.campaign.execs:,} execs; keys: {keys}"
