"""`autotune tune` end to end: a real probe of the demo target, real replay runs of its harness
through our runtime, every output written; and the command's errors on bad input."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.main import app
from autotune.tune.replay import replay_env
from autotune.mappoint import MapPoint

EXE = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "autotune"


@pytest.fixture(scope="module")
def demo_probe(tmp_path_factory):
    import os

    out = tmp_path_factory.mktemp("probe") / "p"
    r = subprocess.run([str(EXE), "probe", "--demo", "--max-execs", "2000", "--probe-time", "30", "--out", str(out)],
                       capture_output=True, text=True, timeout=180, env=dict(os.environ))  # the run's cache (conftest.py)
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.slow
def test_tune_on_the_demo_probe_writes_every_file(demo_probe, tmp_path):
    out = tmp_path / "tune"
    r = subprocess.run([str(EXE), "tune", "--probe", str(demo_probe), "--calls", "10", "--max-map-bytes",
                        str(1 << 20), "--seed", "3", "--out", str(out), "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc == json.loads((out / "report.json").read_text())  # --json prints the document written
    assert doc["backend"] == "replay" and doc["calls"] == 10
    assert {p.name for p in out.iterdir()} >= {"afl-build.env", "afl-run.env", "autotune-run.env", "report.json",
                                                "report.md", "tune.png"}
    for t in doc["trials"]:
        assert t["measurement"]["source"] == "replay" and t["execs_per_s"] > 0
    # the choice is confirmed by re-measuring the leaders: its figure is the median of its repeats
    conf = doc["confirmation"]
    assert conf["repeats"] == 3 and doc["best"]["config"] == conf["chosen"]
    assert doc["best"]["config"] in [t["config"] for t in doc["trials"]] + [r["config"] for r in conf["rows"]]
    row = next(r for r in conf["rows"] if r["config"] == conf["chosen"])
    assert len(row["repeats_execs_per_s"]) == 3 and row["execs_per_s"] == pytest.approx(
        sorted(row["repeats_execs_per_s"])[1], abs=1e-3)
    assert "## Confirmation" in (out / "report.md").read_text()
    # the env file drives the real harness: replay it with the chosen configuration
    env = subprocess.run(["bash", "-c", f"set -a; . {out}/autotune-run.env; set +a; "
                          "env | grep -E '^(AUTOTUNE|AFL)_' | sort"], capture_output=True, text=True, check=True)
    vars_ = dict(line.split("=", 1) for line in env.stdout.splitlines())
    b = doc["best"]["config"]
    assert vars_["AUTOTUNE_METRIC"] == b["metric"]
    if b["metric"] == "guard":  # one slot per guard: no layout or size to set
        assert "AUTOTUNE_LAYOUT" not in vars_ and b["layout"] == "flat"
    else:
        assert vars_["AUTOTUNE_LAYOUT"] == b["layout"]
    harness = doc["inputs"]["harness"]
    corpus = sorted((demo_probe / "corpus").iterdir())[:5]
    run = subprocess.run([harness, *map(str, corpus)], env={**vars_, "AUTOTUNE_REPLAY_ROUNDS": "1"},
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    line = json.loads(run.stdout.strip().splitlines()[-1])
    assert line["metric"] == b["metric"] and line["layout"] == b["layout"]
    assert line["counter_bits"] == b["width_bits"]


@pytest.mark.slow
def test_tune_bench_backend_and_fixed_metric(demo_probe, tmp_path):
    out = tmp_path / "tune"
    r = CliRunner().invoke(app, ["tune", "--probe", str(demo_probe), "--backend", "bench", "--metric", "ctx",
                                 "--calls", "6", "--max-map-bytes", str(1 << 18), "--no-plot", "--out", str(out),
                                 "--instances", "2"])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "report.json").read_text())
    assert doc["backend"] == "bench" and {t["config"]["metric"] for t in doc["trials"]} == {"ctx"}
    assert doc["settings"]["jobs"] == 2
    assert not (out / "tune.png").exists()


def test_replay_env_names_the_runtime_variables():
    env = replay_env(config=MapPoint("ngram-4", "twolevel", 20, 16), dense=4096, seed=3, rounds=2)
    assert env == {"AUTOTUNE_REPLAY_ROUNDS": "2", "AUTOTUNE_SEED": "3", "AUTOTUNE_METRIC": "ngram-4",
                   "AUTOTUNE_LAYOUT": "twolevel", "AUTOTUNE_COUNTER_BITS": "16", "AUTOTUNE_OVERFLOW": "neverzero", "AUTOTUNE_KEY_HASH": "exact",
                   "AUTOTUNE_INDEX_SIZE": str(1 << 20), "AUTOTUNE_MAP_SIZE": "4096"}


@pytest.mark.parametrize("args, msg", [
    (["--probe", "/nonexistent/probe"], "is not a directory"),
    (["--probe", ".", "--max-collision-rate", "2"], "--max-collision-rate"),
    (["--probe", ".", "--instances", "0"], "--instances"),
    (["--probe", ".", "--max-map-bytes", "1000"], "power of two"),
    (["--probe", ".", "--confirm", "-1"], "--confirm"),
    (["--probe", ".", "--confirm-repeats", "0"], "--confirm-repeats"),
])
def test_tune_bad_input_is_a_clear_error(tmp_path, args, msg):
    r = CliRunner().invoke(app, ["tune", "--out", str(tmp_path / "o"), *args])
    assert r.exit_code == 1, r.output
    assert msg in r.output and "fix:" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o").exists()


def test_tune_on_a_directory_without_probe_json(tmp_path):
    r = CliRunner().invoke(app, ["tune", "--probe", str(tmp_path), "--out", str(tmp_path / "o")])
    assert r.exit_code == 1 and "probe.json" in r.output


@pytest.mark.slow
def test_a_second_run_reuses_the_measurements(demo_probe, tmp_path):
    out = tmp_path / "tune"
    args = ["tune", "--probe", str(demo_probe), "--backend", "bench", "--metric", "edge", "--calls", "5",
            "--max-map-bytes", str(1 << 17), "--no-plot", "--out", str(out), "--confirm", "0"]
    assert CliRunner().invoke(app, args).exit_code == 0
    first = json.loads((out / "report.json").read_text())
    assert json.loads((out / "measurements.json").read_text())["measurements"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0 and "reusing" in r.output
    second = json.loads((out / "report.json").read_text())
    assert second["measured"] == 0 and second["cache_hits"] >= 5
    assert second["best"] == first["best"]
    r = CliRunner().invoke(app, args + ["--fresh"])
    assert r.exit_code == 0 and json.loads((out / "report.json").read_text())["measured"] >= 1
