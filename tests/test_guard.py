"""The guard metric (AFL++'s PCGUARD: one slot per guard, slot = g, slot 0 unused) and the build kinds of
`autotune cc` (AUTOTUNE_CC_INSTRUMENT = full, blocks, guard), end to end with real clang builds:

- guard keys are the guards hit: the census (probe server) against the guards the map sink
  counts (replay, and afl's map through the runtime's no-fork-server mode) in every build kind;
- the inline-counter build (guard) under the real afl-showmap and afl-fuzz: a map of the guard
  count rounded up to 64, coverage, 100 % stability; its counters copied into afl's map and
  zeroed after every input (persistent and fork mode), on a crash signal and at exit();
- combinations a build cannot serve are refused with a one-line error naming the fix.
No timing is asserted.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from autotune import demo
from autotune.target import build_harness
from autotune.metrics import index_key
from programs.covtools import SANITIZE, ProbeClient, census_of, read_census, runtime_objects

PROGRAMS_AFL = Path(__file__).parent / "programs_afl"
PROGRAMS = Path(__file__).parent / "programs"
AFL_FUZZ = shutil.which("afl-fuzz")
AFL_SHOWMAP = shutil.which("afl-showmap")
KINDS = ("full", "blocks", "guard")
needs_afl = pytest.mark.skipif(not (AFL_FUZZ and AFL_SHOWMAP), reason="afl++ is not installed")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AFL_", "AUTOTUNE_", "__AFL"))}
    if "AUTOTUNE_CACHE_DIR" in os.environ:
        env["AUTOTUNE_CACHE_DIR"] = os.environ["AUTOTUNE_CACHE_DIR"]
    env.update(AFL_SKIP_CPUFREQ="1", AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES="1", AFL_NO_UI="1",
               AFL_NO_AFFINITY="1")
    env.update(extra)
    return env


def output(proc) -> str:
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]|\x1b\(B", "", proc.stdout + proc.stderr)


@pytest.fixture(scope="module")
def demo_bins(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("guard-demo")
    return {k: build_harness(sources=[demo.harness_source()], output=d / f"demo-{k}",
                             extra_cflags=list(demo.DEMO_CFLAGS), kind=k) for k in KINDS}


@pytest.fixture(scope="module")
def afl_bins(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("guard-afl")
    out = {}
    for name in ("branchy", "crashhang"):
        for k in KINDS:
            out[f"{name}-{k}"] = build_harness(sources=[PROGRAMS_AFL / f"{name}.c"], output=d / f"{name}-{k}",
                                               extra_cflags=["-O0"], kind=k)
    out["crashy-guard"] = build_harness(sources=[PROGRAMS / "crashy.c"], output=d / "crashy-guard",
                                        extra_cflags=["-O0"], kind="guard")
    return out


# ---- afl's map without afl: the runtime's direct mode (__AFL_SHM_ID, no fork server) ------------

_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
_libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
_libc.shmdt.argtypes = [ctypes.c_void_p]


def direct_map(binary: Path, files: list[Path], env: dict[str, str], size: int = 1 << 16,
               kill_after_s: float | None = None) -> tuple[bytes, int]:
    """afl's map after the runtime ran ``files`` in its no-fork-server mode (what afl-showmap's
    single-file mode and AFL_NO_FORKSRV do): (the map, exit status). ``kill_after_s``: a run still
    going then is killed with SIGKILL, as afl-fuzz ends a hang by default (status -9)."""
    sid = _libc.shmget(0, size, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    assert sid >= 0
    p = _libc.shmat(sid, None, 0)
    try:
        ctypes.memset(p, 0, size)
        try:
            rc = subprocess.run([str(binary), *map(str, files)], env={**env, "__AFL_SHM_ID": str(sid)},
                                capture_output=True, timeout=kill_after_s or 120).returncode
        except subprocess.TimeoutExpired:  # subprocess.run killed it (SIGKILL) and waited
            if kill_after_s is None:
                raise
            rc = -9
        return ctypes.string_at(p, size), rc
    finally:
        _libc.shmdt(p)
        _libc.shmctl(sid, 0, None)  # IPC_RMID


def census_guard(binary: Path, workdir: Path, inputs: list[bytes]) -> np.ndarray:
    census = census_of(binary, workdir, inputs, seed=3, metrics="guard,edge", env=clean_env())
    _, _, entries = read_census(census / "guard.bin")
    assert all(e.hk32 == e.key for e in entries)  # hk32 is the slot itself
    return np.array(sorted(e.key for e in entries), dtype=np.uint64)


def replay(binary: Path, inputs: Path, **env: str) -> dict:
    p = subprocess.run([str(binary), str(inputs)], capture_output=True, timeout=120,
                       env=clean_env(AUTOTUNE_REPLAY_ROUNDS="1", **env))
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


def test_guard_keys_are_the_guards_hit_in_every_build_kind(demo_bins, tmp_path):
    seeds = sorted(demo.seed_dir().iterdir())
    keys = census_guard(demo_bins["full"], tmp_path / "probe", [p.read_bytes() for p in seeds])
    slots = {int(s) for s in index_key(keys, metric="guard")}
    assert len(slots) == len(keys) > 50 and slots == {int(k) for k in keys} and 0 not in slots
    for kind, binary in demo_bins.items():
        doc = replay(binary, demo.seed_dir(), AUTOTUNE_METRIC="guard")
        assert doc["metric"] == "guard" and doc["layout"] == "flat" and doc["covered_slots"] == len(keys), kind
        assert doc["map_size"] % 64 == 0 and doc["map_size"] > max(slots)
        assert doc["overflow"] == "neverzero"
        m, rc = direct_map(binary, seeds, clean_env(AUTOTUNE_METRIC="guard"))
        assert rc == 0
        assert {i for i, b in enumerate(m) if b} == slots, kind  # afl's map: exactly the guards' slots
    # the layout, sizes and key hash do not apply to guard
    doc = replay(demo_bins["blocks"], demo.seed_dir(), AUTOTUNE_METRIC="guard", AUTOTUNE_LAYOUT="twolevel",
                 AUTOTUNE_MAP_SIZE="1048576", AUTOTUNE_KEY_HASH="afl")
    assert doc["layout"] == "flat" and doc["covered_slots"] == len(keys) and doc["map_size"] < 1 << 20


def test_a_build_that_serves_one_metric_counts_it_when_autotune_metric_is_unset(demo_bins):
    """Run plainly (afl-fuzz with no AUTOTUNE_* variable), a guard build counts guard, the one metric it
    serves, exactly as with AUTOTUNE_METRIC=guard; a full build's default stays edge."""
    same = ("metric", "covered_slots", "coverage_digest", "new_coverage_execs")
    plain = replay(demo_bins["guard"], demo.seed_dir())
    assert {k: plain[k] for k in same} == {k: v for k, v in replay(demo_bins["guard"], demo.seed_dir(),
                                                                   AUTOTUNE_METRIC="guard").items() if k in same}
    assert plain["metric"] == "guard" and replay(demo_bins["full"], demo.seed_dir())["metric"] == "edge"


