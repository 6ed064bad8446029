"""The racing logic on recorded trial figures (no afl-fuzz here: the trial backend is a table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autotune.errors import AutotuneError
from autotune.race import Contestant, RaceBudget, RaceSettings, RaceResult, Rung, TrialFigures, plan_race, run_race
from autotune.stats import mann_whitney


def mann_whitney_greater_p(x, y):
    return mann_whitney(x, y, alternative="greater").p

DEFAULT = Contestant(name="aflpp-default", is_default=True, description="afl-clang-fast PCGUARD")


def cands(*names):
    return [Contestant(name=n, settings=(("AUTOTUNE_METRIC", n),)) for n in names] + [DEFAULT]


class Table:
    """A recorded trial backend: coverage[name] is a list per repeat, repeated cyclically for the last
    rung's extra repeats (the same at every rung unless a per-rung table is given); it records every
    batch it was asked for."""

    def __init__(self, coverage, per_rung=None):
        self.coverage, self.per_rung, self.batches = coverage, per_rung or {}, []

    def __call__(self, specs):
        self.batches.append(list(specs))
        out = []
        for s in specs:
            values = self.per_rung.get((s.contestant, s.rung), self.coverage[s.contestant])
            cov = values[s.repeat % len(values)]
            out.append(TrialFigures(contestant=s.contestant, rung=s.rung, repeat=s.repeat, seconds=s.seconds,
                                    coverage=cov, execs_per_s=1000.0, queue=10))
        return out


# --- the one-sided exact test the decision uses, by hand ---------------------------------------------------------------

def test_mann_whitney_exact_by_hand():
    # x = 3,4,5 all above y = 0,1,2: U = 9, the largest; 1 of the C(6,3) = 20 splits reaches it
    assert mann_whitney_greater_p([3, 4, 5], [0, 1, 2]) == pytest.approx(1 / 20)
    # reversed: every split has U >= 0
    assert mann_whitney_greater_p([0, 1, 2], [3, 4, 5]) == 1.0
    # x = 2,4 vs y = 1,3: U = (2>1) + (4>1) + (4>3) = 3; splits of {1,2,3,4} into two: U of
    # {3,4}=4, {2,4}=3, {1,4}=2, {2,3}=2, {1,3}=1, {1,2}=0 -> U >= 3 in 2 of 6
    assert mann_whitney_greater_p([2, 4], [1, 3]) == pytest.approx(2 / 6)
    # all equal: every split has U = n_x n_y / 2 = the observed: p = 1
    assert mann_whitney_greater_p([5, 5, 5], [5, 5, 5]) == 1.0
    # ties: x = 2,2 vs y = 1,2: U = 1 + 0.5 + 1 + 0.5 = 3; pooled {1,2,2,2}: splits with the 1 in
    # x give U = 0.5+0.5... (1 vs the two 2s of y -> 0, 2 vs two 2s -> 1) = 1; without it: 3 (3 of 6)
    assert mann_whitney_greater_p([2, 2], [1, 2]) == pytest.approx(3 / 6)


# --- the plan -----------------------------------------------------------------------------

def test_plan_fits_the_budget():
    # 4 candidates, eta 2: rungs enter 4, 2, 1; with the default 5, 3, 2 contestants x 3 repeats
    # = 15, 9, 6 trials, 2 at a time: 8, 5, 3 waves; t0 (8 + 5*2 + 3*4) = 30 t0; overhead
    # (8+5+3) x 5 s = 80 s; budget 1,000 s -> t0 = floor(920 / 30) = 30
    plan = plan_race(candidates=4, budget=RaceBudget(budget_s=1000, jobs=2, repeats=3, eta=2, min_trial_s=20,
                                                     overhead_s=5, final_repeats=3))
    assert [(p.seconds, p.candidates, p.repeats) for p in plan] == [(30, 4, 3), (60, 2, 3), (120, 1, 3)]
    # the deciding rung runs 5 each by default: 2 x 5 = 10 trials, 5 waves; t0 (8 + 10 + 20) = 38 t0;
    # overhead (8+5+5) x 5 = 90 s -> t0 = floor(910 / 38) = 23
    plan = plan_race(candidates=4, budget=RaceBudget(budget_s=1000, jobs=2, repeats=3, eta=2, min_trial_s=20,
                                                     overhead_s=5))
    assert [(p.seconds, p.candidates, p.repeats) for p in plan] == [(23, 4, 3), (46, 2, 3), (92, 1, 5)]


def test_too_small_a_budget_names_the_budget_needed():
    with pytest.raises(AutotuneError) as ei:
        plan_race(candidates=4, budget=RaceBudget(budget_s=300, jobs=2, repeats=3, eta=2, min_trial_s=20, overhead_s=5))
    assert "raise --budget to at least 850 s" in ei.value.fix  # 90 + 38 x 20


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_budget_named_for_more_candidates_is_the_least_that_races_them(jobs):
    """race_budget_for (what the list's notice tells a user to give) is exactly the smallest whole budget at
    which plan_race fits: one second less is refused. With one trial at a time (a 2-instance portfolio
    on 2 cores) the default list's 5 portfolios need 3,405 s."""
    from autotune.race.core import race_budget_for

    for k in range(1, 6):
        need = race_budget_for(candidates=k, budget=RaceBudget(jobs=jobs))
        plan_race(candidates=k, budget=RaceBudget(budget_s=need, jobs=jobs))
        with pytest.raises(AutotuneError):
            plan_race(candidates=k, budget=RaceBudget(budget_s=need - 1, jobs=jobs))
    assert race_budget_for(candidates=5, budget=RaceBudget(jobs=1)) == 3405


def test_the_default_budget_is_480_s_an_instance():
    """Without --budget a portfolio race gets 480 s for each instance (a trial of N instances holds N cores:
    the core-seconds of a one-instance race), so on 2 cores a 2-instance list race judged by bugs races
    OSS-Fuzz's portfolio and the first of ours; a --budget given is kept as given."""
    from autotune.cli.options import RaceOptions
    from autotune.race.stage import _listed

    assert RaceOptions().settings(jobs=2, instances=1, seed=0).budget.budget_s == 480
    two = RaceOptions(strategy="list", judge="bugs").settings(jobs=1, instances=2, seed=0)
    assert two.budget.budget_s == 960
    assert RaceOptions(budget=300).settings(jobs=1, instances=2, seed=0).budget.budget_s == 300
    contestants, dropped, _plan = _listed(two, estimated_keys={"ngram-4": 15_000.0, "caller": 900.0, "edge": 555.0},
                                          afl_cc=True, recipe=True, notice=None)
    assert [c.name for c in contestants] == ["aflpp-default-x2", "x2-aflpp-classic-ctx2", "x2-ngram-4"]
    assert dropped == ("x2-caller", "x2-guard", "x2-edge")


# --- the race -----------------------------------------------------------------------------

def test_keeps_the_best_and_recommends_it_when_it_beats_the_default():
    table = Table({"edge": [90, 92, 91], "ngram-4": [120, 125, 122], "ngram-8": [80, 70, 75],
                   "guard": [110, 111, 112], "aflpp-default": [100, 101, 102]})
    r = run_race(contestants=cands("edge", "ngram-4", "ngram-8", "guard"), run_trials=table,
                 settings=RaceSettings(seed=3, budget=RaceBudget(budget_s=1000, jobs=2, overhead_s=5)))
    assert [rung.entered for rung in r.rungs] == [("edge", "ngram-4", "ngram-8", "guard"), ("ngram-4", "guard"),
                                                  ("ngram-4",)]
    assert r.rungs[0].ranking == ("ngram-4", "guard", "edge", "ngram-8")
    assert r.decision.recommended == "ngram-4" and not r.decision.is_default
    assert r.decision.p_value == pytest.approx(1 / 32, abs=1e-6) and r.decision.a12 == 1.0  # 5 pairs, all won
    assert r.decision.trial_s == r.plan[-1].seconds == 92 and not r.stopped_early
    # the default ran in every rung, every contestant 3 times per rung, 5 in the deciding one
    for rung, step in zip(r.rungs, r.plan):
        assert step.repeats == (5 if rung is r.rungs[-1] else 3)
        assert len(rung.coverage("aflpp-default")) == step.repeats
        assert all(len(rung.coverage(n)) == step.repeats for n in rung.entered)


def test_trials_are_paired_and_interleaved():
    table = Table({"a": [1, 2, 3], "b": [1, 2, 3], "aflpp-default": [1, 2, 3]})
    run_race(contestants=cands("a", "b"), run_trials=table,
             settings=RaceSettings(seed=7, budget=RaceBudget(budget_s=1000, jobs=2)))
    for batch in table.batches:
        reps = {s.repeat for s in batch}
        for rep in reps:
            seeds = {s.fuzz_seed for s in batch if s.repeat == rep}
            assert len(seeds) == 1  # repeat i: one afl-fuzz -s for every contestant
        assert len({s.fuzz_seed for s in batch}) == len(reps) in (3, 5)  # and another for each repeat
        firsts = [batch[i].contestant for i in range(0, len(batch), len(batch) // len(reps))]
        assert len(set(firsts)) > 1  # the order rotates from repeat to repeat
    again = Table({"a": [1, 2, 3], "b": [1, 2, 3], "aflpp-default": [1, 2, 3]})
    run_race(contestants=cands("a", "b"), run_trials=again,
             settings=RaceSettings(seed=7, budget=RaceBudget(budget_s=1000, jobs=2)))
    assert again.batches == table.batches  # the same seed, the same trials


def test_falls_back_to_the_default_when_the_lead_is_not_significant():
    table = Table({"edge": [99, 104, 103], "ngram-2": [50, 52, 51], "aflpp-default": [100, 101, 102]})
    r = run_race(contestants=cands("edge", "ngram-2"), run_trials=table,
                 settings=RaceSettings(budget=RaceBudget(budget_s=1000, jobs=2)))
    d = r.decision
    assert d.winner == "edge" and d.recommended == "aflpp-default" and d.is_default
    assert d.winner_median == 103 and d.default_median == 101 and d.p_value > 0.05
    assert "not significantly" in d.reason


def test_falls_back_when_nothing_covers_more():
    table = Table({"edge": [100, 101, 102], "aflpp-default": [100, 101, 102]})
    r = run_race(contestants=cands("edge"), run_trials=table,
                 settings=RaceSettings(budget=RaceBudget(budget_s=600, jobs=2)))
    assert r.decision.recommended == "aflpp-default" and "covered no more than" in r.decision.reason


def test_stops_early_when_every_candidate_is_significantly_behind():
    table = Table({"ctx": [10, 11, 12], "ngram-8": [20, 21, 22], "caller": [5, 6, 7], "edge": [30, 31, 32],
                   "aflpp-default": [100, 101, 102]})
    r = run_race(contestants=cands("ctx", "ngram-8", "caller", "edge"), run_trials=table,
                 settings=RaceSettings(budget=RaceBudget(budget_s=1000, jobs=2)))
    # not after the first rung (the shortest trials); after the second, with three rungs planned
    assert r.stopped_early and len(r.rungs) == 2 and len(table.batches) == 2 and len(r.plan) == 3
    assert r.decision.recommended == "aflpp-default" and "stopped early" in r.decision.reason


def test_a_candidate_that_only_shines_late_is_judged_on_the_late_rung():
    # rung 0: b leads, a second; rung 1 (a, b): a leads; rung 2: a alone vs the default
    per_rung = {("a", 0): [60, 61, 62], ("b", 0): [70, 71, 72], ("a", 1): [99, 103, 101], ("b", 1): [80, 81, 82],
                ("a", 2): [130, 131, 132]}
    table = Table({"a": [0, 0, 0], "b": [0, 0, 0], "c": [1, 1, 1], "aflpp-default": [100, 101, 102]}, per_rung)
    r = run_race(contestants=cands("a", "b", "c"), run_trials=table,
                 settings=RaceSettings(budget=RaceBudget(budget_s=1200, jobs=2, min_trial_s=10)))
    assert [rung.ranking[0] for rung in r.rungs] == ["b", "a", "a"]
    assert r.decision.recommended == "a"


def test_bad_races_are_refused():
    table = Table({})
    with pytest.raises(AutotuneError, match="exactly one default"):
        run_race(contestants=cands("a")[:1], run_trials=table,
                 settings=RaceSettings(budget=RaceBudget(budget_s=600, jobs=2)))
    with pytest.raises(AutotuneError, match="share a name"):
        run_race(contestants=cands("a", "a"), run_trials=table,
                 settings=RaceSettings(budget=RaceBudget(budget_s=600, jobs=2)))
    with pytest.raises(AutotuneError, match="returned"):
        run_race(contestants=cands("a"), run_trials=lambda specs: [],
                 settings=RaceSettings(budget=RaceBudget(budget_s=600, jobs=2)))


def test_the_result_round_trips_as_json():
    table = Table({"edge": [90, 92, 91], "guard": [110, 111, 112], "aflpp-default": [100, 101, 102]})
    r = run_race(contestants=cands("edge", "guard"), run_trials=table,
                 settings=RaceSettings(budget=RaceBudget(budget_s=800, jobs=2)))
    doc = json.loads(json.dumps(r.to_dict()))
    assert RaceResult.from_dict(doc) == r
    with pytest.raises(ValueError, match="schema_version"):
        RaceResult.from_dict({**doc, "schema_version": 99})


# --- end to end: the real afl-fuzz on the demo -----------------------------------------------

@pytest.mark.slow
def test_race_on_the_demo_in_the_real_afl_fuzz(tmp_path):
    import shutil

    from typer.testing import CliRunner

    from autotune.cli.main import app
    from autotune.target import read_record

    if not shutil.which("afl-fuzz") or not shutil.which("afl-clang-fast"):
        pytest.skip("afl++ is not installed (apt-get install -y afl++)")
    out = tmp_path / "race"
    res = CliRunner().invoke(app, ["race", "--demo", "--strategy", "list", "--metrics", "guard,edge", "--repeats", "1", "--final-repeats", "1",
                                   "--budget", "32", "--min-trial", "4", "--seed", "5", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc == json.loads((out / "race.json").read_text())
    r = RaceResult.from_dict(doc["race"])
    assert [c.name for c in r.contestants] == ["aflpp-default", "guard", "edge"]
    # every contestant built as its kind says, the default by afl-clang-fast with no variables
    recs = {name: read_record(Path(b)) for name, b in doc["binaries"].items()}
    assert recs["aflpp-default"]["cc_kind"] == "afl" and recs["aflpp-default"]["build_vars"] == {}
    assert recs["guard"]["build_vars"] == {"AUTOTUNE_CC_INSTRUMENT": "guard"}
    # no census: edge's index at the default keys is too large a flat map, so the edge kind counts it
    # inline through the two-level map (an indexed build)
    assert recs["edge"]["build_vars"] == {"AUTOTUNE_CC_INSTRUMENT": "edge", "AUTOTUNE_CC_INDEX": "1"}
    assert doc["yardstick"]["kind"] == "aflpp-pcguard"
    first = r.rungs[0]
    assert first.seconds >= 4 and {t.contestant for t in first.trials} == {"aflpp-default", "guard", "edge"}
    assert all(t.coverage > 100 and t.execs_per_s > 0 and t.queue > 0 for t in first.trials)
    assert len({t.seconds for t in first.trials}) == 1
    # one trial each cannot show a significant win: the default is recommended, and its env files written
    assert r.decision.is_default and r.decision.p_value is not None
    assert (out / "afl-build.env").is_file() and (out / "race.md").is_file()
    assert "Recommended: aflpp-default" in (out / "race.md").read_text()
    assert "The portfolio study" not in (out / "race.md").read_text()  # one instance: no portfolio to cite it for
    assert re.search(r"afl-fuzz: AFL\+\+ \d+\.\d+\w", (out / "race.md").read_text())  # the version that ran it
    assert re.search(r"builds by clang \d+\.\d+", (out / "race.md").read_text())  # and the clang that built


@pytest.mark.slow
def test_the_search_on_the_demo_in_the_real_afl_fuzz_and_preflight_on_its_recommendation(tmp_path):
    """The search end to end: proposals built as their kinds say, trials in the real afl-fuzz, the
    history written, and the race directory read by preflight as the recommendation."""
    import shutil

    from typer.testing import CliRunner

    from autotune.cli.main import app
    from autotune.preflight.tuned import load_tuned
    from autotune.mappoint import MapPoint
    from autotune.race.search import SpaceFacts, contestant_for
    from autotune.target import read_record

    if not shutil.which("afl-fuzz") or not shutil.which("afl-clang-fast"):
        pytest.skip("afl++ is not installed (apt-get install -y afl++)")
    out = tmp_path / "race"
    probe = CliRunner().invoke(app, ["probe", "--demo", "--probe-time", "3", "-o", str(tmp_path / "probe")])
    assert probe.exit_code == 0, probe.output
    res = CliRunner().invoke(app, ["race", "--demo", "--metrics", "guard,edge", "--repeats", "1", "--final-repeats", "1", "--budget", "40",
                                   "--min-trial", "4", "--seed", "3", "--probe", str(tmp_path / "probe"),
                                   "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    r = RaceResult.from_dict(doc["race"])
    search = r.search
    assert search["strategy"] == "search" and search["space"]["points"] > 2
    names = [p["name"] for p in search["proposals"]]
    assert names[0] == "guard" and len(names) >= 2
    assert [c.name for c in r.contestants] == ["aflpp-default", *names]
    facts = SpaceFacts(**{k: v for k, v in search["facts"].items() if k in ("l2_bytes", "max_collision_rate",
                                                                             "max_counter_overflow", "inline")})
    for p in search["proposals"]:
        want = contestant_for(MapPoint.from_dict(p["point"]), facts)
        assert read_record(Path(doc["binaries"][p["name"]]))["build_vars"] == want.build_vars, p["name"]
        assert r.contestant(p["name"]).build_vars == want.build_vars
    assert len(search["observations"]) >= len(names) and search["convergence"]
    assert "## The search" in (out / "race.md").read_text()
    # the race directory is the recommendation preflight and validate read
    tuned = load_tuned(out)
    rec, decision = tuned.recommendation, doc["race"]["decision"]
    assert tuned.kind == "race" and (rec.reason, rec.is_default) == (decision["reason"], decision["is_default"])
    assert json.loads((out / "recommendation.json").read_text()) == rec.to_dict()
    assert (out / "afl-build.env").is_file() and (out / "afl-run.env").is_file()
    assert (tuned.autotune_env is None) == r.decision.is_default
    pre = CliRunner().invoke(app, ["preflight", str(out), "--demo", "--probe-time", "3", "--json"],
                             env={"COLUMNS": "160"})
    assert pre.exit_code in (0, 2), pre.output
    pdoc = json.loads(pre.stdout[: pre.stdout.rindex("}") + 1])
    assert pdoc["tuned_dir"] == str(out.resolve())
    checks = {f["check"]: f for f in pdoc["findings"]}
    assert checks["host_profile"]["severity"] == "ok"  # race.json records the host it ran on
    # validate builds the recommendation as autotune-build.env says and fuzzes it beside the default;
    # so that our runtime's variant runs whatever this short race decided, the same document is
    # written again recommending its first proposal (a document as the race writes it, not a mock)
    import dataclasses

    from autotune.race.core import Decision
    from autotune.race.stage import RaceOutcome, write_outputs

    ours = out.parent / "race-ours"
    ours.mkdir()
    first = r.contestant(names[0])
    decided = dataclasses.replace(r, decision=Decision(**{**r.decision.to_dict(), "recommended": first.name,
                                                          "is_default": False}))
    outcome = RaceOutcome(**{**{k: doc[k] for k in ("yardstick", "binaries", "target", "probe_dir", "tune_dir",
                                                    "max_collision_rate", "host")},
                             "race": decided, "dropped": tuple(doc["dropped"]), "written": ()})
    write_outputs(outcome=outcome, out_dir=ours)
    val = CliRunner().invoke(app, ["validate", str(ours), "--demo", "--fuzz-time", "2", "--json"],
                             env={"COLUMNS": "160"})
    assert val.exit_code == 0, val.output
    variants = {v["name"]: v for v in json.loads((ours / "validate.json").read_text())["variants"]}
    assert set(variants) == {"aflpp-default", "aflpp-tuned", "autotune"}
    assert variants["autotune"]["build_vars"] == first.build_vars
    assert read_record(Path(variants["autotune"]["binary"]))["build_vars"] == first.build_vars
    assert variants["autotune"]["fuzz"]["execs_done"] > 0


def test_race_without_afl_fuzz_says_what_to_install(tmp_path):
    import os
    import sys

    from typer.testing import CliRunner

    from autotune.cli.main import app

    empty = tmp_path / "bin"
    empty.mkdir()
    env = {**os.environ, "PATH": f"{empty}:{Path(sys.executable).parent}"}
    res = CliRunner().invoke(app, ["race", "--demo", "--out", str(tmp_path / "o")], env=env)
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "'afl-fuzz' was not found" in res.output and "apt-get install -y afl++" in res.output
    assert not (tmp_path / "o").exists()  # nothing half-written


def test_contestants_sized_from_the_census():
    from autotune.race.contestants import index_slots_for, make_contestants
    from autotune.vocabulary import collision_rate

    cs = make_contestants(metrics=("guard", "edge", "caller"), estimated_keys={"edge": 3000.0, "caller": 50000.0},
                          afl_cc=True)
    by = {c.name: c for c in cs}
    assert by["aflpp-default"].cc_kind == "afl" and by["aflpp-default"].is_default
    assert by["guard"].env == {"AUTOTUNE_METRIC": "guard"} and by["guard"].build_vars["AUTOTUNE_CC_INSTRUMENT"] == "guard"
    # 50,000 caller keys overflow a flat map the race counts inline: the ctx kind built for caller, indexed
    assert by["caller"].build_vars == {"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "caller",
                                       "AUTOTUNE_CC_INDEX": "1"}
    assert by["caller"].env["AUTOTUNE_KEY_HASH"] == "afl" and by["caller"].env["AUTOTUNE_LAYOUT"] == "twolevel"
    e = by["edge"].env
    h = int(e["AUTOTUNE_INDEX_SIZE"])
    assert h == index_slots_for(keys=3000.0, max_collision_rate=0.02)
    assert collision_rate(H=h, n=6000) <= 0.02 < collision_rate(H=h // 2, n=6000)  # the smallest that fits
    assert int(e["AUTOTUNE_MAP_SIZE"]) >= 6000 and e["AUTOTUNE_LAYOUT"] == "twolevel"
    # without afl-clang-fast the default is our guard (and guard is not raced against itself)
    cs = make_contestants(metrics=("guard", "edge"), afl_cc=False)
    assert [c.name for c in cs] == ["aflpp-default", "edge"]
    assert cs[0].build_vars == {"AUTOTUNE_CC_INSTRUMENT": "guard"} and cs[0].env == {"AUTOTUNE_METRIC": "guard"}


def test_run_refuses_too_small_a_budget_before_anything_runs(tmp_path, monkeypatch):
    """`autotune run --budget 5`: the error names the smallest budget, exit 1, no probe, no build, no
    output directory (issue 24: it used to start the 60 s probe and the tune stage first)."""
    from typer.testing import CliRunner

    from autotune.cli.main import app
    from autotune.race.core import DEFAULT_MIN_TRIAL_S, DEFAULT_REPEATS

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["run", "--demo", "--budget", "5", "--out", str(tmp_path / "out")])
    assert res.exit_code == 1, res.output
    assert "cannot race 1 candidate and the default" in res.output and "raise --budget to at least" in res.output
    assert f"{DEFAULT_REPEATS} trials each" in res.output and f"at least {DEFAULT_MIN_TRIAL_S} s" in res.output
    assert "Traceback" not in res.output and "==>" not in res.output
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def need_two_cores_and_aflpp() -> None:
    """Skip a 2-instance portfolio race where afl++ or a second core is missing."""
    import shutil

    from autotune.trials import host_cores

    if not shutil.which("afl-fuzz") or not shutil.which("afl-clang-fast"):
        pytest.skip("afl++ is not installed (apt-get install -y afl++)")
    if len(host_cores()) < 2:
        pytest.skip("a 2-instance portfolio needs 2 cores")


def test_the_search_races_portfolios_with_instances(tmp_path):
    """`autotune race --instances 2`: AFL++'s default portfolio (two afl-clang-fast instances, -M and -S)
    against OSS-Fuzz's practice (AFL++'s own CLASSIC,CTX-2 build on the secondary, raced first, outside
    the search's space) and portfolios with AFL++'s default as the main and the search's configuration on
    the secondary, every trial two afl-fuzz on two cores; the recommendation says how to launch it."""

    from typer.testing import CliRunner

    from autotune.cli.main import app
    from autotune.trials import host_cores

    need_two_cores_and_aflpp()
    out = tmp_path / "race"
    res = CliRunner().invoke(app, ["race", "--demo", "--instances", "2", "--metrics", "guard", "--repeats", "1",
                                   "--final-repeats", "1", "--budget", "55", "--min-trial", "4", "--seed", "3",
                                   "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    r = RaceResult.from_dict(json.loads(res.stdout)["race"])
    default, alt, cand = r.contestants
    assert default.is_default and [m.name for m in default.members] == ["aflpp-default", "aflpp-default"]
    assert alt.name == "x2-aflpp-classic-ctx2" and alt.tuned.build_vars == {"AFL_LLVM_INSTRUMENT": "CLASSIC,CTX-2"}
    assert [m.name for m in cand.members] == ["aflpp-default", "guard"] and cand.tuned.name == "guard"
    alts = r.search["alternatives"]
    assert alts["names"] == [alt.name] and [o["rung"] for o in alts["observations"]][0] == 0
    assert all(o["name"] != alt.name for o in r.search["observations"])  # never in the model
    assert {t.contestant for t in r.rungs[0].trials} == {default.name, alt.name, cand.name}
    for c in (default, alt, cand):
        afl_out = out / "trials" / "rung-0" / c.name / "trial-0" / "afl-out"
        assert (afl_out / "main" / "fuzzer_stats").is_file() and (afl_out / "s1" / "fuzzer_stats").is_file()
    assert "A portfolio of 2 afl-fuzz instances: `autotune portfolio --demo" in (out / "race.md").read_text()
    assert "The portfolio study" in (out / "race.md").read_text()  # what 10 x 30 min said of sensitive secondaries
    too_many = CliRunner().invoke(app, ["race", "--demo", "--instances", str(len(host_cores()) + 1),
                                        "--out", str(tmp_path / "x")])
    assert too_many.exit_code == 1 and "cores" in too_many.output and not (tmp_path / "x").exists()


def test_portfolio_contestants_round_trip_and_name_what_was_tuned():
    from autotune.race.core import portfolio_of

    single = Contestant(name="aflpp-default", is_default=True, cc_kind="afl", description="AFL++'s default")
    guard = Contestant(name="guard", build=(("AUTOTUNE_CC_INSTRUMENT", "guard"),),
                       settings=(("AUTOTUNE_METRIC", "guard"),), description="guard")
    d = portfolio_of(default=single, secondary=None, instances=3)
    c = portfolio_of(default=single, secondary=guard, instances=3)
    assert d.is_default and d.name == "aflpp-default-x3" and [m.name for m in d.members] == ["aflpp-default"] * 3
    assert not c.is_default and [m.name for m in c.members] == ["aflpp-default", "guard", "guard"]
    assert c.tuned == guard and guard.tuned == guard and not any(m.is_default for m in c.members)
    assert Contestant.from_dict(json.loads(json.dumps(c.to_race_dict()))) == c


def test_the_portfolio_line_launches_the_recommendation_on_the_seeds_the_race_ran(tmp_path):
    from types import SimpleNamespace

    from autotune.race.core import portfolio_of
    from autotune.race.report import portfolio_line

    single = Contestant(name="aflpp-default", is_default=True, cc_kind="afl", description="AFL++'s default")
    guard = Contestant(name="guard", build=(("AUTOTUNE_CC_INSTRUMENT", "guard"),),
                       settings=(("AUTOTUNE_METRIC", "guard"),), description="guard")
    cs = {c.name: c for c in (portfolio_of(default=single, secondary=None, instances=2),
                              portfolio_of(default=single, secondary=guard, instances=2), guard)}

    def outcome(recommended: str, target: dict):
        race = SimpleNamespace(decision=SimpleNamespace(recommended=recommended), contestant=cs.__getitem__)
        return SimpleNamespace(race=race, target=target)

    recipe = {"kind": "script", "script": "/x/build.sh", "sources": ["/x/h.c"]}
    line = portfolio_line(outcome("x2-guard", recipe), out_dir=tmp_path / "race")
    assert line.startswith(f"autotune portfolio --build-script /x/build.sh --source /x/h.c --corpus {tmp_path}/race/seeds "
                           f"--config default --config {tmp_path}/race/autotune-run.env --instances 2")
    line = portfolio_line(outcome("aflpp-default-x2", {"kind": "demo"}), out_dir=tmp_path / "race")
    assert line.startswith("autotune portfolio --demo --config default --instances 2")
    assert portfolio_line(outcome("guard", recipe), out_dir=tmp_path) is None  # one instance, one core: no portfolio
    # one instance recommended on a machine of more cores: that configuration on every core
    line = portfolio_line(outcome("guard", recipe), out_dir=tmp_path / "race", cores=4)
    assert line.startswith(f"autotune portfolio --build-script /x/build.sh --source /x/h.c --corpus {tmp_path}/race/seeds "
                           f"--config {tmp_path}/race/autotune-run.env --instances 4")
    assert "--config default" not in line and "guard on every instance" in line


def test_the_list_races_portfolios_against_aflpp_s_and_oss_fuzz_s_practice(tmp_path):
    """--instances 2 with the list strategy: AFL++'s default portfolio is the default; OSS-Fuzz's practice
    (AFL++'s own CLASSIC,CTX-2 build on the secondary) comes first among the candidates, then each listed
    metric on the secondary; a recommended alternative of AFL++'s own is written as afl-build.env (its
    AFL_LLVM_INSTRUMENT) and launched with AFL++'s default as the main."""
    from types import SimpleNamespace

    from autotune.emit.configuration import race_env_files
    from autotune.race.contestants import make_contestants
    from autotune.race.report import portfolio_line
    from autotune.race.stage import portfolio_contestants

    single = make_contestants(metrics=("ngram-4", "caller"), estimated_keys={"ngram-4": 900.0, "caller": 900.0},
                              afl_cc=True)
    cs = portfolio_contestants(single, instances=2, afl_cc=True)
    assert [c.name for c in cs] == ["aflpp-default-x2", "x2-aflpp-classic-ctx2", "x2-ngram-4", "x2-caller"]
    assert cs[0].is_default and not any(c.is_default for c in cs[1:])
    assert all([m.name for m in c.members][0] == "aflpp-default" and len(c.members) == 2 for c in cs)
    alt = cs[1].tuned
    assert alt.cc_kind == "afl" and alt.build_vars == {"AFL_LLVM_INSTRUMENT": "CLASSIC,CTX-2"} and not alt.settings
    assert cs[2].tuned.build_vars["AUTOTUNE_CC_INSTRUMENT"] == "ngram"
    # without afl-clang-fast (or without a recipe) no alternative of AFL++'s own
    assert [c.name for c in portfolio_contestants(single, instances=3, afl_cc=False)] == [
        "aflpp-default-x3", "x3-ngram-4", "x3-caller"]
    files = race_env_files(alt, why="the race: it won", index_file=str(tmp_path / "i.bin"))
    assert set(files) == {"afl-build.env", "afl-run.env"}
    assert "AFL_LLVM_INSTRUMENT=CLASSIC,CTX-2" in files["afl-build.env"].splitlines()
    assert "-S" in files["afl-build.env"] and "-M" in files["afl-build.env"]
    race = SimpleNamespace(decision=SimpleNamespace(recommended=cs[1].name), contestant={c.name: c for c in cs}.__getitem__)
    line = portfolio_line(SimpleNamespace(race=race, target={"kind": "demo"}), out_dir=tmp_path / "race")
    assert line.startswith(f"autotune portfolio --demo --config default --config {tmp_path}/race/afl-build.env "
                           "--instances 2")


@pytest.mark.slow
def test_run_judges_portfolios_by_bugs_with_oss_fuzz_s_practice_beside(tmp_path):
    """`autotune race --demo --instances 2 --strategy list --judge bugs`: every contestant a 2-instance
    portfolio (AFL++'s default -M, its secondary -S), OSS-Fuzz's CLASSIC,CTX-2 secondary among them, each
    trial's union replayed through the canary build; the recommendation and how to launch it."""

    from typer.testing import CliRunner

    from autotune.cli.main import app
    from autotune.target import read_record

    need_two_cores_and_aflpp()
    out = tmp_path / "race"
    res = CliRunner().invoke(app, ["race", "--demo", "--instances", "2", "--strategy", "list", "--judge", "bugs",
                                   "--metrics", "ngram-4", "--repeats", "1", "--final-repeats", "1", "--budget", "30",
                                   "--min-trial", "4", "--seed", "3", "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    r = RaceResult.from_dict(doc["race"])
    # OSS-Fuzz's practice comes first among the candidates: 30 s race it alone (ngram-4's portfolio is
    # tested under the search: test_the_search_races_portfolios_with_instances)
    assert [c.name for c in r.contestants] == ["aflpp-default-x2", "x2-aflpp-classic-ctx2"]
    assert "Left out to fit the budget: x2-ngram-4." in (out / "race.md").read_text()
    assert r.decision.objective == "bugs"
    rec = read_record(Path(doc["binaries"]["x2-aflpp-classic-ctx2#1"]))
    assert rec["cc_kind"] == "afl" and rec["build_vars"] == {"AFL_LLVM_INSTRUMENT": "CLASSIC,CTX-2"}
    assert doc["binaries"]["x2-aflpp-classic-ctx2#0"] == doc["binaries"]["aflpp-default-x2#0"]  # the same main
    first = r.rungs[0]
    assert {t.contestant for t in first.trials} == {c.name for c in r.contestants}
    assert all(t.bugs is not None and t.coverage > 100 for t in first.trials)
    for c in r.contestants:
        afl_out = out / "trials" / "rung-0" / c.name / "trial-0" / "afl-out"
        assert (afl_out / "main" / "fuzzer_stats").is_file() and (afl_out / "s1" / "fuzzer_stats").is_file()
    assert "A portfolio of 2 afl-fuzz instances: `autotune portfolio --demo" in (out / "race.md").read_text()


def test_the_decision_pairs_trials_by_afl_fuzz_seed():
    """The seed moves both sides of a pair alike (lz4: ~600 or ~1,400 edges in 28 s by -s alone): a
    candidate 1-2 % ahead in every pair is a significant win by the signed-rank test on the pairs,
    where the unpaired Mann-Whitney test sees only the spread between seeds."""
    from autotune.race.core import decision_test

    base = [600, 1400, 700, 900, 1200]
    table = Table({"guard": [b + 12 for b in base], "aflpp-default": base})
    r = run_race(contestants=cands("guard"), run_trials=table,
                 settings=RaceSettings(seed=3, budget=RaceBudget(budget_s=400, jobs=2, overhead_s=5,
                                                                 final_repeats=5)))
    last = r.rungs[-1]
    assert len(last.coverage("guard")) == 5
    assert mann_whitney_greater_p(last.coverage("guard"), last.coverage("aflpp-default")) > 0.3
    assert r.decision.recommended == "guard" and r.decision.p_value == pytest.approx(1 / 32)
    assert "signed-rank, 5 pairs" in r.decision.reason
    # one pair lost: no longer significant (the smallest rank flipped: p = 2/32)
    table = Table({"guard": [b + 12 for b in base[:4]] + [base[4] - 1], "aflpp-default": base})
    r = run_race(contestants=cands("guard"), run_trials=table,
                 settings=RaceSettings(seed=3, budget=RaceBudget(budget_s=400, jobs=2, overhead_s=5,
                                                                 final_repeats=5)))
    assert r.decision.is_default and r.decision.p_value == pytest.approx(2 / 32)
    # fewer pairs than the signed-rank test can decide on at alpha: Mann-Whitney, chosen by the count
    three = Rung(index=0, seconds=20, entered=("guard",), ranking=("guard",), kept=("guard",),
                 trials=tuple(TrialFigures(contestant=c, rung=0, repeat=i, seconds=20, coverage=v, execs_per_s=1.0,
                                           queue=1) for c, vs in (("guard", [11, 12, 13]), ("aflpp-default", [1, 2, 3]))
                              for i, v in enumerate(vs)))
    p, test = decision_test(three, candidate="guard", default="aflpp-default", alpha=0.05)
    assert test == "Mann-Whitney" and p == pytest.approx(1 / 20)


def test_the_signed_rank_test_agrees_with_scipy():
    import random

    from scipy.stats import wilcoxon

    from autotune.stats import signed_rank

    rng = random.Random(5)
    for _ in range(40):
        n = rng.randint(1, 9)
        d = [rng.choice([-3, -2, -1, 1, 2, 3, 5, 8]) * rng.randint(1, 4) for _ in range(n)]
        ref_g = wilcoxon(d, alternative="greater", method="exact").pvalue if len(set(map(abs, d))) == n else None
        ref_2 = wilcoxon(d, alternative="two-sided", method="exact").pvalue if len(set(map(abs, d))) == n else None
        if ref_g is not None:  # scipy's exact distribution holds without ties
            assert signed_rank(d, alternative="greater") == pytest.approx(ref_g)
            assert signed_rank(d, alternative="two-sided") == pytest.approx(ref_2)
    assert signed_rank([0, 0]) == 1.0 and signed_rank([5, 5, 5, 5, 5]) == pytest.approx(1 / 32)
    with pytest.raises(ValueError):
        signed_rank([1], alternative="less")


def test_sensitive_first_puts_the_list_s_first_sensitive_metric_before_oss_fuzz_s_practice():
    from autotune.race.contestants import make_contestants
    from autotune.race.stage import is_sensitive, portfolio_contestants

    keys = {"ngram-4": 900.0, "caller": 900.0, "edge": 500.0}
    single = make_contestants(metrics=("guard", "edge", "ngram-4", "caller"), estimated_keys=keys, afl_cc=True)
    assert [is_sensitive(c) for c in single] == [False, False, False, True, True]  # the default, guard, edge, ...
    names = [c.name for c in portfolio_contestants(single, instances=2, afl_cc=True, sensitive_first=True)]
    assert names == ["aflpp-default-x2", "x2-ngram-4", "x2-aflpp-classic-ctx2", "x2-guard", "x2-edge", "x2-caller"]
    assert [c.name for c in portfolio_contestants(single, instances=2, afl_cc=True)] == [
        "aflpp-default-x2", "x2-aflpp-classic-ctx2", "x2-guard", "x2-edge", "x2-ngram-4", "x2-caller"]
    # no sensitive metric listed: nothing moves
    plain = make_contestants(metrics=("guard", "edge"), estimated_keys=keys, afl_cc=True)
    assert [c.name for c in portfolio_contestants(plain, instances=2, afl_cc=True, sensitive_first=True)] == [
        "aflpp-default-x2", "x2-aflpp-classic-ctx2", "x2-guard", "x2-edge"]


def test_judged_by_edges_the_list_tries_guard_and_edge_before_any_sensitive_metric():
    """The portfolio study's rule 4 (DEFAULT_METRICS' comment): a sensitive secondary cost its -S most of
    its speed on both libraries, so the edge judge's list, which --instances puts on the secondaries,
    tries our metrics with the default's feedback first; the bug judge's puts the sensitive ones first."""
    from autotune.race.contestants import BUG_METRICS, DEFAULT_METRICS
    from autotune.vocabulary import METRIC_SPECS

    sensitive = [METRIC_SPECS[m].sensitive for m in DEFAULT_METRICS]
    assert sensitive == sorted(sensitive) and not sensitive[0] and sensitive[-1]
    assert [METRIC_SPECS[m].sensitive for m in BUG_METRICS] == sorted(sensitive, reverse=True)
