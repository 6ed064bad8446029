"""The ngram build kind of `autotune cc` (AUTOTUNE_CC_INSTRUMENT=ngram, AUTOTUNE_CC_NGRAM=N): N-grams of
blocks counted inline by the N-gram mode of our pass (kernels/plugin/autotune_edges.cpp) as AFL++'s
NGRAM-N counts them, end to end with real clang builds:

- on a program with known control flow: afl's map holds exactly the keys of the N-gram definition,
  (cur ^ (p1 >> 1) ^ .. ^ (p(N-1) >> 1)) & (map size - 1) of the documented compile-time ids, with
  NeverZero counts, for several N; two builds give the same ids; N = 2 is the edge kind's map;
- under the real afl-showmap (persistent and fork mode) and a few seconds of the real afl-fuzz
  (100 % stability); the window starts empty in every execution;
- what the build cannot serve is refused with one line naming the fix (metric, N, layout, width,
  overflow, key hash, seed, the census, objects of two N or two kinds), and so are bad N at compile
  time; the race puts ngram-N on the ngram kind when its flat map fits.
No timing is asserted.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from autotune import demo
from autotune.target import build_harness
from inline_kinds import (AFL_CC, AFL_FUZZ, AFL_SHOWMAP, AUTOTUNE_CC, assert_afl_fuzz_full_stability,
                          assert_blocks_as_afl, assert_mixing_refused, assert_plugin_refuses, assert_probe_refuses,
                          assert_race_puts_it_on_the_kind, assert_serves_explicitly, assert_showmap_refuses,
                          assert_wrapper_refuses, build_sanitized, sanitized_maps)
from test_edge_kind import DISPATCH, INPUTS, _run, assert_refused, block_id, nonzero
from test_guard import _showmap_maps, clean_env, direct_map, replay

PROGRAMS_AFL = Path(__file__).parent / "programs_afl"
needs_afl = pytest.mark.skipif(not (AFL_FUZZ and AFL_SHOWMAP), reason="afl++ is not installed")


def ngram_map(blocks: list[int], n: int, map_size: int) -> dict[int, int]:
    """The map one execution leaves under the N-gram definition: the key of a block is its id xor
    the previous N-1 blocks' ids shifted right by one (0 before the execution's first block), and
    the counters are 8-bit NeverZero. Computed from the definition, not the pass's rolling xor."""
    out: dict[int, int] = {}
    for i, cur in enumerate(blocks):
        key = cur
        for prev in blocks[max(0, i - (n - 1)):i]:
            key ^= prev >> 1
        slot = key & (map_size - 1)
        c = (out.get(slot, 0) + 1) & 0xFF
        out[slot] = c + (c == 0)
    return out


# one block per function, three functions, and a fourth so that windows of up to 8 see distinct ids
FUNCS = r"""
volatile unsigned sink;
__attribute__((noinline)) void fa(void) { sink += 1; }
__attribute__((noinline)) void fb(void) { sink += 2; }
__attribute__((noinline)) void fc(void) { sink += 3; }
"""
NGRAM_INPUTS = {**INPUTS, "long": b"abcabcaabbccacbcbabcbbbaaacxcab" * 3}


