"""Re-measuring a finished comparison by another yardstick without running its campaigns again
(`autotune compare --remeasure DIR --yardstick llvm-cov`).

Everything each trial kept is still in ``DIR/trials/<config>/trial-<k>/afl-out``: it is replayed
through the new yardstick (built from the recipe compare.json records, or the one given) and the
statistics are computed again. afl-fuzz's own figures (execs/s, queue, edges_found) are the
campaign's. The source directory is only read: the result goes to another directory
(``compare.json``, ``compare.md``, ``coverage.png``, ``trials/<config>/trial-<k>/trial.json`` and
the yardstick's scratch/profile), each file written atomically, and compare.json's ``remeasure``
block keeps the source's yardstick, per-configuration coverage and pairs, which compare.md sets
beside the new ones.

``--yardstick bugs`` keeps the source's edge figures and adds the time-to-bug of every trial: its kept
inputs replayed through the target's canary build (the pcguard yardstick's binary), and the survival
statistics. A campaign run without fatal canaries kept a triggering input only when it was new on
afl-fuzz's map, so its times to trigger are upper bounds (a note says so).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from autotune.bugs import yardstick as bugs_yardstick
from autotune.bugs.attribution import attribute_trial
from autotune.bugs.yardstick import CAMPAIGN_ENV, EDGE_CHOICE, require_canaries
from autotune.compare.options import MeasureSettings
from autotune.compare.compare import (JSON_NAME, CompareResult, bug_report_of, compare_pairs, config_dir_name,
                                      outcome_notes, outcome_of, write_outputs)
from autotune.errors import AutotuneError, DocumentError
from autotune.io import read_json, write_json_atomic
from autotune import afl
from autotune.target import TargetSpec
from autotune.trials import TrialResult, Yardstick, choose_yardstick, measure
from autotune.trials.ensemble import trial_inputs
from autotune.trials.runner import on_cores


def load_compare(source: Path) -> CompareResult:
    path = source / JSON_NAME
    if not path.is_file():
        raise AutotuneError(f"{source} holds no {JSON_NAME}", fix="pass the --out directory of a finished compare")
    try:
        return CompareResult.from_dict(read_json(path))
    except (KeyError, TypeError, ValueError) as exc:
        raise DocumentError(path, f"not a compare result this autotune reads ({exc})",
                            fix="re-measure with the autotune version that wrote it") from exc


def _campaign_dir(old: CompareResult) -> Path:
    """Where the afl-fuzz campaigns ran (a re-measured result points at its source's campaigns)."""
    if old.remeasure and old.remeasure.get("campaign_dir"):
        return Path(old.remeasure["campaign_dir"])
    return Path(old.out_dir)


def afl_out_of(*, source: Path, old: CompareResult, trial: TrialResult) -> Path:
    """The trial's afl-out: under ``source`` at the place it had under the recorded directory (the
    directory may have moved since), else where the trial recorded it."""
    recorded = Path(trial.spec.out_dir)
    candidates = []
    for root in (Path(old.out_dir), _campaign_dir(old)):
        try:
            candidates.append(source / recorded.relative_to(root) / "afl-out")
        except ValueError:
            pass
    candidates.append(recorded / "afl-out")
    for c in candidates:
        if (c / "default").is_dir():
            return c
    raise AutotuneError(f"{trial.spec.config} trial {trial.spec.index}: no afl-out directory (looked in "
                        f"{', '.join(str(c) for c in candidates)})",
                        fix="re-measure a directory whose trials/ still hold afl-fuzz's output")


def _measure_all(*, tasks: Sequence[tuple[TrialResult, Path, Path]], yardstick: Yardstick, jobs: int | None,
                 env: Mapping[str, str] | None, say: Callable[[str], None]) -> list[TrialResult]:
    """Measure each (trial, afl-out, scratch dir), ``jobs`` at once, worker w pinned to a core."""

    def one(task: tuple[TrialResult, Path, Path], core: int | None) -> TrialResult:
        trial, afl_out, work = task
        inputs = trial_inputs(afl_out, trial.spec)
        cov = measure(yardstick=yardstick, inputs=inputs, seconds=trial.spec.seconds, work=work, env=env, core=core)
        res = trial.with_yardstick(cov)
        write_json_atomic(work.parent / "trial.json", res.to_dict())
        say(f"{trial.spec.config} trial {trial.spec.index}: {cov.edges} yardstick {yardstick.unit} "
            f"({len(inputs)} inputs)")
        return res

    return on_cores(tasks, one, jobs=jobs)


def remeasure_compare(*, source: Path, out_dir: Path, settings: MeasureSettings, spec: TargetSpec | None = None,
                      env: Mapping[str, str] | None = None,
                      progress: Callable[[str], None] | None = None) -> CompareResult:
    """The comparison in ``source`` measured again by ``settings.yardstick`` (pcguard, llvm-cov, or bugs: its
    edge figures kept, each trial's time-to-bug added), ``settings.jobs`` at once, written to ``out_dir``
    (another directory); the result. ``settings.bug_scope``: with the bugs yardstick, judge on its bugs
    only (autotune.bugs.depth.BugScope). ``spec``: the target (None: the one the compare recorded)."""
    yardstick, jobs, plot = settings.yardstick, settings.jobs, settings.plot
    say = progress or (lambda _m: None)
    t0 = time.monotonic()
    source, out_dir = source.resolve(), out_dir.resolve()
    old = load_compare(source)
    if out_dir == source or source in out_dir.parents:
        raise AutotuneError(f"--out {out_dir} is in the compare being re-measured ({source}), which is only read",
                            fix=f"pass another --out, e.g. {source}-{yardstick}")
    spec = spec or TargetSpec.from_dict(old.target)
    if yardstick == bugs_yardstick.CHOICE:
        return _remeasure_bugs(source=source, out_dir=out_dir, old=old, spec=spec, settings=settings, env=env,
                               say=say, t0=t0)
    yard = choose_yardstick(spec=spec, env=afl.base_env(env), choice=yardstick)
    say(f"yardstick: {yard.kind} ({yard.binary})")
    tasks = [(t, afl_out_of(source=source, old=old, trial=t),
              out_dir / "trials" / config_dir_name(o.config.name) / f"trial-{t.spec.index}" / "yardstick")
             for o in old.configs for t in o.trials]
    say(f"re-measuring {len(tasks)} trials of {source}")
    measured = _measure_all(tasks=tasks, yardstick=yard, jobs=jobs, env=env, say=say)
    by_config: dict[str, list[TrialResult]] = {}
    for r in measured:
        by_config.setdefault(r.spec.config, []).append(r)
    outcomes = tuple(outcome_of(config=o.config, binary=o.binary, trials=by_config.get(o.config.name, []))
                     for o in old.configs)
    before = {"from": str(source), "campaign_dir": str(_campaign_dir(old)), "yardstick": old.yardstick.to_dict(),
              "coverage": {o.config.name: o.coverage.to_dict() for o in old.configs},
              "pairs": [p.to_dict() for p in old.pairs], "remeasure_wall_s": round(time.monotonic() - t0, 1)}
    notes = outcome_notes(outcomes, yard) + [f"re-measured from {source} (its yardstick: {old.yardstick.kind}); "
                                             "afl-fuzz's figures are the campaign's"]
    res = replace(old, yardstick=yard, configs=outcomes, pairs=compare_pairs(outcomes), out_dir=str(out_dir),
                  notes=tuple(notes), remeasure=before)
    write_outputs(result=res, out_dir=out_dir, plot=plot)
    return res


def _remeasure_bugs(*, source: Path, out_dir: Path, old: CompareResult, spec: TargetSpec, settings: MeasureSettings,
                    env: Mapping[str, str] | None, say: Callable[[str], None], t0: float) -> CompareResult:
    """The source's edge figures kept, each trial's time-to-bug added (autotune.bugs.attribution),
    ``settings.jobs`` at once; ``settings.bug_scope`` restricts the judgement (autotune.bugs.depth.BugScope)."""
    canary_yard = choose_yardstick(spec=spec, env=afl.base_env(env), choice=EDGE_CHOICE)
    binary = canary_yard.binary
    require_canaries(binary)
    say(f"bugs: replaying every trial's kept inputs through {binary}")
    tasks = [(t, afl_out_of(source=source, old=old, trial=t),
              out_dir / "trials" / config_dir_name(o.config.name) / f"trial-{t.spec.index}")
             for o in old.configs for t in o.trials]

    def one(task: tuple[TrialResult, Path, Path], core: int | None) -> TrialResult:
        trial, afl_out, tdir = task
        res = trial.with_bugs(attribute_trial(binary=binary, kept=trial_inputs(afl_out, trial.spec),
                                              seconds=trial.spec.seconds, env=env,
                                              timeout_s=canary_yard.timeout_ms / 1000))
        write_json_atomic(tdir / "trial.json", res.to_dict())
        say(f"{trial.spec.config} trial {trial.spec.index}: bugs triggered: "
            f"{', '.join(sorted(res.bugs.triggered())) if res.bugs else ''}")
        return res

    measured = on_cores(tasks, one, jobs=settings.jobs)
    by_config: dict[str, list[TrialResult]] = {}
    for r in measured:
        by_config.setdefault(r.spec.config, []).append(r)
    outcomes = tuple(replace(o, trials=tuple(by_config.get(o.config.name, []))) for o in old.configs)
    fatal = all(all(t.spec.env.get(k) == v for k, v in CAMPAIGN_ENV.items()) for o in old.configs for t in o.trials)
    notes = list(old.notes) + [f"bugs re-measured from {source}: every trial's kept inputs replayed through {binary}"]
    if not fatal:
        notes.append("the campaigns ran without fatal canaries: an input that triggered a bug was kept only when it "
                     "was new on afl-fuzz's map, so the times to trigger are upper bounds (run the compare with "
                     "--yardstick bugs for exact ones)")
    before = {"from": str(source), "campaign_dir": str(_campaign_dir(old)), "yardstick": old.yardstick.to_dict(),
              "coverage": {o.config.name: o.coverage.to_dict() for o in old.configs},
              "pairs": [p.to_dict() for p in old.pairs], "remeasure_wall_s": round(time.monotonic() - t0, 1),
              "by": "bugs"}
    res = replace(old, configs=outcomes, out_dir=str(out_dir), notes=tuple(notes), remeasure=before,
                  bugs=bug_report_of(outcomes, old.seconds, settings.bug_scope))
    write_outputs(result=res, out_dir=out_dir, plot=settings.plot)
    return res
