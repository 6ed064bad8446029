"""Exact small-sample statistics for the race's decision (a handful of trials per contestant).

- Mann-Whitney U (Mann and Whitney 1947), one-sided "x tends to be greater than y", with the
  exact permutation distribution of U over every split of the pooled sample (ties count one
  half, and the permutation distribution accounts for them exactly): no normal approximation,
  which is poor below about 8 trials a side.
- Vargha-Delaney A12 (Vargha and Delaney 2000): P(X > Y) + P(X = Y) / 2; 0.5 = no effect.
Both as Klees et al. ("Evaluating Fuzz Testing", CCS 2018) ask for fuzzer comparisons.
"""

from __future__ import annotations

from itertools import combinations
from typing import Sequence

# Enumerating every split of n_x + n_y values costs C(n_x + n_y, n_x) U computations: at 12 a
# side that is 2.7 million; the race runs 2-6 trials a side.
MAX_EXACT_PER_SIDE = 12


def u_statistic(x: Sequence[float], y: Sequence[float]) -> float:
    """U of x over y: the pairs (xi, yj) with xi > yj, plus half the ties."""
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in x for b in y)


def vargha_delaney_a12(x: Sequence[float], y: Sequence[float]) -> float:
    """A12 = U / (n_x n_y): the probability that a trial of x beats one of y (ties half)."""
    if not x or not y:
        raise ValueError("A12 needs at least one value on each side")
    return u_statistic(x, y) / (len(x) * len(y))


def mann_whitney_greater_p(x: Sequence[float], y: Sequence[float]) -> float:
    """Exact one-sided p of H1 "x is stochastically greater than y": the share of the pooled
    sample's splits into |x| and |y| values whose U is at least the observed U."""
    if not x or not y:
        raise ValueError("the Mann-Whitney test needs at least one value on each side")
    if max(len(x), len(y)) > MAX_EXACT_PER_SIDE:
        raise ValueError(f"exact Mann-Whitney is limited to {MAX_EXACT_PER_SIDE} values a side")
    pooled = list(x) + list(y)
    observed = u_statistic(x, y)
    n, k = len(pooled), len(x)
    at_least = total = 0
    for idx in combinations(range(n), k):
        chosen = set(idx)
        xs = [pooled[i] for i in idx]
        ys = [pooled[i] for i in range(n) if i not in chosen]
        total += 1
        if u_statistic(xs, ys) >= observed - 1e-9:
            at_least += 1
    return at_least / total