def test_guard_counts_on_the_fast_and_general_paths_and_every_width(demo_bins):
    same = ("covered_slots", "coverage_digest", "new_coverage_execs")
    base = None
    for bits, overflow in (("8", "neverzero"), ("16", "saturate"), ("32", "wrap")):
        docs = {h: replay(demo_bins["blocks"], demo.seed_dir(), AUTOTUNE_METRIC="guard", AUTOTUNE_HOOKS=h,
                          AUTOTUNE_COUNTER_BITS=bits, AUTOTUNE_OVERFLOW=overflow) for h in ("auto", "general")}
        assert docs["auto"]["hooks"] == "fast" and docs["general"]["hooks"] == "general"
        assert {k: docs["auto"][k] for k in same} == {k: docs["general"][k] for k in same}
        base = base or docs["auto"]["covered_slots"]
        assert docs["auto"]["covered_slots"] == base


@pytest.mark.parametrize("kind, env, needle", [
    ("guard", {"AUTOTUNE_METRIC": "edge"}, "AUTOTUNE_METRIC=edge needs SanitizerCoverage guards"),
    ("guard", {"AUTOTUNE_METRIC": "ngram-8"}, "AUTOTUNE_CC_INSTRUMENT=guard; fix: set AUTOTUNE_METRIC=guard"),
    ("blocks", {"AUTOTUNE_METRIC": "ctx"}, "AUTOTUNE_METRIC=ctx needs function entry/exit hooks"),
    ("blocks", {"AUTOTUNE_METRIC": "ctx-4"}, "rebuild with AUTOTUNE_CC_INSTRUMENT=full"),
    ("guard", {"AUTOTUNE_METRIC": "guard", "AUTOTUNE_COUNTER_BITS": "16"}, "AUTOTUNE_COUNTER_BITS=16: a program built"),
    ("guard", {"AUTOTUNE_METRIC": "guard", "AUTOTUNE_OVERFLOW": "wrap"}, "AUTOTUNE_OVERFLOW=wrap"),
])
def test_a_metric_the_build_cannot_serve_is_refused(demo_bins, tmp_path, kind, env, needle):
    (tmp_path / "x").write_bytes(b"x")
    p = subprocess.run([str(demo_bins[kind]), str(tmp_path / "x")], capture_output=True, timeout=60, text=True,
                       env=clean_env(AUTOTUNE_REPLAY_ROUNDS="1", **env))
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and needle in p.stderr and "fix:" in p.stderr, p.stderr


