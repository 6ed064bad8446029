"""`autotune cc` and `autotune c++`: the compiler wrapper (see autotune.cc), every argument passed through."""

from __future__ import annotations

import typer

from autotune import cc

_PASS_THROUGH = {
    "allow_extra_args": True,
    "ignore_unknown_options": True,
    "allow_interspersed_args": False,
    "help_option_names": [],  # --help goes to the compiler too
}


def register(app: typer.Typer) -> None:
    @app.command("cc", context_settings=_PASS_THROUGH, add_help_option=False,
                 help="Run clang with autotune's coverage instrumentation and runtime (use as CC).")
    def cc_cmd(ctx: typer.Context) -> None:
        raise typer.Exit(cc.run(list(ctx.args), cxx=False, prog="autotune cc"))

    @app.command("c++", context_settings=_PASS_THROUGH, add_help_option=False,
                 help="Run clang++ with autotune's coverage instrumentation and runtime (use as CXX).")
    def cxx_cmd(ctx: typer.Context) -> None:
        raise typer.Exit(cc.run(list(ctx.args), cxx=True, prog="autotune c++"))
