"""Replaying inputs through the coverage build in batches, without losing a batch to one input.

One process runs a batch of inputs (replay_main.c, the inputs in a list file) and writes one raw
profile (``LLVM_PROFILE_FILE`` names it, one name per batch). It records the index of the input
it is running in a progress file and "done" at the end, so when a batch stops early (an input
crashed, ran over the per-input timeout, or called exit) the caller knows where:

- the profile the replay main wrote on the way down (at the signal or the timeout; at exit) is
  kept when ``llvm-profdata show`` reads it: it holds the inputs before the stopping one and what
  that one ran; the batch resumes after the stopping input;
- without a readable profile (killed by SIGKILL, or the profile write failed in a corrupted
  process) the inputs before the stopping one are replayed again as a batch, the stopping one
  alone, and the rest as a batch; an input whose lone replay leaves no readable profile is lost
  (counted, as afl-showmap's unreplayed inputs are).

Every piece is smaller than the batch it came from, so this ends; a corpus without crashes or
hangs runs as one process per batch.
"""

from __future__ import annotations

import subprocess
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from autotune.errors import AutotuneError
from autotune.trials.llvmcov.tools import LlvmTools

TIMEOUT_EXIT = 124  # replay_main.c's REPLAY_TIMEOUT_EXIT
START_SLACK_S = 60  # on top of the per-input timeouts: process start, LLVMFuzzerInitialize, profile write
LOG_TAIL = 2000


@dataclass(frozen=True)
class ReplayResult:
    profiles: tuple[Path, ...]
    lost: tuple[int, ...]  # indexes (into the inputs given) whose coverage no profile holds
    processes: int
    stopped: int  # batches a crash, timeout or exit stopped early


def _progress(path: Path) -> str | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return text or None


def profile_readable(*, tools: LlvmTools, profile: Path, env: Mapping[str, str]) -> bool:
    if not profile.is_file() or profile.stat().st_size == 0:
        return False
    proc = subprocess.run([tools.profdata, "show", str(profile)], capture_output=True, env=dict(env), timeout=300)
    return proc.returncode == 0


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-LOG_TAIL:]
    except OSError:
        return ""


def replay_batches(*, binary: Path, inputs: Sequence[Path], tools: LlvmTools, work: Path, tag: str,
                   timeout_ms: int, env: Mapping[str, str], prefix: Sequence[str] = ()) -> ReplayResult:
    """Replay ``inputs`` (in order) through ``binary``; the raw profiles written (in ``work``, named
    ``<tag>-<n>.profraw``) and the inputs lost. ``prefix`` goes before the command (taskset)."""
    work.mkdir(parents=True, exist_ok=True)
    log = work / "replay.log"
    profiles: list[Path] = []
    lost: list[int] = []
    pending: deque[tuple[int, int]] = deque([(0, len(inputs))])
    processes = stopped = 0
    while pending:
        start, end = pending.popleft()
        if start >= end:
            continue
        processes += 1
        profile = work / f"{tag}-{processes}.profraw"
        listing = work / f"{tag}-{processes}.list"
        progress = work / f"{tag}-{processes}.progress"
        listing.write_text("".join(f"{p}\n" for p in inputs[start:end]))
        for f in (profile, progress):
            f.unlink(missing_ok=True)
        cmd = [*prefix, str(binary), f"-list={listing}", f"-progress={progress}", f"-timeout_ms={timeout_ms}"]
        with open(log, "ab") as out:
            try:
                proc = subprocess.run(cmd, env={**env, "LLVM_PROFILE_FILE": str(profile)}, stdin=subprocess.DEVNULL,
                                      stdout=out, stderr=out, cwd=work,
                                      timeout=START_SLACK_S + (end - start) * timeout_ms / 1000)
                rc = proc.returncode
            except subprocess.TimeoutExpired:
                rc = None  # killed: its profile is not written
        listing.unlink(missing_ok=True)
        state = _progress(progress)
        progress.unlink(missing_ok=True)
        if state == "done":
            if rc != 0 or not profile.is_file():
                raise AutotuneError(f"the coverage build {binary} replayed its inputs but exited {rc} "
                                    f"{'without a profile' if not profile.is_file() else ''}:\n{_tail(log)}",
                                    fix="run it by hand: " + " ".join(cmd))
            profiles.append(profile)
            continue
        if state is None or not state.isdigit():
            raise AutotuneError(f"the coverage build {binary} stopped before its first input (exit {rc}):\n"
                                f"{_tail(log)}", fix="run it by hand: " + " ".join(cmd))
        stopped += 1
        at = start + int(state)
        if profile_readable(tools=tools, profile=profile, env=env):
            profiles.append(profile)
            pending.appendleft((at + 1, end))
        elif end - start == 1:
            profile.unlink(missing_ok=True)
            lost.append(start)
        else:
            profile.unlink(missing_ok=True)
            pending.extendleft([(at + 1, end), (at, at + 1), (start, at)])  # extendleft reverses: start..at first
    return ReplayResult(profiles=tuple(profiles), lost=tuple(sorted(lost)), processes=processes, stopped=stopped)
