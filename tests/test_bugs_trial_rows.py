"""benchmarks/bugs/trial_rows.py: a study's per-trial rows from `autotune compare --yardstick bugs` trial
documents (the fields a real portfolio trial writes: autotune.trials.ensemble), in trial order with
the arms interleaved, and a clear error for an arm that is not there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "bugs"))

import trial_rows  # noqa: E402


def _trial(root: Path, config: str, index: int, *, eps: tuple[float, float], xml011: float | None) -> None:
    d = root / "trials" / config / f"trial-{index}"
    d.mkdir(parents=True)
    doc = {"spec": {"config": config, "index": index},
           "stats": {"members": {"main": {"execs_per_sec": eps[0], "corpus_count": 100 + index},
                                 "s1": {"execs_per_sec": eps[1], "corpus_count": 200 + index}}},
           "yardstick": {"edges": 9_000 + index, "curve": [[0.0, 3_000], [1080.0, 8_900], [1260.0, 8_950], [1800.0, 9_000 + index]],
                         "by_instance": {"main": {"edges": 8_000}, "s1": {"edges": 7_000}}},
           "bugs": {"crashes": 1_234, "crashes_without_bug": 2,
                    "bugs": {"XML002": {"reach_s": 0.1, "trigger_s": 0.3}, "XML011": {"reach_s": 0.0, "trigger_s": xml011},
                             "XML010": {"reach_s": 100.0, "trigger_s": None}, "XML006": {"reach_s": None, "trigger_s": None}}}}
    (d / "trial.json").write_text(json.dumps(doc))
    if index == 0:  # a trial that did not finish: no trial.json
        (root / "trials" / config / "trial-9").mkdir()


def test_rows_interleave_the_arms_by_trial_and_show_each_bug_s_time(tmp_path):
    _trial(tmp_path / "ac", "default", 0, eps=(6_000, 7_000), xml011=399.1)
    _trial(tmp_path / "ac", "default", 1, eps=(6_100, 7_100), xml011=None)
    _trial(tmp_path / "b", "ours", 0, eps=(6_200, 5_000), xml011=1_500.0)
    text = trial_rows.markdown(trial_rows.trials([f"{tmp_path}/ac:default=A", f"{tmp_path}/b:ours=B"]))
    rows = [r for r in text.splitlines() if r.startswith("| A") or r.startswith("| B")]
    assert [r.split(" | ")[:2] for r in rows] == [["| A", "0"], ["| B", "0"], ["| A", "1"]]
    assert rows[0].split(" | ")[2:9] == ["6,000 + 7,000 = 13,000", "100 / 200", "9,000", "8,000 / 7,000",
                                         "+100 since 18 min", "1,234 (2)", "0.3 s"]
    assert "+101 since 18 min" in rows[2]  # from the curve's last point at or before two thirds of the trial
    assert "399.1 s" in rows[0] and "25.0 min" in rows[1]  # XML011's column: seconds, minutes past 10
    assert rows[2].split(" | ")[9] == ""  # never triggered: blank
    assert rows[0].endswith("| XML010 |")  # reached, never triggered; XML006 was never reached
    assert "XML006" not in text.splitlines()[0]


def test_an_arm_that_is_not_there_is_a_clear_error(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bugs" / "trial_rows.py"), f"{tmp_path}:default=A"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bugs" / "trial_rows.py"), "no-colon"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "DIR:CONFIG" in r.stderr
