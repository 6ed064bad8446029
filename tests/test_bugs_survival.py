"""Time-to-bug (autotune.bugs.attribution) and its survival statistics (autotune.bugs.survival), on
hand-made censored data whose Kaplan-Meier, RMST, its variance and log-rank figures are worked out
by hand below (not by the code under test)."""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from autotune.bugs import survival as sv
from autotune.bugs.attribution import BugTimes, InputHit, TrialBugs, attribute, attribute_trial, hits_of
from autotune.bugs.page import InputBugs
from autotune.paths import kernels_dir
from autotune.afl_output import KeptInput, kept_inputs

PROGRAMS = Path(__file__).parent / "programs"


# --- attribution ---------------------------------------------------------------------------------

def _hit(name: str, time_ms: int | None, reached=(), triggered=(), kind="queue") -> InputHit:
    return InputHit(kind=kind, name=name, time_ms=time_ms, instance="default", reached=tuple(reached),
                    triggered=tuple(triggered), crashed=bool(triggered))


def test_attribute_takes_the_earliest_input_per_bug_and_event():
    hits = [_hit("id:000000,time:0,orig:seed", 0, reached=["A"]),
            _hit("id:000007,time:9000", 9000, reached=["B"]),
            _hit("id:000003,time:4000", 4000, reached=["B"]),
            _hit("id:000000,sig:06,time:12000", 12000, reached=["B"], triggered=["B"], kind="crashes"),
            _hit("id:000001,sig:06,time:7000", 7000, reached=["A"], triggered=["A"], kind="crashes"),
            _hit("id:000002,sig:06,time:99000", 99000, triggered=["C"], kind="crashes"),  # after the end
            _hit("no-time-field", None, reached=["D"])]
    tb = attribute(hits=hits, seconds=60, inputs=20, crashes=3, crashes_without_bug=0, late_inputs=2)
    assert tb.bugs == {"A": BugTimes(0.0, 7.0), "B": BugTimes(4.0, 12.0), "C": BugTimes(60.0, 60.0),
                       "D": BugTimes(60.0, None)}
    assert tb.triggered() == {"A", "B", "C"} and tb.reached() == {"A", "B", "C", "D"}
    assert TrialBugs.from_dict(tb.to_dict()) == tb
    # kept: the triggering inputs and the first to reach each bug (id:000007 reached B after id:000003)
    assert [h.name for h in tb.hits] == [h.name for h in hits if h.name != "id:000007,time:9000"]


def test_hits_of_keeps_only_inputs_that_touched_a_bug(tmp_path):
    kept = [KeptInput("queue", tmp_path / "id:000000,time:0", 0), KeptInput("queue", tmp_path / "id:000001,time:5", 5)]
    replays = [InputBugs(kept[0].path, frozenset(), frozenset(), False),
               InputBugs(kept[1].path, frozenset({"X"}), frozenset(), False)]
    (h,) = hits_of(kept, replays)
    assert (h.name, h.time_ms, h.reached, h.triggered) == ("id:000001,time:5", 5, ("X",), ())
    with pytest.raises(ValueError):
        hits_of(kept, replays[:1])


def test_attribute_trial_replays_an_afl_output_directory(tmp_path):
    """A hand-made afl-fuzz output directory replayed through the real canary harness."""
    if shutil.which("clang") is None:
        pytest.skip("clang is not installed")
    binary = tmp_path / "harness"
    subprocess.run(["clang", "-std=c11", "-O1", "-fsanitize=fuzzer", f"-I{kernels_dir()}",
                    str(PROGRAMS / "canary_harness.c"), "-o", str(binary)], check=True)
    inst = tmp_path / "afl-out" / "default"
    for kind, name, data in [("queue", "id:000000,time:0,execs:0,orig:seed", b"Ax"),
                             ("queue", "id:000001,src:000000,time:1500,execs:99,op:havoc", b"Bxy"),
                             ("queue", "id:000002,src:000001,time:2500,execs:199,op:havoc", b"Bxyq1"),
                             ("crashes", "id:000000,sig:06,src:000001,time:4200,execs:400,op:havoc", b"Bxyz"),
                             ("crashes", "id:000001,sig:06,src:000000,time:3100,execs:300,op:havoc", b"AZ"),
                             ("hangs", "id:000000,src:000000,time:3900,execs:380,op:havoc", b"zz")]:
        (inst / kind).mkdir(parents=True, exist_ok=True)
        (inst / kind / name).write_bytes(data)
    tb = attribute_trial(binary=binary, kept=kept_inputs(tmp_path / "afl-out"), seconds=10)
    assert tb.bugs == {"BUG001": BugTimes(0.0, 3.1), "BUG002": BugTimes(1.5, 4.2)}
    assert (tb.inputs, tb.crashes, tb.crashes_without_bug, tb.late_inputs) == (6, 2, 0, 0)
    assert len(tb.hits) == 4  # the two triggering crashes and the first to reach each bug (id:000002 reached later)


