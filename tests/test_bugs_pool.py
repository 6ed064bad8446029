"""benchmarks/bugs/pool.py on a recorded compare (the bug study's libxml2 arm, 10 x 20 min per
configuration under AFL++ 5.02c, benchmarks/results/bugs-study-2026-11-27/): pooled at the trials'
own length it is the compare's own bug report; at a shorter horizon every event after it is censored."""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autotune.bugs import survival
from autotune.bugs.survival import BugReport, holm
from autotune.stats import median as stats_median

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "bugs"))

import pool  # noqa: E402

RECORDED = ROOT / "benchmarks" / "results" / "bugs-study-2026-11-27" / "libxml2-compare.json.gz"


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(gzip.decompress(RECORDED.read_bytes()))


def _compare_dir(tmp: Path, name: str, doc: dict) -> Path:
    d = tmp / name
    d.mkdir()
    (d / "compare.json").write_text(json.dumps(doc))
    return d


@pytest.fixture(autouse=True)
def few_relabellings(monkeypatch):
    """The combined test draws 64 of the 1,024 swaps of the recorded 10 pairs (its seeded sampling
    path; the exhaustive one is tested in test_bugs_race.py and test_bugs_fixture.py): the pooling,
    not the permutation, is what these tests are about, and 1,024 x 9 bugs x 2 events take ~20 s."""
    monkeypatch.setattr(survival, "PERMUTATIONS_MAX", 64)


def _holm_checked(got: list[dict], recorded: list[dict]) -> list[dict]:
    """``got``'s per-bug tests with their Holm p (documents since 2026-12-04) checked against Holm's
    correction of the ``recorded`` tests' p over each configuration's and event's informative bugs,
    then dropped, so the rest compares with a document recorded before the correction."""
    families: dict = {}
    for r in recorded:
        if r["informative"]:
            families.setdefault((r["config"], r["event"]), []).append(r)
    want = {}
    for rows in families.values():
        want.update({(r["config"], r["event"], r["bug"]): q for r, q in zip(rows, holm([r["p"] for r in rows]))})
    for r in got:
        assert r["p_holm"] == pytest.approx(want.get((r["config"], r["event"], r["bug"]), 1.0))
    return [{**r, "p_holm": None} for r in got]


def _rounded(x):
    """``x`` with every float at 9 significant digits (dicts and lists walked)."""
    if isinstance(x, float):
        return float(f"{x:.9g}")
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_rounded(v) for v in x]
    return x


def _trigger_times(doc: dict, config: str, bug: str) -> list[float | None]:
    c = next(c for c in doc["configs"] if c["config"]["name"] == config)
    return [(t["bugs"]["bugs"].get(bug) or {}).get("trigger_s") for t in c["trials"]]


def test_pooled_at_the_trials_length_is_the_compares_own_report(recorded, tmp_path):
    d = _compare_dir(tmp_path, "study", recorded)
    doc = pool.pool([pool.load_arm(f"{d}:default"), pool.load_arm(f"{d}:ngram-8")], horizon_s=recorded["seconds"])
    # the same report to rounding: the recorded one was computed with another numpy / lifelines
    # (0.9 there may be 0.8999999999999999 here)
    got, want = (_rounded(BugReport.from_dict(d).to_dict()) for d in (doc["bugs"], recorded["bugs"]))
    got["logrank"] = _holm_checked(got["logrank"], want["logrank"])
    # the combined test's p: a permutation of the paired trials since 2026-11-28, the normal tail when recorded
    for g, w in zip(got.pop("combined"), want.pop("combined")):
        assert {k: v for k, v in g.items() if k not in ("p", "method")} == {k: v for k, v in w.items() if k not in ("p", "method")}
        assert g["method"].startswith("permutation of whole trials: 64 of the 1024 swaps within 10 seed-paired")
    # the note on crashes no canary explains came after the recording: the trials' own counts
    stray = [n for n in got["notes"] if n.startswith("crashes no canary explains")]
    assert len(stray) == 1 and "default: 0, 0, 0, 17, 0, 0, 9, 3, 5, 0 (of " in stray[0] and "ngram-8:" not in stray[0]
    got["notes"] = [n for n in got["notes"] if n not in stray]
    assert got == want
    assert [a["name"] for a in doc["arms"]] == ["default", "ngram-8"] and not doc["different_builds"]
    assert {a["aflpp"] for a in doc["arms"]} == {"AFL++ 5.02c"}


