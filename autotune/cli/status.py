"""`autotune status OUT`: a running or finished campaign of afl-fuzz instances at a glance."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autotune.afl import base_env
from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import JsonOpt, TargetOptions, option_group
from autotune.io import write_bytes_atomic
from autotune.portfolio.plot import render_union_plot

HELP = (
    "A running or finished afl-fuzz campaign at a glance, like afl-whatsup: per instance execs/s, queue, "
    "crashes, last find, alive or not. With the target's recipe (--demo, --source, --build-script), "
    "everything every instance kept is replayed through one yardstick (AFL++'s PCGUARD build): the union's "
    "edges, coverage over time (--plot) and who found what first. OUT is afl-fuzz's output directory (-o)."
)


@command("status", HELP)
@option_group("target", TargetOptions, omit=("harness", "corpus"))
def status_cmd(
    out_dirs: Annotated[list[Path], typer.Argument(help="afl-fuzz's output directory (-o) of the campaign; several "
                                                         "machines' roots for a portfolio across machines.")],
    target: TargetOptions = TargetOptions(),
    plot: Annotated[Path | None, typer.Option("--plot", help="Write the union's coverage over time as a PNG.")] = None,
    json_out: JsonOpt = False,
) -> None:
    from autotune.portfolio.status import portfolio_status

    spec = target.recipe()
    yard = None
    if spec is not None:
        from autotune.trials import choose_yardstick

        yard = choose_yardstick(spec=spec, env=base_env())
    doc = portfolio_status(list(out_dirs), yardstick=yard)
    if plot is not None and "union" in doc:
        write_bytes_atomic(plot, render_union_plot(doc))
        doc["plot"] = str(plot)
    if json_out:
        print_json(doc)
        return
    out.print(f"{'instance':<16} {'state':<6} {'execs/s':>9} {'execs':>12} {'queue':>6} {'crashes':>7} "
              f"{'hangs':>5} {'last find':>10} {'run time':>9}", highlight=False)
    by = (doc.get("union") or {}).get("by_instance") or {}
    for i in doc["instances"]:
        last = "-" if i["last_find_s"] is None else _dur(i["last_find_s"]) + " ago"
        line = (f"{i['name']:<16} {'alive' if i['alive'] else 'done':<6} {i['execs_per_s']:>9,.0f} "
                f"{i['execs_done']:>12,} {i['queue']:>6,} {i['crashes']:>7,} {i['hangs']:>5,} {last:>10} "
                f"{_dur(i['run_time_s']):>9}")
        if i["name"] in by:
            b = by[i["name"]]
            line += f"  own finds {b['edges']:,} edges, first to {b['first']:,}, alone on {b['only']:,}"
        out.print(line, highlight=False, soft_wrap=True)
    t = doc["total"]
    out.print(f"total: {t['alive']} alive, {t['execs_per_s']:,.0f} execs/s, {t['execs_done']:,} execs, "
              f"{t['crashes']:,} crashes", highlight=False)
    if "union" in doc:
        u = doc["union"]
        out.print(f"union ({u['kind']} yardstick): {u['edges']:,} {u['unit']} over {u['inputs']:,} kept inputs",
                  highlight=False, soft_wrap=True)
    if doc.get("plot"):
        out.print(f"plot: {doc['plot']}", highlight=False, soft_wrap=True)
    for w in doc.get("warnings", ()):
        err.print(f"[yellow]warning:[/] {w}", highlight=False, soft_wrap=True)


def _dur(s: int) -> str:
    h, rem = divmod(int(s), 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s"
