"""validate and preflight end to end on the demo target: a real probe, the real `autotune tune`,
the real afl-cc / afl-showmap / afl-fuzz; preflight's exit codes 0, 2 and 1 (missing AFL++,
corrupt tuned directory)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.main import app

pytestmark = pytest.mark.slow


def _cli(*args: str, env: dict | None = None):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "160", **(env or {})})


@pytest.fixture(scope="module")
def tuned(tmp_path_factory) -> Path:
    """probe --demo (5 s) then tune (12 calls) into a fresh directory."""
    base = tmp_path_factory.mktemp("demo-pipeline")
    r = _cli("probe", "--demo", "--probe-time", "5", "-o", str(base / "probe"))
    assert r.exit_code == 0, r.output
    r = _cli("tune", "--probe", str(base / "probe"), "--out", str(base / "tuned"), "--calls", "12", "--no-plot")
    assert r.exit_code == 0, r.output
    return base / "tuned"


def _with_env(src: Path, dst: Path, **values: str) -> Path:
    """A copy of the tuned dir whose autotune-run.env has ``values`` replaced. Tests that size the
    map need a hashed metric: when tune chose guard (one slot per guard, no size), ngram-8."""
    shutil.copytree(src, dst)
    p = dst / "autotune-run.env"
    if "AUTOTUNE_METRIC=guard" in p.read_text().splitlines():
        values = {"AUTOTUNE_METRIC": "ngram-8", "AUTOTUNE_OVERFLOW": "neverzero", **values}
    lines = [ln for ln in p.read_text().splitlines() if ln.split("=", 1)[0] not in values]
    p.write_text("\n".join(lines + [f"{k}={v}" for k, v in values.items()]) + "\n")
    return dst


def test_validate_demo_prediction_is_exact_for_our_runtime(tuned, tmp_path):
    """Dense map of 256 slots for a metric with ~1000 keys: used and overflow keys exactly as predicted."""
    d = _with_env(tuned, tmp_path / "t", AUTOTUNE_LAYOUT="twolevel", AUTOTUNE_INDEX_SIZE=str(1 << 20),
                  AUTOTUNE_MAP_SIZE="256", AFL_MAP_SIZE="256")
    r = _cli("validate", str(d), "--fuzz-time", "1")
    assert r.exit_code == 0, r.output
    for word in ("aflpp-default", "aflpp-tuned", "autotune", "PCGUARD", "used_key", "written:"):
        assert word in r.stdout
    doc = json.loads((d / "validate.json").read_text())
    assert doc["schema_version"] == 1 and doc["fuzz_s"] == 1
    v = {x["name"]: x for x in doc["variants"]}
    assert set(v) == {"aflpp-default", "aflpp-tuned", "autotune"}
    ours = v["autotune"]
    pred, idx = ours["predicted_occupancy"], ours["index_stats"]
    assert pred["overflow_keys"] > 0  # the test is about overflow: the dense map is far too small
    assert idx["used_key"] == pred["used_slots"] == 256
    assert idx["overflow_keys"] == pred["overflow_keys"]
    assert v["aflpp-default"]["predicted_occupancy"] is None and v["aflpp-default"]["execs_vs_default"] == 1.0
    for x in v.values():
        assert x["fuzz"]["execs_done"] > 0 and x["measured_slots"] > 0 and x["notes"]
    assert v["aflpp-tuned"]["build_vars"]["AFL_LLVM_INSTRUMENT"]
    # the build record beside the afl-cc build says how it was built
    rec = json.loads(Path(v["aflpp-tuned"]["binary"] + ".build.json").read_text())
    assert rec["build_vars"] == v["aflpp-tuned"]["build_vars"] and rec["cc_kind"] == "afl"


def _harness() -> Path:
    from autotune.target import demo_harness

    return demo_harness()


def test_preflight_fits_exit_0(tuned, tmp_path):
    """Tune's configuration with headroom fits. Tune's own width and size sit at the limits by design
    (the smallest that fit its census), and a short probe's census varies: on one CI run tune's 5 s
    census put 3.8 % of ngram-5 keys over 8 bits, preflight's 3 s one 9.8 %. What this test is about
    is the exit code of a configuration that fits, so it gives that configuration room: a flat map 4x
    the default's, 32-bit counters."""
    roomy = _with_env(tuned, tmp_path / "roomy", AUTOTUNE_LAYOUT="flat", AUTOTUNE_MAP_SIZE=str(1 << 18),
                      AFL_MAP_SIZE=str(1 << 18), AUTOTUNE_COUNTER_BITS="32")
    env = roomy / "autotune-run.env"  # a two-level choice's index variables do not apply to a flat map
    env.write_text("".join(ln for ln in env.read_text().splitlines(keepends=True)
                           if not ln.startswith(("AUTOTUNE_INDEX_SIZE=", "AUTOTUNE_INDEX_FILE="))))
    r = _cli("preflight", str(roomy), "--demo", "--probe-time", "3", "--json", "--github")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout[: r.stdout.rindex("}") + 1])
    assert doc["fits"] and doc["exit_code"] == 0 and doc["counts"]["error"] == 0
    checks = {f["check"] for f in doc["findings"]}
    assert {"afl_present", "afl_variables", "collisions", "counter_overflow", "host_profile", "harness_build"} <= checks
    assert all(f["fix"] for f in doc["findings"] if f["severity"] != "ok")
    assert r.stdout.rstrip().splitlines()[-1].startswith("::notice::preflight: the configuration fits")


def test_preflight_undersized_exit_2_names_the_fix(tuned, tmp_path):
    d = _with_env(tuned, tmp_path / "small", AUTOTUNE_LAYOUT="flat", AUTOTUNE_MAP_SIZE="1024", AFL_MAP_SIZE="1024")
    r = _cli("preflight", str(d), "--demo", "--probe-time", "3", "--github")
    assert r.exit_code == 2, r.output
    assert "does NOT fit" in r.stdout
    err_line = next(ln for ln in r.stdout.splitlines() if ln.startswith("::error file=") and "collisions" in ln)
    assert f"file={d / 'autotune-run.env'}" in err_line and "fix: set AUTOTUNE_MAP_SIZE=" in err_line


def test_preflight_missing_afl_exit_1(tuned, tmp_path):
    harness = _harness()
    empty = tmp_path / "bin"
    empty.mkdir()
    r = _cli("preflight", str(tuned), str(harness), "--probe-time", "1", env={"PATH": str(empty)})
    assert r.exit_code == 1, r.output
    assert "'afl-fuzz' was not found on PATH" in r.stderr and "apt-get install -y afl++" in r.stderr


@pytest.mark.parametrize("breakage", ["recommendation", "legacy-report", "env"])
def test_preflight_corrupt_tuned_dir_exit_1(tuned, tmp_path, breakage):
    d = tmp_path / "bad"
    shutil.copytree(tuned, d)
    if breakage == "recommendation":  # the document preflight reads
        (d / "recommendation.json").write_text('{"schema_version": 1, "stage": ')
    elif breakage == "legacy-report":  # a directory from before recommendation.json: report.json is read
        (d / "recommendation.json").unlink()
        (d / "report.json").write_text('{"schema_version": 1, "inputs": ')
    else:
        (d / "autotune-run.env").write_text("AUTOTUNE_METRIC=ngram-99\n")
    r = _cli("preflight", str(d), "--demo", "--probe-time", "1")
    assert r.exit_code == 1, r.output
    assert "error:" in r.stderr and "fix:" in r.stderr and "Traceback" not in r.output
