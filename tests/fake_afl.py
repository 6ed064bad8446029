"""A fake afl-fuzz at the process boundary, for the fork-server tests (standard library only).

It creates the SysV shared memory and the fd 198/199 pipes itself and speaks either handshake
of kernels/aflfs.c, word by word, as written from AFL++'s src/afl-forkserver.c: 4.04c's hello
(FS_OPT_* flags) and 4.20c's versioned one (include/types.h FS_NEW_*, 4.22a). The real
afl-fuzz 4.04c runs the same binaries in test_aflfs.py.

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
from pathlib import Path

FS_OPT_ENABLED, FS_OPT_MAPSIZE, FS_OPT_SHDMEM_FUZZ = 0x80000001, 0x40000000, 0x01000000
FS_NEW_VERSION = 0x41464C00 + 1  # "AFL" in the upper bytes + protocol version 1
FS_NEW_OPT_MAPSIZE, FS_NEW_OPT_SHDMEM_FUZZ, FS_NEW_OPT_AUTODICT = 0x1, 0x2, 0x800
IPC_CREAT, IPC_RMID = 0o1000, 0

libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmat.restype = ctypes.c_void_p
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]


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
