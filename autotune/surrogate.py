"""The one optimiser over the map-configuration space: a Gaussian process and expected improvement.

tune's search by replay (the cheap fidelity: our runtime replaying the probe's corpus) and the race's
search in afl-fuzz (the dear one: trials of growing length, pruned by successive halving) both propose
their points with :class:`Surrogate`: a Gaussian process (scikit-optimize's
``GaussianProcessRegressor``, a constant times a Matern 5/2 kernel with one length scale per feature)
over the features of a point (:func:`features`: the census's log2 keys of its metric, call context,
guard, N of an N-gram, layout, hash space, counter width, overflow policy, inline build) and the
fidelity it was observed at, each observation with its own noise variance on the diagonal; proposals
maximise expected improvement (scikit-optimize's ``gaussian_ei``) over the candidates not yet tried,
a batch chosen by the constant liar (each pick joins the data at its predicted mean before the next).
Both searches draw their candidates from the space that autotune.feasibility's rule leaves.

The objective differs by fidelity and is the caller's: tune's score in bits, the race's log ratio of
a trial's edges over the default's. The model maximises what it is given.
"""

from __future__ import annotations

import math
import random
import warnings
from typing import Callable, Optional, Sequence

from autotune.mappoint import MapPoint
from autotune.vocabulary import CONTEXT_METRICS, RACE_MAP_POW2

# The fidelity of a replayed score: below the race's first rung (0; its longest is 1, autotune.race.search)
REPLAY_FIDELITY = -1.0
# (point, fidelity, y, noise variance of y)
Row = tuple[MapPoint, float, float, float]
Prediction = tuple[float, float]  # (mean, sd)
Proposal = tuple[MapPoint, str, Optional[Prediction], Optional[float]]  # point, why, prediction, EI


def features(point: MapPoint, *, keys: float, inline: bool, fidelity: float) -> list[float]:
    """The model's view of ``point`` (a metric of ``keys`` estimated keys; ``inline``: it runs on an
    inline build kind) at ``fidelity``; the hash space is scaled to the race's range 2^16..2^24."""
    n = int(point.metric.removeprefix("ngram-")) if point.metric.startswith("ngram-") else 0
    lo, hi = RACE_MAP_POW2
    return [min(1.0, math.log2(max(2.0, float(keys))) / 24), float(point.metric in CONTEXT_METRICS),
            float(not point.hashed), n / 8, float(point.layout == "twolevel"),
            (point.map_pow2 - lo) / (hi - lo) if point.hashed else 0.0,
            math.log2(point.width_bits / 8) / 2, float(point.overflow == "saturate"), float(point.overflow == "wrap"),
            float(inline), float(fidelity)]


class Surrogate:
    """A Gaussian process over ``featurize(point, fidelity)`` with per-observation noise, fitted on the
    rows it is given; with fewer than two distinct points, no model (proposals are then random, from
    the caller's seeded RNG)."""

    def __init__(self, *, featurize: Callable[[MapPoint, float], Sequence[float]], seed: int, restarts: int = 2):
        self.featurize = featurize
        self.seed = seed
        self.restarts = restarts  # hyperparameter fits from random starts beyond the first
        self._gp = None
        self._mu = 0.0
        self._sd = 1.0

    @property
    def fitted(self) -> bool:
        return self._gp is not None

    def fit(self, rows: Sequence[Row], *, floor_sd: float = 1e-3) -> bool:
        """Fit on ``rows``; False (and no model) with fewer than two distinct points. ``floor_sd``: the
        smallest scale y is standardised by (the noise's sd, so that a flat objective is not blown up)."""
        import numpy as np
        from skopt.learning import GaussianProcessRegressor
        from skopt.learning.gaussian_process.kernels import ConstantKernel, Matern

        if len({r[0] for r in rows}) < 2:
            self._gp = None
            return False
        X = np.array([self.featurize(p, f) for p, f, _, _ in rows], dtype=float)
        y = np.array([r[2] for r in rows], dtype=float)
        self._mu = float(y.mean())
        self._sd = max(float(y.std()), floor_sd, 1e-3)
        z = (y - self._mu) / self._sd
        noise = np.array([r[3] for r in rows]) / self._sd ** 2
        kernel = ConstantKernel(1.0, (1e-2, 1e2)) * Matern(length_scale=np.ones(X.shape[1]),
                                                            length_scale_bounds=(0.05, 20.0), nu=2.5)
        gp = GaussianProcessRegressor(kernel=kernel, alpha=noise, normalize_y=False,
                                      n_restarts_optimizer=self.restarts, random_state=self.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings on a handful of points are expected
            gp.fit(X, z)
        self._gp = gp
        return True

    def predict(self, points: Sequence[MapPoint], fidelity: float) -> list[Prediction]:
        """(mean, sd) of the objective at ``points`` and ``fidelity``; requires a fitted model."""
        import numpy as np

        X = np.array([self.featurize(p, fidelity) for p in points], dtype=float)
        m, s = self._gp.predict(X, return_std=True)
        return [(float(a) * self._sd + self._mu, float(b) * self._sd) for a, b in zip(m, s)]

    def propose(self, *, rows: Sequence[Row], candidates: Sequence[MapPoint], n: int, fidelity: float,
                incumbents: Sequence[MapPoint], rng: random.Random, liar_var: float,
                floor_sd: float = 1e-3) -> list[Proposal]:
        """``n`` of ``candidates`` by expected improvement at ``fidelity`` over the best posterior mean at
        the ``incumbents`` (constant liar, each pick a pseudo-observation of variance ``liar_var``), each
        with why, its prediction and EI; random ones (``rng``) while there is no model. The model is left
        fitted on ``rows``."""
        import numpy as np
        from skopt.acquisition import gaussian_ei

        pool = list(candidates)
        out: list[Proposal] = []
        liars: list[Row] = []
        while len(out) < n and pool:
            if not self.fit([*rows, *liars], floor_sd=floor_sd):
                p = pool.pop(rng.randrange(len(pool)))
                out.append((p, "random: too few observations for a model", None, None))
                continue
            # minimise z' = -z; EI against the best posterior mean at the incumbents
            seen = list(incumbents) or [r[0] for r in rows]
            best = float(np.min(-self._gp.predict(np.array([self.featurize(p, fidelity) for p in seen]))))
            X = np.array([self.featurize(p, fidelity) for p in pool])
            ei = gaussian_ei(X, _Negated(self._gp), y_opt=best, xi=0.01)
            top = float(np.max(ei))
            ties = [i for i, v in enumerate(ei) if v >= top - 1e-12]
            p = pool.pop(ties[rng.randrange(len(ties))])
            pred = self.predict([p], fidelity)[0]
            out.append((p, "model: expected improvement", pred, top * self._sd))
            liars.append((p, fidelity, pred[0], liar_var))
        self.fit(rows, floor_sd=floor_sd)
        return out


class _Negated:
    """The posterior negated: scikit-optimize's ``gaussian_ei`` minimises."""

    def __init__(self, gp):
        self.gp = gp

    def predict(self, X, return_std=False):
        m, s = self.gp.predict(X, return_std=True)
        return (-m, s) if return_std else -m
