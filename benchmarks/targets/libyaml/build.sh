#!/usr/bin/env bash
# libyaml (Debian's source package) through its own CMake build, and our harness beside this
# script, in OSS-Fuzz's build-script convention (autotune validate/compare --build-script): CC,
# CFLAGS, LIB_FUZZING_ENGINE, OUT and WORK are set by the caller; writes $OUT/fuzzer.
# LIBYAML_SRC names the unpacked source tree (benchmarks/targets/libraries.py fetches it:
#   LIBYAML_SRC=$(.venv/bin/python benchmarks/targets/libraries.py libyaml --source)).
set -euo pipefail
: "${LIBYAML_SRC:?set LIBYAML_SRC to an unpacked libyaml tree: .venv/bin/python benchmarks/targets/libraries.py libyaml --source}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# libyaml 0.2.5 asks for CMake 3.0; CMake 4 (a current distribution's) refuses below 3.5 unless told
# the policies of 3.5 are fine (older CMake ignores the variable)
cmake -S "$LIBYAML_SRC" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS" \
  -DCMAKE_BUILD_TYPE=None -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  >"$WORK/cmake.log"
cmake --build "$WORK/build" --target yaml -j2 >>"$WORK/cmake.log"
$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$LIBYAML_SRC/include" -I "$WORK/build/include" \
  "$here/libyaml_harness.c" "$WORK/build/libyaml.a" -o "$OUT/fuzzer"
