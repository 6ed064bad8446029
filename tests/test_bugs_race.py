"""The race judged by bugs (autotune.bugs.race through autotune.race.run_race), on trial figures
made by a deterministic backend (the race's run_trials callable: the trials' outcome given, no
afl-fuzz), and the refusal of what it cannot judge."""

from __future__ import annotations

import math
from dataclasses import astuple

import pytest

from autotune.bugs import race as by_bugs
from autotune.bugs import survival
from autotune.errors import AutotuneError
from autotune.race import Contestant, Decision, RaceBudget, RaceSettings, TrialFigures, run_race

DEFAULT = Contestant(name="aflpp-default", is_default=True, description="afl-clang-fast PCGUARD")


def cands(*names: str) -> list[Contestant]:
    return [Contestant(name=n, settings=(("AUTOTUNE_METRIC", n),)) for n in names] + [DEFAULT]


def backend(times: dict[str, object], coverage: dict[str, int] | None = None):
    """Per contestant, the time to trigger of bug X in a trial of ``s`` seconds (a number: at that time
    when within the trial; a function of (seconds, repeat); None: never). Every trial reaches X and Y."""
    def run(specs):
        out = []
        for s in specs:
            t = times.get(s.contestant)
            at = t(s.seconds, s.repeat) if callable(t) else t
            trig = None if at is None or at > s.seconds else float(at)
            out.append(TrialFigures(contestant=s.contestant, rung=s.rung, repeat=s.repeat, seconds=s.seconds,
                                    coverage=(coverage or {}).get(s.contestant, 100), execs_per_s=1000.0, queue=10,
                                    bugs={"X": trig, "Y": None}))
        return out
    return run


def test_a_candidate_that_triggers_sooner_is_recommended():
    r = run_race(contestants=cands("ngram-8", "edge"), run_trials=backend({"ngram-8": 30, "edge": None}),
                 settings=RaceSettings(judge="bugs", budget=RaceBudget(budget_s=1000, jobs=2)))
    d = r.decision
    assert (d.recommended, d.objective, d.winner_median, d.default_median) == ("ngram-8", "bugs", 1.0, 0.0)
    assert "sooner" in d.reason and d.p_value <= 0.05
    # the last rung: 5 seed-paired trials each, X triggered at 30 s by ngram-8 and never by the default:
    # of the 2^5 swaps of the labels within pairs only the trials as labelled give a z as high
    last = r.rungs[-1]
    assert len(last.trials) == 10 and d.p_value == pytest.approx(1 / 32)
    assert "permutation p = 0.0312 (all of the 32 swaps within 5 seed-paired trials)" in d.reason


def keyed(*times: float | None, bugs: str = "X") -> dict[int, dict[str, float | None]]:
    """Trials by repeat, each triggering every bug of ``bugs`` at its time (None: never)."""
    return {i: {b: t for b in bugs} for i, t in enumerate(times)}


def test_the_permutation_p_moves_whole_trials_so_bugs_found_together_count_once():
    # two bugs every campaign finds at once: Stouffer's normal tail treats them as independent
    # evidence (p 0.0002 here); the paired permutation sees 4 pairs that differ, so 2 of 32 swaps
    # (the 5th pair's swap changes nothing) give the observed z: p = 1/16
    cand, base = keyed(10, 20, 30, 40, None, bugs="XY"), keyed(None, None, None, None, None, bugs="XY")
    z, p, k, how = astuple(survival.permutation_test(cand, base, 60.0))[:4]
    assert k == 2 and z > 3 and p == pytest.approx(1 / 16) and "32 swaps within 5 seed-paired" in how
    assert 0.5 * math.erfc(z / math.sqrt(2)) < 0.001  # what the normal tail said


