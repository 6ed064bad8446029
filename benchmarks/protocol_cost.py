#!/usr/bin/env python3
"""The fork-server protocols' cost against their limit (issue 26): microseconds per execution of
one trivial and one real harness driven through each protocol by a minimal fake fuzzer
(benchmarks/protocol_driver.c: writes the test case to shared memory, clears the map, runs,
waits; nothing else), against the harness called in-process.

Rows, all persistent, shared-memory test cases, the same inputs in the same order:
  aflpp-4.04c     afl-clang-fast's build: AFL++ 4.04c's own runtime, its relay (the server
                  resumes a SIGSTOPped child and forwards its stop) over the pipes
  ours-relay      autotune cc guard build, AUTOTUNE_AFL_STATUS=server: the same relay protocol
  ours-child      ... AUTOTUNE_AFL_STATUS=child (the default under AFL++ 4.04c..4.3x): the child
                  answers afl over the pipes, the server sleeps
  ours-futex      ... under AFL++ 5.x's futex sync (versioned handshake, AFL_CHILD_SYNC_SHM):
                  no pipe I/O per execution, the sync word goes RUN -> DONE
  ours-inprocess  the same binary's replay mode (AUTOTUNE_REPLAY_ROUNDS): the harness called in a
                  loop in one process, with afl-fuzz's per-execution map work on our map (reset,
                  classify, compare) instead of the driver's memset; no fork server at all
Every run is pinned to one core (taskset -c --cpu), fuzzer and target together, as afl-fuzz pins
itself and its target inherits the affinity: each execution is two context switches on one core.
"Above in-process" is a row's median minus ours-inprocess's: what the protocol costs. Rounds are
interleaved (every row once per round, in a rotated order); medians over rounds. Wall-clock on a
shared VM: read the ratios of one run, not the absolute figures across runs.

  .venv/bin/python benchmarks/protocol_cost.py --rounds 7 --execs 200000 --out /tmp/protocol-cost

Writes <out>/protocol_cost.json (host profile inside) and protocol_cost.md; nothing outside --out
and autotune's cache.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from autotune.afl import base_env  # noqa: E402
from autotune.io import write_json_and_markdown  # noqa: E402
from autotune.measure.host import current_host  # noqa: E402

ROWS = ("aflpp-4.04c", "ours-relay", "ours-child", "ours-futex", "ours-inprocess")


def clean_env(**extra: str) -> dict[str, str]:
    return {**base_env(), **extra}


def trivial_target(out: Path) -> dict:
    import fault_suite as fs
    f = fs.BY_NAME["segv"]  # the suite's harness; its fault never fires on these inputs
    inputs = []
    for i, data in enumerate((b"xyzA", b"AAAA", b"x\x90yz")):
        p = out / "inputs-trivial" / f"in{i}"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        inputs.append(p)
    none = fs.Fault("trivial", "FAULT_NONE", "none")
    return {"name": "trivial (tests/programs_afl/faults.c, no fault)", "ours": fs.build_ours(none, out),
            "aflpp": fs.build_aflpp(none, out), "inputs": inputs, "fault": f.name}


def lz4_target(out: Path) -> dict | None:
    try:
        from targets.libraries import LZ4, LZ4_OWN_CFLAGS
        ours = LZ4.build_harness(cc_kind="autotune", instrument="guard", cflags=LZ4_OWN_CFLAGS)
        aflpp = LZ4.build_harness(cc_kind="afl", cflags=LZ4_OWN_CFLAGS)
        inputs = [p for p in LZ4.sample_inputs() if p.stat().st_size <= 64 * 1024]
    except Exception as exc:  # noqa: BLE001 - no source here: say so, run the rest
        print(f"lz4 skipped: {exc}", file=sys.stderr)
        return None
    return {"name": "lz4 (its sample inputs up to 64 KiB)", "ours": ours, "aflpp": aflpp, "inputs": inputs}


def run_row(row: str, target: dict, driver: Path, execs: int, cpu: int) -> float:
    """Microseconds per execution of one row, one run, on core ``cpu``."""
    inputs = [str(p) for p in target["inputs"]]
    pin = ["taskset", "-c", str(cpu)]
    guard = {"AUTOTUNE_METRIC": "guard"}
    if row == "ours-inprocess":
        rounds = max(1, execs // len(inputs))
        proc = subprocess.run([*pin, str(target["ours"]), *inputs], env=clean_env(AUTOTUNE_REPLAY_ROUNDS=str(rounds), **guard),
                              capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise RuntimeError(f"{row}: {proc.stderr.strip()}")
        line = json.loads(proc.stdout.strip().splitlines()[-1])
        return 1e6 / float(line["execs_per_s"])
    if row == "aflpp-4.04c":
        mode, binary, env = "pipes", target["aflpp"], clean_env(__AFL_PERSISTENT="1")
    elif row == "ours-futex":
        mode, binary, env = "futex", target["ours"], clean_env(AUTOTUNE_AFL_HANDSHAKE="versioned", **guard)
    else:
        status = "server" if row == "ours-relay" else "child"
        mode, binary, env = "pipes", target["ours"], clean_env(AUTOTUNE_AFL_HANDSHAKE="old", AUTOTUNE_AFL_STATUS=status,
                                                              **guard)
    proc = subprocess.run([*pin, str(driver), mode, str(execs), *inputs, "--", str(binary)], env=env, capture_output=True,
                          text=True, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"{row}: exit {proc.returncode}: {proc.stderr.strip()}")
    fields = proc.stdout.split()
    return float(fields[fields.index("us_per_exec") + 1])


def markdown(doc: dict) -> str:
    lines = [f"# Fork-server protocols against the in-process call: {doc['rounds']} interleaved rounds, "
             f"{doc['execs']:,} executions a run", "",
             f"Microseconds per execution (wall clock; the fake fuzzer and the target pinned together to core {doc['cpu']}), "
             "medians over rounds [min, max]; above in-process = the row's median minus ours-inprocess's. "
             "benchmarks/protocol_cost.py, benchmarks/protocol_driver.c.", ""]
    for t in doc["targets"]:
        lines += [f"## {t['name']}", "", "| row | us/exec | [min, max] | x in-process | above in-process (us) |",
                  "|---|---|---|---|---|"]
        base = t["median"]["ours-inprocess"]
        for row in ROWS:
            v = t["runs"][row]
            m = t["median"][row]
            lines.append(f"| {row} | {m:.2f} | [{min(v):.2f}, {max(v):.2f}] | {m / base:.2f} | {m - base:.2f} |")
        lines += ["", f"ours-futex vs ours-child: {t['median']['ours-futex'] / t['median']['ours-child']:.3f}x; "
                  f"ours-child vs aflpp-4.04c: {t['median']['ours-child'] / t['median']['aflpp-4.04c']:.3f}x; "
                  f"ours-relay vs aflpp-4.04c: {t['median']['ours-relay'] / t['median']['aflpp-4.04c']:.3f}x", ""]
    lines.append(f"Load average before {doc['load_before'][0]:.2f}, after {doc['load_after'][0]:.2f}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--execs", type=int, default=200_000, help="executions per run (real harness: a tenth)")
    ap.add_argument("--targets", default="trivial,lz4")
    ap.add_argument("--cpu", type=int, default=0, help="the core every run is pinned to")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("AUTOTUNE_CACHE_DIR", str(a.out / "cache"))
    cc = shutil.which("clang") or shutil.which("cc")
    driver = a.out / "protocol_driver"
    subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", str(ROOT / "benchmarks" / "protocol_driver.c"),
                    "-o", str(driver)], check=True)
    targets = []
    for name in a.targets.split(","):
        t = trivial_target(a.out) if name == "trivial" else lz4_target(a.out) if name == "lz4" else None
        if t is None:
            continue
        t["execs"] = a.execs if name == "trivial" else max(1000, a.execs // 10)
        targets.append(t)
    doc = {"rounds": a.rounds, "execs": a.execs, "cpu": a.cpu, "load_before": os.getloadavg(), "host_profile": current_host(),
           "targets": []}
    for t in targets:
        runs: dict[str, list[float]] = {r: [] for r in ROWS}
        for r in range(a.rounds):
            order = ROWS[r % len(ROWS):] + ROWS[:r % len(ROWS)]
            for row in order:
                runs[row].append(run_row(row, t, driver, t["execs"], a.cpu))
            print(f"{t['name']} round {r}: " + ", ".join(f"{row} {runs[row][-1]:.2f}" for row in ROWS), flush=True)
        doc["targets"].append({"name": t["name"], "execs": t["execs"], "inputs": [str(p) for p in t["inputs"]],
                               "runs": runs, "median": {row: statistics.median(v) for row, v in runs.items()}})
    doc["load_after"] = os.getloadavg()
    print(write_json_and_markdown(a.out / "protocol_cost", doc, markdown(doc)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
