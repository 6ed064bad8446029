#!/usr/bin/env python3
"""Check a recorded bugs trial's sweep against a replay of every kept input on its own.

A `--yardstick bugs` trial's time-to-bug comes from a sweep (autotune.bugs.page.sweep): its kept
inputs go through the canary build many to a process, and only a batch that shows something new is
split. That is exact when an input's run does not depend on the inputs run before it in the process
(the rule every libFuzzer harness is held to). A library with global state can break it two ways:
a batch shows a bug no input shows on its own (the sweep names it, trial.json's `unexplained`), or
a batch hides a reach or trigger an input shows on its own (the sweep cannot know). This replays
each TRIAL directory's kept inputs through the same canary build (trial.json's binary), one process
and a fresh page per input, and lists every difference from trial.json's figures
(autotune.bugs.attribution.replay_check).

  bash .ci/aflpp-current.sh run .venv-current/bin/python benchmarks/bugs/check_sweep.py \\
      /work/runs/bugtable-libxml2/compare/trials/default/trial-0

Run it where the trials ran (the binary's path and libraries are theirs). Writes Markdown to
stdout, and with --json the figures; exits 1 when any trial differs, 0 when all agree.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from autotune.bugs.attribution import replay_check  # noqa: E402
from autotune.errors import AutotuneError  # noqa: E402
from autotune.io import read_json, write_json_atomic  # noqa: E402
from autotune.trials.ensemble import trial_inputs  # noqa: E402
from autotune.trials.trial import TrialResult  # noqa: E402
from autotune.trials.coverage import REPLAY_TIMEOUT_MS  # noqa: E402


def check(trial_dir: Path, *, timeout_s: float = REPLAY_TIMEOUT_MS / 1000) -> dict:
    """One trial: its recorded figures against a replay of every kept input on its own."""
    doc = trial_dir / "trial.json"
    if not doc.is_file():
        raise AutotuneError(f"{trial_dir} holds no trial.json",
                            fix="pass a finished trial's directory (<compare out>/trials/<config>/trial-<k>)")
    res = TrialResult.from_dict(read_json(doc))
    if res.bugs is None:
        raise AutotuneError(f"{doc} has no bug figures", fix="pass a trial of a `--yardstick bugs` compare")
    afl_out = trial_dir / "afl-out"
    kept = trial_inputs(afl_out, res.spec)
    if len(kept) != res.bugs.inputs:
        raise AutotuneError(f"{afl_out} holds {len(kept)} kept inputs, trial.json replayed {res.bugs.inputs}",
                            fix="check the trial's afl-out is the one its trial.json was measured on")
    t0 = time.monotonic()
    own, diff = replay_check(res.bugs, kept, timeout_s=timeout_s)
    return {"trial": str(trial_dir), "inputs": len(kept), "replay_wall_s": round(time.monotonic() - t0, 1),
            "reached": sorted(own.reached()), "triggered": sorted(own.triggered()),
            "unexplained": list(res.bugs.unexplained), "differences": diff}


def markdown(rows: Sequence[dict]) -> str:
    out = ["| trial | kept inputs | replay of each on its own (s) | reached | triggered | the sweep's figures |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        verdict = "the same" if not r["differences"] else "differ: " + "; ".join(r["differences"])
        out.append(f"| {r['trial']} | {r['inputs']:,} | {r['replay_wall_s']} | {', '.join(r['reached']) or 'none'} | "
                   f"{', '.join(r['triggered']) or 'none'} | {verdict} |")
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trials", nargs="+", type=Path, help="finished trial directories (trial.json and afl-out)")
    ap.add_argument("--timeout", type=float, default=REPLAY_TIMEOUT_MS / 1000,
                    help="seconds an input may run (default: the yardstick's, which the trials' sweep used)")
    ap.add_argument("--jobs", type=int, default=1, help="trials checked at once (one process each)")
    ap.add_argument("--json", type=Path, help="write the figures here too")
    ap.add_argument("--debug", action="store_true", help="a traceback on error")
    a = ap.parse_args(argv)
    try:
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            rows = list(pool.map(lambda d: check(d, timeout_s=a.timeout), a.trials))
    except (AutotuneError, ValueError) as e:
        if a.debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.json:
        write_json_atomic(a.json, {"trials": rows})
    sys.stdout.write(markdown(rows))
    return 1 if any(r["differences"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
