"""A hang carries its coverage to afl-fuzz, as AFL++'s own build's does (issue 36).

afl-fuzz ends a timed-out child with AFL_KILL_SIGNAL (SIGKILL by default). AFL++'s build counts
into afl's map as it runs, so a killed child's map holds its path and afl-fuzz keeps distinct
hangs apart. Our guard build counts in the program and adds the counts into afl's map when an
execution ends: before, a killed child left an empty map, every hang looked the same and afl-fuzz
kept one. Now the guard kind links its counters onto pages of their own (kernels/guard_counters.ld)
and the runtime attaches afl's map over them: the counts are in afl's map as they happen, whatever
signal ends the child. Where afl's map is too large for those pages the runtime copies, and then the
runtime's AFL_KILL_SIGNAL=15 (afl.RUNTIME_AFL_VARS, in every trial's environment and env file of
ours) lets it add the counts on the signal before it dies.

tests/programs_afl/hangs.c has three hang paths behind "H" + a byte (mod 4: 1, 2, 3; 0 returns).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from autotune import afl
from autotune.target import build_harness
from autotune.trials import TrialSpec, run_trial
from test_guard import clean_env, output

PROGRAMS_AFL = Path(__file__).parent / "programs_afl"
AFL_FUZZ = shutil.which("afl-fuzz")
AFL_SHOWMAP = shutil.which("afl-showmap")
AFL_CC = shutil.which("afl-clang-fast")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (AFL_FUZZ and AFL_SHOWMAP and AFL_CC), reason="afl++ is not installed")]
HANGS = {"H1": 1, "H2": 2, "H3": 3}
GUARD = {"AUTOTUNE_METRIC": "guard"}  # the guard kind's metric


@pytest.fixture(scope="module")
def bins(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("hangs")
    src = PROGRAMS_AFL / "hangs.c"
    out = {"guard": build_harness(sources=[src], output=d / "hangs-guard", extra_cflags=["-O0"], kind="guard")}
    proc = subprocess.run([AFL_CC, "-O0", "-fsanitize=fuzzer", str(src), "-o", str(d / "hangs-afl")],
                          capture_output=True, text=True, timeout=300, env=clean_env())
    assert proc.returncode == 0, output(proc)
    out["afl"] = d / "hangs-afl"
    return out


def _hang_maps(binary: Path, tmp: Path, env: dict[str, str]) -> dict[str, frozenset[int]]:
    """afl-showmap -t 200 over the three hang inputs: the slots each killed child left in the map."""
    in_dir, out_dir = tmp / "in", tmp / "out"
    in_dir.mkdir(parents=True)
    for name in HANGS:
        (in_dir / name).write_bytes(name.encode())
    proc = subprocess.run([AFL_SHOWMAP, "-t", "200", "-i", str(in_dir), "-o", str(out_dir), "--", str(binary)],
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    maps = {}
    for name in HANGS:
        f = out_dir / name
        maps[name] = frozenset(int(ln.split(":")[0]) for ln in f.read_text().split()) if f.is_file() else frozenset()
    assert maps, output(proc)
    return maps


def test_the_runtime_marks_its_binaries_and_only_ours_get_its_kill_signal(bins):
    assert afl.has_runtime(str(bins["guard"])) and not afl.has_runtime(str(bins["afl"]))
    assert afl.runtime_afl_env(str(bins["guard"]), {}) == {"AFL_KILL_SIGNAL": "15"}
    assert afl.runtime_afl_env(str(bins["guard"]), {"AFL_KILL_SIGNAL": "10"}) == {}  # the user's own wins
    assert afl.runtime_afl_env(str(bins["afl"]), {}) == {}


def test_a_killed_child_leaves_its_hang_path_in_the_map(bins, tmp_path):
    """Each hang input's map under afl-showmap's timeout: distinct, non-empty, as AFL++'s build's."""
    theirs = _hang_maps(bins["afl"], tmp_path / "afl", clean_env())
    assert all(theirs.values()) and len(set(theirs.values())) == 3, theirs
    ours = _hang_maps(bins["guard"], tmp_path / "ours",
                      clean_env(**GUARD, **afl.runtime_afl_env(str(bins["guard"]), GUARD)))
    assert all(ours.values()) and len(set(ours.values())) == 3, ours
    # afl's default SIGKILL: nothing runs in a killed child, but the guard build's counters are afl's
    # map (kernels/guard_counters.ld, AUTOTUNE_AFL_GUARD_MAP=pages): the paths are there all the same.
    # Compared on the slots both runs hold: a hang loop's own slots come and go from run to run under
    # either signal (a CI run had H3's {14, 16} in one and not the other; 20 afl-showmap runs here:
    # H2's and H3's loop slots in 2 of 40 maps classified, in nearly all with -r, at counts spread
    # over 1-255, whatever count the kill found); the path into each hang is in every run.
    killed = _hang_maps(bins["guard"], tmp_path / "sigkill", clean_env())  # plainly: no AUTOTUNE_* at all
    paths = {h: killed[h] & ours[h] for h in HANGS}
    assert all(paths.values()) and len(set(paths.values())) == 3, (killed, ours)
    assert all(len(paths[h]) >= 3 for h in HANGS), (killed, ours)  # the harness's entry, its case, the hang's entry
    # copied after each input instead (AUTOTUNE_AFL_GUARD_MAP=copy), a killed child copies nothing
    copied = _hang_maps(bins["guard"], tmp_path / "copy", clean_env(**GUARD, AUTOTUNE_AFL_GUARD_MAP="copy"))
    assert not any(copied.values()), copied


def _hang_paths(binary: Path, tmp: Path, seconds: int, env: dict[str, str]) -> set[int]:
    """Run afl-fuzz (autotune's trial, so its environment) from seed "H0"; the hang paths of the
    hangs it kept."""
    seeds = tmp / "seeds"
    seeds.mkdir(parents=True)
    (seeds / "s0").write_bytes(b"H0")
    spec = TrialSpec(config="hangs", index=0, binary=str(binary), env=env, seeds=str(seeds), seconds=seconds,
                     rng_seed=1, out_dir=str(tmp / "trial"))
    res = run_trial(spec=spec, core=None)
    hangs = sorted((Path(spec.out_dir) / "afl-out" / "default" / "hangs").glob("id:*"))
    assert hangs or res.stats, res
    return {h.read_bytes()[1] % 4 for h in hangs if len(h.read_bytes()) >= 2 and h.read_bytes()[0:1] == b"H"}


def test_afl_fuzz_keeps_each_hang_path_of_our_build_as_of_afl_s(bins, tmp_path):
    """afl-fuzz, 15 s from "H0": every one of the three hang paths is kept (before: one hang in all,
    its map empty), as it is for AFL++'s own build, also when afl-fuzz kills hung children with its
    default SIGKILL (a user running afl-fuzz plainly: without autotune's AFL_KILL_SIGNAL=15 and without
    AUTOTUNE_METRIC, which defaults to the one metric a guard build serves)."""
    assert _hang_paths(bins["afl"], tmp_path / "afl", 15, {}) == {1, 2, 3}
    assert _hang_paths(bins["guard"], tmp_path / "ours", 15, {"AFL_KILL_SIGNAL": "9"}) == {1, 2, 3}
