"""Record the figures tests/test_tune_optimiser.py feeds its deterministic measurement backend.

Run once on a host (``.venv/bin/python tests/golden/record_tune_figures.py``): for three metrics
with different key counts (synthetic traces, seeded), bench.c measures every layout/width/size of
the test's small space; execs/s = 1e9 / (target ns + map ns). Re-record deliberately.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from autotune.measure.trace import synthetic_trace
from autotune.tune.backends import BenchMeasurer
from autotune.tune.space import SearchSpace, dense_slots

KEYS = {"edge": 3000, "ngram-4": 24000, "ctx": 9000}
TARGET_NS = {"edge": 20000.0, "ngram-4": 23000.0, "ctx": 22000.0}
SPACE = SearchSpace(map_pow2=(13, 20), metrics=tuple(KEYS))


def main(out: Path) -> None:
    traces = {m: synthetic_trace(n_keys=n, seed=7, n_execs=32) for m, n in KEYS.items()}
    figures = {}
    for m in KEYS:
        meas = BenchMeasurer(traces=lambda metric: traces[metric], target_exec_ns=TARGET_NS[m],
                             dense_for=lambda c: dense_slots(map_slots=c.map_slots, estimated_keys=KEYS[c.metric]))
        for cfg in SPACE.grid():
            if cfg.metric == m:
                figures[cfg.key()] = round(meas.measure(cfg).execs_per_s, 3)
    doc = {"keys": KEYS, "target_exec_ns": TARGET_NS, "space": SPACE.to_dict(), "execs_per_s": figures}
    out.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("tune_figures.json"))
