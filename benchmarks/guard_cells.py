"""The figures of plan-2026-12-03-guard-per-library.md from one `autotune compare --config default
--config guard=...` directory: per pair (trial k of both, run at once) the execs/s ratio guard /
default, each trial's own-map edges (afl-fuzz's edges_found) against its yardstick edges, the median
paired ratio with the Wilcoxon signed-rank test, yardstick edges by Mann-Whitney U, and each build's
static points (afl-fuzz's total_edges: the map size the target reported, PCGUARD's guards or our
counters).

With --callgrind N, also the plan's figure for a library whose execs/s follow the queue more than the
build: instructions per execution of both trials' binaries on the same N inputs (every k-th entry of
the default's trial 0 queue), under callgrind, exact. AFL++'s build runs each input once
(libAFLDriver given files); ours runs each twice in its replay mode (AUTOTUNE_REPLAY_ROUNDS=1, a
warm-up and a timed pass) with the trial's own variables. The figure is LLVMFuzzerTestOneInput
inclusive plus cov_exec_begin and cov_exec_end (ours only: the replay's counter copy, which afl-fuzz's
runs do not make, so it counts against guard) over the calls of LLVMFuzzerTestOneInput. Run it where
the binaries were built (under `.ci/aflpp-current.sh run` for 5.02c's builds): valgrind needs their
libraries.

    .venv/bin/python benchmarks/guard_cells.py OUT      # OUT: the compare's --out
    bash .ci/aflpp-current.sh run .venv-current/bin/python benchmarks/guard_cells.py OUT --callgrind 200
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from scipy.stats import mannwhitneyu, wilcoxon

import trial_callgrind  # benchmarks/ (beside this script)

CONFIGS = ("default", "guard")


def load(root: Path) -> dict[int, dict[str, dict]]:
    """Every trial.json of both configurations, by trial index."""
    trials: dict[int, dict[str, dict]] = {}
    for cfg in CONFIGS:
        for p in sorted(glob.glob(f"{root}/trials/{cfg}/trial-*/trial.json")):
            k = int(p.split("trial-")[-1].split("/")[0])
            trials.setdefault(k, {})[cfg] = json.loads(Path(p).read_text())
    if not any(len(t) == 2 for t in trials.values()):
        raise SystemExit(f"{root}: no trial of both 'default' and 'guard' (an autotune compare --out with "
                         "--config default --config guard=...)")
    return trials


def figures(d: dict) -> tuple[float, int, int, int]:
    """(execs/s, own-map edges, yardstick edges, static points) of one trial."""
    st, y = d["stats"], d["yardstick"]
    return (float(st.get("execs_per_sec", 0)), int(st.get("edges_found", 0)), int(y.get("edges", y.get("covered"))),
            int(st.get("total_edges", 0)))


def report(trials: dict[int, dict[str, dict]]) -> None:
    print("| pair | default execs/s | guard execs/s | ratio | default own-map / yardstick edges | guard own-map / yardstick edges |")
    print("|---|---|---|---|---|---|")
    ratios, dy, gy, dr, gr, dx, gx = [], [], [], [], [], [], []
    for k in sorted(trials):
        if len(trials[k]) < 2:
            continue
        d, g = figures(trials[k]["default"]), figures(trials[k]["guard"])
        ratios.append(g[0] / d[0]); dx.append(d[0]); gx.append(g[0])
        dy.append(d[2]); gy.append(g[2]); dr.append(d[1] / d[2]); gr.append(g[1] / g[2])
        print(f"| {k} | {d[0]:,.0f} | {g[0]:,.0f} | {g[0] / d[0]:.3f} | {d[1]:,} / {d[2]:,} ({d[1] / d[2]:.3f}) "
              f"| {g[1]:,} / {g[2]:,} ({g[1] / g[2]:.3f}) |")
    print(f"median paired ratio {statistics.median(ratios):.3f}; Wilcoxon signed-rank on execs/s "
          f"p = {wilcoxon(gx, dx).pvalue:.3f}")
    print(f"own/yardstick median: default {statistics.median(dr):.3f}, guard {statistics.median(gr):.3f}")
    static = {cfg: sorted({figures(t[cfg])[3] for t in trials.values() if cfg in t}) for cfg in CONFIGS}
    print(f"static points (total_edges): default {static['default']}, guard {static['guard']}")
    print(f"yardstick edges median: default {statistics.median(dy):,}, guard {statistics.median(gy):,}; "
          f"Mann-Whitney p = {mannwhitneyu(dy, gy).pvalue:.3f}")


def queue_inputs(trial_dir: Path, n: int) -> list[Path]:
    """n entries of a trial's queue, evenly spaced in name order."""
    queue = trial_dir / "afl-out" / "default" / "queue"
    if not queue.is_dir():
        raise SystemExit(f"{trial_dir}: no afl-fuzz queue kept (afl-out/default/queue)")
    return trial_callgrind.pick_inputs(queue, n)


def callgrind(trials: dict[int, dict[str, dict]], root: Path, n: int, work: Path) -> dict:
    """Instructions per execution of both builds on the same queue inputs (see the module's doc)."""
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind not found: apt-get install -y valgrind (inside the root that built the binaries)")
    k = min(k for k, t in trials.items() if len(t) == 2)
    inputs = queue_inputs(root / "trials" / "default" / f"trial-{k}", n)
    doc = {"inputs": len(inputs), "inputs_from": f"trials/default/trial-{k} queue", "builds": {}}
    for cfg in CONFIGS:
        spec = trials[k][cfg]["spec"]
        r = doc["builds"][cfg] = trial_callgrind.measure(spec["binary"], spec.get("env", {}), inputs, work, cfg)
        around = r["runtime_per_exec_instructions"]
        print(f"{cfg}: LLVMFuzzerTestOneInput {r['harness_instructions']:,} over {r['calls']} calls, "
              f"cov_exec_begin/end {around['cov_exec_begin']:,} / {around['cov_exec_end']:,}: "
              f"{r['per_exec']:,.0f} per execution")
    doc["ratio"] = doc["builds"]["guard"]["per_exec"] / doc["builds"]["default"]["per_exec"]
    print(f"instructions per execution, guard / default: {doc['ratio']:.3f} ({len(inputs)} inputs)")
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="an autotune compare --out with configurations default and guard")
    ap.add_argument("--callgrind", type=int, metavar="N", help="also instructions per execution on N queue inputs")
    ap.add_argument("--work", type=Path, help="where the callgrind files go (default: a temporary directory); "
                    "callgrind.json is written there")
    a = ap.parse_args(argv)
    if not a.out.is_dir():
        raise SystemExit(f"{a.out}: no such directory (the compare's --out)")
    trials = load(a.out)
    report(trials)
    if a.callgrind:
        if a.callgrind < 1:
            raise SystemExit("--callgrind: give the number of inputs, 1 or more")
        with tempfile.TemporaryDirectory(prefix="guard-cg-") as tmp:
            work = a.work or Path(tmp)
            work.mkdir(parents=True, exist_ok=True)
            doc = callgrind(trials, a.out, a.callgrind, work)
            if a.work:
                part = work / "callgrind.json.tmp"
                part.write_text(json.dumps(doc, indent=2))
                os.replace(part, work / "callgrind.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
