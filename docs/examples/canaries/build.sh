#!/usr/bin/env bash
# The example's build script, in OSS-Fuzz's convention (autotune run/compare --build-script):
# CC, CFLAGS, LIB_FUZZING_ENGINE, OUT and WORK come from autotune, and AUTOTUNE_CANARY_INCLUDE,
# the directory of canary.h. The library is built by its own Makefile in a copy under $WORK.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cp -r "$here/mylib" "$WORK/mylib"
make -s -C "$WORK/mylib" CC="$CC" CFLAGS="$CFLAGS -I$AUTOTUNE_CANARY_INCLUDE"
$CC $CFLAGS -I"$WORK/mylib" "$here/harness.c" "$WORK/mylib/libmini.a" $LIB_FUZZING_ENGINE -o "$OUT/fuzzer"
