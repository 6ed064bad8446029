"""`autotune compare --yardstick bugs`: the optional bugs blocks of compare.json and trial.json read
back (and documents without them still do), and the refusals before any afl-fuzz runs (a target
without canaries, a seed that triggers a bug), with the real afl-clang-fast."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autotune.bugs.attribution import BugTimes, TrialBugs
from autotune.compare import CompareResult
from autotune.demo import bad_inputs_dir, seed_dir
from autotune.errors import AutotuneError
from autotune.target import demo_spec, make_spec
from autotune.trials import TrialResult

needs_afl = pytest.mark.skipif(shutil.which("afl-clang-fast") is None or shutil.which("afl-fuzz") is None,
                               reason="AFL++ is not installed")


def _trial_doc(bugs: TrialBugs | None) -> dict:
    from autotune.afl_output import PlotData
    from autotune.trials.trial import TrialSpec

    spec = TrialSpec(config="default", index=0, binary="/b", env={"AUTOTUNE_CANARY_FATAL": "1"}, seeds="/s",
                     seconds=60, rng_seed=0, out_dir="/o")
    return TrialResult(spec=spec, core=None, command=("afl-fuzz",), applied_env={}, stats={"execs_per_sec": 1.0},
                       plot=PlotData(columns=("relative_time",), rows=()), kept={"queue": 1}, wall_s=1.0,
                       bugs=bugs).to_dict()


def test_trial_json_bugs_block_is_optional():
    tb = TrialBugs(seconds=60, bugs={"DEMO001": BugTimes(0.0, 41.5)}, inputs=3, crashes=1, crashes_without_bug=0,
                   late_inputs=0)
    with_bugs = _trial_doc(tb)
    assert TrialResult.from_dict(with_bugs).bugs == tb
    without = _trial_doc(None)
    assert "bugs" not in without and TrialResult.from_dict(without).bugs is None


@needs_afl
def test_a_target_without_canaries_is_refused_before_afl_fuzz(tmp_path):
    from autotune.compare.compare import run_compare
    from autotune.compare.config import parse_configs
    from autotune.compare.options import CompareSettings, MeasureSettings

    src = tmp_path / "plain.c"
    src.write_text("#include <stddef.h>\n#include <stdint.h>\n"
                   "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n")
    corpus = tmp_path / "seeds"
    corpus.mkdir()
    (corpus / "a").write_bytes(b"x")
    with pytest.raises(AutotuneError, match="no known-bug canaries") as info:
        run_compare(spec=make_spec(sources=[src]), corpus=corpus, configs=parse_configs(["default"]),
                    out_dir=tmp_path / "out", settings=CompareSettings(trials=1, seconds=1, measure=MeasureSettings(yardstick="bugs"), host=False))
    assert "AUTOTUNE_BUG" in info.value.fix and "--yardstick pcguard" in info.value.fix
    assert not (tmp_path / "out" / "trials").exists()


@needs_afl
def test_a_seed_that_triggers_a_bug_is_refused_before_afl_fuzz(tmp_path):
    from autotune.compare.compare import run_compare
    from autotune.compare.config import parse_configs
    from autotune.compare.options import CompareSettings, MeasureSettings

    corpus = tmp_path / "seeds"
    shutil.copytree(seed_dir(), corpus)
    shutil.copy(bad_inputs_dir() / "canary-demo001", corpus / "zz-bug")
    with pytest.raises(AutotuneError, match=r"zz-bug \(DEMO001\)") as info:
        run_compare(spec=demo_spec(), corpus=corpus, configs=parse_configs(["default"]), out_dir=tmp_path / "out",
                    settings=CompareSettings(trials=1, seconds=1, measure=MeasureSettings(yardstick="bugs"), host=False))
    assert "take those seeds out" in info.value.fix
    assert not (tmp_path / "out" / "trials").exists()


def test_compare_json_without_a_bugs_block_reads_back(tmp_path):
    """A compare.json of before --yardstick bugs (no "bugs" key) is read as it was."""
    doc = {"schema_version": 1, "target": demo_spec().to_dict(), "corpus": "/c", "seeds": 1, "seconds": 5,
           "trials": 1, "jobs": 1, "rng_seed": 0,
           "yardstick": {"kind": "aflpp-pcguard", "binary": "/b", "sha256": "0" * 64}, "configs": [], "pairs": [],
           "out_dir": str(tmp_path), "wall_s": 1.0}
    res = CompareResult.from_dict(doc)
    assert res.bugs is None and "bugs" not in res.to_dict()


@pytest.mark.slow
@needs_afl
def test_compare_demo_by_bugs_end_to_end(tmp_path):
    """The real afl-fuzz, 1 trial x 5 s of AFL++'s default on the demo with --yardstick bugs: the bugs
    blocks, bugs.png, --json equal to compare.json, then --resume keeps the trial and --remeasure by
    bugs gives the same time-to-bug from the same kept inputs."""
    import json

    from typer.testing import CliRunner

    from autotune.cli.main import app

    out = tmp_path / "out"
    args = ["compare", "--demo", "--config", "default", "--trials", "1", "--fuzz-time", "5", "--jobs", "1",
            "--yardstick", "bugs", "--out", str(out), "--json"]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc == json.loads((out / "compare.json").read_text())
    res = CompareResult.from_dict(doc)
    assert res.to_dict() == doc and res.bugs is not None and (out / "bugs.png").stat().st_size > 0
    (trial,) = res.config("default").trials
    assert trial.spec.env["AUTOTUNE_CANARY_FATAL"] == "1" and trial.yardstick.edges > 0
    # the seed 11-steps runs the step machine: DEMO001 is reached at time 0 in the trial
    assert trial.bugs.bugs["DEMO001"].reach_s == 0.0
    cell = res.bugs.cell("default", "DEMO001", "reach")
    assert (cell.events, cell.rmst_s, cell.median_s) == (1, 0.0, 0.0)
    assert "## Bugs (known-bug canaries)" in (out / "compare.md").read_text()
    again = CliRunner().invoke(app, args[:-1] + ["--resume"], env={"COLUMNS": "160"})
    assert again.exit_code == 0, again.output
    resumed = CompareResult.from_dict(json.loads((out / "compare.json").read_text()))
    assert resumed.config("default").trials[0].bugs == trial.bugs and resumed.bugs.survival == res.bugs.survival
    rm = CliRunner().invoke(app, ["compare", "--remeasure", str(out), "--yardstick", "bugs", "--out",
                                  str(tmp_path / "rm"), "--json"], env={"COLUMNS": "160"})
    assert rm.exit_code == 0, rm.output
    remeasured = CompareResult.from_dict(json.loads(rm.stdout))
    assert remeasured.config("default").trials[0].bugs.bugs == trial.bugs.bugs
    assert remeasured.remeasure["by"] == "bugs"
    assert not any("upper bounds" in n for n in remeasured.notes)  # the campaign ran with fatal canaries
    # the sweep's figures are those of a replay of every kept input on its own (benchmarks/bugs/check_sweep.py)
    check_sweep = _check_sweep()
    tdir = out / "trials" / "default" / "trial-0"
    assert check_sweep.main([str(tdir), "--json", str(tmp_path / "check.json")]) == 0
    (row,) = json.loads((tmp_path / "check.json").read_text())["trials"]
    assert row["differences"] == [] and row["inputs"] == trial.bugs.inputs and "DEMO001" in row["reached"]


def _check_sweep():
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bugs" / "check_sweep.py"
    spec = importlib.util.spec_from_file_location("check_sweep", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_check_sweep_refuses_what_is_not_a_finished_bugs_trial(tmp_path, capsys):
    import json

    check_sweep = _check_sweep()
    assert check_sweep.main([str(tmp_path)]) == 2
    assert "holds no trial.json" in capsys.readouterr().err
    (tmp_path / "trial.json").write_text(json.dumps(_trial_doc(None)))
    assert check_sweep.main([str(tmp_path)]) == 2
    assert "has no bug figures" in capsys.readouterr().err


def test_the_race_boards_trial_line_says_what_a_trial_triggered():
    """Judged by bugs, `autotune run` / `race` print each trial's triggered bugs with their times."""
    from autotune.cli.board import trial_line

    both = TrialBugs(seconds=60, bugs={"B": BugTimes(0.0, 41.5), "A": BugTimes(0.0, 3.25), "C": BugTimes(1.0, None)},
                     inputs=3, crashes=2, crashes_without_bug=0, late_inputs=0)
    line = trial_line(TrialResult.from_dict(_trial_doc(both)))
    assert line.endswith("queue 1, triggered A at 3.2 s, B at 41.5 s"), line
    none = TrialBugs(seconds=60, bugs={"C": BugTimes(1.0, None)}, inputs=3, crashes=0, crashes_without_bug=0,
                     late_inputs=0)
    assert trial_line(TrialResult.from_dict(_trial_doc(none))).endswith(", no known bug triggered")
    assert trial_line(TrialResult.from_dict(_trial_doc(None))).endswith("queue 1")  # judged by edges
