#!/usr/bin/env python3
"""Does a short trial predict a longer campaign? (issue 12: the race ranks contestants after
short trials; this checks that ranking against the one after the whole campaign.)

Reads a ``compare.json`` of ``autotune compare`` (K trials x T minutes of several
configurations, side by side). Each trial's yardstick curve gives the coverage (yardstick edges of
everything kept up to time t, by afl-fuzz's ``time:`` stamps) at t = T/10, 2T/10, ..., T, so one
campaign answers for every shorter trial length too. For each checkpoint t it reports:

- rho over configurations: Spearman's rho between the configurations' median coverage at t and at
  T (the race keeps the better half by median, so this is the ranking it acts on);
- rho over trials: Spearman's rho between every trial's coverage at t and at T (pooled over
  configurations: does a trial that is ahead early stay ahead?);
- how often the configuration ranked first at t is first at T.

Usage (repository root):
  .venv/bin/python benchmarks/short_trials.py <compare.json> [--md out.md] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def curves_of(compare: dict) -> dict[str, list[list[tuple[float, int]]]]:
    """Per configuration, each trial's yardstick curve [(t_s, edges), ...]."""
    out: dict[str, list[list[tuple[float, int]]]] = {}
    for c in compare["configs"]:
        trials = [t["yardstick"]["curve"] for t in c["trials"] if t.get("yardstick")]
        if trials:
            out[c["config"]["name"]] = [[(float(a), int(b)) for a, b in cur] for cur in trials]
    return out


def study(compare: dict) -> dict:
    from autotune.stats import median, spearman

    curves = curves_of(compare)
    names = sorted(curves)
    if len(names) < 2:
        raise SystemExit("need a compare.json with at least two configurations that have yardstick curves")
    times = [t for t, _ in curves[names[0]][0]]
    final = {n: [cur[-1][1] for cur in curves[n]] for n in names}
    final_median = [median(final[n]) for n in names]
    rows = []
    for i, t in enumerate(times[1:], start=1):
        at = {n: [cur[i][1] for cur in curves[n] if i < len(cur)] for n in names}
        med = [median(at[n]) for n in names]
        pooled_t = [v for n in names for v in at[n]]
        pooled_T = [v for n in names for v in final[n][:len(at[n])]]
        rho_cfg = spearman(med, final_median)
        rho_trial = spearman(pooled_t, pooled_T)
        first_t = max(range(len(names)), key=lambda k: med[k])
        first_T = max(range(len(names)), key=lambda k: final_median[k])
        rows.append({"t_s": t, "median_edges": dict(zip(names, med)),
                     "rho_configs": None if math.isnan(rho_cfg) else rho_cfg,
                     "rho_trials": None if math.isnan(rho_trial) else rho_trial,
                     "leader": names[first_t], "leader_is_final_leader": names[first_t] == names[first_T]})
    return {"source": compare.get("out_dir"), "seconds": compare["seconds"], "trials": compare["trials"],
            "configs": names, "final_median_edges": dict(zip(names, final_median)), "checkpoints": rows}


def markdown(res: dict) -> str:
    names = res["configs"]
    head = "| t (s) | " + " | ".join(names) + " | rho (configs) | rho (trials) | leader at t |"
    lines = [f"Short trials against the whole campaign ({res['trials']} trials x {res['seconds']} s, "
             f"{len(names)} configurations; median yardstick edges)", "", head,
             "|" + "---|" * (len(names) + 4)]
    fmt = lambda r: "n/a" if r is None else f"{r:+.2f}"  # noqa: E731
    for row in res["checkpoints"]:
        meds = " | ".join(f"{row['median_edges'][n]:,.0f}" for n in names)
        lead = row["leader"] + ("" if row["leader_is_final_leader"] else " (not final)")
        lines.append(f"| {row['t_s']:.0f} | {meds} | {fmt(row['rho_configs'])} | {fmt(row['rho_trials'])} | {lead} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("compare_json", type=Path)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    res = study(json.loads(a.compare_json.read_text()))
    md = markdown(res)
    print(md, end="")
    if a.md:
        a.md.write_text(md)
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
