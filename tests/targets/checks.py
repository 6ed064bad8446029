"""What the real-library tests share: the target's sample inputs as a seed directory, a build's
symbols (nm) and what the real afl-showmap sees of the seeds (validate's own run and parse,
autotune.validate.afl_runs)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Callable, Iterable


def sample_seeds(dest: Path, samples: Callable[[], Iterable[Path]], package: str) -> Path:
    """``samples()`` copied into ``dest`` (made here); the calling test is skipped when the target's
    Debian source package cannot be fetched on this machine."""
    import pytest

    from targets.script_target import TargetUnavailable

    try:
        files = list(samples())
    except TargetUnavailable as exc:
        pytest.skip(f"apt-get source {package} is impossible on this machine: {exc}")
    dest.mkdir(parents=True, exist_ok=True)
    for p in files:
        shutil.copy(p, dest / p.name)
    return dest


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
