"""`autotune probe`: a short crash-proof campaign that takes an exact census of coverage keys."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import (JsonOpt, OutDirOpt, ProbeEngineOpt, ProbeTimeOpt, SeedOpt, TargetOptions,
                                  TimeoutMsOpt, option_group)
from autotune.probe.defaults import DEFAULT_PROBE_TIME_S
from autotune.probe.options import ProbeSettings

HELP = (
    "Run a short coverage-guided campaign on a harness and take an exact census of the coverage keys "
    "of every metric (edge, N-gram, call context): keys, hashed collisions per map size beside BigMap's "
    "Equation 1, counter overflows, discovery curve, Chao estimate of the total.\n\n"
    "The harness is a binary built with `autotune cc -fsanitize=fuzzer`, or its recipe, which probe builds with "
    "`autotune cc`: --source files, an OSS-Fuzz style --build-script, or --demo (the bundled demo target and its "
    "seeds). Results go to --out: probe.json, "
    "census/, traces/, corpus/, crashes/, hangs/."
)


@command("probe", HELP)
@option_group("target", TargetOptions)
def probe_cmd(
    target: TargetOptions = TargetOptions(),
    time_s: ProbeTimeOpt = DEFAULT_PROBE_TIME_S,
    engine: ProbeEngineOpt = "havoc",
    max_execs: Annotated[Optional[int], typer.Option("--max-execs", help="Stop after this many executions (reproducible census).")] = None,
    seed: SeedOpt = 0,
    timeout_ms: TimeoutMsOpt = 1000,
    max_input_bytes: Annotated[int, typer.Option("--max-input-bytes", help="Largest input (seeds above it are skipped).")] = 1 << 20,
    capacity: Annotated[int, typer.Option("--capacity", help="Census table size per metric (power of two).")] = 1 << 18,
    metrics: Annotated[str, typer.Option("--metrics", help="Census of these metrics only (comma list), or all.")] = "all",
    max_trace_inputs: Annotated[int, typer.Option("--max-trace-inputs", help="Trace at most this many kept inputs for replay.")] = 1000,
    out_dir: OutDirOpt = Path("probe-out"),
    json_out: JsonOpt = False,
) -> None:
    from rich.live import Live

    from autotune.probe.campaign import run_probe
    from autotune.probe.display import live_view, summary_table

    settings = ProbeSettings(time_s=time_s, max_execs=max_execs, seed=seed, timeout_ms=timeout_ms,
                             max_input_bytes=max_input_bytes, capacity=capacity, max_trace_inputs=max_trace_inputs,
                             metrics=tuple(m.strip() for m in metrics.split(",") if m.strip()), engine=engine)
    binary, corpus_dir = target.probe_harness(), target.seeds(required=False)
    live = Live(console=err, auto_refresh=False, transient=False) if err.is_terminal else None

    def on_progress(p) -> None:
        if live is not None:
            live.update(live_view(p), refresh=True)

    if live is not None:
        live.start()
    try:
        result = run_probe(binary=binary, out_dir=out_dir, corpus_dir=corpus_dir, settings=settings,
                           demo=target.demo, on_progress=on_progress)
    finally:
        if live is not None:
            live.stop()
    if json_out:
        print_json(result.to_dict())
        err.print(summary_table(result))
    else:
        out.print(summary_table(result))
