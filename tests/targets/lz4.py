"""lz4 as a real third-party target, for the end-to-end tests of every stage and the benchmarks.

The source comes from Debian's source package (``apt-get source lz4`` with a private, temporary
apt configuration: targets/debsrc.py), unpacked once into the autotune cache. The one recipe is
the OSS-Fuzz-style build script lz4/build.sh: lz4's own Makefile for the library (``make -C lib
liblz4.a``, so the wrapper works as a real build system's ``CC``) and our harness
(lz4/lz4_harness.c, an ``LLVMFuzzerTestOneInput``) linked through ``$LIB_FUZZING_ENGINE``. It is
what ``autotune validate/compare/race --build-script`` build, and here it runs through
``autotune.target.build`` with any compiler kind:

- ``autotune``: ``autotune-cc`` (``instrument``: its ``AUTOTUNE_CC_INSTRUMENT``, default full);
- ``plain``: clang without instrumentation, linked with our driver and runtime (the baseline);
- ``afl``: afl-clang-fast under the caller's AFL_* build variables (none: AFL++'s default).

Builds are cached by autotune.target under a digest of the recipe (script, harness, flags),
compiler and variables, so every test of a run that asks for one variant shares one build (the
tests' cache is one per session: tests/conftest.py), validate's and the yardstick's included.

    python tests/targets/lz4.py --source     # fetch (once) and print the source tree's path
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Mapping

if __name__ == "__main__":  # run as a script: the repository's root and tests/ on the path
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from autotune.paths import cache_dir  # noqa: E402

try:  # imported as targets.* (tests) or tests.targets.* (benchmarks)
    from .debsrc import SourceUnavailable, cached_source_tree
except ImportError:  # run as a script
    from targets.debsrc import SourceUnavailable, cached_source_tree  # noqa: E402

PACKAGE = "lz4"
HERE = Path(__file__).resolve().parent / "lz4"
BUILD_SCRIPT = HERE / "build.sh"
HARNESS_SOURCE = HERE / "lz4_harness.c"
# The tests' builds: -O1 compiles lz4 in about half the CPU time of lz4's own -O2 (Debian's patch
# 0002), which the benchmarks pass (LZ4_OWN_CFLAGS) to measure the program users build.
DEFAULT_CFLAGS = "-O1 -g"
LZ4_OWN_CFLAGS = "-O2 -g"


class TargetUnavailable(Exception):
    """The target's source cannot be fetched on this machine (no apt-get source)."""


def lz4_source_dir() -> Path:
    """The unpacked upstream lz4 tree (Debian's source package), fetched once per cache dir.

    Raises TargetUnavailable when apt-get source cannot fetch or unpack it.
    """
    try:
        return cached_source_tree(PACKAGE, cache=cache_dir() / "targets", proof="lib/lz4.h")
    except SourceUnavailable as exc:
        raise TargetUnavailable(str(exc)) from exc


def lz4_sample_inputs() -> list[Path]:
    """The sample inputs lz4's source tree ships: its golden frame samples and its documents."""
    src = lz4_source_dir()
    files = sorted((src / "tests" / "goldenSamples").glob("*"))
    files += [src / "README.md", src / "NEWS", src / "LICENSE"]
    files += sorted((src / "doc").glob("*.md"))
    return [p for p in files if p.is_file()]


def lz4_spec(cflags: str = DEFAULT_CFLAGS):
    """The recipe, exactly as ``--build-script lz4/build.sh --source lz4/lz4_harness.c --cflags
    CFLAGS`` gives it to validate/compare/race/run (so their builds and these are one)."""
    from autotune.target import make_spec

    return make_spec(script=BUILD_SCRIPT, sources=[HARNESS_SOURCE], cflags=cflags)


def lz4_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the build script needs: ``autotune.afl.base_env`` of the caller's, plus LZ4_SRC."""
    from autotune.afl import base_env

    return {**base_env(env), "LZ4_SRC": str(lz4_source_dir())}


def build_lz4_harness(*, cc_kind: str = "autotune", afl_env: Mapping[str, str] | None = None,
                      instrument: str = "full", cflags: str = DEFAULT_CFLAGS) -> Path:
    """The lz4 harness built by build.sh with ``cc_kind`` (built on first use, then cached)."""
    from autotune.target import build

    if afl_env and cc_kind != "afl":
        raise ValueError("afl_env applies to cc_kind='afl' only")
    if instrument != "full" and cc_kind != "autotune":
        raise ValueError("instrument applies to cc_kind='autotune' only")
    build_vars = {"AUTOTUNE_CC_INSTRUMENT": instrument} if cc_kind == "autotune" and instrument != "full" else {}
    build_vars.update(afl_env or {})
    return build(spec=lz4_spec(cflags), cc_kind=cc_kind, build_vars=build_vars, env=lz4_env())


def lz4_build_tree(harness: Path) -> Path:
    """The lz4 tree a build of build.sh compiled (``$WORK/lz4``: lib/liblz4.a and its objects)."""
    return harness.parent / "work" / "lz4"


def main(argv: list[str] | None = None) -> int:
    """python tests/targets/lz4.py --source: print the unpacked source tree (build.sh's LZ4_SRC)."""
    if (argv if argv is not None else sys.argv[1:]) != ["--source"]:
        print("usage: python tests/targets/lz4.py --source", file=sys.stderr)
        return 2
    try:
        print(lz4_source_dir())
    except TargetUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
