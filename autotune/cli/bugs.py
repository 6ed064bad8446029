"""`autotune bugs ...`: known-bug canaries (kernels/canary.h). `bugs replay` attributes inputs to
the bugs they reach and trigger, by running a canary build of the target once per input."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autotune.cli.common import handle_errors, out, print_json
from autotune.cli.options import JsonOpt

HELP = "Known-bug canaries: which bugs inputs reach and trigger (a canary build of the target)."
REPLAY_HELP = (
    "Run the canary build of a target (a libFuzzer-style harness with AUTOTUNE_BUG canaries) once per "
    "INPUT, each with a fresh canary page and non-fatal canaries, and print per input the bugs it reached "
    "and triggered, and whether it crashed."
)


def register(app: typer.Typer) -> None:
    bugs = typer.Typer(name="bugs", help=HELP, no_args_is_help=True)
    bugs.command("replay", help=REPLAY_HELP)(replay_cmd)
    app.add_typer(bugs)


@handle_errors
def replay_cmd(
    inputs: Annotated[list[Path], typer.Argument(help="Input files to replay.")],
    binary: Annotated[Path, typer.Option("--binary", help="The canary build of the harness.")],
    timeout_s: Annotated[float, typer.Option("--timeout", help="Seconds per input before it is killed.")] = 5.0,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, help="Inputs replayed at once.")] = 1,
    json_out: JsonOpt = False,
) -> None:
    from autotune.bugs.page import replay

    results = replay(binary, inputs, timeout_s=timeout_s, jobs=jobs)
    if json_out:
        print_json({"binary": str(binary), "inputs": [r.to_dict() for r in results]})
        return
    out.print(f"{'input':<40} {'reached':<24} {'triggered':<24} {'crashed':<7}", highlight=False)
    for r in results:
        crashed = "timeout" if r.timed_out else ("yes" if r.crashed else "no")
        out.print(f"{r.path.name:<40} {','.join(sorted(r.reached)) or '-':<24} "
                  f"{','.join(sorted(r.triggered)) or '-':<24} {crashed:<7}", highlight=False)
    names = sorted(set().union(*(r.triggered for r in results))) if results else []
    out.print(f"{len(results)} inputs; triggered: {', '.join(names) or 'none'}", highlight=False)
