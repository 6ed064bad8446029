"""The statistics of a fuzzer comparison, as small pure functions (Klees et al., "Evaluating Fuzz
Testing", CCS 2018: medians over several trials, the Mann-Whitney U test, the Vargha-Delaney A12
effect size).

- :func:`a12` — Vargha & Delaney (2000), "A critique and improvement of the CL common language
  effect size statistics of McGraw and Wong", J. Educ. Behav. Stat. 25(2): A12 = P(X > Y) +
  0.5 P(X = Y) over all pairs, computed by counting pairs. 0.5 = no difference; their guide:
  0.56 small, 0.64 medium, 0.71 large (:data:`A12_THRESHOLDS`, symmetric below 0.5).
- :func:`mann_whitney` — Mann-Whitney U test, two-sided (compare) or one-sided "x greater" (the
  race's decision whether a candidate beats AFL++'s default). Small samples (at most
  :data:`EXACT_MAX_SPLITS` ways to split the pooled sample) get the exact permutation p-value,
  enumerated over every split of the pooled values with ties at their mid-ranks (so ties are
  handled exactly, which scipy's ``method="exact"`` does not do); larger ones the normal
  approximation with the tie correction and a continuity correction (scipy.stats.mannwhitneyu,
  ``method="asymptotic"``, pinned).
- :func:`median_interval` — the distribution-free confidence interval of the median by order
  statistics (Conover, *Practical Nonparametric Statistics*, 3rd ed. 1999, sect. 3.2): the
  interval [x_(k), x_(n+1-k)] with the largest k whose binomial(n, 1/2) coverage
  1 - 2 P(B <= k-1) is at least the level asked; with n <= 5 no k reaches 95 %, so it is
  [min, max] and the coverage it does have (1 - 2^(1-n)) is reported with it.
- :func:`spearman` — Spearman's rank correlation rho: Pearson's correlation of the two samples'
  mid-ranks (ties share their mean rank), which is what the race's question "does a short trial
  rank the contestants as a long campaign does?" needs.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

CONFIDENCE = 0.95  # the level of median_interval (Klees et al. report 95 % intervals)
EXACT_MAX_SPLITS = 200_000  # C(m+n, m) up to which the exact test enumerates (m = n = 9: 48,620; 10: 184,756)
A12_THRESHOLDS = ((0.71, "large"), (0.64, "medium"), (0.56, "small"))  # Vargha & Delaney (2000), p. 106
SCHEMA_VERSION = 1


def median(values: Sequence[float]) -> float:
    xs = sorted(values)
    if not xs:
        raise ValueError("median of no values")
    n = len(xs)
    return float(xs[n // 2]) if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def a12(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Vargha-Delaney A12: the probability that a value of xs beats one of ys (ties count half)."""
    if not xs or not ys:
        raise ValueError("A12 needs two non-empty samples")
    wins2 = sum(2 if x > y else 1 if x == y else 0 for x in xs for y in ys)  # twice the U statistic
    return wins2 / (2 * len(xs) * len(ys))


def a12_magnitude(a: float) -> str:
    d = abs(a - 0.5) + 0.5
    return next((name for limit, name in A12_THRESHOLDS if d >= limit), "negligible")


@dataclass(frozen=True)
class MannWhitney:
    u: float  # U of the first sample: pairs it wins plus half the ties
    p: float  # two-sided, or one-sided (H1: x greater) when alternative == "greater"
    method: str  # "exact" (permutation over every split, mid-ranks) or "asymptotic"
    n_x: int
    n_y: int

    def to_dict(self) -> dict:
        return {"u": self.u, "p": self.p, "method": self.method, "n_x": self.n_x, "n_y": self.n_y}

    @classmethod
    def from_dict(cls, d: dict) -> "MannWhitney":
        return cls(u=float(d["u"]), p=float(d["p"]), method=str(d["method"]), n_x=int(d["n_x"]), n_y=int(d["n_y"]))


