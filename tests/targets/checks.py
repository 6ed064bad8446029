"""What the real-library tests check of a build: its symbols (nm) and what the real afl-showmap
sees of its seeds (validate's own run and parse, autotune.validate.afl_runs)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def symbols(binary: Path, which: str) -> set[str]:
    """nm's symbol names (demangled) of ``binary``, ``which`` is --defined-only or --undefined-only."""
    out = subprocess.run(["nm", "-C", which, str(binary)], capture_output=True, text=True, timeout=120).stdout
    return {line.split(None, 2)[-1] for line in out.splitlines() if line.strip()}


def showmap(binary: Path, seeds: Path, work: Path) -> tuple[int, int]:
    """(edges hit over all seeds, the map's size) by validate's afl-showmap -C run (guard metric for
    our runtime's builds; AFL++'s builds ignore it)."""
    from autotune.afl import base_env
    from autotune.validate.afl_runs import showmap as afl_showmap

    work.mkdir()
    r = afl_showmap(binary=binary, corpus=seeds, env={**base_env(), "AUTOTUNE_METRIC": "guard"}, work=work)
    return r.tuples, r.map_bytes
