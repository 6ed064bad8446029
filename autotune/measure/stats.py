"""Small pure statistics for the benchmark figures."""

from __future__ import annotations

import statistics
from typing import Sequence


def median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs))


def mad(xs: Sequence[float]) -> float:
    """Median absolute deviation (a robust spread; hyperfine and pyperf report it too)."""
    m = median(xs)
    return median([abs(x - m) for x in xs])


def pow2_range(lo: int, hi: int) -> list[int]:
    """Powers of two from lo to hi inclusive (both must be powers of two)."""
    for v in (lo, hi):
        if v < 1 or v & (v - 1):
            raise ValueError(f"{v} is not a power of two")
    out, v = [], lo
    while v <= hi:
        out.append(v)
        v *= 2
    return out


def human_bytes(n: int) -> str:
    """8192 -> '8 KiB', 2097152 -> '2 MiB' (powers of two print exactly)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"
