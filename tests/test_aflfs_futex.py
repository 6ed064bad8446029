"""AFL++ 5.x's futex sync of a persistent child (kernels/aflfs_futex.c),
played by the fake afl-fuzz of fake_afl.py as the 2026 src/afl-forkserver.c runs it: the sync word
in afl's coverage segment (AFL_CHILD_SYNC_SHM = its offset) or, as 5.01c did, in a segment of its
own. No AFL++ 5.x runs here (it is not packaged, and CI cannot fetch it): these tests are the
protocol's check. The pipe protocols keep their tests (test_aflfs_protocol.py) and the real
afl-fuzz 4.04c runs the same binaries there and in test_fault_suite.py.
"""

from __future__ import annotations

import os
import signal
import struct
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from autotune.target import build_harness
from fault_suite import FAULTS_C
from fake_afl import FS_NEW_OPT_FUTEX, FS_NEW_OPT_SHDMEM_FUZZ, FS_NEW_VERSION, SYNC_DONE, FakeAfl, Shm
from test_aflfs_protocol import PROGRAMS, _wakeups, clean_env, gone

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def crashhang(tmp_path_factory) -> Path:
    return build_harness(sources=[PROGRAMS / "crashhang.c"], output=tmp_path_factory.mktemp("futex") / "crashhang",
                         extra_cflags=["-O0"])


@contextmanager
def futex_afl(binary: Path, *, futex: str | None = "offset", sync_offset: int | None = None, **env: str):
    """A fake afl-fuzz 5.x past the versioned handshake with shared-memory test cases: yields
    (afl, put, options), put(data) the next test case; closes both and checks the clean exit."""
    fuzz = Shm(1 << 16)
    try:
        afl = FakeAfl(binary, [], clean_env(__AFL_SHM_FUZZ_ID=str(fuzz.id), AUTOTUNE_AFL_HANDSHAKE="versioned", **env),
                      futex=futex, sync_offset=sync_offset)
        try:
            hs = afl.versioned_handshake(afl.read4())
            assert hs["options"] & FS_NEW_OPT_SHDMEM_FUZZ and hs["closing"] == FS_NEW_VERSION
            yield afl, (lambda data: fuzz.write(struct.pack("<I", len(data)) + data)), hs["options"]
        finally:
            afl.close()
    finally:
        fuzz.close()
    assert afl.proc.returncode == 0, afl.proc.stderr.read() if afl.proc.stderr else ""


@pytest.mark.parametrize("where", ["offset", "segment"])
def test_hot_path_has_no_pipe_io_and_never_wakes_the_server(crashhang, where):
    with futex_afl(crashhang, futex=where) as (afl, put, options):
        assert options & FS_NEW_OPT_FUTEX
        put(b"xy")
        outcome, pid0, st, m = afl.futex_run()  # a new child: request and pid on the pipes
        assert outcome == "done" and st is None and any(m)
        time.sleep(0.05)
        before = _wakeups(afl.proc.pid)
        for data in (b"xy", b"x", b"ab") * 20:
            put(data)
            outcome, pid, st, m = afl.futex_run()
            assert outcome == "done" and pid == pid0 and any(m)
            assert afl.sync_load() == SYNC_DONE
        assert not afl.status_pending(), "a word on the status pipe in the hot path"
        time.sleep(0.05)
        assert _wakeups(afl.proc.pid) == before  # the server slept in waitpid through all 60


def test_crash_in_run_then_a_new_child(crashhang):
    with futex_afl(crashhang) as (afl, put, _):
        put(b"xy")
        _, pid0, _, _ = afl.futex_run()
        put(b"C")  # abort() in the running child: the server sends the status, then EXITED
        outcome, pid, st, _ = afl.futex_run()
        assert outcome == "exited" and pid == pid0
        assert os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGABRT
        assert gone(pid0)
        put(b"C")  # a new child whose first input crashes: no DONE ever
        outcome, pid1, st, _ = afl.futex_run()
        assert outcome == "exited" and pid1 != pid0 and os.WTERMSIG(st) == signal.SIGABRT
        put(b"xy")
        outcome, pid2, st, m = afl.futex_run()
        assert outcome == "done" and pid2 not in (pid0, pid1) and any(m)
        assert not afl.status_pending()


