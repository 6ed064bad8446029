"""tune's core: probe directory in, TuneResult out (the CLI and tests call :func:`run_tune`)."""

from __future__ import annotations

import functools
from dataclasses import fields
from typing import Any, Callable

from autotune.errors import AutotuneError
from autotune.mappoint import MapPoint
from autotune.measure import native
from autotune.measure.bench import case_from_raw
from autotune.measure.trace import probe_trace, synthetic_trace
from autotune.profile.model import HostProfile
from autotune.tune.probe_inputs import corpus_files
from autotune.tune.replay import ReplayMeasurer
from autotune.vocabulary import AFL_DEFAULT_MAP_SLOTS, LAYOUTS
from autotune.tune.backends import BenchMeasurer, CachedMeasurer, Measurer
from autotune.tune.confirm import Confirmation, confirm
from autotune.tune.options import TuneSettings
from autotune.tune.inputs import TuneInputs
from autotune.tune.objective import Evaluation, ObjectiveSettings, working_set_bytes
from autotune.tune.optimise import Search, Trial, optimise
from autotune.tune.precision import collision_rate
from autotune.tune.result import NoRebuildEvaluation, TuneResult
from autotune.tune.space import SearchSpace

BACKENDS = ("auto", "replay", "bench")


def make_space(*, inputs: TuneInputs, metric: str | None = None, map_pow2: tuple[int, int] | None = None,
               widths: tuple[int, ...] | None = None, layouts: tuple[str, ...] | None = None) -> SearchSpace:
    metrics = (metric,) if metric else tuple(m for m in inputs.metrics)
    if metric and metric not in inputs.metrics:
        raise AutotuneError(f"the probe has no census for metric {metric!r}",
                            fix=f"use one of: {', '.join(inputs.metrics)}")
    kw: dict[str, Any] = {"metrics": metrics}
    if map_pow2:
        kw["map_pow2"] = map_pow2
    if widths:
        kw["widths"] = widths
    if layouts:
        kw["layouts"] = layouts
    space = SearchSpace(**kw)
    return space.ordered(lambda m: (inputs.metrics[m].estimated_keys, m))


def make_measurer(*, backend: str, inputs: TuneInputs, seed: int) -> Measurer:
    if backend not in BACKENDS:
        raise AutotuneError(f"unknown backend {backend!r}", fix=f"use one of: {', '.join(BACKENDS)}")

    def dense_for(c: MapPoint) -> int | None:
        return LAYOUTS[c.layout].dense_slots(hash_slots=c.map_slots, estimated_keys=inputs.facts(c.metric).estimated_keys)

    def ws(c: MapPoint) -> int:
        return working_set_bytes(config=c, n_keys=inputs.facts(c.metric).estimated_keys, dense=dense_for(c))

    files = corpus_files(inputs)
    can_replay = bool(inputs.harness and inputs.harness.is_file() and files)
    if backend == "replay" or (backend == "auto" and can_replay):
        if not inputs.harness:
            raise AutotuneError("the probe names no harness binary", fix="tune with --backend bench")
        return ReplayMeasurer(harness=inputs.harness, inputs=files, seed=int(inputs.extra.get("probe_seed", 0)),
                              shuffle_seed=seed, target_exec_ns=inputs.target_exec_ns or 1000.0, dense_for=dense_for,
                              working_set=ws)
    if inputs.target_exec_ns is None:
        raise AutotuneError("the probe recorded no execution time for the target",
                            fix="re-run `autotune probe` (it times every execution)")
    if inputs.probe_dir is None:
        raise AutotuneError("the bench backend needs the probe's traces", fix="pass --probe DIR")
    traces = functools.lru_cache(maxsize=None)(lambda m: probe_trace(inputs.probe_dir, metric=m))
    return BenchMeasurer(traces=traces, target_exec_ns=inputs.target_exec_ns, dense_for=dense_for)


