#!/usr/bin/env bash
# libtiff (Debian's source package tiff) through its own CMake build (the static library, with the
# codecs libtiff carries itself: LZW, PackBits, CCITT fax, ThunderScan, NeXT, LogLuv; the ones that
# need another library off, so the harness links alone), and our harness beside this script, in
# OSS-Fuzz's build-script convention (autotune run/compare --build-script): CC, CFLAGS,
# LIB_FUZZING_ENGINE, OUT and WORK are set by the caller; writes $OUT/fuzzer.
# LIBTIFF_SRC names the unpacked source tree (benchmarks/targets/libraries.py fetches it:
#   LIBTIFF_SRC=$(.venv/bin/python benchmarks/targets/libraries.py libtiff --source)).
set -euo pipefail
: "${LIBTIFF_SRC:?set LIBTIFF_SRC to an unpacked libtiff tree: .venv/bin/python benchmarks/targets/libraries.py libtiff --source}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cmake -S "$LIBTIFF_SRC" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS" \
  -DCMAKE_BUILD_TYPE=None -DBUILD_SHARED_LIBS=OFF -Dcxx=OFF -Dzlib=OFF -Dlibdeflate=OFF -Dpixarlog=OFF \
  -Djpeg=OFF -Dold-jpeg=OFF -Djbig=OFF -Dlerc=OFF -Dlzma=OFF -Dzstd=OFF -Dwebp=OFF \
  -Dtiff-tools=OFF -Dtiff-tests=OFF -Dtiff-contrib=OFF -Dtiff-docs=OFF >"$WORK/cmake.log"
cmake --build "$WORK/build" --target tiff -j2 >>"$WORK/cmake.log"
$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$LIBTIFF_SRC/libtiff" -I "$WORK/build/libtiff" \
  "$here/libtiff_harness.c" "$WORK/build/libtiff/libtiff.a" -lm -o "$OUT/fuzzer"
