"""Record a finished `autotune compare --yardstick bugs` as the survival test's fixture: per
configuration and trial, the kept inputs that reached or triggered a bug (their names, times and
attribution, trial.json's ``bugs`` block), and the survival figures computed from them then.

    .venv/bin/python benchmarks/bugs/record_fixture.py COMPARE_DIR tests/fixtures/bugs_demo_compare.json

tests/test_bugs_fixture.py recomputes the figures from the recorded inputs and checks them against
these and against independent computations. Re-record deliberately (a new run, a changed demo).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from autotune.compare.compare import bug_report_of
from autotune.compare.remeasure import load_compare
from autotune.io import write_json_atomic
from autotune.trials import aflpp_versions

REACH_KEPT = 5  # per trial, the earliest inputs that only reached a bug (the figures need the first)


def main(src: Path, dest: Path) -> None:
    res = load_compare(src)
    if res.bugs is None:
        sys.exit(f"{src} was not measured by bugs (--yardstick bugs)")
    clang = subprocess.run(["clang", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    doc = {
        "what": "autotune compare --demo --yardstick bugs, recorded by benchmarks/bugs/record_fixture.py",
        "afl": aflpp_versions(t.stats for c in res.configs for t in c.trials),
        "clang": clang,
        "seconds": res.seconds,
        "configs": {c.config.name: {"description": c.config.description,
                                    "trials": [t.bugs.to_dict() for t in c.trials if t.bugs is not None]}
                    for c in res.configs},
        "expected": bug_report_of(res.configs, res.seconds).to_dict(),  # by this autotune, from the trials
    }
    for c in doc["configs"].values():
        for t in c["trials"]:
            t["binary"] = Path(t["binary"]).name  # the cache path of the recording host says nothing
            # small: every input that triggered a bug, and the earliest REACH_KEPT that only reached
            trig = [h for h in t["hits"] if h["triggered"]]
            reach = sorted((h for h in t["hits"] if not h["triggered"]),
                           key=lambda h: (h["time_ms"] is None, h["time_ms"] or 0, h["name"]))
            t["hits_recorded"] = len(t["hits"])
            t["hits"] = trig + reach[:REACH_KEPT]
    write_json_atomic(dest, doc)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
