"""Depth classes of known bugs (autotune.bugs.depth) and a judgement restricted to one: the rule's
boundaries, the classes of the committed bug table (AFL++ 5.02c's default, 10 x 30 min), the same
classes worked out from a recorded calibration compare, and `--depth mid` on the recorded libxml2 bug
study (benchmarks/bugs/pool.py, and bug_report as compare calls it)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.bugs import survival
from autotune.bugs.depth import BugScope, classify, depths_from, parse_classes
from autotune.cli.main import app
from autotune.compare.compare import CompareResult, bug_report_of
from autotune.errors import AutotuneError

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
TABLE = RESULTS / "bugtable-2026-11-29.json"
LIBXML2_TABLE_RUN = RESULTS / "bugtable-libxml2-2026-11-29" / "libxml2-compare.json.gz"
STUDY = RESULTS / "bugs-study-2026-11-27" / "libxml2-compare.json.gz"


@pytest.fixture(autouse=True)
def few_relabellings(monkeypatch):
    """The combined test's seeded sampling path with 64 relabellings: the scope is under test here."""
    monkeypatch.setattr(survival, "PERMUTATIONS_MAX", 64)


def test_the_rule_at_its_boundaries():
    never = [None] * 10
    assert classify([5.0] * 9 + [None]) == "shallow"  # 9 of 10 within 60 s
    assert classify([60.0] * 10) == "shallow"
    assert classify([5.0] * 8 + [61.0, None]) == "mid"  # 8 within a minute, one later: mid
    assert classify([61.0] * 10) == "mid"  # every trial, but after the first minute
    assert classify([400.0] + never[1:]) == "deep"  # 1 of 10
    assert classify(never) == "deep"
    assert classify([400.0, 500.0] + never[2:]) == "mid"
    assert classify([10.0, None, None]) == "mid"  # 1 of 3 is more than 10 %
    with pytest.raises(ValueError):
        classify([])


def test_classes_parse_and_refuse_what_is_not_one():
    assert parse_classes(["mid"]) == ("mid",)
    assert parse_classes(["deep,mid"]) == ("mid", "deep")
    with pytest.raises(AutotuneError) as e:
        parse_classes(["middle"])
    assert "shallow, mid, deep" in e.value.fix


def test_the_committed_table_carries_a_class_per_measured_bug():
    depths = depths_from(TABLE)
    assert len(depths) == 27
    assert sorted(b for b, c in depths.items() if c == "mid") == ["PNG002", "PNG005", "XML004", "XML011"]
    assert depths["XML002"] == "shallow" and depths["XML006"] == "deep" and depths["SQL004"] == "shallow"
    doc = json.loads(TABLE.read_text())
    assert doc["totals"]["depth"]["mid"] == doc["totals"]["mid_depth"]


def test_a_calibration_compare_gives_the_tables_classes():
    """The table's libxml2 row came from this compare: worked out from its trials, the same classes."""
    from_run = depths_from(LIBXML2_TABLE_RUN)
    table = depths_from(TABLE)
    assert from_run == {b: c for b, c in table.items() if b in from_run}
    assert from_run["XML011"] == "mid" and from_run["XML009"] == "shallow"


def test_depths_refuses_a_file_that_has_no_classes(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"rows": [{"bug": "A"}]}')
    with pytest.raises(AutotuneError, match="no depth class"):
        depths_from(bad)
    bad.write_text("not json")
    with pytest.raises(AutotuneError, match="cannot read it as JSON"):
        depths_from(bad)


def test_judged_on_mid_bugs_the_recorded_study_keeps_only_them():
    """The libxml2 bug study (default vs ngram-8, 10 x 20 min): judged on the table's mid class only
    XML004 and XML011 enter the figures and the combined test; the rest are named as left out."""
    res = CompareResult.from_dict(json.loads(gzip.decompress(STUDY.read_bytes())))
    whole = bug_report_of(res.configs, res.seconds)
    mid = bug_report_of(res.configs, res.seconds, BugScope.read(["mid"], TABLE))
    assert set(whole.bugs) > {"XML004", "XML011"}
    assert mid.bugs == ("XML004", "XML011")
    assert {t.bug for t in mid.logrank} == {"XML004", "XML011"}
    comb = next(t for t in mid.combined if t.event == "trigger")
    assert comb.bugs <= 2
    assert "judged on the mid bugs" in mid.scope and "XML002 (shallow)" in mid.scope and "left out" in mid.scope
    # bugs triggered per trial count the kept bugs only
    assert max(mid.per_trial["default"].values) <= 2 < max(whole.per_trial["default"].values)
    again = survival.BugReport.from_dict(json.loads(json.dumps(mid.to_dict())))
    assert again.scope == mid.scope
    assert "scope" not in whole.to_dict()  # unchanged for a judgement on every bug


def test_pool_takes_a_depth_class(tmp_path):
    d = tmp_path / "study"
    d.mkdir()
    (d / "compare.json").write_bytes(gzip.decompress(STUDY.read_bytes()))
    out = tmp_path / "pooled"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bugs" / "pool.py"), "--horizon", "1200",
                           "--depth", "mid", "--depths", str(TABLE), "--out", str(out),
                           f"{d}:default", f"{d}:ngram-8"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "pooled.json").read_text())
    assert doc["bugs"]["bugs"] == ["XML004", "XML011"]
    assert "**Scope:** judged on the mid bugs" in (out / "pooled.md").read_text()
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bugs" / "pool.py"), "--horizon", "1200",
                          "--depth", "mid", "--out", str(out), f"{d}:default", f"{d}:ngram-8"],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "--depths" in bad.stderr


@pytest.mark.parametrize("args, says", [
    (["--depth", "mid", "--depths", str(TABLE)], "go together"),  # no --yardstick bugs
    (["--yardstick", "bugs", "--depth", "mid"], "go together"),  # no --depths
    (["--yardstick", "bugs", "--depth", "middle", "--depths", str(TABLE)], "not a depth class"),
])
def test_compare_refuses_a_scope_it_cannot_apply(args, says):
    res = CliRunner().invoke(app, ["compare", "--demo", *args])
    assert res.exit_code != 0
    assert says in res.output and "Traceback" not in res.output
