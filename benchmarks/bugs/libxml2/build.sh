#!/usr/bin/env bash
# libxml2 2.9.10 (Debian's libxml2, bullseye, upstream's pristine tree) with our canaries
# (canaries.diff, kernels/canary.h) through its own autotools build (the static library; no zlib,
# lzma, network or threads), and our harness xml_harness.c, in
# OSS-Fuzz's build-script convention (autotune run/compare --build-script): CC, CFLAGS,
# LIB_FUZZING_ENGINE, OUT and WORK come from the caller; writes $OUT/fuzzer.
# BUGLIB_SRC names the unpacked pristine tree (never changed: the canaries go into a copy):
#   BUGLIB_SRC=$(.venv/bin/python benchmarks/bugs/buglibs.py source libxml2)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../canaried_tree.sh"  # $WORK/src: BUGLIB_SRC's copy with canaries.diff applied; canary_dir
cd "$WORK/src"
# the tree's generated files keep their times: make must not rerun autotools
./configure CC="$CC" CFLAGS="$CFLAGS -I$canary_dir" --disable-shared --enable-static --without-python \
  --without-zlib --without-lzma --without-http --without-ftp --without-threads --without-debug \
  --without-legacy >"$WORK/configure.log" 2>&1
make -j2 libxml2.la >"$WORK/make.log" 2>&1
$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$WORK/src/include" "$here/xml_harness.c" "$WORK/src/.libs/libxml2.a" \
  -lm -o "$OUT/fuzzer"
