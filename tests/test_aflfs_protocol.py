"""The fork-server protocol of kernels/aflfs.c, driven step by step from Python.

A fake afl-fuzz at the process boundary: this test creates the SysV shared memory and the
fd 198/199 pipes itself and speaks the 4.04c protocol, so it can do what afl-fuzz does only
by accident (kill a stopped persistent child, then say so or not) and check each reply. The
real afl-fuzz runs the same binaries in test_aflfs.py.
"""

from __future__ import annotations

import ctypes
import os
import signal
import struct
import subprocess
import time
from pathlib import Path

import pytest

from autotune.cc import build_harness

PROGRAMS = Path(__file__).parent / "programs_afl"
FS_OPT_ENABLED, FS_OPT_MAPSIZE, FS_OPT_SHDMEM_FUZZ = 0x80000001, 0x40000000, 0x01000000
IPC_CREAT, IPC_RMID = 0o1000, 0

libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmat.restype = ctypes.c_void_p
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]

pytestmark = pytest.mark.slow


class Shm:
    """A private SysV segment, marked for removal at once (Linux still lets the target attach)."""

    def __init__(self, size: int):
        self.size = size
        self.id = libc.shmget(0, size, IPC_CREAT | 0o600)
        assert self.id >= 0, os.strerror(ctypes.get_errno())
        self.addr = libc.shmat(self.id, None, 0)
        libc.shmctl(self.id, IPC_RMID, None)

    def read(self) -> bytes:
        return ctypes.string_at(self.addr, self.size)

    def write(self, data: bytes, offset: int = 0) -> None:
        ctypes.memmove(self.addr + offset, data, len(data))

    def clear(self) -> None:
        ctypes.memset(self.addr, 0, self.size)

    def close(self) -> None:
        libc.shmdt(self.addr)


class FakeAfl:
    """Starts the target as afl-fuzz does (fds 198/199, __AFL_SHM_ID) and runs inputs."""

    def __init__(self, binary: Path, args: list[str], env: dict[str, str], map_size: int = 65536):
        self.map = Shm(map_size)
        ctl_r, self.ctl_w = os.pipe()
        self.st_r, st_w = os.pipe()
        env = {**env, "__AFL_SHM_ID": str(self.map.id)}
        os.dup2(ctl_r, 198)
        os.dup2(st_w, 199)
        try:
            self.proc = subprocess.Popen([str(binary), *args], env=env, pass_fds=(198, 199),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        finally:
            for fd in (198, 199, ctl_r, st_w):
                os.close(fd)

    def read4(self) -> int:
        data = b""
        while len(data) < 4:
            chunk = os.read(self.st_r, 4 - len(data))
            assert chunk, "the fork server closed its status pipe"
            data += chunk
        return struct.unpack("<I", data)[0]

    def write4(self, v: int) -> None:
        os.write(self.ctl_w, struct.pack("<I", v))

    def run(self, was_killed: int = 0) -> tuple[int, int, bytes]:
        self.map.clear()  # afl-fuzz clears its map before every run
        self.write4(was_killed)
        pid = self.read4()
        status = self.read4()
        return pid, status, self.map.read()

    def close(self) -> None:
        os.close(self.ctl_w)
        self.proc.wait(timeout=30)
        os.close(self.st_r)
        self.map.close()


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


def zombie(pid: int) -> bool:
    """Wait until pid has died (a zombie its parent has not reaped yet, or gone)."""
    for _ in range(100):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_persistent_child_killed_while_stopped(branchy, tmp_path):
    cur = tmp_path / "cur_input"
    cur.write_bytes(b"FUZZ\x90\x90\x90\x90")
    afl = FakeAfl(branchy, [str(cur)], clean_env())
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


def test_iterations_per_child_and_shared_memory_input(branchy, tmp_path):
    fuzz = Shm(1 << 20)
    try:
        afl = FakeAfl(branchy, [], clean_env(AUTOTUNE_AFL_PERSISTENT="2", __AFL_SHM_FUZZ_ID=str(fuzz.id)))
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
