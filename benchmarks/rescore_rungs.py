#!/usr/bin/env python3
"""Re-score the first rung of recorded search races under the mean and the median of the seed-paired
objectives (issue #24: the median rule of 77f9934). Reads each race.json's search observations (no
afl-fuzz run) and prints, per race, what rung 0 kept and the order under each rule.

  .venv/bin/python benchmarks/rescore_rungs.py benchmarks/results/race-2026-11-26-*.json
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def orders(race: dict) -> tuple[list[str], list[str]] | None:
    """(names by mean, names by median) of rung 0's observations, best first; None without two."""
    obs = [o for o in (race.get("search") or {}).get("observations", []) if o["rung"] == 0]
    if len(obs) < 2:
        return None
    by = lambda f: [o["name"] for o in sorted(obs, key=lambda o: -f(o["pairs"]))]  # noqa: E731
    return by(statistics.fmean), by(statistics.median)


def main(argv: list[str]) -> int:
    for path in map(Path, argv):
        doc = json.loads(path.read_text())
        race = doc.get("race", doc)
        got = orders(race)
        if got is None:
            continue
        mean, median = got
        kept = race["rungs"][0]["kept"] if race.get("rungs") else []
        print(f"{path.name}: kept {kept}; mean {mean}; median {median}"
              f"{'' if mean == median else '  <- differs'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