def _midranks2(values: Sequence[float]) -> list[int]:
    """Twice the mid-rank of each value (integers, so sums compare exactly)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks2 = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks2[order[k]] = (i + 1) + (j + 1)  # 2 x the mean of ranks i+1..j+1
        i = j + 1
    return ranks2


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rho of paired samples: Pearson's r of their mid-ranks; NaN when either sample has
    one value only (no ranking to correlate)."""
    if len(xs) != len(ys):
        raise ValueError(f"spearman needs paired samples, got {len(xs)} and {len(ys)} values")
    if len(xs) < 2:
        raise ValueError("spearman needs at least two pairs")
    rx, ry = _midranks2(xs), _midranks2(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return math.nan
    return sxy / math.sqrt(sxx * syy)


def mann_whitney(xs: Sequence[float], ys: Sequence[float], *, alternative: str = "two-sided") -> MannWhitney:
    """Mann-Whitney U test of xs against ys (see the module's docstring for the method);
    ``alternative`` "two-sided", or "greater" (H1: xs tend to be larger than ys)."""
    if alternative not in ("two-sided", "greater"):
        raise ValueError(f"alternative must be 'two-sided' or 'greater', not {alternative!r}")
    m, n = len(xs), len(ys)
    if m == 0 or n == 0:
        raise ValueError("the Mann-Whitney test needs two non-empty samples")
    u = a12(xs, ys) * m * n
    if math.comb(m + n, m) <= EXACT_MAX_SPLITS:
        ranks2 = _midranks2([*xs, *ys])
        total2 = sum(ranks2)
        # R_x - E R_x with E R_x = m (m+n+1) / 2; in units of 1/2 rank, times (m+n) to stay integral
        dev = (lambda r: abs(r)) if alternative == "two-sided" else (lambda r: r)
        obs = dev((m + n) * sum(ranks2[:m]) - m * total2)
        hits = splits = 0
        for combo in itertools.combinations(ranks2, m):
            splits += 1
            if dev((m + n) * sum(combo) - m * total2) >= obs:
                hits += 1
        return MannWhitney(u=u, p=hits / splits, method="exact", n_x=m, n_y=n)
    from scipy.stats import mannwhitneyu

    res = mannwhitneyu(list(xs), list(ys), alternative=alternative, method="asymptotic", use_continuity=True)
    return MannWhitney(u=u, p=float(res.pvalue), method="asymptotic", n_x=m, n_y=n)


EXACT_MAX_PAIRS = 20  # the exact signed-rank test enumerates 2^n sign assignments


def signed_rank(diffs: Sequence[float], *, alternative: str = "greater") -> float:
    """Exact Wilcoxon signed-rank p-value of paired differences (x_i - y_i): zero differences dropped
    (Wilcoxon's convention), mid-ranks of |d| for ties, every one of the 2^n sign assignments
    enumerated (n <= EXACT_MAX_PAIRS; beyond, the normal approximation). ``alternative`` "greater" (H1: the differences tend to be positive) or
    "two-sided". No pairs left (all zero): p = 1. Valid whatever the pairs share (the same afl-fuzz
    seed, the same host moment): under H0 each difference is as likely positive as negative."""
    if alternative not in ("two-sided", "greater"):
        raise ValueError(f"alternative must be 'two-sided' or 'greater', not {alternative!r}")
    d = [float(x) for x in diffs if x != 0]
    n = len(d)
    if n == 0:
        return 1.0
    if n > EXACT_MAX_PAIRS:  # 2^n sign assignments is too many: the normal approximation, as scipy does
        from scipy.stats import wilcoxon

        return float(wilcoxon(d, alternative=alternative, method="approx", correction=True).pvalue)
    ranks2 = _midranks2([abs(x) for x in d])  # twice the mid-ranks: integers
    total2 = sum(ranks2)
    w2 = sum(r for r, x in zip(ranks2, d) if x > 0)
    dev = (lambda w: abs(2 * w - total2)) if alternative == "two-sided" else (lambda w: 2 * w - total2)
    obs = dev(w2)
    hits = 0
    for signs in itertools.product((0, 1), repeat=n):
        if dev(sum(r for r, s in zip(ranks2, signs) if s)) >= obs:
            hits += 1
    return hits / 2 ** n


@dataclass(frozen=True)
class Summary:
    """Median of a sample and the order-statistic interval around it."""

    n: int
    median: float
    low: float
    high: float
    confidence: float  # the interval's actual coverage (>= CONFIDENCE when n >= 6)
    minimum: float
    maximum: float
    values: tuple[float, ...]

    def to_dict(self) -> dict:
        return {"n": self.n, "median": self.median, "low": self.low, "high": self.high,
                "confidence": self.confidence, "min": self.minimum, "max": self.maximum, "values": list(self.values)}

    @classmethod
    def from_dict(cls, d: dict) -> "Summary":
        return cls(n=int(d["n"]), median=float(d["median"]), low=float(d["low"]), high=float(d["high"]),
                   confidence=float(d["confidence"]), minimum=float(d["min"]), maximum=float(d["max"]),
                   values=tuple(float(v) for v in d["values"]))


def _binom_cdf_half(k: int, n: int) -> float:
    """P(B <= k) for B ~ binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(0, k + 1)) / 2 ** n if k >= 0 else 0.0


def median_interval(values: Sequence[float], *, level: float = CONFIDENCE) -> Summary:
    """Median and the order-statistic confidence interval of the median (Conover 1999, sect. 3.2)."""
    xs = sorted(float(v) for v in values)
    n = len(xs)
    if n == 0:
        raise ValueError("no values")
    best = 1
    for k in range(1, n // 2 + 1):
        if 1 - 2 * _binom_cdf_half(k - 1, n) >= level:
            best = k
        else:
            break
    cover = 1 - 2 * _binom_cdf_half(best - 1, n) if n > 1 else 0.0
    return Summary(n=n, median=median(xs), low=xs[best - 1], high=xs[n - best], confidence=round(cover, 6),
                   minimum=xs[0], maximum=xs[-1], values=tuple(xs))
