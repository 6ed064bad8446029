"""libyaml as a real third-party target with many small functions (benchmarks, compare, race).

The source comes from Debian's source package (``apt-get source libyaml`` with a private,
temporary apt configuration: targets/debsrc.py), unpacked once into the autotune cache. The one
recipe is the OSS-Fuzz-style build script libyaml/build.sh: libyaml's own CMake build
(``libyaml.a``) and our harness (libyaml/libyaml_harness.c) linked through ``-fsanitize=fuzzer``.
The same script is what ``autotune compare/validate --build-script`` and the race build; here
it runs through ``autotune.target.build`` (cached by a digest of the script, the
harness, the compiler, its variables and our runtime) with ``autotune-cc`` (any
``AUTOTUNE_CC_INSTRUMENT``) or ``afl-clang-fast`` (the caller's AFL_* build variables).

    python tests/targets/libyaml.py --source     # fetch (once) and print the source tree's path
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

PACKAGE = "libyaml"
HERE = Path(__file__).resolve().parent / "libyaml"
BUILD_SCRIPT = HERE / "build.sh"
HARNESS_SOURCE = HERE / "libyaml_harness.c"
DEFAULT_CFLAGS = "-O2 -g"


class TargetUnavailable(Exception):
    """libyaml's source cannot be fetched on this machine."""


def libyaml_source_dir() -> Path:
    """The unpacked upstream libyaml tree, fetched once per cache dir (TargetUnavailable if not)."""
    try:
        return cached_source_tree(PACKAGE, cache=cache_dir() / "targets", proof="include/yaml.h")
    except SourceUnavailable as exc:
        raise TargetUnavailable(str(exc)) from exc


def libyaml_sample_inputs() -> list[Path]:
    """The YAML files libyaml's tree ships (examples/, regression-inputs/)."""
    src = libyaml_source_dir()
    files = sorted((src / "examples").glob("*.yaml")) + sorted((src / "regression-inputs").glob("*"))
    return [p for p in files if p.is_file()]


def libyaml_spec(cflags: str = DEFAULT_CFLAGS):
    """The recipe, exactly as ``--build-script libyaml/build.sh --source libyaml/libyaml_harness.c
    --cflags CFLAGS`` gives it to validate/compare/race/run."""
    from autotune.target import make_spec

    return make_spec(script=BUILD_SCRIPT, sources=[HARNESS_SOURCE], cflags=cflags)


def libyaml_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the build script needs: ``autotune.afl.base_env`` of the caller's, plus LIBYAML_SRC."""
    from autotune.afl import base_env

    return {**base_env(env), "LIBYAML_SRC": str(libyaml_source_dir())}


def build_libyaml_harness(*, cc_kind: str = "autotune", afl_env: Mapping[str, str] | None = None,
                          instrument: str = "full", cflags: str = DEFAULT_CFLAGS) -> Path:
    """The harness built by build.sh with ``cc_kind`` (autotune: the wrapper with
    ``AUTOTUNE_CC_INSTRUMENT=instrument``; afl: afl-clang-fast with ``afl_env``; plain: clang)."""
    from autotune.target import build

    if afl_env and cc_kind != "afl":
        raise ValueError("afl_env applies to cc_kind='afl' only")
    if instrument != "full" and cc_kind != "autotune":
        raise ValueError("instrument applies to cc_kind='autotune' only")
    build_vars = {"AUTOTUNE_CC_INSTRUMENT": instrument} if cc_kind == "autotune" and instrument != "full" else {}
    build_vars.update(afl_env or {})
    return build(spec=libyaml_spec(cflags), cc_kind=cc_kind, build_vars=build_vars, env=libyaml_env())


if __name__ == "__main__":
    if sys.argv[1:] != ["--source"]:
        print("usage: python tests/targets/libyaml.py --source", file=sys.stderr)
        sys.exit(2)
    try:
        print(libyaml_source_dir())
    except TargetUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
