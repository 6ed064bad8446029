"""lz4 as a real third-party target, for the end-to-end tests of every stage and the benchmarks.

The recipe is lz4/build.sh (targets/script_target.py): lz4's own Makefile for the library
(``make -C lib liblz4.a``, so the wrapper works as a real build system's ``CC``) and our harness
lz4/lz4_harness.c, an ``LLVMFuzzerTestOneInput``.

    python tests/targets/lz4.py --source     # fetch (once) and print the source tree's path
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

# The tests' builds: -O1 compiles lz4 in about half the CPU time of lz4's own -O2 (Debian's patch
# 0002), which the benchmarks pass (LZ4_OWN_CFLAGS) to measure the program users build.
DEFAULT_CFLAGS = "-O1 -g"
LZ4_OWN_CFLAGS = "-O2 -g"
LZ4 = ScriptTarget(package="lz4", folder=Path(__file__).resolve().parent / "lz4", harness="lz4_harness.c",
                   proof="lib/lz4.h", source_var="LZ4_SRC", cflags=DEFAULT_CFLAGS)
BUILD_SCRIPT = LZ4.build_script
HARNESS_SOURCE = LZ4.harness_source

__all__ = ["BUILD_SCRIPT", "DEFAULT_CFLAGS", "HARNESS_SOURCE", "LZ4", "LZ4_OWN_CFLAGS", "TargetUnavailable",
           "build_lz4_harness", "lz4_build_tree", "lz4_sample_inputs", "lz4_source_dir"]


lz4_source_dir = LZ4.source_dir  # the unpacked upstream tree, fetched once


def lz4_sample_inputs() -> list[Path]:
    """The sample inputs lz4's source tree ships: its golden frame samples and its documents."""
    src = LZ4.source_dir()
    files = sorted((src / "tests" / "goldenSamples").glob("*"))
    files += [src / "README.md", src / "NEWS", src / "LICENSE"]
    files += sorted((src / "doc").glob("*.md"))
    return [p for p in files if p.is_file()]


build_lz4_harness = LZ4.build_harness  # the harness built by build.sh (ScriptTarget.build_harness)


def lz4_build_tree(harness: Path) -> Path:
    """The lz4 tree a build of build.sh compiled (``$WORK/lz4``: lib/liblz4.a and its objects)."""
    return harness.parent / "work" / "lz4"


if __name__ == "__main__":
    sys.exit(LZ4.main(sys.argv[1:]))
