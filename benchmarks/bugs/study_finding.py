#!/usr/bin/env python3
"""Print the portfolio study's finding on one library as the literal autotune/race/evidence.py records.

The race cites the study's figures from code (autotune.race.evidence.STUDIES); this reads them from the
pooled statistics (benchmarks/bugs/pool.py's pooled.json) with the one reading of that file
(evidence.finding_from_pooled), so no figure is copied by hand. tests/test_race_evidence.py checks every
recorded literal against its file.

  .venv/bin/python benchmarks/bugs/study_finding.py \\
      benchmarks/results/portfolio-study-2026-12-04-expat-pooled/pooled.json --library expat \\
      --arm "B=our collision-free ngram-4:ours"

--arm NAME=TEXT:ours|aflpp names each arm's -S as the report words it and whose build it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from autotune.race.evidence import finding_from_pooled  # noqa: E402


def _arm(text: str) -> tuple[str, tuple[str, bool]]:
    name, _, rest = text.partition("=")
    words, _, whose = rest.rpartition(":")
    if not name or not words or whose not in ("ours", "aflpp"):
        raise SystemExit(f"study_finding: --arm {text!r} is not NAME=TEXT:ours|aflpp "
                         "(e.g. --arm 'B=our collision-free ngram-4:ours')")
    return name, (words, whose == "ours")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pooled", type=Path, help="a pooled.json written by benchmarks/bugs/pool.py")
    ap.add_argument("--library", required=True)
    ap.add_argument("--arm", action="append", required=True, type=_arm, help="NAME=TEXT:ours|aflpp, every arm but the baseline")
    a = ap.parse_args(argv)
    try:
        doc = json.loads(a.pooled.read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"study_finding: cannot read {a.pooled}: {e}")
    names = {x["name"] for x in doc.get("arms", [])[1:]}
    given = dict(a.arm)
    if set(given) != names:
        raise SystemExit(f"study_finding: {a.pooled} has arms {sorted(names)} beside its baseline; --arm named {sorted(given)}")
    try:
        source = str(a.pooled.resolve().relative_to(ROOT))
    except ValueError:
        source = str(a.pooled)
    print(repr(finding_from_pooled(doc, library=a.library, source=source, secondaries=given)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
