"""The race's search (autotune.race.search) on recorded-style trial figures: a synthetic objective
with noise stands in for afl-fuzz (a process boundary: run_trials), the model, the plan, the
feasibility rules and the decision are the real ones. The search in the real afl-fuzz runs in
tests/test_race.py (test_race_on_the_demo_in_the_real_afl_fuzz) and the README's main job."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from types import SimpleNamespace

import pytest

from autotune.errors import AutotuneError
from autotune.mappoint import MapPoint
from autotune.race.core import Contestant, RaceResult, TrialFigures
from autotune.race.options import RaceBudget, RaceSettings
from autotune.race.search import (REPLAY_SD, SPEED_ELASTICITY, SPEED_WEIGHT, Model, Space, SpaceFacts, budget_for,
                                  contestant_for, enumerate_space, fit_search, nearest_feasible, plan_search,
                                  plan_sentence, prior_seeds, replay_rows, rule_out, run_search)
from autotune.surrogate import REPLAY_FIDELITY

METRICS = ("guard", "edge", "ngram-2", "ngram-4", "ngram-8", "caller", "ctx")
FACTS = SpaceFacts(keys={"guard": 2000.0, "edge": 3000.0, "ngram-2": 8000.0, "ngram-4": 20000.0,
                         "ngram-8": 60000.0, "caller": 9000.0, "ctx": 30000.0},
                   overflow={"edge": {8: 0.10, 16: 0.0, 32: 0.0}}, l2_bytes=2 << 20)
DEFAULT = Contestant(name="aflpp-default", is_default=True, cc_kind="afl")


def synthetic(truth, *, noise=8.0):
    """(prepare, run_trials, points): afl-fuzz replaced by ``truth(point) -> (edges, execs/s)`` plus
    seeded Gaussian noise per trial; the default covers 1000 edges at 10k execs/s."""
    points: dict[str, MapPoint] = {}
    built: list[str] = []

    def prepare(cands):
        for c in cands:
            built.append(c.name)
        return {}

    def run_trials(specs):
        out = []
        for s in specs:
            cov, eps = (1000.0, 10000.0) if s.contestant == DEFAULT.name else truth(points[s.contestant])
            r = random.Random(f"{s.contestant}/{s.rung}/{s.repeat}")
            out.append(TrialFigures(contestant=s.contestant, rung=s.rung, repeat=s.repeat, seconds=s.seconds,
                                    coverage=max(0, int(cov * (1 + 0.01 * s.rung) + r.gauss(0, noise))),
                                    execs_per_s=eps * (1 + r.gauss(0, 0.1)), queue=100))
        return out

    return prepare, run_trials, points, built


def search(truth, *, budget_s=3600, seed=1, facts=FACTS, metrics=METRICS, prepare=None, replay=(), **kw):
    space, ruled = enumerate_space(metrics=metrics, facts=facts)
    seeds = prior_seeds(space=space)
    prep, run_trials, points, built = synthetic(truth)
    for p in space:
        points[p.name] = p

    return run_search(default=DEFAULT, space=Space(points=tuple(space), facts=facts, seeds=tuple(seeds), ruled_out=ruled,
                                                   replay=tuple(replay)),
                      prepare=prepare or prep, run_trials=run_trials,
                      settings=RaceSettings(seed=seed, budget=RaceBudget(budget_s=budget_s, jobs=2)), **kw), space


def rich_wins(p: MapPoint) -> tuple[float, float]:
    """ngram-4 finds 8 % more edges; a flat map past 2^18 slows and loses; 16-bit counters help a little."""
    cov = 1080.0 if p.metric == "ngram-4" else 1010.0 if p.metric == "guard" else 1000.0
    if p.layout == "flat" and p.map_pow2 > 18:
        cov -= 30 * (p.map_pow2 - 18)
    if p.width_bits == 16:
        cov += 10
    return cov, 20000.0


def test_the_search_converges_on_a_noisy_objective_and_recommends_the_winner():
    r, space = search(rich_wins)
    assert r.search["strategy"] == "search"
    origins = [p["origin"] for p in r.search["proposals"]]
    assert origins[0].startswith("prior") and any(o.startswith("model") for o in origins)
    assert not r.decision.is_default
    assert r.contestant(r.decision.recommended).name.startswith("ngram-4")
    assert r.decision.p_value <= 0.05
    # the model learnt from every rung: one observation per rung a point ran in
    obs = r.search["observations"]
    assert {o["rung"] for o in obs} == set(range(len(r.rungs)))
    conv = r.search["convergence"]
    assert [c["afl_seconds"] for c in conv] == sorted(c["afl_seconds"] for c in conv)
    assert conv[-1]["best"].startswith("ngram-4")
    # predicted vs measured: every observation after the first batch carries the model's prediction
    first = r.search["batches"][0]
    assert all(o["predicted"] is None for o in obs[:first])
    assert all(o["predicted"] is not None for o in obs[first:])


def test_the_search_is_reproducible_from_its_seed():
    a, _ = search(rich_wins, seed=5)
    b, _ = search(rich_wins, seed=5)
    assert [p["name"] for p in a.search["proposals"]] == [p["name"] for p in b.search["proposals"]]
    assert a.decision == b.decision


def test_every_proposal_respects_the_collision_limit_and_the_host():
    facts = SpaceFacts(keys={**FACTS.keys, "ngram-8": 5e6}, l2_bytes=256 << 10, max_collision_rate=0.01)
    r, space = search(rich_wins, facts=facts)
    assert not any(p.metric == "ngram-8" for p in space)  # 10 M keys fit no map within 1 %
    for prop in r.search["proposals"]:
        p = MapPoint.from_dict(prop["point"])
        assert rule_out(p, facts) is None
    assert r.search["space"]["ruled_out"]["collisions"] > 0
    assert r.search["space"]["ruled_out"]["cache"] > 0
    # a flat map larger than the L2 is ruled out by name
    why = rule_out(MapPoint("edge", "flat", 19, 8), facts)
    assert why is not None and why.startswith("cache") and "L2" in why
    why = rule_out(MapPoint("edge", "flat", 16, 8, "wrap"), FACTS)
    assert why is not None and why.startswith("counter overflow")


def test_the_default_stands_when_nothing_beats_it():
    r, _ = search(lambda p: (990.0, 12000.0))
    assert r.decision.is_default
    assert r.decision.recommended == DEFAULT.name
    assert "the default is recommended" in r.decision.reason or "stopped early" in r.decision.reason


def test_one_far_out_pair_does_not_decide_a_rung():
    """libtiff, 11-26: guard ahead of the default in two of its three rung-0 pairs, its first trial
    at a quarter of its speed (its afl-fuzz seed led it to slow inputs); edge behind in all three. The
    rung promotes guard."""
    space, ruled = enumerate_space(metrics=METRICS, facts=FACTS)
    seeds = prior_seeds(space=space)
    assert [p.metric for p, _ in seeds[:2]] == ["guard", "edge"]

    def run_trials(specs):
        out = []
        for s in specs:
            cov, eps = 2560.0, 50000.0
            if s.contestant.startswith("guard"):
                cov, eps = (1820.0, 14000.0) if (s.rung, s.repeat) == (0, 0) else (2600.0, 62000.0)
            elif s.contestant != DEFAULT.name:
                cov, eps = 2460.0, 38000.0
            out.append(TrialFigures(contestant=s.contestant, rung=s.rung, repeat=s.repeat, seconds=s.seconds,
                                    coverage=int(cov), execs_per_s=eps, queue=100))
        return out

    r = run_search(default=DEFAULT, space=Space(points=tuple(space), facts=FACTS, seeds=tuple(seeds), ruled_out=ruled),
                   prepare=lambda cands: {}, run_trials=run_trials,
                   settings=RaceSettings(seed=1, budget=RaceBudget(budget_s=480, jobs=2)))
    rung0 = r.rungs[0]
    assert len(rung0.entered) == 2 and rung0.kept[0].startswith("guard")
    guard0 = next(o for o in r.search["observations"] if o["rung"] == 0 and o["name"].startswith("guard"))
    assert len(guard0["pairs"]) == 3 and guard0["objective"] == sorted(guard0["pairs"])[1] > 0


def test_a_candidate_whose_build_fails_is_dropped_with_the_reason_and_the_search_goes_on():
    calls = []

    def prepare(cands):
        calls.extend(c.name for c in cands)
        return {c.name: "blocks build failed: undefined reference" for c in cands
                if dict(c.build).get("AUTOTUNE_CC_INSTRUMENT") == "blocks"}

    r, _ = search(rich_wins, prepare=prepare)
    dropped = r.search["dropped"]
    assert dropped and all("blocks build failed" in d["reason"] for d in dropped)
    assert len(dropped) == 1  # its kind's other points are never proposed again
    kinds = {dict(c.build).get("AUTOTUNE_CC_INSTRUMENT") for c in r.contestants if not c.is_default}
    assert "blocks" not in kinds and kinds
    assert len(r.rungs) >= 2 and r.decision.recommended


def test_too_small_a_budget_names_the_minimum():
    with pytest.raises(AutotuneError) as e:
        plan_search(candidates=1, first_batch=1, batch=2, budget=RaceBudget(budget_s=60, jobs=2))
    assert "--budget" in e.value.fix and any(ch.isdigit() for ch in e.value.fix)
    plan, batches = plan_search(candidates=6, first_batch=4, batch=2, budget=RaceBudget(budget_s=3000, jobs=2))
    assert batches == (4, 2) and [p.candidates for p in plan] == [6, 3, 2, 1]


@pytest.mark.parametrize("jobs", [1, 2, 3, 8])
def test_what_the_budget_buys_is_what_the_plan_buys(jobs):
    """budget_for(k) is the smallest budget at which fit_search plans k proposals or more (so the budgets
    the user is told to pass buy what they say), for any number of parallel trials."""
    def proposals(budget):
        try:
            return sum(fit_search(space_size=500, seeds=4, budget=replace(rungs, budget_s=budget))[1])
        except AutotuneError:
            return 0

    rungs = RaceBudget(jobs=jobs, repeats=3, eta=2, min_trial_s=20, overhead_s=5.0)
    for k in range(1, 13):
        b = budget_for(candidates=k, seeds=4, budget=rungs)
        assert proposals(b) >= k > proposals(b - 1), (k, b)


def test_the_plan_sentence_names_the_prior_the_model_and_the_next_budgets():
    rungs = RaceBudget(jobs=2, repeats=3, eta=2, min_trial_s=20, overhead_s=5.0)

    def plan_and_sentence(budget_s, space_size=500):
        budget = replace(rungs, budget_s=budget_s)
        plan, batches = fit_search(space_size=space_size, seeds=4, budget=budget)
        return plan, batches, plan_sentence(plan=plan, batches=batches, seeds=4, space_size=space_size, budget=budget)

    plan, batches, text = plan_and_sentence(480)
    more = budget_for(candidates=sum(batches) + 1, seeds=4, budget=rungs)
    first = budget_for(candidates=5, seeds=4, budget=rungs)
    assert text.startswith(f"the budget (480 s) buys {sum(batches)} proposals ({sum(batches)} from the prior, 0 from")
    assert f"--budget {more} buys {sum(batches) + 1}" in text and f"--budget {first} the model's first" in text
    plan, batches, text = plan_and_sentence(first)
    assert "1 from the model" in text or "2 from the model" in text
    assert "the model's first" not in text
    assert ";" not in plan_and_sentence(3600, space_size=1)[2]  # nothing more to buy


def test_the_history_round_trips_through_json():
    r, _ = search(rich_wins, budget_s=1800)
    back = RaceResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back == r


def test_first_proposals_come_from_tunes_best_per_family():
    space, _ = enumerate_space(metrics=METRICS, facts=FACTS)

    def ev(metric, layout, pow2, width, eps, lost=0.0, feasible=True, score=20.0):
        return SimpleNamespace(config=SimpleNamespace(metric=metric, layout=layout, map_pow2=pow2, width_bits=width),
                               score_bits=score, feasible=feasible, execs_per_s=eps,
                               precision=SimpleNamespace(lost_keys=lost, counter_overflow=0.0))

    # by replayed speed and precision (tune's richer-metric credit left out): ngram-8's higher tune
    # score does not put it before a faster ngram-4
    evs = [ev("edge", "flat", 14, 8, 200_000, lost=0.3), ev("edge", "twolevel", 20, 8, 150_000),
           ev("ngram-4", "twolevel", 22, 16, 180_000), ev("ngram-8", "twolevel", 22, 8, 90_000, score=25.0),
           ev("ctx", "twolevel", 27, 64, 300_000, feasible=False), ev("caller", "twolevel", 20, 8, 100_000)]
    seeds = prior_seeds(space=space, tune_evaluations=evs)
    names = [p.name for p, _ in seeds]
    assert names == ["guard", "ngram-4-tl22-w16", "edge-tl20-w8", "caller-tl20-w8"]
    # without tune: the fixed list, sized by the census
    assert [p.metric for p, _ in prior_seeds(space=space)] == ["guard", "edge", "ngram-4", "caller"]
    # a point tune liked that the census rules out is moved to the smallest feasible size
    assert nearest_feasible(MapPoint("edge", "flat", 16, 8), space) == MapPoint("edge", "flat", 18, 8)


def test_contestants_take_the_cheapest_build_kind_and_valid_runtime_settings():
    from autotune.runtime.config import RuntimeConfig

    c = contestant_for(MapPoint("edge", "flat", 17, 8), FACTS)
    assert dict(c.build) == {"AUTOTUNE_CC_INSTRUMENT": "edge"} and dict(c.settings)["AUTOTUNE_KEY_HASH"] == "afl"
    c = contestant_for(MapPoint("ngram-4", "flat", 16, 8), FACTS)
    assert dict(c.build) == {"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "4"}
    c = contestant_for(MapPoint("edge", "flat", 17, 16), FACTS)
    assert dict(c.build) == {"AUTOTUNE_CC_INSTRUMENT": "blocks"}
    c = contestant_for(MapPoint("ctx", "twolevel", 20, 32, "saturate"), FACTS)
    assert dict(c.build) == {"AUTOTUNE_CC_INSTRUMENT": "full"}
    rc = RuntimeConfig.from_env(dict(c.settings))
    assert (rc.metric, rc.layout, rc.index_slots, rc.counter_bits, rc.overflow) == ("ctx", "twolevel", 1 << 20, 32,
                                                                                   "saturate")
    assert contestant_for(MapPoint("guard"), FACTS).build == (("AUTOTUNE_CC_INSTRUMENT", "guard"),)
    g16 = contestant_for(MapPoint("guard", width_bits=16), FACTS)
    assert dict(g16.build) == {"AUTOTUNE_CC_INSTRUMENT": "blocks"} and dict(g16.settings)["AUTOTUNE_COUNTER_BITS"] == "16"
    # one binary for all (no recipe): never an inline kind
    one = SpaceFacts(keys=FACTS.keys, inline=False)
    assert dict(contestant_for(MapPoint("edge", "flat", 17, 8), one).build) == {"AUTOTUNE_CC_INSTRUMENT": "blocks"}
    # names are unique across the space and safe as directory names
    space, _ = enumerate_space(metrics=METRICS, facts=FACTS)
    names = [p.name for p in space]
    assert len(set(names)) == len(names) and all("/" not in n and " " not in n for n in names)


def _race_dir(tmp_path, result, name="race"):
    from autotune.profile import detect_host
    from autotune.race.stage import RaceOutcome, write_outputs

    out = tmp_path / name
    out.mkdir()
    outcome = RaceOutcome(race=result, yardstick={"kind": "aflpp-pcguard"}, binaries={}, target={"kind": "demo"},
                          dropped=(), written=(), probe_dir=None, tune_dir=None, max_collision_rate=0.01,
                          host=detect_host().to_dict())
    write_outputs(outcome=outcome, out_dir=out)
    return out


def test_the_race_directory_is_the_recommendation_validate_and_preflight_read(tmp_path):
    from autotune.errors import DocumentError
    from autotune.preflight.tuned import load_tuned

    won, _ = search(rich_wins, budget_s=1800)
    assert not won.decision.is_default
    d = _race_dir(tmp_path, won)
    tuned = load_tuned(d)
    chosen = won.contestant(won.decision.recommended)
    assert tuned.kind == "race" and tuned.recommendation.recorded_execs == () and tuned.max_collision_rate == 0.01
    assert tuned.autotune_build_vars == chosen.build_vars
    assert tuned.runtime.metric == chosen.env["AUTOTUNE_METRIC"]
    assert tuned.autotune_env.values["AUTOTUNE_INDEX_FILE"] == str((d / "autotune-index.bin").resolve())
    assert tuned.build_env.values == {} and tuned.host is not None  # afl-build.env: AFL++'s default
    lost, _ = search(lambda p: (990.0, 12000.0))
    d2 = _race_dir(tmp_path, lost, "race-default")
    assert load_tuned(d2).autotune_env is None and not (d2 / "autotune-run.env").exists()
    # a corrupt or incomplete race directory is a DocumentError naming the file
    (d2 / "recommendation.json").write_text("{not json")
    with pytest.raises(DocumentError) as e:
        load_tuned(d2)
    assert "recommendation.json" in str(e.value.path)
    (d2 / "recommendation.json").unlink()  # a race directory of before: the recommendation is race.json's
    (d2 / "race.json").write_text("{not json")
    with pytest.raises(DocumentError) as e:
        load_tuned(d2)
    assert "race.json" in str(e.value.path)
    (d / "afl-run.env").unlink()
    with pytest.raises(DocumentError) as e:
        load_tuned(d)
    assert "afl-run.env" in str(e.value.path) and "autotune race" in e.value.fix


def test_maps_for_instances_sharing_the_last_level_cache():
    """With N instances, a map whose N copies fill more than half the shared LLC is ruled out
    (BigMap Fig. 9: parallel instances' maps compete for it); one instance is judged by its L2 only."""
    one = SpaceFacts(keys=FACTS.keys, l2_bytes=2 << 20, llc_bytes=4 << 20)
    four = SpaceFacts(keys=FACTS.keys, l2_bytes=2 << 20, llc_bytes=4 << 20, instances=4)
    p = MapPoint("edge", "flat", 20, 8)  # 1 MiB scanned per execution
    assert rule_out(p, one) is None
    why = rule_out(p, four)
    assert why is not None and why.startswith("cache") and "4 instances" in why
    assert rule_out(MapPoint("edge", "twolevel", 20, 8), four) is None  # its dense array is small


def tune_eval(point, eps, lost=0.0, overflow=0.0, feasible=True):
    """One of tune's replay evaluations as the race reads it (autotune.tune.objective.Evaluation's fields)."""
    return SimpleNamespace(config=point, execs_per_s=eps, feasible=feasible,
                           precision=SimpleNamespace(lost_keys=lost, counter_overflow=overflow))


def test_tunes_evaluations_join_the_model_on_the_races_scale():
    guard_tune = MapPoint.of_slots(metric="guard", layout="flat", map_slots=2048, width_bits=8)
    evs = [tune_eval(guard_tune, 100_000), tune_eval(MapPoint("edge", "flat", 16, 8), 50_000, lost=0.1),
           tune_eval(MapPoint("ngram-8", "twolevel", 22, 16), 25_000, overflow=0.02, feasible=False),
           tune_eval(MapPoint("edge", "flat", 20, 8), 0.0)]  # a replay that measured nothing is no data
    rows = dict(replay_rows(evs))
    assert len(rows) == 3
    # guard is the reference (our runtime's count of AFL++'s coverage), on the race's guard point
    assert rows[MapPoint("guard", "flat", 0, 8)] == 0.0
    k = SPEED_ELASTICITY + SPEED_WEIGHT
    assert rows[MapPoint("edge", "flat", 16, 8)] == pytest.approx(math.log(0.9) + k * math.log(0.5))
    assert rows[MapPoint("ngram-8", "twolevel", 22, 16)] == pytest.approx(math.log(0.98) + k * math.log(0.25))
    # without a guard evaluation the fastest configuration is the reference
    assert dict(replay_rows(evs[1:3]))[MapPoint("edge", "flat", 16, 8)] == pytest.approx(math.log(0.9))
    assert replay_rows([]) == ()

    # the model is fitted on replay alone, before any afl-fuzz trial, and its posterior at the race's
    # first rung orders points as replay does
    model = Model(facts=FACTS, seed=3, replay=replay_rows(evs))
    assert model.fit()
    (g, _), (e, _), (n8, _) = model.predict([MapPoint("guard", "flat", 0, 8), MapPoint("edge", "flat", 16, 8),
                                            MapPoint("ngram-8", "twolevel", 22, 16)], 0.0)
    assert g > e > n8
    assert all(f == REPLAY_FIDELITY and v == REPLAY_SD ** 2 for _, f, _, v in model._rows())


def test_afl_fuzz_trials_outweigh_a_replay_that_misleads():
    """Replay says ngram-4 is the slowest and worst; afl-fuzz finds it best: the search still recommends
    it, and race.json keeps the replay rows it learnt from."""
    space, _ = enumerate_space(metrics=METRICS, facts=FACTS)
    picks = random.Random(7).sample(space, 30)  # about what a tune of 24-48 calls evaluates
    evs = [tune_eval(p, 5_000.0 if p.metric == "ngram-4" else 20_000.0, lost=0.3 if p.metric == "ngram-4" else 0.0)
           for p in picks + [p for p in space if p.metric == "ngram-4"][:3]]
    r, _ = search(rich_wins, replay=replay_rows(evs))
    assert r.contestant(r.decision.recommended).name.startswith("ngram-4")
    rows = r.search["replay"]["rows"]
    assert len(rows) == len(evs) and r.search["replay"]["fidelity"] == REPLAY_FIDELITY
    assert RaceResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r



@pytest.mark.parametrize("alt_edges, wins", [(1200.0, True), (900.0, False)])
def test_an_alternative_outside_the_space_races_first_by_its_own_pairs(alt_edges, wins):
    """An alternative (OSS-Fuzz's portfolio in the real race) enters the first batch before the prior's
    seeds, is ranked by the median of its own pairs, never joins the model, and is recommended when it
    beats the default and everything the search proposed; else it is reported and loses."""
    space, ruled = enumerate_space(metrics=METRICS, facts=FACTS)
    prep, run_points, points, built = synthetic(rich_wins)
    for p in space:
        points[p.name] = p
    alt = Contestant(name="oss", cc_kind="afl", build=(("AFL_LLVM_INSTRUMENT", "CLASSIC,CTX-2"),))

    def run_trials(specs):
        mine = [s for s in specs if s.contestant == "oss"]
        out = list(run_points([s for s in specs if s.contestant != "oss"]))
        return out + [TrialFigures(contestant="oss", rung=s.rung, repeat=s.repeat, seconds=s.seconds,
                                   coverage=int(alt_edges * (1 + 0.01 * s.rung)) + s.repeat, execs_per_s=8000.0,
                                   queue=100) for s in mine]

    r = run_search(default=DEFAULT, space=Space(points=tuple(space), facts=FACTS, seeds=tuple(prior_seeds(space=space)),
                                                ruled_out=ruled),
                   prepare=prep, run_trials=run_trials, alternatives=(alt,),
                   settings=RaceSettings(seed=1, budget=RaceBudget(budget_s=3600, jobs=2)))
    assert built[0] == "oss" and r.contestants[1].name == "oss"  # built and raced first
    assert "oss" in r.rungs[0].entered and r.search["alternatives"]["names"] == ["oss"]
    assert all(o["name"] != "oss" for o in r.search["observations"])
    assert all(p["name"] != "oss" for p in r.search["proposals"])
    first = next(o for o in r.search["alternatives"]["observations"] if o["rung"] == 0)
    assert first["objective"] > 0.15 if wins else first["objective"] < -0.05
    assert (r.decision.recommended == "oss") is wins
    back = RaceResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back == r


def test_a_rung_only_an_alternative_reaches_leaves_the_search_s_progress_as_it_was():
    """A short race (the CI failure of 2026-12-03: `race --demo --instances 2 --metrics guard --budget 55`)
    where only the alternative goes on to the next rung: that rung has no modelled observation, and the
    search's progress keeps its last point instead of failing on an empty rung."""
    space, ruled = enumerate_space(metrics=("guard",), facts=FACTS)
    prep, run_points, points, _ = synthetic(rich_wins)
    for p in space:
        points[p.name] = p
    alt = Contestant(name="oss", cc_kind="afl", build=(("AFL_LLVM_INSTRUMENT", "CLASSIC,CTX-2"),))

    def run_trials(specs):
        mine = [s for s in specs if s.contestant == "oss"]
        out = [t if t.contestant == DEFAULT.name else replace(t, coverage=t.coverage - 200)  # the point loses
               for t in run_points([s for s in specs if s.contestant != "oss"])]
        return out + [TrialFigures(contestant="oss", rung=s.rung, repeat=s.repeat, seconds=s.seconds,
                                   coverage=1200 + s.repeat, execs_per_s=8000.0, queue=100) for s in mine]

    r = run_search(default=DEFAULT, space=Space(points=tuple(space), facts=FACTS, seeds=tuple(prior_seeds(space=space)),
                                                ruled_out=ruled),
                   prepare=prep, run_trials=run_trials, alternatives=(alt,),
                   settings=RaceSettings(seed=3, budget=RaceBudget(budget_s=55, jobs=1, repeats=1, final_repeats=1,
                                                                   min_trial_s=4)))
    assert [tuple(x.entered) for x in r.rungs] == [("oss", "guard"), ("oss",)]  # only the alternative went on
    later = [o for o in r.search["observations"] if o["rung"] >= 1]
    assert not later  # no modelled point reached the later rung
    assert [c["rung"] for c in r.search["convergence"]] == [0]  # progress noted where the model learnt something
