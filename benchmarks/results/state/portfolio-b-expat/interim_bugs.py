#!/usr/bin/env python3
"""Interim bug statistics of the expat study's finished trials (not a result: the plan's tests read the
twenty trials through pool.py). The compare writes compare.json only at its end, so this reads the
trials' documents and runs autotune.bugs.survival.bug_report on them, paired by trial index.
Run from /work/main: .venv/bin/python benchmarks/results/state/portfolio-b-expat/interim_bugs.py [DIR]"""

import glob
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))

from autotune.bugs.attribution import BugTimes, TrialBugs  # noqa: E402
from autotune.bugs.survival import bug_report  # noqa: E402

where = sys.argv[1] if len(sys.argv) > 1 else "/work/runs/study-expat"
trials, idx = {}, {}
for cfg, name in (("default", "A"), ("ours", "B")):
    for f in sorted(glob.glob(f"{where}/trials/{cfg}/trial-*/trial.json")):
        d = json.load(open(f))
        b = d["bugs"]
        trials.setdefault(name, []).append(TrialBugs(seconds=float(b["seconds"]), inputs=0, crashes=0,
                                                     crashes_without_bug=0, late_inputs=0,
                                                     bugs={k: BugTimes.from_dict(v) for k, v in b["bugs"].items()}))
        idx.setdefault(name, []).append(int(d["spec"]["index"]))
r = bug_report(trials=trials, horizon_s=1800, indices=idx).to_dict()
print(f"trials: A {len(trials['A'])}, B {len(trials['B'])} (interim, not a result)")
for c in r["combined"]:
    if c["event"] == "trigger":
        print(f"combined (trigger): p = {c['p']:.3f}, z = {c['z']:+.2f} ({'B sooner' if c['z'] > 0 else 'B later'} side); {c['method']}")
for t in r["logrank"]:
    if t["event"] == "trigger" and t["informative"]:
        print(f"  {t['bug']}: log-rank p = {t['p']:.3f}, z = {t['z']:+.2f}, Holm {t['p_holm']:.3f}")
