"""`autotune bench`: per-exec map cost per layout, counter width and map size on this host."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import JsonOpt, MaxMapBytesOpt, MinMapBytesOpt, OutDirOpt, ProbeDirOpt, SeedOpt
from autotune.errors import AutotuneError
from autotune.io import write_json_atomic, write_text_atomic

HELP = (
    "Measure the per-execution cost of the coverage map on this host: flat and two-level layouts, every counter width, map sizes 8 KiB..128 MiB (powers of two), replaying a key trace from a probe (--probe) or a synthetic one (--synthetic-keys). Reset, classify+compare, hash and update per execution; medians of timed rounds after a warm-up; flat/two-level ratios beside BigMap's Figure 6. Writes bench.json, bench.md and host-profile.json to --out."
)


@command("bench", HELP)
def bench_cmd(
    probe: ProbeDirOpt = None,
    metric: Annotated[str, typer.Option("--metric", help="Which of the probe's traces to replay.")] = "edge",
    key_hash: Annotated[str, typer.Option("--key-hash", help="Index key replayed from a probe trace: exact (the runtime's default) or afl (hk32).")] = "exact",
    synthetic_keys: Annotated[Optional[int], typer.Option("--synthetic-keys", help="Replay a synthetic trace of N keys instead.")] = None,
    seed: SeedOpt = 0,
    min_map_bytes: MinMapBytesOpt = 8 << 10,
    max_map_bytes: MaxMapBytesOpt = 128 << 20,
    widths: Annotated[str, typer.Option("--widths", help="Counter widths, comma-separated.")] = "8,16,32,64",
    rounds: Annotated[int, typer.Option("--rounds", help="Timed rounds per configuration (median).")] = 5,
    round_ms: Annotated[float, typer.Option("--round-ms", help="Minimum duration of a round.")] = 20.0,
    out_dir: OutDirOpt = Path("bench-out"),
    json_out: JsonOpt = False,
) -> None:
    from autotune.measure.bench import BenchSettings, default_map_slots, run_bench
    from autotune.measure.host import current_host
    from autotune.measure.markdown import render_bench_md
    from autotune.measure.trace import probe_trace, synthetic_trace

    if (probe is None) == (synthetic_keys is None):
        raise AutotuneError("give exactly one trace source", fix="pass --probe DIR or --synthetic-keys N")
    try:
        ws = tuple(int(w) for w in widths.split(","))
    except ValueError:
        raise AutotuneError(f"--widths {widths!r} is not a list of integers", fix="e.g. --widths 8,32") from None
    if any(w not in (8, 16, 32, 64) for w in ws):
        raise AutotuneError(f"--widths {widths}: widths are 8, 16, 32 or 64", fix="e.g. --widths 8,16,32,64")
    if rounds < 1:
        raise AutotuneError("--rounds must be at least 1", fix="e.g. --rounds 5")
    sizes = default_map_slots(min_slots=min_map_bytes, max_slots=max_map_bytes)
    target_ns = None
    if probe is not None:
        trace = probe_trace(probe, metric=metric, key_hash=key_hash)
        try:
            from autotune.tune.probe_inputs import inputs_from_probe

            target_ns = inputs_from_probe(probe).target_exec_ns
        except AutotuneError:
            target_ns = None
    else:
        trace = synthetic_trace(n_keys=int(synthetic_keys), seed=seed)
    settings = BenchSettings(map_slots=sizes, widths=ws, rounds=rounds, round_s=round_ms / 1000.0)
    host = current_host()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    total = len(sizes) * len(ws) * len(settings.layouts)
    with Progress(TextColumn("bench"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=err, disable=not err.is_terminal) as bar:
        task = bar.add_task("", total=total)
        res = run_bench(trace=trace, settings=settings, host=host, target_exec_ns=target_ns,
                        progress=lambda what: bar.update(task, advance=1, description=what))
    doc = res.to_dict()
    write_json_atomic(out_dir / "bench.json", doc)
    write_text_atomic(out_dir / "bench.md", render_bench_md(res))
    if host:
        write_json_atomic(out_dir / "host-profile.json", host)
    if json_out:
        print_json(doc)
        return
    for r in res.ratios():
        if "paper_throughput_ratio" in r:
            out.print(f"{r['map_slots']:>10} slots: flat/two-level map work {r['map_work_ratio']:.2f}x"
                      + (f", modelled throughput {r['throughput_ratio']:.2f}x" if "throughput_ratio" in r else "")
                      + f" (BigMap: {r['paper_throughput_ratio']}x)", highlight=False)
    shape = res.shape()
    if shape:
        out.print("growth smallest->largest map: " + ", ".join(f"{k} {v['growth']:.1f}x" for k, v in shape.items()),
                  highlight=False)
    out.print(f"wrote bench.json, bench.md{', host-profile.json' if host else ''} to {out_dir}/ ({res.elapsed_s:.0f} s)",
              highlight=False)