@pytest.mark.parametrize("kind, metrics, needle", [
    ("guard", "guard", "the census (probe) needs SanitizerCoverage guards"),
    ("blocks", "all", "the census of ctx (AUTOTUNE_PROBE_METRICS) needs function entry/exit hooks"),
])
def test_the_probe_refuses_a_census_the_build_cannot_take(demo_bins, tmp_path, kind, metrics, needle):
    r, w = os.pipe()
    r2, w2 = os.pipe()
    env = clean_env(AUTOTUNE_PROBE_CTL_FD=str(r), AUTOTUNE_PROBE_ST_FD=str(w2), AUTOTUNE_PROBE_DIR=str(tmp_path),
                    AUTOTUNE_PROBE_METRICS=metrics)
    try:
        p = subprocess.run([str(demo_bins[kind])], env=env, pass_fds=(r, w2), capture_output=True, text=True,
                           timeout=60)
    finally:
        for fd in (r, w, r2, w2):
            os.close(fd)
    assert p.returncode == 2 and needle in p.stderr, p.stderr
    assert list(tmp_path.iterdir()) == []  # nothing created


def test_blocks_build_probes_edge_and_ngram(demo_bins, tmp_path):
    """A blocks build still takes a census of the metrics without call context."""
    c = ProbeClient(demo_bins["blocks"], tmp_path, seed=0, metrics="edge,ngram-4,guard", env=clean_env())
    try:
        assert c.run(b"hello").status == 0
        assert c.dump().status == 0
        c.quit()
    finally:
        c.close()
    assert read_census(tmp_path / "census" / "guard.bin")[2]


# ---- the inline-counter build under afl ---------------------------------------------------------

