"""The fork server under faults (issue 26): every harness of tests/programs_afl/faults.c, built by
autotune cc (guard kind, the child answering afl: the runtime's defaults) and by AFL++'s
afl-clang-fast, fuzzed side by side by the real afl-fuzz 4.04c for a few seconds; then every
saved crash and hang is replayed through both builds (benchmarks/fault_suite.py).

Assertions are about correctness, never timing: afl-fuzz exits 0 with no complaint about the fork
server; each build saves what the fault makes (a crash, a hang, or nothing) and only that; every
saved crash crashes both builds with its signal (none lost, none a stray status word); the hang
harnesses' hangs run past the timeout in both (a saved hang that replays fast is a stall of the
loaded host: counted, not failed); stability 100 %, as AFL++'s own build's, but for the threads
harness (its threads race in both builds). The hour-long soak is
benchmarks/fault_soak.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import fault_suite as fs

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("afl-fuzz") and shutil.which("afl-clang-fast")),
                       reason="afl++ is not installed (apt-get install afl++)"),
]

SECONDS = 6


@pytest.fixture(scope="module")
def bins_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("faults")


@pytest.mark.parametrize("fault", fs.FAULTS, ids=[f.name for f in fs.FAULTS])
def test_fault_under_afl_fuzz_ours_and_aflpp(fault, bins_dir, tmp_path):
    binaries = {"ours": fs.build_ours(fault, bins_dir), "aflpp": fs.build_aflpp(fault, bins_dir)}
    result = fs.run_pair(fault, binaries, tmp_path, seconds=SECONDS)
    assert not result.problems, "\n".join(result.problems)
    ours, theirs = (fs.stability_value(result.campaigns[b].stability) for b in ("ours", "aflpp"))
    assert ours is not None and theirs is not None
    # Ours is held to 100 %; AFL++'s build is the reference, not the subject: its fork child writes
    # into afl-fuzz's shared map, and once, in CI under a load average of 6 on 2 cores, its fork
    # campaign calibrated at 78.57 % (ours 100 %; not reproduced in 7 reruns, 4 of them at once).
    if fault.name != "threads":  # its threads race: its stability is the scheduler's, in both builds
        assert ours == 100.0, (ours, theirs)
    if fault.expect == "crash":
        # none lost: what AFL++'s build found crashes ours (checked in judge), and ours found some
        assert result.crash_replays["aflpp"]["ours"] and all(s is not None for s in result.crash_replays["aflpp"]["ours"])


# ---- the same faults under AFL++ 5.x's futex sync ------------------------------------------------
# No AFL++ 5.x afl-fuzz runs here (not packaged; CI cannot fetch it): benchmarks/protocol_driver.c,
# a minimal fake fuzzer in C speaking its futex protocol (and the pipes, for contrast) with
# afl-fuzz's timeout handling, runs each fault harness on 9 harmless inputs and one that fires the
# fault, and counts how each execution ended.

@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    return fs.build_driver(tmp_path_factory.mktemp("driver"))


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, list[Path]]:
    return fs.driver_inputs(tmp_path_factory.mktemp("driver-inputs"))


@pytest.mark.parametrize("mode", ["futex", "pipes"])
@pytest.mark.parametrize("fault", fs.FAULTS, ids=[f.name for f in fs.FAULTS])
def test_fault_under_the_futex_sync(fault, mode, driver, inputs, bins_dir):
    got = fs.run_driver(driver, fault, fs.build_ours(fault, bins_dir), inputs, mode=mode, execs=100)
    want = fs.driver_expectation(fault, mode, got["execs"])
    assert got["execs"] == 100 and {k: got[k] for k in want} == want, got