def build_known(d: Path, funcs: Path, n: int, funcs_env: dict[str, str] | None = None) -> Path:
    """funcs.c by autotune cc (the ngram kind with N = n, or ``funcs_env``), the dispatcher by plain
    clang, linked by autotune cc with the ngram kind."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "dispatch.c").write_text(DISPATCH)
    kind = {"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": str(n)}
    _run([AUTOTUNE_CC, "-O1", "-c", str(funcs), "-o", "funcs.o"], clean_env(**(funcs_env or kind)), d)
    _run(["clang", "-O1", "-c", "dispatch.c", "-o", "dispatch.o"], clean_env(), d)
    _run([AUTOTUNE_CC, "-fsanitize=fuzzer", "funcs.o", "dispatch.o", "-o", "known"], clean_env(**kind), d)
    return d / "known"


@pytest.fixture(scope="module")
def known(tmp_path_factory) -> dict:
    """The source and builds for N = 2, 3, 5, 8 (and a second N = 8 build in another directory). The
    pass moves the window of N - 1 words as 4-word vectors: N = 3 fills part of one, N = 5 all of
    one, N = 8 spans two (a word crosses from the first to the second at each block)."""
    src_dir = tmp_path_factory.mktemp("ngram-src")
    funcs = src_dir / "funcs.c"
    funcs.write_text(FUNCS)
    builds = {n: build_known(src_dir / f"n{n}", funcs, n) for n in (2, 3, 5, 8)}
    return {"funcs": funcs, "builds": builds, "again8": build_known(src_dir / "again8", funcs, 8)}


def expected(funcs: Path, data: bytes, n: int, map_size: int = 1 << 16) -> dict[int, int]:
    ids = {ch: block_id(str(funcs), f"f{ch}", 0) for ch in "abc"}
    return ngram_map([ids[chr(b)] for b in data if chr(b) in ids], n, map_size)


def test_the_map_holds_the_ngram_keys_at_the_documented_ids(known, tmp_path):
    funcs = known["funcs"]
    for name, data in NGRAM_INPUTS.items():
        f = tmp_path / name
        f.write_bytes(data)
        for n, binary in [*known["builds"].items(), (8, known["again8"])]:  # the second build: same ids
            m, rc = direct_map(binary, [f], clean_env(AUTOTUNE_METRIC=f"ngram-{n}"))
            assert rc == 0 and nonzero(m) == expected(funcs, data, n), (name, n)
    # the definitions differ: longer windows tell more paths apart on this input
    long = NGRAM_INPUTS["long"]
    assert len(expected(funcs, long, 2)) < len(expected(funcs, long, 3)) < len(expected(funcs, long, 8))
    # the metric is the build's when AUTOTUNE_METRIC is unset; the mask follows the run-time map size
    f = tmp_path / "long"
    m, rc = direct_map(known["builds"][8], [f], clean_env(AUTOTUNE_MAP_SIZE="1024"))
    assert rc == 0 and nonzero(m) == expected(funcs, long, 8, 1024) and max(nonzero(m)) < 1024


def test_ngram_2_is_the_edge_kinds_map(known, tmp_path):
    from test_edge_kind import expected as edge_expected

    funcs = known["funcs"]
    for name, data in NGRAM_INPUTS.items():
        assert expected(funcs, data, 2) == edge_expected(funcs, data), name


def test_the_window_starts_empty_in_every_execution(known, tmp_path):
    """Replay runs each input twice in one process: the covered slots are the inputs' own."""
    funcs = known["funcs"]
    d = tmp_path / "in"
    d.mkdir()
    (d / "x1").write_bytes(b"abc")
    (d / "x2").write_bytes(b"cab")
    doc = replay(known["builds"][8], d, AUTOTUNE_METRIC="ngram-8")
    assert doc["hooks"] == "inline" and doc["layout"] == "flat" and doc["key_hash"] == "afl"
    assert doc["metric"] == "ngram-8" and doc["overflow"] == "neverzero"
    want = set(expected(funcs, b"abc", 8)) | set(expected(funcs, b"cab", 8))
    assert doc["covered_slots"] == len(want) == 6


