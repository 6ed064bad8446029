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


def seeds_fixture(target, package: str):
    """A module-scoped pytest fixture of ``target``'s sample inputs as a seed directory (sample_seeds;
    ``package`` names the Debian source package in the skip message): ``seeds = seeds_fixture(...)``."""
    import pytest

    @pytest.fixture(scope="module")
    def seeds(tmp_path_factory) -> Path:
        return sample_seeds(tmp_path_factory.mktemp(f"{package}-seeds"), target.sample_inputs, package)

    return seeds


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


def assert_wrapper_built(library: Path, harness: Path) -> None:
    """CMake compiled ``library`` through the wrapper (instrumented, no runtime inside it), and the
    harness holds the driver and the runtime."""
    assert "__sanitizer_cov_trace_pc_guard" in symbols(library, "--undefined-only")
    assert {"LLVMFuzzerTestOneInput", "main", "__sanitizer_cov_trace_pc_guard"} <= symbols(harness, "--defined-only")


def assert_like_maps(ours: Path, afl: Path, seeds: Path, work: Path, *, min_slots: int, min_hit: int) -> None:
    """One library and harness under two trace-pc-guard passes (ours and afl-clang-fast's), run by the
    real afl-showmap over ``seeds``: maps of a like size (each over ``min_slots``), and the seeds reach
    a like share of each (over ``min_hit`` edges; our build also counts the driver's blocks)."""
    hit_ours, size_ours = showmap(ours, seeds, work / "ours")
    hit_afl, size_afl = showmap(afl, seeds, work / "afl")
    assert size_ours > min_slots and size_afl > min_slots
    assert 0.67 < size_ours / size_afl < 1.5
    assert hit_ours > min_hit and hit_afl > min_hit
    assert 0.67 < hit_ours / hit_afl < 1.5
