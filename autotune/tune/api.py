"""tune's whole job as one typed call: probe directory in, emitted configuration out.

``autotune tune`` and ``autotune run`` (the pipeline) both call :func:`tune_probe_dir`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from autotune.errors import AutotuneError


def tune_probe_dir(
    *,
    probe_dir: Path,
    out_dir: Path,
    host: dict[str, Any] | None,
    metric: str | None = None,
    max_collision_rate: float = 0.02,
    sensitivity_weight: float = 0.25,
    calls: int = 40,
    seed: int = 0,
    jobs: int = 1,
    backend: str = "auto",
    map_pow2: tuple[int, int] = (13, 27),
    plot: bool = True,
    fresh: bool = False,
    confirm_k: int = 5,
    confirm_repeats: int = 3,
    run: Callable[..., Any] | None = None,
    notice: Callable[[str], None] | None = None,
):
    """Tune the map for the probe in ``probe_dir`` and emit the configuration into ``out_dir``.

    ``run`` wraps :func:`autotune.tune.run.run_tune` (the CLI passes one with a progress bar);
    ``notice`` receives one-line messages for the user. Returns ``(TuneResult, written paths)``.
    """
    from autotune.emit.write import emit_all
    from autotune.measure.host import l2_bytes, llc_bytes
    from autotune.tune.backends import CachedMeasurer
    from autotune.tune.cache import attach, cache_identity
    from autotune.tune.objective import ObjectiveSettings
    from autotune.tune.run import load_inputs, make_measurer, make_space, run_tune

    if not 0 < max_collision_rate < 1:
        raise AutotuneError(f"--max-collision-rate {max_collision_rate} is outside (0, 1)",
                            fix="e.g. --max-collision-rate 0.02")
    if jobs < 1:
        raise AutotuneError(f"--instances {jobs} must be at least 1", fix="e.g. --instances 2")
    if calls < 1:
        raise AutotuneError(f"--calls {calls} must be at least 1", fix="e.g. --calls 40")
    if confirm_k < 0:
        raise AutotuneError(f"--confirm {confirm_k} is negative", fix="e.g. --confirm 5 (0 skips the confirmation)")
    if confirm_repeats < 1:
        raise AutotuneError(f"--confirm-repeats {confirm_repeats} must be at least 1", fix="e.g. --confirm-repeats 3")
    if sensitivity_weight < 0:
        raise AutotuneError("--sensitivity-weight must be >= 0", fix="e.g. --sensitivity-weight 0.25")
    if map_pow2[0] > map_pow2[1]:
        raise AutotuneError("--min-map-bytes is larger than --max-map-bytes", fix="swap them")
    if not Path(probe_dir).is_dir():
        raise AutotuneError(f"--probe {probe_dir} is not a directory",
                            fix="run `autotune probe --out DIR` first and pass DIR")
    inputs = load_inputs(Path(probe_dir))
    space = make_space(inputs=inputs, metric=metric, map_pow2=map_pow2)
    settings = ObjectiveSettings(max_collision_rate=max_collision_rate, sensitivity_weight=sensitivity_weight,
                                 jobs=jobs, l2_bytes=l2_bytes(host), llc_bytes=llc_bytes(host))
    measurer = CachedMeasurer(make_measurer(backend=backend, inputs=inputs, seed=seed))
    reused = attach(measurer, out_dir=out_dir,
                    identity=cache_identity(inputs=inputs, backend=measurer.name, host=host), fresh=fresh)
    if reused and notice:
        notice(f"reusing {reused} measurements from {out_dir}/measurements.json (--fresh to measure again)")
    runner = run or (lambda **kw: run_tune(**kw))
    result = runner(inputs=inputs, space=space, settings=settings, measurer=measurer, calls=calls, seed=seed,
                    host=host, confirm_k=confirm_k, confirm_repeats=confirm_repeats)
    written = emit_all(result=result, out_dir=out_dir, plot=plot)
    return result, written
