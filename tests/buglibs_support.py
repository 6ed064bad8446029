"""The bug benchmark's loader (benchmarks/bugs/buglibs.py) for the tests, and one build per library
per test session (the plain clang build, with our driver: each file argument is run once)."""

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


@functools.cache
def _build(name: str, cc_kind: str) -> Path | str:
    try:
        return LIBRARIES[name].build(cc_kind=cc_kind)
    except buglibs.LibraryUnavailable as exc:
        return f"{name}'s source cannot be fetched here: {exc}"


def built(name: str, cc_kind: str = "plain") -> Path:
    """The library's harness with its canaries, built once per session (autotune.target's cache);
    skips the test when Debian's archive cannot be reached."""
    got = _build(name, cc_kind)
    if isinstance(got, str):
        pytest.skip(got)
    return got
