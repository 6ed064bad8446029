"""The main job end to end: `autotune run --demo` profiles, probes, tunes and emits loadable env files."""

import json
import subprocess

import pytest
from typer.testing import CliRunner

from autotune.cli.main import app

pytestmark = pytest.mark.slow


def test_run_demo_writes_every_stage_and_loadable_env_files(tmp_path):
    out = tmp_path / "out"
    # a tiny race: guard alone against AFL++'s default, one 5 s trial each (the race has its own tests)
    res = CliRunner().invoke(app, ["run", "--demo", "--probe-time", "6", "--calls", "6", "--out", str(out), "--json",
                                   "--metrics", "guard", "--repeats", "1", "--budget", "12", "--min-trial", "5"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["schema_version"] == 1
    assert doc["race_dir"] == str(out.resolve() / "race") and (out / "race" / "race.json").is_file()
    race = json.loads((out / "race" / "race.json").read_text())
    assert race["race"]["decision"] == doc["race"]
    assert {c["name"] for c in race["race"]["contestants"]} == {"aflpp-default", "guard"}
    files = {"afl-build.env", "afl-run.env"} if doc["race"]["is_default"] else {"autotune-build.env", "autotune-run.env"}
    assert files <= {p.name for p in (out / "race").iterdir()}
    assert (out / "host-profile.toml").is_file()
    assert (out / "probe" / "probe.json").is_file()
    for name in ("autotune-run.env", "afl-build.env", "afl-run.env", "report.md", "report.json"):
        assert (out / "tune" / name).is_file(), name
    assert set(doc["env_files"]) >= {"autotune-run.env", "afl-build.env", "afl-run.env"}
    # the env files load in a real shell and set what the report chose
    env = subprocess.run(["bash", "-c", f"set -a; . {out}/tune/autotune-run.env; set +a; env"],
                         capture_output=True, text=True, check=True).stdout
    assert f"AUTOTUNE_METRIC={doc['best']['metric']}" in env
    if doc["best"]["metric"] == "guard":  # one slot per guard: no layout to set
        assert "AUTOTUNE_LAYOUT=" not in env
    else:
        assert f"AUTOTUNE_LAYOUT={doc['best']['layout']}" in env


def test_run_needs_a_target(tmp_path):
    res = CliRunner().invoke(app, ["run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 1
    assert "give exactly one target" in res.output
    assert "Traceback" not in res.output
