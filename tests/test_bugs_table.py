"""benchmarks/bugs/table.py on recorded compares (libtiff's bug table run, 10 x 30 min, and the bug
study's libxml2 arms, 10 x 20 min, both under AFL++ 5.02c): the table's cells are the compare's own
survival figures, every bug of the manifest is listed, and bad runs are refused with the fix."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "bugs"))

import buglibs  # noqa: E402
import table  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
LIBTIFF = RESULTS / "bugtable-libtiff-2026-11-28" / "libtiff-compare.json.gz"
LIBXML2 = RESULTS / "bugs-study-2026-11-27" / "libxml2-compare.json.gz"


@pytest.fixture(scope="module")
def libs() -> dict:
    return buglibs.load_manifest()


@pytest.fixture(scope="module")
def libtiff_doc(libs) -> dict:
    return table.table([table.load_run(f"libtiff={LIBTIFF}", libs)], libs, horizon_s=1800.0)


def test_cells_are_the_compares_own_survival(libtiff_doc):
    recorded = json.loads(gzip.decompress(LIBTIFF.read_bytes()))["bugs"]
    own = {(s["bug"], s["event"]): s for s in recorded["survival"] if s["config"] == "default"}
    rows = [r for r in libtiff_doc["rows"] if r["library"] == "libtiff"]
    assert [r["bug"] for r in rows] == ["TIF001", "TIF002", "TIF003", "TIF004", "TIF005", "TIF006"]
    for r in rows:
        for event in ("reach", "trigger"):
            s = own[(r["bug"], event)]
            assert (r[event]["trials"], r[event]["events"]) == (s["trials"], s["events"])
            if s["median_s"] is None:
                assert r[event]["median_s"] is None
            else:
                assert r[event]["median_s"] == pytest.approx(s["median_s"])
            assert r[event]["rmst_s"] == pytest.approx(s["rmst_s"])
    tif006 = next(r for r in rows if r["bug"] == "TIF006")
    assert tif006["reach"]["events"] == 10 and tif006["trigger"]["events"] == 0


def test_every_bug_of_the_manifest_is_listed(libs, libtiff_doc):
    assert len(libtiff_doc["rows"]) == sum(len(lib.bugs) for lib in libs.values())
    measured = {lib["library"]: lib["measured"] for lib in libtiff_doc["libraries"]}
    assert measured == {name: name == "libtiff" for name in libs}
    text = table.markdown(libtiff_doc)
    assert "| TIF003 | CVE-2022-0908 | CVE-2022-0908.patch" in text
    assert "| XML009 |" in text and "not measured" in text
    totals = libtiff_doc["totals"]
    assert (totals["measured"], totals["reached"], totals["triggered"]) == (6, 6, 5)
    assert totals["mid_depth"] == []  # every libtiff bug triggers in every trial, medians under 15 s


def test_a_shorter_horizon_censors_later_events(libs):
    run = table.load_run(f"libxml2={LIBXML2}", libs)
    full = table.table([run], libs, horizon_s=1200.0)
    early = table.table([run], libs, horizon_s=10.0)
    for a, b in zip(full["rows"], early["rows"]):
        if "trigger" in a:
            assert b["trigger"]["events"] <= a["trigger"]["events"]
            assert b["trigger"]["rmst_s"] <= 10.0
    assert early["totals"]["triggered"] < full["totals"]["triggered"]
    with pytest.raises(table.TableError, match="shorter than the horizon"):
        table.table([run], libs, horizon_s=1800.0)


def test_per_trial_rows_are_the_trials_own_times(libs, libtiff_doc):
    recorded = json.loads(gzip.decompress(LIBTIFF.read_bytes()))
    trials = recorded["configs"][0]["trials"]
    lib = next(x for x in libtiff_doc["libraries"] if x["library"] == "libtiff")
    rows = lib["per_trial"]
    assert [r["index"] for r in rows] == [t["spec"]["index"] for t in trials] == list(range(10))
    for r, t in zip(rows, trials):
        assert r["yardstick_edges"] == t["yardstick"]["edges"]
        assert r["execs_per_s"] == pytest.approx(float(t["stats"]["execs_per_sec"]))
        assert (r["crashes"], r["crashes_without_bug"]) == (t["bugs"]["crashes"], t["bugs"]["crashes_without_bug"])
        for bug, times in r["bugs"].items():
            assert times == {k: t["bugs"]["bugs"].get(bug, {}).get(k) for k in ("reach_s", "trigger_s")}
    text = table.markdown(libtiff_doc)
    assert "### libtiff, per trial (times to trigger)" in text
    assert text.count("not triggered |") == 10  # TIF006: reached in every trial, never triggered
    assert lib["crashes"] == sum(t["bugs"]["crashes"] for t in trials) > 0
    assert f"| none of {lib['crashes']:,} |" in text  # every libtiff crash triggered a canary
    assert table._stray({"crashes": 1590, "crashes_without_bug": 28, "trials_with_crashes_without_bug": 2,
                         "trials": 10}) == "28 of 1,590 (in 2 of 10 trials)"
    # read at 10 s: a later trigger is left out, and edges are the curve's by then
    early = next(x for x in table.table([table.load_run(f"libtiff={LIBTIFF}", libs)], libs,
                                        horizon_s=10.0)["libraries"] if x["library"] == "libtiff")["per_trial"]
    for r, e in zip(rows, early):
        assert e["yardstick_edges"] <= r["yardstick_edges"]
        for bug, times in e["bugs"].items():
            full = r["bugs"][bug]["trigger_s"]
            assert times["trigger_s"] == (full if full is not None and full <= 10.0 else None)


def test_a_named_configuration(libs):
    run = table.load_run(f"libxml2={LIBXML2}:ngram-8", libs)
    assert run.config == "ngram-8"
    with pytest.raises(table.TableError, match="no configuration 'rec'"):
        table.load_run(f"libxml2={LIBXML2}:rec", libs)


@pytest.mark.parametrize("text, message", [
    ("libtiff", "expected LIB=PATH"),
    ("libfoo=/nonexistent", "no library 'libfoo'"),
    ("libtiff=/nonexistent/compare", "no such file"),
])
def test_bad_runs_are_refused(libs, text, message):
    with pytest.raises(table.TableError, match=message):
        table.load_run(text, libs)


def test_a_run_of_another_benchmark_is_refused(libs):
    # libxml2's trials read as libtiff's: their bugs are not libtiff's
    with pytest.raises(table.TableError, match="bugs.toml does not have"):
        table.table([table.load_run(f"libtiff={LIBXML2}", libs)], libs, horizon_s=1200.0)


def test_cli_writes_both_documents_and_fails_cleanly(tmp_path):
    out = tmp_path / "table.md"
    script = ROOT / "benchmarks" / "bugs" / "table.py"
    ok = subprocess.run([sys.executable, str(script), "--out", str(out), f"libtiff={LIBTIFF}"],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert out.read_text().startswith("# The bug table: ")
    assert json.loads(out.with_suffix(".json").read_text())["totals"]["triggered"] == 5
    bad = subprocess.run([sys.executable, str(script), "--horizon", "0", f"libtiff={LIBTIFF}"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert "error: --horizon 0: must be positive" in bad.stderr and "Traceback" not in bad.stderr


def test_bugs_added_after_a_dated_run_are_not_measured_by_it(libs):
    """sqlite3's row ran on 2026-11-29 with SQL001-005; SQL006-013 joined on 2026-12-01: dated, the run
    lists them as not measured instead of as never reached (undated, it reads every bug as measured)."""
    sqlite = RESULTS / "bugtable-sqlite3-2026-11-29" / "sqlite3-compare.json.gz"
    doc = table.table([table.load_run(f"sqlite3={sqlite}@2026-11-29", libs)], libs, horizon_s=1800.0)
    rows = {r["bug"]: r for r in doc["rows"] if r["library"] == "sqlite3"}
    assert all("trigger" in rows[f"SQL00{i}"] for i in range(1, 6))
    assert rows["SQL004"]["depth"] == "shallow"
    for b in ("SQL006", "SQL013"):
        assert "trigger" not in rows[b] and rows[b]["not_measured"] == "added 2026-12-01, after the run (2026-11-29)"
    assert "SQL006" not in doc["libraries"][[lib["library"] for lib in doc["libraries"]].index("sqlite3")][
        "per_trial"][0]["bugs"]
    assert "not measured (added 2026-12-01" in table.markdown(doc)
    with pytest.raises(table.TableError, match="YYYY-MM-DD"):
        table.load_run(f"sqlite3={sqlite}@yesterday", libs)
