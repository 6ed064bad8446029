"""The edge build kind of `autotune cc` (AUTOTUNE_CC_INSTRUMENT=edge): edges counted inline by our pass
(kernels/plugin/autotune_edges.cpp) as AFL++'s CLASSIC counts them, end to end with real clang builds:

- the pass on a program with known control flow: afl's map holds exactly the edges executed, at
  (cur ^ prev >> 1) & (map size - 1) of the documented compile-time ids, with NeverZero counts, and
  two builds give the same ids; it instruments the blocks CLASSIC instruments (afl-clang-fast's count);
- under the real afl-showmap and a few seconds of the real afl-fuzz (100 % stability), in
  persistent and fork mode, and on a crash;
- configurations the build cannot serve are refused with one line naming the fix (metric, layout,
  width, overflow, key hash, seed, the census, a build mixing kinds);
- the plugin compiles warning-free; the race puts the edge metric on the edge kind when its map fits.
No timing is asserted.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from autotune import demo
from autotune.target import build_harness
from inline_kinds import (AFL_CC, AFL_FUZZ, AFL_SHOWMAP, AUTOTUNE_CC, SANITIZER_RUN, assert_afl_fuzz_full_stability,
                          assert_blocks_as_afl, assert_probe_refuses, assert_race_puts_it_on_the_kind,
                          assert_serves_explicitly, assert_showmap_refuses, build_sanitized, sanitized_maps)
from test_guard import _showmap_maps, clean_env, direct_map, inline_counters, output, replay

PROGRAMS_AFL = Path(__file__).parent / "programs_afl"
PROGRAMS = Path(__file__).parent / "programs"
needs_afl = pytest.mark.skipif(not (AFL_FUZZ and AFL_SHOWMAP), reason="afl++ is not installed")

# ---- the documented block id (autotune/cc.py, kernels/plugin/autotune_edges.cpp) -------------------

M64 = (1 << 64) - 1
SEED = 0x6175746F74756E65  # "autotune"
GOLDEN = 0x9E3779B97F4A7C15


def mix64(x: int) -> int:
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for c in data:
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def block_id(module: str, function: str, index: int) -> int:
    return mix64(fnv1a64(module.encode() + b"\0" + function.encode()) ^ SEED ^ ((index * GOLDEN) & M64)) & 0xFFFFFFFF


def classic_map(blocks: list[int], map_size: int) -> dict[int, int]:
    """The map one execution leaves: prev = 0 at the start, NeverZero 8-bit counters."""
    out: dict[int, int] = {}
    prev = 0
    for cur in blocks:
        i = (cur ^ prev) & (map_size - 1)
        c = (out.get(i, 0) + 1) & 0xFF
        out[i] = c + (c == 0)
        prev = cur >> 1
    return out


# ---- a program whose instrumented blocks run in a known order ---------------------------------------

FUNCS = r"""
volatile unsigned sink; /* unsigned: no UBSan overflow check, so one block under -fsanitize=undefined too */
/* one block each: CLASSIC instruments every block of a one-block function */
__attribute__((noinline)) void fa(void) { sink += 1; }
__attribute__((noinline)) void fb(void) { sink += 2; }
__attribute__((noinline)) void fc(void) { sink += 3; }
"""
# compiled without instrumentation: the only instrumented blocks are fa, fb and fc, one per call
DISPATCH = r"""
#include <stddef.h>
#include <stdint.h>
void fa(void), fb(void), fc(void);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (d[i] == 'a') fa();
    else if (d[i] == 'b') fb();
    else if (d[i] == 'c') fc();
  }
  return 0;
}
"""


def _run(cmd: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stderr}"
    return p


def build_known(d: Path, funcs: Path, kind_of_funcs: str = "edge", **cc_env: str) -> Path:
    """funcs.c by autotune cc (``kind_of_funcs``), the dispatcher by plain clang, linked by autotune cc
    with the edge kind."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "dispatch.c").write_text(DISPATCH)
    env = {**clean_env(), **cc_env}
    _run([AUTOTUNE_CC, "-O1", "-c", str(funcs), "-o", "funcs.o"], {**env, "AUTOTUNE_CC_INSTRUMENT": kind_of_funcs}, d)
    _run(["clang", "-O1", "-c", "dispatch.c", "-o", "dispatch.o"], env, d)
    _run([AUTOTUNE_CC, "-fsanitize=fuzzer", "funcs.o", "dispatch.o", "-o", "known"],
         {**env, "AUTOTUNE_CC_INSTRUMENT": "edge"}, d)
    return d / "known"


