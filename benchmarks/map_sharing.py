#!/usr/bin/env python3
"""The map-sizing claim under cache sharing (issue 25): execs/s per afl-fuzz instance of a large
two-level map against a flat map of the same capacity, with one instance running and with two
(one per core, sharing the last-level cache), side by side in one run.

BigMap (DSN 2021, Fig. 9) shows a flat map's per-execution cost growing sharply as parallel
instances share the last-level cache: afl-fuzz resets, classifies and compares the whole map after
every execution, so N instances stream N whole maps through one cache. With our two-level map
afl-fuzz sees only the dense map (AUTOTUNE_MAP_SIZE, the keys seen), while the index of the same
capacity (AUTOTUNE_INDEX_SIZE) is touched only where keys land.

Target: the demo harness built by `autotune cc` (blocks kind), metric ngram-8 (its census counts
about 19,000 keys: a map that must be large to keep them apart). Per capacity 2^P (--pows):
  flat      AUTOTUNE_LAYOUT=flat, AUTOTUNE_MAP_SIZE=2^P: afl-fuzz handles 2^P bytes an execution
  twolevel  AUTOTUNE_LAYOUT=twolevel, AUTOTUNE_INDEX_SIZE=2^P, AUTOTUNE_MAP_SIZE=--dense (64 KiB)
each with 1 instance (core 0, the other idle) and 2 (cores 0 and 1, the same configuration,
independent output directories, different -s), --seconds each, --rounds interleaved rounds (the
order rotated). Figure: each instance's fuzzer_stats execs_per_sec; medians per cell; the 2/1
ratio is the cache-sharing penalty, flat/twolevel the layout's effect. Campaigns keep different
inputs, which moves execs/s too; the same -s seeds are used in every cell.

  .venv/bin/python benchmarks/map_sharing.py --pows 21,22,23 --seconds 30 --rounds 3 --out /tmp/map-sharing

Writes <out>/map_sharing.json (host profile inside) and map_sharing.md; nothing outside --out and
autotune's cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autotune.afl import HOST_ENV, base_env  # noqa: E402
from autotune.io import write_json_and_markdown  # noqa: E402
from autotune.measure.host import current_host  # noqa: E402

METRIC = "ngram-8"


def build_demo(out: Path) -> tuple[Path, list[Path]]:
    from autotune import demo
    from autotune.target import build_harness
    binary = build_harness(sources=[demo.harness_source()], output=out / "demo-blocks", kind="blocks",
                           extra_cflags=list(demo.DEMO_CFLAGS))
    seeds = [p for p in sorted(demo.seed_dir().iterdir()) if p.is_file() and p.stat().st_size <= 1024]
    return binary, seeds


def layout_env(layout: str, pow2: int, dense: int, work: Path) -> dict[str, str]:
    env = {"AUTOTUNE_METRIC": METRIC, "AUTOTUNE_COUNTER_BITS": "8", "AUTOTUNE_OVERFLOW": "neverzero"}
    if layout == "flat":
        env.update(AUTOTUNE_LAYOUT="flat", AUTOTUNE_MAP_SIZE=str(1 << pow2))
    else:
        env.update(AUTOTUNE_LAYOUT="twolevel", AUTOTUNE_INDEX_SIZE=str(1 << pow2), AUTOTUNE_MAP_SIZE=str(dense),
                   AUTOTUNE_INDEX_FILE=str(work / "index.bin"))
    return env


def campaigns(binary: Path, seeds: list[Path], env_extra: dict[str, str], work: Path, *, instances: int,
              seconds: int, seed: int) -> list[float]:
    """``instances`` afl-fuzz runs at once, instance i pinned to core i; their execs_per_sec."""
    procs = []
    for i in range(instances):
        d = work / f"inst{i}"
        if d.exists():
            shutil.rmtree(d)
        (d / "in").mkdir(parents=True)
        for k, s in enumerate(seeds):
            shutil.copyfile(s, d / "in" / f"seed{k:03d}")
        env = base_env()
        env.update(HOST_ENV)
        env.update({k: v.replace(str(work), str(d)) for k, v in env_extra.items()})
        cmd = ["taskset", "-c", str(i), "afl-fuzz", "-i", str(d / "in"), "-o", str(d / "out"), "-V", str(seconds),
               "-s", str(seed + i), "--", str(binary)]
        procs.append((subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                       stdin=subprocess.DEVNULL, cwd=d), d))
    rates = []
    for p, d in procs:
        _, errtext = p.communicate(timeout=seconds + 300)
        stats = d / "out" / "default" / "fuzzer_stats"
        if p.returncode != 0 or not stats.exists():
            raise SystemExit(f"afl-fuzz failed in {d}: {errtext[-2000:]}")
        st = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in stats.read_text().splitlines())}
        rates.append(float(st["execs_per_sec"]))
    return rates


def markdown(doc: dict) -> str:
    lines = [f"# Map layout under cache sharing: demo, {METRIC}, {doc['seconds']} s campaigns, {doc['rounds']} "
             f"interleaved rounds, afl-fuzz {doc['afl_version']}", "",
             "execs/s per afl-fuzz instance (fuzzer_stats), medians over rounds and instances [min, max]; "
             f"twolevel's dense map {doc['dense']:,} bytes (what afl-fuzz handles), index = the capacity.", "",
             "| capacity | layout | 1 instance | 2 instances (each) | 2 / 1 |", "|---|---|---|---|---|"]
    for cell in doc["cells"]:
        one, two = cell["rates"]["1"], cell["rates"]["2"]
        m1, m2 = statistics.median(one), statistics.median(two)
        lines.append(f"| 2^{cell['pow']} | {cell['layout']} | {m1:,.0f} [{min(one):,.0f}, {max(one):,.0f}] | "
                     f"{m2:,.0f} [{min(two):,.0f}, {max(two):,.0f}] | {m2 / m1:.2f} |")
    for p in sorted({c["pow"] for c in doc["cells"]}):
        by = {c["layout"]: c for c in doc["cells"] if c["pow"] == p}
        if {"flat", "twolevel"} <= by.keys():
            r = {n: statistics.median(by["twolevel"]["rates"][n]) / statistics.median(by["flat"]["rates"][n])
                 for n in ("1", "2")}
            lines.append(f"\n2^{p}: twolevel / flat = {r['1']:.2f}x with 1 instance, {r['2']:.2f}x with 2.")
    lines.append(f"\nLoad average before {doc['load_before'][0]:.2f}, after {doc['load_after'][0]:.2f}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pows", default="21,22,23", help="capacities 2^P, comma-separated (flat maps at most 2^23)")
    ap.add_argument("--dense", type=int, default=65536, help="twolevel's dense map in bytes")
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("map_sharing needs two cores (one per instance)")
    a.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("AUTOTUNE_CACHE_DIR", str(a.out / "cache"))
    from autotune.afl import aflpp_version
    binary, seeds = build_demo(a.out)
    cells = [{"pow": int(p), "layout": lay, "rates": {"1": [], "2": []}}
             for p in a.pows.split(",") for lay in ("flat", "twolevel")]
    runs = [(c, n) for c in cells for n in (1, 2)]
    doc = {"seconds": a.seconds, "rounds": a.rounds, "dense": a.dense, "metric": METRIC,
           "afl_version": str(aflpp_version(shutil.which("afl-fuzz") or "afl-fuzz")),
           "load_before": os.getloadavg(), "host_profile": current_host(), "cells": cells}
    t0 = time.monotonic()
    for r in range(a.rounds):
        order = runs[r % len(runs):] + runs[:r % len(runs)]
        for cell, n in order:
            work = a.out / "work" / f"{cell['layout']}-{cell['pow']}-{n}"
            env = layout_env(cell["layout"], cell["pow"], a.dense, work)
            rates = campaigns(binary, seeds, env, work, instances=n, seconds=a.seconds, seed=a.seed + 100 * r)
            cell["rates"][str(n)].extend(rates)
            print(f"round {r} 2^{cell['pow']} {cell['layout']} x{n}: " + ", ".join(f"{x:,.0f}" for x in rates),
                  flush=True)
    doc["load_after"] = os.getloadavg()
    doc["elapsed_s"] = time.monotonic() - t0
    print(write_json_and_markdown(a.out / "map_sharing", doc, markdown(doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
