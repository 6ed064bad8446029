"""The `autotune` typer app: global options, and the commands of each pipeline stage."""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from autotune import __version__
from autotune.cli.common import register, state

app = typer.Typer(
    name="autotune",
    help="Tune the coverage map of an AFL++ campaign (size, counter width, metric, layout) "
    "to the target and the host.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"autotune {__version__}")
        raise typer.Exit(0)


@app.callback()
def main(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    state.debug = debug


# One module per command, in pipeline order (autotune.cli.common.register: how each is registered).
COMMANDS = ["run", "profile", "cc", "probe", "bench", "tune", "race", "validate", "preflight", "compare", "portfolio", "bugs",
            "status"]

for _name in COMMANDS:  # every command module must import: a missing one is a broken install, said at once
    register(app, importlib.import_module(f"autotune.cli.{_name}"))


def run() -> None:
    app()
