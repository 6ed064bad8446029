"""Targets built by `autotune cc` under the stock afl-fuzz / afl-showmap (kernels/aflfs.c, issue 7).

Everything runs the real afl-fuzz 4.04c and afl-showmap on harnesses from tests/programs_afl/,
in temporary directories, time-boxed with -V. Assertions are about correctness (handshake,
persistence, crashes, hangs, stability, slot sharing, overflow, counter widths), never timing.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autotune.target import build_harness
from autotune.runtime.afl_index import read_index_stats

PROGRAMS = Path(__file__).parent / "programs_afl"
AFL_FUZZ = shutil.which("afl-fuzz")
AFL_SHOWMAP = shutil.which("afl-showmap")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (AFL_FUZZ and AFL_SHOWMAP), reason="afl++ is not installed (apt-get install afl++)"),
]

# AFL++ buckets: {0, 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128-255} (include/afl-fuzz.h count_class).
BUCKET_LOWER = (0, 1, 2, 3, 4, 8, 16, 32, 128)


def bucket(count: int) -> int:
    """AFL's bucket index of a raw 8-bit count."""
    return max(i for i, lo in enumerate(BUCKET_LOWER) if count >= lo)


def base_env(**extra: str) -> dict[str, str]:
    """A clean environment for AFL tools: no inherited AFL_/AUTOTUNE_ settings but the cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AFL_", "AUTOTUNE_", "__AFL"))}
    env["AUTOTUNE_CACHE_DIR"] = os.environ["AUTOTUNE_CACHE_DIR"]
    env.update(AFL_SKIP_CPUFREQ="1", AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES="1", AFL_NO_UI="1",
               AFL_NO_AFFINITY="1")
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def bins(tmp_path_factory) -> dict[str, Path]:
    """The test harnesses, built once by `autotune cc` (-O0 keeps their blocks apart)."""
    out = tmp_path_factory.mktemp("aflfs-bins")
    built = {}
    for name in ("branchy", "crashhang", "loops", "manykeys", "threads"):
        built[name] = build_harness(sources=[PROGRAMS / f"{name}.c"], output=out / name, extra_cflags=["-O0"])
    # Two instrumented shared objects and a harness linked against both.
    cc = str(Path(sys.executable).parent / "autotune-cc")
    for lib in ("a", "b"):
        so = out / f"libtwolib_{lib}.so"
        subprocess.run([cc, "-O0", "-shared", "-fPIC", str(PROGRAMS / f"twolib_{lib}.c"), "-o", str(so)],
                       check=True, capture_output=True, text=True, timeout=300)
    built["twolib"] = build_harness(
        sources=[PROGRAMS / "twolib.c"], output=out / "twolib", extra_cflags=["-O0"],
        extra_ldflags=[f"-L{out}", "-ltwolib_a", "-ltwolib_b", f"-Wl,-rpath,{out}"])
    return built


def seeds(d: Path, *contents: bytes) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for i, c in enumerate(contents):
        (d / f"seed{i}").write_bytes(c)
    return d


def afl_fuzz(binary: Path, tmp: Path, *, seconds: int, env: dict[str, str], args: tuple[str, ...] = (),
             timeout_ms: int | None = None, seed_data: tuple[bytes, ...] = (b"AAAA",)):
    """Run afl-fuzz for ``seconds``; returns (CompletedProcess, output dir of the instance)."""
    in_dir = seeds(tmp / "in", *seed_data)
    out_dir = tmp / "out"
    cmd = [AFL_FUZZ, "-i", str(in_dir), "-o", str(out_dir), "-V", str(seconds)]
    if timeout_ms:
        cmd += ["-t", str(timeout_ms)]
    cmd += ["--", str(binary), *args]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=seconds + 60,
                          stdin=subprocess.DEVNULL, cwd=tmp)
    return proc, out_dir / "default"


def fuzzer_stats(inst: Path) -> dict[str, str]:
    stats = {}
    for line in (inst / "fuzzer_stats").read_text().splitlines():
        key, _, value = line.partition(":")
        stats[key.strip()] = value.strip()
    return stats


def showmap(binary: Path, in_dir: Path, out_dir: Path, *, env: dict[str, str], args: tuple[str, ...] = ()):
    """afl-showmap -r over every file of in_dir: {file name: {slot: raw count}}."""
    proc = subprocess.run([AFL_SHOWMAP, "-r", "-i", str(in_dir), "-o", str(out_dir), "--", str(binary), *args],
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    maps = {}
    for f in sorted(out_dir.iterdir()):
        maps[f.name] = {int(a): int(b) for a, b in (line.split(":") for line in f.read_text().split())}
    return maps


def output(proc) -> str:
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]|\x1b\(B", "", proc.stdout + proc.stderr)


# ---- handshake, persistent mode, slot sharing -------------------------------------------------

def test_shared_memory_handshake_persistent_children_share_slots(bins, tmp_path):
    """Shared-memory test cases; 25 inputs per child (so many children assign slots); 100 %."""
    log = tmp_path / "pids.log"
    index = tmp_path / "index.bin"
    env = base_env(AFLFS_TEST_LOG=str(log), AUTOTUNE_AFL_PERSISTENT="25", AUTOTUNE_INDEX_FILE=str(index))
    proc, inst = afl_fuzz(bins["branchy"], tmp_path, seconds=6, env=env)
    text = output(proc)
    assert proc.returncode == 0, text
    assert "Persistent mode binary detected" in text
    assert "Using SHARED MEMORY FUZZING feature" in text
    assert "Target map size: 65536" in text
    stats = fuzzer_stats(inst)
    assert stats["stability"] == "100.00%", stats
    assert int(stats["corpus_count"]) > 1  # the inputs reached the harness: new paths were found
    # one child's inputs are consecutive lines; count runs, not pids (pids wrap at pid_max, 32,768
    # here: a fast campaign of 25-input children forks that many in seconds); each child's first
    # line is its warm-up run (aflfs_input.c aflfs_warm_up, as AFL++'s driver), then its 25 inputs
    runs = [(pid, len(list(g))) for pid, g in itertools.groupby(log.read_text().split())]
    assert max(n for _, n in runs) == 26 and all(n <= 26 for _, n in runs), sorted(runs, key=lambda r: -r[1])[:3]
    assert len(runs) >= 3  # several children, one slot table
    idx = read_index_stats(path=index)
    assert idx.layout == "twolevel" and idx.dense_slots == 65536 and idx.index_slots == 1 << 24
    assert idx.overflow_keys == 0
    assert idx.used_key >= int(stats["edges_found"]) > 0


def test_a_dense_map_of_whole_pages_not_a_power_of_two_runs_in_afl_fuzz(bins, tmp_path):
    """A two-level map's dense slots are handed out in order, so its size need not be a power of two:
    afl-fuzz is told 12,288 slots (three 4 KiB pages; the sizing rule's rounding, autotune.vocabulary
    dense_for_keys), scans that many, and every key gets a slot of its own."""
    index = tmp_path / "index.bin"
    env = base_env(AUTOTUNE_INDEX_FILE=str(index), AUTOTUNE_MAP_SIZE="12288", AUTOTUNE_INDEX_SIZE=str(1 << 16))
    proc, inst = afl_fuzz(bins["branchy"], tmp_path, seconds=4, env=env)
    text = output(proc)
    assert proc.returncode == 0, text
    assert "Target map size: 12288" in text
    stats = fuzzer_stats(inst)
    assert stats["stability"] == "100.00%", stats
    idx = read_index_stats(path=index)
    assert (idx.layout, idx.dense_slots, idx.overflow_keys) == ("twolevel", 12288, 0)
    assert idx.used_key >= int(stats["edges_found"]) > 0


def test_file_argument_handshake(bins, tmp_path):
    """With @@ the target reads afl's file and does not offer shared-memory test cases."""
    proc, inst = afl_fuzz(bins["branchy"], tmp_path, seconds=5, env=base_env(), args=("@@",))
    text = output(proc)
    assert proc.returncode == 0, text
    assert "Using SHARED MEMORY FUZZING feature" not in text
    stats = fuzzer_stats(inst)
    assert int(stats["corpus_count"]) > 1
    assert stats["stability"] == "100.00%"


