#!/usr/bin/env python3
"""The portfolio study's late-phase screen: does a sensitive secondary add more once the campaign slows?

plan-2026-12-01-portfolio-study.md, amendment of 2026-12-04 20:33 UTC, fixes it before it was read on
expat: per trial, the union yardstick edges gained over the horizon's second half (``late_edges``, the
same reading of the trial's yardstick curve as pool.py's), an arm against the baseline by Mann-Whitney U
(two-sided), and the bugs each trial first triggered after half the horizon. The screen passes on a
library when the arm's late gain is above the baseline's (its median higher, p < 0.05), or when some bug
is first triggered after half the horizon in at least 3 of the arm's trials whose baseline trial of the
same index (the same afl-fuzz seeds; a study that alternates its arms ran both on one machine) never
triggered it by the horizon. Passing proves nothing by itself: it only says the moved arm (D) is worth
its ten trials.

It reads finished trials (trial.json) straight from the compares' directories, so it also gives an
interim reading while a study runs (said in its output: "interim, n of N trials").

  .venv/bin/python benchmarks/bugs/late_screen.py --horizon 1800 \\
      /work/runs/study-expat:default=A /work/runs/study-expat:ours=B

ARM is DIR:CONFIG=NAME as trial_rows.py takes it; the first is the baseline, every later one is screened
against it. --json writes the figures to a file (atomically) beside the text on standard output.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from trial_rows import _arm, trials  # noqa: E402

from autotune.stats import a12, mann_whitney, median  # noqa: E402

P_LIMIT = 0.05
MIN_LATE_TRIALS = 3


def late_edges(trial: dict, horizon_s: float) -> float | None:
    """Union yardstick edges gained from the curve's last point at or before horizon/2 to the horizon
    (the trial's final count when it ran no longer than the horizon); None without a curve."""
    y = trial.get("yardstick") or {}
    curve = [(float(s), float(e)) for s, e in (y.get("curve") or []) if float(s) <= horizon_s]
    if not curve:
        return None
    seconds = float(trial["spec"]["seconds"])
    end = float(y["edges"]) if seconds <= horizon_s and y.get("edges") is not None else curve[-1][1]
    half = [e for s, e in curve if s <= horizon_s / 2]
    return end - half[-1] if half else None


def triggers(trial: dict) -> dict[str, float]:
    """Each bug the trial triggered, with its first trigger's time in seconds."""
    per = ((trial.get("bugs") or {}).get("bugs") or {})
    return {b: float(v["trigger_s"]) for b, v in per.items() if v.get("trigger_s") is not None}


@dataclass(frozen=True)
class LateBug:
    bug: str
    trials: list[int]  # indices where the arm first triggered it after horizon/2 and the baseline never did


@dataclass(frozen=True)
class Screen:
    arm: str
    baseline: str
    n: int
    n_baseline: int
    late: dict[int, float]  # trial index -> late edges
    late_baseline: dict[int, float]
    median: float
    median_baseline: float
    p: float
    a12: float
    late_bugs: list[LateBug]
    late_bugs_baseline: dict[str, list[int]]  # bug -> baseline trials that first triggered it after horizon/2

    @property
    def edges_pass(self) -> bool:
        return self.median > self.median_baseline and self.p < P_LIMIT

    @property
    def bugs_pass(self) -> bool:
        return any(len(b.trials) >= MIN_LATE_TRIALS for b in self.late_bugs)

    @property
    def passed(self) -> bool:
        return self.edges_pass or self.bugs_pass


def _late_by_bug(rows: list[dict], horizon_s: float) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for d in rows:
        for bug, t in triggers(d).items():
            if horizon_s / 2 < t <= horizon_s:
                out.setdefault(bug, []).append(int(d["spec"]["index"]))
    return {b: sorted(ks) for b, ks in sorted(out.items())}


def screen(base_rows: list[dict], arm_rows: list[dict], *, arm: str, baseline: str, horizon_s: float) -> Screen:
    """The screen of ``arm``'s trials against ``baseline``'s (each a list of trial.json documents)."""
    late = {int(d["spec"]["index"]): v for d in arm_rows if (v := late_edges(d, horizon_s)) is not None}
    late_b = {int(d["spec"]["index"]): v for d in base_rows if (v := late_edges(d, horizon_s)) is not None}
    if not late or not late_b:
        raise SystemExit(f"late_screen: no yardstick curve reaches {horizon_s / 2:.0f} s in "
                         f"{arm if not late else baseline}'s trials: were they run with a yardstick, as long as the horizon?")
    base_by_index = {int(d["spec"]["index"]): triggers(d) for d in base_rows}
    bugs = []
    for bug, ks in _late_by_bug(arm_rows, horizon_s).items():
        kept = [k for k in ks if k in base_by_index and base_by_index[k].get(bug, float("inf")) > horizon_s]
        bugs.append(LateBug(bug=bug, trials=kept))
    xs, ys = list(late.values()), list(late_b.values())
    return Screen(arm=arm, baseline=baseline, n=len(arm_rows), n_baseline=len(base_rows), late=late,
                  late_baseline=late_b, median=median(xs), median_baseline=median(ys), p=mann_whitney(xs, ys).p,
                  a12=a12(xs, ys), late_bugs=bugs, late_bugs_baseline=_late_by_bug(base_rows, horizon_s))


def text(s: Screen, *, horizon_s: float, planned: int | None) -> str:
    interim = planned is not None and min(s.n, s.n_baseline) < planned
    head = (f"late-phase screen, {s.arm} against {s.baseline}, second half of {horizon_s:.0f} s"
            + (f" (interim: {s.n} and {s.n_baseline} of {planned} trials; not a result)" if interim else ""))
    lines = [head,
             f"  late edges, median {s.arm} {s.median:g} vs {s.baseline} {s.median_baseline:g}: Mann-Whitney p = {s.p:.3f},"
             f" A12 = {s.a12:.2f} -> {'passes' if s.edges_pass else 'does not pass'} (higher, p < {P_LIMIT})",
             "  per trial (index: " + s.arm + " / " + s.baseline + "): "
             + ", ".join(f"{k}: {s.late.get(k, float('nan')):g} / {s.late_baseline.get(k, float('nan')):g}"
                         for k in sorted(set(s.late) | set(s.late_baseline)))]
    if s.late_bugs:
        for b in s.late_bugs:
            lines.append(f"  {b.bug}: first triggered after {horizon_s / 2:.0f} s by {s.arm} in trials "
                         f"{b.trials or 'none'} whose {s.baseline} trial never triggered it")
    else:
        lines.append(f"  no bug first triggered after {horizon_s / 2:.0f} s by {s.arm}")
    if s.late_bugs_baseline:
        lines.append(f"  {s.baseline}'s late first triggers: "
                     + "; ".join(f"{b} in trials {ks}" for b, ks in s.late_bugs_baseline.items()))
    lines.append(f"  bugs -> {'passes' if s.bugs_pass else 'does not pass'} (one bug in >= {MIN_LATE_TRIALS} such trials)")
    lines.append(f"  screen: {'PASSED' if s.passed else 'FAILED'}" + (" so far" if interim else ""))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("arms", nargs="+", metavar="ARM", help="DIR:CONFIG=NAME, the baseline first")
    ap.add_argument("--horizon", type=float, required=True, help="seconds; the screen reads its second half")
    ap.add_argument("--planned", type=int, help="trials planned per arm (fewer finished: the output says interim)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    a = ap.parse_args(argv)
    if len(a.arms) < 2:
        ap.error("give the baseline and at least one arm")
    rows = trials(a.arms)
    names = [_arm(spec)[2] for spec in a.arms]  # as trials() names them
    by_arm = {n: [d for name, d in rows if name == n] for n in names}
    out = []
    for n in names[1:]:
        s = screen(by_arm[names[0]], by_arm[n], arm=n, baseline=names[0], horizon_s=a.horizon)
        sys.stdout.write(text(s, horizon_s=a.horizon, planned=a.planned))
        out.append({**asdict(s), "edges_pass": s.edges_pass, "bugs_pass": s.bugs_pass, "passed": s.passed})
    if a.json:
        tmp = a.json.with_name(a.json.name + ".tmp")
        tmp.write_text(json.dumps({"horizon_s": a.horizon, "planned": a.planned, "screens": out}, indent=1) + "\n")
        os.replace(tmp, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
