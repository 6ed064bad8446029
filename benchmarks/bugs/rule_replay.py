#!/usr/bin/env python3
"""Replay the race's decision rules by bugs on trials already recorded (plan-2026-11-28-bugs-judge-rule.md).

Two rules, each a function of the trials' times to trigger per bug at a horizon H (a trial read as if
it had stopped at H):
- **log-rank**: rank by median bugs triggered per trial then mean time to trigger; decide by the
  Stouffer-combined log-rank z over the bugs either side triggered, its one-sided p from the normal
  tail (the rule before the plan) or from a permutation of whole trials (the rule after it,
  autotune.bugs.survival.permutation_test);
- **area**: a trial's time-averaged bugs triggered B = sum over triggered bugs of (H - t) / H; rank by
  median B; decide by the exact signed-rank test on paired differences of B (five pairs or more),
  else exact Mann-Whitney, one-sided (the edges judge's test, autotune.race.core.decision_test).

Sources: `compare` documents (`--compare FILE[:CANDIDATE,...]`, the first configuration the
baseline, trials paired by index) and race documents (`--race FILE`, every rung). `--aa FILE:CONFIG`
splits one configuration's trials every way into two halves and counts how often each rule calls one
half sooner (an A/A test on real trials). Writes Markdown to stdout and, with --json, the figures.

  .venv/bin/python benchmarks/bugs/rule_replay.py \\
      --compare benchmarks/results/compare-2026-11-28-demo-deeper-bugs-aflpp502c-5x180s.json.gz \\
      --horizons 21,28,42,56,84,120,180
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from pathlib import Path
from typing import Mapping, Sequence

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from autotune.bugs import race as by_bugs  # noqa: E402
from autotune.bugs.survival import censored, permutation_test, stouffer_z  # noqa: E402
from autotune.io import read_json, write_json_atomic  # noqa: E402
from autotune.stats import mann_whitney, signed_rank  # noqa: E402

ALPHA = 0.05
BugTimes = Mapping[str, "float | None"]


def load(path: Path) -> dict:
    return read_json(path)


def compare_trials(doc: Mapping) -> dict[str, dict[int, BugTimes]]:
    """config -> trial index -> bug -> time to trigger (None: never)."""
    out: dict[str, dict[int, BugTimes]] = {}
    for c in doc["configs"]:
        per = {}
        for t in c["trials"]:
            if t.get("bugs") is None:
                continue
            per[int(t["spec"]["index"])] = {b: v.get("trigger_s") for b, v in t["bugs"]["bugs"].items()}
        out[c["config"]["name"]] = per
    return out


def at(t: BugTimes, horizon: float) -> dict[str, float | None]:
    return {b: censored(None if v is None else float(v), horizon) for b, v in t.items()}


def area(t: BugTimes, horizon: float) -> float:
    """Time-averaged bugs triggered over [0, horizon]."""
    return sum((horizon - v) / horizon for v in at(t, horizon).values() if v is not None)


def area_test(cand: Mapping[int, BugTimes], base: Mapping[int, BugTimes], horizon: float,
              paired: bool = True) -> tuple[float, float, float, str]:
    """(median B candidate, median B default, one-sided p that the candidate's B is higher, test)."""
    a = {k: area(v, horizon) for k, v in cand.items()}
    b = {k: area(v, horizon) for k, v in base.items()}
    if paired and a.keys() == b.keys() and 2.0 ** -len(a) <= ALPHA:
        p, test = signed_rank([a[k] - b[k] for k in sorted(a)], alternative="greater"), f"signed-rank, {len(a)} pairs"
    else:
        p, test = mann_whitney(list(a.values()), list(b.values()), alternative="greater").p, "Mann-Whitney"
    return statistics.median(a.values()), statistics.median(b.values()), p, test


def logrank_test(cand: Mapping[int, BugTimes], base: Mapping[int, BugTimes], horizon: float,
                 permute: bool = True) -> tuple[bool, float, bool, float]:
    """(the log-rank rule's verdict by the normal tail, its p; by the permutation of whole trials, its
    p: autotune.bugs.survival.permutation_test, the rule as the race now decides). ``permute`` False: the
    normal tail only (the permutation's verdict and p are then False, nan)."""
    from scipy import stats

    c = {k: at(t, horizon) for k, t in cand.items()}
    d = {k: at(t, horizon) for k, t in base.items()}
    if not any(by_bugs.triggered_count(t) for t in (*c.values(), *d.values())):
        return False, 1.0, False, 1.0
    bugs = by_bugs.rung_bugs([*c.values(), *d.values()])
    z, k = stouffer_z(list(c.values()), list(d.values()), bugs, horizon)
    p_n = float(stats.norm.sf(z)) if k else 1.0
    if not permute:
        return z > 0 and p_n <= ALPHA, p_n, False, float("nan")
    perm = permutation_test(c, d, horizon)
    z, p_p = perm.z, perm.p
    return z > 0 and p_n <= ALPHA, p_n, z > 0 and p_p <= ALPHA, p_p


def counts(trials: Mapping[int, BugTimes], horizon: float) -> list[int]:
    return [by_bugs.triggered_count(at(trials[k], horizon)) for k in sorted(trials)]


def arms_doc(spec: str) -> tuple[Path, dict]:
    """``BASE_FILE:CONFIG,CAND_FILE:CONFIG``: two compares' arms as one compare document (the base's
    configuration first), its length the shorter arm's; the trials keep their indices (pairs)."""
    docs = []
    for arm in spec.split(","):
        path, _, config = arm.rpartition(":")
        d = load(Path(path))
        c = next((c for c in d["configs"] if c["config"]["name"] == config), None)
        if c is None:
            raise SystemExit(f"{path} has no configuration {config!r}")
        docs.append((Path(path), d, c))
    return docs[1][0], {"seconds": min(float(d["seconds"]) for _, d, _ in docs), "configs": [c for _, _, c in docs]}


def replay_compare(path: Path, horizons: Sequence[float], candidates: Sequence[str] | None,
                   doc: Mapping | None = None) -> tuple[list[str], list[dict]]:
    doc = doc if doc is not None else load(path)
    trials = compare_trials(doc)
    names = list(trials)
    base_name = names[0]
    lines = [f"### {path.name} (baseline {base_name}, {len(trials[base_name])} trials of {doc['seconds']} s)", "",
             "| candidate | H (s) | bugs per trial, candidate / default | median B, candidate / default | area rule p (test) | area recommends | log-rank, normal tail p | recommends | log-rank, permutation p | recommends |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for name in candidates or names[1:]:
        for h in horizons:
            if h > float(doc["seconds"]):
                continue
            ma, mb, p, test = area_test(trials[name], trials[base_name], h)
            ok_l, p_l, ok_p, p_p = logrank_test(trials[name], trials[base_name], h)
            ok_a = ma > mb and p <= ALPHA
            rows.append({"source": path.name, "candidate": name, "baseline": base_name, "horizon_s": h,
                         "counts": counts(trials[name], h), "baseline_counts": counts(trials[base_name], h),
                         "median_area": ma, "baseline_median_area": mb, "area_p": p, "area_test": test,
                         "area_recommends": ok_a, "logrank_p": p_l, "logrank_recommends": ok_l,
                         "permutation_p": p_p, "permutation_recommends": ok_p})
            lines.append(f"| {name} | {h:g} | {counts(trials[name], h)} / {counts(trials[base_name], h)} | "
                         f"{ma:.3f} / {mb:.3f} | {p:.3g} ({test}) | {'**yes**' if ok_a else 'no'} | {p_l:.3g} | "
                         f"{'**yes**' if ok_l else 'no'} | {p_p:.3g} | {'**yes**' if ok_p else 'no'} |")
    return lines + [""], rows


def replay_race(path: Path) -> tuple[list[str], list[dict]]:
    race = load(path)["race"]
    default = next(c["name"] for c in race["contestants"] if c.get("is_default") or c.get("default")) \
        if any(c.get("is_default") or c.get("default") for c in race["contestants"]) else "aflpp-default"
    lines = [f"### {path.name} (budget {race['budget_s']:g} s)", ""]
    rows = []
    for rung in race["rungs"]:
        h = float(rung["seconds"])
        by: dict[str, dict[int, BugTimes]] = {}
        for t in rung["trials"]:
            by.setdefault(t["contestant"], {})[int(t["repeat"])] = t.get("bugs") or {}
        bugs = by_bugs.rung_bugs([t for per in by.values() for t in per.values()])
        old = sorted(by, key=lambda n: (*by_bugs.rank_key(list(by[n].values()), bugs, h), n))
        new = sorted(by, key=lambda n: (-statistics.median(area(t, h) for t in by[n].values()), n))
        last = rung is race["rungs"][-1]
        lines.append(f"- rung {rung['index']} ({h:g} s): log-rank rule's order {', '.join(old)}; "
                     f"area rule's order {', '.join(new)}"
                     + "; median B " + ", ".join(f"{n} {statistics.median(area(t, h) for t in by[n].values()):.3f}"
                                                  for n in new))
        row = {"source": path.name, "rung": rung["index"], "seconds": h, "logrank_order": old, "area_order": new}
        if last:
            for name in dict.fromkeys(n for n in (old[0], new[0]) if n != default):
                ma, mb, p, test = area_test(by[name], by[default], h)
                ok_l, p_l, ok_p, p_p = logrank_test(by[name], by[default], h)
                lines.append(f"  - deciding rung, {name} vs {default}: bugs per trial {counts(by[name], h)} / "
                             f"{counts(by[default], h)}; median B {ma:.3f} / {mb:.3f}, area rule p = {p:.3g} ({test}) "
                             f"-> {'recommends ' + name if ma > mb and p <= ALPHA else 'default'}; log-rank p = "
                             f"{p_l:.3g} -> {'recommends ' + name if ok_l else 'default'}; log-rank by permutation p = "
                             f"{p_p:.3g} -> {'recommends ' + name if ok_p else 'default'}")
                row.setdefault("decisions", []).append(
                    {"candidate": name, "area_p": p, "area_test": test, "median_area": ma, "baseline_median_area": mb,
                     "area_recommends": ma > mb and p <= ALPHA, "logrank_p": p_l, "logrank_recommends": ok_l,
                     "permutation_p": p_p, "permutation_recommends": ok_p})
        rows.append(row)
    return lines + [""], rows


def replay_aa(path: Path, config: str, horizon: float, permute: bool) -> tuple[list[str], dict]:
    trials = compare_trials(load(path))[config]
    keys = sorted(trials)
    half = len(keys) // 2
    n = hits_area = hits_lr = hits_perm = 0
    for a in itertools.combinations(keys, half):
        b = [k for k in keys if k not in a]
        ca, cb = {k: trials[k] for k in a}, {k: trials[k] for k in b}
        n += 1
        ma, mb, p, _ = area_test(ca, cb, horizon, paired=False)
        hits_area += ma > mb and p <= ALPHA
        hits_lr += logrank_test(ca, cb, horizon, permute=False)[0]
        if permute:  # the race's test: the halves paired in order, every swap within the pairs
            hits_perm += logrank_test(dict(enumerate(ca.values())), dict(enumerate(cb.values())), horizon)[2]
    fig = {"source": path.name, "config": config, "horizon_s": horizon, "splits": n,
           "area_rate": hits_area / n, "logrank_rate": hits_lr / n,
           "permutation_rate": hits_perm / n if permute else None}
    line = (f"- A/A {path.name} `{config}`, {len(keys)} trials at {horizon:g} s, {n} ordered splits {half} vs "
            f"{len(keys) - half}: the area rule calls the first half better in {hits_area} ({hits_area / n:.1%}), "
            f"the log-rank rule by its normal tail in {hits_lr} ({hits_lr / n:.1%})"
            + (f", by the paired permutation in {hits_perm} ({hits_perm / n:.1%})" if permute else "")
            + f"; nominal one-sided level {ALPHA}")
    return [line], fig


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", action="append", default=[], help="FILE or FILE:CAND1,CAND2")
    ap.add_argument("--horizons", default="", help="comma-separated seconds for the --compare replays (default: the trials' length)")
    ap.add_argument("--arms", action="append", default=[], help="BASE_FILE:CONFIG,CAND_FILE:CONFIG (two compares' arms)")
    ap.add_argument("--race", action="append", default=[])
    ap.add_argument("--aa", action="append", default=[], help="FILE:CONFIG[@HORIZON]")
    ap.add_argument("--aa-permutation", action="store_true", help="--aa also replays the permutation test (minutes)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    out: list[str] = []
    figures: dict = {"compare": [], "race": [], "aa": []}
    for spec in args.compare:
        path, _, cands = spec.partition(":")
        doc_s = float(load(Path(path))["seconds"])
        hs = [float(h) for h in args.horizons.split(",") if h] or [doc_s]
        lines, rows = replay_compare(Path(path), hs, [c for c in cands.split(",") if c] or None)
        out += lines
        figures["compare"] += rows
    for spec in args.arms:
        path, doc = arms_doc(spec)
        hs = [float(h) for h in args.horizons.split(",") if h] or [float(doc["seconds"])]
        lines, rows = replay_compare(path, hs, None, doc=doc)
        out += lines
        figures["compare"] += rows
    for path in args.race:
        lines, rows = replay_race(Path(path))
        out += lines
        figures["race"] += rows
    for spec in args.aa:
        path, _, rest = spec.partition(":")
        config, _, h = rest.partition("@")
        lines, fig = replay_aa(Path(path), config, float(h) if h else float(load(Path(path))["seconds"]),
                               args.aa_permutation)
        out += lines
        figures["aa"].append(fig)
    print("\n".join(out))
    if args.json:
        write_json_atomic(args.json, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
