"""compare's settings as typed values (the CLI and benchmarks/compare_default.py build them,
autotune.compare.compare.run_compare and autotune.compare.remeasure.remeasure_compare read them).
Standard library only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autotune.bugs.depth import BugScope

DEFAULT_YARDSTICK = "pcguard"


@dataclass(frozen=True)
class MeasureSettings:
    """How trials are measured and judged: by the ``yardstick`` (pcguard, llvm-cov: autotune.trials.yardstick;
    bugs: autotune.bugs.yardstick), on ``bug_scope``'s bugs only when given (autotune.bugs.depth.BugScope),
    ``jobs`` runs at once (None: one per core); ``plot`` writes the PNG plots."""

    yardstick: str = DEFAULT_YARDSTICK
    bug_scope: "BugScope | None" = None
    jobs: int | None = None
    plot: bool = True


@dataclass(frozen=True)
class CompareSettings:
    """How the configurations' afl-fuzz campaigns run: ``trials`` of ``seconds`` each per configuration,
    trial k with afl-fuzz -s ``rng_seed`` + k, measured and judged as ``measure`` says (its ``jobs``: trials
    at once); ``resume`` keeps the trials a stopped compare finished; ``host`` records this host in
    compare.json."""

    trials: int
    seconds: int
    rng_seed: int = 0
    measure: MeasureSettings = field(default_factory=MeasureSettings)
    resume: bool = False
    host: bool = True
