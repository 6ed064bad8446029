"""benchmarks/bugs/late_screen.py: the portfolio study's late-phase screen (plan-2026-12-01-portfolio-study.md,
amendment of 2026-12-04 20:33) read from trial documents with the fields a real portfolio trial writes:
the late gain from the yardstick curve as pool.py reads it, the test on it, the late bugs paired by trial
index, and an interim reading said as such."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "bugs"))

import late_screen  # noqa: E402


def _trial(root: Path, config: str, index: int, *, at_half: int, end: int, bug_s: float | None = None,
           seconds: int = 1800) -> None:
    d = root / "trials" / config / f"trial-{index}"
    d.mkdir(parents=True)
    curve = [[0.0, 1_000], [720.0, at_half - 10], [900.0, at_half], [1620.0, end - 1], [1800.0, end]]
    doc = {"spec": {"config": config, "index": index, "seconds": seconds},
           "yardstick": {"edges": end, "curve": curve},
           "bugs": {"bugs": {"EXP001": {"reach_s": 0.0, "trigger_s": 0.1},
                             "EXP005": {"reach_s": 1.0, "trigger_s": bug_s}}}}
    (d / "trial.json").write_text(json.dumps(doc))


def _arms(tmp_path: Path, *, b_gain: int, b_bug: float | None, n: int = 8) -> list[dict]:
    for k in range(n):
        _trial(tmp_path, "default", k, at_half=5_000 + k, end=5_000 + k + 40 + k % 3, bug_s=None if k else 1_000.0)
        _trial(tmp_path, "ours", k, at_half=4_950 + k, end=4_950 + k + b_gain + k % 3, bug_s=b_bug)
    return late_screen.trials([f"{tmp_path}:default=A", f"{tmp_path}:ours=B"])


def _screen(rows: list) -> late_screen.Screen:
    return late_screen.screen([d for n, d in rows if n == "A"], [d for n, d in rows if n == "B"],
                              arm="B", baseline="A", horizon_s=1800)


def test_late_edges_read_the_curve_at_half_the_horizon_and_at_its_end():
    doc = {"spec": {"seconds": 1800}, "yardstick": {"edges": 120, "curve": [[0, 1], [880, 50], [960, 60], [1800, 120]]}}
    assert late_screen.late_edges(doc, 1800) == 70  # from the last point at or before 900 s
    # a trial longer than the horizon is read at the horizon's last point (960 s), as pool.py reads it
    assert late_screen.late_edges(doc, 1000) == 59
    assert late_screen.late_edges({"spec": {"seconds": 1800}, "yardstick": {"edges": 5, "curve": []}}, 1800) is None


def test_a_higher_late_gain_passes_and_an_equal_one_does_not(tmp_path):
    s = _screen(_arms(tmp_path / "more", b_gain=90, b_bug=None))
    assert s.median > s.median_baseline and s.p < 0.05 and s.edges_pass and s.passed
    s = _screen(_arms(tmp_path / "same", b_gain=40, b_bug=None))
    assert not s.edges_pass and not s.bugs_pass and not s.passed


def test_late_bugs_count_only_trials_whose_baseline_trial_never_triggered_it(tmp_path):
    # B triggers EXP005 at 1,200 s in all 8 trials; A's trial 0 triggered it (at 1,000 s), the others never
    s = _screen(_arms(tmp_path, b_gain=40, b_bug=1_200.0))
    assert s.late_bugs == [late_screen.LateBug(bug="EXP005", trials=[1, 2, 3, 4, 5, 6, 7])]
    assert s.late_bugs_baseline == {"EXP005": [0]}
    assert s.bugs_pass and s.passed and not s.edges_pass
    # a bug B first triggers before half the horizon is no late bug
    s = _screen(_arms(tmp_path / "early", b_gain=40, b_bug=600.0))
    assert s.late_bugs == [] and not s.passed


def test_the_command_says_interim_while_trials_are_missing_and_writes_its_json(tmp_path):
    _arms(tmp_path, b_gain=90, b_bug=None, n=5)
    out = tmp_path / "screen.json"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bugs" / "late_screen.py"), "--horizon", "1800",
                        "--planned", "10", "--json", str(out), f"{tmp_path}:default=A", f"{tmp_path}:ours=B"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "interim: 5 and 5 of 10 trials" in r.stdout and "screen: PASSED so far" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["screens"][0]["passed"] is True and doc["screens"][0]["late"]["0"] == 90
