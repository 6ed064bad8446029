"""Equation 1 of BigMap (Ahmed et al., DSN 2021): the expected hash collision rate.

Draw ``n`` keys uniformly from ``H`` slots. A draw *collides* when its slot was already taken by
an earlier draw, so the number of collisions is ``n - X`` where ``X`` is the number of occupied
slots, and the collision rate is ``(n - X) / n``. Its expectation is Equation 1::

    CollisionRate(H, n) = 1 - (H / n) * (1 - ((H - 1) / H) ** n)

(the correct form, from bigmap-dsn21.txt section II-B; check: H = 65536, n = 40948 gives
25.64 %, sqlite3 in Table II). For the sampling error we also need the variance of ``X``, the
classical occupancy variance (e.g. Johnson & Kotz, *Urn Models*, 1977)::

    Var[X] = H q1 (1 - q1) + H (H - 1) (q2 - q1^2),  q1 = (1 - 1/H)^n, q2 = (1 - 2/H)^n

computed in a cancellation-free form (``q2 / q1^2 = (1 - 1/(H-1)^2)^n``).
"""

from __future__ import annotations

import math


def _check(H: int, n: int) -> None:
    if H < 1:
        raise ValueError(f"map size H must be >= 1, got {H}")
    if n < 0:
        raise ValueError(f"number of keys n must be >= 0, got {n}")


def _q1(H: int, n: int) -> float:
    """(1 - 1/H)^n: the chance that a given slot stays empty after n draws."""
    return math.exp(n * math.log1p(-1.0 / H))


def expected_occupied(*, H: int, n: int) -> float:
    """E[X]: the expected number of distinct slots ``n`` uniform keys occupy in ``H`` slots."""
    _check(H, n)
    if H == 1:
        return 1.0 if n > 0 else 0.0
    return -H * math.expm1(n * math.log1p(-1.0 / H))


def collision_rate(*, H: int, n: int) -> float:
    """Equation 1: the expected share of the ``n`` keys whose slot was already taken (0..1)."""
    _check(H, n)
    if n == 0:
        return 0.0
    return 1.0 - expected_occupied(H=H, n=n) / n


def occupied_variance(*, H: int, n: int) -> float:
    """Var[X] of the number of occupied slots (uniform draws)."""
    _check(H, n)
    if H <= 2 or n == 0:
        if H == 1 or n == 0:
            return 0.0
        # H == 2: X is 1 with probability 2 * 2^-n, else 2
        p1 = 2.0 * 0.5 ** n
        return p1 * (1.0 - p1)
    q1 = _q1(H, n)
    ratio_m1 = math.expm1(n * math.log1p(-1.0 / (H - 1) ** 2))  # q2 / q1^2 - 1
    var = H * q1 * (1.0 - q1) + H * (H - 1) * q1 * q1 * ratio_m1
    return max(var, 0.0)


def collision_rate_sd(*, H: int, n: int) -> float:
    """Standard deviation of the empirical collision rate ``(n - X) / n`` under uniform draws."""
    if n == 0:
        return 0.0
    return math.sqrt(occupied_variance(H=H, n=n)) / n