def test_a_shorter_horizon_censors_every_later_event(recorded, tmp_path):
    d = _compare_dir(tmp_path, "study", recorded)
    horizon = 300.0
    rep = BugReport.from_dict(pool.pool([pool.load_arm(f"{d}:default"), pool.load_arm(f"{d}:ngram-8")],
                                        horizon_s=horizon)["bugs"])
    assert rep.horizon_s == horizon
    checked = 0
    for config in ("default", "ngram-8"):
        for bug in rep.bugs:
            times = _trigger_times(recorded, config, bug)
            cell = rep.cell(config, bug)
            assert cell.trials == len(times)
            assert cell.events == sum(1 for t in times if t is not None and t <= horizon), (config, bug)
            # the RMST with censoring only at the horizon is the mean of min(T, horizon)
            assert cell.rmst_s == pytest.approx(sum(horizon if t is None or t > horizon else t for t in times)
                                                / len(times), abs=1e-6)
            checked += sum(1 for t in times if t is not None and t > horizon)
    assert checked > 0  # the recorded run has triggers after 300 s (XML004, XML011): the cut is exercised


def test_arms_from_two_compares_pool_with_the_first_as_baseline(recorded, tmp_path):
    a = _compare_dir(tmp_path, "a", recorded)
    b = _compare_dir(tmp_path, "b", recorded)
    doc = pool.pool([pool.load_arm(f"{b}:ngram-8=ours"), pool.load_arm(f"{a}:default")], horizon_s=600)
    rep = BugReport.from_dict(doc["bugs"])
    assert rep.baseline == "ours" and rep.configs == ("ours", "default")
    assert [a["source"] for a in doc["arms"]] == [str(b), str(a)]


@pytest.mark.parametrize("arms, horizon, message", [
    (["{d}:default", "{d}:default"], 600, "share a name"),
    (["{d}:default"], 600, "at least two arms"),
    (["{d}:default", "{d}:ngram-8"], 1500, "shorter than the horizon"),
    (["{d}:default", "{d}:nosuch"], 600, "has no configuration 'nosuch'"),
    (["{d}:default", "{d}"], 600, "expected DIR:CONFIG"),
    (["{d}:default", "{d}/missing:default"], 600, "no such file"),
])
def test_bad_arms_are_refused_naming_the_fix(recorded, tmp_path, arms, horizon, message):
    d = _compare_dir(tmp_path, "study", recorded)
    with pytest.raises(pool.PoolError, match=message):
        pool.pool([pool.load_arm(a.format(d=d)) for a in arms], horizon_s=horizon)


def test_different_canary_builds_need_saying_so(recorded, tmp_path):
    other = copy.deepcopy(recorded)
    other["yardstick"]["sha256"] = "0" * 64
    a = _compare_dir(tmp_path, "a", recorded)
    b = _compare_dir(tmp_path, "b", other)
    arms = [pool.load_arm(f"{a}:default"), pool.load_arm(f"{b}:ngram-8")]
    with pytest.raises(pool.PoolError, match="canary builds differ"):
        pool.pool(arms, horizon_s=600)
    assert pool.pool(arms, horizon_s=600, different_builds=True)["different_builds"]


