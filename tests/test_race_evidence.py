"""The portfolio study's finding, as a portfolio race cites it (autotune.race.evidence): every figure is the
pooled statistics' own, and the report and the terminal cite it for portfolio races only."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from autotune.race.core import Contestant, portfolio_of
from autotune.race.evidence import (LIBXML2, STUDIES, finding_from_pooled, secondaries_line, secondaries_note,
                                    secondary_rule)

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("study", STUDIES, ids=lambda s: s.library)
def test_every_figure_the_race_cites_is_the_pooled_statistics(study):
    """The figures are written once in the code; the pooled statistics pool.py wrote for the study are
    their source. A study re-pooled (more trials, another test) must update both."""
    doc = json.loads((ROOT / study.source).read_text())
    arms = {a["name"]: a for a in doc["arms"]}
    base = arms[study.baseline]
    assert base["config"] == "default" and base["trials"] == study.trials
    assert base["trial_seconds"] == study.minutes * 60 and doc["horizon_s"] == study.minutes * 60
    assert base["yardstick_edges_median"] == study.baseline_edges
    for a in arms.values():
        assert a["aflpp"] == study.aflpp and set(a["compilers"].values()) == {study.clang}
    combined = {c["config"]: c for c in doc["bugs"]["combined"] if c["event"] == "trigger"}
    edges = {m["arm"]: m for m in doc["measures"] if m["measure"] == "yardstick_edges"}
    assert {a.arm for a in study.arms} == set(arms) - {study.baseline} == set(combined) == set(edges)
    for a in study.arms:
        assert combined[a.arm]["baseline"] == study.baseline and a.combined_p == combined[a.arm]["p"]
        assert a.later_side == (combined[a.arm]["z"] < 0)  # z > 0: sooner than the baseline
        holm = [t for t in doc["bugs"]["logrank"] if t["event"] == "trigger" and t["config"] == a.arm
                and t["p_holm"] is not None and t["p_holm"] < 0.05]
        assert a.bugs_sooner == tuple(t["bug"] for t in holm if t["z"] > 0)
        assert a.bugs_later == tuple(t["bug"] for t in holm if t["z"] < 0)
        assert a.edges == edges[a.arm]["median"] and a.edges_p == edges[a.arm]["mann_whitney"]["p"]
        assert arms[a.arm]["trials"] == study.trials
        by_instance = arms[a.arm]["execs_per_s_median_by_instance"]
        assert (a.main_execs, a.secondary_execs) == (by_instance["main"], by_instance["s1"])
    # bugs per trial: each arm's median and its test against the baseline's
    per_trial, tests = doc["bugs"]["per_trial"], {t["config"]: t for t in doc["bugs"]["per_trial_tests"]}
    assert study.baseline_bugs == per_trial[study.baseline]["median"]
    for a in study.arms:
        assert tests[a.arm]["baseline"] == study.baseline
        assert (a.bugs, a.bugs_p) == (per_trial[a.arm]["median"], tests[a.arm]["mann_whitney"]["p"])
    # "every trial of every arm triggered the same N bugs", exactly when it is so
    triggered = {}
    for s in doc["bugs"]["survival"]:
        if s["event"] == "trigger" and s["events"]:
            triggered.setdefault(s["bug"], []).append(s["events"] == s["trials"])
    same = {v for p in per_trial.values() for v in p["values"]} == {len(triggered)} and all(
        len(v) == len(arms) and all(v) for v in triggered.values())
    assert study.same_bugs == (len(triggered) if same else None)
    # and the one reading of the file that benchmarks/bugs/study_finding.py prints gives the literal itself
    assert finding_from_pooled(doc, library=study.library, source=study.source,
                               secondaries={a.arm: (a.secondary, a.ours) for a in study.arms}) == study


def test_the_note_says_sooner_only_where_the_study_found_it():
    assert LIBXML2.sooner() == ()
    assert "no sensitive secondary triggered a known bug sooner than AFL++'s default pair" in LIBXML2.text()
    assert "AFL++ 5.02c" in LIBXML2.text() and "clang 21.1.8" in LIBXML2.text() and "9,619.5" in LIBXML2.text()
    assert secondaries_line().startswith("the portfolio study: on libxml2, neither our collision-free ctx-2 nor")
    found = replace(LIBXML2, arms=(replace(LIBXML2.arms[0], combined_p=0.01, later_side=False), LIBXML2.arms[1]))
    assert found.sooner() == ("B",)
    assert "sooner than AFL++'s default pair: arm B" in found.text()
    assert found.short().startswith("on libxml2, our collision-free ctx-2 as the -S triggered known bugs sooner")
    later_only = replace(LIBXML2, arms=(replace(LIBXML2.arms[0], combined_p=0.01, later_side=True),))
    assert later_only.sooner() == () and later_only.arms[0].later()  # later is not sooner
    # a bug that survives Holm's correction counts on its side; one later bug vetoes sooner
    by_bug = replace(LIBXML2, arms=(replace(LIBXML2.arms[0], bugs_sooner=("XML011",)),))
    assert by_bug.sooner() == ("B",) and "XML011 sooner after Holm" in by_bug.text()
    mixed = replace(LIBXML2, arms=(replace(LIBXML2.arms[0], bugs_sooner=("XML011",), bugs_later=("XML004",)),))
    assert mixed.sooner() == () and mixed.arms[0].later()
    assert later_only.short().startswith("on libxml2, our collision-free ctx-2 as the -S triggered no known bug sooner")


def test_a_study_whose_trials_triggered_different_bugs_gives_each_arms_median():
    varied = replace(LIBXML2, same_bugs=None, baseline_bugs=3.5,
                     arms=(replace(LIBXML2.arms[0], bugs=4.0, bugs_p=0.17),))
    text = varied.text()
    assert "the same" not in text
    assert "known bugs a trial triggered, median: A 3.5, B 4 (Mann-Whitney p = 0.17)" in text
    assert "every trial of every arm triggered the same 5 bugs" in LIBXML2.text()


def _outcome(*, instances: int):
    single = Contestant(name="aflpp-default", is_default=True, cc_kind="afl", description="AFL++'s default")
    default = portfolio_of(default=single, secondary=None, instances=instances) if instances > 1 else single
    race = SimpleNamespace(
        decision=SimpleNamespace(recommended=default.name, reason="nothing beat the default", objective="edges",
                                 is_default=True),
        contestants=[default], contestant=lambda name: default, rungs=[], budget_s=60.0, jobs=1, repeats=1, eta=3,
        seed=0, stopped_early=False, search=None)
    return SimpleNamespace(race=race, target={"kind": "demo"}, yardstick={"kind": "aflpp-pcguard"}, compilers=None,
                           dropped=(), recommended=single)


@pytest.mark.parametrize("instances", [1, 2])
def test_a_portfolio_race_cites_the_study_in_its_report_and_summary(instances, tmp_path, capsys):
    from autotune.cli.race import print_race_summary
    from autotune.race.report import markdown

    outcome = _outcome(instances=instances)
    report = markdown(outcome)
    print_race_summary(outcome, tmp_path)
    printed = capsys.readouterr().out
    if instances == 1:
        assert "portfolio study" not in report and "portfolio study" not in printed
        return
    assert secondaries_note() in report
    assert f"evidence: {secondaries_line()}; figures in {tmp_path}/race.md" in printed
    assert "portfolio: autotune portfolio --demo --config default --instances 2" in printed


def test_the_rule_the_studies_set_follows_the_plan_s_amendment():
    """plan-2026-12-01-portfolio-study.md, amendment of 2026-12-04 13:55: 1, ours sooner on a library and
    later on none; 2, AFL++'s CLASSIC,CTX-2 sooner on libxml2 and ours not; 3, no arm sooner."""
    ours, theirs = LIBXML2.arms
    assert ours.ours and not theirs.ours
    assert secondary_rule().rule == secondary_rule(STUDIES).rule
    # what the two studies set: neither library's secondaries sooner (libxml2 B and C, expat B): rule 3
    assert [s.library for s in STUDIES] == ["libxml2", "expat"] and secondary_rule().rule == 3
    none = secondary_rule((LIBXML2,))
    assert none.rule == 3 and not none.sensitive_first
    assert none.text() == "So a secondary is recommended only when it wins its own race; otherwise AFL++'s default pair."
    expat = replace(LIBXML2, library="expat", arms=(replace(ours, secondary="our ngram-4", combined_p=0.01,
                                                            later_side=False),))
    one = secondary_rule((LIBXML2, expat))
    assert one.rule == 1 and one.sensitive_first and one.sooner == ("our ngram-4 on expat",)
    assert "tries our sensitive secondary first among its candidates, before OSS-Fuzz's portfolio" in one.text()
    # ours later on another library vetoes rule 1
    later = replace(LIBXML2, arms=(replace(ours, combined_p=0.01, later_side=True), theirs))
    assert secondary_rule((later, expat)).rule == 3
    # AFL++'s own sooner on libxml2, ours not: rule 2; ours sooner there too: rule 1
    oss = replace(LIBXML2, arms=(ours, replace(theirs, bugs_sooner=("XML011",))))
    two = secondary_rule((oss,))
    assert two.rule == 2 and not two.sensitive_first and "AFL++'s CLASSIC,CTX-2 on libxml2 sooner" in two.text()
    both = replace(oss, arms=(replace(ours, bugs_sooner=("XML011",)), oss.arms[1]))
    assert secondary_rule((both,)).rule == 1
    assert secondaries_note().endswith(secondary_rule().text())


def test_study_finding_prints_the_recorded_literal_and_refuses_a_wrong_arm():
    import subprocess
    import sys

    from autotune.race.evidence import ArmFinding, StudyFinding  # noqa: F401 (the printed literal names them)

    script = [sys.executable, str(ROOT / "benchmarks" / "bugs" / "study_finding.py"), str(ROOT / LIBXML2.source),
              "--library", "libxml2"]
    arms = [f"--arm={a.arm}={a.secondary}:{'ours' if a.ours else 'aflpp'}" for a in LIBXML2.arms]
    r = subprocess.run(script + arms, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert eval(r.stdout) == LIBXML2  # noqa: S307 (our own repr)
    r = subprocess.run(script + arms[:1], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0 and "has arms ['B', 'C']" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run(script + ["--arm", "B=ours"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0 and "NAME=TEXT:ours|aflpp" in r.stderr