# --- survival, against figures worked out by hand --------------------------------------------------
# Five trials, horizon 10 s: triggered at 2, 3, 5; censored at 3 and 8 (ties: the censored one at 3
# is still at risk at 3). Kaplan-Meier: 1 until 2; 4/5 = 0.8 from 2; 0.8 * 3/4 = 0.6 from 3;
# 0.6 * 1/2 = 0.3 from 5 to the horizon. RMST = 2*1 + 1*0.8 + 2*0.6 + 5*0.3 = 5.5.
# Klein-Moeschberger variance: A(2) = 0.8 + 1.2 + 1.5 = 3.5, A(3) = 2.7, A(5) = 1.5;
# 3.5^2*1/(5*4) + 2.7^2*1/(4*3) + 1.5^2*1/(2*1) = 0.6125 + 0.6075 + 1.125 = 2.345.
TIMES = [2.0, 3.0, 3.0, 5.0, 8.0]
SEEN = [True, True, False, True, False]


def test_km_curve_by_hand():
    c = sv.km_curve(TIMES, SEEN)
    assert c.times == (0.0, 2.0, 3.0, 5.0, 8.0)
    assert c.survival == pytest.approx((1.0, 0.8, 0.6, 0.3, 0.3))


def test_rmst_and_its_interval_by_hand():
    assert sv.rmst_variance(TIMES, SEEN, 10.0) == pytest.approx(2.345)
    est, low, high = sv.rmst(TIMES, SEEN, 10.0)
    se = math.sqrt(2.345)
    assert est == pytest.approx(5.5)
    assert (low, high) == pytest.approx((5.5 - 1.959963984540054 * se, 5.5 + 1.959963984540054 * se))


def test_rmst_never_triggered_is_the_horizon_with_no_spread():
    assert sv.rmst([10.0] * 4, [False] * 4, 10.0) == (10.0, 10.0, 10.0)


def test_rmst_interval_is_clipped_to_the_campaign():
    est, low, high = sv.rmst([1.0, 9.0], [True, True], 10.0)
    assert est == pytest.approx(5.0) and low == 0.0 and high == 10.0


# Log-rank by hand: a triggers at 1 and 3, b at 2 and 4 (all observed). At 1: 2+2 at risk, E_a = 0.5,
# V = 2*2*1*3/(16*3) = 0.25; at 2: 1+2, E_a = 1/3, V = 1*2*1*2/(9*2) = 2/9; at 3: 1+1, E_a = 0.5,
# V = 0.25; at 4: none of a at risk. O_a - E_a = 2 - 4/3 = 2/3, V = 13/18, chi2 = (4/9)/(13/18) = 8/13.
def test_logrank_by_hand():
    chi2, z, p, info = sv.logrank(([1.0, 3.0], [True, True]), ([2.0, 4.0], [True, True]))
    assert info and chi2 == pytest.approx(8 / 13)
    assert z == pytest.approx(math.sqrt(8 / 13))  # a triggers sooner: z > 0
    assert p == pytest.approx(math.erfc(math.sqrt(8 / 13) / math.sqrt(2)))  # chi2(1) tail = 2 * normal tail
    chi2b, zb, pb, _ = sv.logrank(([2.0, 4.0], [True, True]), ([1.0, 3.0], [True, True]))
    assert (chi2b, zb, pb) == pytest.approx((8 / 13, -math.sqrt(8 / 13), p))


def test_logrank_without_events_is_uninformative():
    assert sv.logrank(([5.0, 5.0], [False, False]), ([5.0], [False])) == (0.0, 0.0, 1.0, False)
    # every trial of both reached the bug at once (a seed reaches it at time 0): no variance to test
    assert sv.logrank(([0.0, 0.0], [True, True]), ([0.0, 0.0], [True, True])) == (0.0, 0.0, 1.0, False)


def test_stouffer_by_hand():
    z, p = sv.stouffer([1.0, 2.0])
    assert z == pytest.approx(3 / math.sqrt(2))
    assert p == pytest.approx(math.erfc(3 / math.sqrt(2) / math.sqrt(2)))
    assert sv.stouffer([]) == (0.0, 1.0)


def _trial(seconds: float, **bugs: tuple[float | None, float | None]) -> TrialBugs:
    return TrialBugs(seconds=seconds, bugs={n: BugTimes(*t) for n, t in bugs.items()}, inputs=1, crashes=0,
                     crashes_without_bug=0, late_inputs=0)


