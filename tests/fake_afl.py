"""A fake afl-fuzz at the process boundary, for the fork-server tests (standard library only).

It creates the SysV shared memory and the fd 198/199 pipes itself and speaks either handshake
of kernels/aflfs.c, word by word, as written from AFL++'s src/afl-forkserver.c: 4.04c's hello
(FS_OPT_* flags) and 4.20c's versioned one (include/types.h FS_NEW_*, 4.22a); and AFL++ 5.x's
futex sync of a persistent child (futex_run, from the 2026 src/afl-forkserver.c: the sync word
in the coverage segment at the offset AFL_CHILD_SYNC_SHM names, or 5.01c's segment of its own).
The real afl-fuzz 4.04c runs the same binaries in test_aflfs.py; no AFL++ 5.x runs here.

Run as a script (``python fake_afl.py BINARY [INPUT]``) it starts BINARY, answers whichever
handshake the target sends, runs INPUT once and prints a JSON summary: the auto-detection test
runs it under a copy of the interpreter named afl-fuzz, so the target's parent looks like an afl
tool of a chosen version.
"""

from __future__ import annotations

import ctypes
import json
import os
import select
import struct
import subprocess
import sys
import time
from pathlib import Path

FS_OPT_ENABLED, FS_OPT_MAPSIZE, FS_OPT_SHDMEM_FUZZ = 0x80000001, 0x40000000, 0x01000000
FS_NEW_VERSION = 0x41464C00 + 1  # "AFL" in the upper bytes + protocol version 1
FS_NEW_OPT_MAPSIZE, FS_NEW_OPT_SHDMEM_FUZZ, FS_NEW_OPT_AUTODICT = 0x1, 0x2, 0x800
# AFL++ 5.x's futex sync (kernels/aflfs.h: the option bit is inferred, not read from a 5.x header)
FS_NEW_OPT_FUTEX = 0x4
SYNC_IDLE, SYNC_RUN, SYNC_DONE, SYNC_EXITED = 0, 1, 2, 3
FUTEX_WAIT, FUTEX_WAKE = 0, 1
SYS_FUTEX = {"x86_64": 202, "aarch64": 98, "riscv64": 98, "ppc64le": 221, "s390x": 238}.get(os.uname().machine)
IPC_CREAT, IPC_RMID = 0o1000, 0

libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmat.restype = ctypes.c_void_p
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
libc.syscall.restype = ctypes.c_long


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def futex(addr: int, op: int, val: int, timeout: float | None = None) -> int:
    """futex(2) on the u32 at addr, shared (not FUTEX_PRIVATE: the word is in a SysV segment)."""
    assert SYS_FUTEX is not None, f"futex syscall number unknown for {os.uname().machine}"
    ts = None
    if timeout is not None:
        ts = Timespec(int(timeout), int((timeout - int(timeout)) * 1e9))
    return libc.syscall(ctypes.c_long(SYS_FUTEX), ctypes.c_void_p(addr), ctypes.c_int(op), ctypes.c_uint32(val),
                        ctypes.byref(ts) if ts is not None else None, None, ctypes.c_uint32(0))


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

    def clear(self, size: int | None = None) -> None:
        ctypes.memset(self.addr, 0, self.size if size is None else size)

    def close(self) -> None:
        libc.shmdt(self.addr)


