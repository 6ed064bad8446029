"""Benchmark: probe-server throughput (RUN round trips, execs/s) on tests/programs/loopy.c with
the census of all 13 metrics, of edge only, and of an uninstrumented build of the same harness;
the replay mode (map sink + afl-fuzz's per-exec map work) for comparison; and, without any IPC,
the in-process cost of the hooks and sinks (tests/programs/bench_hooks.c).

    .venv/bin/python tests/programs/bench_probe.py [--runs 2000] [--opt -O2]

Prints a Markdown table (median of 5 batches). Figures, not assertions: this is a shared VM.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from programs.covtools import (  # noqa: E402
    C_FLAGS, INSTRUMENT, KERNELS, PROGRAMS, RUNTIME, ProbeClient, build_cc, build_direct, run)


def probe_rate(binary: Path, data: bytes, *, runs: int, metrics: str | None) -> tuple[float, float]:
    """(execs/s over RUN round trips, median harness ns per exec as the child measured it)."""
    with tempfile.TemporaryDirectory() as d:
        c = ProbeClient(binary, Path(d), metrics=metrics, max_input=1 << 16)
        try:
            c.put(data)
            for _ in range(50):  # warm-up: fork, page faults, census inserts
                assert c.command(1).status == 0
            rates, ns = [], []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(runs // 5):
                    ns.append(c.command(1).exec_ns)
                rates.append((runs // 5) / (time.perf_counter() - t0))
            c.quit()
        finally:
            c.close()
    return statistics.median(rates), statistics.median(ns)


def replay_rate(binary: Path, data: bytes, *, runs: int, metric: str) -> float:
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "in"
        f.write_bytes(data)
        env = dict(os.environ, AUTOTUNE_REPLAY_ROUNDS=str(runs), AUTOTUNE_METRIC=metric)
        out = subprocess.run([str(binary), str(f)], env=env, capture_output=True, check=True).stdout
        return json.loads(out)["execs_per_s"]


def build_hooks_bench(d: Path, opt: str) -> dict[str, Path]:
    objs = []
    for src in [*RUNTIME, str(PROGRAMS / "bench_hooks.c")]:
        o = d / (Path(src).stem + ".hooks.o")
        run(["clang", *C_FLAGS, "-O2", "-c", str(KERNELS / src), "-o", str(o)])
        objs.append(str(o))
    out = {}
    for name, flags in (("inst", INSTRUMENT), ("plain", [])):
        exe = d / f"bench_hooks_{name}"
        run(["clang", opt, *flags, "-fno-sanitize-link-runtime", str(PROGRAMS / "loopy.c"), *objs,
             "-o", str(exe), "-lpthread", "-ldl"])
        out[name] = exe
    return out


def hooks_row(exe: Path, mode: str, metrics: str, data: bytes, execs: int) -> dict:
    best = None
    for _ in range(5):
        doc = json.loads(run([str(exe), mode, metrics, data.decode(), str(execs)]).stdout)
        if best is None or doc["execs_per_s"] > best["execs_per_s"]:
            best = doc
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--opt", default="-O2")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        inst = build_cc(d / "loopy", [PROGRAMS / "loopy.c"], opt=args.opt)
        plain = build_direct(d / "loopy-plain", [PROGRAMS / "loopy.c"], opt=args.opt, instrument=False)
        rng = random.Random(1)
        inputs = {
            "spin 100k iterations (L100)": b"L100",
            "1000 random x/y bytes": bytes(rng.choice(b"xy") for _ in range(1000)),
        }
        print(f"loopy.c {args.opt}, {args.runs} RUNs per cell; execs/s (median of 5 batches) / "
              "harness us per exec (median, measured in the child)\n")
        print("| input | census 13 metrics | census edge | uninstrumented | replay edge (map sink) |")
        print("|---|---|---|---|---|")
        for name, data in inputs.items():
            all13 = probe_rate(inst, data, runs=args.runs, metrics=None)
            edge = probe_rate(inst, data, runs=args.runs, metrics="edge")
            none = probe_rate(plain, data, runs=args.runs, metrics="edge")
            rep = replay_rate(inst, data, runs=args.runs, metric="edge")
            cells = [f"{r:,.0f} / {ns / 1000:,.1f} us" for r, ns in (all13, edge, none)]
            print(f"| {name} | {' | '.join(cells)} | {rep:,.0f} |")
        hooks = build_hooks_bench(d, args.opt)
        print("\nIn process, no IPC (bench_hooks.c), best of 5 runs: harness ns per exec / work after "
              "the harness (census merge or afl's map work) ns per exec\n")
        print("| input | uninstrumented | hooks, no sink | map sink edge (twolevel u8) | map sink ctx "
              "| census edge | census 13 metrics |")
        print("|---|---|---|---|---|---|---|")
        for name, data in inputs.items():
            execs = 300 if data.startswith(b"L") else 5000
            rows = [hooks_row(hooks["plain"], "none", "-", data, execs),
                    hooks_row(hooks["inst"], "none", "-", data, execs),
                    hooks_row(hooks["inst"], "map", "edge", data, execs),
                    hooks_row(hooks["inst"], "map", "ctx", data, execs),
                    hooks_row(hooks["inst"], "census", "edge", data, execs),
                    hooks_row(hooks["inst"], "census", "all", data, execs)]
            cells = [f"{r['harness_ns_per_exec']:,.0f} / {r['after_ns_per_exec']:,.0f}" for r in rows]
            print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
