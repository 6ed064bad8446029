#!/usr/bin/env python3
"""Is there coverage left to win? AFL++'s default with and without its CMPLOG companion, against the
highest yardstick figure any committed campaign of the target reached (issue #24's must-show).

A significant win over AFL++'s default in 10 minutes needs coverage the default does not reach in
10 minutes. If every configuration ever run on a target ends within a few edges of one ceiling, the
target is saturated at that campaign length and no configuration can show a win there. CMPLOG
(afl-fuzz ``-c``: a second build of the target under ``AFL_LLVM_CMPLOG=1``, input-to-state
replacement of the operands of comparisons; AFL++'s docs/fuzzing_in_depth.md) is AFL++'s own remedy
for plateaus made of magic values and checksums, and no configuration autotune tunes can do what it
does; if it does not move the ceiling either, the ceiling is what the harness can reach.

Per target and trial k, both arms run side by side, one afl-fuzz per core, with the same afl-fuzz
``-s SEED+k`` and the same seeds (benchmarks/recommend_compare.py's recipe, as `autotune run`
gets them). Everything each afl-fuzz kept is replayed through one yardstick (AFL++'s PCGUARD build
under afl-showmap, autotune.trials.yardstick). Writes OUT/<target>-<arm>-s<seed>/ (afl-fuzz's output,
result.json), OUT/summary.json and OUT/summary.md; ``--resume`` keeps the trials whose result.json
exists.

  git worktree add --detach /tmp/wt HEAD && PYTHONPATH=/tmp/wt .venv/bin/python /tmp/wt/benchmarks/cmplog_ceiling.py \\
      --targets lz4,libyaml --trials 1 --minutes 10 --out /tmp/cmplog
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from recommend_compare import recipe  # noqa: E402  (the targets' recipes, one place)

from autotune.portfolio.build import CMPLOG_BUILD  # noqa: E402  (AFL++'s CMPLOG build, as the portfolio's)

ARMS = ("default", "cmplog")
RESULTS = ROOT / "benchmarks" / "results"


def target_spec(target: str, seeds: Path):
    """(the recipe as autotune builds it, the build environment, the seeds directory)."""
    from autotune import afl
    from autotune.target.recipe import make_spec

    args, tenv = recipe(target, seeds)
    if "--demo" in args:  # the demo's own seeds, as `autotune run --demo` takes them
        from autotune import demo
        from autotune.target.recipe import demo_spec

        return demo_spec(), afl.base_env(), demo.seed_dir()
    spec = make_spec(script=Path(args[args.index("--build-script") + 1]),
                     sources=[Path(args[args.index("--source") + 1])])
    return spec, {**afl.base_env(), **tenv}, Path(args[args.index("--corpus") + 1])


def start_trial(*, target: str, arm: str, core: int, rng_seed: int, seconds: int, out: Path,
                binaries: dict[str, Path], seeds: Path) -> tuple[subprocess.Popen, Path, list[str]]:
    from autotune import afl
    from autotune.trials.trial import trial_env
    from autotune.afl import pin_prefix

    tdir = out / f"{target}-{arm}-s{rng_seed}"
    shutil.rmtree(tdir, ignore_errors=True)
    tdir.mkdir(parents=True)
    env, _ = trial_env(config_env={}, trial_dir=tdir)  # what every autotune trial runs afl-fuzz under
    extra = ["-c", str(binaries["cmplog"])] if arm == "cmplog" else []
    cmd = [*pin_prefix(core, env=env), afl.find_tool("afl-fuzz", env=env), "-i", str(seeds), "-o", str(tdir / "o"),
           "-V", str(seconds), "-s", str(rng_seed), *extra, "--", str(binaries["default"])]
    log = open(tdir / "afl-fuzz.log", "wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=tdir)
    log.close()
    return proc, tdir, cmd


def measure_trial(*, tdir: Path, target: str, arm: str, rng_seed: int, seconds: int, yardstick,
                  cmd: list[str] | None) -> dict:
    from autotune.afl_output import kept_inputs, read_fuzzer_stats
    from autotune.trials.yardstick import measure

    stats = read_fuzzer_stats(tdir / "o" / "default" / "fuzzer_stats")
    cov = measure(yardstick=yardstick, inputs=kept_inputs(tdir / "o"), seconds=seconds, work=tdir / "yardstick")
    res = {"target": target, "arm": arm, "rng_seed": rng_seed, "seconds": seconds, "edges": cov.edges,
           "curve": [list(p) for p in cov.curve], "execs_per_sec": float(stats["execs_per_sec"]),
           "corpus_count": int(stats["corpus_count"]), "afl_version": stats.get("afl_version", ""),
           "command": cmd or stats.get("command_line", "").split()}
    (tdir / "result.json").write_text(json.dumps(res, indent=1))
    return res


def committed_ceiling(target: str) -> dict:
    """The lowest and highest final yardstick figure of every committed 10-min campaign of the target
    (benchmarks/results/compare-* and portfolio-*, pcguard yardstick) per file, and the median time at
    which its trials reached 99 % of their final figure."""
    seen = []
    for f in sorted(RESULTS.glob(f"*-{target}-*.json")):
        if not f.name.startswith(("compare-", "portfolio-")) or "llvmcov" in f.name or f.name.endswith("-summary.json"):
            continue
        d = json.loads(f.read_text())
        if d.get("seconds") != 600 or (d.get("yardstick") or {}).get("kind", "aflpp-pcguard") != "aflpp-pcguard":
            continue
        ys = [t["yardstick"] for c in d["configs"] for t in c.get("trials", []) if isinstance(t, dict) and t.get("yardstick")]
        edges = [y["edges"] for y in ys]
        t99 = sorted(x for x in (time_to(y.get("curve") or [], 0.99) for y in ys) if x is not None)
        if edges:
            seen.append({"file": f.name, "trials": len(edges), "min": min(edges), "max": max(edges),
                         "t99_median_s": t99[len(t99) // 2] if t99 else None})
    return {"files": seen, "max": max((s["max"] for s in seen), default=None)}


def time_to(curve: list, frac: float) -> float | None:
    """The first curve time at which coverage reached ``frac`` of its final figure."""
    final = curve[-1][1] if curve else 0
    return next((t for t, e in curve if e >= frac * final), None) if final else None


def summarise(results: list[dict], targets: list[str]) -> dict:
    import statistics

    from autotune.stats import a12, mann_whitney

    out = {}
    for t in targets:
        arms = {a: [r for r in results if r["target"] == t and r["arm"] == a] for a in ARMS}
        row = {"ceiling": committed_ceiling(t)}
        for a, rs in arms.items():
            e = [r["edges"] for r in rs]
            row[a] = {"edges": e, "median": statistics.median(e) if e else None,
                      "execs_per_sec": statistics.median(r["execs_per_sec"] for r in rs) if rs else None,
                      "t99_s": [time_to(r["curve"], 0.99) for r in rs]}
        d, c = arms["default"], arms["cmplog"]
        if d and c:
            row["mann_whitney_p"] = mann_whitney([r["edges"] for r in c], [r["edges"] for r in d]).p
            row["a12"] = a12([r["edges"] for r in c], [r["edges"] for r in d])
        out[t] = row
    return out


def render(summary: dict, versions: str, *, trials: int, minutes: float) -> str:
    lines = ["# CMPLOG against the ceiling (benchmarks/cmplog_ceiling.py)", "",
             f"AFL++'s default build with and without its CMPLOG companion (`-c`), seed-paired, {trials} x "
             f"{minutes:g} min a side, {versions}; "
             "final yardstick edges (AFL++'s PCGUARD build under afl-showmap), the time to 99 % of each "
             "trial's final figure, and the highest figure of any committed 10-min campaign of the target.", "",
             "| target | default | default + CMPLOG | execs/s | t99 (s) | p (MWU) | committed 10-min campaigns |",
             "|---|---|---|---|---|---|---|"]
    for t, row in summary.items():
        d, c, ceil = row["default"], row["cmplog"], row["ceiling"]
        t99s = sorted(f["t99_median_s"] for f in ceil["files"] if f["t99_median_s"] is not None)
        span = (f"{sum(f['trials'] for f in ceil['files'])} trials in {len(ceil['files'])} files: "
                f"{min(f['min'] for f in ceil['files'])}-{ceil['max']} edges, 99 % of the final figure by "
                f"{t99s[0]:g}-{t99s[-1]:g} s (median per file)") if ceil["files"] else "none"
        p = row.get("mann_whitney_p")
        lines.append(f"| {t} | {', '.join(map(str, d['edges']))} | {', '.join(map(str, c['edges']))} | "
                     f"{d['execs_per_sec']:,.0f} / {c['execs_per_sec']:,.0f} | "
                     f"{', '.join(str(x) for x in d['t99_s'])} / {', '.join(str(x) for x in c['t99_s'])} | "
                     f"{'n/a' if p is None else f'{p:.2f}'} | {span} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", default="lz4,libyaml")
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=11, help="afl-fuzz -s of trial 0 (autotune compare's default)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--resume", action="store_true", help="keep the trials whose result.json exists")
    args = ap.parse_args(argv)
    from autotune.target.build import build
    from autotune.trials import host_cores
    from autotune.trials.trial import aflpp_versions
    from autotune.trials.yardstick import choose_yardstick

    cores = host_cores()
    if len(cores) < 2:
        raise SystemExit("the two arms run side by side: this needs 2 cores")
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    seconds = int(args.minutes * 60)
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for t in targets:
        spec, env, seeds = target_spec(t, args.out / f"seeds-{t}")
        binaries = {"default": build(spec=spec, cc_kind="afl", build_vars={}, env=env),
                    "cmplog": build(spec=spec, cc_kind="afl", build_vars=CMPLOG_BUILD, env=env)}
        yardstick = choose_yardstick(spec=spec, env=env)
        for k in range(args.trials):
            s = args.seed + k
            done = {a: args.out / f"{t}-{a}-s{s}" / "result.json" for a in ARMS}
            if args.resume and all(p.is_file() for p in done.values()):
                results += [json.loads(p.read_text()) for p in done.values()]
                print(f"{t} trial {k}: kept", flush=True)
                continue
            started = [(a, *start_trial(target=t, arm=a, core=cores[i], rng_seed=s, seconds=seconds, out=args.out,
                                        binaries=binaries, seeds=seeds)) for i, a in enumerate(ARMS)]
            t0 = time.monotonic()
            for a, proc, tdir, cmd in started:
                proc.wait(timeout=seconds + 600)
            for a, proc, tdir, cmd in started:
                r = measure_trial(tdir=tdir, target=t, arm=a, rng_seed=s, seconds=seconds, yardstick=yardstick, cmd=cmd)
                results.append(r)
                print(f"{t} trial {k} {a}: {r['edges']} edges, {r['execs_per_sec']:,.0f} execs/s "
                      f"({time.monotonic() - t0:.0f} s)", flush=True)
    summary = summarise(results, targets)
    versions = aflpp_versions([{"afl_version": r["afl_version"]} for r in results])
    from autotune.measure.host import current_host

    (args.out / "summary.json").write_text(json.dumps({"afl": versions, "host_profile": current_host(),
                                                       "targets": summary, "trials": results,
                                                       "arguments": vars(args) | {"out": str(args.out)}},
                                                      indent=1, default=str))
    text = render(summary, versions, trials=args.trials, minutes=args.minutes)
    (args.out / "summary.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
