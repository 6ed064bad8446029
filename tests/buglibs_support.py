"""The bug benchmark's loader (benchmarks/bugs/buglibs.py) for the tests, and one build per library
per test session (the plain clang build, with our driver: each file argument is run once).

The tests build at -O0 without debug information: a canary's condition is source-level C and reads
the same at every optimisation level, and -O0 compiles the seven libraries in a fraction of the time
(SQLite's amalgamation above all). Campaigns use buglibs.DEFAULT_CFLAGS."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

BUGS_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "bugs"
if str(BUGS_DIR) not in sys.path:
    sys.path.insert(0, str(BUGS_DIR))

import buglibs  # noqa: E402

LIBRARIES = buglibs.load_manifest()


TEST_CFLAGS = "-O0"


@functools.cache
def _build(name: str, cc_kind: str) -> Path | str:
    try:
        return LIBRARIES[name].build(cc_kind=cc_kind, cflags=TEST_CFLAGS)
    except buglibs.LibraryUnavailable as exc:
        return f"{name}'s source cannot be fetched here: {exc}"


def built(name: str, cc_kind: str = "plain") -> Path:
    """The library's harness with its canaries, built once per session (autotune.target's cache);
    skips the test when Debian's archive cannot be reached."""
    got = _build(name, cc_kind)
    if isinstance(got, str):
        pytest.skip(got)
    return got
