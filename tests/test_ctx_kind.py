"""The ctx build kind of `autotune cc` (AUTOTUNE_CC_INSTRUMENT=ctx, AUTOTUNE_CC_CTX=ctx|caller|ctx-K): edges
in their call context counted inline by the ctx mode of our pass (kernels/plugin/autotune_edges.cpp) as
AFL++'s CTX, CALLER and CTX-K count them, end to end with real clang builds:

- on a program with known calls: afl's map holds exactly the keys of the definition, (cur ^ prev ^ X)
  & (map size - 1), X the xor of the function ids of the K nearest instrumented callers (all of them
  for ctx), at the documented compile-time ids, for every context metric; two builds give the same
  ids; a caller we do not instrument (the dispatcher, as a libFuzzer driver) finds the state its
  callees found, and every execution starts from an empty context;
- under the real afl-showmap (persistent and fork mode) and a few seconds of the real afl-fuzz
  (100 % stability); as many blocks as afl-clang-fast's CTX;
- what the build cannot serve is refused with one line naming the fix, and so are bad values at
  compile time; the race puts a context metric on the ctx kind when its flat map fits; under ASan
  and UBSan.
No timing is asserted.
"""

from __future__ import annotations

import subprocess
from functools import reduce
from pathlib import Path

import pytest

from autotune import demo
from autotune.target import build_harness
from autotune.vocabulary import CONTEXT_METRICS
from inline_kinds import (AFL_CC, AFL_FUZZ, AFL_SHOWMAP, AUTOTUNE_CC, SANITIZER_RUN, assert_afl_fuzz_full_stability,
                          assert_blocks_as_afl, assert_mixing_refused, assert_plugin_refuses, assert_probe_refuses,
                          assert_race_puts_it_on_the_kind, assert_serves_explicitly, assert_showmap_refuses,
                          assert_wrapper_refuses, build_sanitized, sanitized_maps)
from test_edge_kind import _run, assert_refused, block_id, nonzero
from test_guard import _showmap_maps, clean_env, direct_map, replay

PROGRAMS_AFL = Path(__file__).parent / "programs_afl"
needs_afl = pytest.mark.skipif(not (AFL_FUZZ and AFL_SHOWMAP), reason="afl++ is not installed")
FUNCTION_INDEX = 0xFFFFFFFF  # a function's id is its block 2^32 - 1's
CALLERS = {"ctx": None, "caller": 1, "ctx-2": 2, "ctx-4": 4, "ctx-8": 8}  # None: the whole stack

# One block per function (each is entered and its block counts before it calls); fc's chain reaches
# leaf 5 deep and fd's 12 deep (through d0 .. d9), so ctx-4, ctx-8 and the whole stack see different
# windows; the dispatcher is not instrumented.
CALLS = {"leaf": [], "mid": ["leaf"], "deep": ["mid"], "deeper": ["deep"], "fa": ["leaf"], "fb": ["mid", "leaf"],
         "fc": ["deeper", "fb"], **{f"d{i}": [f"d{i + 1}"] for i in range(9)}, "d9": ["mid"], "fd": ["d0", "leaf"]}
FUNCS = "volatile unsigned sink;\n" + "".join(f"void {f}(void);\n" for f in CALLS) + "".join(
    f"__attribute__((noinline)) void {f}(void) {{ {' '.join(c + '();' for c in calls)} sink += {i}; }}\n"
    for i, (f, calls) in enumerate(CALLS.items()))
DISPATCH = r"""
#include <stddef.h>
#include <stdint.h>
void fa(void), fb(void), fc(void), fd(void);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (d[i] == 'a') fa();
    else if (d[i] == 'b') fb();
    else if (d[i] == 'c') fc();
    else if (d[i] == 'd') fd();
  }
  return 0;
}
"""
INPUTS = {"a": b"a", "abc": b"abcab", "none": b"xyz", "d": b"d", "repeat300": b"b" * 300, "mixed": b"cadcbbbxad"}


def ctx_keys(funcs: Path, data: bytes, metric: str) -> list[int]:
    """The keys one execution counts under the definition, in order, walking the calls: each function's
    block counts (cur ^ prev ^ X) with X the xor of its nearest K callers' function ids (all for ctx;
    only instrumented callers: the dispatcher is none), prev = the previous block's id >> 1 (0 at the
    start)."""
    k = CALLERS[metric]
    fid = {f: block_id(str(funcs), f, FUNCTION_INDEX) for f in CALLS}
    keys: list[int] = []
    prev = 0

    def enter(f: str, callers: list[str]) -> None:
        nonlocal prev
        near = callers if k is None else callers[:k]
        x = reduce(lambda a, b: a ^ b, (fid[c] for c in near), 0)
        cur = block_id(str(funcs), f, 0)
        keys.append(cur ^ prev ^ x)
        prev = cur >> 1
        for callee in CALLS[f]:
            enter(callee, [f, *callers])

    for b in data:
        if chr(b) in "abcd":
            enter(f"f{chr(b)}", [])
    return keys


