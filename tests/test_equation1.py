"""Equation 1 (BigMap, DSN 2021) against the paper's Table II and against sampled hashing."""

import math
import re
from pathlib import Path

import numpy as np
import pytest

from autotune import vocabulary as equation1
from autotune.probe.census import map_size_rows

# Table II of bigmap-dsn21.txt: (benchmark, discovered edges, collision rate % with a 64 kB map).
TABLE_II = [
    ("zlib", 722, 0.55), ("libpng", 1218, 0.92), ("systemd", 2314, 1.74), ("libjpeg", 2928, 2.20),
    ("mbedtls", 5377, 3.99), ("proj4", 6379, 4.71), ("harfbuzz", 8930, 6.51), ("libxml2", 9422, 6.86),
    ("openssl", 10297, 7.46), ("bloaty", 10536, 7.62), ("curl", 12728, 9.11), ("php", 20260, 13.98),
    ("sqlite3", 40948, 25.64), ("licm", 64317, 36.29), ("gvn", 65781, 36.89),
    ("strength-reduce", 76065, 40.83), ("indvars", 82105, 42.98), ("loop-vectorize", 108231, 51.06),
    ("instcombine", 131677, 56.90),
]
# ../shared beside the checkout (as CI lays it out), else this workplace's copy
PAPER = next((p for p in (Path(__file__).resolve().parents[2] / "shared/papers/bigmap-dsn21.txt",
                          Path("/work/shared/papers/bigmap-dsn21.txt")) if p.is_file()),
             Path("/work/shared/papers/bigmap-dsn21.txt"))


@pytest.mark.parametrize("name,edges,rate_pct", TABLE_II, ids=[r[0] for r in TABLE_II])
def test_table_ii_row(name, edges, rate_pct):
    assert round(100 * equation1.collision_rate(H=65536, n=edges), 2) == pytest.approx(rate_pct, abs=1e-9)


def test_table_ii_has_19_rows_and_matches_the_paper_text():
    assert len(TABLE_II) == 19
    if not PAPER.is_file():
        pytest.skip("paper text not on this machine")
    text = PAPER.read_text()
    for name, edges, rate in TABLE_II:
        m = re.search(rf"^{re.escape(name)}\t[\d,]+\t([\d,]+)\t([\d.]+)", text, re.M)
        assert m, name
        assert int(m.group(1).replace(",", "")) == edges and float(m.group(2)) == rate


def test_brief_check_value_and_edges():
    assert f"{100 * equation1.collision_rate(H=65536, n=40948):.2f}" == "25.64"
    assert equation1.collision_rate(H=65536, n=0) == 0.0
    assert equation1.collision_rate(H=65536, n=1) == pytest.approx(0.0, abs=1e-12)
    assert equation1.collision_rate(H=1, n=10) == pytest.approx(0.9)
    with pytest.raises(ValueError):
        equation1.collision_rate(H=0, n=3)


def _exact_occupancy(H, n):
    """Exact distribution of occupied slots by dynamic programming (small H, n)."""
    p = np.zeros(H + 1)
    p[0] = 1.0
    for _ in range(n):
        q = np.zeros(H + 1)
        for k in range(H + 1):
            if p[k]:
                q[k] += p[k] * k / H
                if k < H:
                    q[k + 1] += p[k] * (H - k) / H
        p = q
    ks = np.arange(H + 1)
    mean = float((p * ks).sum())
    return mean, float((p * ks * ks).sum() - mean * mean)


@pytest.mark.parametrize("H,n", [(2, 1), (2, 5), (4, 3), (16, 10), (64, 100), (8, 40)])
def test_mean_and_variance_exact(H, n):
    mean, var = _exact_occupancy(H, n)
    assert equation1.expected_occupied(H=H, n=n) == pytest.approx(mean, rel=1e-9)
    assert equation1.occupied_variance(H=H, n=n) == pytest.approx(var, rel=1e-6, abs=1e-12)


def test_variance_stable_for_big_maps():
    v = equation1.occupied_variance(H=1 << 27, n=1 << 18)
    assert 0 < v < 1 << 18 and math.isfinite(v)


@pytest.mark.parametrize("n", [300, 40948, 200_000])
def test_sampled_uniform_ids_agree_with_equation1(n):
    """Uniform random 32-bit ids masked to every map size: within 4 sd of Equation 1."""
    rng = np.random.default_rng(n)
    hk = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    for row in map_size_rows(hk32=hk):
        tol = 4 * row.eq1_sd + 1.0 / n
        assert abs(row.collision_rate - row.eq1_collision_rate) <= tol, row
