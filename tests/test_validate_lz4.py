"""lz4 (Debian's source package) end to end: probe, tune, validate with the real afl-fuzz for a few
seconds, preflight fits; an undersized configuration makes preflight exit 2 naming the fix.

validate rebuilds lz4 with each compiler through its OSS-Fuzz style build script (lz4's own
Makefile for the library, then the harness: benchmarks/targets/lz4/build.sh), the general route for a
target with a build system. The probe's harness is that script's `autotune cc` build, and the
default variant is AFL++'s default build of it: the builds tests/test_cc_lz4.py checked, shared.
"""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from autotune.cli.main import app

pytestmark = pytest.mark.slow
MAX_SEED_BYTES = 64 * 1024


def _cli(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "160"})


@pytest.fixture(scope="module")
def lz4():
    from targets.libraries import LZ4, TargetUnavailable

    try:
        LZ4.source_dir()
    except TargetUnavailable as exc:
        pytest.skip(f"lz4 source unavailable: {exc}")
    return LZ4


def test_lz4_probe_tune_validate_preflight(lz4, tmp_path, monkeypatch):
    monkeypatch.setenv("LZ4_SRC", str(lz4.source_dir()))  # what build.sh reads, for validate's builds
    harness = lz4.build_harness(cc_kind="autotune")
    corpus = tmp_path / "seeds"
    corpus.mkdir()
    for p in lz4.sample_inputs():
        if p.stat().st_size <= MAX_SEED_BYTES:
            shutil.copyfile(p, corpus / p.name)
    r = _cli("probe", str(harness), "-c", str(corpus), "--probe-time", "8", "-o", str(tmp_path / "probe"))
    assert r.exit_code == 0, r.output
    tuned = tmp_path / "tuned"
    r = _cli("tune", "--probe", str(tmp_path / "probe"), "--out", str(tuned), "--calls", "8", "--confirm", "2", "--confirm-repeats", "2", "--no-plot")
    assert r.exit_code == 0, r.output

    r = _cli("validate", str(tuned), "--build-script", str(lz4.build_script), "--source", str(lz4.harness_source),
             "--cflags", lz4.cflags, "--fuzz-time", "2")
    assert r.exit_code == 0, r.output
    print(r.stdout)  # the side-by-side table, for the record (pytest -s)
    doc = json.loads((tuned / "validate.json").read_text())
    v = {x["name"]: x for x in doc["variants"]}
    ours = v["autotune"]
    measured = ours["index_stats"]["used_key"] if ours["index_stats"] else ours["measured_slots"]
    assert measured == ours["predicted_occupancy"]["used_slots"]
    assert all(x["fuzz"]["execs_done"] > 0 for x in v.values())
    assert doc["target"]["kind"] == "script"
    # one build per variant: validate's autotune build is the probe's harness, its default AFL++'s default build
    assert ours["binary"] == str(harness)
    assert v["aflpp-default"]["binary"] == str(lz4.build_harness(cc_kind="afl"))

    r = _cli("preflight", str(tuned), str(harness), "-c", str(corpus), "--probe-time", "5", "--github")
    assert r.exit_code == 0, r.output
    assert "the configuration fits" in r.stdout

    small = tmp_path / "small"
    shutil.copytree(tuned, small)
    env = small / "autotune-run.env"
    lines = env.read_text().splitlines()
    resize = ("AUTOTUNE_LAYOUT=", "AUTOTUNE_MAP_SIZE=", "AUTOTUNE_INDEX_SIZE=", "AFL_MAP_SIZE=")
    extra = []
    if "AUTOTUNE_METRIC=guard" in lines:  # guard has no map size to undersize: a hashed metric
        resize += ("AUTOTUNE_METRIC=", "AUTOTUNE_OVERFLOW=")
        extra = ["AUTOTUNE_METRIC=edge"]
    keep = [ln for ln in lines if not ln.startswith(resize)]
    env.write_text("\n".join(keep + extra + ["AUTOTUNE_LAYOUT=twolevel", "AUTOTUNE_INDEX_SIZE=1048576",
                                             "AUTOTUNE_MAP_SIZE=64", "AFL_MAP_SIZE=64"]) + "\n")
    r = _cli("preflight", str(small), str(harness), "-c", str(corpus), "--probe-time", "5", "--github")
    assert r.exit_code == 2, r.output
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("::error file=") and "collisions" in ln)
    assert "dense overflow" in line and "fix: set AUTOTUNE_INDEX_SIZE=" in line and "AUTOTUNE_MAP_SIZE=" in line
