"""Several trials side by side: one afl-fuzz per core, each trial then replayed through the
yardstick on the same core. Trials are taken in the order given: interleave the configurations
(:func:`interleaved`) so that drift of the host's speed hits all of them alike.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable, Mapping, Sequence, TypeVar

from autotune.bugs.attribution import attribute_trial
from autotune.errors import AutotuneError
from autotune.trials.ensemble import run_ensemble_trial, trial_inputs
from autotune.trials.trial import TrialResult, TrialSpec, run_single_trial
from autotune.trials.coverage import CURVE_POINTS, Yardstick
from autotune.trials.yardstick import measure

T = TypeVar("T")
R = TypeVar("R")


def run_trial(*, spec: TrialSpec, core: int | tuple | None = None,
              caller_env: Mapping[str, str] | None = None) -> TrialResult:
    """Run afl-fuzz for ``spec.seconds`` in ``spec.out_dir`` (emptied first); its figures. An ensemble
    trial (``spec.members``) takes a tuple of cores, one per member (autotune.trials.ensemble)."""
    if spec.members:
        return run_ensemble_trial(spec=spec, cores=core if isinstance(core, tuple) else (core,),
                                  caller_env=caller_env)
    return run_single_trial(spec=spec, core=core, caller_env=caller_env)


def host_cores() -> list[int]:
    """The CPUs this process may run on (its affinity mask), in order."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def interleaved(configs: Sequence[str], trials: int) -> list[tuple[int, str]]:
    """(trial index, configuration) in the order round 0 of every configuration, round 1, ..."""
    return [(k, c) for k in range(trials) for c in configs]


def on_cores(items: Sequence[T], work: Callable[[T, int | None], R], *, jobs: int | None = None,
             cores: Sequence[int] | None = None) -> list[R]:
    """``work(item, core)`` for every item, ``jobs`` at once, worker w pinned to ``cores[w % len(cores)]``
    (default: this process's CPUs), items taken in the order given; results in that order. The first
    failure stops the workers from taking new items and is raised once the running ones end."""
    cores = list(cores) if cores is not None else host_cores()
    jobs = max(1, min(jobs or len(cores), len(items) or 1))
    results: list[R | None] = [None] * len(items)
    lock = threading.Lock()
    next_i = [0]
    errors: list[BaseException] = []

    def worker(w: int) -> None:
        core = cores[w % len(cores)] if cores else None
        while True:
            with lock:
                if errors or next_i[0] >= len(items):
                    return
                i = next_i[0]
                next_i[0] += 1
            try:
                results[i] = work(items[i], core)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                with lock:
                    errors.append(exc)
                return

    threads = [threading.Thread(target=worker, args=(w,), daemon=True) for w in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]  # every item ran: a worker stops early only on an error


def run_trials(*, specs: Sequence[TrialSpec], yardstick: Yardstick | None, jobs: int | None = None,
               cores: Sequence[int] | None = None, caller_env: Mapping[str, str] | None = None,
               points: int = CURVE_POINTS,
               on_done: Callable[[TrialResult], None] | None = None,
               on_start: Callable[[TrialSpec, int | None], None] | None = None,
               bug_binary: str | None = None) -> list[TrialResult]:
    """Run every spec (``jobs`` at once, worker w pinned to ``cores[w % len(cores)]``); each result
    carries its yardstick coverage when a yardstick is given. Results are in the order of ``specs``.
    The first failure stops the workers from taking new trials and is raised once the running ones end.
    Ensemble trials (specs with members, N of them at most) take N cores each: the cores are cut into
    groups of N, one worker a group (at most ``jobs`` groups). With ``bug_binary`` (a canary build of
    the target) each trial's kept inputs are also replayed through it for their time-to-bug
    (autotune.bugs.attribution), on the same core after the yardstick."""
    size = max([len(s.members) for s in specs] + [1])
    pool = list(cores) if cores is not None else host_cores()
    if size > 1:
        if len(pool) < size:
            raise AutotuneError(f"a portfolio of {size} instances needs {size} cores; this machine gives "
                                f"{len(pool)}", fix=f"run it on a machine with {size} cores, or fewer instances")
        groups = [tuple(pool[g * size:(g + 1) * size]) for g in range(len(pool) // size)]
        jobs = min(jobs or len(groups), len(groups))
        pool = groups  # type: ignore[assignment]

    def one(spec: TrialSpec, core) -> TrialResult:
        if on_start:
            on_start(spec, core)
        res = run_trial(spec=spec, core=core, caller_env=caller_env)
        if yardstick is not None:
            afl_out = Path(spec.out_dir) / "afl-out"
            inputs = trial_inputs(afl_out, spec)
            cov = measure(yardstick=yardstick, inputs=inputs, seconds=spec.seconds, work=Path(spec.out_dir) / "yardstick",
                          env=caller_env, core=core[0] if isinstance(core, tuple) else core, points=points)
            res = res.with_yardstick(cov)
        if bug_binary is not None:
            afl_out = Path(spec.out_dir) / "afl-out"
            inputs = trial_inputs(afl_out, spec)
            # a hang costs the yardstick's per-input timeout here too (the canary counts up to then still count)
            per_input_s = yardstick.timeout_ms / 1000 if yardstick is not None else 5.0
            res = res.with_bugs(attribute_trial(binary=bug_binary, kept=inputs, seconds=spec.seconds, env=caller_env,
                                                timeout_s=per_input_s))
        if on_done:
            on_done(res)
        return res

    return on_cores(specs, one, jobs=jobs, cores=pool)
