"""The map sink's index key (AUTOTUNE_KEY_HASH, docs/DESIGN.md "The map sink's index key"):
autotune.metrics.index_key against an independent mix64, the C map sink's used slots in driver
replay mode against the census's exact keys (exact) and hk32 (afl), and the structural N-gram
collisions of the afl hash that the exact hash does not have."""

from __future__ import annotations

import json
import os
import random
import subprocess

import numpy as np
import pytest

from autotune import demo
from autotune.metrics import index_key
from autotune.vocabulary import KEY_HASHES
from autotune.vocabulary import METRIC_SPECS, METRIC_TABLE
from autotune.target import demo_harness
from programs.covtools import (PROGRAMS, SANITIZE, build_cc, build_direct, c_key_funcs, c_metrics, census_of, mix64,
                               read_census)

METRICS = tuple(m.name for m in METRIC_TABLE if m.hashed)  # every hashed key function and window/context
# the fast hooks' check: the first metric of each of kernels/cov_keys.h's hashed key functions, and
# the longest window and a second context
KEY_FUNCS = c_key_funcs()
KEY_OF = {name: key for _, name, key, _, _ in c_metrics()}
FAST_CHECKED = tuple(m for m in METRICS
                     if m in ("ngram-8", "caller") or m == next(n for n in METRICS if KEY_OF[n] == KEY_OF[m]))


