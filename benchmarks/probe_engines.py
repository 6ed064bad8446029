"""Which probe engine finds more keys in the same time: afl-fuzz on the union map, or the probe's
own havoc loop? (issue 12, item 3: afl-fuzz is the default where installed, unless measured
reasons say otherwise.)

Runs `autotune probe` as a user would, the two engines side by side (one per core, pinned with
taskset; the cores swap every repeat), the same seed per pair, and reports the census's keys per
metric: medians per engine and their ratio (afl / havoc), plus each engine's executions.

    .venv/bin/python benchmarks/probe_engines.py --demo --seconds 60 --repeats 3 --out benchmarks/results/probe-engines-demo
    LIBYAML_SRC=... .venv/bin/python benchmarks/probe_engines.py --build-script benchmarks/targets/libyaml/build.sh \\
        --corpus seeds/ --seconds 60 --repeats 3 --out benchmarks/results/probe-engines-libyaml
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("havoc", "afl")


def _probe(*, target: list[str], engine: str, seed: int, seconds: float, core: int, out: Path) -> dict:
    cmd = ["taskset", "-c", str(core), sys.executable, "-m", "autotune", "probe", *target, "--probe-engine", engine,
           "--seed", str(seed), "--probe-time", str(seconds), "--out", str(out), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    doc = json.loads(proc.stdout)
    return {"engine": engine, "seed": seed, "core": core,
            "keys": {m["metric"]: m["keys"] for m in doc["metrics"]},
            "probe_execs": doc["campaign"]["execs"], "kept": doc["campaign"]["kept"],
            "afl": doc.get("afl"), "notes": doc.get("notes", [])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--demo", action="store_true")
    ap.add_argument("--build-script")
    ap.add_argument("--corpus")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    target = ["--demo"] if a.demo else ["--build-script", a.build_script, "--corpus", a.corpus]
    if not a.demo and not (a.build_script and a.corpus):
        ap.error("give --demo, or --build-script and --corpus")
    # build the harness once, outside the timed runs
    work = Path(tempfile.mkdtemp(prefix="probe-engines-"))
    try:
        _probe(target=target, engine="havoc", seed=0, seconds=2, core=0, out=work / "warm")
        runs: list[dict] = []
        for r in range(a.repeats):
            seed = a.seed + r
            cores = {e: (i + r) % 2 for i, e in enumerate(ENGINES)}
            with ThreadPoolExecutor(max_workers=2) as pool:
                futs = [pool.submit(_probe, target=target, engine=e, seed=seed, seconds=a.seconds, core=cores[e],
                                    out=work / f"{e}-{r}") for e in ENGINES]
                for f in futs:
                    runs.append(f.result())
                    x = runs[-1]
                    print(f"{x['engine']:5s} seed {seed} core {x['core']}: edge {x['keys']['edge']}, "
                          f"ngram-8 {x['keys']['ngram-8']}, ctx {x['keys']['ctx']}, guard {x['keys']['guard']}",
                          flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    metrics = list(runs[0]["keys"])
    med = {e: {m: statistics.median(x["keys"][m] for x in runs if x["engine"] == e) for m in metrics}
           for e in ENGINES}
    doc = {"target": "demo" if a.demo else a.build_script, "seconds": a.seconds, "repeats": a.repeats,
           "runs": runs, "median_keys": med,
           "ratio_afl_over_havoc": {m: (med["afl"][m] / med["havoc"][m] if med["havoc"][m] else None)
                                   for m in metrics}}
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(doc, indent=1) + "\n")
    lines = [f"# Probe engines: keys after {a.seconds:g} s, {a.repeats} pairs side by side ({doc['target']})", "",
             "| metric | havoc (median) | afl (median) | afl / havoc | afl wins (pairs) |", "|---|---|---|---|---|"]
    for m in metrics:
        wins = sum(1 for r in range(a.repeats)
                   if runs[2 * r + ENGINES.index("afl")]["keys"][m] > runs[2 * r + ENGINES.index("havoc")]["keys"][m])
        ratio = doc["ratio_afl_over_havoc"][m]
        lines.append(f"| {m} | {med['havoc'][m]:,.0f} | {med['afl'][m]:,.0f} | "
                     f"{'-' if ratio is None else f'{ratio:.2f}x'} | {wins}/{a.repeats} |")
    lines.append("")
    out.with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
