#!/usr/bin/env bash
# libjpeg-turbo (Debian's source package) through its own CMake build (the TurboJPEG static
# library, SIMD off: the fuzzed code is the C code every platform runs), and our harness beside
# this script, in OSS-Fuzz's build-script convention (autotune run/compare --build-script): CC,
# CFLAGS, LIB_FUZZING_ENGINE, OUT and WORK are set by the caller; writes $OUT/fuzzer.
# LIBJPEG_TURBO_SRC names the unpacked source tree (benchmarks/targets/libraries.py fetches it:
#   LIBJPEG_TURBO_SRC=$(.venv/bin/python benchmarks/targets/libraries.py libjpeg_turbo --source)).
set -euo pipefail
: "${LIBJPEG_TURBO_SRC:?set LIBJPEG_TURBO_SRC to an unpacked libjpeg-turbo tree: .venv/bin/python benchmarks/targets/libraries.py libjpeg_turbo --source}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cmake -S "$LIBJPEG_TURBO_SRC" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS" \
  -DCMAKE_BUILD_TYPE=None -DENABLE_SHARED=OFF -DENABLE_STATIC=ON -DWITH_SIMD=OFF -DWITH_TURBOJPEG=ON \
  -DWITH_JAVA=OFF >"$WORK/cmake.log"
cmake --build "$WORK/build" --target turbojpeg-static -j2 >>"$WORK/cmake.log"
$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$LIBJPEG_TURBO_SRC" -I "$WORK/build" \
  "$here/libjpeg_turbo_harness.c" "$WORK/build/libturbojpeg.a" -o "$OUT/fuzzer"