@pytest.fixture(scope="module")
def known(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(the source, a build, a second build of it in another directory)."""
    src_dir = tmp_path_factory.mktemp("edge-src")
    funcs = src_dir / "funcs.c"
    funcs.write_text(FUNCS)
    return funcs, build_known(src_dir / "one", funcs), build_known(src_dir / "two", funcs)


INPUTS = {"abc": b"abcab", "none": b"xyz", "repeat300": b"a" * 300, "mixed": b"cacbbbxa"}


def expected(funcs: Path, data: bytes, map_size: int = 1 << 16) -> dict[int, int]:
    ids = {ch: block_id(str(funcs), f"f{ch}", 0) for ch in "abc"}
    return classic_map([ids[chr(b)] for b in data if chr(b) in ids], map_size)


def nonzero(m: bytes) -> dict[int, int]:
    return {i: b for i, b in enumerate(m) if b}


def test_the_map_holds_the_edges_executed_at_the_documented_ids(known, tmp_path):
    funcs, one, two = known
    for name, data in INPUTS.items():
        f = tmp_path / name
        f.write_bytes(data)
        want = expected(funcs, data)
        for binary in (one, two):  # two builds: the same ids
            m, rc = direct_map(binary, [f], clean_env(AUTOTUNE_METRIC="edge"))
            assert rc == 0 and nonzero(m) == want, name
    # 300 hits of the edge fa -> fa: 299 wraps to 43 and, skipping zero once, reads 44 (CLASSIC's NeverZero)
    assert sorted(expected(funcs, INPUTS["repeat300"]).values()) == [1, 44]
    # the mask follows the run-time map size
    f = tmp_path / "abc"
    m, rc = direct_map(one, [f], clean_env(AUTOTUNE_METRIC="edge", AUTOTUNE_MAP_SIZE="1024"))
    assert rc == 0 and nonzero(m) == expected(funcs, INPUTS["abc"], 1024) and max(nonzero(m)) < 1024


def test_prev_starts_at_zero_in_every_execution(known, tmp_path):
    """Replay runs each input twice (warm-up and a timed round) in one process: the same covered
    slots as one input alone, so no execution starts from the previous one's last block."""
    funcs, one, _ = known
    d = tmp_path / "in"
    d.mkdir()
    (d / "x1").write_bytes(b"ab")
    (d / "x2").write_bytes(b"ba")
    doc = replay(one, d, AUTOTUNE_METRIC="edge")
    assert doc["hooks"] == "inline" and doc["layout"] == "flat" and doc["key_hash"] == "afl"
    assert doc["overflow"] == "neverzero"
    want = set(expected(funcs, b"ab")) | set(expected(funcs, b"ba"))
    assert doc["covered_slots"] == len(want) == 4  # 0->a, a->b, 0->b, b->a; not b->b or a->a across inputs


@pytest.mark.skipif(not AFL_CC, reason="afl-clang-fast is not installed")
def test_it_instruments_the_blocks_classic_instruments(tmp_path):
    """On the demo's source, our pass instruments as many blocks as AFL++'s CLASSIC pass (same
    flags, both at one point of the pipeline: OptimizerLast to LLVM 15, OptimizerEarly from LLVM 16; selects not split)."""
    stderr = assert_blocks_as_afl(tmp_path, afl_instrument="CLASSIC", ours_env={"AUTOTUNE_CC_INSTRUMENT": "edge"},
                                  counted=r"(\d+) blocks instrumented")
    ids = re.findall(r"\[autotune-edges\] (\S+) (\S+) (\d+) ([0-9a-f]{8})$", stderr, re.M)
    assert len(ids) == int(re.search(r"(\d+) blocks instrumented", stderr).group(1))
    assert all(int(h, 16) == block_id(mod, fn, int(i)) for mod, fn, i, h in ids)


def installed_clangs() -> list[str]:
    """The clang the build kinds use here, and every other clang-N (LLVM 14 .. 21) with its
    llvm-config-N installed (CI's host adds clang-16, the first LLVM with AFL++'s passes at
    OptimizerEarly: kernels/plugin/autotune_selects.cpp)."""
    import shutil

    from autotune.llvm import LLVM_VERSIONS, clang_major, find_clang

    default = find_clang()
    found = {clang_major(default): default}
    for m in LLVM_VERSIONS:
        if m not in found and shutil.which(f"clang-{m}") and shutil.which(f"llvm-config-{m}"):
            found[m] = shutil.which(f"clang-{m}")
    return [found[m] for m in sorted(found)]


@pytest.mark.parametrize("clang", installed_clangs())
def test_the_plugins_and_the_runtime_build_warning_free(clang):
    """The pass plugins as autotune cc builds them for each LLVM (clang++ -Wall -Wextra against its
    headers), and the runtime it links, said nothing while building: checked on the build's own log
    (autotune.runtime.build keeps it beside each artefact), the very build the other tests load."""
    from autotune.runtime import artifacts
    from autotune.runtime.build import BUILD_LOG, C_STD_FLAGS

    assert {"-Wall", "-Wextra"} <= set(artifacts.PLUGIN_CXXFLAGS) & set(C_STD_FLAGS)
    # the runtime's C is built by one compiler whatever the LLVM (cached: checked once, read again)
    built = [artifacts.runtime_archive(), artifacts.driver_object(),
             *(artifacts.pass_plugin(source, clang) for source in
               (artifacts.EDGE_PLUGIN_SOURCE, artifacts.PLUGIN_SOURCE, artifacts.COUNTER_PLUGIN_SOURCE))]
    for artefact in built:
        log = artefact.parent / BUILD_LOG
        assert log.is_file() and log.read_text() == "", (artefact, log.read_text())


@pytest.mark.parametrize("clang", installed_clangs())
def test_every_sanitizer_coverage_kind_counts_the_same_points_under_each_llvm(tmp_path, clang):
    """The demo by autotune cc with each installed clang: the guard kind's counters and the full and
    blocks kinds' guards are the same points (the census counts what guard counts), whether clang's
    SanitizerCoverage instruments (LLVM <= 15) or the select plugin's at OptimizerEarly (16+)."""
    sizes = {kind: sancov_points(tmp_path / f"demo-{kind}", kind, clang) for kind in ("guard", "blocks", "full")}
    assert sizes["guard"] == sizes["blocks"] == sizes["full"] > 200, (clang, sizes)


def sancov_points(out: Path, kind: str, clang: str, cflags: tuple[str, ...] = ()) -> int:
    """The demo built by autotune cc as ``kind`` with ``clang`` (and ``cflags``): how many points
    SanitizerCoverage instrumented (guards or 8-bit counters; 0 without its section)."""
    b = build_harness(sources=[demo.harness_source()], output=out, extra_cflags=[*demo.DEMO_CFLAGS, *cflags],
                      kind=kind, cc_vars={"AUTOTUNE_CC": clang})
    if kind == "guard":  # autotune cc links the counters onto pages of their own (kernels/guard_counters.ld)
        return inline_counters(b)
    sections = subprocess.run(["readelf", "-S", "-W", str(b)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"__sancov_guards\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)", sections)
    return int(m.group(1), 16) // 4 if m else 0


@pytest.mark.parametrize("clang", installed_clangs())
def test_a_users_sanitizer_coverage_allowlist_holds_under_each_llvm(tmp_path, clang):
    """A build that gives SanitizerCoverage its own allowlist gets what the list says with every LLVM:
    one that matches no source leaves the demo without a point, one that matches every source and
    function instruments it. (From LLVM 16 the select plugin runs a SanitizerCoverage of its own,
    which reads no list; autotune cc must leave such a compile to clang's pass.)"""
    none = tmp_path / "none.txt"
    none.write_text("src:/nonexistent/*\n")
    every = tmp_path / "every.txt"
    every.write_text("src:*\nfun:*\n")
    for kind in ("guard", "blocks"):
        assert sancov_points(tmp_path / f"none-{kind}", kind, clang, (f"-fsanitize-coverage-allowlist={none}",)) == 0
        assert sancov_points(tmp_path / f"every-{kind}", kind, clang, (f"-fsanitize-coverage-allowlist={every}",)) > 200


# ---- refusals ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_edge(tmp_path_factory) -> Path:
    return build_harness(sources=[demo.harness_source()], output=tmp_path_factory.mktemp("edge-demo") / "demo",
                         extra_cflags=list(demo.DEMO_CFLAGS), kind="edge")


def assert_refused(binary: Path, tmp_path: Path, env: dict[str, str], needle: str) -> None:
    """Replaying one input under ``env`` stops with exit 2 and one line holding ``needle`` and a fix."""
    (tmp_path / "x").write_bytes(b"x")
    p = subprocess.run([str(binary), str(tmp_path / "x")], capture_output=True, timeout=60, text=True,
                       env=clean_env(AUTOTUNE_REPLAY_ROUNDS="1", **env))
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and needle in p.stderr and "fix:" in p.stderr, p.stderr


@pytest.mark.parametrize("env, needle", [
    ({"AUTOTUNE_METRIC": "ngram-4"}, "AUTOTUNE_CC_INSTRUMENT=edge; fix: set AUTOTUNE_METRIC=edge"),
    ({"AUTOTUNE_METRIC": "guard"}, "AUTOTUNE_METRIC=guard needs SanitizerCoverage guards"),
    ({"AUTOTUNE_METRIC": "ctx"}, "AUTOTUNE_METRIC=ctx needs function entry/exit hooks"),
    ({"AUTOTUNE_LAYOUT": "twolevel"}, "AUTOTUNE_LAYOUT=twolevel: a program built with AUTOTUNE_CC_INSTRUMENT=edge"),
    ({"AUTOTUNE_COUNTER_BITS": "16"}, "AUTOTUNE_COUNTER_BITS=16: a program built with AUTOTUNE_CC_INSTRUMENT=edge"),
    ({"AUTOTUNE_OVERFLOW": "wrap"}, "AUTOTUNE_OVERFLOW=wrap"),
    ({"AUTOTUNE_KEY_HASH": "exact"}, "AUTOTUNE_KEY_HASH=exact"),
    ({"AUTOTUNE_SEED": "7"}, "AUTOTUNE_SEED=7"),
])
def test_a_configuration_the_edge_build_cannot_serve_is_refused(demo_edge, tmp_path, env, needle):
    assert_refused(demo_edge, tmp_path, env, needle)


def test_what_it_can_serve_is_accepted_explicitly(demo_edge):
    assert_serves_explicitly(demo_edge, "edge")


def test_the_probe_refuses_an_edge_build(demo_edge, tmp_path):
    assert_probe_refuses(demo_edge, tmp_path, metric="edge", kind="edge")


def test_a_program_mixing_edge_and_guard_objects_is_refused(known, tmp_path):
    funcs, _, _ = known
    mixed = build_known(tmp_path / "mixed", funcs, kind_of_funcs="blocks")
    (tmp_path / "x").write_bytes(b"a")
    p = subprocess.run([str(mixed), str(tmp_path / "x")], capture_output=True, timeout=60, text=True,
                       env=clean_env(AUTOTUNE_REPLAY_ROUNDS="1"))
    assert p.returncode == 2 and "mixes objects of different build kinds" in p.stderr, p.stderr


@needs_afl
def test_afl_showmap_shows_the_refusal(demo_edge, tmp_path):
    assert_showmap_refuses(demo_edge, tmp_path, {"AUTOTUNE_LAYOUT": "twolevel"},
                           "AUTOTUNE_LAYOUT=twolevel: a program built with AUTOTUNE_CC_INSTRUMENT=edge")


# ---- under the real afl tools -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def afl_bins(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("edge-afl")
    return {name: build_harness(sources=[src], output=d / name, extra_cflags=["-O0"], kind="edge")
            for name, src in (("branchy", PROGRAMS_AFL / "branchy.c"), ("crashy", PROGRAMS / "crashy.c"))}


@needs_afl
@pytest.mark.parametrize("persistent", ["10000", "1"])
def test_afl_showmap_reads_the_known_edges(known, tmp_path, persistent):
    """afl-showmap runs the files one after another through one persistent child (or a fork per
    input): each file's map is exactly its own edges and counts."""
    funcs, one, _ = known
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for name, data in INPUTS.items():
        (in_dir / name).write_bytes(data)
    maps = _showmap_maps(one, in_dir, tmp_path / "o", clean_env(AUTOTUNE_AFL_PERSISTENT=persistent))
    for name, data in INPUTS.items():
        want = expected(funcs, data)
        if not want:  # no edge: afl-showmap writes an empty map file (or none)
            assert not maps.get(name), name
        else:
            assert maps[name] == want, name


@needs_afl
def test_afl_showmap_reports_the_run_time_map_size(afl_bins, tmp_path):
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for i, data in enumerate((b"FUZZ", b"FU\x90\x90\x90\x90", b"\x01\x02\x03")):
        (in_dir / f"s{i}").write_bytes(data)
    proc = subprocess.run([AFL_SHOWMAP, "-C", "-i", str(in_dir), "-o", str(tmp_path / "o"), "--",
                           str(afl_bins["branchy"])], env=clean_env(AUTOTUNE_MAP_SIZE="8192"), capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    text = output(proc)
    m = re.search(r"coverage of (\d+) edges were achieved out of (\d+) existing", text)
    assert proc.returncode == 0 and m, text
    assert int(m.group(2)) == 8192 and 5 < int(m.group(1)) < 100


@needs_afl
def test_afl_fuzz_runs_the_edge_build_with_full_stability(afl_bins, tmp_path):
    assert_afl_fuzz_full_stability(afl_bins["branchy"], tmp_path)


def test_a_crash_keeps_its_edges_in_afl_s_map(afl_bins, tmp_path):
    """The counts are written into afl's map as they happen: a crash or exit() loses none."""
    maps = {}
    for name, data in (("ok", b"b"), ("segv", b"S"), ("abort", b"A"), ("exit", b"E")):
        f = tmp_path / name
        f.write_bytes(data)
        m, rc = direct_map(afl_bins["crashy"], [f], clean_env())
        maps[name] = set(nonzero(m))
        assert rc == {"ok": 0, "segv": -11, "abort": -6, "exit": 3}[name], (name, rc)
    for name in ("segv", "abort", "exit"):
        assert maps[name] - maps["ok"], name  # doomed()'s edge and the path to it


# ---- the race -------------------------------------------------------------------------------------------

def test_the_race_runs_edge_on_the_edge_kind_flat_or_indexed():
    assert_race_puts_it_on_the_kind(metric="edge", keys=400.0, build_vars={"AUTOTUNE_CC_INSTRUMENT": "edge"},
                                    others=("guard",))


@pytest.mark.slow
def test_edge_runtime_and_harness_under_asan_and_ubsan(known, tmp_path):
    """The runtime (cov_ids.c's edge area, cov_config.c's check, cov_sink.c's exec begin/end) compiled with ASan+UBSan, linked
    with edge-instrumented code that is itself built with ASan (our loads and stores carry nosanitize,
    so ASan's pass, which runs after ours, leaves them alone): the counts are the documented ones."""
    funcs, _, _ = known
    known_san = build_sanitized(tmp_path, funcs, DISPATCH, cc_env={}, kind="edge")
    maps = sanitized_maps(known_san, tmp_path, {name: INPUTS[name] for name in ("abc", "repeat300")})
    for name, m in maps.items():
        assert m == expected(funcs, INPUTS[name]), name
    d = tmp_path / "in"
    d.mkdir()
    (d / "x").write_bytes(b"abc")
    p = subprocess.run([str(known_san), str(d)], capture_output=True, text=True, timeout=120,
                       env=clean_env(**SANITIZER_RUN, AUTOTUNE_REPLAY_ROUNDS="2", AUTOTUNE_MAP_SIZE="256"))
    assert p.returncode == 0 and '"covered_slots": 3' in p.stdout, p.stderr
