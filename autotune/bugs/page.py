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

A sweep (``sweep``, what time-to-bug needs of a trial's ten thousand kept inputs) finds the same
inputs that matter without a process per input: the inputs, in time order, go through the harness
many file arguments to a process with one page, and only a batch whose page shows a trigger or a bug
not yet located is split and run again, down to single inputs run on their own (a split search,
as in group testing).
"""

from __future__ import annotations

import os
import struct
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Mapping, Sequence

from autotune.afl import base_env
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
BATCH = 64  # a sweep's inputs per process (file arguments of one run of the harness)
# what a libFuzzer-style driver links: a binary without it may read only its first file argument
DRIVER_SYMBOL = b"LLVMFuzzerTestOneInput"


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
    return {**base_env(env), FILE_VAR: str(page), FATAL_VAR: "0"}


@dataclass(frozen=True)
class _Run:
    """One process of the harness over one or more inputs: the page's counts, how it ended."""

    counts: dict[str, BugCount]
    crashed: bool
    timed_out: bool

    def reached(self) -> frozenset[str]:
        return frozenset(n for n, c in self.counts.items() if c.reached)

    def triggered(self) -> frozenset[str]:
        return frozenset(n for n, c in self.counts.items() if c.triggered)

    def bugs(self, path: Path) -> InputBugs:
        return InputBugs(path=path, reached=self.reached(), triggered=self.triggered(), crashed=self.crashed,
                         timed_out=self.timed_out)


def _run(binary: Path, inputs: Sequence[Path], *, page: Path, env: Mapping[str, str], timeout_s: float) -> _Run:
    """``binary`` over ``inputs`` (its file arguments) in one process with a fresh page at ``page`` (a
    scratch file of the caller's: written in place, not atomically). One input gets ``timeout_s``; a
    batch of n gets timeout_s * (1 + (n - 1) / 8), a limit that only bounds the time a hang among them
    wastes (a sweep runs a batch that timed out one input per process, each with timeout_s)."""
    page.write_bytes(bytes(CANARY_BYTES))
    timed_out = False
    try:
        proc = subprocess.run([str(binary), *(str(Path(p).resolve()) for p in inputs)], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=timeout_s * (1 + (len(inputs) - 1) / 8), cwd=page.parent)
        crashed = proc.returncode != 0
    except subprocess.TimeoutExpired:
        timed_out, crashed = True, False
    except OSError as exc:
        raise AutotuneError(f"cannot run {binary} ({exc.strerror or exc})",
                            fix="pass the path of an executable harness binary") from exc
    return _Run(counts=read_page(page), crashed=crashed, timed_out=timed_out)


def replay_one(binary: Path, input_path: Path, *, page: Path, env: Mapping[str, str] | None,
               timeout_s: float) -> InputBugs:
    """Run ``binary input_path`` once with a fresh page at ``page``; the bugs it reached and triggered."""
    run = _run(Path(binary).resolve(), [input_path], page=page, env=replay_env(env, page), timeout_s=timeout_s)
    return run.bugs(Path(input_path))


def _check(binary: Path, inputs: Sequence[Path]) -> None:
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise AutotuneError(f"the harness {binary} does not exist or is not executable",
                            fix="pass the path of the canary build of the target")
    for p in inputs:
        if not Path(p).is_file():
            raise AutotuneError(f"input {p} does not exist or is not a file", fix="pass input files")


def runs_every_argument(binary: str | os.PathLike) -> bool:
    """Whether ``binary`` is a libFuzzer-style harness (it carries LLVMFuzzerTestOneInput), whose
    driver runs every file argument once: only such a binary can replay many inputs a process."""
    try:
        return DRIVER_SYMBOL in Path(binary).read_bytes()
    except OSError as exc:
        raise AutotuneError(f"cannot read the binary {binary} ({exc.strerror or exc})",
                            fix="pass the path of the built harness") from exc


def replay(binary: str | Path, inputs: Sequence[Path], *, env: Mapping[str, str] | None = None,
           timeout_s: float = DEFAULT_TIMEOUT_S, jobs: int = 1) -> list[InputBugs]:
    """Run the harness ``binary`` once per input (its file as the argument), each with a fresh page
    and non-fatal canaries; per input (in the order given) the bugs reached and triggered.
    ``jobs`` processes at once (1: one after another)."""
    binary = Path(binary)
    _check(binary, inputs)
    with tempfile.TemporaryDirectory(prefix="autotune-canary-") as tmp:
        pages = [Path(tmp) / f"page-{i}" for i in range(len(inputs))]
        if jobs <= 1:
            return [replay_one(binary, Path(p), page=pg, env=env, timeout_s=timeout_s)
                    for p, pg in zip(inputs, pages)]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(lambda a: replay_one(binary, Path(a[0]), page=a[1], env=env, timeout_s=timeout_s),
                                 zip(inputs, pages)))