def clean_env(**kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOTUNE_", "__AFL"))}
    env.update(kw)
    return env


def census(binary, workdir, inputs, metrics, *, seed):
    """{metric: (exact keys, hk32)} of a probe-server census of the inputs, as uint64 arrays."""
    census = census_of(binary, workdir, inputs, seed=seed, metrics=",".join(metrics), env=clean_env())
    out = {}
    for m in metrics:
        entries = read_census(census / f"{m}.bin")[2]
        out[m] = (np.array([e.key for e in entries], dtype=np.uint64),
                  np.array([e.hk32 for e in entries], dtype=np.uint64))
    return out


def replay(binary, inputs_dir, *, metric, layout, map_size, index_size=None, key_hash=None, seed,
           hooks=None, **extra):
    env = clean_env(AUTOTUNE_REPLAY_ROUNDS="1", AUTOTUNE_METRIC=metric, AUTOTUNE_LAYOUT=layout,
                    AUTOTUNE_MAP_SIZE=str(map_size), AUTOTUNE_SEED=str(seed), **extra)
    if index_size:
        env["AUTOTUNE_INDEX_SIZE"] = str(index_size)
    if key_hash:
        env["AUTOTUNE_KEY_HASH"] = key_hash
    if hooks:
        env["AUTOTUNE_HOOKS"] = hooks
    p = subprocess.run([str(binary), str(inputs_dir)], capture_output=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr.decode()
    doc = json.loads(p.stdout)
    assert doc["metric"] == metric and doc["layout"] == layout
    return doc


def distinct(keys: np.ndarray, slots: int) -> int:
    return len(np.unique(keys & np.uint64(slots - 1)))


def test_index_key_is_mix64_or_the_ngram_fold():
    rng = random.Random(11)
    xs = [0, 1, 2**63, 2**64 - 1, *(rng.getrandbits(64) for _ in range(200))]
    for metric in ("edge", "ctx", "caller", "ctx-8"):
        got = index_key(np.array(xs, dtype=np.uint64), metric=metric)
        assert got.dtype == np.uint64 and got.shape == (len(xs),)
        assert [int(v) for v in got] == [mix64(x) for x in xs]
    for metric in ("ngram-2", "ngram-8"):
        got = index_key(np.array(xs, dtype=np.uint64), metric=metric)
        assert [int(v) for v in got] == [x ^ (x >> 32) for x in xs]
    # splitmix64's first output for state 0 (Vigna's reference): mix64(0 + golden gamma)
    assert int(index_key(np.uint64(0x9E3779B97F4A7C15), metric="edge")) == 0xE220A8397B1DCDAF
    assert int(index_key(np.uint64(0x0000000100000002), metric="ngram-3")) == 0x0000000100000003
    assert index_key(np.zeros((2, 3), dtype=np.uint64), metric="edge").shape == (2, 3)
    assert index_key(np.zeros((2, 3), dtype=np.uint64), metric="ngram-4").shape == (2, 3)
    with pytest.raises(ValueError, match="metric"):
        index_key(np.zeros(1, dtype=np.uint64), metric="ngram-9")
    assert KEY_HASHES[0] == "exact"


@pytest.fixture(scope="module")
def demo_census(tmp_path_factory):
    binary = demo_harness()
    inputs = [p.read_bytes() for p in sorted(demo.seed_dir().iterdir())]
    return binary, census(binary, tmp_path_factory.mktemp("ik-probe") / "w", inputs, METRICS, seed=5)


@pytest.mark.parametrize("metric", [m for m in METRICS if METRIC_SPECS[m].index_key == "fold"])
def test_ngram_fold_spreads_keys_as_equation_1_says(demo_census, metric):
    """The ngram index key is only a fold of the exact key (which is already uniform in all 64
    bits); its occupied slots at every map size from 2^6 to 2^24 stay within 4 standard
    deviations of the balls-in-bins expectation behind Equation 1, as mix64's do."""
    _, cen = demo_census
    exact, _ = cen[metric]
    n = len(exact)
    for bits in range(6, 25, 2):
        h = 1 << bits
        mean = h * (1 - (1 - 1 / h) ** n)
        var = h * (h - 1) * (1 - 2 / h) ** n + h * (1 - 1 / h) ** n - (h * (1 - 1 / h) ** n) ** 2
        tol = 4 * max(var, 0) ** 0.5 + 2
        mixed = index_key(exact, metric="edge")  # mix64, for comparison
        for key in (index_key(exact, metric=metric), mixed):
            assert abs(distinct(key, h) - mean) <= tol, (metric, bits, distinct(key, h), mean, tol)


@pytest.mark.parametrize("metric", METRICS)
def test_replay_slots_are_the_index_keys_of_the_census(demo_census, metric):
    binary, cen = demo_census
    exact, hk32 = cen[metric]
    assert len(exact) > 100
    differs = False
    for layout, index_size, map_size in (("twolevel", 1 << 12, 1 << 12), ("flat", None, 1 << 10)):
        h = index_size or map_size
        want = {"exact": distinct(index_key(exact, metric=metric), h), "afl": distinct(hk32, h)}
        differs |= want["exact"] != want["afl"]
        for key_hash in (None, "exact", "afl"):  # None: the default, exact
            doc = replay(binary, demo.seed_dir(), metric=metric, layout=layout, map_size=map_size,
                         index_size=index_size, key_hash=key_hash, seed=5)
            n = want[key_hash or "exact"]
            if layout == "twolevel":
                assert doc["used_keys"] == n and doc["overflow_keys"] == 0
            assert doc["covered_slots"] == n, (layout, key_hash)
    assert differs  # the two hashes give different slot counts here, so the check can tell them apart


@pytest.mark.parametrize("metric", FAST_CHECKED)
def test_fast_hooks_count_what_the_general_path_counts(metric):
    """AUTOTUNE_HOOKS=auto keys and counts each block at its own guard through one specialised
    function when the map sink is alone and the metric needs no call stack; the general path
    holds each block back until the next guard. Same inputs, same maps: the same keys, slots,
    overflow, and the digest of every map that brought new coverage (which sees slot order and
    bucketed counts)."""
    binary = demo_harness()
    fast = KEY_FUNCS[KEY_OF[metric]][1] != "NONE" and not METRIC_SPECS[metric].call_context  # cov_keys.h
    same = ("used_keys", "covered_slots", "overflow_keys", "coverage_digest", "new_coverage_execs")
    configs = (("twolevel", 1 << 24, 1 << 16, "8", "neverzero", None),
               ("twolevel", 1 << 12, 1 << 6, "16", "saturate", "afl"),  # overflows the dense map
               ("flat", None, 1 << 12, "32", "wrap", "exact"))
    for layout, index_size, map_size, bits, overflow, key_hash in configs:
        docs = {h: replay(binary, demo.seed_dir(), metric=metric, layout=layout, map_size=map_size,
                          index_size=index_size, key_hash=key_hash, seed=2, hooks=h,
                          AUTOTUNE_COUNTER_BITS=bits, AUTOTUNE_OVERFLOW=overflow)
                for h in ("auto", "general")}
        assert docs["general"]["hooks"] == "general"
        assert docs["auto"]["hooks"] == ("fast" if fast else "general")
        assert {k: docs["auto"][k] for k in same} == {k: docs["general"][k] for k in same}, layout
        assert docs["auto"]["covered_slots"] >= min(map_size, 100)
        if map_size == 1 << 6:
            assert docs["auto"]["used_keys"] == 64 and docs["auto"]["overflow_keys"] > 0


def test_exact_hash_has_no_structural_ngram_collisions(tmp_path):
    """loopy's byte loop has a data-dependent branch: windows that hold the same blocks in
    another order XOR-cancel to one afl hk32; mix64 of the exact key tells them apart."""
    binary = build_cc(tmp_path / "loopy", [PROGRAMS / "loopy.c"])
    rng = random.Random(3)
    inputs = [bytes(rng.choice(b"xy") for _ in range(40)) for _ in range(8)]
    d = tmp_path / "in"
    d.mkdir()
    for i, data in enumerate(inputs):
        (d / f"{i:02d}").write_bytes(data)
    exact, hk32 = census(binary, tmp_path / "probe", inputs, ("ngram-8",), seed=0)["ngram-8"]
    big = 1 << 24
    assert distinct(index_key(exact, metric="ngram-8"), big) == len(exact)  # Equation 1: ~0 at 2^24
    lost = len(exact) - distinct(hk32, big)
    assert lost > 0  # a collision floor no map size removes
    assert len(np.unique(hk32)) == len(exact) - lost  # the same at every size: hk32 itself repeats
    for key_hash, want in (("exact", len(exact)), ("afl", len(exact) - lost)):
        doc = replay(binary, d, metric="ngram-8", layout="twolevel", map_size=1 << 12,
                     index_size=big, key_hash=key_hash, seed=0)
        assert doc["used_keys"] == want and doc["overflow_keys"] == 0


@pytest.mark.parametrize(("var", "value", "valid"), [("AUTOTUNE_KEY_HASH", "murmur", "exact, afl"),
                                                     ("AUTOTUNE_HOOKS", "inline", "auto, general")])
def test_bad_value_is_refused(tmp_path, var, value, valid):
    binary = demo_harness()
    (tmp_path / "x").write_bytes(b"x")
    p = subprocess.run([str(binary), str(tmp_path / "x")], capture_output=True, timeout=60,
                       env=clean_env(AUTOTUNE_REPLAY_ROUNDS="1", **{var: value}))
    assert p.returncode == 2
    err = p.stderr.decode()
    assert f"{var}='{value}'" in err and f"valid values: {valid}" in err


@pytest.mark.slow
def test_rolling_exact_key_under_asan_and_ubsan_with_threads(tmp_path):
    """The ngram-N rolling key and its ring are per thread (threads.c runs two threads per input,
    whose cov_thread is reused by the next input's threads and must start from a zero window);
    under ASan+UBSan the replay's slots still equal the census's index keys, for every N-gram
    length in turn."""
    san = SANITIZE
    binary = build_direct(tmp_path / "threads", [PROGRAMS / "threads.c"], san=san, runtime_opt="-O1",
                          extra=["-pthread"])
    inputs = [b"ab", b"abcdef", b"a"]
    d = tmp_path / "in"
    d.mkdir()
    for i, data in enumerate(inputs):
        (d / f"{i}").write_bytes(data)
    metrics = ("ngram-2", "ngram-5", "ngram-8")
    cen = census(binary, tmp_path / "probe", inputs, metrics, seed=1)
    env_san = {"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "print_stacktrace=1"}
    for m in metrics:
        exact, _ = cen[m]
        p = subprocess.run([str(binary), str(d)], capture_output=True, timeout=120,
                           env=clean_env(AUTOTUNE_REPLAY_ROUNDS="3", AUTOTUNE_METRIC=m, AUTOTUNE_SEED="1",
                                         AUTOTUNE_INDEX_SIZE="1024", **env_san))
        assert p.returncode == 0, p.stderr.decode()
        assert b"runtime error" not in p.stderr and b"Sanitizer" not in p.stderr
        doc = json.loads(p.stdout)
        assert doc["key_hash"] == "exact" and doc["used_keys"] == distinct(index_key(exact, metric=m), 1024)
