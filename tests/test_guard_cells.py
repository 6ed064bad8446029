"""benchmarks/guard_cells.py: the guard cells' figures from a compare directory (paired execs/s
ratios, own-map against yardstick edges, static points), its clear errors, and end to end on a real
`autotune compare --demo` of AFL++'s default against our guard kind: the instructions per execution
of both binaries under callgrind on the same queue inputs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "guard_cells.py"
GUARD_ENV = ROOT / "benchmarks" / "results" / "compare-2026-11-26-guard-kind.env"

sys.path.insert(0, str(ROOT / "benchmarks"))
import guard_cells  # noqa: E402


def _trial(root: Path, config: str, k: int, eps: float, own: int, yard: int, points: int) -> None:
    d = root / "trials" / config / f"trial-{k}"
    d.mkdir(parents=True)
    doc = {"spec": {"config": config, "index": k, "binary": f"/bin/{config}", "env": {}},
           "stats": {"execs_per_sec": eps, "edges_found": own, "total_edges": points},
           "yardstick": {"edges": yard}}
    (d / "trial.json").write_text(json.dumps(doc))


def test_pairs_ratios_and_static_points(tmp_path, capsys):
    for k, (d, g) in enumerate([(1000.0, 1100.0), (2000.0, 1800.0), (1000.0, 1300.0)]):
        _trial(tmp_path, "default", k, d, 500 + k, 500 + k, 900)
        _trial(tmp_path, "guard", k, g, 510 + k, 500 + k, 905)
    _trial(tmp_path, "default", 3, 1000.0, 1, 1, 900)  # a pair cut short: guard's trial 3 never ran
    assert guard_cells.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = [r for r in out.splitlines() if r.startswith("| ") and r[2].isdigit()]
    assert [r.split(" | ")[3] for r in rows] == ["1.100", "0.900", "1.300"]  # pair 3 left out
    assert "median paired ratio 1.100;" in out
    assert "static points (total_edges): default [900], guard [905]" in out
    assert "own/yardstick median: default 1.000, guard 1.020" in out  # 510/500, 511/501, 512/502


@pytest.mark.parametrize("make, needle", [
    (lambda p: p / "missing", "no such directory"),
    (lambda p: p, "no trial of both 'default' and 'guard'"),
])
def test_a_directory_that_is_not_a_guard_cell_is_a_clear_error(tmp_path, make, needle):
    r = subprocess.run([sys.executable, str(SCRIPT), str(make(tmp_path))], capture_output=True, text=True)
    assert r.returncode != 0 and needle in r.stderr and "Traceback" not in r.stderr


def test_queue_inputs_are_evenly_spaced_and_a_missing_queue_is_named(tmp_path):
    q = tmp_path / "afl-out" / "default" / "queue"
    q.mkdir(parents=True)
    for i in range(10):
        (q / f"id:{i:06d},orig:x").write_bytes(b"%d" % i)
    (q / ".state").mkdir()
    assert [p.name[:9] for p in guard_cells.queue_inputs(tmp_path, 5)] == [f"id:{i:06d}" for i in (0, 2, 4, 6, 8)]
    with pytest.raises(SystemExit, match="no afl-fuzz queue kept"):
        guard_cells.queue_inputs(tmp_path / "elsewhere", 5)


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("afl-fuzz") and shutil.which("afl-clang-fast") and shutil.which("valgrind")),
                    reason="needs afl++ and valgrind")
def test_callgrind_counts_both_real_builds_on_the_same_queue(tmp_path):
    """One 5 s pair of the real compare on the demo (AFL++'s PCGUARD build against our guard kind),
    then both binaries under callgrind on 4 inputs of the default's queue: every count positive, ours
    run twice an input in replay mode with its per-execution work counted, the ratio the two per-execution
    figures' quotient."""
    from typer.testing import CliRunner

    from autotune.cli.main import app

    out = tmp_path / "cell"
    c = CliRunner().invoke(app, ["compare", "--demo", "--config", "default", "--config", f"guard={GUARD_ENV}",
                                 "--trials", "1", "--fuzz-time", "5", "--jobs", "2", "--seed", "11", "--out", str(out)],
                           env={"COLUMNS": "160"})
    assert c.exit_code == 0, c.output
    work = tmp_path / "cg"
    r = subprocess.run([sys.executable, str(SCRIPT), str(out), "--callgrind", "4", "--work", str(work)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads((work / "callgrind.json").read_text())
    d, g = doc["builds"]["default"], doc["builds"]["guard"]
    assert doc["inputs"] == 4 and d["calls"] == 4 and g["calls"] == 8  # our replay: a warm-up and a timed pass
    assert d["runtime_per_exec_instructions"] == {"cov_exec_begin": 0, "cov_exec_end": 0}
    assert g["runtime_per_exec_instructions"]["cov_exec_end"] > 0 and g["env"] == {"AUTOTUNE_METRIC": "guard"}
    assert d["per_exec"] > 0 and doc["ratio"] == pytest.approx(g["per_exec"] / d["per_exec"])
    assert f"guard / default: {doc['ratio']:.3f} (4 inputs)" in r.stdout


# ---- benchmarks/trial_callgrind.py: the binaries a campaign ran, named by trial and instance --------

import trial_callgrind  # noqa: E402


def _ensemble(path: Path) -> Path:
    path.mkdir(parents=True)
    spec = {"binary": "/b/main", "env": {"AUTOTUNE_CANARY_FATAL": "1"},
            "members": [{"name": "main", "binary": "/b/main", "env": {}},
                        {"name": "s1", "binary": "/b/ours", "env": {"AUTOTUNE_METRIC": "ctx-2", "AFL_DISABLE_TRIM": "1"}}]}
    (path / "trial.json").write_text(json.dumps({"spec": spec}))
    return path


def test_a_trial_s_binary_and_an_instance_s_variables(tmp_path):
    t = _ensemble(tmp_path / "trial-0")
    assert trial_callgrind.trial_binary(str(t)) == ("/b/main", {"AUTOTUNE_CANARY_FATAL": "1"})
    assert trial_callgrind.trial_binary(f"{t / 'trial.json'}@s1") == (
        "/b/ours", {"AUTOTUNE_METRIC": "ctx-2", "AFL_DISABLE_TRIM": "1"})
    with pytest.raises(SystemExit, match=r"no instance 's2' in that trial \(it has: main, s1\)"):
        trial_callgrind.trial_binary(f"{t}@s2")
    with pytest.raises(SystemExit, match="no trial.json there"):
        trial_callgrind.trial_binary(str(tmp_path / "nothing"))


def test_inputs_from_a_plain_folder_and_the_command_s_errors(tmp_path):
    for i in range(4):
        (tmp_path / f"f{i}").write_bytes(b"x")
    assert [p.name for p in trial_callgrind.pick_inputs(tmp_path, 2)] == ["f0", "f2"]
    with pytest.raises(SystemExit, match="no input files"):
        trial_callgrind.pick_inputs(tmp_path / "empty-or-missing", 2)
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "trial_callgrind.py"), "--inputs", str(tmp_path),
                        "--work", str(tmp_path / "w"), "no-equals-sign"], capture_output=True, text=True)
    assert r.returncode != 0 and "give NAME=TRIAL[@MEMBER]" in r.stderr and "Traceback" not in r.stderr
