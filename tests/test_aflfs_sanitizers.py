"""The afl-fuzz runtime (kernels/aflfs.c with cov/bigmap/driver) built whole under ASan+UBSan.

The runtime archive is normally built uninstrumented; here every runtime source and the driver
are compiled with -fsanitize=address,undefined -fno-sanitize-recover=all and linked with a test
harness, then driven by the real afl-showmap and afl-fuzz. A sanitizer report in the runtime
aborts the target, which afl reports as a crash (or the tool fails), so the assertions below
catch it.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from autotune.cc import INSTRUMENT_FLAGS, LINK_LIBS
from autotune.runtime.afl_index import read_index_stats

from fake_afl import FS_NEW_OPT_FUTEX, FS_NEW_OPT_MAPSIZE, FS_NEW_OPT_SHDMEM_FUZZ, FS_NEW_VERSION, FakeAfl, Shm
from programs.covtools import SANITIZE, runtime_objects
from test_aflfs import (AFL_FUZZ, AFL_SHOWMAP, PROGRAMS, afl_fuzz, base_env, fuzzer_stats, output, seeds, showmap,
                        switch_inputs)

SAN = SANITIZE

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (AFL_FUZZ and AFL_SHOWMAP and shutil.which("clang")),
                       reason="needs afl++ and clang"),
]


@pytest.fixture(scope="module")
def san_bins(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("aflfs-san")
    objs = runtime_objects(opt="-O1", san=SAN)
    bins = {}
    for name in ("branchy", "loops", "manykeys"):
        exe = out / name
        subprocess.run(["clang", "-O0", "-g", *SAN, *INSTRUMENT_FLAGS, str(PROGRAMS / f"{name}.c"),
                        *objs, "-o", str(exe), *LINK_LIBS], check=True, capture_output=True, text=True, timeout=300)
        bins[name] = exe
    return bins


def test_showmap_overflow_and_wide_counters_under_sanitizers(san_bins, tmp_path):
    in_dir = switch_inputs(tmp_path / "keys", 120, 5)
    idx = tmp_path / "small.idx"
    showmap(san_bins["manykeys"], in_dir, tmp_path / "o1",
            env=base_env(AUTOTUNE_INDEX_FILE=str(idx), AUTOTUNE_MAP_SIZE="64"))
    st = read_index_stats(path=idx)
    assert st.used_key == 64 and st.overflow_keys > 0
    maps = showmap(san_bins["loops"], seeds(tmp_path / "loops", b"a", b"b", b"c"), tmp_path / "o2",
                   env=base_env(AUTOTUNE_COUNTER_BITS="16", AUTOTUNE_OVERFLOW="saturate",
                                AUTOTUNE_INDEX_FILE=str(tmp_path / "w16.idx")))
    assert max(maps["seed2"].values()) == 255


@pytest.mark.parametrize("reporter", ["child", "server"])
def test_afl_fuzz_persistent_under_sanitizers(san_bins, tmp_path, reporter):
    env = base_env(AUTOTUNE_AFL_PERSISTENT="50", AUTOTUNE_INDEX_FILE=str(tmp_path / "i.idx"),
                   AUTOTUNE_AFL_STATUS=reporter)
    proc, inst = afl_fuzz(san_bins["branchy"], tmp_path, seconds=5, env=env)
    assert proc.returncode == 0, output(proc)
    stats = fuzzer_stats(inst)
    assert int(stats["saved_crashes"]) == 0 and int(stats["corpus_count"]) > 1
    assert stats["stability"] == "100.00%"


def test_versioned_handshake_under_sanitizers(san_bins):
    """AFL++ 4.20c's handshake, played by the fake afl-fuzz (fake_afl.py), persistent mode with
    shared-memory test cases, twolevel map: the sanitized server and children run clean."""
    fuzz = Shm(1 << 20)
    env = base_env(AUTOTUNE_AFL_HANDSHAKE="versioned", AUTOTUNE_AFL_PERSISTENT="2", AUTOTUNE_MAP_SIZE="8192",
                   AUTOTUNE_LAYOUT="twolevel", __AFL_SHM_FUZZ_ID=str(fuzz.id))
    try:
        afl = FakeAfl(san_bins["branchy"], [], env, map_size=8192)
        try:
            hs = afl.versioned_handshake(afl.read4())
            assert hs == {"options": FS_NEW_OPT_MAPSIZE | FS_NEW_OPT_SHDMEM_FUZZ, "map_size": 8192,
                          "closing": FS_NEW_VERSION}
            statuses = []
            for data in (b"FUZZ", b"\x01\x02", b"FUZZ"):
                fuzz.write(struct.pack("<I", len(data)) + data)
                _, st, m = afl.run()
                statuses.append(st)
                assert any(m)
            assert os.WIFSTOPPED(statuses[0]) and os.WIFEXITED(statuses[1]) and os.WEXITSTATUS(statuses[1]) == 0
            assert os.WIFSTOPPED(statuses[2])
        finally:
            afl.close()
        assert afl.proc.returncode == 0, afl.proc.stderr.read().decode()
    finally:
        fuzz.close()


def test_futex_sync_under_sanitizers(san_bins):
    """AFL++ 5.x's futex sync (fake_afl.py futex_run), twolevel map, persistent children of 3
    inputs, a child killed between inputs: the sanitized server and children run clean."""
    fuzz = Shm(1 << 20)
    env = base_env(AUTOTUNE_AFL_HANDSHAKE="versioned", AUTOTUNE_AFL_PERSISTENT="3", AUTOTUNE_MAP_SIZE="8192",
                   AUTOTUNE_LAYOUT="twolevel", __AFL_SHM_FUZZ_ID=str(fuzz.id))
    try:
        afl = FakeAfl(san_bins["branchy"], [], env, map_size=8192, futex="offset")
        try:
            hs = afl.versioned_handshake(afl.read4())
            assert hs["options"] == FS_NEW_OPT_MAPSIZE | FS_NEW_OPT_SHDMEM_FUZZ | FS_NEW_OPT_FUTEX
            outcomes, killed = [], False
            for i, data in enumerate((b"FUZZ", b"\x01\x02", b"FUZZ") * 3):
                fuzz.write(struct.pack("<I", len(data)) + data)
                outcome, pid, st, m = afl.futex_run()
                outcomes.append(outcome)
                if killed:  # afl found EXITED before RUN: the status of the kill, no input ran
                    assert outcome == "exited" and os.WIFSIGNALED(st) and os.WTERMSIG(st) == 9, hex(st)
                    killed = False
                    continue
                assert any(m)
                assert outcome == "done" or (os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0), hex(st)
                if outcome == "done" and i >= 3 and "killed" not in outcomes:  # in its futex wait
                    os.kill(pid, 9)
                    killed = True
                    outcomes.append("killed")
                    time.sleep(0.2)  # the server's EXITED is in place
            assert outcomes[:3] == ["done", "done", "exited"] and "killed" in outcomes
        finally:
            afl.close()
        assert afl.proc.returncode == 0, afl.proc.stderr.read().decode()
    finally:
        fuzz.close()


def test_afl_fuzz_on_the_union_map_under_sanitizers(san_bins, tmp_path):
    """The probe's afl-fuzz engine: every metric's keys in one map (cov_events_to_map and its
    slot cache), persistent children, the sanitized runtime runs clean."""
    env = base_env(AUTOTUNE_AFL_UNION="1", AUTOTUNE_LAYOUT="flat", AUTOTUNE_MAP_SIZE="65536",
                   AUTOTUNE_AFL_PERSISTENT="50")
    proc, inst = afl_fuzz(san_bins["branchy"], tmp_path, seconds=5, env=env)
    assert proc.returncode == 0, output(proc)
    stats = fuzzer_stats(inst)
    assert int(stats["saved_crashes"]) == 0 and int(stats["corpus_count"]) > 1
    assert stats["stability"] == "100.00%"
