"""The probe server (kernels/probe_server.c) at its fd boundary: a raw Python client speaks the
protocol of docs/RUNTIME.md to a real instrumented harness built by `autotune cc`."""

from __future__ import annotations

import os
import random
import signal
import struct
import subprocess

import pytest

from programs.covtools import (
    METRICS,
    PROGRAMS,
    ProbeClient,
    build_cc,
    read_census,
    read_trace,
)

M = {name: i for i, name in enumerate(METRICS)}
DOOMED = 1  # crashy.c: guard of doomed(), run only by inputs that never return


@pytest.fixture(scope="module")
def bins(tmp_path_factory):
    d = tmp_path_factory.mktemp("probe-bins")
    return {n: build_cc(d / n, [PROGRAMS / f"{n}.c"]) for n in ("crashy", "calls3", "loopy")}


@pytest.fixture
def client(bins, tmp_path):
    made = []

    def make(name="crashy", **kw):
        c = ProbeClient(bins[name], tmp_path, **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


def edge_pairs(path):
    return {(e.key >> 32, e.key & 0xFFFFFFFF) for e in read_census(path)[2]}


def test_run_dump_quit_round_trip(client, tmp_path):
    c = client()
    r = c.run(b"a")
    assert r.status == 0 and r.detail == 0 and r.exec_ns > 0
    assert r.new_keys == r.total_keys and all(n > 0 for n in r.new_keys)
    again = c.run(b"a")
    assert again.status == 0 and again.new_keys == (0,) * len(METRICS) and again.total_keys == r.total_keys
    d = c.dump()
    assert d.status == 0 and d.total_keys == r.total_keys
    for m in METRICS:
        mid, dropped, entries = read_census(tmp_path / "census" / f"{m}.bin")
        assert mid == M[m] and dropped == 0 and len(entries) == r.total_keys[M[m]]
        assert all(e.n_inputs == 2 and e.first_exec == 1 for e in entries)
    # no temporary files are left behind by the atomic writes
    assert sorted(p.name for p in (tmp_path / "census").iterdir()) == sorted(f"{m}.bin" for m in METRICS)
    q = c.quit()
    assert q.status == 0 and c.proc.returncode == 0


def test_crashes_and_hangs_are_reported_and_never_reach_the_census(client, tmp_path):
    c = client(timeout_ms=300)
    assert c.run(b"a").status == 0
    seg = c.run(b"S")
    assert (seg.status, seg.detail) == (1, signal.SIGSEGV)
    ab = c.run(b"A")
    assert (ab.status, ab.detail) == (1, signal.SIGABRT)
    hang = c.run(b"H")
    assert (hang.status, hang.detail) == (2, 300)
    ex = c.run(b"E")
    assert (ex.status, ex.detail) == (1, 256 + 3)  # exited (status 3) inside the harness
    for r in (seg, ab, hang, ex):
        assert r.new_keys == (0,) * len(METRICS)
    # the server re-forked and counts the rest: "z" takes the other branch, new keys
    z = c.run(b"z")
    assert z.status == 0 and z.new_keys[M["edge"]] > 0
    assert c.dump().status == 0
    pairs = edge_pairs(tmp_path / "census" / "edge.bin")
    assert all(DOOMED not in p for p in pairs)
    entries = read_census(tmp_path / "census" / "edge.bin")[2]
    # two merged executions: "a" is execution 1, "z" execution 2 (crashes are not numbered)
    assert {e.first_exec for e in entries} == {1, 2}
    assert max(e.n_inputs for e in entries) == 2
    c.quit()


def test_trace_writes_the_keys_of_one_input_and_leaves_the_census(client, tmp_path):
    c = client()
    first = c.run(b"a")
    t = c.trace(b"z", 41)
    assert t.status == 0
    assert t.total_keys == first.total_keys  # census unchanged
    t2 = c.trace(b"a", 42)
    assert t2.new_keys == (0,) * len(METRICS)
    assert c.dump().status == 0
    for m in METRICS:
        blocks = read_trace(tmp_path / "traces" / f"{m}.bin")
        assert [seq for seq, _ in blocks] == [41, 42]
        census_keys = {e.key: e for e in read_census(tmp_path / "census" / f"{m}.bin")[2]}
        z_keys = [k for k, _, _ in blocks[0][1]]
        assert t.new_keys[M[m]] == len([k for k in z_keys if k not in census_keys])
        # the trace of "a" lists exactly the census keys (one execution of "a"), same hk32/counts
        a_recs = blocks[1][1]
        assert {k for k, _, _ in a_recs} == set(census_keys)
        for k, hk, n in a_recs:
            assert census_keys[k].hk32 == hk and census_keys[k].total_hits == n
    # the edge trace is in first-hit order: it starts at the harness entry (prev = 0)
    edge_a = read_trace(tmp_path / "traces" / "edge.bin")[1][1]
    assert edge_a[0][0] >> 32 == 0
    c.quit()


def test_restricted_metric_set(client, tmp_path):
    c = client(name="calls3", metrics="edge,ctx-2")
    r = c.run(b"a")
    assert r.status == 0
    assert [i for i, n in enumerate(r.total_keys) if n] == [M["edge"], M["ctx-2"]]
    assert (r.total_keys[M["edge"]], r.total_keys[M["ctx-2"]]) == (8, 10)
    assert c.dump().status == 0
    assert sorted(p.name for p in (tmp_path / "census").iterdir()) == ["ctx-2.bin", "edge.bin"]
    c.quit()


def test_census_full_is_reported_and_counted(client, tmp_path):
    c = client(name="loopy", capacity=16)
    rng = random.Random(1)
    r = c.run(bytes(rng.choice(b"xy") for _ in range(300)))  # many distinct 8-grams
    assert r.status == 3
    assert r.total_keys[r.detail] == 16
    assert c.dump().status == 0
    _, dropped, entries = read_census(tmp_path / "census" / f"{METRICS[r.detail]}.bin")
    assert dropped > 0 and len(entries) == 16
    c.quit()


def test_oversized_input_and_unknown_command_are_errors(client):
    c = client(max_input=64)
    buf = c._buffer()
    buf[0:4] = struct.pack("<I", 65)
    r = c.command(1)
    assert r.status == 4 and r.detail == 7  # E2BIG
    r = c.command(99)
    assert r.status == 4 and r.detail == 22  # EINVAL
    assert c.run(b"a").status == 0
    c.quit()


def test_server_exits_when_the_client_goes_away(client):
    c = client()
    assert c.run(b"a").status == 0
    os.close(c._ctl_w)
    assert c.proc.wait(timeout=30) == 0


@pytest.mark.parametrize("var,value", [
    ("AUTOTUNE_PROBE_CAPACITY", "1000"),
    ("AUTOTUNE_PROBE_TIMEOUT_MS", "soon"),
    ("AUTOTUNE_PROBE_METRICS", "edge,ctx-3"),
    ("AUTOTUNE_SEED", "-1"),
])
def test_bad_configuration_names_the_variable(bins, tmp_path, var, value):
    env = dict(os.environ, AUTOTUNE_PROBE_CTL_FD="0", AUTOTUNE_PROBE_ST_FD="1",
               AUTOTUNE_PROBE_DIR=str(tmp_path), **{var: value})
    proc = subprocess.run([str(bins["crashy"])], env=env, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert var in proc.stderr and "valid values" in proc.stderr
