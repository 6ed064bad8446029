"""The Chao estimate of the total keys, on synthetic campaigns whose total is known."""

import numpy as np
import pytest

from autotune.probe.estimators import chao1, frequency_counts


def _campaign(*, total, probs, samples, rng):
    """Incidence counts of `total` keys with per-execution hit probability probs over samples."""
    hits = rng.binomial(samples, probs)
    return frequency_counts(incidences=hits[hits > 0].tolist())


def test_frequency_counts():
    assert frequency_counts(incidences=[1, 1, 2, 0, 5, 1]) == {1: 3, 2: 1, 5: 1}


def test_formula_by_hand():
    est = chao1(freq={1: 10, 2: 5, 3: 7}, samples=100)
    assert est.observed == 22 and est.singletons == 10 and est.doubletons == 5
    assert est.estimate == pytest.approx(22 + (99 / 100) * 100 / 10)
    no_q2 = chao1(freq={1: 4, 3: 2}, samples=10)
    assert no_q2.estimate == pytest.approx(6 + 0.9 * 4 * 3 / 2) and no_q2.sd is None


def test_complete_census_estimates_no_more():
    est = chao1(freq={5: 10, 9: 3}, samples=50)
    assert est.estimate == est.observed == 13


def test_recovers_a_known_total_homogeneous():
    """Equal discovery chances: Chao is close to unbiased. Mean over 40 campaigns within 3 %."""
    total, samples = 2000, 400
    rng = np.random.default_rng(1)
    ests, obs = [], []
    for _ in range(40):
        f = _campaign(total=total, probs=np.full(total, 1.5 / samples), samples=samples, rng=rng)
        e = chao1(freq=f, samples=samples)
        ests.append(e.estimate)
        obs.append(e.observed)
    assert np.mean(obs) < 0.85 * total  # the campaigns really missed keys
    assert abs(np.mean(ests) - total) < 0.03 * total


def test_heterogeneous_is_a_lower_bound_closer_than_observed():
    """Unequal chances (as coverage keys have): Chao underestimates, but beats the observed count."""
    total, samples = 3000, 1000
    rng = np.random.default_rng(7)
    probs = rng.lognormal(mean=np.log(1 / samples), sigma=1.0, size=total).clip(0, 1)
    f = _campaign(total=total, probs=probs, samples=samples, rng=rng)
    e = chao1(freq=f, samples=samples)
    assert e.observed < e.estimate <= 1.05 * total
    assert total - e.estimate < 0.5 * (total - e.observed)
    assert e.sd is not None and e.sd > 0


def test_roundtrip():
    from autotune.probe.estimators import RichnessEstimate

    e = chao1(freq={1: 3, 2: 2}, samples=9)
    assert RichnessEstimate.from_dict(e.to_dict()) == e
