#!/usr/bin/env python3
"""How a configuration's speed shows in the race's first rung (issue 56): the figure that puts tune's
replayed evaluations on the race's scale (autotune.race.search.SPEED_ELASTICITY and REPLAY_SD).
Reads every recorded search race in benchmarks/results (race-*search*.json), takes each first-rung
observation (a point's median yardstick edges and median execs/s over the default's, seed-paired
trials), drops repeats of one observation recorded in two files, and fits by least squares

    ln(edges / default edges) = a + b * ln(execs/s / default execs/s)

printing b (the elasticity), a, Pearson's r and the residual sd. Nothing runs: the figures are the
recorded campaigns' (each file names its AFL++ and clang).

  .venv/bin/python benchmarks/replay_elasticity.py --out benchmarks/results/replay-elasticity-2026-12-02.json
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def first_rung(paths: list[Path]) -> list[dict]:
    rows, seen = [], set()
    for path in paths:
        doc = json.loads(path.read_text())
        search = doc.get("search") or doc.get("race", {}).get("search")
        for o in (search or {}).get("observations", []):
            if o["rung"] != 0:
                continue
            key = (o["name"], tuple(o["coverage"]), tuple(o["default_coverage"]))
            if key in seen:
                continue
            seen.add(key)
            cov, base = statistics.median(o["coverage"]), statistics.median(o["default_coverage"])
            rows.append({"file": path.name, "name": o["name"], "execs_ratio": o["execs_ratio"],
                         "x": math.log(o["execs_ratio"]), "y": math.log((cov + 1) / (base + 1))})
    return rows


def fit(rows: list[dict]) -> dict:
    xs, ys = [r["x"] for r in rows], [r["y"] for r in rows]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    res = [y - (a + b * x) for x, y in zip(xs, ys)]
    return {"n": len(rows), "files": len({r["file"] for r in rows}), "elasticity": round(b, 4),
            "intercept": round(a, 4), "r": round(statistics.correlation(xs, ys), 4),
            "residual_sd": round(statistics.stdev(res), 4)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--out", type=Path, help="write the fit and its rows as JSON here")
    a = ap.parse_args()
    rows = first_rung(sorted(a.results.glob("race-*search*.json")))
    if len(rows) < 3:
        print(f"error: {len(rows)} first-rung observations in {a.results}; the fit needs at least 3",
              file=sys.stderr)
        return 1
    out = fit(rows)
    for k, v in out.items():
        print(f"{k}: {v}")
    if a.out:
        tmp = a.out.with_suffix(".tmp")
        tmp.write_text(json.dumps({"fit": out, "rows": rows}, indent=1) + "\n")
        tmp.replace(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
