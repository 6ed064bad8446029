"""Benchmark: the map sink's cost per block hit with AUTOTUNE_KEY_HASH=afl vs exact, in process
(tests/programs/bench_hooks.c, twolevel 8-bit neverzero map, 2^24 index, on loopy.c), as exact
instruction counts (valgrind --tool=callgrind) and as wall time (best of 5, noisy VM).

    .venv/bin/python tests/programs/bench_keyhash.py [--opt -O2] [--metrics edge,ngram-8,ctx]

Instructions per hit = (Ir(map sink, E2 execs) - Ir(map sink, E1 execs) - the same for no
sink) / (E2 - E1) / hits per execution; the difference of two runs cancels start-up (the 2^24
index) and the per-exec map work is over the few used slots. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from programs.bench_probe import build_hooks_bench  # noqa: E402
from programs.covtools import PROGRAMS, ProbeClient, build_cc, read_census  # noqa: E402


def hits_per_exec(binary: Path, data: bytes, work: Path) -> int:
    """Block commits of one execution: the census's total hits over the edge keys."""
    work.mkdir()
    c = ProbeClient(binary, work, metrics="edge", max_input=1 << 16)
    try:
        assert c.run(data).status == 0
        assert c.dump().status == 0
        c.quit()
    finally:
        c.close()
    return sum(e.total_hits for e in read_census(work / "census" / "edge.bin")[2])


def callgrind_ir(exe: Path, args: list[str], env: dict, out: Path) -> int:
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(exe), *args],
                   env=env, capture_output=True, check=True, timeout=600)
    m = re.search(r"^(?:summary|totals):\s*(\d+)", out.read_text(), re.M)
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--metrics", default="edge,ngram-2,ngram-4,ngram-8,ctx")
    args = ap.parse_args()
    rng = random.Random(1)
    inputs = {"1000 random x/y bytes": bytes(rng.choice(b"xy") for _ in range(1000)),
              "spin 10k iterations (L10)": b"L10"}
    base = {k: v for k, v in os.environ.items() if not k.startswith("AUTOTUNE_")}
    e1, e2 = 20, 120
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        exe = build_hooks_bench(d, args.opt)["inst"]
        probe_bin = build_cc(d / "loopy", [PROGRAMS / "loopy.c"], opt=args.opt)
        print(f"loopy.c {args.opt}, bench_hooks map sink (twolevel u8 neverzero, index 2^24, "
              f"C 2^16); callgrind Ir per block hit of the sink (hooks without a sink "
              f"subtracted), and best-of-5 wall ns per hit of the whole hook + sink\n")
        print("| input | hits/exec | metric | afl Ir/hit | exact Ir/hit | afl ns/hit | exact ns/hit |")
        print("|---|---|---|---|---|---|---|")
        for i, (name, data) in enumerate(inputs.items()):
            hits = hits_per_exec(probe_bin, data, d / f"probe{i}")
            arg = data.decode()

            def ir(mode: str, metric: str, kh: str) -> float:
                env = dict(base, AUTOTUNE_KEY_HASH=kh)
                a = callgrind_ir(exe, [mode, metric, arg, str(e1)], env, d / "cg1")
                b = callgrind_ir(exe, [mode, metric, arg, str(e2)], env, d / "cg2")
                return (b - a) / (e2 - e1)

            def ns(mode: str, metric: str, kh: str) -> float:
                env = dict(base, AUTOTUNE_KEY_HASH=kh)
                execs = max(20, 2_000_000 // max(hits, 1))
                best = min(json.loads(subprocess.run([str(exe), mode, metric, arg, str(execs)], env=env,
                                                     capture_output=True, check=True).stdout)
                           ["harness_ns_per_exec"] for _ in range(5))
                return best / hits

            none_ir = ir("none", "-", "exact")
            for metric in args.metrics.split(","):
                cells = [(ir("map", metric, kh) - none_ir) / hits for kh in ("afl", "exact")]
                cells += [ns("map", metric, kh) for kh in ("afl", "exact")]
                print(f"| {name} | {hits} | {metric} | {cells[0]:.1f} | {cells[1]:.1f} | "
                      f"{cells[2]:.2f} | {cells[3]:.2f} |")
            print(f"| {name} | {hits} | (hooks, no sink) | {none_ir / hits:.1f} total | | "
                  f"{ns('none', '-', 'exact'):.2f} | |")


if __name__ == "__main__":
    main()
