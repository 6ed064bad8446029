"""The coverage metrics autotune knows, in census order (ids match kernels/cov.h)."""

from __future__ import annotations

from dataclasses import dataclass

METRICS: tuple[str, ...] = (
    "edge",
    "ngram-2", "ngram-3", "ngram-4", "ngram-5", "ngram-6", "ngram-7", "ngram-8",
    "ctx", "caller", "ctx-2", "ctx-4", "ctx-8",
)
METRIC_ID = {name: i for i, name in enumerate(METRICS)}


@dataclass(frozen=True)
class AflMode:
    """How AFL++'s afl-cc builds the same metric: AFL_LLVM_INSTRUMENT and its extra variables."""

    instrument: str
    extra: dict


def afl_mode(metric: str) -> AflMode:
    """The afl-cc settings (AFL++ 4.x) that give ``metric`` in CLASSIC instrumentation."""
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