@pytest.mark.skipif(not AFL_CC, reason="afl-clang-fast is not installed")
def test_it_instruments_the_blocks_ngram_instruments(tmp_path):
    """On the demo's source, as many blocks as AFL++'s NGRAM-8 (afl-clang-fast's count)."""
    assert_blocks_as_afl(tmp_path, afl_instrument="NGRAM-8",
                         ours_env={"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "8"},
                         counted=r"(\d+) blocks instrumented \(ngram-8\)")


# ---- refusals ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_ngram(tmp_path_factory) -> Path:
    return build_harness(sources=[demo.harness_source()], output=tmp_path_factory.mktemp("ngram-demo") / "demo",
                         extra_cflags=list(demo.DEMO_CFLAGS), kind="ngram", cc_vars={"AUTOTUNE_CC_NGRAM": "8"})


@pytest.mark.parametrize("env, needle", [
    ({"AUTOTUNE_METRIC": "ngram-4"},
     "AUTOTUNE_METRIC=ngram-4: this program was built with AUTOTUNE_CC_INSTRUMENT=ngram AUTOTUNE_CC_NGRAM=8, which "
     "counts ngram-8 inline and nothing else; fix: set AUTOTUNE_METRIC=ngram-8 (or unset it), or rebuild with "
     "AUTOTUNE_CC_NGRAM=4"),
    ({"AUTOTUNE_METRIC": "edge"}, "fix: set AUTOTUNE_METRIC=ngram-8"),
    ({"AUTOTUNE_METRIC": "guard"}, "fix: set AUTOTUNE_METRIC=ngram-8"),
    ({"AUTOTUNE_LAYOUT": "twolevel"}, "AUTOTUNE_LAYOUT=twolevel: a program built with AUTOTUNE_CC_INSTRUMENT=ngram"),
    ({"AUTOTUNE_COUNTER_BITS": "16"}, "AUTOTUNE_COUNTER_BITS=16: a program built with AUTOTUNE_CC_INSTRUMENT=ngram"),
    ({"AUTOTUNE_OVERFLOW": "wrap"}, "AUTOTUNE_OVERFLOW=wrap: a program built with AUTOTUNE_CC_INSTRUMENT=ngram"),
    ({"AUTOTUNE_KEY_HASH": "exact"}, "keys each N-gram as AFL++'s NGRAM does"),
    ({"AUTOTUNE_SEED": "7"}, "AUTOTUNE_SEED=7: a program built with AUTOTUNE_CC_INSTRUMENT=ngram"),
])
def test_a_configuration_the_ngram_build_cannot_serve_is_refused(demo_ngram, tmp_path, env, needle):
    assert_refused(demo_ngram, tmp_path, env, needle)


def test_what_it_can_serve_is_accepted_explicitly(demo_ngram):
    assert_serves_explicitly(demo_ngram, "ngram-8")


def test_the_probe_refuses_an_ngram_build(demo_ngram, tmp_path):
    assert_probe_refuses(demo_ngram, tmp_path, metric="ngram-8", kind="ngram")


@pytest.mark.parametrize("funcs_env", [
    {"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "4"},  # objects of two N
    {"AUTOTUNE_CC_INSTRUMENT": "edge"},  # edge objects in an ngram link
    {"AUTOTUNE_CC_INSTRUMENT": "blocks"},  # guards in an ngram link
])
def test_a_program_mixing_kinds_or_n_is_refused(known, tmp_path, funcs_env):
    # dispatch.c instrumented with N = 8, funcs.c with funcs_env
    assert_mixing_refused(tmp_path, funcs=known["funcs"], dispatch=DISPATCH, funcs_env=funcs_env,
                          kind_env={"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "8"})


@pytest.mark.parametrize("env, needle", [
    ({"AUTOTUNE_CC_INSTRUMENT": "ngram"}, "AUTOTUNE_CC_INSTRUMENT=ngram needs the N of its ngram-N metric: "
                                          "AUTOTUNE_CC_NGRAM is not set"),
    ({"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "1"}, "AUTOTUNE_CC_NGRAM=1 (fix: set AUTOTUNE_CC_NGRAM "
                                                                   "to an N from 2 to 8"),
    ({"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "16"}, "AUTOTUNE_CC_NGRAM=16 (fix:"),
    ({"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "x"}, "AUTOTUNE_CC_NGRAM=x (fix:"),
    ({"AUTOTUNE_CC_INSTRUMENT": "edge", "AUTOTUNE_CC_NGRAM": "8"}, "AUTOTUNE_CC_NGRAM=8 applies to "
                                                                  "AUTOTUNE_CC_INSTRUMENT=ngram only, not edge"),
])
def test_the_wrapper_refuses_a_bad_n(tmp_path, env, needle):
    assert_wrapper_refuses(tmp_path, env, needle)


def test_the_plugin_alone_refuses_a_bad_n(tmp_path):
    """Loaded by hand (-fpass-plugin) under AUTOTUNE_CC_INSTRUMENT=ngram with a bad N: a compile error."""
    assert_plugin_refuses(tmp_path, {"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "17"},
                          "AUTOTUNE_CC_NGRAM=N with 2 <= N <= 16 (got '17')")


@needs_afl
def test_afl_showmap_shows_the_refusal(demo_ngram, tmp_path):
    assert_showmap_refuses(demo_ngram, tmp_path, {"AUTOTUNE_METRIC": "ngram-4"},
                           "AUTOTUNE_METRIC=ngram-4: this program was built with AUTOTUNE_CC_INSTRUMENT=ngram")


# ---- under the real afl tools -----------------------------------------------------------------------

@needs_afl
@pytest.mark.parametrize("persistent", ["10000", "1"])
def test_afl_showmap_reads_the_known_ngrams(known, tmp_path, persistent):
    """Files one after another through one persistent child (or a fork each): each map is exactly
    its own N-grams and counts (the window of one file does not reach into the next)."""
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for name, data in NGRAM_INPUTS.items():
        (in_dir / name).write_bytes(data)
    for n in (3, 8):
        maps = _showmap_maps(known["builds"][n], in_dir, tmp_path / f"o{n}", clean_env(AUTOTUNE_AFL_PERSISTENT=persistent))
        for name, data in NGRAM_INPUTS.items():
            want = expected(known["funcs"], data, n)
            if not want:
                assert not maps.get(name), (name, n)
            else:
                assert maps[name] == want, (name, n)


@needs_afl
def test_afl_fuzz_runs_the_ngram_build_with_full_stability(tmp_path):
    binary = build_harness(sources=[PROGRAMS_AFL / "branchy.c"], output=tmp_path / "branchy", extra_cflags=["-O0"],
                           kind="ngram", cc_vars={"AUTOTUNE_CC_NGRAM": "8"})
    assert_afl_fuzz_full_stability(binary, tmp_path)


# ---- the race -------------------------------------------------------------------------------------------

def test_the_race_runs_ngram_on_the_ngram_kind_flat_or_indexed():
    for m, keys in (("ngram-4", 400.0), ("ngram-8", 900.0)):
        cs = assert_race_puts_it_on_the_kind(
            metric=m, keys=keys, build_vars={"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": m.split("-")[1]},
            others=("caller",))
        # caller without a census (the race's default keys): the ctx kind built for it, indexed
        assert cs["caller"].build_vars == {"AUTOTUNE_CC_INSTRUMENT": "ctx", "AUTOTUNE_CC_CTX": "caller",
                                           "AUTOTUNE_CC_INDEX": "1"}


def test_the_race_env_files_name_the_n(tmp_path):
    from types import SimpleNamespace

    from autotune.race.contestants import make_contestants
    from autotune.race.report import env_files

    c = {x.name: x for x in make_contestants(metrics=("ngram-8",), estimated_keys={"ngram-8": 900.0},
                                             afl_cc=True)}["ngram-8"]
    race = SimpleNamespace(decision=SimpleNamespace(recommended="ngram-8", reason="it found more"),
                           contestant=lambda name: c)
    files = env_files(SimpleNamespace(race=race), out_dir=tmp_path)
    build = files["autotune-build.env"]
    assert "AUTOTUNE_CC_INSTRUMENT=ngram" in build and "AUTOTUNE_CC_NGRAM=8" in build
    assert "the last 8 blocks make a key" in build
    assert "AFL++'s NGRAM hash" in files["autotune-run.env"]


@pytest.mark.slow
def test_ngram_runtime_and_harness_under_asan_and_ubsan(known, tmp_path):
    """The runtime compiled with ASan+UBSan, linked with ngram-8 code itself built with ASan (our loads,
    stores and the window's move carry nosanitize, so ASan's pass, which runs after ours, leaves them
    alone and calls no __asan_memmove): the counts are the definition's."""
    funcs = known["funcs"]
    known_san = build_sanitized(tmp_path, funcs, DISPATCH, kind="ngram",
                                cc_env={"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "8"})
    nm = subprocess.run(["nm", "funcs.o"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "autotune_ngram_hist" in nm and "__asan_memmove" not in nm, nm
    maps = sanitized_maps(known_san, tmp_path, {name: NGRAM_INPUTS[name] for name in ("abc", "repeat300", "long")})
    for name, m in maps.items():
        assert m == expected(funcs, NGRAM_INPUTS[name], 8), name
