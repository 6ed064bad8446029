"""What every command shares: the two consoles, --debug state, error handling, shared options."""

from __future__ import annotations

import functools
import json
import sys
import traceback
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer
from rich.console import Console

from autotune.errors import AutotuneError

# Results on stdout, diagnostics on stderr.
out = Console()
err = Console(stderr=True)


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


def print_json(obj: Any) -> None:
    """Print a document as JSON on stdout (plain, no rich markup)."""
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")
    sys.stdout.flush()


# Options used by several commands, defined once.
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for every random choice.")]
OutDirOpt = Annotated[Path, typer.Option("--out", "-o", help="Output directory.")]
SysfsRootOpt = Annotated[Path, typer.Option("--sysfs-root", help="Root of the sysfs tree to read (tests use fake trees).")]
ProcfsRootOpt = Annotated[Path, typer.Option("--procfs-root", help="Root of the procfs tree to read.")]

# The target of probe, run, validate and preflight: a harness binary, its sources, or the demo.
HarnessArg = Annotated[Optional[Path], typer.Argument(help="Harness binary built with `autotune cc -fsanitize=fuzzer`.")]
SourceOpt = Annotated[Optional[list[Path]], typer.Option("--source", "-s", help="Harness source file (repeat); built with autotune cc.")]
CflagsOpt = Annotated[str, typer.Option("--cflags", help="Extra compiler flags for --source builds.")]
LdflagsOpt = Annotated[str, typer.Option("--ldflags", help="Extra linker flags for --source builds (e.g. -lz).")]
CxxOpt = Annotated[bool, typer.Option("--cxx", help="Build --source files as C++.")]
DemoOpt = Annotated[bool, typer.Option("--demo", help="The bundled demo target and its seeds.")]
CorpusOpt = Annotated[Optional[Path], typer.Option("--corpus", "-c", help="Seed corpus directory.")]
BuildScriptOpt = Annotated[Optional[Path], typer.Option(
    "--build-script", help="OSS-Fuzz style build script (uses $CC $CXX $CFLAGS $LIB_FUZZING_ENGINE, writes $OUT/fuzzer).")]
BudgetOpt = Annotated[float, typer.Option(
    "--budget", min=1.0, help="Wall seconds for the race in afl-fuzz (all trials, on --jobs cores).")]
RaceMetricsOpt = Annotated[str, typer.Option(
    "--metrics", help="Candidate metrics for the race, in priority order (comma list); the last are left out "
                      "when the budget is short.")]
RaceJobsOpt = Annotated[Optional[int], typer.Option(
    "--jobs", "-j", min=1, help="afl-fuzz trials at once, one per core (default: the cores).")]
RepeatsOpt = Annotated[int, typer.Option("--repeats", min=1, help="Trials per contestant and rung (paired seeds).")]