def test_bug_report_on_hand_made_trials():
    # the same log-rank case as above on bug X, and bug Y only "fast" triggers (twice, never for base)
    base = [_trial(10, X=(0.5, 2.0)), _trial(10, X=(0.5, 4.0)), _trial(10, Y=(1.0, None))]
    fast = [_trial(10, X=(0.5, 1.0), Y=(1.0, 6.0)), _trial(10, X=(0.5, 3.0), Y=(1.0, 7.0)), _trial(10)]
    rep = sv.bug_report(trials={"base": base, "fast": fast}, horizon_s=10)
    assert rep.bugs == ("X", "Y") and rep.baseline == "base"
    # KM of base's X: triggered at 2, 4, censored at 10 (3 trials): 2/3 from 2, 1/3 from 4
    cell = rep.cell("base", "X")
    assert cell.km.survival == pytest.approx((1.0, 2 / 3, 1 / 3, 1 / 3)) and cell.events == 2
    assert cell.rmst_s == pytest.approx(2 + 2 * 2 / 3 + 6 / 3)
    assert cell.median_s == 4.0
    assert rep.cell("base", "Y").median_s is None and rep.cell("base", "Y").rmst_s == 10.0
    assert rep.only == {"Y": "fast"}
    assert rep.per_trial["base"].values == (0.0, 1.0, 1.0) and rep.per_trial["fast"].values == (0.0, 2.0, 2.0)
    x = next(t for t in rep.logrank if t.bug == "X" and t.event == "trigger")
    y = next(t for t in rep.logrank if t.bug == "Y" and t.event == "trigger")
    assert x.z > 0 and y.z > 0 and y.informative
    comb = next(t for t in rep.combined if t.event == "trigger")
    assert comb.bugs == 2 and comb.z == pytest.approx((x.z + y.z) / math.sqrt(2))
    # reach: two trials of each reached X at 0.5, the third never: the same curves, no one is sooner
    xr = next(t for t in rep.logrank if t.bug == "X" and t.event == "reach")
    assert xr.z == pytest.approx(0.0) and xr.p == pytest.approx(1.0) and xr.informative
    assert sv.BugReport.from_dict(rep.to_dict()) == rep
    assert any("trials per configuration" in n for n in rep.notes)


def test_bug_report_says_when_nothing_was_triggered():
    rep = sv.bug_report(trials={"a": [_trial(10, X=(1.0, None))], "b": [_trial(10)]}, horizon_s=10)
    assert any("no trial triggered any bug" in n for n in rep.notes)
    rep = sv.bug_report(trials={"a": [_trial(10)], "b": [_trial(10)]}, horizon_s=10)
    assert rep.bugs == () and any("no trial reached any canary" in n for n in rep.notes)


def test_bug_report_names_the_crashes_no_canary_explains():
    stray = replace(_trial(10, X=(1.0, 2.0)), crashes=30, crashes_without_bug=4)
    rep = sv.bug_report(trials={"a": [_trial(10, X=(1.0, 2.0)), stray], "b": [_trial(10, X=(1.0, None))]},
                        horizon_s=10)
    note = next(n for n in rep.notes if n.startswith("crashes no canary explains"))
    assert "a: 0, 4 (of 0, 30)" in note and "b:" not in note
    rep = sv.bug_report(trials={"a": [_trial(10, X=(1.0, 2.0))], "b": [_trial(10)]}, horizon_s=10)
    assert not any("no canary explains" in n for n in rep.notes)


def test_only_one():
    assert sv.only_one({"a": {"X", "Y"}, "b": {"Y", "Z"}, "c": set()}) == {"X": "a", "Z": "b"}


def test_a_horizon_shorter_than_the_trials_censors_what_came_after_it():
    # trials of 30 s read at a 10 s horizon: X's trigger at 12 s and Z's reach at 20 s did not happen
    base = [_trial(30, X=(0.5, 2.0)), _trial(30, X=(0.5, 12.0)), _trial(30, Z=(20.0, None))]
    other = [_trial(30, X=(1.0, 4.0)), _trial(30, X=(1.0, 25.0)), _trial(30)]
    rep = sv.bug_report(trials={"base": base, "other": other}, horizon_s=10)
    assert rep.horizon_s == 10.0 and rep.bugs == ("X",)  # Z reached by no trial within 10 s
    assert sv.durations(base, "X", "trigger", 10) == ([2.0, 10.0, 10.0], [True, False, False])
    cell = rep.cell("base", "X")
    assert cell.events == 1 and cell.rmst_s == pytest.approx((2.0 + 10.0 + 10.0) / 3)
    assert rep.per_trial["base"].values == (0.0, 0.0, 1.0) and rep.per_trial["other"].values == (0.0, 0.0, 1.0)
    assert rep.only == {}
    # at the trials' own length the same trials count every event
    full = sv.bug_report(trials={"base": base, "other": other}, horizon_s=30)
    assert full.bugs == ("X", "Z") and full.cell("base", "X").events == 2
    assert full.cell("other", "X").events == 2


