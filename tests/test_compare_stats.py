"""The comparison statistics against values computed by hand (and scipy where it agrees)."""

from __future__ import annotations

import math

import pytest

from autotune import stats


def test_a12_by_hand():
    # x = [1, 2, 3] vs y = [4, 5, 6]: x wins no pair of 9 -> 0; the reverse wins all 9 -> 1
    assert stats.a12([1, 2, 3], [4, 5, 6]) == 0.0
    assert stats.a12([4, 5, 6], [1, 2, 3]) == 1.0
    # x = [1, 2, 2] vs y = [2, 3, 4]: 1 wins none; each 2 ties the 2 (1/2) and loses to 3, 4
    # -> (0 + 0.5 + 0.5) / 9 = 1/9
    assert stats.a12([1, 2, 2], [2, 3, 4]) == pytest.approx(1 / 9)
    # x = [3, 5] vs y = [4]: 3 < 4, 5 > 4 -> 1/2
    assert stats.a12([3, 5], [4]) == 0.5
    assert stats.a12_magnitude(1 / 9) == "large" and stats.a12_magnitude(0.6) == "small"
    assert stats.a12_magnitude(0.5) == "negligible" and stats.a12_magnitude(0.3) == "medium"


def test_mann_whitney_exact_no_ties():
    # x = [1, 2, 3], y = [4, 5, 6]: U_x = 0, the most extreme of the C(6, 3) = 20 splits, and so is
    # its mirror (U = 9): p = 2/20 = 0.1 (scipy's exact method agrees: no ties here)
    r = stats.mann_whitney([1, 2, 3], [4, 5, 6])
    assert (r.u, r.method) == (0.0, "exact") and r.p == pytest.approx(0.1)
    from scipy.stats import mannwhitneyu

    for x, y in (([1, 2, 3], [4, 5, 6]), ([1.5, 7, 3, 9], [2, 4, 8, 10, 11]), ([10, 20, 30, 40, 50], [15, 25, 35, 45, 55])):
        ref = mannwhitneyu(x, y, alternative="two-sided", method="exact")
        got = stats.mann_whitney(x, y)
        assert got.u == float(ref.statistic) and got.p == pytest.approx(float(ref.pvalue))


def test_mann_whitney_exact_with_ties():
    # x = [1, 2, 2], y = [2, 3, 4]; pooled mid-ranks 1, 3, 3, 3, 5, 6; R_x = 1 + 3 + 3 = 7, E R_x = 10.5.
    # The 20 splits' rank sums: 7 (3 ways), 9 (4), 10 (3), 11 (3), 12 (4), 14 (3);
    # |R - 10.5| >= 3.5 for R in {7, 14}: 6 of 20 -> p = 0.3; U_x = 7 - 3*4/2 = 1
    r = stats.mann_whitney([1, 2, 2], [2, 3, 4])
    assert r.u == 1.0 and r.p == pytest.approx(0.3) and r.method == "exact"


def test_mann_whitney_equal_samples_p_is_one():
    r = stats.mann_whitney([5, 5, 5], [5, 5, 5])
    assert r.u == 4.5 and r.p == 1.0
    r = stats.mann_whitney([1, 2, 3], [1, 2, 3])
    assert r.u == 4.5 and r.p == 1.0


def test_mann_whitney_large_samples_use_the_normal_approximation():
    x, y = list(range(0, 30)), list(range(10, 40))
    r = stats.mann_whitney(x, y)
    assert math.comb(60, 30) > stats.EXACT_MAX_SPLITS and r.method == "asymptotic"
    from scipy.stats import mannwhitneyu

    assert r.p == pytest.approx(float(mannwhitneyu(x, y, alternative="two-sided", method="asymptotic").pvalue))


