"""Write what the stages emit, each file atomically (autotune.io): every output of tune
(:func:`emit_all`), and for every stage the env files (:func:`write_env_files`) and the one
``recommendation.json`` (:func:`write_recommendation`)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from autotune.configuration import CC_AUTOTUNE, Configuration
from autotune.emit.envfiles import afl_build_env, afl_build_rebuilt_env, afl_run_env, autotune_run_env
from autotune.emit.plot import render_plot
from autotune.emit.report import render_report
from autotune.envfile import parse_env_text
from autotune.filenames import (
    AFL_BUILD_ENV, AFL_BUILD_REBUILT_ENV, AFL_RUN_ENV, AUTOTUNE_RUN_ENV, RECOMMENDATION_JSON, REPORT_JSON,
)
from autotune.io import write_bytes_atomic, write_json_atomic, write_text_atomic
from autotune.recommendation import TUNE_REASON, Recommendation, STAGE_TUNE, recorded_execs_of
from autotune.tune.result import TuneResult

PLOT_NAME = "tune.png"


def emit_all(*, result: TuneResult, out_dir: Path, plot: bool = True) -> list[Path]:
    """afl-build.env, afl-run.env, autotune-run.env, [afl-build-rebuilt.env], report.json, report.md, tune.png,
    recommendation.json (autotune.recommendation: the choice as preflight and validate read it)
    (measurements.json, the measurement cache, is written by autotune.tune.cache during the run).

    Everything is rendered first, then written file by file (each atomic): a failure while
    rendering leaves the previous outputs untouched.
    """
    texts: dict[str, str] = {
        AFL_BUILD_ENV: afl_build_env(result),
        AFL_RUN_ENV: afl_run_env(result),
        AUTOTUNE_RUN_ENV: autotune_run_env(result, out_dir=Path(out_dir).resolve()),
    }
    rebuilt = afl_build_rebuilt_env(result)
    if rebuilt:
        texts[AFL_BUILD_REBUILT_ENV] = rebuilt
    png = render_plot(result) if plot else None
    names = [*texts, REPORT_JSON, "report.md", RECOMMENDATION_JSON] + ([PLOT_NAME] if png else [])
    run_vars = parse_env_text(texts[AUTOTUNE_RUN_ENV], path=out_dir / AUTOTUNE_RUN_ENV).values
    rec = from_tune(result, run_vars=run_vars, env_files=tuple(texts))
    texts["report.md"] = render_report(result, files=names)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = write_env_files(out_dir, texts)
    if png:
        written.append(write_bytes_atomic(out_dir / PLOT_NAME, png))
    written.append(write_json_atomic(out_dir / REPORT_JSON, result.to_dict()))
    written.append(write_recommendation(out_dir, rec))
    stale = out_dir / AFL_BUILD_REBUILT_ENV
    if not rebuilt and stale.exists():
        stale.unlink()  # from an earlier run that needed a rebuild
    return written


def write_env_files(out_dir: Path, texts: dict[str, str]) -> list[Path]:
    """Each env file (name -> rendered text) into ``out_dir``, atomically, in the order given."""
    return [write_text_atomic(Path(out_dir) / name, text) for name, text in texts.items()]


def write_recommendation(out_dir: Path, rec: Recommendation) -> Path:
    """``recommendation.json``: the one writer of it, for tune and the race alike."""
    return write_json_atomic(Path(out_dir) / RECOMMENDATION_JSON, rec.to_dict())


def from_tune(result: TuneResult, *, run_vars: Mapping[str, str], env_files: tuple[str, ...]) -> Recommendation:
    """tune's recommendation: its best configuration on our runtime (``run_vars``: autotune-run.env's
    variables; ``env_files``: the env files emit wrote)."""
    b = result.best_config
    desc = f"{b.metric}, {b.layout}, {b.map_slots} slots, {b.width_bits}-bit counters (autotune cc, our runtime)"
    config = Configuration.of(name=b.key(), cc_kind=CC_AUTOTUNE, run_vars=run_vars, files=env_files,
                              description=desc)
    probe = result.inputs.probe_dir
    return Recommendation(stage=STAGE_TUNE, configuration=config, is_default=False, reason=TUNE_REASON,
                          env_files=env_files, evidence=REPORT_JSON, probe_dir=str(probe) if probe else None,
                          max_collision_rate=result.settings.max_collision_rate,
                          recorded_execs=recorded_execs_of(result), host=result.host)
