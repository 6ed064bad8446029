"""The fork-server protocol of kernels/aflfs.c, driven step by step from Python.

A fake afl-fuzz at the process boundary (tests/fake_afl.py): it creates the SysV shared memory
and the fd 198/199 pipes itself and speaks 4.04c's hello or 4.20c's versioned handshake (as
written from AFL++ 4.22a's src/afl-forkserver.c), so it can check each word and do what afl-fuzz
does only by accident (kill a stopped persistent child, then say so or not). The real afl-fuzz
4.04c runs the same binaries in test_aflfs.py; 4.22a was run by hand (docs/DESIGN.md).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from autotune.target import build_harness
from fake_afl import (FS_NEW_OPT_MAPSIZE, FS_NEW_OPT_SHDMEM_FUZZ, FS_NEW_VERSION, FS_OPT_ENABLED, FS_OPT_MAPSIZE,
                      FS_OPT_SHDMEM_FUZZ, FakeAfl, Shm)

PROGRAMS = Path(__file__).parent / "programs_afl"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def branchy(tmp_path_factory) -> Path:
    return build_harness(sources=[PROGRAMS / "branchy.c"], output=tmp_path_factory.mktemp("proto") / "branchy",
                         extra_cflags=["-O0"])


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AFL_", "AUTOTUNE_", "__AFL"))}
    env.update(extra)
    return env


def gone(pid: int) -> bool:
    for _ in range(100):
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.05)
    return False


def kill_quietly(pid: int) -> None:
    """SIGKILL pid, which may have died already."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def zombie(pid: int) -> bool:
    """Wait until pid has died (a zombie its parent has not reaped yet, or gone)."""
    for _ in range(100):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):  # reaped between the open and the read
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("reporter", ["child", "server"])
def test_persistent_child_killed_while_stopped(branchy, tmp_path, reporter):
    cur = tmp_path / "cur_input"
    cur.write_bytes(b"FUZZ\x90\x90\x90\x90")
    afl = FakeAfl(branchy, [str(cur)], clean_env(AUTOTUNE_AFL_STATUS=reporter))
    try:
        hello = afl.read4()
        assert hello == FS_OPT_ENABLED | FS_OPT_MAPSIZE | ((65536 - 1) << 1)  # no shm input: @@ given
        pid1, st, map1 = afl.run()
        assert os.WIFSTOPPED(st) and os.WSTOPSIG(st) == signal.SIGSTOP
        assert any(map1)
        pid, st, m = afl.run()
        assert pid == pid1 and os.WIFSTOPPED(st) and m == map1  # persistent: same child, same map
        # afl-fuzz killed the stopped child (a timeout racing with the stop) and says so
        os.kill(pid1, signal.SIGKILL)
        pid2, st, m = afl.run(was_killed=1)
        assert pid2 != pid1 and os.WIFSTOPPED(st) and m == map1  # new child, same slots
        assert gone(pid1)
        # killed by someone else, not announced: the server notices, reaps, forks anew
        os.kill(pid2, signal.SIGKILL)
        assert zombie(pid2)
        pid3, st, m = afl.run(was_killed=0)
        assert pid3 not in (pid1, pid2) and os.WIFSTOPPED(st) and m == map1
        assert gone(pid2)
    finally:
        afl.close()
    assert afl.proc.returncode == 0
    assert gone(pid3)  # the server does not leave its stopped child behind


@pytest.mark.parametrize("reporter", ["child", "server"])
def test_iterations_per_child_and_shared_memory_input(branchy, tmp_path, reporter):
    fuzz = Shm(1 << 20)
    try:
        afl = FakeAfl(branchy, [], clean_env(AUTOTUNE_AFL_PERSISTENT="2", __AFL_SHM_FUZZ_ID=str(fuzz.id),
                                             AUTOTUNE_AFL_STATUS=reporter))
        try:
            hello = afl.read4()
            assert hello & FS_OPT_SHDMEM_FUZZ and hello & FS_OPT_MAPSIZE == FS_OPT_MAPSIZE
            afl.write4(FS_OPT_ENABLED | FS_OPT_SHDMEM_FUZZ)  # afl's reply, read before the loop
            maps, pids = [], []
            for data in (b"FUZZ", b"\x01\x01\x01\x01\x01", b"FUZZ"):
                fuzz.write(struct.pack("<I", len(data)) + data)
                pid, st, m = afl.run()
                pids.append(pid)
                maps.append(m)
                # two inputs per child: the second ends the child (exit 0) instead of stopping it
                assert os.WIFEXITED(st) if len(pids) == 2 else os.WIFSTOPPED(st)
            assert pids[0] == pids[1] != pids[2]
            assert maps[0] == maps[2] != maps[1]  # the inputs came from shared memory
        finally:
            afl.close()
    finally:
        fuzz.close()


