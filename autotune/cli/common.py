"""What every command shares: the two consoles, --debug state, error handling, registration, JSON
output. The options several commands take are in autotune.cli.options."""

from __future__ import annotations

import functools
import json
import sys
import traceback
from types import ModuleType
from typing import Any, Callable

import typer
from rich.console import Console

from autotune.errors import AutotuneError

# Results on stdout, diagnostics on stderr. Soft wrap: a long line (a path, a load command) is
# never broken by inserted newlines, so it can be copied from a terminal, a log or a pipe whole;
# tables still fit the width.
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


class State:
    debug: bool = False


state = State()


def handle_errors(func: Callable) -> Callable:
    """Turn AutotuneError (and unexpected errors) into a one-line message and an exit code."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except AutotuneError as exc:
            if state.debug:
                traceback.print_exc()
            err.print(f"[bold red]error:[/] {exc.message}", highlight=False, markup=True, soft_wrap=True)
            if exc.fix:
                err.print(f"  fix: {exc.fix}", highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code)
        except KeyboardInterrupt:
            err.print("interrupted")
            raise typer.Exit(130)
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as exc:  # an autotune bug: say so, traceback only with --debug
            if state.debug:
                traceback.print_exc()
            err.print(f"[bold red]internal error:[/] {type(exc).__name__}: {exc}", highlight=False,
                      soft_wrap=True)
            err.print("  run again with --debug for the traceback, and report it", highlight=False)
            raise typer.Exit(1)

    return wrapper


_COMMANDS: dict[str, list[Callable[[typer.Typer], None]]] = {}  # module name -> a registrar per `command` it made


def command(name: str, help: str | None = None) -> Callable[[Callable], Callable]:
    """Make a function the command ``autotune NAME``: its errors handled (`handle_errors`), registered
    with ``help`` (None: typer's default) by `register` when the app registers its module."""

    def decorate(func: Callable) -> Callable:
        wrapped = handle_errors(func)
        _COMMANDS.setdefault(func.__module__, []).append(
            lambda app: app.command(name, help=help)(wrapped))
        return wrapped

    return decorate


def register(app: typer.Typer, module: ModuleType) -> None:
    """Register a command module's commands on ``app``: those it made with `command`, or, for a module
    whose commands need more (cc's pass-through arguments, the bugs group), its own ``register(app)``."""
    own = getattr(module, "register", None)
    if own is not None:
        own(app)
        return
    for add in _COMMANDS.get(module.__name__, []):
        add(app)


def print_json(obj: Any) -> None:
    """Print a document as JSON on stdout (plain, no rich markup)."""
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")
    sys.stdout.flush()
