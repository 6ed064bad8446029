#!/usr/bin/env python3
"""Does metric diversity beat speed in a multi-instance campaign? (issue #25's must-show)

On one real library, as a user runs it: `autotune run --instances N` (the search races N-instance
portfolios, AFL++'s default as the main, its configurations on the secondaries), then one
`autotune compare` of three N-instance portfolios, each trial all N afl-fuzz instances syncing one
output directory (-M/-S, AFL++'s variations on the secondaries), the union measured by one yardstick
(Klees et al., CCS 2018: K trials x T minutes, medians, Mann-Whitney U, A12):

- ``aflpp-default``: AFL++'s default portfolio, N x afl-clang-fast (PCGUARD);
- ``fastest``: our fastest single configuration (guard, the inline-counter build) N times;
- ``diverse``: the portfolio `autotune run --instances N` recommended when its secondaries run another
  metric than PCGUARD's; else the race's best metric-diverse portfolio (AFL++'s default main, the
  search's configuration of another metric on the secondaries), written from race.json, said so.

Writes to --out: seeds/, run/ + run.log (the main job), arms/ (the env files of the arms),
compare/ (compare.json/md/png) + compare.log, summary.json. A stopped one finishes with --resume
(the same arguments): the run is kept, the compare's finished trials too.

  git worktree add --detach /tmp/wt && PYTHONPATH=/tmp/wt .venv/bin/python /tmp/wt/benchmarks/portfolio_compare.py \\
      --target libjpeg-turbo --instances 2 --budget 900 --trials 3 --minutes 10 --out /tmp/pf-jpeg
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
AUTOTUNE = Path(sys.executable).parent / "autotune"

from recommend_compare import setup  # noqa: E402  (the targets' recipes, one place)

GUARD = {"AUTOTUNE_CC_INSTRUMENT": "guard", "AUTOTUNE_METRIC": "guard"}


def write_env(path: Path, title: str, variables: dict[str, str]) -> Path:
    path.write_text(f"# {title}\n" + "".join(f"{k}={v}\n" for k, v in sorted(variables.items())))
    return path


def member_spec(member: dict, arms: Path, tag: str) -> str:
    """A race contestant (race.json) as compare's SPEC: ``default`` or ``BUILD.env+RUN.env``."""
    if member.get("cc_kind") == "afl" and not member.get("settings"):
        return "default"
    settings = dict(member.get("settings") or {})
    if "AUTOTUNE_INDEX_FILE" in settings:  # the slot file the race kept: a fresh one per arm
        settings["AUTOTUNE_INDEX_FILE"] = str(arms / f"{tag}-index.bin")
    b = write_env(arms / f"{tag}-build.env", f"{member['name']}: build (from race.json)", dict(member.get("build") or {}))
    r = write_env(arms / f"{tag}-run.env", f"{member['name']}: run (from race.json)", settings)
    return f"{b}+{r}"


def _metric(contestant: dict) -> str:
    """The metric a portfolio's secondaries run (PCGUARD's guard coverage for AFL++'s default)."""
    members = contestant.get("members") or [contestant]
    return (members[-1].get("settings") or {}).get("AUTOTUNE_METRIC", "guard")


def diverse_arm(race: dict, arms: Path) -> tuple[str, str]:
    """(compare's --portfolio argument, where it came from): the recommended portfolio when its
    secondaries run another metric than the main's; else the race's best metric-diverse portfolio
    (furthest rung reached, then median edges there), said so."""
    r, d = race["race"], race["race"]["decision"]
    by_name = {c["name"]: c for c in r["contestants"]}
    if not d["is_default"] and _metric(by_name[d["recommended"]]) != "guard":
        name, origin = d["recommended"], "recommended by the race"
    else:
        reach: dict[str, tuple[int, float]] = {}
        for rung in r["rungs"]:
            for n in {t["contestant"] for t in rung["trials"]}:
                cov = sorted(t["coverage"] for t in rung["trials"] if t["contestant"] == n)
                reach[n] = (rung["index"], cov[len(cov) // 2])
        diverse = [n for n, c in by_name.items() if not c["is_default"] and _metric(c) != "guard" and n in reach]
        if not diverse:
            raise SystemExit("the race tried no metric-diverse portfolio: raise its --budget")
        name = max(diverse, key=lambda n: reach[n])
        origin = (f"the race's best metric-diverse portfolio {name!r} (rung {reach[name][0]}, median "
                  f"{reach[name][1]:g} edges), not recommended: {d['reason']}")
    members = by_name[name].get("members") or [by_name[name]]
    specs = [member_spec(m, arms, f"diverse{j}") for j, m in enumerate(members)]
    return "diverse=" + ",".join(specs), origin


def medians(cmp: dict) -> dict:
    """Each arm's median yardstick edges and execs/s (every trial's figures stay in compare.json)."""
    return {c["config"]["name"]: {"yardstick_edges": c["coverage"]["median"], "execs_per_s": c["execs_per_s"]["median"]}
            for c in cmp.get("configs", ())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", required=True)
    ap.add_argument("--instances", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7, help="autotune run --seed")
    ap.add_argument("--budget", type=float, default=None, help="autotune run --budget (default: its own)")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--compare-seed", type=int, default=11, help="autotune compare --seed")
    ap.add_argument("--reuse-run", action="store_true", help="keep an existing OUT/run (its race.json) and only compare")
    ap.add_argument("--resume", action="store_true",
                    help="finish a stopped benchmark: keep OUT/run when its race.json is there, and `autotune compare "
                         "--resume` in OUT/compare (the trials it finished are kept)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    out, target_args, env = setup(args.target, args.out)
    run_cmd = [str(AUTOTUNE), "run", *target_args, "--seed", str(args.seed), "--instances", str(args.instances),
               "--out", str(out / "run")] + (["--budget", f"{args.budget:g}"] if args.budget else [])
    race_json = out / "run" / "race" / "race.json"
    summary: dict = {"target": args.target, "instances": args.instances}
    if not ((args.reuse_run or args.resume) and race_json.is_file()):
        t0 = time.monotonic()
        with open(out / "run.log", "w") as log:
            subprocess.run(run_cmd, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
        summary["run_wall_s"] = round(time.monotonic() - t0, 1)
    race = json.loads(race_json.read_text())
    summary["run"] = {"argv": run_cmd, "decision": race["race"]["decision"]}

    arms = out / "arms"
    arms.mkdir(exist_ok=True)
    guard = str(write_env(arms / "guard.env", "our fastest single configuration: guard, the inline-counter build", GUARD))
    diverse, origin = diverse_arm(race, arms)
    n = args.instances
    cmp_cmd = [str(AUTOTUNE), "compare", *target_args, "--config", "default", "--instances", str(n),
               "--portfolio", "fastest=" + ",".join([guard] * n), "--portfolio", diverse,
               "--trials", str(args.trials), "--minutes", f"{args.minutes:g}", "--seed", str(args.compare_seed),
               "--out", str(out / "compare")] + (["--resume"] if args.resume else [])
    summary["arms"] = {"aflpp-default": f"AFL++'s default portfolio, {n} x afl-clang-fast",
                       "fastest": f"{n} x guard (our inline-counter build)", "diverse": origin}
    t0 = time.monotonic()
    with open(out / "compare.log", "a" if args.resume else "w") as log:
        subprocess.run(cmp_cmd, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
    cmp = json.loads((out / "compare" / "compare.json").read_text())
    summary["compare"] = {"argv": cmp_cmd, "wall_s": round(time.monotonic() - t0, 1), "medians": medians(cmp),
                          "pairs": cmp.get("pairs")}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary["arms"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
