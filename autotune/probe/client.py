"""The Python end of the probe protocol: start the harness's probe server and talk to it.

The server (kernels/driver.c) runs inputs in a persistent child it forks and re-forks itself, so
a crash or a hang costs one re-fork, never the campaign. This client writes each input into the
shared buffer, sends an 8-byte command on one pipe and reads the 120-byte reply from another.
The hot path (:meth:`ProbeServer.run`) returns the raw reply bytes; :class:`Reply` decodes them.

The server has no hello message: the client's first command is DUMP (the census is empty then),
and its reply says the server is up and ``input.buf`` exists.
"""

from __future__ import annotations

import mmap
import os
import select
import signal
import struct
import subprocess
from pathlib import Path
from typing import Mapping

from autotune.errors import AutotuneError
from autotune.probe import protocol as P
from autotune.vocabulary import SEED_VAR

LOG_NAME = "target.log"
LOG_TRUNCATE_BYTES = 16 << 20
START_TIMEOUT_S = 60.0
CONFIG_EXIT_STATUS = 2  # the server exits 2, naming the variable, when a setting is invalid
# Beyond the per-input limit the server enforces, how long to wait for it to kill, re-fork and reply.
SERVER_GRACE_S = 30.0
SANITIZER_DEFAULTS = {
    # A sanitizer report must end in a signal the server sees; leaks at the persistent child's exit
    # are not the input's fault.
    "ASAN_OPTIONS": "abort_on_error=1:detect_leaks=0:symbolize=1",
    "UBSAN_OPTIONS": "halt_on_error=1:abort_on_error=1:print_stacktrace=1",
    "MSAN_OPTIONS": "abort_on_error=1",
}
_RUN = P.COMMAND.pack(P.OP_RUN, 0)
_REPLY_HEAD = struct.Struct("<IIQ")


class ServerError(AutotuneError):
    """The probe server died or stopped answering (not an input's crash: the server itself)."""