# --- Holm's correction over a configuration's bugs ---------------------------------------------------

def test_holm_by_hand():
    # as R's p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm"): 0.005 x 4, 0.01 x 3, 0.03 x 2, then monotone
    assert sv.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert sv.holm([0.5, 0.9]) == [1.0, 1.0] and sv.holm([0.02]) == [0.02] and sv.holm([]) == []


def _lr(bug: str, p: float, informative: bool = True, **kw) -> sv.LogRank:
    return sv.LogRank(config="c", baseline="b", bug=bug, event="trigger", chi2=1.0, z=1.0, p=p,
                      informative=informative, **kw)


def test_with_holm_counts_only_the_bugs_there_is_something_to_test():
    x, y, none = sv.with_holm([_lr("X", 0.01), _lr("Y", 0.04), _lr("Z", 1.0, informative=False)])
    assert (x.p_holm, y.p_holm, none.p_holm) == pytest.approx((0.02, 0.04, 1.0))  # m = 2, not 3
    assert x.p_judged == pytest.approx(0.02) and _lr("W", 0.03).p_judged == 0.03  # no Holm: its own p


def test_bug_report_adjusts_each_configurations_bugs():
    base = [_trial(10, X=(0.5, 2.0)), _trial(10, X=(0.5, 4.0)), _trial(10, Y=(1.0, None))]
    fast = [_trial(10, X=(0.5, 1.0), Y=(1.0, 6.0)), _trial(10, X=(0.5, 3.0), Y=(1.0, 7.0)), _trial(10)]
    rep = sv.bug_report(trials={"base": base, "fast": fast, "same": base}, horizon_s=10)
    for config in ("fast", "same"):
        for event in sv.EVENTS:
            family = [t for t in rep.logrank if t.config == config and t.event == event]
            informative = [t for t in family if t.informative]
            assert [t.p_holm for t in informative] == pytest.approx(sv.holm([t.p for t in informative]))
            assert all(t.p_holm == 1.0 for t in family if not t.informative)
    assert all(t.p_holm is None for t in rep.combined)  # one test per configuration and event
    assert sv.BugReport.from_dict(rep.to_dict()) == rep


def test_a_bug_below_alpha_only_before_holm_is_named_and_not_a_finding():
    tests = sv.with_holm([_lr("X", 0.03), _lr("Y", 0.5)])  # X: 0.03 x 2 = 0.06
    notes = sv.report_notes(trials={"b": [_trial(10, X=(1.0, 2.0))] * 10, "c": [_trial(10, X=(1.0, 2.0))] * 10},
                            bugs=("X", "Y"), tests=tests, horizon_s=10)
    assert any("after Holm's correction over the bugs" in n for n in notes)
    lost = next(n for n in notes if n.startswith("below 0.05 alone"))
    assert "c X (p 0.0300, Holm 0.0600)" in lost and "Y" not in lost
    notes = sv.report_notes(trials={"b": [_trial(10, X=(1.0, 2.0))] * 10}, bugs=("X",),
                            tests=sv.with_holm([_lr("X", 0.01), _lr("Y", 0.5)]), horizon_s=10)
    assert not any("below 0.05 alone" in n or "do not tell" in n for n in notes)  # 0.02 after Holm: a finding


def test_the_log_rank_table_shows_holm_and_stars_by_it():
    from autotune.bugs.render import bugs_markdown

    base = [_trial(10, X=(0.5, 2.0)), _trial(10, X=(0.5, 4.0)), _trial(10, Y=(1.0, None))]
    fast = [_trial(10, X=(0.5, 1.0), Y=(1.0, 6.0)), _trial(10, X=(0.5, 3.0), Y=(1.0, 7.0)), _trial(10)]
    rep = sv.bug_report(trials={"base": base, "fast": fast}, horizon_s=10)
    md = "\n".join(bugs_markdown(rep))
    assert "| configuration | event | bug | chi2 | z | p | Holm |" in md
    x = next(t for t in rep.logrank if t.bug == "X" and t.event == "trigger")
    assert f"| fast | trigger | X | {x.chi2:.3f} | {x.z:+.3f} | {x.p:.4f} | {x.p_holm:.4f} |" in md
    # a document from before the correction: no Holm column value, the star by its own p
    old = rep.to_dict()
    for t in old["logrank"]:
        del t["p_holm"]
    md_old = "\n".join(bugs_markdown(sv.BugReport.from_dict(old)))
    assert f"| fast | trigger | X | {x.chi2:.3f} | {x.z:+.3f} | {x.p:.4f} | - |" in md_old