def test_the_command_writes_its_three_files_or_fails_cleanly(recorded, tmp_path):
    d = _compare_dir(tmp_path, "study", with_members(recorded))
    out = tmp_path / "out"
    script = ROOT / "benchmarks" / "bugs" / "pool.py"
    ok = subprocess.run([sys.executable, str(script), "--horizon", "600", "--out", str(out), f"{d}:default",
                         f"{d}:ngram-8"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert sorted(p.name for p in out.iterdir()) == ["bugs.png", "pooled.json", "pooled.md"]
    md = (out / "pooled.md").read_text()
    assert "pooled at 600 s" in md and "censored at 600 s" in md and "| XML009 |" in md
    assert "Execs/s per instance" in md and "default main 1,004" in md and "| ngram-8 | yardstick_edges |" in md
    bad = subprocess.run([sys.executable, str(script), "--horizon", "9999", "--out", str(tmp_path / "o2"),
                          f"{d}:default", f"{d}:ngram-8"], capture_output=True, text=True)
    assert bad.returncode == 2 and "shorter than the horizon" in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "o2").exists()


def test_the_committed_libtiff_study_is_pooled_again_from_its_gzipped_arms():
    # the study's two arms as the results keep them (compare.json.gz): pooling them again gives the
    # committed pooled report's combined test, so the study is checkable from the repository alone
    results = ROOT / "benchmarks" / "results"
    study = results / "bugs-study-2026-11-28-libtiff"
    arms = [pool.load_arm(f"{results / 'bugtable-libtiff-2026-11-28' / 'libtiff-compare.json.gz'}:default"),
            pool.load_arm(f"{study / 'libtiff-ngram8-compare.json.gz'}:ngram-8")]
    again = pool.pool(arms, horizon_s=1200)["bugs"]
    kept = json.loads(gzip.decompress((study / "libtiff-pooled.json.gz").read_bytes()))["bugs"]
    # the combined test's statistic and every per-bug figure as kept; its permutation p is the
    # exhaustive one there (1,024 swaps) and a 64-swap sample here (few_relabellings)
    def statistic(rows):
        return [{k: v for k, v in r.items() if k not in ("p", "method", "p_holm")} for r in rows]

    assert _rounded(statistic(again["combined"])) == _rounded(statistic(kept["combined"]))
    assert _rounded(again["survival"]) == _rounded(kept["survival"])
    assert _rounded(_holm_checked(again["logrank"], kept["logrank"])) == _rounded(
        [{**r, "p_holm": None} for r in kept["logrank"]])
    assert [r["p"] for r in kept["combined"]] == [0.005859375, 0.001953125]  # 6 and 2 of the 1,024 swaps


def test_each_arm_is_tested_against_the_baseline_as_the_compare_tests_its_pairs(recorded, tmp_path):
    # at the trials' length the pooled tests are the compare's own (its pairs: default before ngram-8)
    d = _compare_dir(tmp_path, "study", recorded)
    arms = [pool.load_arm(f"{d}:default"), pool.load_arm(f"{d}:ngram-8")]
    rows = {r["measure"]: r for r in pool.measures_against(arms, recorded["seconds"])}
    assert set(rows) == set(pool.MEASURES)
    for p in recorded["pairs"]:
        if p["measure"] not in rows:
            continue
        r = rows[p["measure"]]
        assert (r["arm"], r["baseline"]) == ("ngram-8", "default")
        assert (r["median"], r["median_baseline"]) == pytest.approx((p["median_b"], p["median_a"]))
        assert r["mann_whitney"]["p"] == pytest.approx(p["mann_whitney"]["p"])
        assert r["a12"] == pytest.approx(1 - p["a12"])  # the arm beating the baseline, the pair's other way
    # at a shorter horizon the edges are each trial's curve at it, not its final count
    short = {r["measure"]: r for r in pool.measures_against(arms, 600)}
    at = {c["config"]["name"]: sorted(max((e for s, e in t["yardstick"]["curve"] if s <= 600), default=None)
                                      for t in c["trials"]) for c in recorded["configs"]}
    assert short["yardstick_edges"]["median"] == pytest.approx(stats_median(at["ngram-8"]))
    assert short["yardstick_edges"]["median_baseline"] == pytest.approx(stats_median(at["default"]))
    assert short["yardstick_edges"]["median"] < rows["yardstick_edges"]["median"]
    assert short["execs_per_s"] == rows["execs_per_s"]  # the whole trial's, whatever the horizon


def test_each_test_has_its_trial_index_paired_differences_beside_it(recorded, tmp_path):
    from autotune.stats import signed_rank

    d = _compare_dir(tmp_path, "study", recorded)
    arms = [pool.load_arm(f"{d}:default"), pool.load_arm(f"{d}:ngram-8")]
    trials = {c["config"]["name"]: {t["spec"]["index"]: t for t in c["trials"]} for c in recorded["configs"]}
    rows = {r["measure"]: r for r in pool.measures_against(arms, recorded["seconds"])}
    diffs = [trials["ngram-8"][k]["yardstick"]["edges"] - trials["default"][k]["yardstick"]["edges"]
             for k in sorted(trials["default"])]
    paired = rows["yardstick_edges"]["paired"]
    assert paired["n"] == len(diffs) == len(trials["default"])
    assert paired["median_difference"] == pytest.approx(stats_median(diffs))
    assert paired["signed_rank_p"] == pytest.approx(signed_rank(diffs, alternative="two-sided"))
    assert all(r["paired"]["n"] == len(diffs) for r in rows.values())
    # trials without a partner of their index are left out of the pairs, not of the unpaired test
    short = copy.deepcopy(recorded)
    c = next(c for c in short["configs"] if c["config"]["name"] == "ngram-8")
    c["trials"] = c["trials"][:-1]
    d2 = _compare_dir(tmp_path, "short", short)
    rows = {r["measure"]: r for r in pool.measures_against([pool.load_arm(f"{d2}:default"),
                                                             pool.load_arm(f"{d2}:ngram-8")], short["seconds"])}
    assert rows["execs_per_s"]["paired"]["n"] == len(diffs) - 1 == rows["execs_per_s"]["n"]
    assert rows["execs_per_s"]["n_baseline"] == len(diffs)


def test_late_edges_are_what_each_trial_gained_over_the_horizons_second_half(recorded, tmp_path):
    d = _compare_dir(tmp_path, "study", recorded)
    arm = pool.load_arm(f"{d}:ngram-8")
    trials = next(c for c in recorded["configs"] if c["config"]["name"] == "ngram-8")["trials"]
    for horizon in (recorded["seconds"], 600):
        def at(curve, s):
            return max(e for t, e in curve if t <= s)
        want = [(t["yardstick"]["edges"] if horizon >= recorded["seconds"] else at(t["yardstick"]["curve"], horizon))
                - at(t["yardstick"]["curve"], horizon / 2) for t in trials]
        got = arm.values("late_edges", horizon)
        assert got == pytest.approx(want)
        assert all(g >= 0 for g in got) and any(g > 0 for g in got)


def with_members(doc: dict) -> dict:
    """``doc`` as a two-instance portfolio's: each trial's execs/s per instance (main 1000 + i, s1 500 + 2 i)."""
    doc = copy.deepcopy(doc)
    for c in doc["configs"]:
        for i, t in enumerate(c["trials"]):
            t["stats"]["members"] = {"main": {"execs_per_sec": 1000.0 + i}, "s1": {"execs_per_sec": 500.0 + 2 * i}}
    return doc


def test_a_portfolio_arm_gives_each_instances_speed(recorded, tmp_path):
    d = _compare_dir(tmp_path, "study", with_members(recorded))
    arm = pool.load_arm(f"{d}:default")
    n = len(arm.outcome.trials)
    assert arm.to_dict()["execs_per_s_median_by_instance"] == {
        "main": stats_median([1000.0 + i for i in range(n)]), "s1": stats_median([500.0 + 2 * i for i in range(n)])}
    assert pool.load_arm(f"{_compare_dir(tmp_path, 'one', recorded)}:default").execs_by_instance() == {}
