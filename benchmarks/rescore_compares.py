#!/usr/bin/env python3
"""Every pair of recorded compares, under today's measures: the final yardstick count and its mean
over the campaign (``mean_edges``: who got there sooner), from each compare.json's trials (no
afl-fuzz run, no replay). Prints a Markdown table; the mean was added after most of these campaigns
ran, so for them it describes, it was not a test planned in advance.

  .venv/bin/python benchmarks/rescore_compares.py benchmarks/results/compare-2026-11-2*-5x10min.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autotune.compare.compare import CompareResult, compare_pairs  # noqa: E402
from autotune.trials.trial import aflpp_versions  # noqa: E402

MEASURES = ("yardstick_edges", "mean_edges")


def rows(path: Path) -> list[str]:
    doc = json.loads(path.read_text())
    if "configs" not in doc:
        return []
    result = CompareResult.from_dict(doc)
    afl = aflpp_versions(t.stats for o in result.configs for t in o.trials)
    out = []
    for p in compare_pairs(result.configs):
        if p.measure in MEASURES:
            out.append(f"| {path.stem} | {afl} | {p.a} vs {p.b} | {p.measure} | {p.median_a:,.1f} | {p.median_b:,.1f} | "
                       f"{p.test.p:.4f} | {p.a12:.2f} |")
    return out


def main(argv: list[str]) -> int:
    if not argv:
        raise SystemExit(__doc__)
    print("| compare | AFL++ | pair (a vs b) | measure | median a | median b | p (MWU) | A12 (a > b) |")
    print("|---|---|---|---|---|---|---|---|")
    for path in map(Path, argv):
        for line in rows(path):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
