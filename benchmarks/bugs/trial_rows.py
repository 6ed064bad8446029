#!/usr/bin/env python3
"""One Markdown row per trial of `autotune compare --yardstick bugs` portfolio runs, for a study's report.

Each row: the arm, the trial, afl-fuzz's execs/s per instance and the trial's (their sum; where a
secondary moved, its core's over both instances' run time: autotune.trials.ensemble), each instance's queue,
the union's yardstick edges and each instance's own, what the union still gained in the trial's last
third (from its yardstick curve: whether the campaign had reached a plateau), the crashes (and those
no canary explains), then per bug its time to trigger (blank: never), and the bugs reached but never
triggered.

  .venv/bin/python benchmarks/bugs/trial_rows.py /work/runs/study-pf-libxml2:default=A \\
      /work/runs/study-pf-libxml2:ctx2=C /work/runs/study-pfb-libxml2:ours=B

ARM is DIR:CONFIG=NAME (DIR an `autotune compare --out` directory, its trials under trials/CONFIG/).
Rows go by trial index, then in the order the arms are given (a study interleaves its arms by trial);
only finished trials (trial.json) count.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _arm(spec: str) -> tuple[Path, str, str]:
    where, _, rest = spec.rpartition(":")
    config, _, name = rest.partition("=")
    if not where or not config:
        raise SystemExit(f"trial_rows: {spec!r} is not DIR:CONFIG[=NAME] (e.g. /work/runs/study:default=A)")
    return Path(where), config, name or config


def _time(s: float | None) -> str:
    if s is None:
        return ""
    return f"{s:.1f} s" if s < 600 else f"{s / 60:.1f} min"


def trials(arms: list[str]) -> list[tuple[str, dict]]:
    """(arm name, trial.json) of every finished trial: by trial index, then in the order of ``arms``."""
    out = []
    for pos, spec in enumerate(arms):
        where, config, name = _arm(spec)
        tdir = where / "trials" / config
        if not tdir.is_dir():
            raise SystemExit(f"trial_rows: {tdir} does not exist: is {where} a compare's --out and {config} its config?")
        for f in sorted(tdir.glob("trial-*/trial.json")):
            d = json.loads(f.read_text())
            out.append((d["spec"]["index"], pos, name, d))
    return [(name, d) for _i, _pos, name, d in sorted(out, key=lambda t: t[:2])]


def late_gain(d: dict) -> str:
    """Yardstick edges the union gained in the trial's last third: from the curve's last point at or before
    two thirds of the trial to its end ("+88 since 18 min"); blank without a curve."""
    curve = (d.get("yardstick") or {}).get("curve") or []
    if len(curve) < 2:
        return ""
    end_t, end_e = curve[-1]
    before = [(t, e) for t, e in curve if t <= end_t * 2 / 3]
    if not before:
        return ""
    t, e = before[-1]
    return f"+{end_e - e:,} since {t / 60:.0f} min"


def markdown(rows: list[tuple[str, dict]]) -> str:
    bugs = sorted({b for _, d in rows for b, v in ((d.get("bugs") or {}).get("bugs") or {}).items()
                   if v.get("trigger_s") is not None})
    head = ["arm", "trial", "execs/s per instance = sum", "queue per instance", "union yardstick edges",
            "own edges per instance", "union gain, last third", "crashes (no canary)", *bugs, "reached, never triggered"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, d in rows:
        members = (d.get("stats") or {}).get("members") or {}
        names = list(members)
        eps = [float(members[m]["execs_per_sec"]) for m in names]
        y = d.get("yardstick") or {}
        own = y.get("by_instance") or {}
        b = d.get("bugs") or {}
        per = b.get("bugs") or {}
        reached = sorted(k for k, v in per.items() if v.get("reach_s") is not None and v.get("trigger_s") is None)
        cells = [name, str(d["spec"]["index"]),
                 " + ".join(f"{e:,.0f}" for e in eps) + f" = {float(d['stats'].get('execs_per_sec', sum(eps))):,.0f}",
                 " / ".join(f"{int(members[m]['corpus_count']):,}" for m in names),
                 f"{y.get('edges', 0):,}",
                 " / ".join(f"{own[m]['edges']:,}" for m in names if m in own),
                 late_gain(d),
                 f"{b.get('crashes', 0):,} ({b.get('crashes_without_bug', 0)})",
                 *[_time((per.get(k) or {}).get("trigger_s")) for k in bugs],
                 ", ".join(reached)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("arms", nargs="+", metavar="DIR:CONFIG=NAME")
    args = ap.parse_args(argv)
    sys.stdout.write(markdown(trials(args.arms)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
