#!/usr/bin/env bash
# libtiff 4.2.0 (Debian's tiff, bullseye, upstream's pristine tree) with our canaries
# (canaries.diff, kernels/canary.h) through its own CMake build (the static library with the codecs
# libtiff carries itself; the ones that need another library are off, so the harness links alone),
# and our harness tiff_harness.c (on benchmarks/targets/libtiff/tiff_fuzz.h), in OSS-Fuzz's build-script
# convention (autotune run/compare --build-script): CC, CFLAGS, LIB_FUZZING_ENGINE, OUT and WORK come
# from the caller; writes $OUT/fuzzer.
# BUGLIB_SRC names the unpacked pristine tree (never changed: the canaries go into a copy):
#   BUGLIB_SRC=$(.venv/bin/python benchmarks/bugs/buglibs.py source libtiff)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../canaried_tree.sh"  # $WORK/src: BUGLIB_SRC's copy with canaries.diff applied; canary_dir
cmake -S "$WORK/src" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS -I$canary_dir" \
  -DCMAKE_BUILD_TYPE=None -DBUILD_SHARED_LIBS=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -Dcxx=OFF -Dzlib=OFF -Dlibdeflate=OFF -Dpixarlog=OFF \
  -Djpeg=OFF -Dold-jpeg=OFF -Djbig=OFF -Dlzma=OFF -Dzstd=OFF -Dwebp=OFF >"$WORK/cmake.log"
cmake --build "$WORK/build" --target tiff -j2 >>"$WORK/cmake.log"
$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$WORK/src/libtiff" -I "$WORK/build/libtiff" \
  "$here/tiff_harness.c" "$WORK/build/libtiff/libtiff.a" -lm -o "$OUT/fuzzer"
