"""The survival figures of a recorded `autotune compare --demo --yardstick bugs` (tests/fixtures/
bugs_demo_compare.json: per configuration and trial the kept inputs that reached or triggered
DEMO001, with their afl-fuzz names, times and attribution; recorded by
benchmarks/bugs/record_fixture.py from a real run, AFL++ and clang versions inside).

The figures are recomputed through compare's own path (trials -> bug_report_of -> compare.md's bugs
section) and checked three ways: against the figures recorded with the run, against the times read
straight from the inputs' names, and against independent computations (with every censoring at the
campaign's end the Kaplan-Meier RMST is the plain mean of min(T, horizon); scipy's log-rank p)."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from autotune.bugs.attribution import InputHit, TrialBugs, attribute
from autotune.bugs.render import bugs_markdown
from autotune.bugs.survival import BugReport, permutation_test
from autotune.compare.compare import bug_report_of, outcome_of
from autotune.compare.config import ConfigSpec
from autotune.afl_output import PlotData, time_of
from autotune.trials.trial import TrialResult, TrialSpec

FIXTURE = Path(__file__).parent / "fixtures" / "bugs_demo_compare.json"
DOC = json.loads(FIXTURE.read_text())
HORIZON = float(DOC["seconds"])


def _trials() -> dict[str, list[TrialBugs]]:
    """Each recorded trial's time to bug, attributed again from its recorded inputs."""
    out = {}
    for name, c in DOC["configs"].items():
        out[name] = [attribute(hits=[InputHit.from_dict(h) for h in t["hits"]], seconds=t["seconds"],
                               inputs=t["inputs"], crashes=t["crashes"], crashes_without_bug=t["crashes_without_bug"],
                               late_inputs=t["late_inputs"]) for t in c["trials"]]
    return out


def _report() -> BugReport:
    """Through compare's own path: trials as compare records them, then bug_report_of."""
    outcomes = []
    for name, trials in _trials().items():
        results = [TrialResult(spec=TrialSpec(config=name, index=k, binary="/b", env={}, seeds="/s",
                                              seconds=int(HORIZON), rng_seed=k, out_dir=f"/o/{k}"),
                               core=None, command=(), applied_env={}, stats={"execs_per_sec": 1.0},
                               plot=PlotData(columns=(), rows=()), kept={}, wall_s=0.0, bugs=tb)
                   for k, tb in enumerate(trials)]
        outcomes.append(outcome_of(config=ConfigSpec(name=name, cc_kind="afl"), binary="/b", trials=results))
    rep = bug_report_of(outcomes, HORIZON)
    assert rep is not None
    return rep


def test_the_fixture_is_a_real_multi_configuration_run():
    assert DOC["afl"].startswith("AFL++ ") and "clang" in DOC["clang"]
    assert list(DOC["configs"])[0] == "default" and len(DOC["configs"]) >= 2
    assert all(len(c["trials"]) >= 2 for c in DOC["configs"].values())


def test_attribution_again_gives_the_recorded_times():
    for name, trials in _trials().items():
        for tb, rec in zip(trials, DOC["configs"][name]["trials"]):
            assert {b: t.to_dict() for b, t in tb.bugs.items()} == rec["bugs"]


def test_trigger_times_are_the_earliest_triggering_inputs_by_their_names():
    for name, c in DOC["configs"].items():
        for t in c["trials"]:
            for bug, times in t["bugs"].items():
                named = [time_of(h["name"]) for h in t["hits"] if bug in h["triggered"]]
                want = min((HORIZON if ms is None else min(ms / 1000, HORIZON) for ms in named), default=None)
                assert times["trigger_s"] == want


def test_figures_are_the_recorded_ones():
    rep = _report()
    want = BugReport.from_dict(DOC["expected"])
    assert rep.bugs == want.bugs and rep.configs == want.configs and rep.only == want.only
    for got, exp in zip(rep.survival, want.survival):
        assert (got.config, got.bug, got.event, got.events) == (exp.config, exp.bug, exp.event, exp.events)
        assert (got.rmst_s, got.rmst_low_s, got.rmst_high_s) == pytest.approx((exp.rmst_s, exp.rmst_low_s,
                                                                                exp.rmst_high_s))
        assert got.median_s == exp.median_s
    for got, exp in zip(list(rep.logrank) + list(rep.combined), list(want.logrank) + list(want.combined)):
        assert (got.config, got.bug, got.event, got.informative) == (exp.config, exp.bug, exp.event, exp.informative)
        assert (got.chi2, got.z) == pytest.approx((exp.chi2, exp.z))
        if got.bug != "(combined)":  # the combined p: a permutation since 2026-11-28, the normal tail when recorded
            assert got.p == pytest.approx(exp.p)


def test_the_combined_p_relabels_the_seed_paired_trials():
    """compare's combined test pairs trial k of each configuration (the same afl-fuzz seed) and takes
    its two-sided p from every swap within the pairs (autotune.bugs.survival.permutation_test)."""
    rep = _report()
    trials = _trials()
    base = rep.baseline
    for t in rep.combined:
        if not t.informative:
            continue
        times = {name: {k: {b: tb.bugs[b].time(t.event) for b in tb.bugs} for k, tb in enumerate(trials[name])}
                 for name in (t.config, base)}
        perm = permutation_test(times[t.config], times[base], HORIZON, alternative="two-sided")
        n = len(trials[base])
        assert (t.z, t.p) == pytest.approx((perm.z, perm.p))
        assert t.method == f"permutation of whole trials: all of the {2 ** n} swaps within {n} seed-paired trials"
        assert t.p >= 2 / 2 ** n  # the labelled trials and their mirror image are as extreme


def test_rmst_is_the_mean_capped_time_when_censoring_is_only_at_the_end():
    """Every trial runs the whole campaign, so the Kaplan-Meier curve is the empirical one and its
    area up to the horizon is the mean of min(T, horizon) (never = horizon)."""
    rep = _report()
    for name, trials in _trials().items():
        for bug in rep.bugs:
            for event in ("trigger", "reach"):
                ts = [t.bugs[bug].time(event) if bug in t.bugs else None for t in trials]
                capped = [HORIZON if t is None else min(t, HORIZON) for t in ts]
                assert rep.cell(name, bug, event).rmst_s == pytest.approx(statistics.fmean(capped))


def test_logrank_p_agrees_with_scipy():
    from scipy import stats

    rep = _report()
    trials = _trials()
    for t in rep.logrank:
        if not t.informative:
            continue
        samples = []
        for name in (t.config, t.baseline):
            times = [tb.bugs[t.bug].time(t.event) if t.bug in tb.bugs else None for tb in trials[name]]
            samples.append(stats.CensoredData(uncensored=[x for x in times if x is not None],
                                              right=[HORIZON for x in times if x is None]))
        res = stats.logrank(*samples)
        assert t.p == pytest.approx(float(res.pvalue)) and t.z == pytest.approx(float(res.statistic))
        assert t.chi2 == pytest.approx(t.z ** 2)
    for c in rep.combined:
        zs = [t.z for t in rep.logrank if t.config == c.config and t.event == c.event and t.informative]
        assert c.z == pytest.approx(sum(zs) / math.sqrt(len(zs)) if zs else 0.0)


def test_compare_md_shows_the_figures():
    rep = _report()
    text = "\n".join(bugs_markdown(rep, aflpp=DOC["afl"]))
    for cell in rep.survival:
        assert f"RMST {cell.rmst_s:,.1f} [{cell.rmst_low_s:,.1f}, {cell.rmst_high_s:,.1f}]" in text
    assert "Bugs only one configuration triggered" in text
