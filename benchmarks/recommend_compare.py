#!/usr/bin/env python3
"""What a user gets: `autotune run` on a real library as a new user runs it, then `autotune compare`
of its recommendation against AFL++'s default (Klees et al., CCS 2018: K trials x T minutes, one
yardstick, medians, Mann-Whitney U, A12).

Targets: demo, lz4, libyaml, libjpeg-turbo, jsoncpp, libtiff, zlib (benchmarks/targets/: each library's own
build system through an OSS-Fuzz style build script, its sample inputs as seeds). Both steps run the
CLI as a user would (subprocesses, nothing special-cased per target); the compare is skipped when
the race recommends AFL++'s default (it would compare one configuration with itself). Writes to
--out: run/ (the main job's output), run.log, compare/ (compare.json/md/png), compare.log,
summary.json.

  .venv/bin/python benchmarks/recommend_compare.py --target lz4 --seed 7 --trials 5 --minutes 10 --out /tmp/rc-lz4
  git worktree add --detach /tmp/wt && PYTHONPATH=/tmp/wt .venv/bin/python /tmp/wt/benchmarks/recommend_compare.py ...
  .venv/bin/python benchmarks/recommend_compare.py --target libyaml --strategy list --no-compare --out /tmp/abl

--no-compare stops after the run (the ablation: what each strategy recommends at equal budget);
--reuse-run compares the recommendation of a run already in OUT/run (a --no-compare run, later);
--resume continues a job a session cut short (a finished run kept, the compare's finished trials kept).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
# the console script of the interpreter running this (a worktree run: PYTHONPATH=<worktree> with the
# main checkout's venv, so edits to the checkout cannot reach a running job)
AUTOTUNE = Path(sys.executable).parent / "autotune"


def recipe(target: str, seeds_dir: Path) -> tuple[list[str], dict[str, str]]:
    """(the CLI's target arguments, the environment the build script needs), seeds copied to seeds_dir."""
    import shutil

    if target == "demo":
        return ["--demo"], {}
    from targets.libraries import LIBRARIES

    t = LIBRARIES.get(target.replace("-", "_"))
    if t is None:
        raise SystemExit(f"unknown target {target!r}: demo, lz4, libyaml, libjpeg-turbo, jsoncpp, libtiff, zlib")
    # libyaml: its examples/*.yaml only, the seeds of its recorded runs (benchmarks/results)
    samples = sorted((t.source_dir() / "examples").glob("*.yaml")) if t.folder.name == "libyaml" else t.sample_inputs()
    seeds_dir.mkdir(parents=True, exist_ok=True)
    for p in samples:
        shutil.copy(p, seeds_dir / p.name)
    args = ["--build-script", str(t.build_script), "--source", str(t.harness_source), "--corpus", str(seeds_dir)]
    return args, {t.source_var: str(t.source_dir())}


def setup(target: str, out: Path) -> tuple[Path, list[str], dict[str, str]]:
    """(OUT resolved and made, the CLI's target arguments with the seeds copied to OUT/seeds, the
    environment of the autotune commands: the build script's variable and a console wide enough)."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    target_args, extra_env = recipe(target, out / "seeds")
    return out, target_args, {**os.environ, **extra_env, "COLUMNS": "1000"}


def write_summary(out: Path, summary: dict) -> None:
    from autotune.io import write_text_atomic

    write_text_atomic(out / "summary.json", json.dumps(summary, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", required=True)
    ap.add_argument("--seed", type=int, default=7, help="autotune run --seed")
    ap.add_argument("--strategy", default="search", choices=("search", "list"))
    ap.add_argument("--budget", type=float, default=None, help="autotune run --budget (default: its own)")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--compare-seed", type=int, default=11, help="autotune compare --seed")
    ap.add_argument("--no-compare", action="store_true")
    ap.add_argument("--reuse-run", action="store_true",
                    help="OUT/run holds a finished run (its race.json): compare its recommendation, do not run again")
    ap.add_argument("--resume", action="store_true",
                    help="continue a cut-short job: a finished run in OUT/run is kept (as --reuse-run), the compare "
                         "keeps its finished trials (autotune compare --resume)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    out, target_args, env = setup(args.target, args.out)
    run_cmd = [str(AUTOTUNE), "run", *target_args, "--seed", str(args.seed), "--strategy", args.strategy,
               "--out", str(out / "run")] + (["--budget", str(args.budget)] if args.budget else [])
    t0 = time.monotonic()
    finished_run = (out / "run" / "race" / "race.json").is_file()
    if args.reuse_run or (args.resume and finished_run):
        if not (out / "run" / "race" / "race.json").is_file():
            raise SystemExit(f"--reuse-run: no finished run at {out / 'run'} (its race/race.json is missing)")
        prior = json.loads((out / "summary.json").read_text()) if (out / "summary.json").is_file() else {}
        run_cmd = prior.get("run", {}).get("argv", run_cmd)
        run_s = prior.get("run", {}).get("wall_s", 0.0)
    else:
        with open(out / "run.log", "w") as log:
            subprocess.run(run_cmd, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
        run_s = time.monotonic() - t0
    race = json.loads((out / "run" / "race" / "race.json").read_text())
    decision = race["race"]["decision"]
    summary = {"target": args.target, "run": {"argv": run_cmd, "wall_s": round(run_s, 1), "decision": decision,
                                              "tried": [p["name"] for p in (race["race"].get("search") or {})
                                                        .get("proposals", [])]}}
    write_summary(out, summary)  # the run's part now: a cut-short compare resumes with the run's figures
    if not decision["is_default"] and not args.no_compare:
        cmp_cmd = [str(AUTOTUNE), "compare", *target_args, "--config", "default",
                   "--config", f"tuned={out / 'run' / 'race' / 'autotune-run.env'}", "--trials", str(args.trials),
                   "--minutes", f"{args.minutes:g}", "--jobs", "2", "--seed", str(args.compare_seed),
                   "--out", str(out / "compare")] + (["--resume"] if args.resume and (out / "compare").is_dir() else [])
        with open(out / "compare.log", "w") as log:
            subprocess.run(cmp_cmd, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
        cmp = json.loads((out / "compare" / "compare.json").read_text())
        summary["compare"] = {"argv": cmp_cmd, "configs": cmp.get("configs"), "pairs": cmp.get("pairs")}
    write_summary(out, summary)
    print(json.dumps(summary["run"]["decision"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
