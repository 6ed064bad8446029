"""The race judged by bugs (autotune.bugs.race through autotune.race.run_race), on trial figures
made by a deterministic backend (the race's run_trials callable: the trials' outcome given, no
afl-fuzz), and the refusal of what it cannot judge."""

from __future__ import annotations

import math

import pytest

from autotune.bugs import race as by_bugs
from autotune.errors import AutotuneError
from autotune.race import Contestant, Decision, TrialFigures, run_race

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
                 budget_s=1000, jobs=2, objective="bugs")
    d = r.decision
    assert (d.recommended, d.objective, d.winner_median, d.default_median) == ("ngram-8", "bugs", 1.0, 0.0)
    assert "sooner" in d.reason and d.p_value <= 0.05
    # the last rung: 5 seed-paired trials each, X triggered at 30 s by ngram-8 and never by the default:
    # log-rank z (a single informative bug, so Stouffer's z is it) from scipy, one-sided p its normal tail
    last = r.rungs[-1]
    z, p, k = by_bugs.combined_sooner([t.bugs for t in last.trials if t.contestant == "ngram-8"],
                                      [t.bugs for t in last.trials if t.contestant == DEFAULT.name], last.seconds)
    assert k == 1 and z > 0 and d.p_value == pytest.approx(round(p, 6))
    assert p == pytest.approx(0.5 * math.erfc(z / math.sqrt(2)))


def test_ranking_puts_bugs_before_edges():
    r = run_race(contestants=cands("many-edges", "finds-x"),
                 run_trials=backend({"finds-x": 5, "many-edges": None}, coverage={"many-edges": 900, "finds-x": 100}),
                 budget_s=1000, jobs=2, objective="bugs")
    assert r.rungs[0].ranking[0] == "finds-x"
    edges = run_race(contestants=cands("many-edges", "finds-x"),
                     run_trials=backend({"finds-x": 5, "many-edges": None}, coverage={"many-edges": 900, "finds-x": 100}),
                     budget_s=1000, jobs=2)
    assert edges.rungs[0].ranking[0] == "many-edges" and edges.decision.objective == "edges"


def test_no_trigger_in_the_last_rung_says_the_budget_is_too_small():
    r = run_race(contestants=cands("a", "b"), run_trials=backend({}), budget_s=1000, jobs=2, objective="bugs")
    assert r.decision.is_default and "budget is too small for bugs to separate anything" in r.decision.reason


def test_no_significant_lead_recommends_the_default():
    a = lambda s, rep: [20, 40, 30, 50, 10][rep % 5]  # noqa: E731 - the trials' times interleave
    d = lambda s, rep: [25, 35, 15, 45, 30][rep % 5]  # noqa: E731
    r = run_race(contestants=cands("a"), run_trials=backend({"a": a, DEFAULT.name: d}), budget_s=600, jobs=2,
                 objective="bugs")
    assert r.decision.is_default and "did not trigger them significantly sooner" in r.decision.reason


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
    from autotune.race.stage import race_target
    from autotune.target import demo_spec

    with pytest.raises(AutotuneError, match="list strategy"):
        race_target(out_dir=tmp_path, corpus=tmp_path, spec=demo_spec(), strategy="search", judge="bugs")
    with pytest.raises(AutotuneError, match="unknown --judge"):
        race_target(out_dir=tmp_path, corpus=tmp_path, spec=demo_spec(), judge="crashes")
    with pytest.raises(AutotuneError, match="unknown race objective"):
        run_race(contestants=cands("a"), run_trials=backend({}), budget_s=600, jobs=2, objective="crashes")
