"""The havoc mutator: seeded, bounded, and really mutating."""

import random

from autotune.probe.mutator import Havoc


def _run(seed, n=300, data=b"ATLV\x01\x00N\x04name", other=b"other input bytes"):
    h = Havoc(rng=random.Random(seed), max_len=64)
    out, cur = [], data
    for _ in range(n):
        cur = h.mutate(cur, other=other) or data
        out.append(cur)
    return out


def test_same_seed_same_inputs():
    assert _run(5) == _run(5)
    assert _run(5) != _run(6)


def test_bounded_and_diverse():
    outs = _run(1, n=2000)
    assert all(len(o) <= 64 for o in outs)
    assert len(set(outs)) > 1500
    assert len({len(o) for o in outs}) > 20  # block insert/delete change lengths


def test_empty_input_grows():
    h = Havoc(rng=random.Random(0), max_len=100)
    outs = [h.mutate(b"") for _ in range(200)]
    assert any(outs) and all(len(o) <= 100 for o in outs)


def test_every_operator_runs_on_tiny_inputs():
    h = Havoc(rng=random.Random(2), max_len=8)
    for op in h._ops:
        for data in (b"", b"x", b"xy", b"abcdefgh"):
            buf = bytearray(data)
            op(buf)
            assert len(buf) <= 8 + 1500  # mutate() truncates; ops themselves stay sane


def test_splice_mixes_inputs():
    h = Havoc(rng=random.Random(3), max_len=1000)
    a, b = b"A" * 100, b"B" * 100
    outs = [h.mutate(a, other=b) for _ in range(500)]
    assert any(b"B" * 10 in o for o in outs)
