"""Golden files for what users read: the env files and report.md (deterministic inputs: recorded
figures and an exhaustive search, no timing). Update deliberately:
``AUTOTUNE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_emit_golden.py``."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pytest

from autotune.emit.envfiles import afl_build_env, afl_build_rebuilt_env, afl_run_env, autotune_run_env
from autotune.emit.report import render_report
from autotune.emit.write import emit_all
from autotune.tune.backends import RecordedMeasurer
from autotune.tune.confirm import confirm
from autotune.tune.inputs import MetricFacts, TuneInputs
from autotune.tune.objective import ObjectiveSettings
from autotune.tune.optimise import grid_search
from autotune.tune.result import TuneResult, load_tune_result
from autotune.tune.run import result_from_search
from autotune.tune.space import SearchSpace
from recorded_figures import FIGURES, RECORDED_LAYOUTS

GOLDEN = Path(__file__).parent / "golden"
# collision rates a census measured with AFL++'s hash (hk32) per map size: N-grams stay high
AFL_HASH = {"edge": {32768: 0.045, 65536: 0.023, 131072: 0.012, 262144: 0.006},
            "ngram-4": {32768: 0.31, 65536: 0.2, 131072: 0.14, 262144: 0.11},
            "ctx": {32768: 0.13, 65536: 0.065, 131072: 0.034, 262144: 0.017}}
OVERFLOW = {"edge": {8: 0.05, 16: 0.001, 32: 0.0, 64: 0.0}, "ngram-4": {8: 0.08, 16: 0.002, 32: 0.0, 64: 0.0},
            "ctx": {8: 0.0, 16: 0.0, 32: 0.0, 64: 0.0}}


def _result(*, metrics: tuple[str, ...], map_pow2: tuple[int, int], max_collision_rate: float = 0.02) -> TuneResult:
    inputs = TuneInputs(metrics={m: MetricFacts(m, int(FIGURES["keys"][m] * 0.9), float(FIGURES["keys"][m]), OVERFLOW[m],
                                                AFL_HASH[m]) for m in metrics},
                        target_exec_ns=20000.0, target="golden-target", extra={"probe_seed": 7})
    space = SearchSpace(map_pow2=map_pow2, metrics=metrics, layouts=RECORDED_LAYOUTS).ordered(lambda m: inputs.metrics[m].estimated_keys)
    settings = ObjectiveSettings(max_collision_rate=max_collision_rate, l2_bytes=2 << 20, llc_bytes=105 << 20)
    search = grid_search(inputs=inputs, measurer=RecordedMeasurer(FIGURES["execs_per_s"]), space=space,
                         settings=settings)
    conf = confirm(search=search, inputs=inputs, space=space, settings=settings,
                   measurer=RecordedMeasurer(FIGURES["execs_per_s"]), k=3, repeats=2)
    res = result_from_search(search=search, inputs=inputs, space=space, settings=settings,
                             measurer=RecordedMeasurer(FIGURES["execs_per_s"]), seed=0, host=None, confirmation=conf)
    return dataclasses.replace(res, elapsed_s=0.0, confirmation={**res.confirmation, "elapsed_s": 0.0})


CASES = {
    # the best needs a 2^18 map: a rebuilt AFL++ or our runtime
    "rebuild": dict(metrics=("edge", "ngram-4"), map_pow2=(15, 18)),
    # maps up to 64 KiB and a 5 % limit: edge (3000 keys) fits AFL++'s map, no rebuild needed
    "norebuild": dict(metrics=("edge", "ctx"), map_pow2=(13, 16), max_collision_rate=0.05),
}


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("AUTOTUNE_UPDATE_GOLDEN") == "1":
        path.write_text(text)
    assert path.is_file(), f"missing golden file {path}; create it with AUTOTUNE_UPDATE_GOLDEN=1"
    assert text == path.read_text(), f"{name} differs from its golden file"


@pytest.mark.parametrize("case", sorted(CASES))
def test_env_files_and_report_match_golden(case):
    res = _result(**CASES[case])
    files = ["afl-build.env", "afl-run.env", "autotune-run.env"]
    rebuilt = afl_build_rebuilt_env(res)
    assert (rebuilt is not None) == (case == "rebuild") == res.needs_afl_rebuild
    _check(f"{case}.afl-build.env", afl_build_env(res))
    _check(f"{case}.afl-run.env", afl_run_env(res))
    _check(f"{case}.autotune-run.env", autotune_run_env(res, out_dir=Path("/srv/fuzz/tune out")))
    if rebuilt:
        files.append("afl-build-rebuilt.env")
        _check(f"{case}.afl-build-rebuilt.env", rebuilt)
    _check(f"{case}.report.md", render_report(res, files=files + ["report.json", "report.md", "tune.png"]))


def _source(path: Path) -> dict[str, str]:
    """Load an env file the documented way and return the variables it set."""
    script = f"env -i bash -c 'set -e; set -a; . \"{path}\"; set +a; env -0'"
    raw = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    env = dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)
    return {k: v for k, v in env.items() if k.startswith(("AFL_", "AUTOTUNE_"))}


def test_emitted_files_load_with_set_a_and_match_the_choice(tmp_path):
    res = _result(**CASES["rebuild"])
    written = {p.name for p in emit_all(result=res, out_dir=tmp_path)}
    assert written == {"afl-build.env", "afl-run.env", "autotune-run.env", "afl-build-rebuilt.env", "report.json",
                       "report.md", "tune.png", "recommendation.json"}
    b = res.best_config
    run = _source(tmp_path / "autotune-run.env")
    assert run["AUTOTUNE_METRIC"] == b.metric and run["AUTOTUNE_LAYOUT"] == b.layout
    assert run["AUTOTUNE_COUNTER_BITS"] == str(b.width_bits)
    assert run["AUTOTUNE_SEED"] == "7"
    assert run["AUTOTUNE_KEY_HASH"] == "exact"
    if b.layout == "twolevel":
        assert Path(run["AUTOTUNE_INDEX_FILE"]).parent == tmp_path.resolve()
        assert run["AUTOTUNE_INDEX_SIZE"] == str(b.map_slots)
        assert run["AUTOTUNE_MAP_SIZE"] == run["AFL_MAP_SIZE"] == str(res.best.precision.dense_slots)
    build = _source(tmp_path / "afl-build.env")
    assert build["AFL_LLVM_INSTRUMENT"] in ("CLASSIC", "NGRAM-4")
    assert _source(tmp_path / "afl-run.env") == {"AFL_MAP_SIZE": "65536"}
    rebuilt = (tmp_path / "afl-build-rebuilt.env").read_text()
    assert f"MAP_SIZE_POW2={b.map_pow2}" in rebuilt
    assert (tmp_path / "tune.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = json.loads((tmp_path / "report.json").read_text())
    assert doc["best"] == res.best.to_dict() and TuneResult.from_dict(doc).to_dict() == doc
    assert load_tune_result(tmp_path) == res  # the typed document reads back equal, figures and all
    # every line of an env file is a comment, blank, or NAME=value
    for name in ("afl-build.env", "afl-run.env", "autotune-run.env", "afl-build-rebuilt.env"):
        for line in (tmp_path / name).read_text().splitlines():
            assert not line or line.startswith("#") or ("=" in line and " " not in line), line


def test_a_no_rebuild_result_removes_a_stale_rebuilt_file(tmp_path):
    emit_all(result=_result(**CASES["rebuild"]), out_dir=tmp_path, plot=False)
    assert (tmp_path / "afl-build-rebuilt.env").exists()
    emit_all(result=_result(**CASES["norebuild"]), out_dir=tmp_path, plot=False)
    assert not (tmp_path / "afl-build-rebuilt.env").exists()
