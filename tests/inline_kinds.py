"""Checks shared by the tests of the inline build kinds of `autotune cc` (test_edge_kind.py: the edge
kind; test_ngram_kind.py: the ngram kind), which our pass (kernels/plugin/autotune_edges.cpp)
instruments as AFL++'s CLASSIC and NGRAM-N passes do: the same block count as afl-clang-fast, the
refusals the probe and afl-showmap show, full stability under afl-fuzz, the race's choice of the
kind, and a build under ASan and UBSan."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from autotune import demo
from programs.covtools import SANITIZE, runtime_objects
from test_guard import clean_env, direct_map, output, replay

AFL_FUZZ = shutil.which("afl-fuzz")
AFL_SHOWMAP = shutil.which("afl-showmap")
AFL_CC = shutil.which("afl-clang-fast")
AUTOTUNE_CC = str(Path(sys.executable).parent / "autotune-cc")
SANITIZER_RUN = {"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1", "UBSAN_OPTIONS": "halt_on_error=1"}  # stop at a finding


def assert_same_blocks(*, mine: int, theirs: int) -> None:
    """Our pass's block count on the demo against afl-clang-fast's CLASSIC/NGRAM count: equal. Both
    passes run at one point of LLVM's pipeline, OptimizerLast with LLVM 14 (AFL++ 4.04c) and
    OptimizerEarly from LLVM 16 (AFL++ 5.02c: 199 and 199 on the demo under clang 21; with our pass
    still at OptimizerLast it was 182 against 184)."""
    assert mine == theirs > 100, (mine, theirs)


def assert_blocks_as_afl(tmp_path: Path, *, afl_instrument: str, ours_env: dict[str, str], counted: str) -> str:
    """The demo's source compiled by afl-clang-fast under AFL_LLVM_INSTRUMENT=``afl_instrument`` and by
    autotune cc under ``ours_env`` (same flags): as many blocks instrumented (our pass's debug line
    matching ``counted``, a regular expression with the count as its group). Our stderr, for more checks."""
    src = str(demo.harness_source())
    flags = ["-O2", "-g", "-funroll-loops", "-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION=1", "-c", src]
    afl = subprocess.run([AFL_CC, *flags, "-o", str(tmp_path / "afl.o")], capture_output=True, text=True,
                         timeout=300, env=clean_env(AFL_LLVM_INSTRUMENT=afl_instrument, AFL_DEBUG="1"))
    m = re.search(r"Instrumented (\d+) locations", output(afl))
    assert afl.returncode == 0 and m, output(afl)[-2000:]
    ours = subprocess.run([AUTOTUNE_CC, *flags, "-o", str(tmp_path / "ours.o")], capture_output=True, text=True,
                          timeout=300, env=clean_env(AUTOTUNE_EDGES_DEBUG="1", **ours_env))
    n = re.search(counted, ours.stderr)
    assert ours.returncode == 0 and n, ours.stderr[-2000:]
    assert_same_blocks(mine=int(n.group(1)), theirs=int(m.group(1)))
    return ours.stderr


def assert_serves_explicitly(binary: Path, metric: str) -> None:
    """The demo replayed with every setting the kind serves given explicitly: a flat map of the
    run-time size, counted inline."""
    doc = replay(binary, demo.seed_dir(), AUTOTUNE_METRIC=metric, AUTOTUNE_LAYOUT="flat", AUTOTUNE_COUNTER_BITS="8",
                 AUTOTUNE_OVERFLOW="neverzero", AUTOTUNE_KEY_HASH="afl", AUTOTUNE_SEED="0", AUTOTUNE_MAP_SIZE="4096")
    assert doc["map_size"] == 4096 and 50 < doc["covered_slots"] < 4096 and doc["hooks"] == "inline"


def assert_probe_refuses(binary: Path, tmp_path: Path, *, metric: str, kind: str) -> None:
    """The probe server of a ``kind`` build stops with exit 2: the census needs guards."""
    r, w = os.pipe()
    r2, w2 = os.pipe()
    env = clean_env(AUTOTUNE_PROBE_CTL_FD=str(r), AUTOTUNE_PROBE_ST_FD=str(w2), AUTOTUNE_PROBE_DIR=str(tmp_path),
                    AUTOTUNE_PROBE_METRICS=metric)
    try:
        p = subprocess.run([str(binary)], env=env, pass_fds=(r, w2), capture_output=True, text=True, timeout=60)
    finally:
        for fd in (r, w, r2, w2):
            os.close(fd)
    assert p.returncode == 2 and "the census (probe) needs SanitizerCoverage guards" in p.stderr, p.stderr
    assert f"AUTOTUNE_CC_INSTRUMENT={kind}" in p.stderr


def assert_showmap_refuses(binary: Path, tmp_path: Path, env: dict[str, str], error: str) -> None:
    """The real afl-showmap, running ``binary`` under ``env``, fails and shows our one-line ``error``."""
    (tmp_path / "x").write_bytes(b"x")
    proc = subprocess.run([AFL_SHOWMAP, "-o", str(tmp_path / "o"), "--", str(binary), str(tmp_path / "x")],
                          env=clean_env(**env), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0
    assert f"[autotune] error: {error}" in output(proc), output(proc)[-2000:]


def assert_afl_fuzz_full_stability(binary: Path, tmp_path: Path) -> None:
    """A few seconds of the real afl-fuzz (-V 4) on ``binary`` from one seed: the map size our runtime
    reports in the handshake (AUTOTUNE_MAP_SIZE's default), edges and a queue found, 100 % stability."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "seed").write_bytes(b"AAAA")
    proc = subprocess.run([AFL_FUZZ, "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "-V", "4", "--",
                           str(binary)], env=clean_env(), capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert proc.returncode == 0, output(proc)[-3000:]
    lines = (tmp_path / "out" / "default" / "fuzzer_stats").read_text().splitlines()
    stats = {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    assert int(stats["total_edges"]) == 65536
    assert int(stats["edges_found"]) > 5 and int(stats["corpus_count"]) > 1
    assert stats["stability"] == "100.00%"


def assert_race_puts_it_on_the_kind(*, metric: str, keys: float, build_vars: dict[str, str], others=()) -> dict:
    """The race's contestant for ``metric`` with ``keys`` estimated keys (its flat map fits the inline
    kinds' largest map) is built with ``build_vars`` and runs a flat map as AFL++ does; with 50,000 keys
    it goes to the two-level map on a hooked kind. The contestants (with ``others``), by name."""
    from autotune.race.contestants import EDGE_KIND_MAX_MAP_SLOTS, index_slots_for, make_contestants

    cs = {c.name: c for c in make_contestants(metrics=(*others, metric), estimated_keys={metric: keys}, afl_cc=True)}
    h = index_slots_for(keys=keys, max_collision_rate=0.02)
    assert h <= EDGE_KIND_MAX_MAP_SLOTS
    assert cs[metric].build_vars == build_vars
    assert cs[metric].env == {"AUTOTUNE_METRIC": metric, "AUTOTUNE_LAYOUT": "flat", "AUTOTUNE_MAP_SIZE": str(h),
                              "AUTOTUNE_COUNTER_BITS": "8", "AUTOTUNE_OVERFLOW": "neverzero", "AUTOTUNE_KEY_HASH": "afl"}
    # too many keys for a flat map of that size: the same kind built indexed, counting AFL++'s key inline
    # through a two-level map whose index holds them within the limit and whose dense map has room for them
    big = {c.name: c for c in make_contestants(metrics=(metric,), estimated_keys={metric: 50000.0}, afl_cc=True)}
    assert big[metric].build_vars == {**build_vars, "AUTOTUNE_CC_INDEX": "1"}
    env = big[metric].env
    assert env["AUTOTUNE_LAYOUT"] == "twolevel" and env["AUTOTUNE_KEY_HASH"] == "afl"
    assert int(env["AUTOTUNE_INDEX_SIZE"]) == index_slots_for(keys=50000.0, max_collision_rate=0.02) > EDGE_KIND_MAX_MAP_SLOTS
    assert 100000 <= int(env["AUTOTUNE_MAP_SIZE"]) < int(env["AUTOTUNE_INDEX_SIZE"])
    assert env.get("AUTOTUNE_COUNTER_BITS", "8") == "8" and env.get("AUTOTUNE_OVERFLOW", "neverzero") == "neverzero"
    return cs


def build_sanitized(d: Path, funcs: Path, dispatch: str, *, cc_env: dict[str, str], kind: str) -> Path:
    """funcs.c compiled with ASan+UBSan and our pass (-fpass-plugin, under ``cc_env``), the
    dispatcher ``dispatch`` with the sanitizers only, linked with the run's ASan+UBSan runtime
    (shared with the other tests) and the ``kind`` marker: d/known. funcs.o stays in ``d``."""
    from autotune.cc import LINK_LIBS, kind_marker
    from autotune.runtime import artifacts

    objs = runtime_objects(opt="-O1", san=SANITIZE)
    (d / "dispatch.c").write_text(dispatch)
    steps = ([["clang", "-O1", *SANITIZE, f"-fpass-plugin={artifacts.edge_plugin()}", "-c", str(funcs), "-o", "funcs.o"],
              clean_env(**cc_env)],
             [["clang", "-O1", *SANITIZE, "-c", "dispatch.c", "-o", "dispatch.o"], clean_env()],
             [["clang", *SANITIZE, "funcs.o", "dispatch.o", *objs, "-o", "known", *LINK_LIBS, kind_marker(kind)],
              clean_env()])
    for cmd, env in steps:
        p = subprocess.run(cmd, env=env, cwd=d, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, f"{' '.join(cmd)}\n{p.stderr}"
    return d / "known"


def sanitized_maps(binary: Path, tmp_path: Path, inputs: dict[str, bytes]) -> dict[str, dict[int, int]]:
    """Each input's map (its nonzero slots) from ``binary`` run directly under ASan and UBSan, which
    stop it at the first finding (the run must exit 0)."""
    env = clean_env(**SANITIZER_RUN)
    maps = {}
    for name, data in inputs.items():
        f = tmp_path / name
        f.write_bytes(data)
        m, rc = direct_map(binary, [f], env)
        assert rc == 0, name
        maps[name] = {i: b for i, b in enumerate(m) if b}
    return maps


def assert_mixing_refused(tmp_path: Path, *, funcs: Path, dispatch: str, funcs_env: dict[str, str],
                          kind_env: dict[str, str]) -> None:
    """funcs.c compiled under ``funcs_env``, the dispatcher under ``kind_env`` and the program linked
    under it: the runtime stops at start-up (exit 2) naming the mixed build."""
    from test_edge_kind import _run

    d = tmp_path / "mixed"
    d.mkdir(parents=True)
    (d / "dispatch.c").write_text(dispatch)
    _run([AUTOTUNE_CC, "-O1", "-c", str(funcs), "-o", "funcs.o"], clean_env(**funcs_env), d)
    _run([AUTOTUNE_CC, "-O1", "-c", "dispatch.c", "-o", "dispatch.o"], clean_env(**kind_env), d)
    _run([AUTOTUNE_CC, "-fsanitize=fuzzer", "funcs.o", "dispatch.o", "-o", "mixed"], clean_env(**kind_env), d)
    (tmp_path / "x").write_bytes(b"a")
    p = subprocess.run([str(d / "mixed"), str(tmp_path / "x")], capture_output=True, timeout=60, text=True,
                       env=clean_env(AUTOTUNE_REPLAY_ROUNDS="1"))
    assert p.returncode == 2 and "mixes objects of different build kinds" in p.stderr, p.stderr


def assert_wrapper_refuses(tmp_path: Path, env: dict[str, str], needle: str) -> None:
    """autotune cc under ``env`` refuses a compile with one line holding ``needle`` and writes nothing."""
    (tmp_path / "t.c").write_text("int main(void) { return 0; }\n")
    p = subprocess.run([AUTOTUNE_CC, "-c", "t.c", "-o", "t.o"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=60, env=clean_env(**env))
    assert p.returncode != 0 and p.stderr.startswith("autotune-cc: error: ") and needle in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and not (tmp_path / "t.o").exists()


def assert_plugin_refuses(tmp_path: Path, env: dict[str, str], needle: str) -> None:
    """Our pass loaded by hand (-fpass-plugin, no wrapper) under ``env``: a compile error holding ``needle``."""
    from autotune.runtime import artifacts

    (tmp_path / "t.c").write_text("int f(int x) { return x ? 1 : 2; }\n")
    p = subprocess.run(["clang", "-O1", f"-fpass-plugin={artifacts.edge_plugin()}", "-c", "t.c", "-o", "t.o"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=60, env=clean_env(**env))
    assert p.returncode != 0 and needle in p.stderr, p.stderr
