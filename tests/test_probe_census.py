"""The census analysis and the census/trace file formats of docs/RUNTIME.md."""

import struct

import numpy as np
import pytest

from autotune.errors import DocumentError
from autotune.probe import protocol as P
from autotune.probe.census import (AFL_BUCKETS, MAP_LOG2_SIZES, analyse, bucket_counts, distinct_slots,
                                   overflow_rows, percentiles)


def test_distinct_slots_matches_brute_force():
    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 17, 5000):
        hk = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
        hk = np.concatenate([hk, hk[: n // 10]])  # exact duplicates too
        got = distinct_slots(hk32=hk, log2_sizes=range(0, 33))
        for k in range(0, 33):
            mask = np.uint64((1 << k) - 1)
            want = np.unique(hk.astype(np.uint64) & mask).size
            assert got[k] == want, (n, k)


def test_overflow_rows_counts_wraps():
    # 255 fits 8 bits; 256 wraps to 0 (plain), 511 = 1 + 2*255 ends at 1 under NeverZero
    mh = np.array([1, 255, 256, 300, 511, 512, 65536, 65535, 1 << 33], dtype=np.uint64)
    rows = {r.counter_bits: r for r in overflow_rows(max_hits=mh)}
    r8 = rows[8]
    assert r8.overflow_keys == 7
    assert r8.wrap_to_zero == 4  # 256, 512, 65536, 2^33
    # NeverZero: value after n hits is ((n-1) % 255) + 1; == 1 for n = 256, 511, 65536, 2^33? (2^33-1)%255
    want_one = sum(1 for n in [256, 300, 511, 512, 65536, 65535, 1 << 33] if (n - 1) % 255 == 0)
    assert r8.wrap_to_one == want_one
    assert r8.overflow_share == pytest.approx(7 / 9)
    assert rows[16].overflow_keys == 2 and rows[16].wrap_to_zero == 2  # 65536 and 2^33
    assert rows[32].overflow_keys == 1 and rows[32].wrap_to_zero == 1


def test_neverzero_wrap_matches_simulation():
    """wrap_to_one is what AFL++'s `c = c + 1; c += (c == 0)` leaves, simulated on 8 bits."""
    for n in range(1, 2000):
        c = 0
        for _ in range(n):
            c = (c + 1) & 0xFF
            c += c == 0
        r = overflow_rows(max_hits=np.array([n], dtype=np.uint64), counter_bits=(8,))[0]
        assert r.wrap_to_one == int(n > 255 and c == 1)
        assert r.wrap_to_zero == int(n > 255 and n % 256 == 0)


def test_buckets():
    mh = np.array([1, 2, 3, 4, 7, 8, 31, 32, 127, 128, 255, 256, 9999], dtype=np.uint64)
    b = bucket_counts(max_hits=mh)
    assert len(b) == len(AFL_BUCKETS) + 1 and sum(b) == mh.size and b[-1] == 2


def _records(n, seed=0):
    rng = np.random.default_rng(seed)
    rec = np.zeros(n, dtype=P.CENSUS_DTYPE)
    rec["key"] = np.arange(n, dtype=np.uint64) * 7919
    rec["hk32"] = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    rec["n_inputs"] = rng.integers(1, 5, size=n)
    rec["max_hits"] = rng.integers(1, 600, size=n)
    rec["total_hits"] = rec["max_hits"] * 2
    rec["first_exec"] = rng.integers(1, 100, size=n)
    return rec


def test_census_file_roundtrip_and_analysis(tmp_path):
    rec = _records(1000)
    path = P.census_path(tmp_path, "ctx")
    P.write_census(path, metric="ctx", records=rec, dropped=3)
    t = P.read_census(path, metric="ctx")
    assert t.metric == "ctx" and t.dropped == 3 and np.array_equal(t.records, rec)
    m = analyse(table=t, executions=100)
    assert m.keys == 1000 and m.dropped_keys == 3
    assert [r.map_bytes for r in m.map_sizes] == [1 << k for k in MAP_LOG2_SIZES]
    assert all(r.slots_used + r.collisions == 1000 for r in m.map_sizes)
    assert sum(m.freq.values()) == 1000
    assert m.overflow[0].overflow_keys == int((rec["max_hits"] > 255).sum())
    assert type(m).from_dict(m.to_dict()) == m


def test_census_file_errors(tmp_path):
    p = tmp_path / "x.bin"
    with pytest.raises(DocumentError, match="not found"):
        P.read_census(p)
    p.write_bytes(b"short")
    with pytest.raises(DocumentError, match="truncated"):
        P.read_census(p)
    p.write_bytes(struct.pack("<8sIIQQ", b"NOTACENS", 0, 0, 0, 0))
    with pytest.raises(DocumentError, match="not a census"):
        P.read_census(p)
    p.write_bytes(struct.pack("<8sIIQQ", b"ATCENS01", 0, 0, 2, 0) + bytes(40))
    with pytest.raises(DocumentError, match="does not match"):
        P.read_census(p)
    P.write_census(p, metric="edge", records=_records(2))
    with pytest.raises(DocumentError, match="expected 'ctx'"):
        P.read_census(p, metric="ctx")


def test_trace_file(tmp_path):
    p = tmp_path / "t.bin"
    recs = np.zeros(2, dtype=P.TRACE_DTYPE)
    recs["key"] = [5, 9]
    recs["count"] = [1, 300]
    p.write_bytes(struct.pack("<II", 0, 2) + recs.tobytes() + struct.pack("<II", 1, 0))
    t = P.read_traces(p)
    assert list(t) == [0, 1] and t[0]["count"].tolist() == [1, 300] and t[1].size == 0
    p.write_bytes(struct.pack("<II", 0, 3) + recs.tobytes())
    with pytest.raises(DocumentError, match="truncated"):
        P.read_traces(p)


def test_reply_layout():
    from autotune.vocabulary import METRICS

    n = len(METRICS)  # 14 today: 128 bytes
    assert P.REPLY_SIZE == 16 + 8 * n
    r = P.Reply(status=1, detail=6, exec_ns=123, new_keys=tuple(range(n)), total_keys=tuple(range(n, 2 * n)))
    raw = r.pack()
    assert raw[:16] == struct.pack("<IIQ", 1, 6, 123) and P.Reply.unpack(raw) == r
    assert raw[P.NEW_KEYS_SLICE] == struct.pack(f"<{n}I", *range(n))


def test_percentiles():
    p = percentiles(values_ns=np.arange(1, 101, dtype=np.uint64) * 1000)
    assert p.count == 100 and p.min_ns == 1000 and p.max_ns == 100000
    assert p.p50_ns == pytest.approx(50500) and sum(p.log2_hist) == 100
    assert percentiles(values_ns=np.zeros(0)).count == 0
