"""`autotune preflight`: does the tuned configuration still fit? Exit 0 fits, 1 could not run, 2 does not fit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import (CflagsOpt, CorpusOpt, CxxOpt, DemoOpt, HarnessArg, JsonOpt, LdflagsOpt, ProcfsRootOpt, SeedOpt, SourceOpt, SysfsRootOpt, err, handle_errors, out, print_json)

HELP = (
    "Check that a tuned configuration still fits the target, its corpus and this host: re-run a short "
    "probe (--budget seconds) and check the collision rate and counter overflow at the configured size "
    "and width, that the binaries were built as afl-build.env says, that AFL++ knows every variable of "
    "the env files, the host's caches against the tuned host's, and the host settings afl-fuzz checks.\n\n"
    "Exit 0: fits (warnings allowed); 1: could not run (missing AFL++, corrupt tuned directory, bad "
    "target); 2: does not fit. --github prints GitHub Actions annotations."
)


def register(app: typer.Typer) -> None:
    @app.command("preflight", help=HELP)
    @handle_errors
    def preflight_cmd(
        tuned_dir: Annotated[Path, typer.Argument(help="The --out directory of `autotune tune`.")],
        harness: HarnessArg = None,
        source: SourceOpt = None,
        cflags: CflagsOpt = "-O2 -g",
        ldflags: LdflagsOpt = "",
        cxx: CxxOpt = False,
        demo: DemoOpt = False,
        corpus: CorpusOpt = None,
        budget: Annotated[float, typer.Option("--budget", "-t", min=1.0, help="Seconds for the short probe.")] = 30.0,
        afl_binary: Annotated[Optional[Path], typer.Option("--afl-binary", help="afl-cc build to check against afl-build.env (its .build.json record).")] = None,
        seed: SeedOpt = 0,
        github: Annotated[bool, typer.Option("--github", help="Print GitHub Actions annotations (::error file=...::).")] = False,
        procfs_root: ProcfsRootOpt = Path("/proc"),
        sysfs_root: SysfsRootOpt = Path("/sys"),
        json_out: JsonOpt = False,
    ) -> None:
        from autotune.probe.target import resolve_target
        from autotune.errors import AutotuneError
        from autotune.preflight.preflight import github_annotations, run_preflight
        from autotune.preflight.render import preflight_table
        from autotune.preflight.tuned import load_tuned

        load_tuned(tuned_dir)  # a corrupt directory fails before anything is built
        if corpus is not None and not corpus.is_dir():
            raise AutotuneError(f"corpus {corpus} is not a directory", fix="pass the corpus directory with --corpus")
        binary, corpus_dir = resolve_target(harness=harness, sources=list(source or []), cflags=cflags,
                                            ldflags=ldflags, cxx=cxx, demo=demo, corpus=corpus)
        err.print(f"[dim]preflight: probing {binary} for {budget:g} s[/]", highlight=False)
        res = run_preflight(tuned_dir=tuned_dir, harness=binary, corpus_dir=corpus_dir, budget_s=budget, seed=seed,
                            afl_binary=afl_binary, procfs_root=procfs_root, sysfs_root=sysfs_root, demo=demo)
        if json_out:
            print_json(res.to_dict())
        else:
            out.print(preflight_table(res))
            out.print(res.verdict, highlight=False)
        if github:
            for line in github_annotations(res):
                typer.echo(line)
        raise typer.Exit(res.exit_code)
