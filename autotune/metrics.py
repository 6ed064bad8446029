"""The runtime map sink's index key of each metric, computed in Python over many keys at once (numpy):
what the probe, tune's replay and the tests hash exact keys with. The metrics themselves are
autotune.vocabulary's."""

from __future__ import annotations

import numpy as np

from autotune.vocabulary import METRIC_SPECS

_MIX_C1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_C2 = np.uint64(0x94D049BB133111EB)


def index_key(exact: np.ndarray, *, metric: str) -> np.ndarray:
    """The runtime map sink's index key of ``metric`` under ``AUTOTUNE_KEY_HASH=exact``, as uint64:
    ``ngram-N``: ``fold(exact) = exact ^ (exact >> 32)`` (the exact key is already a uniform
    polynomial over mix64 terms; the fold brings its carries into the low bits); edge and the
    ctx-like metrics: ``mix64(exact)`` (kernels/cov_ids.c ``cov_mix64``, splitmix64's finaliser; their
    exact keys are structured). Both are bijections of the 64-bit exact key.

    The slot at a map of H slots (H a power of two) is ``index_key(exact) & (H - 1)``, a uniform
    function of the exact key, so slot collisions follow Equation 1 (docs/DESIGN.md).
    ``guard``: ``exact`` itself (the guard index g is its slot, no hash; slot 0 stays unused as in
    AFL++'s PCGUARD, whose afl-showmap reads map[0] == 1 as a "target ran" mark and clears it).
    """
    if metric not in METRIC_SPECS:
        raise ValueError(f"unknown metric {metric!r}")
    kind = METRIC_SPECS[metric].index_key
    x = np.array(exact, dtype=np.uint64, copy=True, ndmin=1)
    if kind == "slot":
        return x.reshape(np.shape(exact))
    if kind == "fold":
        x ^= x >> np.uint64(32)
        return x.reshape(np.shape(exact))
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= _MIX_C1
        x ^= x >> np.uint64(27)
        x *= _MIX_C2
        x ^= x >> np.uint64(31)
    return x.reshape(np.shape(exact))