class ProbeServer:
    """One running probe server. Use as a context manager, or call :meth:`start`/:meth:`close`."""

    def __init__(self, *, binary: Path, probe_dir: Path, seed: int = 0,
                 max_input_bytes: int = P.DEFAULT_MAX_INPUT, capacity: int = P.DEFAULT_CAPACITY,
                 timeout_ms: int = P.DEFAULT_TIMEOUT_MS, env: Mapping[str, str] | None = None,
                 argv_extra: tuple[str, ...] = (), metrics: tuple[str, ...] | None = None):
        self.binary = Path(binary).absolute()  # run with cwd=probe_dir: a relative path would not resolve
        self.probe_dir = Path(probe_dir).resolve()  # the server runs with cwd=probe_dir: a relative path would not resolve
        self.seed = seed
        self.max_input_bytes = max_input_bytes
        self.capacity = capacity
        self.timeout_ms = timeout_ms
        self.base_env = dict(os.environ if env is None else env)
        self.argv_extra = argv_extra
        self.metrics = metrics  # None: all metrics (AUTOTUNE_PROBE_METRICS=all)
        self.proc: subprocess.Popen | None = None
        self._ctl = self._st = -1
        self._mm: mmap.mmap | None = None
        self._poll = select.poll()
        self._wait_ms = int(timeout_ms + SERVER_GRACE_S * 1000)
        self._log = None
        self._log_pos = 0
        self.commands = 0
        self.pending = False

    # --- life cycle --------------------------------------------------------------------------
    def environment(self, *, ctl_fd: int, st_fd: int) -> dict[str, str]:
        env = dict(self.base_env)
        for k, v in SANITIZER_DEFAULTS.items():
            env.setdefault(k, v)
        env.update({
            "AUTOTUNE_PROBE_CTL_FD": str(ctl_fd),
            "AUTOTUNE_PROBE_ST_FD": str(st_fd),
            "AUTOTUNE_PROBE_DIR": str(self.probe_dir),
            "AUTOTUNE_PROBE_MAX_INPUT": str(self.max_input_bytes),
            "AUTOTUNE_PROBE_CAPACITY": str(self.capacity),
            "AUTOTUNE_PROBE_TIMEOUT_MS": str(self.timeout_ms),
            SEED_VAR: str(self.seed),
            "AUTOTUNE_PROBE_METRICS": ",".join(self.metrics) if self.metrics else "all",
        })
        return env

    def start(self) -> "ProbeServer":
        if not self.binary.is_file() or not os.access(self.binary, os.X_OK):
            raise AutotuneError(f"harness {self.binary} is not an executable file",
                                fix="pass the binary built with `autotune cc -fsanitize=fuzzer`")
        self.probe_dir.mkdir(parents=True, exist_ok=True)
        ctl_r, ctl_w = os.pipe()
        st_r, st_w = os.pipe()
        self._log = open(self.probe_dir / LOG_NAME, "ab")
        try:
            self.proc = subprocess.Popen(
                [str(self.binary), *self.argv_extra], env=self.environment(ctl_fd=ctl_r, st_fd=st_w),
                pass_fds=(ctl_r, st_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=self._log, start_new_session=True, cwd=self.probe_dir)
        except OSError as exc:
            for fd in (ctl_r, ctl_w, st_r, st_w):
                os.close(fd)
            raise AutotuneError(f"cannot run the harness {self.binary}: {exc.strerror}",
                                fix="check the path and that it is built for this machine") from exc
        os.close(ctl_r)
        os.close(st_w)
        self._ctl, self._st = ctl_w, st_r
        self._poll.register(st_r, select.POLLIN)
        try:
            reply = self._command(P.OP_DUMP, 0, wait_ms=int(START_TIMEOUT_S * 1000), starting=True)
            if reply.status not in (P.ST_OK, P.ST_FULL):
                raise ServerError(f"the probe server answered its first command with status {reply.status}",
                                  fix="check the harness's stderr in " + str(self.probe_dir / LOG_NAME))
            self._map_input()
        except BaseException:
            self.close(kill=True)
            raise
        return self

    def _map_input(self) -> None:
        path = self.probe_dir / P.INPUT_BUF_NAME
        want = P.INPUT_HEADER.size + self.max_input_bytes
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError as exc:
            raise ServerError(f"the probe server did not create {path}",
                              fix="rebuild the harness with this autotune version") from exc
        try:
            size = os.fstat(fd).st_size
            if size < want:
                raise ServerError(f"{path} is {size} bytes, expected {want}",
                                  fix="rebuild the harness with this autotune version")
            self._mm = mmap.mmap(fd, want, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)

    def close(self, *, kill: bool = False) -> int | None:
        """Ask the server to quit (or kill it), reap it, release the pipes. Returns its exit status."""
        rc = None
        if self.proc is not None:
            if not kill and self.proc.poll() is None:
                try:
                    os.write(self._ctl, P.COMMAND.pack(P.OP_QUIT, 0))
                    self._read_reply(wait_ms=5000)
                except (OSError, ServerError):
                    pass
                try:
                    rc = self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    kill = True
            if kill or self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)  # the server and its persistent child
                except (ProcessLookupError, PermissionError):
                    pass
                rc = self.proc.wait()
            self.proc = None
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        for fd in (self._ctl, self._st):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._ctl = self._st = -1
        if self._log is not None:
            self._log.close()
            self._log = None
        return rc

    def __enter__(self) -> "ProbeServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close(kill=exc[0] is not None)

    # --- commands ----------------------------------------------------------------------------
    def _read_reply(self, *, wait_ms: int, starting: bool = False) -> bytes:
        if not self._poll.poll(wait_ms):
            raise ServerError(
                f"the probe server gave no reply within {wait_ms / 1000:.0f} s",
                fix=f"the harness or its server is stuck; see {self.probe_dir / LOG_NAME}")
        raw = os.read(self._st, P.REPLY_SIZE)
        if len(raw) == P.REPLY_SIZE:
            return raw
        if not raw:
            self._died(starting)
        while len(raw) < P.REPLY_SIZE:  # a pipe write of 120 bytes is atomic; this is belt and braces
            more = os.read(self._st, P.REPLY_SIZE - len(raw))
            if not more:
                self._died(starting)
            raw += more
        return raw

    def _died(self, starting: bool):
        rc = self.proc.wait(timeout=10) if self.proc is not None else None
        tail = self.log_tail(max_bytes=2000).strip()
        detail = f" (exit status {rc})" if rc is not None else ""
        if starting and rc == CONFIG_EXIT_STATUS and "AUTOTUNE_" in tail:
            raise ServerError(f"the probe server of {self.binary} rejected its settings:\n{tail}",
                              fix="change the value named above (--capacity, --max-input-bytes, --timeout-ms, "
                                  "--metrics)")
        if starting:
            raise ServerError(
                f"the harness {self.binary} exited without starting the probe server{detail}"
                + (f":\n{tail}" if tail else ""),
                fix="build it with `autotune cc -fsanitize=fuzzer ...` (it needs autotune's driver)")
        raise ServerError(f"the probe server of {self.binary} died{detail}" + (f":\n{tail}" if tail else ""),
                          fix="this is a bug in the harness's initialisation or in autotune's driver; "
                              "run again with --debug and report it")

    def _command(self, op: int, arg: int, *, wait_ms: int | None = None, starting: bool = False) -> P.Reply:
        try:
            os.write(self._ctl, P.COMMAND.pack(op, arg))
        except BrokenPipeError:
            self._died(starting)
        self.commands += 1
        self.pending = True
        raw = self._read_reply(wait_ms=wait_ms or self._wait_ms, starting=starting)
        self.pending = False
        return P.Reply.unpack(raw)

    def put_input(self, data: bytes) -> None:
        n = len(data)
        if n > self.max_input_bytes:
            raise ValueError(f"input of {n} bytes exceeds the buffer ({self.max_input_bytes})")
        mm = self._mm
        mm[8:8 + n] = data
        P.INPUT_HEADER.pack_into(mm, 0, n, 0)

    def send(self, data: bytes) -> None:
        """Put ``data`` in the shared buffer and send RUN; read the reply with :meth:`recv`.

        Between the two the caller may work (e.g. build the next input) while the target runs,
        but must not call send again: the buffer belongs to the running input until its reply.
        """
        n = len(data)
        mm = self._mm
        mm[8:8 + n] = data
        P.INPUT_HEADER.pack_into(mm, 0, n, 0)
        try:
            os.write(self._ctl, _RUN)
        except BrokenPipeError:
            self._died(False)
        self.commands += 1
        self.pending = True  # until its reply is read (an interrupt in between leaves it in the pipe)

    def recv(self) -> bytes:
        raw = self._read_reply(wait_ms=self._wait_ms)
        self.pending = False
        return raw

    def run(self, data: bytes) -> bytes:
        """Run one input; the raw 120-byte reply (decode with Reply.unpack or status_of)."""
        self.send(data)
        return self.recv()

    def drain(self) -> None:
        """Read the reply of a command interrupted before its reply was read (keeps the pipe in step)."""
        if self.pending:
            self._read_reply(wait_ms=self._wait_ms)
            self.pending = False

    def trace(self, data: bytes, *, seq: int) -> P.Reply:
        self.put_input(data)
        return self._command(P.OP_TRACE, seq)

    def dump(self) -> P.Reply:
        return self._command(P.OP_DUMP, 0)

    # --- the target's stderr -----------------------------------------------------------------
    def log_tail(self, *, max_bytes: int = 4096, since_last: bool = False) -> str:
        """The end of what the harness wrote to stderr (since the previous call if since_last)."""
        path = self.probe_dir / LOG_NAME
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                start = self._log_pos if since_last and self._log_pos <= size else 0
                start = max(start, size - max_bytes)
                fh.seek(start)
                data = fh.read(size - start)
                if since_last:
                    self._log_pos = size
        except OSError:
            return ""
        return data.decode("utf-8", "replace")

    def trim_log(self) -> None:
        """Keep the harness's stderr log bounded (call now and then)."""
        if self._log is not None and os.fstat(self._log.fileno()).st_size > LOG_TRUNCATE_BYTES:
            os.truncate(self.probe_dir / LOG_NAME, 0)  # opened O_APPEND: the writer follows
            self._log_pos = 0


def status_of(raw: bytes) -> tuple[int, int, int]:
    """(status, detail, exec_ns) of a raw reply."""
    return _REPLY_HEAD.unpack_from(raw, 0)

