"""The real AFL++ tools (Debian's afl++): find them, build with afl-clang-fast, run afl-showmap
and a time-boxed afl-fuzz. Every run gets an explicit ``env`` dict; ``os.environ`` is never
changed, and nothing on the host is changed: only the variables this host needs to let afl-fuzz
start without root (HOST_ENV) are set for the run.
"""

from __future__ import annotations

import mmap
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from autotune.errors import AutotuneError, ToolMissingError

# afl-fuzz aborts on a piped core_pattern and on a scaling CPU governor unless told otherwise, and
# pins itself to a free core; these let it run on a shared host without changing the host.
HOST_ENV = {"AFL_SKIP_CPUFREQ": "1", "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES": "1", "AFL_NO_UI": "1",
            "AFL_NO_AFFINITY": "1"}
_COVERAGE = re.compile(rb"A coverage of (\d+) edges were achieved out of (\d+) existing")
# AFL++'s VERSION ("++4.04c", "++4.22a"): every afl tool prints it in its banner ("afl-fuzz++4.22a
# based on afl by ...") and so carries it in its executable. The runtime (kernels/aflfs.c) reads
# the same string from its parent afl tool to choose the fork-server handshake.
_AFLPP_VERSION = re.compile(rb"\+\+(\d{1,4})\.(\d{1,4})([a-z])")
VERSIONED_HANDSHAKE_SINCE = (4, 20)  # the first AFL++ whose tools read the versioned handshake
CHECKED_UP_TO = (4, 22)  # the newest AFL++ the runtime's fork server was run against (4.22a)


@dataclass(frozen=True, order=True)
class AflppVersion:
    major: int
    minor: int
    suffix: str  # c = release, a = development

    def __str__(self) -> str:
        return f"{self.major}.{self.minor:02d}{self.suffix}"

    @property
    def handshake(self) -> str:
        """The fork-server handshake the runtime speaks to this AFL++ (AUTOTUNE_AFL_HANDSHAKE=auto)."""
        return "versioned" if (self.major, self.minor) >= VERSIONED_HANDSHAKE_SINCE else "old"


def parse_aflpp_version(text: bytes | str) -> AflppVersion | None:
    """The first AFL++ version string in ``text`` (a binary's bytes or a tool's output)."""
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    m = _AFLPP_VERSION.search(data)
    return None if m is None else AflppVersion(int(m.group(1)), int(m.group(2)), m.group(3).decode())


def aflpp_version(tool: str, *, env: Mapping[str, str] | None = None) -> AflppVersion | None:
    """The AFL++ version of an afl tool: from its executable's bytes (what the runtime reads), else
    from the banner of ``tool -h`` (a wrapper script carries no version string itself)."""
    try:
        with open(tool, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            v = parse_aflpp_version(mm)  # type: ignore[arg-type]
    except (OSError, ValueError):
        v = None
    if v is not None:
        return v
    try:
        proc = subprocess.run([tool, "-h"], env=dict(env) if env is not None else None, capture_output=True,
                              timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_aflpp_version(proc.stdout + proc.stderr)


def base_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without AFL/AUTOTUNE variables (so only the files' settings apply)."""
    src = os.environ if env is None else env
    keep = {k: v for k, v in src.items() if not k.startswith(("AFL_", "AUTOTUNE_", "__AFL"))}
    for k in ("AUTOTUNE_CACHE_DIR", "AUTOTUNE_CC", "AUTOTUNE_CXX"):
        if k in src:
            keep[k] = src[k]
    return keep


def find_tool(name: str, *, env: Mapping[str, str]) -> str:
    path = shutil.which(name, path=env.get("PATH", os.defpath))
    if path is None:
        raise ToolMissingError(name, "afl++")
    return path


def known_variables(*, tools: list[str]) -> set[str]:
    """AFL_* names the given binaries contain (afl-fuzz and afl-cc carry AFL++'s whole list)."""
    names: set[str] = set()
    for t in tools:
        try:
            with open(t, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                names.update(m.decode() for m in re.findall(rb"AFL_[A-Z0-9_]+", mm))
        except (OSError, ValueError):
            continue
    return names


@dataclass(frozen=True)
class ShowmapResult:
    tuples: int  # distinct (slot, bucket) ... AFL's "edges": non-zero map entries over the corpus
    map_bytes: int | None  # "out of M existing"
    inputs: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def showmap(*, binary: Path, corpus: Path, env: Mapping[str, str], work: Path, timeout_ms: int = 5000) -> ShowmapResult:
    """afl-showmap -C over every file of ``corpus`` (``-i dir``): the map entries hit by any input."""
    tool = find_tool("afl-showmap", env=env)
    out = work / "showmap.txt"
    cmd = [tool, "-C", "-i", str(corpus), "-o", str(out), "-t", str(timeout_ms), "--", str(binary)]
    proc = subprocess.run(cmd, env=dict(env), capture_output=True, timeout=900, stdin=subprocess.DEVNULL, cwd=work)
    m = _COVERAGE.search(proc.stdout + proc.stderr)
    if m is None or not out.is_file():
        tail = (proc.stdout + proc.stderr).decode(errors="replace")[-1500:]
        raise AutotuneError(f"afl-showmap failed on {binary} (exit {proc.returncode}):\n{tail}",
                            fix="run the command by hand: " + " ".join(cmd))
    tuples = sum(1 for line in out.read_text().splitlines() if line.strip())
    return ShowmapResult(tuples=tuples, map_bytes=int(m.group(2)),
                         inputs=sum(1 for p in corpus.iterdir() if p.is_file()))


@dataclass(frozen=True)
class FuzzResult:
    execs_per_s: float
    execs_done: int
    edges_found: int
    total_edges: int
    stability: str
    corpus_count: int
    saved_crashes: int
    saved_hangs: int
    wall_s: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def fuzzer_stats(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        k, _, v = line.partition(":")
        out[k.strip()] = v.strip()
    return out


def fuzz(*, binary: Path, seeds: Path, env: Mapping[str, str], work: Path, seconds: int) -> FuzzResult:
    """afl-fuzz -V seconds (a time-box) from ``seeds``; the figures of its fuzzer_stats."""
    tool = find_tool("afl-fuzz", env=env)
    out = work / "afl-out"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [tool, "-i", str(seeds), "-o", str(out), "-V", str(int(seconds)), "--", str(binary)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=dict(env), capture_output=True, timeout=seconds + 300,
                          stdin=subprocess.DEVNULL, cwd=work)
    wall = time.monotonic() - t0
    stats = out / "default" / "fuzzer_stats"
    if not stats.is_file():
        tail = (proc.stdout + proc.stderr).decode(errors="replace")[-2500:]
        raise AutotuneError(f"afl-fuzz did not start on {binary} (exit {proc.returncode}):\n{tail}",
                            fix="run the command by hand: " + " ".join(cmd))
    st = fuzzer_stats(stats)
    return FuzzResult(execs_per_s=float(st["execs_per_sec"]), execs_done=int(st["execs_done"]),
                      edges_found=int(st["edges_found"]), total_edges=int(st["total_edges"]),
                      stability=st.get("stability", "?"), corpus_count=int(st["corpus_count"]),
                      saved_crashes=int(st.get("saved_crashes", 0)), saved_hangs=int(st.get("saved_hangs", 0)),
                      wall_s=round(wall, 2))
