"""`autotune preflight`: does the tuned configuration still fit? Exit 0 fits, 1 could not run, 2 does not fit."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import (JsonOpt, ProbeTimeOpt, ProcfsRootOpt, SeedOpt, SysfsRootOpt, TargetOptions,
                                  option_group)
from autotune.probe.options import ProbeSettings

HELP = (
    "Check that a tuned configuration still fits the target, its corpus and this host: re-run a short "
    "probe (--probe-time seconds) and check the collision rate and counter overflow at the configured size "
    "and width, that the binaries were built as afl-build.env says, that AFL++ knows every variable of "
    "the env files, the host's caches against the tuned host's, and the host settings afl-fuzz checks.\n\n"
    "Exit 0: fits (warnings allowed); 1: could not run (missing AFL++, corrupt tuned directory, bad "
    "target); 2: does not fit. --github prints GitHub Actions annotations."
)


@command("preflight", HELP)
@option_group("target", TargetOptions)
def preflight_cmd(
    tuned_dir: Annotated[Path, typer.Argument(help="The recommendation: the race directory of `autotune run` "
                                                   "(OUT/race, or `autotune race --out`), or the --out of `autotune tune`.")],
    target: TargetOptions = TargetOptions(),
    time_s: ProbeTimeOpt = 30.0,
    afl_binary: Annotated[Optional[Path], typer.Option("--afl-binary", help="afl-cc build to check against afl-build.env (its .build.json record).")] = None,
    seed: SeedOpt = 0,
    github: Annotated[bool, typer.Option("--github", help="Print GitHub Actions annotations (::error file=...::).")] = False,
    procfs_root: ProcfsRootOpt = Path("/proc"),
    sysfs_root: SysfsRootOpt = Path("/sys"),
    json_out: JsonOpt = False,
) -> None:
    from autotune.preflight.preflight import PreflightHost, github_annotations, run_preflight
    from autotune.preflight.render import preflight_table
    from autotune.preflight.tuned import load_tuned

    load_tuned(tuned_dir)  # a corrupt directory fails before anything is built
    corpus_dir = target.seeds(required=False)
    binary = target.probe_harness()
    err.print(f"[dim]preflight: probing {binary} for {time_s:g} s[/]", highlight=False)
    res = run_preflight(tuned_dir=tuned_dir, harness=binary, corpus_dir=corpus_dir,
                        probe=ProbeSettings(time_s=time_s, seed=seed),
                        host=PreflightHost(afl_binary=afl_binary, procfs_root=procfs_root, sysfs_root=sysfs_root),
                        demo=target.demo)
    if json_out:
        print_json(res.to_dict())
    else:
        out.print(preflight_table(res))
        out.print(res.verdict, highlight=False)
    if github:
        for line in github_annotations(res):
            typer.echo(line)
    raise typer.Exit(res.exit_code)
