"""libjpeg-turbo as a real third-party target: an image decoder (the race's fourth library).

The recipe is libjpeg_turbo/build.sh (targets/script_target.py): libjpeg-turbo's own CMake build
(``libturbojpeg.a``, SIMD off) and our harness libjpeg_turbo/libjpeg_turbo_harness.c.

    python tests/targets/libjpeg_turbo.py --source     # fetch (once) and print the source tree's path
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
LIBJPEG_TURBO = ScriptTarget(package="libjpeg-turbo", folder=Path(__file__).resolve().parent / "libjpeg_turbo",
                             harness="libjpeg_turbo_harness.c", proof="turbojpeg.h", source_var="LIBJPEG_TURBO_SRC",
                             cflags=DEFAULT_CFLAGS)
BUILD_SCRIPT = LIBJPEG_TURBO.build_script
HARNESS_SOURCE = LIBJPEG_TURBO.harness_source

__all__ = ["BUILD_SCRIPT", "DEFAULT_CFLAGS", "HARNESS_SOURCE", "LIBJPEG_TURBO", "TargetUnavailable",
           "libjpeg_turbo_sample_inputs", "libjpeg_turbo_source_dir"]


libjpeg_turbo_source_dir = LIBJPEG_TURBO.source_dir  # the unpacked upstream tree, fetched once


def libjpeg_turbo_sample_inputs() -> list[Path]:
    """The JPEG files libjpeg-turbo's tree ships (testimages/*.jpg)."""
    return [p for p in sorted((LIBJPEG_TURBO.source_dir() / "testimages").glob("*.jpg")) if p.is_file()]


if __name__ == "__main__":
    sys.exit(LIBJPEG_TURBO.main(sys.argv[1:]))
