"""zlib (Debian's source package zlib), built by its own configure and Makefile with `autotune-cc` as
CC and with afl-clang-fast (benchmarks/targets/libraries.py: the build script `autotune run --build-script`
uses), both run by the real afl-showmap over its seeds (the zlib streams of its manual's PDF, gzip and
raw deflate streams of its text files); and our harness (C11, -Wall -Wextra -Werror) under ASan and
UBSan over the same seeds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from target_checks import assert_like_maps, assert_wrapper_built, seeds_fixture, symbols
from targets.libraries import ZLIB

AUTOTUNE_CC = Path(sys.executable).parent / "autotune-cc"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("afl-showmap") is None, reason="AFL++ is not installed")]

seeds = seeds_fixture(ZLIB, "zlib")


def build_dir(harness: Path) -> Path:
    """The tree build.sh configured and built (``$WORK/zlib``: libz.a, zconf.h)."""
    return harness.parent / "work" / "zlib"


def test_zlib_seeds_are_valid_streams_of_each_format(seeds):
    names = sorted(p.name for p in seeds.iterdir())
    assert len([n for n in names if n.startswith("zlib.3.pdf-")]) >= 3  # the streams its PDF carries
    for p in seeds.iterdir():
        wbits = -15 if p.suffix == ".deflate" else 15 + 32  # raw; zlib or gzip by the header
        assert len(zlib.decompress(p.read_bytes(), wbits)) > 1000, p.name
    assert {".zz", ".gz", ".deflate"} <= {p.suffix for p in seeds.iterdir()}


def test_zlib_builds_through_configure_with_both_compilers_and_runs_under_afl_showmap(seeds, tmp_path):
    ours = ZLIB.build_harness(cc_kind="autotune")
    afl = ZLIB.build_harness(cc_kind="afl")
    library = build_dir(ours) / "libz.a"
    # configure and make compiled the library through the wrapper: instrumented, no runtime inside it
    assert_wrapper_built(library, ours)
    assert {"inflate", "deflate", "inflateGetHeader", "compress2", "uncompress2"} <= symbols(library, "--defined-only")
    assert "__afl_area_ptr" in symbols(build_dir(afl) / "libz.a", "--undefined-only")
    assert_like_maps(ours, afl, seeds, tmp_path, min_slots=1000, min_hit=400)  # over the seeds


def test_zlib_harness_under_asan_and_ubsan(seeds, tmp_path):
    """The harness, warning-free C11, built with the sanitizers through the wrapper and linked with the
    instrumented library, runs every seed clean (leaks included), and each seed cut short too."""
    lib = build_dir(ZLIB.build_harness(cc_kind="autotune"))
    out = tmp_path / "zlib_harness_asan"
    r = subprocess.run([str(AUTOTUNE_CC), "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g",
                        "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all",
                        "-I", str(lib), str(ZLIB.harness_source), str(lib / "libz.a"), "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert {"__asan_init", "LLVMFuzzerTestOneInput", "main"} <= symbols(out, "--defined-only")
    cut = tmp_path / "cut"
    cut.mkdir()
    for p in seeds.iterdir():  # truncated streams: inflate must stop at the end of its input
        (cut / p.name).write_bytes(p.read_bytes()[: p.stat().st_size // 2])
    inputs = [*sorted(seeds.iterdir()), *sorted(cut.iterdir())]
    r = subprocess.run([str(out), *map(str, inputs)], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1"})
    assert r.returncode == 0, r.stderr[-3000:]
