"""The canary page (kernels/canary.h) from Python: its size, a fresh one, its counts, and the replay
that attributes inputs to the bugs they reach and trigger.

The page is ``struct autotune_canary_page`` of canary.h, little-endian x86-64 layout:

    u32 magic ("CNRY", 0x59524e43), u32 version (1), u32 max_entries (255), u32 reserved,
    u64 reserved2[4], then 255 entries {char name[24]; u64 reached; u64 triggered}

48 bytes of header and 40 per entry: ``CANARY_BYTES`` = 10,248 (a test compiles canary.h and
checks ``sizeof`` against it). A zeroed page is valid: the first canary that runs writes the
header, so a page still all zeros means no canary ran (a binary without canaries, or an input
that reached none).

Replay runs the harness once per input, the input file as its only argument (both libFuzzer
drivers we build with, AFL++'s libAFLDriver and autotune's kernels/driver.c, run each file
argument once when no fuzzer drives them), with a fresh page in ``AUTOTUNE_CANARY_FILE`` and
fatal mode off: a trigger only counts, so one input reports every bug it reaches and triggers.
"""

from __future__ import annotations

import os
import struct
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from autotune.errors import AutotuneError, DocumentError
from autotune.io import write_bytes_atomic

MAGIC = 0x59524E43  # canary.h AUTOTUNE_CANARY_MAGIC, "CNRY" little-endian
VERSION = 1  # canary.h AUTOTUNE_CANARY_VERSION
MAX_ENTRIES = 255  # canary.h AUTOTUNE_CANARY_MAX
NAME_BYTES = 24  # canary.h AUTOTUNE_CANARY_NAME
_HEADER = struct.Struct("<IIII4Q")
_ENTRY = struct.Struct(f"<{NAME_BYTES}sQQ")
CANARY_BYTES = _HEADER.size + MAX_ENTRIES * _ENTRY.size  # sizeof(struct autotune_canary_page)
FILE_VAR = "AUTOTUNE_CANARY_FILE"
FATAL_VAR = "AUTOTUNE_CANARY_FATAL"
# what canary.h's fatal path writes, so a binary carrying it has at least one AUTOTUNE_BUG site
TRIGGER_MESSAGE = b"autotune-canary: triggered "
DEFAULT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class BugCount:
    reached: int
    triggered: int


@dataclass(frozen=True)
class InputBugs:
    path: Path
    reached: frozenset[str]
    triggered: frozenset[str]
    crashed: bool  # the harness died by a signal or exited non-zero (a sanitizer report, abort)
    timed_out: bool = False  # killed after timeout_s; the counts up to then still count

    def to_dict(self) -> dict:
        return {"path": str(self.path), "reached": sorted(self.reached), "triggered": sorted(self.triggered),
                "crashed": self.crashed, "timed_out": self.timed_out}


def make_page(path: str | os.PathLike) -> None:
    """A zeroed page of ``CANARY_BYTES`` at ``path`` (written atomically)."""
    write_bytes_atomic(path, bytes(CANARY_BYTES))


def parse_page(data: bytes, *, where: str | os.PathLike = "<page>") -> dict[str, BugCount]:
    """The counts of a page's bytes, by bug name (entries without a name left out)."""
    if len(data) < CANARY_BYTES:
        raise DocumentError(where, f"{len(data)} bytes, a canary page has {CANARY_BYTES}",
                            fix="make the page with autotune.bugs.page.make_page (or `autotune bugs replay`)")
    magic, version, max_entries, _, *_ = _HEADER.unpack_from(data, 0)
    if magic == 0 and version == 0 and not any(data):
        return {}  # no canary ran
    if magic != MAGIC:
        raise DocumentError(where, f"not a canary page (magic {magic:#010x}, expected {MAGIC:#010x} 'CNRY')",
                            fix="point AUTOTUNE_CANARY_FILE at a page made by make_page, and nothing else at it")
    if version != VERSION or max_entries != MAX_ENTRIES:
        raise DocumentError(where, f"canary page version {version} with {max_entries} entries; this autotune reads "
                            f"version {VERSION} with {MAX_ENTRIES}",
                            fix="rebuild the target against this autotune's kernels/canary.h")
    out: dict[str, BugCount] = {}
    for i in range(MAX_ENTRIES):
        raw, reached, triggered = _ENTRY.unpack_from(data, _HEADER.size + i * _ENTRY.size)
        name = raw.split(b"\0", 1)[0].decode("ascii", "replace")
        if name:
            out[name] = BugCount(reached=reached, triggered=triggered)
    return out


