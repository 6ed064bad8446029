"""Predicted map occupancy for the probe's corpus: what afl-showmap should report.

The probe keeps every input that reached a new exact key in any metric and merges only inputs
that ran cleanly, so its census (census/<metric>.bin) is exactly the key set of its kept corpus
(the traces cover only the first traced inputs, so they are not used here). At a map of H slots (a power of two) a key lands in
``hk32 & (H-1)`` (AFL's hashing, and our runtime under AUTOTUNE_KEY_HASH=afl) or in
``index_key(exact) & (H-1)`` (our runtime's default, AUTOTUNE_KEY_HASH=exact: mix64, ngram-N its fold;
autotune.metrics.index_key);
the prediction is the number of distinct slots. A two-level map hands out one dense slot per
distinct index entry until its C slots are used, then every further key shares slot C-1
(docs/DESIGN.md): used = min(d, C), overflow keys = max(0, d - C).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autotune.metrics import index_key
from autotune.probe.result import ProbeResult
from autotune.vocabulary import LAYOUTS


def corpus_keys(*, probe: ProbeResult, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(exact keys, hk32) of the probe's census for ``metric``: the kept corpus's keys."""
    rec = probe.census_table(metric).records
    return rec["key"].astype(np.uint64), rec["hk32"].astype(np.uint32)


def distinct_slots(*, slot_keys: np.ndarray, slots: int) -> int:
    if slot_keys.size == 0:
        return 0
    return int(np.unique(slot_keys.astype(np.uint64) & np.uint64(slots - 1)).size)


@dataclass(frozen=True)
class Occupancy:
    keys: int  # distinct exact keys of the corpus
    hash_slots: int  # H the keys are hashed into
    distinct_slots: int  # distinct hashed slots at H
    map_slots: int  # slots afl-fuzz sees
    used_slots: int  # predicted non-zero entries afl-showmap reports
    overflow_keys: int  # two-level: keys sharing the overflow slot

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def predict_afl(*, probe: ProbeResult, metric: str, map_slots: int) -> Occupancy:
    """AFL++'s hashed modes (CLASSIC/NGRAM/CTX): hk32 & (H-1) in its flat map."""
    exact, hk = corpus_keys(probe=probe, metric=metric)
    d = distinct_slots(slot_keys=hk, slots=map_slots)
    return Occupancy(keys=int(exact.size), hash_slots=map_slots, distinct_slots=d, map_slots=map_slots,
                     used_slots=d, overflow_keys=0)


def predict_runtime(*, probe: ProbeResult, metric: str, layout: str, map_slots: int, index_slots: int,
                    key_hash: str) -> Occupancy:
    """Our runtime configured by autotune-run.env."""
    exact, hk = corpus_keys(probe=probe, metric=metric)
    slot_keys = hk if key_hash == "afl" else index_key(exact, metric=metric)
    lay = LAYOUTS[layout]
    h = lay.hash_slots(index_slots=index_slots, map_slots=map_slots)
    d = distinct_slots(slot_keys=slot_keys, slots=h)
    dense = lay.dense_of(map_slots=map_slots)
    if dense is None:
        return Occupancy(keys=int(exact.size), hash_slots=h, distinct_slots=d, map_slots=map_slots,
                         used_slots=d, overflow_keys=0)
    return Occupancy(keys=int(exact.size), hash_slots=h, distinct_slots=d, map_slots=map_slots,
                     used_slots=min(d, dense), overflow_keys=max(0, d - dense))
