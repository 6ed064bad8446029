"""The harness driver (kernels/driver.c): standalone runs, LLVMFuzzerInitialize, the replay mode
with the map sink (cross-checked against the census), configuration errors, and the whole C
runtime under AddressSanitizer + UndefinedBehaviorSanitizer."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import pytest

from programs.covtools import (
    METRICS,
    PROGRAMS,
    SANITIZE,
    ProbeClient,
    build_direct,
    build_programs,
    census_of,
    read_census,
)


@pytest.fixture(scope="module")
def bins(tmp_path_factory):
    return build_programs(tmp_path_factory.mktemp("driver-bins"), ("initarg", "crashy", "calls3", "chains"))


def clean_env(**kw):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOTUNE_", "__AFL"))}
    env.update(kw)
    return env


def run(binary, args=(), *, env=None, stdin=b"", timeout=60):
    return subprocess.run([str(binary), *map(str, args)], input=stdin, capture_output=True,
                          timeout=timeout, env=env or clean_env())


def test_standalone_files_directories_and_stdin(bins, tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "b").write_bytes(b"bb")
    (d / "a").write_bytes(b"a")
    (d / "sub").mkdir()  # not a regular file: skipped
    one = tmp_path / "one"
    one.write_bytes(b"zzz")
    p = run(bins["initarg"], ["-runs=1", one, d])
    assert p.returncode == 0, p.stderr
    # LLVMFuzzerInitialize saw argc (4 with the libFuzzer flag); directory entries sorted
    assert p.stdout.decode().splitlines() == [
        "init=4 size=3 first=z", "init=4 size=1 first=a", "init=4 size=2 first=b"]
    p = run(bins["initarg"], stdin=b"qq")
    assert p.stdout.decode() == "init=1 size=2 first=q\n"
    p = run(bins["initarg"], [tmp_path / "missing"])
    assert p.returncode == 1 and b"missing" in p.stderr


def test_standalone_crash_is_the_harness_crash(bins, tmp_path):
    (tmp_path / "s").write_bytes(b"S")
    (tmp_path / "a").write_bytes(b"A")
    assert run(bins["crashy"], [tmp_path / "s"]).returncode == -signal.SIGSEGV
    assert run(bins["crashy"], [tmp_path / "a"]).returncode == -signal.SIGABRT


def census_hk(binary, workdir, inputs, metric, *, seed=0):
    return [e.hk32 for e in read_census(census_of(binary, workdir, inputs, seed=seed, metrics=metric) / f"{metric}.bin")[2]]


@pytest.mark.parametrize("metric", METRICS)
def test_replay_map_sink_agrees_with_the_census(bins, tmp_path, metric):
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "1").write_bytes(b"")
    hks = census_hk(bins["chains"], tmp_path / "probe", [b""], metric, seed=3)
    for layout, index_size, map_size in (("twolevel", 1 << 12, 1 << 10), ("flat", None, 1 << 8)):
        # slots from the census's hk32: the afl key hash (the exact one: test_metrics_indexkey.py)
        env = clean_env(AUTOTUNE_REPLAY_ROUNDS="5", AUTOTUNE_METRIC=metric, AUTOTUNE_LAYOUT=layout,
                        AUTOTUNE_MAP_SIZE=str(map_size), AUTOTUNE_SEED="3", AUTOTUNE_COUNTER_BITS="16",
                        AUTOTUNE_OVERFLOW="saturate", AUTOTUNE_KEY_HASH="afl")
        if index_size:
            env["AUTOTUNE_INDEX_SIZE"] = str(index_size)
        p = run(bins["chains"], [inputs], env=env)
        assert p.returncode == 0, p.stderr
        lines = p.stdout.decode().splitlines()
        assert len(lines) == 1
        doc = json.loads(lines[0])
        assert doc["execs"] == 5 and doc["rounds"] == 5 and doc["inputs"] == 1
        assert doc["execs_per_s"] > 0
        want_layout = "flat" if metric == "guard" else layout  # guard: one slot per guard, always flat
        assert (doc["metric"], doc["layout"], doc["counter_bits"], doc["overflow"]) == \
               (metric, want_layout, 16, "saturate")
        assert doc["new_coverage_execs"] == 0  # the warm-up round found everything
        slot_mask = (index_size or map_size) - 1 if metric != "guard" else doc["index_size"] - 1
        slots = {hk & slot_mask for hk in hks}
        if want_layout == "twolevel":
            assert doc["used_keys"] == len(slots)  # one dense slot per distinct index entry
            assert doc["covered_slots"] == len(slots) and doc["overflow_keys"] == 0
        else:
            assert doc["covered_slots"] == len(slots)


def test_replay_twolevel_overflow(bins, tmp_path):
    (tmp_path / "x").write_bytes(b"x")
    env = clean_env(AUTOTUNE_REPLAY_ROUNDS="2", AUTOTUNE_METRIC="ctx", AUTOTUNE_MAP_SIZE="64",
                    AUTOTUNE_INDEX_SIZE="1024", AUTOTUNE_KEY_HASH="afl")
    hks = census_hk(bins["calls3"], tmp_path / "probe", [b"x"], "ctx")
    p = run(bins["calls3"], [tmp_path / "x"], env=env)
    doc = json.loads(p.stdout)
    distinct = len({hk & 1023 for hk in hks})
    assert doc["used_keys"] == min(distinct, 64)
    assert doc["overflow_keys"] == max(0, distinct - 64)


@pytest.mark.parametrize(("var", "value", "valid"), [
    ("AUTOTUNE_LAYOUT", "exact", "flat, twolevel"),
    ("AUTOTUNE_METRIC", "ctx-3", "ctx-8"),
    ("AUTOTUNE_MAP_SIZE", "1000", "power of two"),
    ("AUTOTUNE_INDEX_SIZE", "512", "power of two"),
    ("AUTOTUNE_COUNTER_BITS", "12", "8, 16, 32, 64"),
    ("AUTOTUNE_OVERFLOW", "clamp", "wrap, neverzero, saturate"),
    ("AUTOTUNE_SEED", "x1", "integer"),
    ("AUTOTUNE_REPLAY_ROUNDS", "0", "integer"),
])
def test_replay_configuration_errors(bins, tmp_path, var, value, valid):
    (tmp_path / "x").write_bytes(b"x")
    env = clean_env(AUTOTUNE_REPLAY_ROUNDS="1")
    env[var] = value
    p = run(bins["calls3"], [tmp_path / "x"], env=env)
    assert p.returncode == 2
    err = p.stderr.decode()
    assert f"{var}='{value}'" in err and valid in err and "valid values" in err


@pytest.mark.slow
def test_runtime_under_asan_and_ubsan(tmp_path):
    san = SANITIZE
    crashy = build_direct(tmp_path / "crashy", [PROGRAMS / "crashy.c"], san=san, runtime_opt="-O1")
    threads = build_direct(tmp_path / "threads", [PROGRAMS / "threads.c"], san=san, runtime_opt="-O1",
                           extra=["-pthread"])
    env = clean_env(ASAN_OPTIONS="detect_leaks=1", UBSAN_OPTIONS="print_stacktrace=1")
    work = tmp_path / "probe"
    work.mkdir()
    c = ProbeClient(crashy, work, env=env, timeout_ms=2000)
    try:
        assert c.run(b"a").status == 0
        assert c.trace(b"z", 1).status == 0
        # the runtime hands deadly signals back (__ubsan_default_options, shared with ASan's
        # common flags): the SEGV kills the child, no sanitizer report
        crash = c.run(b"S")
        assert (crash.status, crash.detail) == (1, signal.SIGSEGV)
        assert c.run(b"z").status == 0
        assert c.dump().status == 0
        c.command(4)
        c.proc.wait(timeout=60)
        stderr = c.proc.stderr.read().decode()
    finally:
        c.close()
    assert c.proc.returncode == 0
    assert "runtime error" not in stderr and "Sanitizer" not in stderr
    assert len(read_census(work / "census" / "ctx.bin")[2]) > 0
    (tmp_path / "in").write_bytes(b"ab")
    for layout in ("twolevel", "flat"):
        p = run(threads, [tmp_path / "in"], env=dict(env, AUTOTUNE_REPLAY_ROUNDS="3", AUTOTUNE_LAYOUT=layout,
                                                     AUTOTUNE_METRIC="ctx-4", AUTOTUNE_INDEX_SIZE="1024",
                                                     AUTOTUNE_COUNTER_BITS="64"))
        assert p.returncode == 0, p.stderr.decode()
        assert json.loads(p.stdout)["execs"] == 3
        assert b"runtime error" not in p.stderr and b"Sanitizer" not in p.stderr
    work2 = tmp_path / "probe-threads"
    work2.mkdir()
    c = ProbeClient(threads, work2, env=env)
    try:
        for _ in range(5):
            assert c.run(b"ab").status == 0
        assert c.dump().status == 0
        c.quit()
    finally:
        c.close()
    assert c.proc.returncode == 0
