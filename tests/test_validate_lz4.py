"""lz4 (Debian's source package) end to end: probe, tune, validate with the real afl-fuzz for a few
seconds, preflight fits; an undersized configuration makes preflight exit 2 naming the fix.

validate rebuilds lz4 with each compiler through an OSS-Fuzz style build script (lz4's own
Makefile for the library, then the harness), the general route for a target with a build system.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.main import app

pytestmark = pytest.mark.slow
MAX_SEED_BYTES = 64 * 1024
CFLAGS = "-O1 -g"  # every build of the test (probe harness and validate's three): -O1 compiles lz4 faster


def _cli(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "160"})


@pytest.fixture(scope="module")
def lz4():
    from tests.targets import lz4 as target

    try:
        target.lz4_source_dir()
    except target.TargetUnavailable as exc:
        pytest.skip(f"lz4 source unavailable: {exc}")
    return target


def _build_script(lz4, path: Path) -> Path:
    path.write_text(textwrap.dedent(f"""\
        # OSS-Fuzz convention: $CC $CFLAGS $LIB_FUZZING_ENGINE, harness at $OUT/fuzzer
        cp -r {lz4.lz4_source_dir()} "$WORK/lz4"
        make -s -j2 -C "$WORK/lz4/lib" liblz4.a CC="$CC"
        $CC $CFLAGS $LIB_FUZZING_ENGINE -I "$WORK/lz4/lib" {lz4.HARNESS_SOURCE} "$WORK/lz4/lib/liblz4.a" -o "$OUT/fuzzer"
        """))
    return path


def test_lz4_probe_tune_validate_preflight(lz4, tmp_path):
    from autotune.afl import base_env
    from autotune.preflight.target import build, make_spec

    script = _build_script(lz4, tmp_path / "build.sh")
    # the probe's harness is validate's own `autotune cc` build (cached by digest, so validate reuses it)
    spec = make_spec(demo=False, sources=[], cflags=CFLAGS, ldflags="", cxx=False, script=script)
    harness = build(spec=spec, cc_kind="autotune", build_vars={}, env=base_env())
    corpus = tmp_path / "seeds"
    corpus.mkdir()
    for p in lz4.lz4_sample_inputs():
        if p.stat().st_size <= MAX_SEED_BYTES:
            shutil.copyfile(p, corpus / p.name)
    r = _cli("probe", str(harness), "-c", str(corpus), "--time", "8", "-o", str(tmp_path / "probe"))
    assert r.exit_code == 0, r.output
    tuned = tmp_path / "tuned"
    r = _cli("tune", "--probe", str(tmp_path / "probe"), "--out", str(tuned), "--calls", "12", "--no-plot")
    assert r.exit_code == 0, r.output

    r = _cli("validate", str(tuned), "--build-script", str(script), "--cflags", CFLAGS, "--time", "2")
    assert r.exit_code == 0, r.output
    print(r.stdout)  # the side-by-side table, for the record (pytest -s)
    doc = json.loads((tuned / "validate.json").read_text())
    v = {x["name"]: x for x in doc["variants"]}
    ours = v["autotune"]
    measured = ours["index_stats"]["used_key"] if ours["index_stats"] else ours["measured_slots"]
    assert measured == ours["predicted_occupancy"]["used_slots"]
    assert all(x["fuzz"]["execs_done"] > 0 for x in v.values())
    assert doc["target"]["kind"] == "script"

    r = _cli("preflight", str(tuned), str(harness), "-c", str(corpus), "--budget", "5", "--github")
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
    r = _cli("preflight", str(small), str(harness), "-c", str(corpus), "--budget", "5", "--github")
    assert r.exit_code == 2, r.output
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("::error file=") and "collisions" in ln)
    assert "dense overflow" in line and "fix: set AUTOTUNE_INDEX_SIZE=" in line and "AUTOTUNE_MAP_SIZE=" in line
