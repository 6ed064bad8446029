"""libtiff (Debian's source package tiff), built by its own CMake with `autotune-cc` as
CMAKE_C_COMPILER and with afl-clang-fast (benchmarks/targets/libraries.py: the build script `autotune run
--build-script` uses), both run by the real afl-showmap over libtiff's own test images; and our
harness (C11, -Wall -Wextra -Werror) under ASan and UBSan over the same images."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from target_checks import assert_like_maps, assert_wrapper_built, sample_seeds, symbols
from targets.libraries import LIBTIFF

AUTOTUNE_CC = Path(sys.executable).parent / "autotune-cc"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("afl-showmap") is None, reason="AFL++ is not installed")]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> Path:
    return sample_seeds(tmp_path_factory.mktemp("libtiff-seeds"), LIBTIFF.sample_inputs, "tiff")


def build_dir(harness: Path) -> Path:
    return harness.parent / "work" / "build" / "libtiff"


def test_libtiff_builds_through_cmake_with_both_compilers_and_runs_under_afl_showmap(seeds, tmp_path):
    assert len(list(seeds.iterdir())) >= 10  # libtiff's test images of at most 16 KiB
    ours = LIBTIFF.build_harness(cc_kind="autotune")
    afl = LIBTIFF.build_harness(cc_kind="afl")
    library = build_dir(ours) / "libtiff.a"
    # CMake compiled the library through the wrapper: instrumented, no runtime inside it
    assert_wrapper_built(library, ours)
    assert {"TIFFClientOpen", "TIFFReadRGBAImageOriented"} <= symbols(library, "--defined-only")
    assert "__afl_area_ptr" in symbols(build_dir(afl) / "libtiff.a", "--undefined-only")
    assert_like_maps(ours, afl, seeds, tmp_path, min_slots=2000, min_hit=500)  # over libtiff's images


def test_libtiff_harness_under_asan_and_ubsan(seeds, tmp_path):
    """The harness, warning-free C11, built with the sanitizers through the wrapper and linked with the
    instrumented library, reads every image clean (leaks included)."""
    lib = build_dir(LIBTIFF.build_harness(cc_kind="autotune"))
    out = tmp_path / "libtiff_harness_asan"
    r = subprocess.run([str(AUTOTUNE_CC), "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g",
                        "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all",
                        "-I", str(LIBTIFF.source_dir() / "libtiff"), "-I", str(lib), str(LIBTIFF.harness_source),
                        str(lib / "libtiff.a"), "-lm", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert {"__asan_init", "LLVMFuzzerTestOneInput", "main"} <= symbols(out, "--defined-only")
    r = subprocess.run([str(out), *map(str, sorted(seeds.iterdir()))], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1"})
    assert r.returncode == 0, r.stderr[-3000:]