def inline_counters(binary: Path) -> int:
    """The inline 8-bit counters of a guard build: between kernels/guard_counters.ld's marks (slot 0's
    byte before them, afl's room after them) when autotune cc linked it, else the size of its
    __sancov_cntrs section; 0 without either."""
    out = subprocess.run(["nm", str(binary)], capture_output=True, text=True, check=True).stdout
    marks = dict((name, int(addr, 16)) for addr, _, name in (ln.split() for ln in out.splitlines() if ln.count(" ") == 2)
                 if name in ("autotune_cnt_page", "autotune_cnt_used"))
    if len(marks) == 2:
        return marks["autotune_cnt_used"] - marks["autotune_cnt_page"] - 1
    out = subprocess.run(["objdump", "-h", str(binary)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"__sancov_cntrs\s+([0-9a-f]+)", out)
    return int(m.group(1), 16) if m else 0


@needs_afl
def test_inline_build_under_afl_showmap_reports_the_guard_map(afl_bins, tmp_path):
    binary = afl_bins["branchy-guard"]
    n = inline_counters(binary)
    want = (n + 1 + 63) // 64 * 64  # slots 0..n
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for i, data in enumerate((b"FUZZ", b"FU\x90\x90\x90\x90", b"\x01\x02\x03")):
        (in_dir / f"s{i}").write_bytes(data)
    proc = subprocess.run([AFL_SHOWMAP, "-C", "-i", str(in_dir), "-o", str(tmp_path / "o"), "--", str(binary)],
                          env=clean_env(AUTOTUNE_METRIC="guard"), capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    text = output(proc)
    assert proc.returncode == 0, text
    m = re.search(r"coverage of (\d+) edges were achieved out of (\d+) existing", text)
    assert m, text
    assert int(m.group(2)) == want and 0 < int(m.group(1)) <= n


@needs_afl
@pytest.mark.parametrize("kind", ["guard", "blocks"])
def test_afl_fuzz_runs_the_guard_metric_with_full_stability(afl_bins, tmp_path, kind):
    binary = afl_bins[f"branchy-{kind}"]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "seed").write_bytes(b"AAAA")
    proc = subprocess.run([AFL_FUZZ, "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "-V", "4", "--",
                           str(binary)], env=clean_env(AUTOTUNE_METRIC="guard"), capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    text = output(proc)
    assert proc.returncode == 0, text[-3000:]
    stats = dict(line.split(":", 1) for line in (tmp_path / "out" / "default" / "fuzzer_stats").read_text().splitlines())
    stats = {k.strip(): v.strip() for k, v in stats.items()}
    guards = inline_counters(binary) if kind == "guard" else None
    if guards is not None:
        assert int(stats["total_edges"]) == (guards + 1 + 63) // 64 * 64
    assert int(stats["edges_found"]) > 0 and int(stats["corpus_count"]) > 1
    assert stats["stability"] == "100.00%"


def _showmap_maps(binary: Path, in_dir: Path, out_dir: Path, env: dict[str, str]) -> dict[str, dict[int, int]]:
    proc = subprocess.run([AFL_SHOWMAP, "-r", "-i", str(in_dir), "-o", str(out_dir), "--", str(binary)],
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, output(proc)
    return {f.name: {int(a): int(b) for a, b in (ln.split(":") for ln in f.read_text().split())}
            for f in sorted(out_dir.iterdir())}


@needs_afl
@pytest.mark.parametrize("persistent", ["10000", "1"])
def test_inline_counters_do_not_leak_into_the_next_input(afl_bins, tmp_path, persistent):
    """afl-showmap -i runs the files one after another through one persistent child (or a fork
    per input): each file's map equals its map alone, so the copy zeroed the counters."""
    files = {"a0": b"FUZZ\x90", "a1": b"\x01", "a2": b"FUZZ\x90", "a3": b"\x7f\x7f\x7f\x7f", "a4": b"\x01"}
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for name, data in files.items():
        (in_dir / name).write_bytes(data)
    env = clean_env(AUTOTUNE_METRIC="guard", AUTOTUNE_AFL_PERSISTENT=persistent)
    together = _showmap_maps(afl_bins["branchy-guard"], in_dir, tmp_path / "o", env)
    assert together["a0"] == together["a2"] and together["a1"] == together["a4"]
    assert together["a0"] != together["a1"]
    for name in ("a1", "a3"):
        alone_dir = tmp_path / f"alone-{name}"
        alone_dir.mkdir()
        (alone_dir / name).write_bytes(files[name])
        assert _showmap_maps(afl_bins["branchy-guard"], alone_dir, tmp_path / f"o-{name}", env)[name] == together[name]
    # and the blocks build counts the same guards with the same counts
    blocks = _showmap_maps(afl_bins["branchy-blocks"], in_dir, tmp_path / "ob", env)
    assert blocks == together


@needs_afl
@pytest.mark.parametrize("kind, metric", [("guard", "guard"), ("blocks", "edge")])
def test_one_time_initialisation_is_not_the_first_inputs_coverage(tmp_path, kind, metric):
    """AFL++'s libFuzzer driver runs the harness once before its first input and forgets that run;
    so does each of our children. afl-showmap through one persistent child: the first file's map is
    the map of the same bytes run later, without the harness's one-time init (lazyinit.c)."""
    binary = build_harness(sources=[PROGRAMS_AFL / "lazyinit.c"], output=tmp_path / f"lazy-{kind}",
                           extra_cflags=["-O0"], kind=kind)
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for name, data in {"a0": b"AAx\x90", "a1": b"\x01\x02", "a2": b"AAx\x90"}.items():
        (in_dir / name).write_bytes(data)
    env = clean_env(AUTOTUNE_METRIC=metric, AUTOTUNE_AFL_PERSISTENT="10000")
    maps = _showmap_maps(binary, in_dir, tmp_path / "o", env)
    assert maps["a0"] and maps["a0"] == maps["a2"] and maps["a0"] != maps["a1"]


@needs_afl
@pytest.mark.parametrize("status", ["child", "server"])
def test_a_warm_up_that_hangs_is_timed_out_by_afl_fuzz(tmp_path, status):
    """The warm-up runs once afl has the child's pid, inside afl's timed window, as AFL++'s driver's
    call does: a harness whose one-time init never returns is killed by afl-fuzz's timeout, and
    afl-fuzz stops with its own timeout error instead of waiting for a pid for ever."""
    binary = build_harness(sources=[PROGRAMS_AFL / "lazyinit.c"], output=tmp_path / "lazy", extra_cflags=["-O0"],
                           kind="guard")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "seed").write_bytes(b"AAAA")
    proc = subprocess.run([AFL_FUZZ, "-i", str(tmp_path / "in"), "-o", str(tmp_path / "out"), "-t", "200", "-V", "5",
                           "--", str(binary)],
                          env=clean_env(AUTOTUNE_METRIC="guard", AUTOTUNE_AFL_STATUS=status, LAZYINIT_HANG="1"),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    text = output(proc)
    assert proc.returncode != 0 and "time" in text.lower(), text[-3000:]


def _neverzero(v: int) -> int:
    """An 8-bit NeverZero counter after v increments from 0 (AFL++'s PCGUARD: 255 + 1 = 1)."""
    return 0 if v == 0 else (v - 1) % 255 + 1


@needs_afl
def test_inline_counters_are_neverzero_as_pcguard_counts(tmp_path):
    """A block hit 256 times reads 1 in afl's map (clang's plain inline counters wrap to 0: the
    block would look not hit), one hit 255 times reads 255, and every slot reads what NeverZero
    increments give; a blocks build (trace-pc-guard, 8-bit NeverZero in the runtime) reads the same."""
    maps = {}
    ns = (0, 1, 255, 256, 257, 511, 512, 1000)
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for n in ns:
        (in_dir / f"n{n:04d}").write_bytes(f"{n:06d}".encode())  # 6 digits: the same parse for every n
    for kind in ("guard", "blocks"):
        binary = build_harness(sources=[PROGRAMS_AFL / "hits.c"], output=tmp_path / f"hits-{kind}",
                               extra_cflags=["-O0"], kind=kind)
        maps[kind] = _showmap_maps(binary, in_dir, tmp_path / f"o-{kind}", clean_env(AUTOTUNE_METRIC="guard"))
    m = {n: maps["guard"].get(f"n{n:04d}", {}) for n in ns}
    slots = set().union(*m.values())
    # count(n) = a * n + b per slot: b hits outside the loop, a per iteration (small: no overflow yet)
    b = {s: m[0].get(s, 0) for s in slots}
    a = {s: m[1].get(s, 0) - b[s] for s in slots}
    assert any(a.values()) and all(x >= 0 for x in a.values())
    for n in ns:
        assert {s: _neverzero(a[s] * n + b[s]) for s in slots if a[s] * n + b[s]} == m[n], n
    loop = [s for s in slots if a[s] == 1]
    assert {m[255][s] for s in loop} >= {255}  # a block hit 255 times: 255
    hit256 = [s for s in loop if b[s] == 0]  # the loop body: hit n times
    assert hit256 and all(m[256][s] == 1 for s in hit256)  # 256 hits: 1 (a wrapping counter: 0, gone)
    assert maps["blocks"] == maps["guard"]


def test_inline_counters_reach_the_map_on_a_crash_and_at_exit(afl_bins, tmp_path):
    """A crash signal or exit() during an input still copies its counters into afl's map (afl-fuzz
    dedupes crashes by the map): the crash path's slots are there."""
    binary = afl_bins["crashy-guard"]
    env = clean_env(AUTOTUNE_METRIC="guard")
    maps = {}
    for name, data in (("ok", b"b"), ("segv", b"S"), ("abort", b"A"), ("exit", b"E")):
        f = tmp_path / name
        f.write_bytes(data)
        m, rc = direct_map(binary, [f], env)
        maps[name] = {i for i, b in enumerate(m) if b}
        want_rc = {"ok": 0, "segv": -11, "abort": -6, "exit": 3}[name]
        assert rc == want_rc, (name, rc)
    for name in ("segv", "abort", "exit"):
        extra = maps[name] - maps["ok"]
        assert maps[name] and extra, name  # doomed()'s block and the path to it, beyond the common ones


@pytest.mark.slow
def test_inline_runtime_under_asan_and_ubsan(tmp_path):
    """The runtime (cov_ids.c's counter registration, cov_sink.c's copy and crash handler, aflfs_map.c's map over
    the counters' pages) compiled with ASan+UBSan, linked with an inline-counter harness as autotune cc links it
    (kernels/guard_counters.ld) and without the script: replay, a crash, direct mode; the same map both ways."""
    from autotune.cc import KINDS, LINK_LIBS, kind_link_flags, kind_marker

    san = SANITIZE
    objs = runtime_objects(opt="-O1", san=san)
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    for i, data in enumerate((b"a", b"z", b"q")):
        (in_dir / f"s{i}").write_bytes(data)
    (tmp_path / "S").write_bytes(b"S")
    (tmp_path / "H").write_bytes(b"H")
    env = clean_env(ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:handle_segv=0:handle_abort=0",
                    UBSAN_OPTIONS="halt_on_error=1")
    maps = {}
    for how, link in (("pages", kind_link_flags("guard")), ("copy", (kind_marker("guard"),))):
        exe = tmp_path / f"crashy-{how}"
        subprocess.run(["clang", "-O0", "-g", *san, *KINDS["guard"], str(PROGRAMS / "crashy.c"), *objs, "-o", str(exe),
                        *LINK_LIBS, *link], check=True, capture_output=True, text=True, timeout=300)
        doc = replay(exe, in_dir, AUTOTUNE_METRIC="guard", ASAN_OPTIONS=env["ASAN_OPTIONS"])
        assert doc["covered_slots"] > 0
        m, rc = direct_map(exe, [in_dir / "s0"], {**env, "AUTOTUNE_METRIC": "guard"})
        assert rc == 0 and any(m) and m[0] == 0
        maps[how] = m
        m, rc = direct_map(exe, [tmp_path / "S"], {**env, "AUTOTUNE_METRIC": "guard"})
        assert rc == -11 and any(m)  # counted in the map (pages) or copied by the handler; no ASan report
        # a hang killed with SIGKILL: on the counters' pages its path is in afl's map; copied, nothing is
        m, rc = direct_map(exe, [tmp_path / "H"], {**env, "AUTOTUNE_METRIC": "guard"}, kill_after_s=2)
        assert rc == -9 and any(m) == (how == "pages"), how
    assert maps["pages"] == maps["copy"]  # counter i at slot i + 1 both ways
    # the guard fast hook of a blocks build (trace-pc-guard), under the same sanitizers
    blocks = tmp_path / "crashy-blocks"
    subprocess.run(["clang", "-O0", "-g", *san, *KINDS["blocks"], str(PROGRAMS / "crashy.c"), *objs, "-o",
                    str(blocks), *LINK_LIBS, kind_marker("blocks")], check=True, capture_output=True, text=True,
                   timeout=300)
    for bits in ("8", "64"):
        doc = replay(blocks, in_dir, AUTOTUNE_METRIC="guard", AUTOTUNE_COUNTER_BITS=bits, ASAN_OPTIONS=env["ASAN_OPTIONS"])
        assert doc["hooks"] == "fast" and doc["covered_slots"] > 0
        m, rc = direct_map(blocks, [in_dir / "s0"], {**env, "AUTOTUNE_METRIC": "guard", "AUTOTUNE_COUNTER_BITS": bits})
        assert rc == 0 and any(m) and m[0] == 0  # slot 0 stays unused


# ---- the Python side: metric list, index key, tune's space and precision -------------------------

def test_guard_index_key_afl_mode_and_metric_lists():
    from autotune.vocabulary import METRICS, afl_mode, has_map_size
    from autotune.probe import protocol

    assert METRICS.index("guard") == 13  # its census id, in files and the probe's replies
    assert protocol.N_METRICS == len(METRICS) and protocol.REPLY_SIZE == 16 + 8 * len(METRICS)
    assert [int(x) for x in index_key(np.array([1, 2, 70000], dtype=np.uint64), metric="guard")] == [1, 2, 70000]
    assert afl_mode("guard").instrument == "PCGUARD" and not has_map_size("guard") and has_map_size("edge")


def test_tune_space_holds_one_guard_configuration_per_width():
    from autotune.mappoint import MapPoint
    from autotune.tune.precision import precision
    from autotune.tune.space import SearchSpace

    sp = SearchSpace(map_pow2=(13, 20))
    grid = sp.grid()
    guards = [c for c in grid if c.metric == "guard"]
    assert sorted(c.width_bits for c in guards) == [8, 16, 32, 64]
    assert all(c.layout == "flat" and c.map_slots == 1 << 16 for c in guards)
    assert sp.n_points == len(grid) == len(set(grid))
    assert sp.to_config([20, 4, sp.metrics.index("guard"), "twolevel"]) == MapPoint("guard", "flat", 16, 16)
    assert SearchSpace(map_pow2=(18, 20)).guard_slots == 1 << 18
    p = precision(config=MapPoint("guard", "flat", 16, 8), n_keys=1e6, overflow_by_width={8: 0.25})
    assert p.lost_keys == 0 and p.counter_overflow == 0.25 and p.dense_slots is None


@needs_afl
def test_afl_showmap_shows_the_refusal(afl_bins, tmp_path):
    """Under an afl tool the refusal reaches the user's terminal, above afl's handshake failure."""
    (tmp_path / "x").write_bytes(b"x")
    proc = subprocess.run([AFL_SHOWMAP, "-o", str(tmp_path / "o"), "--", str(afl_bins["branchy-guard"]),
                           str(tmp_path / "x")], env=clean_env(AUTOTUNE_METRIC="ngram-4"), capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    text = output(proc)
    assert proc.returncode != 0
    assert "[autotune] error: AUTOTUNE_METRIC=ngram-4 needs SanitizerCoverage guards" in text, text[-2000:]


SELECTY = r"""
#include <stddef.h>
#include <stdint.h>
volatile int sink;
/* -O2 makes each conditional expression a select: no branch for SanitizerCoverage to count */
__attribute__((noinline)) static int clamp(int x) { return x < 100 ? x * 3 : x - 7; }
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
  if (n) sink = clamp(d[0]);
  return 0;
}
"""


@pytest.mark.parametrize("kind", ["guard", "full"])
def test_both_sides_of_a_select_are_counted_as_pcguard_counts_them(tmp_path, kind, monkeypatch):
    """The select-splitting pass plugin: each side of a select is a slot of its own (and not
    without it, AUTOTUNE_CC_SELECTS=0), in the inline build and in the census's full build."""
    src = tmp_path / "selecty.c"
    src.write_text(SELECTY)
    low, high = tmp_path / "low", tmp_path / "high"
    low.write_bytes(b"\x05")
    high.write_bytes(b"\xc8")
    slots = {}
    for selects in ("1", "0"):
        monkeypatch.setenv("AUTOTUNE_CC_SELECTS", selects)
        b = build_harness(sources=[src], output=tmp_path / f"s{selects}-{kind}", extra_cflags=["-O2"], kind=kind)
        for name, f in (("low", low), ("high", high)):
            m, rc = direct_map(b, [f], clean_env(AUTOTUNE_METRIC="guard"))
            assert rc == 0
            slots[selects, name] = {i for i, v in enumerate(m) if v}
    assert slots["1", "low"] != slots["1", "high"]  # the two sides of the select differ
    assert slots["0", "low"] == slots["0", "high"]  # without the plugin they look alike


KEPT_AS_VALUE = r"""
#include <stddef.h>
#include <stdint.h>
struct doc { int strict; };
volatile int sink;
/* comparisons whose outcome is kept as a value: at -O2 `strict ? -1 : 0` is `sext (icmp ..)` and
   `d[0] == 'S'` a zext, no branch and (after InstCombine) no select for blocks to count */
__attribute__((noinline)) static int verdict(const struct doc *d) { return d->strict ? -1 : 0; }
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {
  struct doc doc = { n ? d[0] == 'S' : 0 };
  sink = verdict(&doc);
  return 0;
}
"""


@needs_afl
@pytest.mark.skipif(not shutil.which("afl-clang-fast"), reason="afl-clang-fast is not installed")
@pytest.mark.parametrize("kind", ["guard", "full"])
def test_comparisons_kept_as_values_are_counted_as_the_afl_in_use_counts_them(tmp_path, kind):
    """Two inputs that differ only in the outcome of comparisons the program keeps as values: our
    build tells them apart exactly when AFL++'s own PCGUARD build of the same program does. AFL++
    5.02c (LLVM 21: PCGUARD at OptimizerEarly) counts both outcomes; 4.04c (LLVM 14) counts neither.
    Ours under LLVM 16+ runs SanitizerCoverage at OptimizerEarly and then counts those comparisons'
    outcomes as 5.02c's PCGUARD does (kernels/plugin/autotune_selects.cpp, CountSpecials)."""
    from autotune.llvm import clang_major, find_clang

    afl_major, our_major = clang_major(shutil.which("afl-clang-fast")), clang_major(find_clang())
    if afl_major != our_major:
        pytest.skip(f"afl-clang-fast is LLVM {afl_major}, autotune cc's clang {our_major}: like for like needs one LLVM")
    src = tmp_path / "kept.c"
    src.write_text(KEPT_AS_VALUE)
    in_dir = tmp_path / "in"
    in_dir.mkdir()
    (in_dir / "strict").write_bytes(b"S")
    (in_dir / "lax").write_bytes(b"x")
    afl_bin = tmp_path / "kept-afl"
    proc = subprocess.run(["afl-clang-fast", "-O2", str(src), "-fsanitize=fuzzer", "-o", str(afl_bin)],
                          env=clean_env(AFL_QUIET="1"), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, output(proc)
    theirs = _showmap_maps(afl_bin, in_dir, tmp_path / "o-afl", clean_env())
    ours_bin = build_harness(sources=[src], output=tmp_path / f"kept-{kind}", extra_cflags=["-O2"], kind=kind)
    ours = _showmap_maps(ours_bin, in_dir, tmp_path / "o-ours", clean_env(AUTOTUNE_METRIC="guard"))
    assert (ours["strict"] != ours["lax"]) == (theirs["strict"] != theirs["lax"]), (kind, afl_major, theirs, ours)


def _object_points(obj: Path) -> int:
    """SanitizerCoverage's points in an object file: its counter (or guard) sections' bytes, summed."""
    out = subprocess.run(["objdump", "-h", str(obj)], capture_output=True, text=True, check=True).stdout
    cntrs = sum(int(m.group(1), 16) for m in re.finditer(r"__sancov_cntrs\s+([0-9a-f]+)", out))
    guards = sum(int(m.group(1), 16) for m in re.finditer(r"__sancov_guards\s+([0-9a-f]+)", out))
    return cntrs + guards // 4


@pytest.mark.skipif(not shutil.which("afl-clang-fast"), reason="afl-clang-fast is not installed")
@pytest.mark.parametrize("kind", ["guard", "full"])
def test_the_demo_counts_the_points_pcguard_counts(tmp_path, kind):
    """The demo compiled by afl-clang-fast (PCGUARD) and by autotune cc, same LLVM and flags: our guard
    kind (and the census's full kind) counts PCGUARD's points. PCGUARD's AFL_DEBUG line gives its
    locations, its special instructions (selects, comparisons kept as values) and the block guards
    they saved; ours counts the same blocks exactly (AUTOTUNE_CC_SELECTS=0: blocks alone, 216 under
    clang 21) and, with the specials, within 2 % of its locations (283 against 280 under clang 21: one
    special more, and one block keeps its own counter where a call comes before its special:
    kernels/plugin/autotune_selects.cpp). With LLVM 15 or older (AFL++ 4.04c) both run at
    OptimizerLast, where ours splits selects into branches: not counted alike, not checked here."""
    from autotune.llvm import clang_major, find_clang

    afl_major, our_major = clang_major(shutil.which("afl-clang-fast")), clang_major(find_clang())
    if afl_major != our_major or our_major < 16:
        pytest.skip(f"afl-clang-fast is LLVM {afl_major}, autotune cc's clang {our_major}: needs one LLVM, 16 or newer")
    flags = ["-O2", "-g", "-funroll-loops", "-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION=1", "-c",
             str(demo.harness_source())]
    afl = subprocess.run([shutil.which("afl-clang-fast"), *flags, "-o", str(tmp_path / "afl.o")], capture_output=True,
                         text=True, timeout=300, env=clean_env(AFL_DEBUG="1"))
    m = re.search(r"Instrumented (\d+) locations.*? (\d+) handled .*?special instructions\. (\d+) instrumentations? saved",
                  output(afl))
    assert afl.returncode == 0 and m, output(afl)[-2000:]
    locations, specials, saved = map(int, m.groups())
    points = {}
    for selects in ("0", "1"):
        proc = subprocess.run([str(Path(sys.executable).parent / "autotune-cc"), *flags, "-o", str(tmp_path / f"ours{selects}.o")], capture_output=True,
                              text=True, timeout=300,
                              env=clean_env(AUTOTUNE_CC_INSTRUMENT=kind, AUTOTUNE_CC_SELECTS=selects))
        assert proc.returncode == 0, output(proc)[-2000:]
        points[selects] = _object_points(tmp_path / f"ours{selects}.o")
    assert points["0"] == locations - 2 * specials + saved > 150, (points, locations, specials, saved)
    assert abs(points["1"] - locations) <= 0.02 * locations, (points, locations, specials, saved)