class FakeAfl:
    """Starts the target as afl-fuzz does (fds 198/199, __AFL_SHM_ID) and runs inputs."""

    def __init__(self, binary: Path, args: list[str], env: dict[str, str], map_size: int = 65536,
                 futex: str | None = None, sync_offset: int | None = None):
        """futex: offer AFL++ 5.x's futex sync, as the 2026 sources do ("offset": the word past the
        map in the coverage segment, at sync_offset or where afl-fuzz puts it) or as 5.01c did
        ("segment": a 4-byte segment of its own); None: pipes only."""
        self.map_size = map_size
        self.sync_off: int | None = None
        self.sync_seg: Shm | None = None
        extra = {}
        if futex == "offset":
            # afl_shm_init: the word after the map rounded up to 4 (+8 for the default 64 KiB map)
            self.sync_off = sync_offset if sync_offset is not None else (
                (map_size + (8 if map_size == 65536 else 0) + 3) & ~3)
            self.map = Shm(max(map_size, self.sync_off + 4))
            extra["AFL_CHILD_SYNC_SHM"] = str(self.sync_off)
        else:
            self.map = Shm(map_size)
            if futex == "segment":
                self.sync_seg = Shm(4)
                extra["AFL_CHILD_SYNC_SHM"] = str(self.sync_seg.id)
        self.child = -1  # futex mode: the live persistent child
        self.was_killed = 0
        if self.sync_addr:
            self.sync_store(SYNC_IDLE)
        ctl_r, self.ctl_w = os.pipe()
        self.st_r, st_w = os.pipe()
        env = {**env, **extra, "__AFL_SHM_ID": str(self.map.id)}
        os.dup2(ctl_r, 198)
        os.dup2(st_w, 199)
        try:
            self.proc = subprocess.Popen([str(binary), *args], env=env, pass_fds=(198, 199),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        finally:
            for fd in (198, 199, ctl_r, st_w):
                os.close(fd)

    def read4(self, timeout: float = 60.0) -> int:
        """The next word from the fork server; fails after timeout seconds without one (a
        protocol desync then fails the test instead of hanging the suite)."""
        data = b""
        while len(data) < 4:
            ready, _, _ = select.select([self.st_r], [], [], timeout)
            assert ready, f"no word from the fork server in {timeout:g} s (read {len(data)} of 4 bytes)"
            chunk = os.read(self.st_r, 4 - len(data))
            assert chunk, "the fork server closed its status pipe"
            data += chunk
        return struct.unpack("<I", data)[0]

    def write4(self, v: int) -> None:
        os.write(self.ctl_w, struct.pack("<I", v))

    def versioned_handshake(self, first: int) -> dict:
        """afl-fuzz 4.22a's side after the target's first word ``first`` (the version word):
        answer its complement, read the options, their parameters in bit order, the closing word."""
        assert first == FS_NEW_VERSION, hex(first)
        self.write4(first ^ 0xFFFFFFFF)
        opts = self.read4()
        out = {"options": opts}
        if opts & FS_NEW_OPT_MAPSIZE:
            out["map_size"] = self.read4()
        if opts & FS_NEW_OPT_AUTODICT:
            n, data = self.read4(), b""
            while len(data) < n:
                chunk = os.read(self.st_r, n - len(data))
                assert chunk, "the fork server closed its status pipe in the autodictionary"
                data += chunk
            out["autodict"] = data
        out["closing"] = self.read4()
        return out

    def run(self, was_killed: int = 0) -> tuple[int, int, bytes]:
        self.map.clear(self.map_size)  # afl-fuzz clears its map before every run (not the sync word)
        self.write4(was_killed)
        pid = self.read4()
        status = self.read4()
        return pid, status, self.map_bytes()

    def map_bytes(self) -> bytes:
        return ctypes.string_at(self.map.addr, self.map_size)

    # ---- AFL++ 5.x's futex sync (afl_fsrv_run_target of the 2026 src/afl-forkserver.c) ----------

    @property
    def sync_addr(self) -> int:
        if self.sync_off is not None:
            return self.map.addr + self.sync_off
        return self.sync_seg.addr if self.sync_seg is not None else 0

    def sync_load(self) -> int:
        return ctypes.c_uint32.from_address(self.sync_addr).value

    def sync_store(self, v: int) -> None:
        ctypes.c_uint32.from_address(self.sync_addr).value = v

    def wait_done_or_exited(self, timeout: float) -> int | None:
        """DONE or EXITED, or None when timeout seconds pass first (spurious wake-ups reload)."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.sync_load()
            if v in (SYNC_DONE, SYNC_EXITED):
                return v
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            futex(self.sync_addr, FUTEX_WAIT, v, min(left, 0.5))

    def futex_run(self, timeout: float = 10.0) -> tuple[str, int, int | None, bytes]:
        """One execution as afl-fuzz 5.x runs a persistent target with futex sync: with no live
        child, the pipe request (was_killed), the new child's pid, and the child runs at once;
        with one, RUN and a wake (or, if the word already says EXITED, its status). Then wait
        for DONE (no pipe I/O) or EXITED (the status from the pipe); at the timeout, EXITED, a
        wake, SIGKILL and the status. Returns (outcome done|exited|timeout, pid, status or None,
        map)."""
        self.map.clear(self.map_size)
        pid = self.child
        if pid <= 0:
            self.write4(self.was_killed)
            self.was_killed = 0
            pid = self.child = self.read4()
            v = self.wait_done_or_exited(timeout)
        elif self.sync_load() == SYNC_EXITED:
            v = SYNC_EXITED
        else:
            self.sync_store(SYNC_RUN)
            futex(self.sync_addr, FUTEX_WAKE, 1)
            v = self.wait_done_or_exited(timeout)
        if v == SYNC_DONE:
            return "done", pid, None, self.map_bytes()
        outcome = "exited"
        if v is None:  # timeout: EXITED before the kill, so a child that gets there exits quietly
            outcome = "timeout"
            self.sync_store(SYNC_EXITED)
            futex(self.sync_addr, FUTEX_WAKE, 1)
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
            self.was_killed = 1
        status = self.read4()
        self.sync_store(SYNC_IDLE)
        self.child = -1
        return outcome, pid, status, self.map_bytes()

    def status_pending(self, wait: float = 0.05) -> bool:
        ready, _, _ = select.select([self.st_r], [], [], wait)
        return bool(ready)

    def close(self) -> None:
        os.close(self.ctl_w)
        self.proc.wait(timeout=30)
        os.close(self.st_r)
        self.map.close()
        if self.sync_seg is not None:
            self.sync_seg.close()


def main(argv: list[str]) -> int:
    """Start argv[0] (with argv[1:] as its arguments), take either handshake, run once."""
    afl = FakeAfl(Path(argv[0]), argv[1:], dict(os.environ))
    try:
        first = afl.read4()
        out: dict = {"first": first}
        if first == FS_NEW_VERSION:
            out.update(afl.versioned_handshake(first))
        pid, status, m = afl.run()
        out.update(status=status, exited=os.WIFEXITED(status), stopped=os.WIFSTOPPED(status),
                   map_nonzero=sum(1 for b in m if b))
    finally:
        afl.close()
    out["returncode"] = afl.proc.returncode
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
