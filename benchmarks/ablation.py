#!/usr/bin/env python3
"""The search against the fixed list at equal budget (issue #24's ablation).

For each target and each `--seed`, `autotune run` as a user runs it, once with `--strategy search`
and once with `--strategy list` (benchmarks/recommend_compare.py --no-compare: the same recipe, seeds
and budget), one run at a time on all cores. Reports what each recommended, what each tried in
afl-fuzz and with what outcome; where the two recommend different configurations, the 5 x 10 min
compare of the two recommendations is the next step (recommend_compare.py's compare, by hand).

Writes OUT/<target>-<strategy>-s<seed>/ (each run's directory) and OUT/ablation.{json,md}.

  git worktree add --detach /tmp/wt && PYTHONPATH=/tmp/wt .venv/bin/python /tmp/wt/benchmarks/ablation.py \\
      --targets lz4,libyaml --seeds 7,8,9 --out /tmp/ablation
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STRATEGIES = ("search", "list")


def summarise(run_dir: Path) -> dict:
    """What one run recommended and tried: from its race.json."""
    race = json.loads((run_dir / "run" / "race" / "race.json").read_text())["race"]
    d = race["decision"]
    tried = sorted({t["contestant"] for r in race["rungs"] for t in r["trials"]})
    last = race["rungs"][-1] if race["rungs"] else None
    return {"recommended": d["recommended"], "is_default": d["is_default"], "winner": d.get("winner"),
            "p_value": d.get("p_value"), "a12": d.get("a12"), "reason": d["reason"], "tried": tried,
            "rungs": [{"seconds": r["seconds"], "kept": r["kept"]} for r in race["rungs"]],
            "last_rung_s": last["seconds"] if last else None, "elapsed_s": race.get("elapsed_s")}


def markdown(rows: list[dict]) -> str:
    lines = ["# The search against the fixed list at equal budget", "",
             "`autotune run` as a user runs it, `--strategy search` and `--strategy list`, same recipe, seeds, "
             "budget and `--seed`; AFL++ version in each run's race.md.", "",
             "| target | seed | strategy | recommended | best candidate (p, A12) | tried in afl-fuzz |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        s = r["summary"]
        p = "-" if s["p_value"] is None else f"{s['p_value']:.3f}"
        a = "-" if s["a12"] is None else f"{s['a12']:.2f}"
        lines.append(f"| {r['target']} | {r['seed']} | {r['strategy']} | {s['recommended']} | {s['winner']} ({p}, {a}) "
                     f"| {', '.join(s['tried'])} |")
    differ = []
    by = {(r["target"], r["seed"], r["strategy"]): r["summary"]["recommended"] for r in rows}
    for (t, seed, st), rec in sorted(by.items()):
        other = by.get((t, seed, "list"))
        if st == "search" and other is not None and other != rec:
            differ.append(f"- {t}, seed {seed}: search {rec}, list {other}")
    lines += ["", "Where the two differ (each pair wants a 5 x 10 min compare of the two recommendations):", ""]
    lines += differ or ["- nowhere: both recommended the same configuration in every run"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", default="lz4,libyaml")
    ap.add_argument("--seeds", default="7,8,9")
    ap.add_argument("--budget", type=float, default=None, help="autotune run --budget (default: its own)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for target in args.targets.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            for strategy in STRATEGIES:  # one after the other: a seed's two runs see the same host state
                run_dir = out / f"{target}-{strategy}-s{seed}"
                if not (run_dir / "run" / "race" / "race.json").is_file():  # a stopped ablation resumes
                    cmd = [sys.executable, str(HERE / "recommend_compare.py"), "--target", target, "--seed", str(seed),
                           "--strategy", strategy, "--no-compare", "--out", str(run_dir)]
                    cmd += ["--budget", f"{args.budget:g}"] if args.budget else []
                    t0 = time.monotonic()
                    subprocess.run(cmd, check=True, env=os.environ)
                    print(f"{target} seed {seed} {strategy}: {time.monotonic() - t0:.0f} s", flush=True)
                rows.append({"target": target, "seed": seed, "strategy": strategy, "summary": summarise(run_dir)})
                (out / "ablation.json").write_text(json.dumps(rows, indent=2) + "\n")
                (out / "ablation.md").write_text(markdown(rows))
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
