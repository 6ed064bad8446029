"""Which of a library's bugs AFL++'s default finds, and when: N campaigns of T minutes of afl-fuzz
on the library's AFL++ build (afl-clang-fast, no AFL_* build variable: PCGUARD) with fatal canaries
(a trigger aborts: afl-fuzz keeps it as a crash, its time in the name), one campaign at a time.
Each campaign's kept inputs (queue, crashes, hangs) are then replayed through the plain clang
build with non-fatal canaries (autotune.bugs.attribution), each bug's first reach and first trigger
taken from the inputs' ``time:``. Reported per bug: trials that reached / triggered it and the
median time over those trials (a bug not seen in a trial is censored at its length).

Resumable: each finished trial leaves ``trial-NN/bugs.json``; a rerun skips those and runs the
rest (a trial cut short is rerun from its start). The summary (``summary.json``, ``summary.md``)
is rewritten after every trial.

    python benchmarks/bugs/measure.py libtiff --trials 2 --minutes 5 --out benchmarks/results/bugs_libtiff
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import buglibs  # noqa: E402  (puts the repository and tests/ on the path)

SCHEMA_VERSION = 1
AFL_TIMEOUT_MS = 1000  # afl-fuzz -t: a hang is an input running over a second
SETTLE_S = 120  # afl-fuzz's start (calibrating the seeds) and stop, beyond -V, before a run is killed


def tool_versions() -> dict[str, str]:
    """afl-fuzz's and clang's versions as they print them (the figures name them)."""
    from autotune.afl import parse_aflpp_version

    out = {}
    afl = shutil.which("afl-fuzz")
    if afl:
        proc = subprocess.run([afl, "-h"], capture_output=True, timeout=30)
        ver = parse_aflpp_version(proc.stdout + proc.stderr)
        out["afl-fuzz"] = f"AFL++ {ver}" if ver else "AFL++ (version unknown)"
    clang = shutil.which("clang")
    if clang:
        first = subprocess.run([clang, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()
        out["clang"] = first[0] if first else "clang (version unknown)"
    return out


def campaign_env(caller: dict[str, str] | None = None) -> dict[str, str]:
    """afl-fuzz's environment: the host's settings (autotune.afl.HOST_ENV) and fatal canaries."""
    from autotune.afl import HOST_ENV, base_env

    return {**base_env(caller), **HOST_ENV,
            "AUTOTUNE_CANARY_FATAL": "1"}  # a trigger aborts: afl-fuzz keeps it as a crash with its time


def run_campaign(*, afl_binary: Path, seeds: Path, out: Path, seconds: int, env: dict[str, str]) -> None:
    shutil.rmtree(out, ignore_errors=True)
    afl = shutil.which("afl-fuzz", path=env.get("PATH", os.defpath))
    if afl is None:
        raise SystemExit("error: afl-fuzz is not on PATH (apt-get install afl++)")
    argv = [afl, "-i", str(seeds), "-o", str(out), "-V", str(seconds), "-t", str(AFL_TIMEOUT_MS), "-m", "none",
            "--", str(afl_binary)]
    log = out.parent / "afl-fuzz.log"
    with log.open("w") as fh:
        proc = subprocess.run(argv, env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=seconds + SETTLE_S)
    if proc.returncode != 0 or not (out / "default" / "fuzzer_stats").is_file():
        raise SystemExit(f"error: afl-fuzz exited {proc.returncode} without its statistics: see {log}")


def summarise(*, lib: buglibs.BugLibrary, trials: list[dict], seconds: int, plan: dict) -> dict:
    """Per bug of the manifest: trials that reached / triggered it, median times over those trials."""
    rows = []
    for bug in lib.bugs:
        reach = [t["bugs"][bug.id]["reach_s"] for t in trials if t["bugs"].get(bug.id, {}).get("reach_s") is not None]
        trig = [t["bugs"][bug.id]["trigger_s"] for t in trials
                if t["bugs"].get(bug.id, {}).get("trigger_s") is not None]
        rows.append({"bug": bug.id, "cve": bug.cve, "trials": len(trials),
                     "reached": len(reach), "median_reach_s": statistics.median(reach) if reach else None,
                     "triggered": len(trig), "median_trigger_s": statistics.median(trig) if trig else None})
    return {"schema_version": SCHEMA_VERSION, **plan, "seconds": seconds, "trials_done": len(trials), "bugs": rows}


def _fmt_s(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def markdown(summary: dict) -> str:
    lines = [f"# {summary['library']} {summary['upstream']}: bugs under AFL++'s default",
             "",
             f"{summary['trials_done']} of {summary['trials']} trials x {summary['seconds'] / 60:g} min, "
             f"{summary['tools'].get('afl-fuzz', '?')} (afl-clang-fast, PCGUARD, no AFL_* build variable), "
             f"{summary['tools'].get('clang', '?')}, fatal canaries, one afl-fuzz at a time "
             f"(AFL_NO_AFFINITY=1), seeds benchmarks/bugs/{summary['library']}/seeds. Median times over the "
             "trials that reached / triggered the bug (others are censored at the trial's length).",
             "",
             "| bug | CVE | reached | median reach (s) | triggered | median trigger (s) |",
             "|---|---|---|---|---|---|"]
    for r in summary["bugs"]:
        lines.append(f"| {r['bug']} | {r['cve'] or '-'} | {r['reached']}/{r['trials']} | {_fmt_s(r['median_reach_s'])} "
                     f"| {r['triggered']}/{r['trials']} | {_fmt_s(r['median_trigger_s'])} |")
    return "\n".join(lines) + "\n"


def write_json(path: Path, doc: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    tmp.replace(path)


def measure(*, name: str, trials: int, minutes: float, out: Path) -> dict:
    from autotune.bugs.attribution import attribute_trial
    from autotune.afl_output import kept_inputs

    lib = buglibs.library(name)
    seconds = int(minutes * 60)
    out.mkdir(parents=True, exist_ok=True)
    plan_path = out / "plan.json"
    plan = {"library": lib.name, "upstream": lib.upstream, "package": lib.package, "version": lib.version,
            "suite": lib.suite, "trials": trials, "seconds": seconds}
    if plan_path.is_file():
        old = json.loads(plan_path.read_text())
        if {k: old.get(k) for k in plan} != plan:
            raise SystemExit(f"error: {out} holds another plan ({plan_path}); give another --out or the same "
                             "library, --trials and --minutes")
    plan["tools"] = tool_versions()
    write_json(plan_path, plan)
    afl_binary = lib.build(cc_kind="afl")
    replay_binary = lib.build(cc_kind="plain")
    env = campaign_env()
    done: list[dict] = []
    for i in range(trials):
        tdir = out / f"trial-{i:02d}"
        result = tdir / "bugs.json"
        if not result.is_file():
            tdir.mkdir(exist_ok=True)
            t0 = time.monotonic()
            run_campaign(afl_binary=afl_binary, seeds=lib.seeds_dir, out=tdir / "afl", seconds=seconds, env=env)
            kept = kept_inputs(tdir / "afl")
            bugs = attribute_trial(binary=replay_binary, kept=kept, seconds=seconds, timeout_s=10.0)
            doc = bugs.to_dict()
            doc["wall_s"] = round(time.monotonic() - t0, 1)
            write_json(result, doc)
            print(f"{lib.name} trial {i}: triggered {sorted(bugs.triggered())}, reached {sorted(bugs.reached())}",
                  file=sys.stderr)
        done.append(json.loads(result.read_text()))
        summary = summarise(lib=lib, trials=done, seconds=seconds, plan=plan)
        write_json(out / "summary.json", summary)
        (out / "summary.md").write_text(markdown(summary))
    return summary


def publish(*, out: Path, stem: Path, summary: dict) -> None:
    """The run's figures for benchmarks/results: the summary and each trial's per-bug times (the kept
    inputs behind them stay in the run's folder)."""
    trials = []
    for f in sorted(out.glob("trial-*/bugs.json")):
        d = json.loads(f.read_text())
        d.pop("hits", None)
        d.pop("binary", None)
        trials.append({"trial": f.parent.name, **d})
    stem.parent.mkdir(parents=True, exist_ok=True)
    write_json(Path(f"{stem}.json"), {**summary, "trial_figures": trials})
    Path(f"{stem}.md").write_text(markdown(summary))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("library", help="a library of benchmarks/bugs/bugs.toml")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--out", type=Path, required=True, help="the run's folder (a rerun resumes it)")
    ap.add_argument("--keep-afl", action="store_true", help="keep afl-fuzz's output folders (large)")
    ap.add_argument("--publish", type=Path, metavar="STEM",
                    help="also write STEM.json (plan, summary, each trial's figures without its inputs) and STEM.md")
    args = ap.parse_args(argv)
    try:
        summary = measure(name=args.library, trials=args.trials, minutes=args.minutes, out=args.out)
    except buglibs.LibraryUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not args.keep_afl:
        for t in sorted(args.out.glob("trial-*/afl")):
            shutil.rmtree(t, ignore_errors=True)
    if args.publish:
        publish(out=args.out, stem=args.publish, summary=summary)
    print(markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
