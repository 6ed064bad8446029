#!/usr/bin/env python3
"""How many calls tune's search needs (issue 56): the one optimiser (autotune/surrogate.py) at the
replay fidelity over the recorded figures the tests replay (tests/golden/tune_figures.json: 3
metrics x 2 layouts x 6 sizes x 4 widths = 144 points), against the exhaustive grid. Per seed and
call budget: the chosen point's score as a rate ratio to the grid optimum's, the call that first
reached the search's best, and CPU seconds. Nothing is measured on a target: the figures are
recorded, so this isolates the optimiser (noise-free objective).

  .venv/bin/python benchmarks/optimiser_calls.py --seeds 8 --calls 24,48 --out benchmarks/results/optimiser-calls.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]
FIGURES = ROOT / "tests" / "golden" / "tune_figures.json"  # read as data: benchmarks import no test code
# counter-overflow shares per metric and width, as the tests replay them with these figures
OVERFLOW = {"edge": {8: 0.05, 16: 0.001, 32: 0.0, 64: 0.0}, "ngram-4": {8: 0.08, 16: 0.002, 32: 0.0, 64: 0.0},
            "ctx": {8: 0.06, 16: 0.0, 32: 0.0, 64: 0.0}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--calls", default="24,48", help="comma-separated call budgets")
    ap.add_argument("--out", type=Path, help="write the figures as JSON here")
    a = ap.parse_args()
    from autotune.tune.backends import RecordedMeasurer
    from autotune.tune.inputs import MetricFacts, TuneInputs
    from autotune.tune.objective import ObjectiveSettings
    from autotune.tune.optimise import grid_search, optimise
    from autotune.tune.space import SearchSpace

    fig = json.loads(FIGURES.read_text())
    execs = fig["execs_per_s"]
    inputs = TuneInputs(metrics={m: MetricFacts(m, int(n * 0.9), float(n), OVERFLOW[m]) for m, n in fig["keys"].items()},
                        target_exec_ns=20000.0, target="recorded")
    layouts = tuple(sorted({k.split("/")[1] for k in execs}))
    space = SearchSpace(map_pow2=(13, 18), metrics=tuple(fig["keys"]), layouts=layouts).ordered(
        lambda m: inputs.metrics[m].estimated_keys)
    st = ObjectiveSettings()
    grid = grid_search(inputs=inputs, measurer=RecordedMeasurer(execs), space=space, settings=st)
    rows = []
    for calls in (int(c) for c in a.calls.split(",")):
        for seed in range(a.seeds):
            t0 = time.process_time()
            s = optimise(inputs=inputs, measurer=RecordedMeasurer(execs), space=space, settings=st,
                         calls=calls, seed=seed)
            rows.append({"calls": calls, "seed": seed, "cpu_s": round(time.process_time() - t0, 2),
                         "ratio_to_grid": round(2 ** (s.best.score_bits - grid.best.score_bits), 5),
                         "calls_to_best": s.calls_to_best(), "chosen": s.best.config.key()})
        sel = [r for r in rows if r["calls"] == calls]
        print(f"calls={calls}: at the grid optimum {sum(r['ratio_to_grid'] >= 0.9999 for r in sel)}/{len(sel)}, "
              f"worst ratio {min(r['ratio_to_grid'] for r in sel):.4f}, calls to best median "
              f"{statistics.median(r['calls_to_best'] for r in sel)}, CPU s median "
              f"{statistics.median(r['cpu_s'] for r in sel):.1f}")
    if a.out:
        doc = {"points": space.n_points, "grid_best": grid.best.config.key(), "rows": rows}
        tmp = a.out.with_suffix(a.out.suffix + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
        tmp.replace(a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
