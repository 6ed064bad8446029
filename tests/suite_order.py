"""The order the suite runs in, so that pytest-xdist's workers finish together.

``--dist worksteal`` hands worker i a contiguous share of the collected items (the first len/2 to
the first of two workers) and later lets an idle worker steal the back half of the longest queue.
In collection (alphabetical) order the slow end-to-end modules fall where they fall, and a 160 s
test started last sets the wall time. :func:`balanced_order` instead spreads the modules' recorded
seconds (tests/durations.json, written by ``pytest --store-durations``) over the workers by longest
processing time first (Graham, 1969), fills each share up to the item count xdist will hand it with
the light modules, and runs each share's slowest modules first (after a few light ones where a
share's boundary may fall): what is left to steal at the end is short. A module's items stay together and in their own order; a module without a record counts as
light. Nothing about a test's outcome depends on it: builds are shared through the run's cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence, TypeVar

DURATIONS = Path(__file__).with_name("durations.json")
HEAVY_S = 1.0  # modules recorded at or above this are spread by time; the rest fill the counts
T = TypeVar("T")


def load_durations(path: Path = DURATIONS) -> dict[str, float]:
    """Recorded seconds per module path (``tests/test_x.py``); empty when there is no readable record."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in doc.get("modules", {}).items()} if isinstance(doc, dict) else {}


def xdist_shares(n_items: int, workers: int) -> list[int]:
    """How many items worksteal's first distribution hands each of ``workers`` idle workers."""
    out, left = [], n_items
    for i in range(workers):
        out.append(left // (workers - i))
        left -= out[-1]
    return out


def balanced_order(items: Sequence[T], module_of, seconds: Mapping[str, float], workers: int) -> list[T]:
    """``items`` reordered for ``workers`` workers (module docstring); ``module_of(item)`` names an
    item's module as ``seconds`` keys it. One worker (or no record): the slowest modules first."""
    groups: dict[str, list[T]] = {}
    for it in items:
        groups.setdefault(module_of(it), []).append(it)

    def weight(m: str) -> float:
        return seconds.get(m, 0.0)

    heavy = sorted((m for m in groups if weight(m) >= HEAVY_S), key=lambda m: (-weight(m), m))
    light = [m for m in groups if weight(m) < HEAVY_S]  # collection order
    workers = max(1, workers)
    bins: list[list[str]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    count = [0] * workers
    for m in heavy:  # longest first, each to the least loaded share
        i = min(range(workers), key=lambda j: (load[j], count[j], j))
        bins[i].append(m)
        load[i] += weight(m)
        count[i] += len(groups[m])
    target = xdist_shares(len(items), workers)
    for m in light:  # fill each share towards the count xdist hands it
        i = max(range(workers), key=lambda j: (target[j] - count[j], -j))
        bins[i].append(m)
        count[i] += len(groups[m])
    # The shares' boundaries miss the bins' by at most one light module: every bin after the first
    # starts with light modules of at least that many items, so no heavy module crosses a boundary.
    buffer = max((len(groups[m]) for m in light), default=0)
    out: list[T] = []
    for i, b in enumerate(bins):
        lead: list[str] = []
        for m in (b if i else []):
            if sum(len(groups[x]) for x in lead) >= buffer:
                break
            if weight(m) < HEAVY_S:
                lead.append(m)
        rest = sorted((m for m in b if m not in lead), key=lambda m: -weight(m))  # stable: light keep order
        for m in lead + rest:
            out.extend(groups[m])
    return out


def store_durations(per_module: Mapping[str, float], path: Path = DURATIONS,
                    source: str = "the last `pytest --store-durations` run") -> None:
    """Write ``per_module`` seconds (write, rename), naming where they come from."""
    doc = {"what": "seconds per test module (setup + call + teardown, summed over its tests); "
                   "tests/suite_order.py orders the suite by them", "source": source,
           "modules": {m: round(s, 2) for m, s in sorted(per_module.items())}}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)