def test_unpaired_trials_are_split_every_way():
    # 3 against 3 with no common repeats: C(6, 3) = 20 splits, only the labelled one puts all three
    # triggers on the candidate's side
    cand = {0: {"X": 10.0}, 1: {"X": 12.0}, 2: {"X": 14.0}}
    base = {5: {"X": None}, 6: {"X": None}, 7: {"X": None}}
    z, p, k, how = astuple(survival.permutation_test(cand, base, 60.0))[:4]
    assert (k, p) == (1, pytest.approx(1 / 20)) and "20 splits of 6 unpaired" in how


def test_past_the_cap_the_relabellings_are_drawn_with_the_seed(monkeypatch):
    monkeypatch.setattr(survival, "PERMUTATIONS_MAX", 8)
    cand, base = keyed(10, 20, 30, 40, 50), keyed(None, 45, None, None, 55)
    first = survival.permutation_test(cand, base, 60.0, seed=3)
    assert first == survival.permutation_test(cand, base, 60.0, seed=3)
    assert "8 of the 32 swaps" in first.how and first.p >= 1 / 9  # the labelled trials count among the draws


def test_no_bug_to_test_gives_p_one():
    assert astuple(survival.permutation_test(keyed(None, None), keyed(None, None), 60.0))[:3] == (0.0, 1.0, 0)


def test_two_sided_counts_either_direction():
    # the same 5 pairs as the first test, the other way round: one-sided "greater" says nothing, two-sided
    # sees the 2 of 32 relabellings as extreme as the labelled one (it and its mirror image)
    cand, base = keyed(None, None, None, None, None), keyed(30, 30, 30, 30, 30)
    assert survival.permutation_test(cand, base, 60.0).p == 1.0
    assert survival.permutation_test(cand, base, 60.0, alternative="two-sided").p == pytest.approx(2 / 32)


def test_ranking_puts_bugs_before_edges():
    r = run_race(contestants=cands("many-edges", "finds-x"),
                 run_trials=backend({"finds-x": 5, "many-edges": None}, coverage={"many-edges": 900, "finds-x": 100}),
                 settings=RaceSettings(judge="bugs", budget=RaceBudget(budget_s=1000, jobs=2)))
    assert r.rungs[0].ranking[0] == "finds-x"
    edges = run_race(contestants=cands("many-edges", "finds-x"),
                     run_trials=backend({"finds-x": 5, "many-edges": None}, coverage={"many-edges": 900, "finds-x": 100}),
                     settings=RaceSettings(budget=RaceBudget(budget_s=1000, jobs=2)))
    assert edges.rungs[0].ranking[0] == "many-edges" and edges.decision.objective == "edges"


def test_no_trigger_in_the_last_rung_says_the_budget_is_too_small():
    r = run_race(contestants=cands("a", "b"), run_trials=backend({}),
                 settings=RaceSettings(judge="bugs", budget=RaceBudget(budget_s=1000, jobs=2)))
    assert r.decision.is_default and "budget is too small for bugs to separate anything" in r.decision.reason


def test_no_significant_lead_recommends_the_default():
    a = lambda s, rep: [20, 40, 30, 50, 10][rep % 5]  # noqa: E731 - the trials' times interleave
    d = lambda s, rep: [25, 35, 15, 45, 30][rep % 5]  # noqa: E731
    r = run_race(contestants=cands("a"), run_trials=backend({"a": a, DEFAULT.name: d}),
                 settings=RaceSettings(judge="bugs", budget=RaceBudget(budget_s=600, jobs=2)))
    assert r.decision.is_default and "did not trigger them significantly sooner" in r.decision.reason


