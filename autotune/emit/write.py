"""Write every output of tune into a directory, each file atomically (autotune.io)."""

from __future__ import annotations

from pathlib import Path

from autotune.emit.envfiles import afl_build_env, afl_build_rebuilt_env, afl_run_env, autotune_run_env
from autotune.emit.names import AFL_BUILD_ENV, AFL_BUILD_REBUILT_ENV, AFL_RUN_ENV, AUTOTUNE_RUN_ENV
from autotune.emit.plot import render_plot
from autotune.emit.report import render_report
from autotune.io import write_bytes_atomic, write_json_atomic, write_text_atomic
from autotune.preflight.envfile import parse_env_text
from autotune.recommendation import RECOMMENDATION_JSON, from_tune
from autotune.tune.result import FILE_NAME as REPORT_JSON, TuneResult

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
    rec = from_tune(result, run_vars=run_vars, env_files=tuple(texts)).to_dict()
    texts["report.md"] = render_report(result, files=names)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in texts.items():
        written.append(write_text_atomic(out_dir / name, text))
    if png:
        written.append(write_bytes_atomic(out_dir / PLOT_NAME, png))
    written.append(write_json_atomic(out_dir / REPORT_JSON, result.to_dict()))
    written.append(write_json_atomic(out_dir / RECOMMENDATION_JSON, rec))
    stale = out_dir / AFL_BUILD_REBUILT_ENV
    if not rebuilt and stale.exists():
        stale.unlink()  # from an earlier run that needed a rebuild
    return written
