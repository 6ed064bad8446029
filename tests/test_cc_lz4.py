"""lz4 (Debian's source package) built by its own Makefile with `autotune cc`, running its samples.

Also checks the plain and afl-clang-fast builds of the same harness (benchmarks/targets/libraries.py: the
build script every stage builds lz4 with), which the later stages use for throughput comparisons,
validation and the yardstick; each is the one build of its variant the whole test run shares.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from targets.libraries import LZ4, TargetUnavailable, lz4_build_tree

AUTOTUNE_CC = Path(sys.executable).parent / "autotune-cc"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lz4_src() -> Path:
    try:
        return LZ4.source_dir()
    except TargetUnavailable as exc:
        pytest.skip(f"apt-get source lz4 is impossible on this machine: {exc}")


def run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(map(str, cmd)), capture_output=True, timeout=120, **kw)


def defined(binary: Path) -> set[str]:
    out = run(["nm", "--defined-only", binary]).stdout.decode()
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def undefined(binary: Path) -> set[str]:
    out = run(["nm", "--undefined-only", binary]).stdout.decode()
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.fixture(scope="module")
def samples(lz4_src, tmp_path_factory) -> Path:
    """lz4's shipped sample inputs, plus a truncated and a corrupted frame made from them."""
    d = tmp_path_factory.mktemp("lz4-samples")
    for p in LZ4.sample_inputs():
        shutil.copy(p, d / p.name)
    return d


def test_lz4_builds_with_autotune_cc_and_runs_its_samples(lz4_src, samples, tmp_path):
    assert (samples / "skip.bin").is_file() and (samples / "README.md").is_file()
    harness = LZ4.build_harness(cc_kind="autotune")
    library = lz4_build_tree(harness) / "lib" / "liblz4.a"
    # lz4's own Makefile compiled the library through the wrapper: instrumented, no runtime inside
    assert {"__sanitizer_cov_trace_pc_guard", "__cyg_profile_func_enter"} <= undefined(library)
    assert "LZ4_compress_default" in defined(library)
    # the harness has the library, the runtime and the driver
    syms = defined(harness)
    assert {"LLVMFuzzerTestOneInput", "main", "LZ4_decompress_safe", "LZ4F_decompress",
            "__sanitizer_cov_trace_pc_guard", "__cyg_profile_func_enter"} <= syms

    # lz4's command-line tool, a whole program linked by lz4's Makefile through the wrapper (in a
    # copy of the built tree: Debian's Makefile links it with the library), makes real .lz4 frames
    # of the samples (and checks them) for the harness's frame decoder
    tree = tmp_path / "lz4"
    shutil.copytree(lz4_build_tree(harness), tree, symlinks=True)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "CC")}
    r = subprocess.run(["make", "-j2", "-C", str(tree / "programs"), "lz4", f"CC={AUTOTUNE_CC}"], capture_output=True,
                       timeout=600, env={**env, "CFLAGS": LZ4.cflags})
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    cli = tree / "programs" / "lz4"
    assert "__sanitizer_cov_trace_pc_guard" in defined(cli)
    frames = tmp_path / "frames"
    frames.mkdir()
    for p in sorted(samples.iterdir()):
        out = frames / (p.name + ".lz4")
        r = run([cli, "-q", "-9", "--content-size", p, out])
        assert r.returncode == 0, r.stderr
        assert run([cli, "-q", "-t", out]).returncode == 0
    data = (frames / "README.md.lz4").read_bytes()
    (frames / "truncated.lz4").write_bytes(data[: len(data) // 2])
    (frames / "corrupt.lz4").write_bytes(data[:20] + bytes(b ^ 0x5A for b in data[20:60]) + data[60:])

    for inputs in ([samples], [frames], sorted(samples.iterdir())):
        r = run([harness, *inputs])
        assert r.returncode == 0, r.stderr.decode()[-2000:]
    r = run([harness], input=(samples / "NEWS").read_bytes())  # stdin mode
    assert r.returncode == 0, r.stderr.decode()[-2000:]


def test_lz4_harness_under_asan_and_ubsan(lz4_src, samples, tmp_path):
    """The harness built with the user's sanitizers through the wrapper (clang's ASan/UBSan
    runtimes kept beside ours), linked with the instrumented library, runs the samples clean."""
    lib = lz4_build_tree(LZ4.build_harness(cc_kind="autotune")) / "lib"
    out = tmp_path / "lz4_harness_asan"
    r = run([AUTOTUNE_CC, "-O1", "-g", "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all",
             "-I", lib, LZ4.harness_source, lib / "liblz4.a", "-o", out])
    assert r.returncode == 0, r.stderr.decode()[-3000:]
    syms = defined(out)
    assert {"__asan_init", "__sanitizer_cov_trace_pc_guard", "LLVMFuzzerTestOneInput", "main"} <= syms
    r = run([out, samples], env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1"})
    assert r.returncode == 0, r.stderr.decode()[-3000:]


def test_plain_lz4_build_runs_the_same_samples(lz4_src, samples):
    harness = LZ4.build_harness(cc_kind="plain")
    assert "__sanitizer_cov_trace_pc_guard" not in undefined(lz4_build_tree(harness) / "lib" / "liblz4.a")
    assert "LLVMFuzzerTestOneInput" in defined(harness)
    r = run([harness, samples])
    assert r.returncode == 0, r.stderr.decode()[-2000:]


@pytest.mark.skipif(shutil.which("afl-clang-fast") is None, reason="afl++ is not installed")
def test_afl_lz4_build_is_instrumented_by_afl(lz4_src, samples, tmp_path):
    """AFL++'s default build (PCGUARD, no variables): the one validate, compare and the race build."""
    harness = LZ4.build_harness(cc_kind="afl")
    assert "__afl_area_ptr" in undefined(lz4_build_tree(harness) / "lib" / "liblz4.a")
    out = tmp_path / "maps"
    r = run(["afl-showmap", "-q", "-i", samples, "-o", out, "--", harness],
            env={"PATH": "/usr/bin:/bin", "AFL_QUIET": "1"})
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    readme = (out / "README.md").read_text().split()
    assert len(readme) > 50  # tuples "index:bucket" of a real run through lz4
    assert all(":" in t for t in readme)
