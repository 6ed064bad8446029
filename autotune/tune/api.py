"""tune's whole job as one typed call: a probe in, the TuneResult out.

``autotune tune`` and ``autotune run`` (the pipeline) both call :func:`tune_probe_dir`, then
write the result with autotune.emit (tune itself does not import emit: emit renders tune's
document, not the other way round).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from autotune.errors import AutotuneError
from autotune.probe.result import ProbeResult
from autotune.profile.model import HostProfile
from autotune.tune.backends import CachedMeasurer
from autotune.tune.cache import attach, cache_identity
from autotune.tune.defaults import DEFAULT_MAX_COLLISION_RATE
from autotune.tune.objective import ObjectiveSettings
from autotune.tune.options import TuneSettings
from autotune.tune.probe_inputs import inputs_from_probe
from autotune.tune.run import make_measurer, make_space, run_tune
from autotune.tune.space import check_map_pow2


def tune_probe_dir(*, probe_dir: Path, out_dir: Path, host: HostProfile | None, probe: ProbeResult | None = None,
                   settings: TuneSettings = TuneSettings(), run: Callable[..., Any] | None = None,
                   notice: Callable[[str], None] | None = None):
    """Tune the map for the probe in ``probe_dir`` (``probe``: its ProbeResult, when the caller has
    it already) by ``settings``; ``out_dir`` keeps the measurements (measurements.json) for a later run.

    ``run`` wraps :func:`autotune.tune.run.run_tune` (the CLI passes one with a progress bar);
    ``notice`` receives one-line messages for the user. Returns the TuneResult; the caller writes
    it (autotune.emit.write.emit_all).
    """
    t = settings
    max_collision_rate, jobs, calls = t.max_collision_rate, t.jobs, t.calls
    confirm_k, confirm_repeats, sensitivity_weight = t.confirm_k, t.confirm_repeats, t.sensitivity_weight
    if not 0 < max_collision_rate < 1:
        raise AutotuneError(f"--max-collision-rate {max_collision_rate} is outside (0, 1)",
                            fix=f"e.g. --max-collision-rate {DEFAULT_MAX_COLLISION_RATE}")
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
    check_map_pow2(*t.map_pow2)
    if not Path(probe_dir).is_dir():
        raise AutotuneError(f"--probe {probe_dir} is not a directory",
                            fix="run `autotune probe --out DIR` first and pass DIR")
    inputs = inputs_from_probe(probe if probe is not None else Path(probe_dir))
    space = make_space(inputs=inputs, metric=t.metric, map_pow2=t.map_pow2)
    objective = ObjectiveSettings(max_collision_rate=max_collision_rate, sensitivity_weight=sensitivity_weight,
                                  jobs=jobs, l2_bytes=host.l2_bytes if host else None,
                                  llc_bytes=host.llc_bytes if host else None)
    measurer = CachedMeasurer(make_measurer(backend=t.backend, inputs=inputs, seed=t.seed))
    reused = attach(measurer, out_dir=out_dir,
                    identity=cache_identity(inputs=inputs, backend=measurer.name, host=host), fresh=t.fresh)
    if reused and notice:
        notice(f"reusing {reused} measurements from {out_dir}/measurements.json (--fresh to measure again)")
    runner = run or (lambda **kw: run_tune(**kw))
    result = runner(inputs=inputs, space=space, settings=objective, measurer=measurer, tune=settings, host=host)
    return result
