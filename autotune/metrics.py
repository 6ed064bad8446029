"""The coverage metrics autotune knows, in census order (ids match kernels/cov.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

METRICS: tuple[str, ...] = (
    "edge",
    "ngram-2", "ngram-3", "ngram-4", "ngram-5", "ngram-6", "ngram-7", "ngram-8",
    "ctx", "caller", "ctx-2", "ctx-4", "ctx-8",
    "guard",
)
METRIC_ID = {name: i for i, name in enumerate(METRICS)}
CONTEXT_METRICS: tuple[str, ...] = ("ctx", "caller", "ctx-2", "ctx-4", "ctx-8")
"""Metrics keyed by the call stack: they need the function hooks of a ``full`` build."""
GUARD = "guard"
"""AFL++'s PCGUARD: one counter per SanitizerCoverage guard (slot = guard index g, slot 0 unused),
exact and collision-free; the map is the guard count + 1, so map size, layout and key hash do not
apply."""


def has_map_size(metric: str) -> bool:
    """Whether ``metric``'s keys are hashed into a map whose size and layout are chosen (all but guard)."""
    return metric != GUARD

KEY_HASHES: tuple[str, ...] = ("exact", "afl")
"""Values of AUTOTUNE_KEY_HASH (the runtime map sink's index key), default first."""

_MIX_C1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_C2 = np.uint64(0x94D049BB133111EB)


def index_key(exact: np.ndarray, *, metric: str) -> np.ndarray:
    """The runtime map sink's index key of ``metric`` under ``AUTOTUNE_KEY_HASH=exact``, as uint64:
    ``ngram-N``: ``fold(exact) = exact ^ (exact >> 32)`` (the exact key is already a uniform
    polynomial over mix64 terms; the fold brings its carries into the low bits); edge and the
    ctx-like metrics: ``mix64(exact)`` (kernels/cov.c ``cov_mix64``, splitmix64's finaliser; their
    exact keys are structured). Both are bijections of the 64-bit exact key.

    The slot at a map of H slots (H a power of two) is ``index_key(exact) & (H - 1)``, a uniform
    function of the exact key, so slot collisions follow Equation 1 (docs/DESIGN.md).
    ``guard``: ``exact`` itself (the guard index g is its slot, no hash; slot 0 stays unused as in
    AFL++'s PCGUARD, whose afl-showmap reads map[0] == 1 as a "target ran" mark and clears it).
    """
    if metric not in METRIC_ID:
        raise ValueError(f"unknown metric {metric!r}")
    x = np.array(exact, dtype=np.uint64, copy=True, ndmin=1)
    if metric == GUARD:
        return x.reshape(np.shape(exact))
    if metric.startswith("ngram-"):
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
    if metric == GUARD:
        return AflMode("PCGUARD", {})
    if metric == "edge":
        return AflMode("CLASSIC", {})
    if metric.startswith("ngram-"):
        n = int(metric.split("-")[1])
        return AflMode(f"NGRAM-{n}", {})
    if metric == "ctx":
        return AflMode("CTX", {})
    if metric == "caller":
        return AflMode("CALLER", {})
    if metric.startswith("ctx-"):
        k = int(metric.split("-")[1])
        return AflMode(f"CTX-{k}", {})
    raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
