"""`autotune validate DIR`: the tuned configuration under the real AFL++, predicted vs measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import (CflagsOpt, CxxOpt, DemoOpt, JsonOpt, LdflagsOpt, SourceOpt, err, handle_errors, out, print_json)

HELP = (
    "Check a tuned directory against the real AFL++: build the target with afl-clang-fast under "
    "afl-build.env, with AFL++'s defaults (PCGUARD), and with `autotune cc`; replay the probe's corpus "
    "with afl-showmap and fuzz each for --time seconds with afl-fuzz (afl-run.env / autotune-run.env). "
    "Prints predicted vs measured map occupancy and execs/s side by side and writes DIR/validate.json.\n\n"
    "The target: the probe's demo, or --source files (with --cflags/--ldflags), or an OSS-Fuzz style "
    "--build-script (uses $CC $CXX $CFLAGS $LIB_FUZZING_ENGINE and writes $OUT/fuzzer)."
)


def register(app: typer.Typer) -> None:
    @app.command("validate", help=HELP)
    @handle_errors
    def validate_cmd(
        tuned_dir: Annotated[Path, typer.Argument(help="The --out directory of `autotune tune`.")],
        source: SourceOpt = None,
        cflags: CflagsOpt = "-O2 -g",
        ldflags: LdflagsOpt = "",
        cxx: CxxOpt = False,
        build_script: Annotated[Optional[Path], typer.Option("--build-script", help="OSS-Fuzz style build script.")] = None,
        demo: DemoOpt = False,
        probe_dir: Annotated[Optional[Path], typer.Option("--probe", help="Probe directory (default: the one report.json names).")] = None,
        time_s: Annotated[int, typer.Option("--time", "-t", min=1, help="afl-fuzz time-box per variant (-V seconds).")] = 10,
        json_out: JsonOpt = False,
    ) -> None:
        from autotune.validate.render import validate_notes, validate_table
        from autotune.preflight.target import make_spec
        from autotune.validate import run_validate

        spec = make_spec(demo=demo, sources=list(source or []), cflags=cflags, ldflags=ldflags, cxx=cxx,
                         script=build_script)
        res = run_validate(tuned_dir=tuned_dir, spec=spec, fuzz_s=time_s, probe_dir=probe_dir,
                           progress=lambda m: err.print(f"[dim]{m}[/]", highlight=False))
        if json_out:
            print_json(res.to_dict())
            return
        out.print(validate_table(res))
        for line in validate_notes(res):
            out.print(f"- {line}", highlight=False, soft_wrap=True)
        out.print(f"written: {Path(res.tuned_dir) / 'validate.json'}", highlight=False)