def test_timeout_kill_then_was_killed_and_a_new_child(crashhang):
    with futex_afl(crashhang) as (afl, put, _):
        put(b"xy")
        _, pid0, _, _ = afl.futex_run()
        put(b"H")  # spins: afl stores EXITED, wakes, kills, reads the status
        outcome, pid, st, _ = afl.futex_run(timeout=0.3)
        assert outcome == "timeout" and pid == pid0
        assert os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL
        assert not afl.status_pending(), "a second status for one timeout"
        put(b"xy")  # the next request says was_killed = 1
        outcome, pid1, st, m = afl.futex_run()
        assert outcome == "done" and pid1 != pid0 and any(m)
        assert gone(pid0)


def test_child_killed_while_waiting_for_run(crashhang):
    """Killed between inputs (in its futex wait): the server sends the status and EXITED while
    afl is busy; afl's next run finds EXITED before it stores RUN and reads that status."""
    with futex_afl(crashhang) as (afl, put, _):
        put(b"xy")
        _, pid0, _, _ = afl.futex_run()
        os.kill(pid0, signal.SIGKILL)
        assert gone(pid0)
        time.sleep(0.1)  # the server's EXITED is in place
        put(b"xy")
        outcome, pid, st, _ = afl.futex_run()
        assert outcome == "exited" and pid == pid0 and os.WTERMSIG(st) == signal.SIGKILL
        outcome, pid1, st, m = afl.futex_run()
        assert outcome == "done" and pid1 != pid0 and any(m)


def test_last_persistent_input_exits_and_the_next_child_takes_over(crashhang):
    with futex_afl(crashhang, AUTOTUNE_AFL_PERSISTENT="3") as (afl, put, _):
        put(b"xy")
        outcomes = [afl.futex_run()[:3] for _ in range(7)]
        kinds = [o[0] for o in outcomes]
        assert kinds == ["done", "done", "exited", "done", "done", "exited", "done"], kinds
        assert os.WIFEXITED(outcomes[2][2]) and os.WEXITSTATUS(outcomes[2][2]) == 0
        assert outcomes[0][1] == outcomes[2][1] != outcomes[3][1]


def test_harness_exit_mid_input_and_closed_pipes(tmp_path_factory):
    """exit(0) inside the harness is the child's end (status exit 0, EXITED); a harness that
    closes fds 198/199 changes nothing: the futex child never uses them."""
    out = tmp_path_factory.mktemp("futex-faults")
    for fault in ("FAULT_EXIT", "FAULT_CLOSEFDS"):
        binary = build_harness(sources=[FAULTS_C], output=out / fault, extra_cflags=["-O1", f"-DFAULT={fault}"])
        with futex_afl(binary) as (afl, put, _):
            put(b"xyz")
            assert afl.futex_run()[0] == "done"
            put(b"F")
            outcome, _, st, _ = afl.futex_run()
            if fault == "FAULT_EXIT":
                assert outcome == "exited" and os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0
            else:
                assert outcome == "done"
            for _ in range(5):
                put(b"xyz")
                assert afl.futex_run()[0] == "done"
            assert not afl.status_pending()


def test_afl_stopping_ends_server_and_child(crashhang):
    with futex_afl(crashhang) as (afl, put, _):
        put(b"xy")
        _, pid0, _, _ = afl.futex_run()
    assert gone(pid0)  # the server exited on afl's end of file; its child died with it


@pytest.mark.parametrize("case", ["not offered", "AUTOTUNE_AFL_FUTEX=0", "offset inside the map", "fork mode"])
def test_futex_not_advertised_falls_back_to_the_pipes(crashhang, case):
    env, futex, offset = {}, "offset", None
    if case == "not offered":
        futex = None
    elif case == "AUTOTUNE_AFL_FUTEX=0":
        env["AUTOTUNE_AFL_FUTEX"] = "0"
    elif case == "offset inside the map":
        offset = 1024  # AFL++'s runtime drops a word that would overlap its map; so do we
    else:
        env["AUTOTUNE_AFL_PERSISTENT"] = "1"
    with futex_afl(crashhang, futex=futex, sync_offset=offset, **env) as (afl, put, options):
        assert not options & FS_NEW_OPT_FUTEX
        put(b"xy")
        pid, st, m = afl.run()  # the pipe protocol, as before
        assert any(m) and (os.WIFSTOPPED(st) or (case == "fork mode" and os.WIFEXITED(st)))


