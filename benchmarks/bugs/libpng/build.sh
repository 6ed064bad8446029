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
: "${BUGLIB_SRC:?set BUGLIB_SRC to the pristine tree: .venv/bin/python benchmarks/bugs/buglibs.py source libpng}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
canary_dir=${AUTOTUNE_CANARY_INCLUDE:-$(cd "$here/../../../kernels" && pwd)}

cp -a "$BUGLIB_SRC" "$WORK/src"
patch -d "$WORK/src" -p1 --quiet --forward <"$here/canaries.diff"
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
