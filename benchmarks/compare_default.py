#!/usr/bin/env python3
"""The project's yardstick run: AFL++'s default build (afl-clang-fast, PCGUARD) against our
runtime's configurations under the stock afl-fuzz, K trials x T minutes each, by `autotune compare`
(Klees et al., CCS 2018: one yardstick, medians, Mann-Whitney U, A12, coverage over time).

By default the demo target, and the runtime's ``edge`` metric (two-level map, 2^24 index, 64 Ki
dense slots, 8-bit NeverZero counters: the env file below) besides AFL++'s default; --config adds
any other configuration `autotune compare` takes (a tuned directory's autotune-run.env, ...).
Writes <out>/compare.json (the host profile inside, ``host``), compare.md, coverage.png and the
env file it made. Run from the repository root:
  .venv/bin/python benchmarks/compare_default.py --trials 3 --minutes 2 --jobs 2 --out /tmp/compare-default
which is the same as
  .venv/bin/autotune compare --demo --config default --config edge=<out>/edge.env --trials 3 --minutes 2 --jobs 2
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EDGE_ENV = """# our runtime, edge metric (AFL++'s CLASSIC edges, keyed exactly), two-level map
AUTOTUNE_METRIC=edge
AUTOTUNE_LAYOUT=twolevel
AUTOTUNE_INDEX_SIZE=16777216
AUTOTUNE_MAP_SIZE=65536
AUTOTUNE_COUNTER_BITS=8
AUTOTUNE_OVERFLOW=neverzero
AUTOTUNE_INDEX_FILE=index.bin
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--minutes", type=float, default=2.0)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config", action="append", default=[], help="more configurations (autotune compare --config)")
    ap.add_argument("--out", type=Path, default=Path("compare-default-out"))
    args = ap.parse_args(argv)

    from autotune.compare import parse_configs, run_compare
    from autotune.compare.options import CompareSettings, MeasureSettings
    from autotune.compare.render import markdown
    from autotune.io import write_text_atomic
    from autotune.target import demo_spec
    from autotune import demo

    args.out.mkdir(parents=True, exist_ok=True)
    edge = write_text_atomic(args.out / "edge.env", EDGE_ENV)
    configs = parse_configs(["default", f"edge={edge}", *args.config])
    settings = CompareSettings(trials=args.trials, seconds=max(1, int(round(args.minutes * 60))), rng_seed=args.seed,
                               measure=MeasureSettings(jobs=args.jobs))
    res = run_compare(spec=demo_spec(), corpus=demo.seed_dir(), configs=configs, out_dir=args.out, settings=settings,
                      progress=lambda m: print(m, file=sys.stderr, flush=True))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