def test_bad_futex_variable(crashhang):
    afl = FakeAfl(crashhang, [], clean_env(AUTOTUNE_AFL_FUTEX="yes"), futex="offset")
    try:
        with pytest.raises(AssertionError, match="closed its status pipe"):
            afl.read4(timeout=20)
    finally:
        os.close(afl.ctl_w)
        afl.proc.wait(timeout=30)
    err = afl.proc.stderr.read().decode()
    assert afl.proc.returncode == 1 and "AUTOTUNE_AFL_FUTEX=yes" in err and "fix:" in err


def test_an_afl_that_offers_the_futex_but_syncs_by_the_pipes(crashhang):
    """The option bit is inferred (kernels/aflfs.h): an afl-fuzz that does not recognise it warns
    and syncs by the pipes, so after each new child's first input it waits for a status that never
    comes, times out and kills. After three such children, found dead in DONE and never given a
    RUN, the server serves the pipes (the child answering afl), and the campaign goes on."""
    with futex_afl(crashhang) as (afl, put, options):
        assert options & FS_NEW_OPT_FUTEX
        put(b"xy")
        was_killed = 0
        for _ in range(3):
            afl.map.clear(afl.map_size)
            afl.write4(was_killed)
            pid = afl.read4()
            assert not afl.status_pending(0.3)  # afl's timeout
            os.kill(pid, signal.SIGKILL)
            st = afl.read4()
            assert os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL
            was_killed = 1
        pids = set()
        for _ in range(20):
            pid, st, m = afl.run(was_killed=was_killed)
            was_killed = 0
            assert os.WIFSTOPPED(st) and any(m), hex(st)
            pids.add(pid)
        assert len(pids) == 1  # one persistent child, answering afl over the pipes
    assert "did not take it" in afl.proc.stderr.read().decode()


def test_a_futex_child_killed_after_its_first_input_is_no_strike(crashhang):
    """A futex-speaking afl's timeout stores EXITED before it kills: children killed that way (or
    crashing) never turn the server to the pipes, however many in a row."""
    with futex_afl(crashhang) as (afl, put, _):
        for _ in range(4):  # each new child's first input hangs: killed never given a RUN
            put(b"H")
            outcome, _, st, _ = afl.futex_run(timeout=0.2)
            assert outcome == "timeout" and os.WTERMSIG(st) == signal.SIGKILL
        put(b"xy")
        outcome, pid, _, m = afl.futex_run()
        assert outcome == "done" and any(m)
        put(b"xy")
        assert afl.futex_run()[:2] == ("done", pid)


def test_a_segment_afl_did_not_make_is_not_taken_for_the_word(crashhang):
    """AFL_CHILD_SYNC_SHM naming the id of a 4-byte segment some other process made (an offset
    that failed the checks may be any segment's id): not taken, not advertised."""
    import ctypes
    import subprocess
    import sys

    made = subprocess.run([sys.executable, "-c", "import ctypes; l = ctypes.CDLL(None); "
                           "print(l.shmget(0, ctypes.c_size_t(4), 0o1600))"], capture_output=True, text=True,
                          check=True)
    seg = int(made.stdout)
    assert seg >= 0
    try:
        with futex_afl(crashhang, futex=None, AFL_CHILD_SYNC_SHM=str(seg)) as (afl, put, options):
            assert not options & FS_NEW_OPT_FUTEX
            put(b"xy")
            _, st, m = afl.run()
            assert os.WIFSTOPPED(st) and any(m)
    finally:
        ctypes.CDLL(None).shmctl(seg, 0, None)  # IPC_RMID