def test_too_few_differing_pairs_says_the_budget_cannot_separate_them():
    # the candidate triggers X in 2 of the 5 deciding pairs, and in the other 3 neither side triggers
    # anything: those pairs are no evidence either way, so no p below 2^-2 = 0.25 is possible
    cand = lambda s, rep: 10 if rep % 5 < 2 else None  # noqa: E731
    r = run_race(contestants=cands("a"), run_trials=backend({"a": cand, DEFAULT.name: None}),
                 settings=RaceSettings(judge="bugs", budget=RaceBudget(budget_s=600, jobs=2)))
    assert r.decision.is_default and r.decision.p_value == pytest.approx(0.25)
    assert "only 2 of the 5 seed-paired trials differ" in r.decision.reason
    assert "no p below 0.25 was possible" in r.decision.reason and "--final-repeats" in r.decision.reason
    perm = survival.permutation_test(keyed(10, 10, None, None, None), keyed(None, None, None, None, None), 60.0,
                                     alternative="two-sided")
    assert (perm.differing_pairs, perm.least_p, perm.p) == (2, 0.5, pytest.approx(0.5))


def test_mean_capped_time_by_hand():
    trials = [{"X": 10.0, "Y": None}, {"X": None, "Y": 40.0}]
    # X: (10 + 60) / 2 = 35; Y: (60 + 40) / 2 = 50; mean 42.5
    assert by_bugs.mean_capped_time(trials, ["X", "Y"], 60.0) == 42.5
    assert by_bugs.rank_key(trials, ["X", "Y"], 60.0) == (-1.0, 42.5)


def test_an_old_decision_reads_back_as_judged_by_edges():
    d = Decision(recommended="a", is_default=False, winner="a", reason="r", trial_s=10, winner_median=1.0,
                 default_median=0.0, p_value=0.01, a12=1.0, alpha=0.05).to_dict()
    del d["objective"]
    assert Decision.from_dict(d).objective == "edges"
    assert TrialFigures.from_dict({"contestant": "a", "rung": 0, "repeat": 0, "seconds": 10, "coverage": 1,
                                   "execs_per_s": 1.0, "queue": 1}).bugs is None


def test_race_refuses_what_it_cannot_judge(tmp_path):
    from autotune.race import RaceInputs
    from autotune.race.stage import race_target
    from autotune.target import demo_spec

    inputs = RaceInputs(out_dir=tmp_path, corpus=tmp_path, spec=demo_spec())
    with pytest.raises(AutotuneError, match="list strategy"):
        race_target(inputs=inputs, settings=RaceSettings(strategy="search", judge="bugs"))
    with pytest.raises(AutotuneError, match="unknown --judge"):
        race_target(inputs=inputs, settings=RaceSettings(judge="crashes"))
    with pytest.raises(AutotuneError, match="unknown race objective"):
        run_race(contestants=cands("a"), run_trials=backend({}),
                 settings=RaceSettings(judge="crashes", budget=RaceBudget(budget_s=600, jobs=2)))


