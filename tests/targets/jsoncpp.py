"""jsoncpp as a real third-party target: a C++ JSON library (Debian's source package libjsoncpp).

The recipe is jsoncpp/build.sh (targets/script_target.py): jsoncpp's own CMake build (the static
library) and our C++ harness jsoncpp/jsoncpp_harness.cpp, so it also exercises the CXX side of every
build kind (afl-clang-fast++, `autotune cc --cxx`).

    python tests/targets/jsoncpp.py --source     # fetch (once) and print the source tree's path
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
JSONCPP = ScriptTarget(package="libjsoncpp", folder=Path(__file__).resolve().parent / "jsoncpp",
                       harness="jsoncpp_harness.cpp", proof="include/json/reader.h", source_var="JSONCPP_SRC",
                       cflags=DEFAULT_CFLAGS)
BUILD_SCRIPT = JSONCPP.build_script
HARNESS_SOURCE = JSONCPP.harness_source

__all__ = ["BUILD_SCRIPT", "DEFAULT_CFLAGS", "HARNESS_SOURCE", "JSONCPP", "TargetUnavailable",
           "jsoncpp_sample_inputs", "jsoncpp_source_dir"]


jsoncpp_source_dir = JSONCPP.source_dir  # the unpacked upstream tree, fetched once


def jsoncpp_sample_inputs() -> list[Path]:
    """The JSON documents jsoncpp's tree ships for its own tests (test/data/*.json: valid and invalid)."""
    return [p for p in sorted((JSONCPP.source_dir() / "test" / "data").glob("*.json")) if p.is_file()]


if __name__ == "__main__":
    sys.exit(JSONCPP.main(sys.argv[1:]))
