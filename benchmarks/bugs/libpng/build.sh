#!/usr/bin/env bash
# libpng 1.6.39 (Debian's libpng1.6, bookworm, upstream's pristine tree) with our canaries
# (canaries.diff, kernels/canary.h): the library's sources compiled with its prebuilt
# configuration (scripts/pnglibconf.h.prebuilt, as libpng's own contrib/oss-fuzz build does) into
# a static library, linked with the system's zlib and our harness png_harness.c, in OSS-Fuzz's
# build-script convention (autotune run/compare --build-script): CC, CFLAGS, LIB_FUZZING_ENGINE,
# OUT and WORK come from the caller; writes $OUT/fuzzer. Needs zlib's headers (zlib1g-dev).
# BUGLIB_SRC names the unpacked pristine tree (never changed: the canaries go into a copy):
#   BUGLIB_SRC=$(.venv/bin/python benchmarks/bugs/buglibs.py source libpng)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../canaried_tree.sh"  # $WORK/src: BUGLIB_SRC's copy with canaries.diff applied; canary_dir
cd "$WORK/src"
cp scripts/pnglibconf.h.prebuilt pnglibconf.h
objs=()
for f in png pngerror pngget pngmem pngpread pngread pngrio pngrtran pngrutil pngset pngtrans pngwio pngwrite \
         pngwtran pngwutil; do
  $CC $CFLAGS -I. -I"$canary_dir" -c "$f.c" -o "$WORK/$f.o"
  objs+=("$WORK/$f.o")
done
ar rcs "$WORK/libpng16.a" "${objs[@]}"
$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$WORK/src" "$here/png_harness.c" "$WORK/libpng16.a" -lz -lm -o "$OUT/fuzzer"