def flat_ns_per_byte() -> Callable[[int], float]:
    """ns per working-set byte of a flat 8-bit map of that working set (bench.c, measured lazily,
    cached per power of two): the cache-pressure curve the --jobs model reads."""
    trace = synthetic_trace(n_keys=512, seed=0, n_execs=4)
    cache: dict[int, float] = {}

    def f(ws_bytes: int) -> float:
        slots = max(1 << 12, min(1 << 28, 1 << max(0, (max(1, ws_bytes // 2) - 1).bit_length())))
        if slots not in cache:
            raw = native.run_case(trace=trace, layout="flat", width_bits=8, map_slots=slots,
                                  timing=native.Timing(rounds=3, round_s=0.005, min_execs=1))
            c = case_from_raw(raw, layout="flat", width_bits=8, map_slots=slots)
            cache[slots] = (c.reset_ns + c.classify_compare_ns + c.hash_ns) / (2 * slots)
        return cache[slots]

    return f


def run_tune(*, inputs: TuneInputs, space: SearchSpace, settings: ObjectiveSettings, measurer: Measurer,
             tune: TuneSettings = TuneSettings(), host: HostProfile | None = None,
             progress: Callable[[Trial], None] | None = None,
             confirm_progress: Callable[[MapPoint, int], None] | None = None) -> TuneResult:
    """Optimise (``tune.calls`` calls from ``tune.seed``), confirm the leaders by repeated interleaved
    measurement (autotune.tune.confirm; ``tune.confirm_k`` 0 skips it), then gather the document
    (choice, no-rebuild choice, curves). ``settings``: the objective's (tune_probe_dir makes it of
    ``tune`` and the host)."""
    confirm_k, confirm_repeats = tune.confirm_k, tune.confirm_repeats
    if confirm_k < 0 or confirm_repeats < 1:
        raise AutotuneError(f"--confirm {confirm_k} / --confirm-repeats {confirm_repeats} out of range",
                            fix="--confirm 0 (off) or more, --confirm-repeats 1 or more (e.g. 5 and 3)")
    cached = measurer if isinstance(measurer, CachedMeasurer) else CachedMeasurer(measurer)
    ns_per_byte = flat_ns_per_byte() if settings.jobs > 1 else None
    search = optimise(inputs=inputs, measurer=cached, space=space, settings=settings, calls=tune.calls, seed=tune.seed,
                      ns_per_byte=ns_per_byte, progress=progress)
    confirmation = None
    if confirm_k > 0:
        confirmation = confirm(search=search, inputs=inputs, space=space, settings=settings, measurer=cached.inner,
                               k=confirm_k, repeats=confirm_repeats, ns_per_byte=ns_per_byte,
                               progress=confirm_progress)
    return result_from_search(search=search, inputs=inputs, space=space, settings=settings, measurer=cached,
                              seed=tune.seed, host=host, confirmation=confirmation)


def result_from_search(*, search: Search, inputs: TuneInputs, space: SearchSpace, settings: ObjectiveSettings,
                       measurer: Measurer, seed: int, host: HostProfile | None,
                       confirmation: Confirmation | None = None) -> TuneResult:
    """The document of a search (and its confirmation round), its figures as report.json records them;
    the backend is ``measurer``'s name, the cache hits its own (a CachedMeasurer's; else none)."""
    backend, cache_hits = measurer.name, getattr(measurer, "hits", 0)
    trials = tuple(Trial.from_dict(t.to_dict()) for t in search.trials)
    best = confirmation.chosen.evaluation if confirmation else search.best
    nr = [t.evaluation for t in search.trials
          if t.evaluation.config.layout == "flat" and t.evaluation.config.map_slots == AFL_DEFAULT_MAP_SLOTS
          and t.evaluation.config.width_bits == 8]
    nr_best = _no_rebuild_best(nr, inputs=inputs, settings=settings)
    curves = {
        "collision_rate": {m: {str(s): round(collision_rate(map_slots=s, n_keys=inputs.facts(m).estimated_keys), 6)
                               for s in space.sizes} for m in space.metrics},
        "measured": [{"layout": t.evaluation.config.layout, "metric": t.evaluation.config.metric,
                      "width_bits": t.evaluation.config.width_bits, "map_slots": t.evaluation.config.map_slots,
                      "execs_per_s": round(t.evaluation.measurement.execs_per_s, 3)}
                     for t in {t.evaluation.config: t for t in search.trials}.values()],
    }
    return TuneResult(target=inputs.target, inputs=inputs.recorded(), space=space.to_dict(), settings=settings,
                      backend=backend, calls=len(search.trials), seed=seed, trials=trials, best=best.recorded(),
                      no_rebuild_best=nr_best, measured=search.measured, cache_hits=cache_hits,
                      elapsed_s=search.elapsed_s + (confirmation.elapsed_s if confirmation else 0.0), host=host,
                      curves=curves, confirmation=confirmation.to_dict() if confirmation else None)


def _no_rebuild_best(cands, *, inputs: TuneInputs, settings: ObjectiveSettings) -> NoRebuildEvaluation | None:
    """The best AFL++-as-installed point (flat, 64 KiB, 8-bit). An afl-cc build hashes with AFL++'s
    own hash, so where the census measured its collision rate at 64 KiB that rate replaces
    Equation 1's in the score and the feasibility (it is much worse for ngram-N)."""
    import math

    best, best_key = None, None
    for ev in cands:
        afl = inputs.facts(ev.config.metric).afl_hash_collision.get(AFL_DEFAULT_MAP_SLOTS)
        score, feasible = ev.score_bits, ev.feasible
        if afl is not None:
            lost = ev.precision.lost_keys
            score = score - math.log2(max(1e-12, 1 - lost)) + math.log2(max(1e-12, 1 - afl))
            feasible = afl <= settings.max_collision_rate
        key = (not feasible, -score, ev.config)
        if best_key is None or key < best_key:
            extra = {} if afl is None else {"afl_hash_collision_rate": afl, "afl_score_bits": score, "afl_feasible": feasible}
            best, best_key = NoRebuildEvaluation(**{f.name: getattr(ev, f.name) for f in fields(Evaluation)}, **extra), key
    return NoRebuildEvaluation.from_dict(best.to_dict()) if best else None