def neverzero(slots: list[int]) -> dict[int, int]:
    """8-bit NeverZero counters after counting each slot of ``slots`` once."""
    out: dict[int, int] = {}
    for slot in slots:
        c = (out.get(slot, 0) + 1) & 0xFF
        out[slot] = c + (c == 0)
    return out


def ctx_map(funcs: Path, data: bytes, metric: str, map_size: int = 1 << 16) -> dict[int, int]:
    """The flat map one execution leaves: each key at key & (map size - 1)."""
    return neverzero([key & (map_size - 1) for key in ctx_keys(funcs, data, metric)])


def indexed_map(funcs: Path, data: bytes, metric: str, index_slots: int, dense_slots: int) -> dict[int, int]:
    """The dense map an indexed build leaves after one execution in a fresh index: each index entry
    (key & (index slots - 1)) gets the next dense slot the first time it is seen, the last slot once
    the dense map is full (bigmap.h's two-level map)."""
    entries = [key & (index_slots - 1) for key in ctx_keys(funcs, data, metric)]
    order = list(dict.fromkeys(entries))
    return neverzero([min(order.index(e), dense_slots - 1) for e in entries])


def build_known(d: Path, funcs: Path, metric: str, funcs_env: dict[str, str] | None = None, *,
                indexed: bool = False) -> Path:
    """funcs.c by autotune cc (the ctx kind for ``metric``, indexed or not, or ``funcs_env``), the
    dispatcher by plain clang, linked by autotune cc with the ctx kind."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "dispatch.c").write_text(DISPATCH)
    kind = {"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": metric, **({"AUTOTUNE_CC_INDEX": "1"} if indexed else {})}
    _run([AUTOTUNE_CC, "-O1", "-c", str(funcs), "-o", "funcs.o"], clean_env(**(funcs_env or kind)), d)
    _run(["clang", "-O1", "-c", "dispatch.c", "-o", "dispatch.o"], clean_env(), d)
    _run([AUTOTUNE_CC, "-fsanitize=fuzzer", "funcs.o", "dispatch.o", "-o", "known"], clean_env(**kind), d)
    return d / "known"


@pytest.fixture(scope="module")
def known(tmp_path_factory) -> dict:
    """The source and a build per context metric (and a second ctx-2 build in another directory)."""
    src_dir = tmp_path_factory.mktemp("ctx-src")
    funcs = src_dir / "funcs.c"
    funcs.write_text(FUNCS)
    builds = {m: build_known(src_dir / m, funcs, m) for m in CONTEXT_METRICS}
    indexed = {m: build_known(src_dir / f"{m}-indexed", funcs, m, indexed=True) for m in ("ctx", "ctx-2")}
    return {"funcs": funcs, "builds": builds, "again": build_known(src_dir / "again", funcs, "ctx-2"),
            "indexed": indexed}


def test_the_map_holds_the_context_keys_at_the_documented_ids(known, tmp_path):
    funcs = known["funcs"]
    for name, data in INPUTS.items():
        f = tmp_path / name
        f.write_bytes(data)
        for m, binary in [*known["builds"].items(), ("ctx-2", known["again"])]:  # the second build: same ids
            got, rc = direct_map(binary, [f], clean_env(AUTOTUNE_METRIC=m))
            assert rc == 0 and nonzero(got) == ctx_map(funcs, data, m), (name, m)
    # the metric is the build's when AUTOTUNE_METRIC is unset; the mask follows the run-time map size
    f = tmp_path / "mixed"
    got, rc = direct_map(known["builds"]["ctx-4"], [f], clean_env(AUTOTUNE_MAP_SIZE="1024"))
    assert rc == 0 and nonzero(got) == ctx_map(funcs, INPUTS["mixed"], "ctx-4", 1024) and max(nonzero(got)) < 1024


@pytest.mark.parametrize("index_slots, dense_slots", [(1 << 16, 1024), (1024, 64)])  # the runtime's smallest
def test_an_indexed_build_counts_each_key_in_a_dense_slot_of_its_own(known, tmp_path, index_slots, dense_slots):
    """AUTOTUNE_CC_INDEX=1: each key's index entry (key & (H - 1)) takes the next dense slot when first
    seen, as the two-level map assigns them (bigmap.h): afl's map is the dense counters, in the order
    the keys came (the runtime's smallest index and dense map too)."""
    funcs = known["funcs"]
    for m, binary in known["indexed"].items():
        for name, data in INPUTS.items():
            f = tmp_path / f"{m}-{name}"
            f.write_bytes(data)
            env = clean_env(AUTOTUNE_METRIC=m, AUTOTUNE_LAYOUT="twolevel", AUTOTUNE_INDEX_SIZE=str(index_slots),
                            AUTOTUNE_MAP_SIZE=str(dense_slots))
            got, rc = direct_map(binary, [f], env)
            assert rc == 0 and nonzero(got) == indexed_map(funcs, data, m, index_slots, dense_slots), (m, name)
    # the layout is the build's when AUTOTUNE_LAYOUT is unset
    got, rc = direct_map(known["indexed"]["ctx"], [tmp_path / "ctx-mixed"], clean_env(AUTOTUNE_MAP_SIZE="1024"))
    assert rc == 0 and nonzero(got) == indexed_map(funcs, INPUTS["mixed"], "ctx", 1 << 24, 1024)


def test_an_indexed_build_refuses_a_flat_map_and_a_mixed_link(known, tmp_path):
    assert_refused(known["indexed"]["ctx-2"], tmp_path, {"AUTOTUNE_LAYOUT": "flat"},
                   "AUTOTUNE_LAYOUT=flat: a program built with AUTOTUNE_CC_INSTRUMENT=ctx counts inline through a "
                   "two-level map's index (AUTOTUNE_CC_INDEX=1); fix: unset it (or twolevel)")
    assert_refused(known["builds"]["ctx-2"], tmp_path, {"AUTOTUNE_LAYOUT": "twolevel"},
                   "AUTOTUNE_LAYOUT=twolevel: a program built with AUTOTUNE_CC_INSTRUMENT=ctx counts inline into a "
                   "flat map")
    assert_mixing_refused(tmp_path, funcs=known["funcs"], dispatch=DISPATCH,
                          funcs_env={"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "ctx-2", "AUTOTUNE_CC_INDEX": "1"},
                          kind_env={"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "ctx-2"})


def test_the_contexts_tell_apart_what_the_edges_do_not(known):
    """leaf and mid are entered from several chains: every context tells more apart than the edges, and
    each window differently (ctx-8 from the whole stack under fd's 12-deep chain)."""
    from test_edge_kind import classic_map

    funcs, data = known["funcs"], INPUTS["mixed"]
    counts = {m: len(ctx_map(funcs, data, m)) for m in CONTEXT_METRICS}
    seq: list[int] = []  # the blocks in order: the edge kind's map of them, without contexts

    def walk(f: str) -> None:
        seq.append(block_id(str(funcs), f, 0))
        for callee in CALLS[f]:
            walk(callee)

    for b in data:
        if chr(b) in "abcd":
            walk(f"f{chr(b)}")
    edges = classic_map(seq, 1 << 16)
    assert len(edges) < min(counts.values()), (len(edges), counts)
    maps = [frozenset(ctx_map(funcs, data, m)) for m in CONTEXT_METRICS]
    assert len(set(maps)) == len(maps) == 5  # each window keys them its own way


def test_every_execution_starts_from_an_empty_context(known, tmp_path):
    """Replay runs each input twice in one process: the covered slots are the inputs' own."""
    funcs = known["funcs"]
    d = tmp_path / "in"
    d.mkdir()
    (d / "x1").write_bytes(b"d")
    (d / "x2").write_bytes(b"a")
    doc = replay(known["builds"]["ctx"], d, AUTOTUNE_METRIC="ctx")
    assert doc["hooks"] == "inline" and doc["layout"] == "flat" and doc["key_hash"] == "afl"
    assert doc["metric"] == "ctx" and doc["overflow"] == "neverzero"
    want = set(ctx_map(funcs, b"d", "ctx")) | set(ctx_map(funcs, b"a", "ctx"))
    assert doc["covered_slots"] == len(want)


@pytest.mark.skipif(not AFL_CC, reason="afl-clang-fast is not installed")
def test_it_instruments_the_blocks_ctx_instruments(tmp_path):
    """On the demo's source, as many blocks as AFL++'s CTX (afl-clang-fast's count)."""
    assert_blocks_as_afl(tmp_path, afl_instrument="CLASSIC,CTX",
                         ours_env={"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "ctx"},
                         counted=r"(\d+) blocks instrumented \(ctx, 0 callers\)")


# ---- refusals ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_ctx(tmp_path_factory) -> Path:
    return build_harness(sources=[demo.harness_source()], output=tmp_path_factory.mktemp("ctx-demo") / "demo",
                         extra_cflags=list(demo.DEMO_CFLAGS), kind="ctx", cc_vars={"AUTOTUNE_CC_CTX": "ctx-2"})


@pytest.mark.parametrize("env, needle", [
    ({"AUTOTUNE_METRIC": "ctx"},
     "AUTOTUNE_METRIC=ctx: this program was built with AUTOTUNE_CC_INSTRUMENT=ctx AUTOTUNE_CC_CTX=ctx-2, which counts "
     "ctx-2 inline and nothing else; fix: set AUTOTUNE_METRIC=ctx-2 (or unset it), or rebuild with "
     "AUTOTUNE_CC_CTX=ctx or AUTOTUNE_CC_INSTRUMENT=full"),
    ({"AUTOTUNE_METRIC": "edge"},
     "fix: set AUTOTUNE_METRIC=ctx-2 (or unset it), or rebuild with AUTOTUNE_CC_INSTRUMENT=full"),
    ({"AUTOTUNE_METRIC": "guard"}, "fix: set AUTOTUNE_METRIC=ctx-2"),
    ({"AUTOTUNE_LAYOUT": "twolevel"}, "AUTOTUNE_LAYOUT=twolevel: a program built with AUTOTUNE_CC_INSTRUMENT=ctx"),
    ({"AUTOTUNE_COUNTER_BITS": "16"}, "AUTOTUNE_COUNTER_BITS=16: a program built with AUTOTUNE_CC_INSTRUMENT=ctx"),
    ({"AUTOTUNE_OVERFLOW": "wrap"}, "counts as AFL++'s CTX does, skipping zero on overflow (NeverZero)"),
    ({"AUTOTUNE_KEY_HASH": "exact"}, "keys each edge in its call context as AFL++'s CTX does"),
    ({"AUTOTUNE_SEED": "7"}, "AUTOTUNE_SEED=7: a program built with AUTOTUNE_CC_INSTRUMENT=ctx"),
])
def test_a_configuration_the_ctx_build_cannot_serve_is_refused(demo_ctx, tmp_path, env, needle):
    assert_refused(demo_ctx, tmp_path, env, needle)


def test_what_it_can_serve_is_accepted_explicitly(demo_ctx):
    assert_serves_explicitly(demo_ctx, "ctx-2")


def test_the_probe_refuses_a_ctx_build(demo_ctx, tmp_path):
    assert_probe_refuses(demo_ctx, tmp_path, metric="ctx-2", kind="ctx")


@pytest.mark.parametrize("funcs_env", [
    {"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "caller"},  # objects of two contexts
    {"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "4"},  # ngram objects in a ctx link
    {"AUTOTUNE_CC_INSTRUMENT": "edge"},  # edge objects in a ctx link
    {"AUTOTUNE_CC_INSTRUMENT": "full"},  # guards and hooks in a ctx link
])
def test_a_program_mixing_kinds_or_contexts_is_refused(known, tmp_path, funcs_env):
    assert_mixing_refused(tmp_path, funcs=known["funcs"], dispatch=DISPATCH, funcs_env=funcs_env,
                          kind_env={"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "ctx-2"})


@pytest.mark.parametrize("env, needle", [
    ({"AUTOTUNE_CC_INSTRUMENT": "ctx"}, "AUTOTUNE_CC_INSTRUMENT=ctx needs the call-context metric it counts: "
                                        "AUTOTUNE_CC_CTX is not set (fix: set AUTOTUNE_CC_CTX to ctx, caller, ctx-2, "
                                        "ctx-4 or ctx-8, e.g. AUTOTUNE_CC_CTX=ctx-2 as AFL++'s CTX-2)"),
    ({"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "ctx-3"}, "AUTOTUNE_CC_CTX=ctx-3 (fix:"),
    ({"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "2"}, "AUTOTUNE_CC_CTX=2 (fix:"),
    ({"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "4", "AUTOTUNE_CC_CTX": "ctx"},
     "AUTOTUNE_CC_CTX=ctx applies to AUTOTUNE_CC_INSTRUMENT=ctx only, not ngram"),
    ({"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "ctx", "AUTOTUNE_CC_INDEX": "2"},
     "AUTOTUNE_CC_INDEX=2 is not 0 or 1"),
    ({"AUTOTUNE_CC_INSTRUMENT": "blocks", "AUTOTUNE_CC_INDEX": "1"},
     "AUTOTUNE_CC_INDEX=1 applies to the inline kinds (AUTOTUNE_CC_INSTRUMENT=edge or ngram or ctx), not blocks"),
])
def test_the_wrapper_refuses_a_bad_context(tmp_path, env, needle):
    assert_wrapper_refuses(tmp_path, env, needle)


def test_the_plugin_alone_refuses_a_bad_context(tmp_path):
    """Loaded by hand (-fpass-plugin) under AUTOTUNE_CC_INSTRUMENT=ctx with a bad context: a compile error."""
    assert_plugin_refuses(tmp_path, {"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "ctx-16"},
                          "AUTOTUNE_CC_CTX=ctx, caller, ctx-2, ctx-4 or ctx-8 (got 'ctx-16')")


@needs_afl
def test_afl_showmap_shows_the_refusal(demo_ctx, tmp_path):
    assert_showmap_refuses(demo_ctx, tmp_path, {"AUTOTUNE_METRIC": "ctx-4"},
                           "AUTOTUNE_METRIC=ctx-4: this program was built with AUTOTUNE_CC_INSTRUMENT=ctx")


# ---- under the real afl tools -----------------------------------------------------------------------

@needs_afl
@pytest.mark.parametrize("persistent", ["10000", "1"])
def test_afl_showmap_reads_the_known_contexts(known, tmp_path, persistent):
    """Files one after another through one persistent child (or a fork each): each map is exactly its
    own keys and counts (the context of one file does not reach into the next)."""
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for name, data in INPUTS.items():
        (in_dir / name).write_bytes(data)
    for m in ("ctx", "ctx-8"):
        maps = _showmap_maps(known["builds"][m], in_dir, tmp_path / m, clean_env(AUTOTUNE_AFL_PERSISTENT=persistent))
        for name, data in INPUTS.items():
            want = ctx_map(known["funcs"], data, m)
            if not want:
                assert not maps.get(name), (name, m)
            else:
                assert maps[name] == want, (name, m)


@needs_afl
@pytest.mark.parametrize("indexed", [False, True])
def test_afl_fuzz_runs_the_ctx_build_with_full_stability(tmp_path, indexed):
    """Also counted through the index: the fork server's children assign slots in the index they
    share, so a key keeps its slot from one execution to the next."""
    binary = build_harness(sources=[PROGRAMS_AFL / "branchy.c"], output=tmp_path / "branchy", extra_cflags=["-O0"],
                           kind="ctx", cc_vars={"AUTOTUNE_CC_CTX": "ctx", **({"AUTOTUNE_CC_INDEX": "1"} if indexed else {})})
    assert_afl_fuzz_full_stability(binary, tmp_path)


# ---- the race -------------------------------------------------------------------------------------------

def test_the_race_runs_a_context_metric_on_the_ctx_kind_flat_or_indexed():
    for m, keys in (("caller", 900.0), ("ctx-2", 1500.0), ("ctx", 2000.0)):
        assert_race_puts_it_on_the_kind(metric=m, keys=keys,
                                        build_vars={"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": m})


@pytest.mark.slow
def test_ctx_runtime_and_harness_under_asan_and_ubsan(known, tmp_path):
    """The runtime compiled with ASan+UBSan, linked with ctx-8 code itself built with ASan (our loads and
    stores carry nosanitize, so ASan's pass, which runs after ours, leaves them alone): the counts are
    the definition's."""
    funcs = known["funcs"]
    known_san = build_sanitized(tmp_path, funcs, DISPATCH, kind="ctx",
                                cc_env={"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "ctx-8"})
    nm = subprocess.run(["nm", "funcs.o"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "autotune_ctx_hist" in nm, nm
    maps = sanitized_maps(known_san, tmp_path, {name: INPUTS[name] for name in ("abc", "repeat300", "mixed")})
    for name, m in maps.items():
        assert m == ctx_map(funcs, INPUTS[name], "ctx-8"), name
    # counted through the index: the slow path's call into the runtime (autotune_index_assign) too
    d = tmp_path / "indexed"
    d.mkdir()
    indexed = build_sanitized(d, funcs, DISPATCH, kind="ctx", cc_env={"AUTOTUNE_CC_INSTRUMENT": "ctx",
                                                                      "AUTOTUNE_CC_CTX": "ctx-8", "AUTOTUNE_CC_INDEX": "1"})
    for name in ("abc", "repeat300", "mixed"):
        got, rc = direct_map(indexed, [tmp_path / name], clean_env(**SANITIZER_RUN, AUTOTUNE_MAP_SIZE="1024"))
        assert rc == 0 and nonzero(got) == indexed_map(funcs, INPUTS[name], "ctx-8", 1 << 24, 1024), name