@pytest.mark.parametrize("args, says", [
    (["--judge", "bugs"], "list strategy"),  # the search strategy cannot judge by bugs
    (["--judge", "crashes", "--strategy", "list"], "unknown --judge"),
])
def test_run_refuses_a_race_it_cannot_judge_before_anything_runs(tmp_path, monkeypatch, args, says):
    """`autotune run --judge ...`: the race's refusal comes before the build, the probe and the tune
    stage (minutes of work), exit 1 with the fix, no traceback, no output directory."""
    from typer.testing import CliRunner

    from autotune.cli.main import app

    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["run", "--demo", *args, "--out", str(tmp_path / "out")])
    assert res.exit_code == 1, res.output
    assert says in res.output and "Traceback" not in res.output and "==>" not in res.output
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_run_judges_the_demo_by_bugs_end_to_end(tmp_path):
    """`autotune run --demo --judge bugs --strategy list`, the real thing (autotune cc, afl-cc, afl-fuzz,
    fatal canaries) on a budget far too small to decide: the race judged every trial by DEMO001's
    canary (the seed `11-steps` reaches it at once), and its decision is by bugs (the default here)."""
    import json
    import shutil

    from typer.testing import CliRunner

    from autotune.cli.main import app

    if not shutil.which("afl-fuzz"):
        pytest.skip("afl-fuzz is not installed")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["run", "--demo", "--judge", "bugs", "--strategy", "list", "--metrics", "ngram-4",
                                   "--probe-time", "2", "--calls", "4", "--budget", "40", "--min-trial", "10",
                                   "--repeats", "1", "--final-repeats", "1", "--seed", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    race = json.loads((out / "race" / "race.json").read_text())["race"]
    assert race["decision"]["objective"] == "bugs"
    trials = [t for r in race["rungs"] for t in r["trials"]]
    assert trials and all("DEMO001" in (t["bugs"] or {}) for t in trials)
    assert "Objective: trigger the target's known bugs sooner" in (out / "race" / "race.md").read_text()


@pytest.mark.parametrize("judge, raced, left_out", [
    ("bugs", ["ngram-4", "caller"], ("guard", "edge")),  # feedback other than the default's first
    ("edges", ["guard", "edge"], ("ngram-4", "caller")),
])
def test_the_list_races_the_judges_own_priorities_when_the_budget_is_short(judge, raced, left_out):
    """Without --metrics, a 480 s list race on 2 cores races two candidates: judged by bugs, the
    metrics whose feedback differs from the default's (on the demo, the edge order left out ngram-4,
    the metric its planted bug is built for); judged by edges, the default's feedback at our cost."""
    from autotune.race.stage import _listed

    heard = []
    settings = RaceSettings(judge=judge, max_collision_rate=0.02, budget=RaceBudget(budget_s=480, jobs=2, repeats=3))
    contestants, dropped, _plan = _listed(
        settings, estimated_keys={"ngram-4": 15_000.0, "caller": 900.0, "edge": 555.0}, afl_cc=True, recipe=True,
        notice=heard.append)
    assert [c.name for c in contestants if not c.is_default] == raced
    assert dropped == left_out and heard and all(m in heard[0] for m in left_out)
    # and what buys the rest, from the plan's own arithmetic (tests/test_race.py checks it against plan_race)
    assert "(--budget 800 races 3, --budget 850 all 4; 2 trials at a time)" in heard[0]


@pytest.mark.parametrize("rule, raced", [
    (3, ["x2-aflpp-classic-ctx2", "x2-ngram-4"]),  # the study found no secondary sooner: OSS-Fuzz's practice first
    (1, ["x2-ngram-4", "x2-aflpp-classic-ctx2"]),  # ours found sooner: it comes first
])
def test_a_portfolio_race_judged_by_bugs_orders_its_secondaries_by_the_study_s_rule(rule, raced, monkeypatch):
    """The portfolio study's rule (autotune.race.evidence.secondary_rule, the plan's amendment of 2026-12-04
    13:55) sets a bug-judged portfolio race's order: with rule 1 our first sensitive secondary comes before
    OSS-Fuzz's practice, so a budget that races one candidate races it; a race judged by edges keeps its order."""
    import autotune.race.stage as stage
    from autotune.race.evidence import SecondaryRule

    monkeypatch.setattr(stage, "secondary_rule", lambda: SecondaryRule(rule=rule, sooner=("ours on expat",)))
    keys = {"ngram-4": 15_000.0, "caller": 900.0, "edge": 555.0}
    budget = RaceBudget(budget_s=960, jobs=1, repeats=3)
    contestants, _dropped, _plan = stage._listed(
        RaceSettings(judge="bugs", instances=2, strategy="list", max_collision_rate=0.02, budget=budget),
        estimated_keys=keys, afl_cc=True, recipe=True, notice=None)
    assert [c.name for c in contestants if not c.is_default][:2] == raced
    edges, _dropped, _plan = stage._listed(
        RaceSettings(judge="edges", instances=2, strategy="list", max_collision_rate=0.02, budget=budget),
        estimated_keys=keys, afl_cc=True, recipe=True, notice=None)
    assert [c.name for c in edges if not c.is_default][0] == "x2-aflpp-classic-ctx2"
