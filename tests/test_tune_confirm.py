"""The confirmation round (autotune.tune.confirm): a noise-picked large index gives way to the
smaller equivalent one; recorded figures keep the search's choice; deterministic with a seed."""

from __future__ import annotations

import numpy as np
import pytest

from autotune.emit.report import render_report
from autotune.errors import AutotuneError
from autotune.tune.backends import CachedMeasurer, Measurement, RecordedMeasurer
from autotune.tune.confirm import confirm, iqr
from autotune.tune.inputs import MetricFacts, TuneInputs
from autotune.tune.objective import ObjectiveSettings
from autotune.tune.optimise import grid_search
from autotune.tune.options import TuneSettings
from autotune.tune.run import result_from_search, run_tune
from autotune.mappoint import MapPoint
from autotune.tune.space import SearchSpace

TRUE_EPS = 50_000.0  # a two-level map's per-exec work does not depend on its index size
LUCKY = MapPoint("edge", "twolevel", 22, 8)


class NoisyMeasurer:
    """Seeded log-normal noise around one true rate for every configuration, and one lucky first
    run of LUCKY (another process paused during it), as a loaded host gives."""

    name = "noisy"

    def __init__(self, *, seed: int, sigma: float = 0.12, lucky: float = 1.7):
        self.rng = np.random.default_rng(seed)
        self.sigma = sigma
        self.lucky = lucky
        self.calls: list[MapPoint] = []

    def measure(self, config: MapPoint) -> Measurement:
        first = config not in self.calls
        self.calls.append(config)
        eps = TRUE_EPS * float(np.exp(self.rng.normal(0.0, self.sigma)))
        if config == LUCKY and first:
            eps = TRUE_EPS * self.lucky
        return Measurement(execs_per_s=eps, source="noisy")


def _setup():
    inputs = TuneInputs(metrics={"edge": MetricFacts("edge", 2700, 3000.0, {8: 0.0, 16: 0.0, 32: 0.0, 64: 0.0})},
                        target_exec_ns=20000.0, target="noisy")
    space = SearchSpace(map_pow2=(15, 22), metrics=("edge",), layouts=("twolevel",), widths=(8,))
    return inputs, space, ObjectiveSettings()


def _confirmed(seed: int):
    inputs, space, settings = _setup()
    noisy = NoisyMeasurer(seed=seed)
    search = grid_search(inputs=inputs, measurer=CachedMeasurer(noisy), space=space, settings=settings)
    conf = confirm(search=search, inputs=inputs, space=space, settings=settings, measurer=noisy, k=5, repeats=5)
    return inputs, space, settings, search, conf, noisy


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_confirmation_turns_a_noise_picked_large_index_into_the_smaller_equivalent(seed):
    inputs, space, settings, search, conf, noisy = _confirmed(seed)
    assert search.best.config == LUCKY  # the search alone takes the lucky run: a 2^22 index (16 MiB)
    chosen = conf.chosen.config
    assert conf.changed and chosen.layout == "twolevel" and chosen.metric == "edge"
    assert chosen.map_slots < LUCKY.map_slots and chosen.width_bits == 8
    assert conf.chosen.evaluation.feasible
    # the candidates: the search's top 5 and LUCKY's /2, /4 and smallest feasible index, interleaved
    cands = [r.config for r in conf.rows]
    assert LUCKY in cands and MapPoint("edge", "twolevel", 21, 8) in cands
    assert MapPoint("edge", "twolevel", 20, 8) in cands
    # the smallest index within the collision limit at twice the 3000 estimated keys (autotune.feasibility)
    assert MapPoint("edge", "twolevel", 18, 8) in cands
    assert MapPoint("edge", "twolevel", 17, 8) not in cands  # 6000 keys in 2^17: 2.3 % collisions, above the limit
    assert noisy.calls[-5 * len(cands):] == cands * 5
    # every row's median and the band: the choice is within the leader's spread and the cheapest there
    lead = next(r for r in conf.rows if r.config == conf.leader)
    assert conf.chosen.score_bits >= lead.score_bits - conf.band_bits
    ties = [r for r in conf.rows if r.evaluation.feasible and r.score_bits >= lead.score_bits - conf.band_bits]
    assert conf.chosen.memory_bytes == min(r.memory_bytes for r in ties)
    # recorded in the document and the report
    res = result_from_search(search=search, inputs=inputs, space=space, settings=settings,
                             measurer=noisy, seed=seed, host=None, confirmation=conf)
    assert res.best_config == chosen
    d = res.to_dict()["confirmation"]
    assert d["changed"] and d["search_best"] == LUCKY.to_tune_dict() and all(len(r["repeats_execs_per_s"]) == 5
                                                                          for r in d["rows"])
    md = render_report(res, files=["report.md"])
    assert "## Confirmation" in md and "the search alone had chosen edge/twolevel/4194304/8" in md


def test_confirmation_is_deterministic_with_a_seed():
    a, b = (_confirmed(3)[4].to_dict() for _ in range(2))
    a.pop("elapsed_s"), b.pop("elapsed_s")
    assert a == b


def test_recorded_figures_keep_the_search_choice_and_confirm_0_skips():
    from tests.test_tune_optimiser import FIGURES, recorded_inputs, small_space

    inputs = recorded_inputs()
    space, settings = small_space(inputs), ObjectiveSettings()
    grid = grid_search(inputs=inputs, measurer=RecordedMeasurer(FIGURES["execs_per_s"]), space=space,
                       settings=settings)
    res = run_tune(inputs=inputs, space=space, settings=settings, measurer=RecordedMeasurer(FIGURES["execs_per_s"]),
                   tune=TuneSettings(calls=20, seed=0, confirm_k=3, confirm_repeats=2))
    conf = res.confirmation
    assert conf is not None and conf["band_bits"] == 0.0  # identical repeats: no spread, the top median wins
    top = max(conf["rows"], key=lambda r: r["score_bits"])
    assert res.best_config.to_tune_dict() == top["config"] == conf["chosen"]
    assert all(r["repeats_execs_per_s"] == [r["repeats_execs_per_s"][0]] * 2 for r in conf["rows"])
    assert grid.best.score_bits >= top["score_bits"] - 1e-6
    off = run_tune(inputs=inputs, space=space, settings=settings, measurer=RecordedMeasurer(FIGURES["execs_per_s"]),
                   tune=TuneSettings(calls=20, seed=0, confirm_k=0))
    assert off.confirmation is None and "confirmation" in off.to_dict()
    with pytest.raises(AutotuneError):
        run_tune(inputs=inputs, space=space, settings=settings, measurer=RecordedMeasurer(FIGURES["execs_per_s"]),
                 tune=TuneSettings(calls=5, confirm_k=2, confirm_repeats=0))


def test_iqr():
    assert iqr([1.0]) == 0.0 and iqr([]) == 0.0
    assert iqr([1.0, 2.0, 3.0, 4.0, 5.0]) == pytest.approx(2.0)
