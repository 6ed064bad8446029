#!/usr/bin/env bash
# jsoncpp (Debian's source package libjsoncpp) through its own CMake build (the static library), and
# our C++ harness beside this script, in OSS-Fuzz's build-script convention (autotune run/compare
# --build-script): CC, CXX, CXXFLAGS, LIB_FUZZING_ENGINE, OUT and WORK are set by the caller; writes
# $OUT/fuzzer. JSONCPP_SRC names the unpacked source tree (benchmarks/targets/libraries.py fetches it:
#   JSONCPP_SRC=$(.venv/bin/python benchmarks/targets/libraries.py jsoncpp --source)).
set -euo pipefail
: "${JSONCPP_SRC:?set JSONCPP_SRC to an unpacked jsoncpp tree: .venv/bin/python benchmarks/targets/libraries.py jsoncpp --source}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cmake -S "$JSONCPP_SRC" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DCMAKE_BUILD_TYPE=None -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON \
  -DBUILD_OBJECT_LIBS=OFF -DJSONCPP_WITH_TESTS=OFF -DJSONCPP_WITH_POST_BUILD_UNITTEST=OFF \
  -DJSONCPP_WITH_PKGCONFIG_SUPPORT=OFF -DJSONCPP_WITH_CMAKE_PACKAGE=OFF >"$WORK/cmake.log"
cmake --build "$WORK/build" --target jsoncpp_static -j2 >>"$WORK/cmake.log"
$CXX $CXXFLAGS -std=c++11 $LIB_FUZZING_ENGINE -I "$JSONCPP_SRC/include" "$here/jsoncpp_harness.cpp" \
  "$WORK/build/lib/libjsoncpp.a" -o "$OUT/fuzzer"
