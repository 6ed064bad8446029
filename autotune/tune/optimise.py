"""Bayesian optimisation over the search space by replay: the one optimiser's cheap fidelity.

The proposals come from the optimiser the race uses in afl-fuzz (autotune.surrogate: a Gaussian
process over a point's features, expected improvement), at the replay fidelity, over the points the
one feasibility rule leaves (autotune.feasibility). The search starts from AFL++'s own default for
each metric (flat, 64 KiB, 8-bit counters: what needs no rebuild, so its best is always known
exactly), then ``DEFAULT_INITIAL_POINTS`` random points (seeded), then the model's proposals; the
last ``POLISH_SHARE`` of the calls refine around the incumbent. Every configuration is measured once
(CachedMeasurer) and proposed once. ``grid_search`` evaluates every point, for tests and small spaces.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Callable

from autotune.errors import AutotuneError
from autotune.mappoint import MapPoint
from autotune.tune.backends import CachedMeasurer, Measurer
from autotune.tune.defaults import DEFAULT_CALLS
from autotune.tune.inputs import TuneInputs
from autotune.tune.objective import Evaluation, ObjectiveSettings, evaluate, infeasible, memory_bytes
from autotune.vocabulary import AFL_DEFAULT_MAP_POW2
from autotune.tune.space import SearchSpace
from autotune.surrogate import REPLAY_FIDELITY, Surrogate, features

DEFAULT_INITIAL_POINTS = 8
# The last share of the calls refines around the incumbent (its unevaluated neighbours, best GP
# prediction first): near the optimum the objective is flat and the GP's acquisition wanders.
POLISH_SHARE = 0.2
MAX_TIE_BITS = 0.5
# The smallest noise (bits, sd) the model assumes of a replayed score: recorded figures repeat exactly,
# and a GP with no noise on its diagonal overfits a flat objective.
MIN_NOISE_BITS = 0.02


@dataclass(frozen=True)
class Trial:
    """One call of the optimiser: the point asked, its evaluation, and whether it was measured anew."""

    call: int
    phase: str  # "afl-default", "initial", "model"
    evaluation: Evaluation
    measured: bool
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        return {"call": self.call, "phase": self.phase, "measured": self.measured,
                "elapsed_s": round(self.elapsed_s, 3), **self.evaluation.to_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Trial":
        return cls(call=int(d["call"]), phase=str(d["phase"]), evaluation=Evaluation.from_dict(d),
                   measured=bool(d["measured"]), elapsed_s=float(d["elapsed_s"]))


@dataclass(frozen=True)
class Search:
    trials: tuple[Trial, ...]
    measured: int  # distinct configurations measured in this run
    elapsed_s: float

    tie_bits: float = 0.0  # scores within this many bits of the best are ties (measurement noise)

    @property
    def top(self) -> Evaluation:
        """The highest score evaluated (feasible first)."""
        feasible = [t.evaluation for t in self.trials if t.evaluation.feasible]
        pool = feasible or [t.evaluation for t in self.trials]
        return min(pool, key=lambda e: (e.value, e.config))

    @property
    def best(self) -> Evaluation:
        """The choice: among feasible points within ``tie_bits`` of the top score (a difference the
        measurement noise cannot resolve), the one with the smallest map memory, then the top score."""
        top = self.top
        if self.tie_bits <= 0:
            return top
        pool = [t.evaluation for t in self.trials
                if t.evaluation.feasible == top.feasible and t.evaluation.score_bits >= top.score_bits - self.tie_bits]
        return min(pool, key=lambda e: (memory_bytes(config=e.config, dense=e.precision.dense_slots), e.value, e.config))

    def convergence(self) -> list[float]:
        """Best score (bits) after each call."""
        return convergence(self.trials)

    def calls_to_best(self) -> int:
        return calls_to_reach(self.trials, self.top.score_bits)


def convergence(trials: list[Trial]) -> list[float]:
    """Best score (bits) after each call."""
    out, best = [], float("-inf")
    for t in trials:
        best = max(best, t.evaluation.score_bits)
        out.append(best)
    return out


def calls_to_reach(trials: list[Trial], score_bits: float) -> int:
    """The first call whose score reached ``score_bits`` (all of them if none did)."""
    for t in trials:
        if t.evaluation.score_bits >= score_bits:
            return t.call
    return len(trials)


def afl_default_points(space: SearchSpace) -> list[MapPoint]:
    """flat, 2^16, 8-bit for every metric (AFL++'s compile-time map), when the space holds it.
    optimise() seeds the feasible ones (or the first metric's when none is)."""
    lo, hi = space.map_pow2
    if not (lo <= AFL_DEFAULT_MAP_POW2 <= hi) or 8 not in space.widths or "flat" not in space.layouts:
        return []
    return [MapPoint(m, "flat", AFL_DEFAULT_MAP_POW2, 8) for m in space.metrics]


def optimise(*, inputs: TuneInputs, measurer: Measurer, space: SearchSpace, settings: ObjectiveSettings,
             calls: int = DEFAULT_CALLS, seed: int = 0, ns_per_byte: Callable[[int], float] | None = None,
             progress: Callable[[Trial], None] | None = None) -> Search:
    """Maximise the score over ``space`` with ``calls`` evaluations (module doc)."""
    if calls < 1:
        raise AutotuneError(f"--calls must be at least 1, got {calls}", fix="pass --calls 40")
    for m in space.metrics:
        if m not in inputs.metrics:
            raise AutotuneError(f"the probe has no census for metric {m}",
                                fix="re-run `autotune probe`, or fix another metric with --metric")
    calls = min(calls, space.n_points)
    cached = measurer if isinstance(measurer, CachedMeasurer) else CachedMeasurer(measurer)

    def feasible(c: MapPoint) -> bool:
        return infeasible(config=c, facts=inputs.facts(c.metric), settings=settings) is None

    # The rule is known without measuring: the search proposes only points it leaves, unless none.
    grid = space.grid()
    pool = [c for c in grid if feasible(c)] or grid
    seeds = afl_default_points(space)
    seeds = ([c for c in seeds if feasible(c)] or seeds[:1])[:calls]
    n_init = max(0, min(DEFAULT_INITIAL_POINTS, calls - len(seeds)))
    rng = random.Random(seed)
    model = Surrogate(featurize=lambda c, f: features(c, keys=inputs.facts(c.metric).estimated_keys, inline=False,
                                                      fidelity=f), seed=seed, restarts=0)
    trials: list[Trial] = []
    t_start = time.monotonic()
    preloaded = cached.measured  # measurements reused from an earlier run (autotune.tune.cache)

    def run(cfg: MapPoint, phase: str) -> None:
        before = cached.measured
        t0 = time.monotonic()
        ev = evaluate(config=cfg, measurement=cached.measure(cfg), facts=inputs.facts(cfg.metric), settings=settings,
                      ns_per_byte=ns_per_byte)
        trial = Trial(call=len(trials) + 1, phase=phase, evaluation=ev, measured=cached.measured > before,
                      elapsed_s=time.monotonic() - t0)
        trials.append(trial)
        if progress:
            progress(trial)

    def rows() -> list:
        var = max(noise_bits(trials), MIN_NOISE_BITS) ** 2
        return [(t.evaluation.config, REPLAY_FIDELITY, t.evaluation.score_bits, var) for t in trials]

    # one BLAS thread: the GP's matrices are tiny, and on a loaded 2-core host threads only contend
    with _one_blas_thread():
        for cfg in seeds:
            run(cfg, "afl-default")
        n_polish = int(round(POLISH_SHARE * calls)) if calls - len(seeds) - n_init > 4 else 0
        while len(trials) < calls:
            seen = {t.evaluation.config for t in trials}
            left = [c for c in pool if c not in seen]
            if not left:  # every point the rule leaves is measured: more calls would measure what it rules out
                break
            if len(trials) - len(seeds) < n_init:
                run(left[rng.randrange(len(left))], "initial")
                continue
            cfg = _polish_point(model, rows(), space, trials, feasible) if calls - len(trials) <= n_polish else None
            if cfg is not None:
                run(cfg, "polish")
                continue
            (cfg, why, _, _), = model.propose(rows=rows(), candidates=left, n=1, fidelity=REPLAY_FIDELITY,
                                              incumbents=sorted(seen), rng=rng, liar_var=MIN_NOISE_BITS ** 2)
            run(cfg, "model" if why.startswith("model") else "initial")
    return Search(trials=tuple(trials), measured=cached.measured - preloaded, elapsed_s=time.monotonic() - t_start,
                  tie_bits=noise_bits(trials))


def noise_bits(trials) -> float:
    """Half the median spread (in bits) of repeated runs of one configuration (a trial's own runs and
    its reference runs, see autotune.tune.replay), capped at MAX_TIE_BITS; 0 when the backend does
    not repeat runs (recorded figures, bench medians)."""
    import math
    import statistics

    spreads = []
    for t in trials:
        d = t.evaluation.measurement.detail
        for key in ("runs_execs_per_s", "reference_execs_per_s"):
            runs = [r for r in (d.get(key) or []) if r > 0]
            if len(runs) >= 2:
                spreads.append(math.log2(max(runs) / min(runs)) / 2)
    return min(MAX_TIE_BITS, statistics.median(spreads)) if spreads else 0.0


def _one_blas_thread():
    """threadpoolctl (a scikit-learn dependency) limits BLAS to one thread; a no-op without it."""
    import contextlib

    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn requires it
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def neighbours(space: SearchSpace, c: MapPoint) -> list[MapPoint]:
    """Configurations one step away from ``c``: map size x2^{+-1,+-2}, width x2^{+-1}, the
    other layout, the metric next in rank; each in its canonical form (``space.canonical``: a
    guard configuration has one map size and layout), so each is a point of ``space.grid()`` and
    of the optimiser's constraint, and none is ``c`` itself."""
    out = []
    lo, hi = space.map_pow2
    for d in (-2, -1, 1, 2):
        if lo <= c.map_pow2 + d <= hi:
            out.append(MapPoint(c.metric, c.layout, c.map_pow2 + d, c.width_bits))
    widths = sorted(space.widths)
    wi = widths.index(c.width_bits)
    for j in (wi - 1, wi + 1):
        if 0 <= j < len(widths):
            out.append(MapPoint(c.metric, c.layout, c.map_pow2, widths[j]))
    for lay in space.layouts:
        if lay != c.layout:
            out.append(MapPoint(c.metric, lay, c.map_pow2, c.width_bits))
    mi = space.metrics.index(c.metric)
    for j in (mi - 1, mi + 1):
        if 0 <= j < len(space.metrics):
            out.append(MapPoint(space.metrics[j], c.layout, c.map_pow2, c.width_bits))
    here = space.canonical(c)
    return [n for n in dict.fromkeys(space.canonical(n) for n in out) if n != here]


def _polish_point(model: Surrogate, rows: list, space: SearchSpace, trials: list[Trial], feasible) -> MapPoint | None:
    """The unevaluated feasible neighbour of the incumbent with the best predicted score (None if none)."""
    seen = {t.evaluation.config for t in trials}
    best = min((t.evaluation for t in trials), key=lambda e: (e.value, e.config)).config
    cands = sorted(c for c in neighbours(space, best) if c not in seen and feasible(c))
    if not cands:
        return None
    if not model.fit(rows):
        return cands[0]
    means = [m for m, _ in model.predict(cands, REPLAY_FIDELITY)]
    return min(zip(means, cands), key=lambda mc: (-mc[0], mc[1]))[1]


def grid_search(*, inputs: TuneInputs, measurer: Measurer, space: SearchSpace,
                settings: ObjectiveSettings) -> Search:
    """Evaluate every point of ``space`` (exhaustive reference)."""
    cached = measurer if isinstance(measurer, CachedMeasurer) else CachedMeasurer(measurer)
    trials = []
    t0 = time.monotonic()
    for i, cfg in enumerate(space.grid(), 1):
        ev = evaluate(config=cfg, measurement=cached.measure(cfg), facts=inputs.facts(cfg.metric), settings=settings)
        trials.append(Trial(call=i, phase="grid", evaluation=ev, measured=True, elapsed_s=0.0))
    return Search(trials=tuple(trials), measured=cached.measured, elapsed_s=time.monotonic() - t0)
