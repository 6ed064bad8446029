"""validate's two runs of the real AFL++ on a built variant: afl-showmap over the probe's corpus
(the map occupancy) and a time-boxed afl-fuzz (the execs/s), each in the variant's directory."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from autotune.afl import find_tool
from autotune.errors import AutotuneError
from autotune.afl_output import read_fuzzer_stats

_COVERAGE = re.compile(rb"A coverage of (\d+) edges were achieved out of (\d+) existing")


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
    st = read_fuzzer_stats(stats)
    return FuzzResult(execs_per_s=float(st["execs_per_sec"]), execs_done=int(st["execs_done"]),
                      edges_found=int(st["edges_found"]), total_edges=int(st["total_edges"]),
                      stability=st.get("stability", "?"), corpus_count=int(st["corpus_count"]),
                      saved_crashes=int(st.get("saved_crashes", 0)), saved_hangs=int(st.get("saved_hangs", 0)),
                      wall_s=round(wall, 2))
