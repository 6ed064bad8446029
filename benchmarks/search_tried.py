#!/usr/bin/env python3
"""What the search tried in afl-fuzz, per race (issue #24): every proposal's configuration (metric,
layout, map size, counter width, overflow policy), where it came from, how far it got and its trial
figures against the paired AFL++ default, and whether the fixed list (`--strategy list`: guard,
edge, ngram-4, caller, each sized by the census) could have raced that configuration at all.

Reads race.json files (a race directory's, or the copies committed under benchmarks/results/) and
writes one markdown report; nothing runs.

  .venv/bin/python benchmarks/search_tried.py benchmarks/results/race-2026-11-26-*-search*.json --out search-tried.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]


def list_points(facts: dict) -> dict[str, dict]:
    """The fixed list's configuration of each of its metrics under this race's census and limits."""
    from autotune.race.contestants import DEFAULT_METRICS, make_contestants

    out = {}
    for c in make_contestants(metrics=DEFAULT_METRICS, estimated_keys=facts.get("keys") or {}, afl_cc=True,
                              max_collision_rate=float(facts.get("max_collision_rate", 0.02))):
        s = dict(c.settings)
        if c.is_default:
            continue
        m = s["AUTOTUNE_METRIC"]
        if m == "guard":
            out[m] = {"metric": m, "layout": "flat", "map_pow2": 0, "width": 8, "overflow": "neverzero"}
            continue
        layout = s["AUTOTUNE_LAYOUT"]
        size = int(s["AUTOTUNE_MAP_SIZE"] if layout == "flat" else s["AUTOTUNE_INDEX_SIZE"])
        out[m] = {"metric": m, "layout": layout, "map_pow2": size.bit_length() - 1,
                  "width": int(s["AUTOTUNE_COUNTER_BITS"]), "overflow": s["AUTOTUNE_OVERFLOW"]}
    return out


def describe(point: dict) -> str:
    if point["map_pow2"] == 0:
        size = "a slot per guard"
    else:
        size = f"{point['layout']} 2^{point['map_pow2']}"
    tail = "" if point["overflow"] == "neverzero" else f", {point['overflow']}"
    return f"{point['metric']}, {size}, {point['width']}-bit{tail}"


def race_rows(path: Path) -> tuple[dict, list[dict]]:
    doc = json.loads(path.read_text())
    race = doc["race"]
    search = race.get("search") or {}
    facts = search.get("facts") or {}
    listed = list_points(facts) if facts else {}
    by_name: dict[str, list[dict]] = {}
    for ob in search.get("observations", []):
        by_name.setdefault(ob["name"], []).append(ob)
    rows = []
    for p in search.get("proposals", []):
        obs = sorted(by_name.get(p["name"], []), key=lambda o: o["seconds"])
        last = obs[-1] if obs else None
        in_list = listed.get(p["point"]["metric"]) == p["point"]
        rows.append({"name": p["name"], "config": describe(p["point"]), "origin": p["origin"], "batch": p["batch"],
                     "in_list": in_list, "rungs": [o["seconds"] for o in obs],
                     "coverage": None if last is None else statistics.median(last["coverage"]),
                     "default": None if last is None else statistics.median(last["default_coverage"]),
                     "pairs_won": None if last is None else sum(a > b for a, b in
                                                                 zip(last["coverage"], last["default_coverage"])),
                     "pairs": None if last is None else len(last["coverage"]),
                     "execs_ratio": None if last is None else last.get("execs_ratio")})
    head = {"file": path.name, "decision": race["decision"]["recommended"], "reason": race["decision"]["reason"],
            "budget_s": race.get("budget_s"), "instances": facts.get("instances", 1),
            "dropped": search.get("dropped") or [], "space": search.get("space") or {},
            "versions": sorted({t.get("afl_version") for r in race["rungs"] for t in r["trials"]} - {None})}
    return head, rows


def markdown(races: list[tuple[dict, list[dict]]]) -> str:
    lines = ["# What the search tried in afl-fuzz", "",
             "Per race: each proposal's configuration, where it came from, the longest trials it reached (the "
             "median yardstick edges of its paired trials and of AFL++'s default on the same afl-fuzz seeds, "
             "the pairs it won, its execs/s over the default's) and whether the fixed list (`--strategy list`: "
             "guard, edge, ngram-4, caller, each sized by the same census) races that same configuration.", ""]
    outside = 0
    for head, rows in races:
        sp = head["space"]
        lines += [f"## {head['file']}", "",
                  f"AFL++ {', '.join(v.removeprefix('++') for v in head['versions']) or 'not recorded'}; budget {head['budget_s']} s; instances "
                  f"{head['instances']}; the space: {sp.get('points', '?')} feasible points (ruled out: "
                  + ", ".join(f"{k} {v}" for k, v in (sp.get("ruled_out") or {}).items()) + ")", "",
                  f"Recommended: **{head['decision']}**: {head['reason']}", "",
                  "| proposal | configuration | origin | rungs (s) | edges vs default (median) | pairs won | execs/s x | in the list? |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            outside += not r["in_list"]
            cov = "-" if r["coverage"] is None else f"{r['coverage']:,.0f} vs {r['default']:,.0f}"
            won = "-" if r["pairs"] is None else f"{r['pairs_won']}/{r['pairs']}"
            ratio = "-" if r["execs_ratio"] is None else f"{r['execs_ratio']:.2f}"
            lines.append(f"| {r['name']} | {r['config']} | {r['origin']} | {', '.join(map(str, r['rungs'])) or '-'} "
                         f"| {cov} | {won} | {ratio} | {'yes' if r['in_list'] else '**no**'} |")
        for d in head["dropped"]:
            lines.append(f"\nDropped: {d}")
        lines.append("")
    tried = sum(len(r) for _, r in races)
    kinds: dict[str, int] = {}
    for _, rows in races:
        for r in rows:
            k = r["origin"].split(":", 1)[0]
            kinds[k] = kinds.get(k, 0) + 1
    beat = [(h["file"], r["name"]) for h, rows in races for r in rows
            if not r["in_list"] and r["pairs"] and r["pairs_won"] * 2 > r["pairs"]]
    recommended_outside = [h["file"] for h, rows in races for r in rows
                           if not r["in_list"] and r["name"] == h["decision"]]
    lines += ["## Summary", "",
              f"- {tried} proposals over {len(races)} races, by origin: "
              + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ".",
              f"- {outside} of them are configurations the fixed list does not race; "
              f"{len(beat)} of those won more than half their pairs against the default"
              + (f" ({', '.join(f'{n} in {f}' for f, n in beat)})" if beat else "")
              + f"; {len(recommended_outside)} was recommended"
              + (f" ({', '.join(recommended_outside)})" if recommended_outside else "") + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("races", nargs="+", type=Path, help="race.json files")
    ap.add_argument("--out", type=Path, default=None, help="markdown file to write (default: print)")
    args = ap.parse_args(argv)
    paths = list(dict.fromkeys(p.resolve() for p in args.races))  # a file named twice is read once
    races = [race_rows(p) for p in paths if (json.loads(p.read_text())["race"].get("search") or {}).get("proposals")]
    text = markdown(races)
    if args.out is None:
        print(text, end="")
    else:
        tmp = args.out.with_suffix(args.out.suffix + ".tmp")
        tmp.write_text(text)
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
