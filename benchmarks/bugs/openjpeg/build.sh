#!/usr/bin/env bash
# OpenJPEG 2.5.0 (Debian's openjpeg2, bookworm, upstream's pristine tree) with our canaries
# (canaries.diff, kernels/canary.h) through OpenJPEG's own CMake build (the static library only: no
# codec executables, JPIP, viewer, Java, tests or documentation; it needs no other library), and our
# harness openjpeg_harness.c (OpenJPEG's own tests/fuzzers/opj_decompress_fuzzer_J2K.cpp and
# _JP2.cpp written in C, then opj_decompress's colour conversions), linked with the tree's
# src/bin/common/color.c (the conversions opj_decompress uses; opj_apps_config.h, which CMake writes
# only for the codec executables, is written here: no libpng, libtiff or lcms), in OSS-Fuzz's
# build-script convention (autotune run/compare --build-script): CC, CFLAGS, LIB_FUZZING_ENGINE,
# OUT and WORK come from the caller; writes $OUT/fuzzer.
# BUGLIB_SRC names the unpacked pristine tree (never changed: the canaries go into a copy):
#   BUGLIB_SRC=$(.venv/bin/python benchmarks/bugs/buglibs.py source openjpeg)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../canaried_tree.sh"  # $WORK/src: BUGLIB_SRC's copy with canaries.diff applied; canary_dir
cmake -S "$WORK/src" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS -I$canary_dir" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE= -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON -DBUILD_CODEC=OFF -DBUILD_JPIP=OFF -DBUILD_VIEWER=OFF \
  -DBUILD_JAVA=OFF -DBUILD_TESTING=OFF -DBUILD_DOC=OFF -DBUILD_PKGCONFIG_FILES=OFF \
  >"$WORK/cmake.log"
cmake --build "$WORK/build" --target openjp2 -j2 >>"$WORK/cmake.log"
mkdir -p "$WORK/apps"
printf '/* written by build.sh: no libpng, libtiff or lcms */\n#include "opj_config_private.h"\n' \
  >"$WORK/apps/opj_apps_config.h"
inc="-I$WORK/src/src/lib/openjp2 -I$WORK/build/src/lib/openjp2 -I$WORK/src/src/bin/common -I$WORK/apps -I$canary_dir"
# shellcheck disable=SC2086
$CC $CFLAGS $inc -c "$WORK/src/src/bin/common/color.c" -o "$WORK/color.o"
# shellcheck disable=SC2086
$CC $CFLAGS $LIB_FUZZING_ENGINE $inc "$here/openjpeg_harness.c" "$WORK/color.o" \
  "$WORK/build/bin/libopenjp2.a" -lm -lpthread -o "$OUT/fuzzer"