@pytest.fixture(scope="module")
def crashhang(tmp_path_factory) -> Path:
    return build_harness(sources=[PROGRAMS / "crashhang.c"], output=tmp_path_factory.mktemp("proto") / "crashhang",
                         extra_cflags=["-O0"])


@contextmanager
def shm_afl(binary: Path, **env: str):
    """A fake afl past the old hello with shared-memory test cases: yields (afl, put), put(data)
    being the next test case; closes both and checks the server's clean exit."""
    fuzz = Shm(1 << 16)
    try:
        afl = FakeAfl(binary, [], clean_env(__AFL_SHM_FUZZ_ID=str(fuzz.id), **env))
        try:
            assert afl.read4() & FS_OPT_SHDMEM_FUZZ
            afl.write4(FS_OPT_ENABLED | FS_OPT_SHDMEM_FUZZ)
            yield afl, lambda data: fuzz.write(struct.pack("<I", len(data)) + data)
        finally:
            afl.close()
    finally:
        fuzz.close()
    assert afl.proc.returncode == 0


def _wakeups(pid: int) -> int:
    """Times the process has gone to sleep and been woken (voluntary context switches)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches")


@pytest.mark.parametrize("reporter", ["child", "server"])
def test_who_reports_and_what_afl_reads_on_a_crash_and_a_timeout(crashhang, reporter):
    """AUTOTUNE_AFL_STATUS=child: the persistent child answers afl itself and the
    fork server sleeps through every ordinary execution; =server: the server relays each one
    (AFL++'s design). Either way afl reads the same words: the pid, then a stopped status; a
    crash's signal; after a timeout kill, SIGKILL; then a new child."""
    with shm_afl(crashhang, AUTOTUNE_AFL_STATUS=reporter) as (afl, put):
        put(b"xy")
        pid0, st, m = afl.run()
        assert os.WIFSTOPPED(st) and os.WSTOPSIG(st) == signal.SIGSTOP and any(m)
        time.sleep(0.05)  # the server asleep again: a wake-up count that has settled
        before = _wakeups(afl.proc.pid)
        for _ in range(50):
            pid, st, _ = afl.run()
            assert pid == pid0 and os.WIFSTOPPED(st)
        time.sleep(0.05)
        woken = _wakeups(afl.proc.pid) - before
        if reporter == "child":
            assert woken == 0  # the server slept in waitpid through all 50
        else:
            # the relay sleeps in read and in waitpid, but on a loaded host the request or the
            # stop may already be there when it gets to either: how often it sleeps is the
            # scheduler's choice, that it sleeps at all is the design's
            assert woken > 0

        put(b"C")  # abort() in the same child: its signal, sent by the server
        pid, st, _ = afl.run()
        assert pid == pid0 and os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGABRT
        assert gone(pid0)
        put(b"xy")
        pid1, st, _ = afl.run()
        assert pid1 != pid0 and os.WIFSTOPPED(st)

        put(b"H")  # spins: afl's timeout kills the child, then reads the status
        afl.map.clear()
        afl.write4(0)
        assert afl.read4() == pid1
        time.sleep(0.1)
        os.kill(pid1, signal.SIGKILL)
        st = afl.read4()
        assert os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL
        put(b"xy")
        pid2, st, m = afl.run(was_killed=1)
        assert pid2 not in (pid0, pid1) and os.WIFSTOPPED(st) and any(m)
        assert gone(pid1)


def test_a_harness_that_closes_the_pipes_turns_the_server_into_the_relay(tmp_path_factory):
    """The child cannot answer afl once the harness closed fd 198/199: afl reads that input as the
    child's exit, and the server relays from then on (its children never need either fd)."""
    binary = build_harness(sources=[PROGRAMS / "closefds.c"], output=tmp_path_factory.mktemp("proto") / "closefds",
                           extra_cflags=["-O0"])
    with shm_afl(binary, AUTOTUNE_AFL_STATUS="child") as (afl, put):
        put(b"xy")
        pid0, st, _ = afl.run()
        assert os.WIFSTOPPED(st)
        put(b"K")
        pid, st, m = afl.run()
        assert pid == pid0 and os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0 and any(m)
        pids = []
        time.sleep(0.05)  # the server asleep again: a wake-up count that has settled
        before = _wakeups(afl.proc.pid)
        for data in (b"xy", b"K", b"xy", b"xy") * 5:
            put(data)
            pid, st, m = afl.run()
            assert os.WIFSTOPPED(st) and any(m)
            pids.append(pid)
        time.sleep(0.05)
        assert _wakeups(afl.proc.pid) - before > 0  # the relay: woken by executions
        assert pid0 not in pids and len(set(pids)) == 1


@contextmanager
def child_on_one_cpu(binary: Path):
    """shm_afl in child mode, with this process and the fork server (and so its children) on one
    CPU: a kill or a request lands wherever the scheduler left the child."""
    mask = os.sched_getaffinity(0)
    cpu = min(mask)
    try:
        with shm_afl(binary, AUTOTUNE_AFL_STATUS="child") as (afl, put):
            os.sched_setaffinity(0, {cpu})
            os.sched_setaffinity(afl.proc.pid, {cpu})
            yield afl, put
    finally:
        os.sched_setaffinity(0, mask)


def test_a_timeout_kill_right_after_the_pid_leaves_exactly_one_status(crashhang):
    """afl-fuzz starts its timeout once it has read the pid and may kill the child before the
    child runs another instruction (woken by the pid, afl often takes the core). Whatever the
    child had done by then, afl must read exactly one status word for the run: an extra word
    shifts every later read (afl 4.04c then reads a pid as a status, a status as a pid, and
    aborts). Both processes on one CPU, so the kill lands anywhere in the child's loop."""
    with child_on_one_cpu(crashhang) as (afl, put):
        put(b"xy")
        was_killed = 0
        for _ in range(40):
            afl.map.clear()
            afl.write4(was_killed)
            pid = afl.read4()
            os.kill(pid, signal.SIGKILL)  # the "timeout", at once
            st = afl.read4()
            assert os.WIFSTOPPED(st) or (os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGKILL), hex(st)
            ready, _, _ = select.select([afl.st_r], [], [], 0.05)
            assert not ready, "a second word for one run"
            was_killed = 1
        pid, st, m = afl.run(was_killed=1)
        assert os.WIFSTOPPED(st) and any(m)


def test_a_kill_of_the_idle_child_racing_afls_next_request(crashhang):
    """An outside SIGKILL (or afl's timeout kill, landing just after the child answered) of the
    child waiting for the next request, with that request already in the pipe or arriving
    before the child runs again. A child blocked in read() would take the request with it and
    leave afl waiting for a pid forever; afl must instead read one pid and one status for the
    request, from a new child or (the kill came late) the killed one's death. Both processes on
    one CPU, the kill before and after the request, so every order is tried."""
    with child_on_one_cpu(crashhang) as (afl, put):
        put(b"xy")
        pid, st, _ = afl.run()
        assert os.WIFSTOPPED(st)
        was_killed = 0
        for i in range(200):
            afl.map.clear()
            if i % 2:
                kill_quietly(pid)
                afl.write4(was_killed)
            else:
                afl.write4(was_killed)
                kill_quietly(pid)  # the child may run the whole input before this lands
            new = afl.read4(timeout=20)
            st = afl.read4(timeout=20)
            if new == pid and os.WIFSIGNALED(st):  # killed after it had sent its pid
                assert os.WTERMSIG(st) == signal.SIGKILL, hex(st)
                was_killed = 1
            else:  # a new child, or the old one before the kill landed
                assert os.WIFSTOPPED(st) and any(afl.map.read()), hex(st)
                was_killed = 0
            ready, _, _ = select.select([afl.st_r], [], [], 0)
            assert not ready, "a second word for one run"
            assert gone(pid)
            pid = new
        new, st, m = afl.run(was_killed=was_killed)
        assert os.WIFSTOPPED(st) and any(m)


def test_bad_status_value(branchy):
    afl = FakeAfl(branchy, [], clean_env(AUTOTUNE_AFL_STATUS="afl"))
    try:
        assert os.read(afl.st_r, 4) == b""
        afl.proc.wait(timeout=30)
        err = afl.proc.stderr.read().decode()
        assert afl.proc.returncode == 1 and "AUTOTUNE_AFL_STATUS=afl" in err and "fix:" in err
    finally:
        afl.close()


def test_bad_value_before_the_hello(branchy, tmp_path):
    afl = FakeAfl(branchy, [], clean_env(AUTOTUNE_OVERFLOW="sometimes"))
    try:
        assert os.read(afl.st_r, 4) == b""  # no hello: the server exits instead
        afl.proc.wait(timeout=30)
        err = afl.proc.stderr.read().decode()
        assert afl.proc.returncode == 1
        assert "[autotune] error:" in err and "AUTOTUNE_OVERFLOW" in err and "fix:" in err
    finally:
        os.close(afl.ctl_w)
        os.close(afl.st_r)
        afl.map.close()


# ---- AFL++ 4.20c's versioned handshake (AUTOTUNE_AFL_HANDSHAKE=versioned; auto-detection below) ----

def test_versioned_handshake_persistent_with_shared_memory_input(branchy):
    fuzz = Shm(1 << 20)
    try:
        afl = FakeAfl(branchy, [], clean_env(AUTOTUNE_AFL_HANDSHAKE="versioned", AUTOTUNE_MAP_SIZE="4096",
                                             AUTOTUNE_AFL_PERSISTENT="3", __AFL_SHM_FUZZ_ID=str(fuzz.id)),
                      map_size=4096)
        try:
            first = afl.read4()
            assert first == 0x41464C01 == FS_NEW_VERSION
            hs = afl.versioned_handshake(first)  # writes the complement 0xBEB9B3FE
            # map size always; shared-memory test cases (no parameter); no autodictionary
            assert hs == {"options": FS_NEW_OPT_MAPSIZE | FS_NEW_OPT_SHDMEM_FUZZ, "map_size": 4096,
                          "closing": 0x41464C01}
            runs = []
            for data in (b"FUZZ", b"\x01\x01\x01\x01\x01", b"FUZZ", b"FUZZ"):
                fuzz.write(struct.pack("<I", len(data)) + data)
                runs.append(afl.run())
            (p0, s0, m0), (p1, s1, m1), (p2, s2, m2), (p3, s3, m3) = runs
            # 3 inputs per child: stop, stop, exit 0; then a new child
            assert os.WIFSTOPPED(s0) and os.WSTOPSIG(s0) == signal.SIGSTOP and os.WIFSTOPPED(s1)
            assert os.WIFEXITED(s2) and os.WEXITSTATUS(s2) == 0 and os.WIFSTOPPED(s3)
            assert p0 == p1 == p2 != p3
            assert any(m0) and m0 == m2 == m3 != m1  # the inputs came from shared memory
            assert not any(m0[4096:])
        finally:
            afl.close()
    finally:
        fuzz.close()
    assert afl.proc.returncode == 0


def test_versioned_handshake_fork_mode_with_file_input(branchy, tmp_path):
    cur = tmp_path / "cur_input"
    afl = FakeAfl(branchy, [str(cur)], clean_env(AUTOTUNE_AFL_HANDSHAKE="versioned", AUTOTUNE_AFL_PERSISTENT="1"))
    try:
        assert afl.read4() == FS_NEW_VERSION
        # @@ given: no shared-memory test cases, only the map size (D = 65536, the default)
        assert afl.versioned_handshake(FS_NEW_VERSION) == {"options": FS_NEW_OPT_MAPSIZE, "map_size": 65536,
                                                           "closing": FS_NEW_VERSION}
        pids, maps = [], []
        for data in (b"FUZZ\x90", b"\x01\x01", b"FUZZ\x90"):
            cur.write_bytes(data)
            pid, st, m = afl.run()
            assert os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0  # a fork per input: every child exits
            pids.append(pid)
            maps.append(m)
        assert len(set(pids)) == 3
        assert any(maps[0]) and maps[0] == maps[2] != maps[1]
    finally:
        afl.close()
    assert afl.proc.returncode == 0


def test_versioned_handshake_refused_by_an_old_afl(branchy):
    """afl-fuzz 4.04c takes the version word for an option-less hello and then sends
    was_killed = 0 where the complement belongs: the target stops with a message that names the fix."""
    afl = FakeAfl(branchy, [], clean_env(AUTOTUNE_AFL_HANDSHAKE="versioned"))
    try:
        assert afl.read4() == FS_NEW_VERSION
        afl.write4(0)
        assert os.read(afl.st_r, 4) == b""
        afl.proc.wait(timeout=30)
        err = afl.proc.stderr.read().decode()
        assert afl.proc.returncode == 1
        assert "0x00000000" in err and "0xbeb9b3fe" in err and "AUTOTUNE_AFL_HANDSHAKE=old" in err
    finally:
        afl.close()


def test_bad_handshake_value(branchy):
    afl = FakeAfl(branchy, [], clean_env(AUTOTUNE_AFL_HANDSHAKE="new"))
    try:
        assert os.read(afl.st_r, 4) == b""
        afl.proc.wait(timeout=30)
        err = afl.proc.stderr.read().decode()
        assert afl.proc.returncode == 1 and "AUTOTUNE_AFL_HANDSHAKE=new" in err and "fix:" in err
    finally:
        afl.close()


@pytest.fixture(scope="module")
def fake_afl_tools(tmp_path_factory) -> dict[str, Path]:
    """Copies of this Python interpreter named afl-fuzz whose executables carry an AFL++ version
    string (appended bytes: the ELF loader ignores them), so a target started by fake_afl.py under
    one has a parent that looks like that afl-fuzz."""
    out = {}
    for version in ("4.04c", "4.22a"):
        d = tmp_path_factory.mktemp(f"afl{version}")
        exe = d / "afl-fuzz"
        shutil.copy2(os.path.realpath(sys.executable), exe)
        with open(exe, "ab") as fh:
            fh.write(b"\0afl-fuzz++" + version.encode() + b" based on afl\0")
        out[version] = exe
    return out


def _fake_afl_run(tool: Path, branchy: Path, tmp_path: Path, **env: str) -> dict:
    cur = tmp_path / "cur_input"
    cur.write_bytes(b"FUZZ\x90")
    proc = subprocess.run([str(tool), str(Path(__file__).parent / "fake_afl.py"), str(branchy), str(cur)],
                          env=clean_env(**env), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("version,extra,expect", [
    ("4.22a", {}, "versioned"),
    ("4.04c", {}, "old"),
    ("4.22a", {"AFL_OLD_FORKSERVER": "1"}, "old"),  # AFL++'s runtime variable for old tools
    ("4.04c", {"AUTOTUNE_AFL_HANDSHAKE": "versioned"}, "versioned"),  # explicit beats detection
])
def test_auto_handshake_follows_the_parent_afl_version(fake_afl_tools, branchy, tmp_path, version, extra, expect):
    out = _fake_afl_run(fake_afl_tools[version], branchy, tmp_path, **extra)
    if expect == "versioned":
        assert out["first"] == FS_NEW_VERSION and out["options"] == FS_NEW_OPT_MAPSIZE
        assert out["map_size"] == 65536 and out["closing"] == FS_NEW_VERSION
    else:
        assert out["first"] == FS_OPT_ENABLED | FS_OPT_MAPSIZE | ((65536 - 1) << 1)
    assert out["stopped"] and out["map_nonzero"] > 0 and out["returncode"] == 0