def test_median_interval_order_statistics():
    # n = 5: P(B <= 0) = 1/32, so [x(1), x(5)] covers 1 - 2/32 = 93.75 % (< 95 %: the best there is)
    s = stats.median_interval([3, 1, 5, 2, 4])
    assert (s.median, s.low, s.high, s.confidence) == (3, 1, 5, 0.9375)
    # n = 6: [x(1), x(6)] covers 1 - 2/64 = 96.875 %; k = 2 would give 1 - 2*7/64 = 78.1 %
    s = stats.median_interval([6, 5, 4, 3, 2, 1])
    assert (s.median, s.low, s.high, s.confidence) == (3.5, 1, 6, 0.96875)
    # n = 9: k = 2: 1 - 2*(1 + 9)/512 = 96.1 %; k = 3: 1 - 2*46/512 = 82.0 % -> [x(2), x(8)]
    s = stats.median_interval(list(range(1, 10)))
    assert (s.median, s.low, s.high) == (5, 2, 8) and s.confidence == pytest.approx(1 - 20 / 512, abs=1e-6)
    s = stats.median_interval([7])
    assert (s.median, s.low, s.high, s.confidence) == (7, 7, 7, 0.0)
    assert stats.Summary.from_dict(s.to_dict()) == s


def test_spearman_by_hand():
    # same order -> 1, reversed -> -1
    assert stats.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert stats.spearman([1, 2, 3, 4], [9, 7, 5, 1]) == pytest.approx(-1.0)
    # no ties: rho = 1 - 6 sum d^2 / (n (n^2 - 1)); ranks x 1..4, y 2,1,4,3 -> d^2 sum 4 -> 1 - 24/60 = 0.6
    assert stats.spearman([1, 2, 3, 4], [20, 10, 40, 30]) == pytest.approx(0.6)
    # ties: x ranks 1, 2.5, 2.5, 4; y ranks 1..4 -> Pearson of the ranks by hand:
    # mean 2.5 each; sxy = (-1.5)(-1.5) + 0 + 0 + 1.5*1.5 = 4.5; sxx = 4.5; syy = 5 -> 4.5 / sqrt(22.5)
    assert stats.spearman([5, 7, 7, 9], [1, 2, 3, 4]) == pytest.approx(4.5 / math.sqrt(22.5))
    from scipy.stats import spearmanr

    x, y = [3, 1, 4, 1, 5, 9, 2, 6], [2, 7, 1, 8, 2, 8, 1, 8]
    assert stats.spearman(x, y) == pytest.approx(float(spearmanr(x, y).statistic))
    assert math.isnan(stats.spearman([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError):
        stats.spearman([1, 2], [1])


def test_mean_coverage_is_the_area_under_the_curve_over_its_length():
    from autotune.compare.compare import mean_coverage

    # 0..60 s from 0 to 60 edges, then flat to 120 s: (60 * 30 + 60 * 60) / 120 = 45
    assert mean_coverage([(0, 0), (60, 60), (120, 60)]) == pytest.approx(45.0)
    # the same plateau reached at 120 s instead: (60 * 15 + 60 * 45) / 120 = 30
    assert mean_coverage([(0, 0), (60, 30), (120, 60)]) == pytest.approx(30.0)
    assert mean_coverage([(0, 5)]) is None and mean_coverage([]) is None


def test_a_tie_at_the_plateau_is_told_apart_by_who_got_there_sooner():
    """Recorded figures: libyaml, AFL++'s default against guard, 5 x 10 min (AFL++ 4.04c, committed in
    benchmarks/results). Both end on libyaml's plateau (a tie on the final count), guard gets there
    sooner in every trial but one."""
    import json
    from pathlib import Path

    from autotune.compare.compare import CompareResult, compare_pairs

    path = (Path(__file__).resolve().parents[1] / "benchmarks" / "results"
            / "compare-2026-11-26-libyaml-default-vs-search-guard-5x10min.json")
    result = CompareResult.from_dict(json.loads(path.read_text()))
    pairs = {p.measure: p for p in compare_pairs(result.configs)}
    final, mean = pairs["yardstick_edges"], pairs["mean_edges"]
    assert (final.median_a, final.median_b) == (1655, 1660) and final.test.p == pytest.approx(0.4603, abs=1e-4)
    assert mean.median_a < mean.median_b and mean.a12 == pytest.approx(3 / 25)
    assert mean.test.p == pytest.approx(0.0476, abs=1e-4)
