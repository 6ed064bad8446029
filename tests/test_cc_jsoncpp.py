"""jsoncpp (Debian's source package libjsoncpp), a C++ library, built by its own CMake with
`autotune-c++` as CMAKE_CXX_COMPILER and with afl-clang-fast++ (benchmarks/targets/libraries.py: the build
script `autotune run --build-script` uses), both run by the real afl-showmap over jsoncpp's own test
documents: the C++ side of the wrapper, the runtime and the fork server on a real library."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from target_checks import assert_like_maps, assert_wrapper_built, sample_seeds, symbols
from targets.libraries import JSONCPP

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("afl-showmap") is None, reason="AFL++ is not installed")]

@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> Path:
    return sample_seeds(tmp_path_factory.mktemp("jsoncpp-seeds"), JSONCPP.sample_inputs, "libjsoncpp")


def test_jsoncpp_builds_through_cmake_with_both_compilers_and_runs_under_afl_showmap(seeds, tmp_path):
    assert len(list(seeds.iterdir())) >= 20  # jsoncpp's valid and invalid test documents
    ours = JSONCPP.build_harness(cc_kind="autotune")
    afl = JSONCPP.build_harness(cc_kind="afl")
    library = ours.parent / "work" / "build" / "lib" / "libjsoncpp.a"
    # CMake compiled the library through the wrapper: instrumented C++, no runtime inside it
    assert_wrapper_built(library, ours)
    assert any(s.startswith("Json::Value::Value(") for s in symbols(library, "--defined-only"))
    assert_like_maps(ours, afl, seeds, tmp_path, min_slots=1000, min_hit=200)
