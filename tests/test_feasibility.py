"""One feasibility rule (autotune.feasibility) for tune's search by replay and the race's search in
afl-fuzz: on any census and host, a point is ruled out by one exactly when the other rules it out,
for the same reason."""

from __future__ import annotations

import random

import pytest

from autotune.feasibility import REASONS, Limits, headroom_keys, rule_out
from autotune.mappoint import MapPoint
from autotune.race.search import SpaceFacts, enumerate_space
from autotune.race.search import rule_out as race_rule_out
from autotune.tune.inputs import MetricFacts
from autotune.tune.objective import ObjectiveSettings, infeasible
from autotune.tune.space import SearchSpace
from autotune.vocabulary import KEY_HEADROOM, METRICS, collision_rate


@pytest.mark.parametrize("seed", range(6))
def test_tune_and_the_race_rule_out_the_same_points_for_the_same_reason(seed):
    rng = random.Random(seed)
    keys = {m: 10 ** rng.uniform(2, 6.5) for m in METRICS}
    overflow = {m: {w: rng.choice((0.0, 0.01, 0.2)) for w in (8, 16, 32, 64)} for m in METRICS}
    l2 = rng.choice((None, 256 << 10, 1 << 20, 2 << 20))
    llc = rng.choice((None, 8 << 20, 32 << 20))
    jobs = rng.choice((1, 2, 4))
    c_max = rng.choice((0.01, 0.02, 0.05))
    settings = ObjectiveSettings(max_collision_rate=c_max, l2_bytes=l2, llc_bytes=llc, jobs=jobs)
    facts = SpaceFacts(keys=keys, overflow=overflow, l2_bytes=l2, llc_bytes=llc, instances=jobs,
                       max_collision_rate=c_max, max_counter_overflow=settings.max_counter_overflow)
    space = SearchSpace(map_pow2=(12, 24))
    reasons = set()
    for p in space.grid() + [MapPoint(m, "flat", 16, 8, "wrap") for m in METRICS]:
        mf = MetricFacts(p.metric, int(keys[p.metric]), keys[p.metric], overflow[p.metric])
        why_tune = infeasible(config=p, facts=mf, settings=settings)
        assert why_tune == race_rule_out(p, facts), p
        if why_tune:
            reasons.add(why_tune.split(":", 1)[0])
    assert reasons <= set(REASONS)


def test_the_race_space_is_what_the_rule_leaves():
    facts = SpaceFacts(keys={"edge": 5000.0, "ngram-8": 2e6}, l2_bytes=1 << 20)
    points, ruled = enumerate_space(metrics=["edge", "ngram-8"], facts=facts)
    assert points and all(race_rule_out(p, facts) is None for p in points)
    assert set(ruled) <= set(REASONS) and ruled.get("collisions") and ruled.get("cache")


def test_the_rule_sizes_for_headroom_and_names_each_reason():
    limits = Limits(max_collision_rate=0.02, max_counter_overflow=0.05, l2_bytes=1 << 20, llc_bytes=6 << 20,
                    instances=4)
    assert headroom_keys(1000) == KEY_HEADROOM * 1000 and headroom_keys(0) == KEY_HEADROOM
    assert collision_rate(H=1 << 15, n=1000) < 0.02 < collision_rate(H=1 << 15, n=2000)
    assert rule_out(MapPoint("edge", "flat", 15, 8), estimated_keys=1000, overflow={}, limits=limits).startswith(
        "collisions")
    assert rule_out(MapPoint("edge", "flat", 16, 8), estimated_keys=1000, overflow={}, limits=limits) is None
    wrap = MapPoint("edge", "flat", 16, 8, "wrap")
    assert rule_out(wrap, estimated_keys=1000, overflow={8: 0.3}, limits=limits).startswith("counter overflow")
    assert rule_out(MapPoint("guard", width_bits=8, overflow="wrap"), estimated_keys=1000, overflow={8: 0.3},
                    limits=limits).startswith("counter overflow")
    assert rule_out(MapPoint("guard"), estimated_keys=1e9, overflow={}, limits=limits) is None  # no hash space
    assert rule_out(MapPoint("edge", "flat", 24, 8), estimated_keys=1000, overflow={},
                    limits=Limits(0.02, 0.05)).startswith("map")
    assert rule_out(MapPoint("edge", "flat", 21, 8), estimated_keys=1000, overflow={}, limits=limits).startswith(
        "cache: a flat map")
    four = rule_out(MapPoint("edge", "flat", 20, 8), estimated_keys=1000, overflow={}, limits=limits)
    assert four.startswith("cache: 4 instances")  # 4 x 1 MiB > half of 6 MiB
    assert rule_out(MapPoint("edge", "twolevel", 20, 8), estimated_keys=1000, overflow={}, limits=limits) is None
