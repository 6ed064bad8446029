#!/usr/bin/env python3
"""The cross-machine sync, run locally: two "machines" as two output trees on this host, one afl-fuzz
instance each (CPU 0 and CPU 1), launched by `autotune portfolio`'s generated scripts; in the synced
arm the generated sync.sh copies the main instances' queues between the trees every --sync-s seconds
(AFL++'s documented cross-machine sync), in the other arm they never meet. Measure: the union of
both machines' kept inputs through one yardstick (`autotune status A B --demo|--build-script`),
K trials per arm, alternating arms; medians, Mann-Whitney U, A12 (Klees et al., CCS 2018).

  .venv/bin/python benchmarks/host_sync.py --target libyaml --trials 3 --minutes 10 --out /tmp/host-sync

Writes <out>/host-sync.json and host-sync.md (with the host profile and the AFL++ version).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
AUTOTUNE = Path(sys.executable).parent / "autotune"


def main(argv: list[str] | None = None) -> int:
    from recommend_compare import recipe

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default="libyaml")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--sync-s", type=int, default=60, help="seconds between syncs (a tenth of a 10-minute run)")
    ap.add_argument("--config", default="default", help="the instances' configuration (autotune compare --config)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    from autotune.afl import aflpp_version, base_env, find_tool
    from autotune.measure.host import current_host
    from autotune.stats import a12, mann_whitney, median_interval

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    target_args, extra_env = recipe(args.target, out / "seeds")
    yard_args = [a for a in target_args if a != "--corpus" and not a.endswith("/seeds")]
    env = {**os.environ, **extra_env, "COLUMNS": "1000"}
    seconds = int(round(args.minutes * 60))
    rows = []
    for k in range(args.trials):
        for arm in ("synced", "unsynced"):
            tdir = out / f"{arm}-{k}"
            shutil.rmtree(tdir, ignore_errors=True)
            tdir.mkdir(parents=True)
            (tdir / "hosts").write_text(f"A cpus=0 {tdir}/A/out\nB cpus=1 {tdir}/B/out\n")
            subprocess.run([str(AUTOTUNE), "portfolio", *target_args, "--config", args.config, "--hosts",
                            str(tdir / "hosts"), "--sync-minutes", str(args.sync_s / 60), "--out", str(tdir / "p")],
                           env=env, check=True, capture_output=True)
            t0 = time.monotonic()
            fuzz = [subprocess.Popen(["bash", str(tdir / "p" / f"launch-{h}.sh"), str(seconds)], env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT) for h in "AB"]
            sync = None
            if arm == "synced":
                rounds = max(1, seconds // args.sync_s)
                sync = subprocess.Popen(["bash", str(tdir / "p" / "sync.sh"), str(rounds)], env=env,
                                        stdout=open(tdir / "sync.log", "w"), stderr=subprocess.STDOUT)
            for p in fuzz:
                p.wait()
            if sync is not None:
                sync.terminate()
                sync.wait()
            st = subprocess.run([str(AUTOTUNE), "status", f"{tdir}/A/out", f"{tdir}/B/out", *yard_args, "--json"],
                                env=env, check=True, capture_output=True, text=True)
            doc = json.loads(st.stdout)
            imported = sum(1 for h in "AB" for q in (tdir / h / "out" / f"main-{h}" / "queue").iterdir()
                           if ",sync:" in q.name)
            row = {"trial": k, "arm": arm, "union_edges": doc["union"]["edges"], "imported": imported,
                   "wall_s": round(time.monotonic() - t0, 1),
                   "instances": {i["name"]: {"execs_done": i["execs_done"], "queue": i["queue"],
                                             "crashes": i["crashes"]} for i in doc["instances"]},
                   "by_instance": doc["union"].get("by_instance")}
            rows.append(row)
            print(json.dumps(row), flush=True)
    synced = [r["union_edges"] for r in rows if r["arm"] == "synced"]
    unsynced = [r["union_edges"] for r in rows if r["arm"] == "unsynced"]
    mw = mann_whitney(synced, unsynced)
    res = {"target": args.target, "trials": args.trials, "seconds": seconds, "sync_s": args.sync_s,
           "config": args.config, "afl_version": str(aflpp_version(str(find_tool("afl-fuzz", env=base_env())))),
           "rows": rows,
           "synced": median_interval([float(x) for x in synced]).to_dict(),
           "unsynced": median_interval([float(x) for x in unsynced]).to_dict(),
           "mann_whitney": mw.to_dict(), "a12_synced": a12(synced, unsynced), "host": current_host()}
    (out / "host-sync.json").write_text(json.dumps(res, indent=2) + "\n")
    md = [f"# Two machines synced by autotune's generated sync.sh vs unsynced ({args.target})", "",
          f"{args.trials} trials x {seconds} s per arm, one afl-fuzz per machine (CPU 0, CPU 1), sync every "
          f"{args.sync_s} s; AFL++ {res['afl_version']}; yardstick: the union of both machines' kept inputs.", "",
          "| arm | union edges (trials) | median |", "|---|---|---|",
          f"| synced | {', '.join(map(str, synced))} | {res['synced']['median']:g} |",
          f"| unsynced | {', '.join(map(str, unsynced))} | {res['unsynced']['median']:g} |", "",
          f"Mann-Whitney p = {mw.p:.4f} ({mw.method}), A12(synced) = {res['a12_synced']:.2f}; inputs imported by "
          f"the synced mains: {', '.join(str(r['imported']) for r in rows if r['arm'] == 'synced')}."]
    (out / "host-sync.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