def test_input_paths_agree_under_showmap(bins, tmp_path):
    """Shared memory, stdin and @@ inputs (afl-showmap -i) and afl-showmap's single-file mode,
    which runs the target without a fork server, all give the same coverage."""
    in_dir = seeds(tmp_path / "in", b"FUZZ", b"FU\x90\x90\x90\x90", b"\x01\x02\x03\x04\x05", b"\x00")
    maps = {}
    for mode, extra, args in (("shm", {}, ()), ("stdin", {"AUTOTUNE_AFL_SHM_INPUT": "0"}, ()),
                              ("file", {}, ("@@",))):
        env = base_env(AUTOTUNE_INDEX_FILE=str(tmp_path / f"{mode}.idx"), **extra)
        maps[mode] = showmap(bins["branchy"], in_dir, tmp_path / f"out-{mode}", env=env, args=args)
    assert maps["shm"] == maps["stdin"] == maps["file"]
    assert len({frozenset(m.items()) for m in maps["shm"].values()}) == 4  # four distinct traces
    # single-file mode: the same index file, so the same slots as the -i run
    env = base_env(AUTOTUNE_INDEX_FILE=str(tmp_path / "shm.idx"))
    single = tmp_path / "single.txt"
    proc = subprocess.run([AFL_SHOWMAP, "-r", "-o", str(single), "--", str(bins["branchy"]), str(in_dir / "seed0")],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, output(proc)
    got = {int(a): int(b) for a, b in (line.split(":") for line in single.read_text().split())}
    assert got == maps["shm"]["seed0"]


@pytest.mark.parametrize("metric", ["ngram-8", "ctx"])
def test_history_and_context_reset_between_persistent_inputs(bins, tmp_path, metric):
    """One persistent child runs the same input several times (afl-showmap -i): without the
    per-input reset the first keys of a repeat would carry the previous input's history."""
    in_dir = seeds(tmp_path / "in", b"FUZZ\x90", b"\x01\x02", b"FUZZ\x90", b"\x01\x02", b"FUZZ\x90")
    env = base_env(AUTOTUNE_METRIC=metric, AUTOTUNE_INDEX_FILE=str(tmp_path / "i.idx"))
    maps = showmap(bins["branchy"], in_dir, tmp_path / "o", env=env)
    assert maps["seed0"] == maps["seed2"] == maps["seed4"]
    assert maps["seed1"] == maps["seed3"]
    assert maps["seed0"] != maps["seed1"]


# ---- crashes and hangs inside persistent mode -------------------------------------------------

def test_crash_and_hang_in_persistent_mode(bins, tmp_path):
    proc, inst = afl_fuzz(bins["crashhang"], tmp_path, seconds=12, env=base_env(), timeout_ms=100)
    text = output(proc)
    assert proc.returncode == 0, text
    crashes = [p for p in (inst / "crashes").iterdir() if p.name.startswith("id:")]
    hangs = [p for p in (inst / "hangs").iterdir() if p.name.startswith("id:")]
    assert crashes and all(p.read_bytes()[:1] == b"C" for p in crashes), crashes
    assert hangs and all(p.read_bytes()[:1] == b"H" for p in hangs), hangs
    stats = fuzzer_stats(inst)
    assert int(stats["saved_crashes"]) >= 1 and int(stats["saved_hangs"]) >= 1
    assert int(stats["execs_done"]) > 1000  # the server kept going after each crash and hang


# ---- configuration errors ---------------------------------------------------------------------

@pytest.mark.parametrize("var,value", [
    ("AUTOTUNE_MAP_SIZE", "1000"),
    ("AUTOTUNE_MAP_SIZE", "16777216"),  # valid for the runtime, too large for afl's handshake
    ("AUTOTUNE_COUNTER_BITS", "12"),
    ("AUTOTUNE_LAYOUT", "cuckoo"),
    ("AUTOTUNE_AFL_PERSISTENT", "0"),
])
def test_bad_configuration_is_reported_by_afl_fuzz(bins, tmp_path, var, value):
    proc, _ = afl_fuzz(bins["branchy"], tmp_path, seconds=5, env=base_env(**{var: value}))
    text = output(proc)
    assert proc.returncode != 0
    assert "[autotune] error:" in text and f"{var}" in text and value in text, text[-2000:]
    assert "Fork server handshake failed" in text


def test_index_file_of_another_configuration_is_refused(bins, tmp_path):
    in_dir = seeds(tmp_path / "in", b"FUZZ")
    index = tmp_path / "index.bin"
    showmap(bins["branchy"], in_dir, tmp_path / "o1", env=base_env(AUTOTUNE_INDEX_FILE=str(index)))
    env = base_env(AUTOTUNE_INDEX_FILE=str(index), AUTOTUNE_METRIC="ngram-4", AFL_DEBUG_CHILD="1")
    proc = subprocess.run([AFL_SHOWMAP, "-r", "-i", str(in_dir), "-o", str(tmp_path / "o2"), "--",
                           str(bins["branchy"])], env=env, capture_output=True, text=True, timeout=60)
    text = output(proc)
    assert proc.returncode != 0
    assert f"AUTOTUNE_INDEX_FILE={index} was made for metric 0" in text and "this run has metric 3" in text
    env = base_env(AUTOTUNE_INDEX_FILE=str(index), AUTOTUNE_KEY_HASH="afl")
    proc = subprocess.run([AFL_SHOWMAP, "-r", "-i", str(in_dir), "-o", str(tmp_path / "o4"), "--",
                           str(bins["branchy"])], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "made with AUTOTUNE_KEY_HASH=exact, this run has afl" in output(proc)
    # same configuration, another binary
    proc = subprocess.run([AFL_SHOWMAP, "-r", "-i", str(in_dir), "-o", str(tmp_path / "o3"), "--",
                           str(bins["loops"])], env=base_env(AUTOTUNE_INDEX_FILE=str(index)),
                          capture_output=True, text=True, timeout=60)
    text = output(proc)
    assert proc.returncode != 0 and "coverage guards, this binary has" in text, text[-1500:]


# ---- overflow beyond the dense map ------------------------------------------------------------

def switch_inputs(d: Path, n: int, step: int) -> Path:
    """``n`` inputs for manykeys.c in a new directory ``d``: input i selects the switch case
    (i * step) % 1024 (two bytes, little-endian)."""
    d.mkdir()
    for i in range(n):
        v = (i * step) % 1024
        (d / f"in{i:03d}").write_bytes(bytes([v & 0xFF, v >> 8]))
    return d


def test_overflow_is_counted_and_deterministic(bins, tmp_path):
    # 300 inputs selecting 300 distinct switch cases: far more keys than 256 dense slots
    in_dir = switch_inputs(tmp_path / "in", 300, 7)
    big = tmp_path / "big.idx"
    showmap(bins["manykeys"], in_dir, tmp_path / "o-big", env=base_env(AUTOTUNE_INDEX_FILE=str(big)))
    total = read_index_stats(path=big)
    assert total.overflow_keys == 0 and total.used_key > 300
    runs = []
    for n in range(2):
        small = tmp_path / f"small{n}.idx"
        maps = showmap(bins["manykeys"], in_dir, tmp_path / f"o-small{n}",
                       env=base_env(AUTOTUNE_INDEX_FILE=str(small), AUTOTUNE_MAP_SIZE="256"))
        st = read_index_stats(path=small)
        assert st.used_key == 256
        assert st.overflow_keys == total.used_key - 256  # every key beyond the map counted once
        assert all(slot < 256 for m in maps.values() for slot in m)
        assert any(255 in m for m in maps.values())  # the overflow slot is hit
        runs.append((st.used_key, st.overflow_keys, maps))
    assert runs[0] == runs[1]  # same inputs, same slots, same overflow


# ---- counter width ----------------------------------------------------------------------------

def test_16bit_counters_saturated_into_8bit_buckets(bins, tmp_path):
    """A loop edge hit ~100, ~300 and ~65,600 times: 8-bit neverzero counters wrap above 255
    (the 300 and 65,600 runs land in lower buckets); 16-bit counters saturated into afl's byte
    give 255 (the top bucket) for both and change nothing below 256."""
    in_dir = seeds(tmp_path / "in", b"a", b"b", b"c")
    runs = {}
    for name, bits, policy in (("w8", "8", "neverzero"), ("w16", "16", "saturate"), ("w16wrap", "16", "wrap")):
        env = base_env(AUTOTUNE_INDEX_FILE=str(tmp_path / f"{name}.idx"), AUTOTUNE_COUNTER_BITS=bits,
                       AUTOTUNE_OVERFLOW=policy)
        runs[name] = showmap(bins["loops"], in_dir, tmp_path / f"o-{name}", env=env)
    w8, w16, wrap = runs["w8"], runs["w16"], runs["w16wrap"]
    # same slots everywhere (deterministic assignment); below 256 the counts are identical
    assert w8["seed0"] == w16["seed0"] == wrap["seed0"]
    assert max(w8["seed0"].values()) < 256
    for seed in ("seed1", "seed2"):  # 300 and 65,600 iterations
        assert w8[seed].keys() == w16[seed].keys()
        loop = [s for s in w16[seed] if w16[seed][s] != w8[seed][s]]
        assert len(loop) == 1, (w8[seed], w16[seed])
        s = loop[0]
        assert w16[seed][s] == 255 and bucket(w16[seed][s]) == 8
        assert bucket(w8[seed][s]) < 8  # 8-bit counter wrapped
    # 16-bit counters that wrap go wrong above 65,535 (the policy matters, not just the width)
    s = next(s for s in w16["seed2"] if w16["seed2"][s] == 255)
    assert wrap["seed1"][s] == 255 and wrap["seed2"][s] < 128


# ---- threads and several instrumented modules -------------------------------------------------

def test_multithreaded_target(bins, tmp_path):
    index = tmp_path / "index.bin"
    proc, inst = afl_fuzz(bins["threads"], tmp_path, seconds=5, env=base_env(AUTOTUNE_INDEX_FILE=str(index)),
                          seed_data=(b"eoeo\x90\x01",))
    assert proc.returncode == 0, output(proc)
    stats = fuzzer_stats(inst)
    assert int(stats["saved_crashes"]) == 0 and int(stats["execs_done"]) > 100
    assert int(stats["corpus_count"]) > 1
    assert read_index_stats(path=index).used_key >= int(stats["edges_found"]) > 0


def test_two_instrumented_shared_objects(bins, tmp_path):
    in_dir = seeds(tmp_path / "in", b"x", b"AB", b"AB!zzzz")
    maps = showmap(bins["twolib"], in_dir, tmp_path / "o", env=base_env(AUTOTUNE_INDEX_FILE=str(tmp_path / "i")))
    # "AB" takes module a's inner branch, "AB!zzzz" also runs module b's loop: new keys each time
    assert set(maps["seed1"]) - set(maps["seed0"])
    assert set(maps["seed2"]) - set(maps["seed1"]) - set(maps["seed0"])
    assert max(maps["seed2"].values()) >= 4  # module b's loop edge, counted per iteration
    proc, inst = afl_fuzz(bins["twolib"], tmp_path / "fuzz", seconds=5, env=base_env(), seed_data=(b"AB!z",))
    assert proc.returncode == 0, output(proc)
    stats = fuzzer_stats(inst)
    assert stats["stability"] == "100.00%" and int(stats["saved_crashes"]) == 0


# ---- afl-cmin and afl-tmin --------------------------------------------------------------------

def test_afl_cmin_and_afl_tmin(bins, tmp_path):
    in_dir = seeds(tmp_path / "in", b"FUZZ", b"FUZZ", b"\x01\x01\x01\x01\x01", b"zzzz", b"FUZ")
    env = base_env(AUTOTUNE_INDEX_FILE=str(tmp_path / "cmin.idx"), AFL_ALLOW_TMP="1")
    proc = subprocess.run(["afl-cmin", "-i", str(in_dir), "-o", str(tmp_path / "min"), "--", str(bins["branchy"])],
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, output(proc)
    kept = sorted(p.read_bytes() for p in (tmp_path / "min").iterdir())
    assert kept == sorted([b"FUZZ", b"\x01\x01\x01\x01\x01", b"zzzz", b"FUZ"])  # the duplicate went
    crash = tmp_path / "crash.in"
    crash.write_bytes(b"C" + b"A" * 40)
    env = base_env(AUTOTUNE_INDEX_FILE=str(tmp_path / "tmin.idx"))
    proc = subprocess.run(["afl-tmin", "-i", str(crash), "-o", str(tmp_path / "crash.min"), "--",
                           str(bins["crashhang"])], env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, output(proc)
    assert (tmp_path / "crash.min").read_bytes() == b"C"
