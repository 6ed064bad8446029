"""`autotune validate DIR`: the tuned configuration under the real AFL++, predicted vs measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import FuzzTimeOpt, JsonOpt, ProbeDirOpt, TargetOptions, option_group

HELP = (
    "Check a tuned directory against the real AFL++: build the target with afl-clang-fast under "
    "afl-build.env, with AFL++'s defaults (PCGUARD), and with `autotune cc`; replay the probe's corpus "
    "with afl-showmap and fuzz each for --fuzz-time seconds with afl-fuzz (afl-run.env / autotune-run.env). "
    "Prints predicted vs measured map occupancy and execs/s side by side and writes DIR/validate.json. "
    "The probe is the one the recommendation (recommendation.json) names, unless --probe names another.\n\n"
    "The target's recipe: the probe's demo, or --source files (with --cflags/--ldflags), or an OSS-Fuzz "
    "style --build-script (uses $CC $CXX $CFLAGS $LIB_FUZZING_ENGINE and writes $OUT/fuzzer)."
)


@command("validate", HELP)
@option_group("target", TargetOptions, omit=("harness", "corpus"))
def validate_cmd(
    tuned_dir: Annotated[Path, typer.Argument(help="The recommendation: the race directory of `autotune run` "
                                                   "(OUT/race, or `autotune race --out`), or the --out of `autotune tune`.")],
    target: TargetOptions = TargetOptions(),
    probe_dir: ProbeDirOpt = None,
    fuzz_s: FuzzTimeOpt = 10,
    json_out: JsonOpt = False,
) -> None:
    from autotune.validate import run_validate
    from autotune.validate.render import validate_notes, validate_table

    spec = target.recipe()
    res = run_validate(tuned_dir=tuned_dir, spec=spec, fuzz_s=fuzz_s, probe_dir=probe_dir,
                       progress=lambda m: err.print(f"[dim]{m}[/]", highlight=False))
    if json_out:
        print_json(res.to_dict())
        return
    out.print(validate_table(res))
    for line in validate_notes(res):
        out.print(f"- {line}", highlight=False, soft_wrap=True)
    out.print(f"written: {Path(res.tuned_dir) / 'validate.json'}", highlight=False)
