"""Coverage keys of every metric on small instrumented programs with known control flow.

The programs (tests/programs/*.c) are built by the real wrapper (`autotune cc`, -O0) and their
census is taken by the real probe server (kernels/probe_server.c) through a raw client. Expected
numbers are derived by hand from each program's call structure; calls3 is also checked key by key
against an independent Python model of docs/DESIGN.md's formulas (guard indices, block ids from
the seed, function ids from module offsets read with nm).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from programs.covtools import (
    KEY_INDEX,
    METRICS,
    c_key_funcs,
    c_metrics,
    METRIC_ID,
    PROGRAMS,
    build_cc,
    build_cc_shared,
    build_programs,
    census_of,
    function_id,
    function_offsets,
    model_keys,
    read_census,
)


@pytest.fixture(scope="module")
def bins(tmp_path_factory):
    d = tmp_path_factory.mktemp("metrics-bins")
    out = build_programs(d, ("calls3", "chains", "threads", "crashy", "ngram", "recurse"),
                         cflags={"threads": ["-pthread"]})
    liba = build_cc_shared(d / "liblib_a.so", [PROGRAMS / "lib_a.c"])
    libb = build_cc_shared(d / "liblib_b.so", [PROGRAMS / "lib_b.c"])
    out["twolibs"] = build_cc(d / "twolibs", [PROGRAMS / "twolibs.c"],
                              ldflags=[str(liba), str(libb), f"-Wl,-rpath,{d}"])
    out["liba"], out["libb"] = liba, libb
    return out


def census(binary: Path, workdir: Path, inputs: list[bytes], *, seed: int = 0, **kw):
    """Run inputs through a probe server, dump, and read every census file: {metric: entries}."""
    census_dir = census_of(binary, workdir, inputs, seed=seed, **kw)
    out = {}
    for m in METRICS:
        path = census_dir / f"{m}.bin"
        if path.exists():
            mid, dropped, entries = read_census(path)
            assert mid == METRIC_ID[m] and dropped == 0
            out[m] = entries
    return out


def test_calls3_counts_by_hand(bins, tmp_path):
    # guards (-O0): leaf L0=1 L1=2 (L2=3 not run), a=4, b=5, c=6, harness H=7;
    # one execution: H A L0 L1 B L0 L1 C L0 L1
    cen = census(bins["calls3"], tmp_path, [b"a", b"b"])
    edge = {e.key: e for e in cen["edge"]}
    pairs = {(k >> 32, k & 0xFFFFFFFF) for k in edge}
    assert pairs == {(0, 7), (7, 4), (4, 1), (1, 2), (2, 5), (5, 1), (2, 6), (6, 1)}
    # leaf's internal edge L0 -> L1: one key under edge (3 hits per execution) ...
    inner = edge[(1 << 32) | 2]
    assert (inner.n_inputs, inner.max_hits, inner.total_hits, inner.first_exec) == (2, 3, 6, 1)
    assert all(e.n_inputs == 2 and e.first_exec == 1 for e in cen["edge"])
    # ... and three keys under every context metric except caller-free ones: a, b, c differ
    counts = {m: len(v) for m, v in cen.items()}
    assert counts["edge"] == counts["ngram-2"] == 8
    # ngram-3..8: the 10 hits are 10 distinct windows (the three L0 -> L1 differ in p2)
    for n in range(3, 9):
        assert counts[f"ngram-{n}"] == 10
    for m in ("ctx", "caller", "ctx-2", "ctx-4", "ctx-8"):
        assert counts[m] == 10  # 8 edges, L0 -> L1 split into 3 contexts
        assert sorted(e.max_hits for e in cen[m]) == [1] * 10


def test_calls3_every_key_matches_the_model(bins, tmp_path):
    seed = 12345
    offs = function_offsets(bins["calls3"])
    F = {name: function_id(seed, offs[name]) for name in ("a", "b", "c", "leaf", "LLVMFuzzerTestOneInput")}
    H = F["LLVMFuzzerTestOneInput"]
    hits = [(7, []), (4, [H])]
    for caller, g in (("a", None), ("b", 5), ("c", 6)):
        if g:
            hits.append((g, [H]))
        hits += [(1, [F[caller], H]), (2, [F[caller], H])]
    model = model_keys(hits, seed=seed)
    cen = census(bins["calls3"], tmp_path, [b"x", b"y", b"z"], seed=seed)
    for mid, m in enumerate(METRICS):
        got = {e.key: (e.hk32, e.total_hits, e.n_inputs) for e in cen[m]}
        want = {k: (hk, 3 * n, 3) for k, (hk, n) in model[mid].items()}
        assert got == want, m


def test_chains_caller_and_ctx_k_differ(bins, tmp_path):
    # H->p->x->y->m->leaf and H->q->x->y->m->leaf, one block per function except leaf.
    # With i = leaf's distinct internal edges, edge has 8 + i keys (0->H, H->p, p->x, x->y, y->m,
    # m->L0, leaf's last block->q, q->x, and i). The second chain repeats x->y, y->m, m->L0 and
    # leaf's internal edges; a metric splits them only when their contexts differ:
    #   caller: never (x, y, m are the immediate callers on both chains)       8 + i
    #   ctx-2:  only y's blocks ([x, p] vs [x, q])                              9 + i
    #   ctx-4, ctx-8, ctx: y's, m's and leaf's blocks all see p or q           11 + 2i
    cen = census(bins["chains"], tmp_path, [b""])
    n = {m: len(v) for m, v in cen.items()}
    i = n["edge"] - 8
    assert i >= 1
    assert n["caller"] == 8 + i
    assert n["ctx-2"] == 9 + i
    assert n["ctx-4"] == n["ctx-8"] == n["ctx"] == 11 + 2 * i


def test_same_seed_same_census_across_runs_and_aslr(bins, tmp_path):
    aslr = Path("/proc/sys/kernel/randomize_va_space")
    if aslr.exists():
        assert aslr.read_text().strip() != "0", "this test wants ASLR on"
    inputs = [b"a", b"zz", b""]
    a = census(bins["twolibs"], tmp_path / "1", inputs, seed=7)
    b = census(bins["twolibs"], tmp_path / "2", inputs, seed=7)
    for m in METRICS:
        assert (tmp_path / "1" / "census" / f"{m}.bin").read_bytes() == \
               (tmp_path / "2" / "census" / f"{m}.bin").read_bytes(), m
    c = census(bins["twolibs"], tmp_path / "3", inputs, seed=8)
    # another seed: same exact edge keys (guard indices), other hashed keys
    assert {e.key for e in c["edge"]} == {e.key for e in a["edge"]}
    assert [e.hk32 for e in c["edge"]] != [e.hk32 for e in a["edge"]]
    assert a == b


def test_two_shared_objects_share_one_guard_sequence(bins, tmp_path):
    cen = census(bins["twolibs"], tmp_path, [b"\x09"])
    guards = {k & 0xFFFFFFFF for k in (e.key for e in cen["edge"])} | \
             {k >> 32 for k in (e.key for e in cen["edge"])}
    guards.discard(0)
    # blocks of all three modules were hit: lib_a, lib_a_leaf, lib_b, lib_b_leaf and the harness
    assert len(guards) >= 5
    # caller separates lib_a_leaf's blocks (called by lib_a) from lib_b_leaf's
    assert len(cen["caller"]) == len(cen["edge"])
    assert len(cen["ctx"]) == len(cen["edge"])


def test_no_keys_leak_from_one_execution_into_the_next(bins, tmp_path):
    both = census(bins["crashy"], tmp_path / "both", [b"a", b"z", b"a"])
    a = census(bins["crashy"], tmp_path / "a", [b"a"])
    z = census(bins["crashy"], tmp_path / "z", [b"z"])
    for m in METRICS:
        assert {e.key for e in both[m]} == {e.key for e in a[m]} | {e.key for e in z[m]}, m
    # every execution starts from "no previous block": exactly one edge key has prev = 0
    assert len([e for e in both["edge"] if e.key >> 32 == 0]) == 1


def test_threads_keep_their_own_history(bins, tmp_path):
    one = census(bins["threads"], tmp_path / "1", [b"ab"])
    many = census(bins["threads"], tmp_path / "20", [b"ab"] * 20)
    for m in METRICS:
        assert {e.key for e in one[m]} == {e.key for e in many[m]}, m
        assert all(e.n_inputs == 20 for e in many[m])
    # guards (-O0): work: entry 1, loop increment 2, exit 3 (the loop's other blocks are pruned);
    # start 4; the harness 5..8. work(n) runs 1, 2 x n, 3; n = size + 2 = 4; three threads.
    edge = {(e.key >> 32, e.key & 0xFFFFFFFF): e.total_hits for e in one["edge"]}
    assert edge[(2, 2)] == 3 * 3      # the back edge, n - 1 times per thread
    assert edge[(1, 2)] == edge[(2, 3)] == 3
    assert edge[(0, 4)] == 2          # each thread starts with "no previous block"
    assert edge[(4, 1)] == 2
    assert edge[(0, 5)] == 1          # the harness on the main thread
    # no edge crosses threads: start's block is only ever preceded by "nothing"
    assert [p for (p, c) in edge if c == 4] == [0]


def test_c_and_python_metric_lists_agree():
    """kernels/cov_keys.h's COV_METRICS (the C side's one list: cov.h's ids, the names, the keys)
    against autotune/vocabulary.py's METRIC_TABLE: names in census order, each C key function's
    index key under AUTOTUNE_KEY_HASH=exact (and whether it is hashed), and the call context."""
    import re

    from autotune.vocabulary import METRICS as PY_METRICS
    from autotune.vocabulary import METRIC_SPECS

    rows = c_metrics()
    assert tuple(name for _, name, *_ in rows) == PY_METRICS == METRICS
    keys = c_key_funcs()
    for ident, name, key, win, cx in rows:
        spec = METRIC_SPECS[name]
        assert KEY_INDEX[key] == spec.index_key and keys[key][0] == spec.hashed, name
        assert (cx >= 0) == spec.call_context, name
        assert ident == name.upper().replace("-", ""), name  # COV_M_<ID>: e.g. ngram-8 is COV_M_NGRAM8
        if (n := re.fullmatch(r"ngram-(\d+)", name)):
            assert win == int(n.group(1)) - 1 == PY_METRICS.index(name)  # ngram-N: N - 1 previous blocks, id N - 1


def test_ngram_counts_by_hand(bins, tmp_path):
    # one execution: H 1 2 2 2 2 3 (guards: work entry 1, loop 2, exit 3; harness 4)
    cen = census(bins["ngram"], tmp_path, [b"abcd"])
    pairs = {(e.key >> 32, e.key & 0xFFFFFFFF): e.total_hits for e in cen["edge"]}
    assert pairs == {(0, 4): 1, (4, 1): 1, (1, 2): 1, (2, 2): 3, (2, 3): 1}
    # distinct windows of N blocks (zeros before the start) and the hottest one's hits:
    #   N=2: 0H H1 12 22(x3) 23                          5 keys, max 3
    #   N=3: 00H 0H1 H12 122 222(x2) 223                 6 keys, max 2
    #   N>=4: all 7 windows differ                       7 keys, max 1
    want = {2: (5, 3), 3: (6, 2), 4: (7, 1), 5: (7, 1), 6: (7, 1), 7: (7, 1), 8: (7, 1)}
    for n, (keys, hottest) in want.items():
        got = cen[f"ngram-{n}"]
        assert (len(got), max(e.max_hits for e in got)) == (keys, hottest), n
        assert sum(e.total_hits for e in got) == 7
    # edge and ngram-2 are the same tuples (AFL++'s NGRAM-2 is its CLASSIC edge)
    assert sorted(e.hk32 for e in cen["edge"]) == sorted(e.hk32 for e in cen["ngram-2"])


def test_deep_recursion_beyond_the_stack_limit(bins, tmp_path):
    inputs = [b"a" * 5, b"a", b"a" * 5]  # 500 and 100 levels deep
    one = census(bins["recurse"], tmp_path / "1", inputs)
    two = census(bins["recurse"], tmp_path / "2", inputs)
    assert one == two
    n = {m: len(v) for m, v in one.items()}
    # at most as many contexts per edge as recurse.c lists
    assert n["edge"] < n["caller"] <= 2 * n["edge"]
    assert n["ctx"] <= 2 * n["edge"]
    for m in ("ctx-2", "ctx-4", "ctx-8"):
        assert n["caller"] <= n[m] <= 3 * n["edge"]
    # the 100-deep input (execution 2) finds nothing the 500-deep one (execution 1) missed, except
    # under ctx: below 255 frames the context is frozen at depth 255's (odd: F(H)), while the
    # 100-deep run returns from its bottom call into depth 100 (even: F(rec)^F(H))
    for m in METRICS:
        late = [e for e in one[m] if e.first_exec != 1]
        assert (len(late) > 0) == (m == "ctx"), m
