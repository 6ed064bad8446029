#!/usr/bin/env python3
"""The fork server's soak under faults (issue 26): the fault suite of benchmarks/fault_suite.py for an
hour instead of seconds.

Round after round until --minutes have passed, every fault harness of tests/programs_afl/faults.c
(or --faults) runs --seconds of afl-fuzz on our build (autotune cc, guard kind, the child answering
afl) and, side by side on the other core, on AFL++'s afl-clang-fast build, with a new -s seed per
round; every crash and hang either saved is replayed through both builds. Totals per fault and
build: executions, crashes and hangs saved, replays that disagree, afl-fuzz's complaints about the
fork server ("misbehaving", handshake failures; the goal is 0), stability's worst round.

  .venv/bin/python benchmarks/fault_soak.py --minutes 60 --seconds 60 --out /tmp/soak
  .venv/bin/python benchmarks/fault_soak.py --afl-fuzz /path/to/4.22a/afl-fuzz --minutes 10 --out /tmp/soak422
  .venv/bin/python benchmarks/fault_soak.py --driver --minutes 15 --seconds 30 --out /tmp/soak-futex

--driver: no afl-fuzz (no AFL++ 5.x runs here): our build of each fault under
benchmarks/protocol_driver.c, AFL++ 5.x's futex sync on one core and the pipes (the child
answering afl) on the other, --seconds each, one input in ten firing the fault and afl-fuzz's
timeout handling (200 ms); every execution's end counted and checked against the fault's
(benchmarks/fault_suite.py driver_expectation).

Writes <out>/fault_soak.json (host profile and afl-fuzz version inside, every round) and
fault_soak.md after every round (a stopped soak keeps what it measured); nothing outside --out and
autotune's cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import fault_suite as fs  # noqa: E402
from autotune import afl  # noqa: E402
from autotune.io import write_json_and_markdown  # noqa: E402
from autotune.measure.host import current_host  # noqa: E402


def totals(rounds: list[dict]) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for r in rounds:
        for build, c in r["campaigns"].items():
            t = out.setdefault(r["fault"], {}).setdefault(build, {
                "rounds": 0, "execs": 0, "crashes": 0, "hangs": 0, "complaints": 0, "min_stability": None})
            t["rounds"] += 1
            t["execs"] += c["execs"]
            t["crashes"] += c["crashes"]
            t["hangs"] += c["hangs"]
            t["complaints"] += len(c["bad_lines"]) + (c["returncode"] != 0)
            s = fs.stability_value(c["stability"])
            if s is not None and (t["min_stability"] is None or s < t["min_stability"]):
                t["min_stability"] = s
        out[r["fault"]].setdefault("problems", {"count": 0})["count"] += len(r["problems"])
        for build, n in r.get("spurious_hangs", {}).items():
            out[r["fault"]][build]["spurious_hangs"] = out[r["fault"]][build].get("spurious_hangs", 0) + n
    return out


def markdown(doc: dict) -> str:
    tot = doc["totals"]
    lines = [f"# Fork-server soak: {doc['elapsed_s'] / 60:.1f} min, {len(doc['rounds'])} campaigns pairs, "
             f"afl-fuzz {doc['afl_fuzz_version']}", "",
             f"{doc['seconds']} s per campaign, -t {fs.TIMEOUT_MS} ms; ours = autotune cc guard kind "
             f"(AUTOTUNE_AFL_STATUS={doc['status_mode']}), aflpp = afl-clang-fast PCGUARD. "
             "Problems: replays that disagree, missing or unexpected saves, afl-fuzz's complaints. Spurious "
             "hangs: hangs saved on a harness without one that replay within the timeout (a stall of the "
             "loaded host).", "",
             "| fault | expect | ours execs | aflpp execs | ours crashes/hangs | aflpp crashes/hangs | "
             "ours min stability | aflpp min stability | afl-fuzz complaints (ours/aflpp) | spurious hangs "
             "(ours/aflpp) | problems |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    grand = {"ours": 0, "aflpp": 0, "complaints": 0, "problems": 0, "crashes": 0}
    for name, t in tot.items():
        o, a = t.get("ours", {}), t.get("aflpp", {})
        lines.append(f"| {name} | {fs.BY_NAME[name].expect} | {o.get('execs', 0):,} | {a.get('execs', 0):,} | "
                     f"{o.get('crashes', 0)}/{o.get('hangs', 0)} | {a.get('crashes', 0)}/{a.get('hangs', 0)} | "
                     f"{o.get('min_stability')} | {a.get('min_stability')} | "
                     f"{o.get('complaints', 0)}/{a.get('complaints', 0)} | "
                     f"{o.get('spurious_hangs', 0)}/{a.get('spurious_hangs', 0)} | {t['problems']['count']} |")
        grand["ours"] += o.get("execs", 0)
        grand["aflpp"] += a.get("execs", 0)
        grand["complaints"] += o.get("complaints", 0)
        grand["problems"] += t["problems"]["count"]
        grand["crashes"] += o.get("crashes", 0)
    lines += ["", f"Ours: {grand['ours']:,} executions, {grand['crashes']} crashes saved, "
              f"{grand['complaints']} afl-fuzz complaints about the fork server, {grand['problems']} problems "
              f"(both builds). AFL++'s build: {grand['aflpp']:,} executions.", ""]
    probs = [f"- round {r['round']} {r['fault']}: {p}" for r in doc["rounds"] for p in r["problems"]]
    if probs:
        lines += ["## Problems", "", *probs[:200], ""]
    lines += [f"Load average before {doc['load_before'][0]:.2f}, after {doc['load_after'][0]:.2f}."]
    return "\n".join(lines) + "\n"


def driver_markdown(doc: dict) -> str:
    lines = [f"# Fork-server soak under the protocol driver: {doc['elapsed_s'] / 60:.1f} min, "
             f"{len(doc['rounds'])} runs of {doc['seconds']} s", "",
             "Our guard build of each fault under benchmarks/protocol_driver.c, futex (AFL++ 5.x's sync) and "
             "pipes (the child answering 4.04c's protocol) side by side, one input in ten firing the fault, "
             f"{doc['timeout_ms']} ms timeout. Mismatches: runs whose counted ends differ from the fault's.", "",
             "| fault | mode | executions | ok | crash | timeout | exit | children | mismatches |",
             "|---|---|---|---|---|---|---|---|---|"]
    tot: dict[tuple[str, str], dict] = {}
    for r in doc["rounds"]:
        t = tot.setdefault((r["fault"], r["mode"]), {"execs": 0, "ok": 0, "crash": 0, "timeout": 0, "exit": 0,
                                                      "children": 0, "mismatches": 0})
        for k in ("execs", "ok", "crash", "timeout", "exit", "children"):
            t[k] += r["got"][k]
        t["mismatches"] += r["got"] != {**r["got"], **r["want"]}
    for (fault, mode), t in tot.items():
        lines.append(f"| {fault} | {mode} | {t['execs']:,} | {t['ok']:,} | {t['crash']:,} | {t['timeout']:,} | "
                     f"{t['exit']:,} | {t['children']:,} | {t['mismatches']} |")
    n = {m: sum(t["execs"] for (f, mm), t in tot.items() if mm == m) for m in ("futex", "pipes")}
    bad = sum(t["mismatches"] for t in tot.values())
    lines += ["", f"futex: {n['futex']:,} executions; pipes: {n['pipes']:,}; mismatching runs: {bad}; errors "
              f"(driver or target failure, a hang of the protocol): {len(doc['errors'])}.", ""]
    lines += [f"- {e}" for e in doc["errors"][:50]]
    return "\n".join(lines) + "\n"


def driver_soak(a: argparse.Namespace, faults: list) -> int:
    from concurrent.futures import ThreadPoolExecutor
    bins_dir = a.out / "bins"
    bins_dir.mkdir(exist_ok=True)
    binaries = {f.name: fs.build_ours(f, bins_dir) for f in faults}
    driver = fs.build_driver(a.out)
    inputs = fs.driver_inputs(a.out / "inputs")
    doc = {"mode": "driver", "seconds": a.seconds, "timeout_ms": fs.DRIVER_TIMEOUT_MS, "host_profile": current_host(),
           "load_before": os.getloadavg(), "rounds": [], "errors": [], "elapsed_s": 0.0}
    t0 = time.monotonic()
    r = 0
    while time.monotonic() - t0 < a.minutes * 60:
        for f in faults:
            def one(mode: str) -> dict:
                try:
                    got = fs.run_driver(driver, f, binaries[f.name], inputs, mode=mode, execs=10**12,
                                        limit_s=a.seconds)
                except Exception as exc:  # noqa: BLE001 - counted, reported, the soak goes on
                    return {"error": f"round {r} {f.name} {mode}: {exc}"}
                return {"round": r, "fault": f.name, "mode": mode, "got": got,
                        "want": fs.driver_expectation(f, mode, got["execs"])}
            with ThreadPoolExecutor(2) as pool:
                rows = list(pool.map(one, ("futex", "pipes")))
            for row in rows:
                if "error" in row:
                    doc["errors"].append(row["error"])
                else:
                    doc["rounds"].append(row)
            doc["elapsed_s"] = time.monotonic() - t0
            doc["load_after"] = os.getloadavg()
            write_json_and_markdown(a.out / "fault_soak_driver", doc, driver_markdown(doc))
            print(f"round {r} {f.name}: " + "; ".join(
                (f"{row['mode']} {row['got']['execs']:,} execs"
                 + ("" if row["got"] == {**row["got"], **row["want"]} else f" MISMATCH {row['got']} vs {row['want']}"))
                if "error" not in row else row["error"] for row in rows), flush=True)
            if time.monotonic() - t0 >= a.minutes * 60:
                break
        r += 1
    print(driver_markdown(doc))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=60.0, help="stop starting rounds after this long")
    ap.add_argument("--seconds", type=int, default=60, help="afl-fuzz time per campaign")
    ap.add_argument("--faults", default=",".join(f.name for f in fs.FAULTS))
    ap.add_argument("--afl-fuzz", default=shutil.which("afl-fuzz"), help="the afl-fuzz to run (default: PATH's)")
    ap.add_argument("--status", default="child", choices=("child", "server"), help="AUTOTUNE_AFL_STATUS for ours")
    ap.add_argument("--seed", type=int, default=1, help="afl-fuzz -s of round 0 (round r: seed + r)")
    ap.add_argument("--driver", action="store_true",
                    help="the protocol driver instead of afl-fuzz: AFL++ 5.x's futex sync and the pipes")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    faults = [fs.BY_NAME[n] for n in a.faults.split(",")]
    a.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("AUTOTUNE_CACHE_DIR", str(a.out / "cache"))
    if a.driver:
        return driver_soak(a, faults)
    bins_dir = a.out / "bins"
    bins_dir.mkdir(exist_ok=True)
    binaries = {f.name: {"ours": fs.build_ours(f, bins_dir), "aflpp": fs.build_aflpp(f, bins_dir)} for f in faults}
    version = afl.aflpp_version(a.afl_fuzz)
    env_by_build = {"ours": {**fs.GUARD_ENV, "AUTOTUNE_AFL_STATUS": a.status}}
    doc = {"afl_fuzz": a.afl_fuzz, "afl_fuzz_version": str(version), "seconds": a.seconds,
           "status_mode": a.status, "host_profile": current_host(), "load_before": os.getloadavg(),
           "rounds": [], "elapsed_s": 0.0}
    t0 = time.monotonic()
    r = 0
    while time.monotonic() - t0 < a.minutes * 60:
        for f in faults:
            res = fs.run_pair(f, binaries[f.name], a.out / "work" / f.name, seconds=a.seconds,
                              afl_fuzz=a.afl_fuzz, env_by_build=env_by_build, seed=a.seed + r)
            row = {"round": r, **res.summary()}
            doc["rounds"].append(row)
            doc["elapsed_s"] = time.monotonic() - t0
            doc["load_after"] = os.getloadavg()
            doc["totals"] = totals(doc["rounds"])
            write_json_and_markdown(a.out / "fault_soak", doc, markdown(doc))
            print(f"round {r} {f.name}: " + ", ".join(
                f"{b} {c['execs']:,} execs {c['crashes']}c/{c['hangs']}h" for b, c in row["campaigns"].items())
                + (f"; PROBLEMS: {row['problems']}" if row["problems"] else ""), flush=True)
            if time.monotonic() - t0 >= a.minutes * 60:
                break
        r += 1
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
