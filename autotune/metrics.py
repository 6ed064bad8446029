"""The coverage metrics autotune knows, in census order (ids match kernels/cov_keys.h COV_METRICS).

The registry is autotune.runtime.config.METRIC_TABLE; this module gives its names and what is
computed per metric in Python (the index key, the afl-cc settings)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autotune.runtime.config import KEY_HASHES, METRIC_SPECS, METRIC_TABLE

METRICS: tuple[str, ...] = tuple(m.name for m in METRIC_TABLE)
METRIC_ID = {name: i for i, name in enumerate(METRICS)}
CONTEXT_METRICS: tuple[str, ...] = tuple(m.name for m in METRIC_TABLE if m.call_context)
"""Metrics keyed by the call stack: they need the function hooks of a ``full`` build."""
GUARD = "guard"
"""AFL++'s PCGUARD: one counter per SanitizerCoverage guard (slot = guard index g, slot 0 unused),
exact and collision-free; the map is the guard count + 1, so map size, layout and key hash do not
apply."""
assert not METRIC_SPECS[GUARD].hashed
__all__ = ["METRICS", "METRIC_ID", "CONTEXT_METRICS", "GUARD", "KEY_HASHES", "has_map_size", "index_key",
           "AflMode", "afl_mode"]


def has_map_size(metric: str) -> bool:
    """Whether ``metric``'s keys are hashed into a map whose size and layout are chosen (all but guard)."""
    spec = METRIC_SPECS.get(metric)
    return spec is None or spec.hashed


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


@dataclass(frozen=True)
class AflMode:
    """How AFL++'s afl-cc builds the same metric: AFL_LLVM_INSTRUMENT and its extra variables."""

    instrument: str
    extra: dict


def afl_mode(metric: str) -> AflMode:
    """The afl-cc settings (AFL++ 4.x) that give ``metric``: CLASSIC instrumentation and its
    variants, or (guard) AFL++'s default PCGUARD."""
    spec = METRIC_SPECS.get(metric)
    if spec is None:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    return AflMode(spec.afl_instrument, dict(spec.afl_extra))