@dataclass
class SweepStats:
    """What a sweep cost (processes run, inputs run on their own), and what broke its rule: bugs a batch
    reached or triggered that none of its inputs did on its own (the harness carried state from one
    input to the next; nothing is attributed to them)."""

    processes: int = 0
    single: int = 0
    unexplained: set[str] = field(default_factory=set)


def sweep(binary: str | Path, inputs: Sequence[Path], *, env: Mapping[str, str] | None = None,
          timeout_s: float = DEFAULT_TIMEOUT_S, alone: Collection[int] = (), batch: int = BATCH,
          stats: SweepStats | None = None) -> dict[int, InputBugs]:
    """The replays time-to-bug needs of ``inputs`` (in time order), by index: each its own process and
    fresh page, as ``replay`` gives them, of

    - every input in ``alone`` (a trial's crashes and hangs: a crash ends a process, a hang a batch);
    - every input that triggers a bug;
    - for each bug, the first input in the order given that reaches it;

    and of a few more inputs on the way (inputs left out reach only bugs an earlier input was found
    to reach). The other inputs run ``batch`` to a process with one page, in order; a batch whose
    page shows a trigger, or a bug no earlier input was found to reach, or that crashed (the inputs
    after the crash did not run), is halved and each half run again, down to single inputs. A batch
    that times out runs one input per process.

    This relies on the rule every libFuzzer harness is held to: an input's run does not depend on
    the inputs run before it in the process. A bug a batch shows that no single input reaches is
    attributed to none (the single runs decide). A binary that is not a libFuzzer-style harness
    (``runs_every_argument``), or ``batch`` 1, runs every input on its own."""
    binary = Path(binary).resolve()
    _check(binary, inputs)
    if batch > 1 and not runs_every_argument(binary):
        batch = 1
    stats = stats if stats is not None else SweepStats()
    found: dict[int, InputBugs] = {}
    located: set[str] = set()  # bugs whose first reaching input (in order) is found

    with tempfile.TemporaryDirectory(prefix="autotune-canary-") as tmp:
        pg = Path(tmp) / "page"
        run_env = replay_env(env, pg)

        def run(idx: Sequence[int]) -> _Run:
            stats.processes += 1
            stats.single += int(len(idx) == 1)
            return _run(binary, [inputs[i] for i in idx], page=pg, env=run_env, timeout_s=timeout_s)

        def resolve(idx: Sequence[int], r: _Run) -> None:
            if len(idx) > 1 and r.timed_out:
                for i in idx:
                    resolve([i], run([i]))
                return
            if not (r.reached() - located) and not r.triggered() and not (len(idx) > 1 and r.crashed):
                return
            if len(idx) == 1:
                found[idx[0]] = r.bugs(Path(inputs[idx[0]]))
                located.update(r.reached())
                return
            wanted = r.reached() - located
            mid = len(idx) // 2
            for half in (idx[:mid], idx[mid:]):
                resolve(half, run(half))
            singles = [found[i] for i in idx if i in found]
            stats.unexplained |= (wanted - located) | (r.triggered() - set().union(*(f.triggered for f in singles)))

        own = set(alone)
        for i in sorted(own):
            found[i] = run([i]).bugs(Path(inputs[i]))
        rest = [i for i in range(len(inputs)) if i not in own]
        step = max(1, batch)
        for k in range(0, len(rest), step):
            idx = rest[k:k + step]
            resolve(idx, run(idx))
    return found
