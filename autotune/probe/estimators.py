"""How many keys would a long campaign reach? Species-richness estimators on the census.

Each execution is a sampling unit and each key a species; the census gives, per key, the number
of executions that hit it (incidence counts). From the frequency counts ``Q_k`` (keys hit by
exactly k executions) the Chao estimator of the total number of keys is (Chao, A. 1984,
"Nonparametric estimation of the number of classes in a population", Scand. J. Statist. 11,
265-270; in its incidence form with the bias correction, Chao, A. 1987, "Estimating the
population size for capture-recapture data with unequal catchability", Biometrics 43, 783-791,
as applied to fuzzing by Boehme, "STADS: Software Testing as Species Discovery", TOSEM 2018)::

    S = S_obs + ((m - 1) / m) * Q1^2 / (2 Q2)               if Q2 > 0
    S = S_obs + ((m - 1) / m) * Q1 (Q1 - 1) / 2             if Q2 = 0

with ``m`` executions. It is a lower bound when keys are very unequally likely (as coverage keys
are), so it is reported as "at least about". Its variance (Chao 1987, eq. 7, with r = Q1/Q2)::

    Var = Q2 * (r^2 / 2 + r^3 + r^4 / 4)
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping


@dataclass(frozen=True)
class RichnessEstimate:
    method: str
    observed: int
    estimate: float
    sd: float | None
    singletons: int  # Q1
    doubletons: int  # Q2
    samples: int  # m

    @property
    def undiscovered(self) -> float:
        return self.estimate - self.observed

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "observed": self.observed,
            "estimate": self.estimate,
            "sd": self.sd,
            "singletons": self.singletons,
            "doubletons": self.doubletons,
            "samples": self.samples,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> "RichnessEstimate":
        return cls(method=str(d["method"]), observed=int(d["observed"]), estimate=float(d["estimate"]),
                   sd=None if d.get("sd") is None else float(d["sd"]), singletons=int(d["singletons"]),
                   doubletons=int(d["doubletons"]), samples=int(d["samples"]))


def frequency_counts(*, incidences: Iterable[int]) -> dict[int, int]:
    """{k: number of keys seen in exactly k executions} (k >= 1), sorted by k."""
    c = Counter(int(x) for x in incidences if int(x) > 0)
    return dict(sorted(c.items()))


def chao1(*, freq: Mapping[int, int], samples: int) -> RichnessEstimate:
    """The bias-corrected Chao estimator of the total number of keys from frequency counts."""
    s_obs = int(sum(freq.values()))
    q1 = int(freq.get(1, 0))
    q2 = int(freq.get(2, 0))
    m = max(int(samples), 1)
    corr = (m - 1) / m
    if q2 > 0:
        extra = corr * q1 * q1 / (2.0 * q2)
        r = q1 / q2
        sd = math.sqrt(q2 * (r * r / 2.0 + r ** 3 + r ** 4 / 4.0))
    else:
        extra = corr * q1 * (q1 - 1) / 2.0
        sd = None
    return RichnessEstimate(method="chao1-incidence (Chao 1984, 1987)", observed=s_obs,
                            estimate=s_obs + extra, sd=sd, singletons=q1, doubletons=q2, samples=m)