def read_page(path: str | os.PathLike) -> dict[str, BugCount]:
    """The counts of the page at ``path``, by bug name; a clear error when it is no canary page."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DocumentError(path, f"cannot read the canary page ({exc.strerror or exc})",
                            fix="make it with autotune.bugs.page.make_page before the run") from exc
    return parse_page(data, where=path)


def has_canaries(binary: str | os.PathLike) -> bool:
    """Whether ``binary`` carries canary.h's trigger message, i.e. at least one AUTOTUNE_BUG site."""
    try:
        return TRIGGER_MESSAGE in Path(binary).read_bytes()
    except OSError as exc:
        raise AutotuneError(f"cannot read the binary {binary} ({exc.strerror or exc})",
                            fix="pass the path of the built harness") from exc


def replay_env(env: Mapping[str, str] | None, page: Path) -> dict[str, str]:
    """The replay's environment: the caller's without AFL_/AUTOTUNE_ settings, the page, fatal off."""
    from autotune.afl import base_env

    return {**base_env(env), FILE_VAR: str(page), FATAL_VAR: "0"}


def replay_one(binary: Path, input_path: Path, *, page: Path, env: Mapping[str, str] | None,
               timeout_s: float) -> InputBugs:
    """Run ``binary input_path`` once with a fresh page at ``page``; the bugs it reached and triggered."""
    make_page(page)
    timed_out = False
    try:
        proc = subprocess.run([str(Path(binary).resolve()), str(Path(input_path).resolve())], env=replay_env(env, page), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout_s,
                              cwd=page.parent)
        crashed = proc.returncode != 0
    except subprocess.TimeoutExpired:
        timed_out, crashed = True, False
    except OSError as exc:
        raise AutotuneError(f"cannot run {binary} ({exc.strerror or exc})",
                            fix="pass the path of an executable harness binary") from exc
    counts = read_page(page)
    return InputBugs(path=Path(input_path), reached=frozenset(n for n, c in counts.items() if c.reached),
                     triggered=frozenset(n for n, c in counts.items() if c.triggered), crashed=crashed,
                     timed_out=timed_out)


def replay(binary: str | Path, inputs: Sequence[Path], *, env: Mapping[str, str] | None = None,
           timeout_s: float = DEFAULT_TIMEOUT_S, jobs: int = 1) -> list[InputBugs]:
    """Run the harness ``binary`` once per input (its file as the argument), each with a fresh page
    and non-fatal canaries; per input (in the order given) the bugs reached and triggered.
    ``jobs`` processes at once (1: one after another)."""
    binary = Path(binary)
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise AutotuneError(f"the harness {binary} does not exist or is not executable",
                            fix="pass the path of the canary build of the target")
    for p in inputs:
        if not Path(p).is_file():
            raise AutotuneError(f"input {p} does not exist or is not a file", fix="pass input files")
    with tempfile.TemporaryDirectory(prefix="autotune-canary-") as tmp:
        pages = [Path(tmp) / f"page-{i}" for i in range(len(inputs))]
        if jobs <= 1:
            return [replay_one(binary, Path(p), page=pg, env=env, timeout_s=timeout_s)
                    for p, pg in zip(inputs, pages)]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(lambda a: replay_one(binary, Path(a[0]), page=a[1], env=env, timeout_s=timeout_s),
                                 zip(inputs, pages)))
