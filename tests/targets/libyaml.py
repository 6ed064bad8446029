"""libyaml as a real third-party target with many small functions (benchmarks, compare, race).

The recipe is libyaml/build.sh (targets/script_target.py): libyaml's own CMake build
(``libyaml.a``) and our harness libyaml/libyaml_harness.c.

    python tests/targets/libyaml.py --source     # fetch (once) and print the source tree's path
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository's root and tests/ on the path
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

try:  # imported as targets.* (tests) or tests.targets.* (benchmarks)
    from .script_target import ScriptTarget, TargetUnavailable
except ImportError:  # run as a script
    from targets.script_target import ScriptTarget, TargetUnavailable  # noqa: E402

DEFAULT_CFLAGS = "-O2 -g"
LIBYAML = ScriptTarget(package="libyaml", folder=Path(__file__).resolve().parent / "libyaml",
                       harness="libyaml_harness.c", proof="include/yaml.h", source_var="LIBYAML_SRC",
                       cflags=DEFAULT_CFLAGS)
BUILD_SCRIPT = LIBYAML.build_script
HARNESS_SOURCE = LIBYAML.harness_source

__all__ = ["BUILD_SCRIPT", "DEFAULT_CFLAGS", "HARNESS_SOURCE", "LIBYAML", "TargetUnavailable",
           "build_libyaml_harness", "libyaml_sample_inputs", "libyaml_source_dir"]


libyaml_source_dir = LIBYAML.source_dir  # the unpacked upstream tree, fetched once


def libyaml_sample_inputs() -> list[Path]:
    """The YAML files libyaml's tree ships (examples/, regression-inputs/)."""
    src = LIBYAML.source_dir()
    files = sorted((src / "examples").glob("*.yaml")) + sorted((src / "regression-inputs").glob("*"))
    return [p for p in files if p.is_file()]


build_libyaml_harness = LIBYAML.build_harness  # the harness built by build.sh (ScriptTarget.build_harness)


if __name__ == "__main__":
    sys.exit(LIBYAML.main(sys.argv[1:]))
