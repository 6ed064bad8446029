#!/usr/bin/env bash
# zlib (Debian's source package zlib) through its own configure and Makefile (the static library,
# libz.a), and our harness beside this script, in OSS-Fuzz's build-script convention (autotune
# run/compare --build-script): CC, CFLAGS, LIB_FUZZING_ENGINE, OUT and WORK are set by the caller;
# writes $OUT/fuzzer. ZLIB_SRC names the unpacked source tree (benchmarks/targets/libraries.py fetches it:
#   ZLIB_SRC=$(.venv/bin/python benchmarks/targets/libraries.py zlib --source)).
# configure compiles and runs test programs with $CC: a compiler of the sid root (.ci/aflpp-current.sh)
# needs the whole command run inside the root.
set -euo pipefail
: "${ZLIB_SRC:?set ZLIB_SRC to an unpacked zlib tree: .venv/bin/python benchmarks/targets/libraries.py zlib --source}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cp -a "$ZLIB_SRC" "$WORK/zlib"   # configure writes Makefile and zconf.h into the tree
(cd "$WORK/zlib" && ./configure --static >"$WORK/configure.log")   # CC and CFLAGS from the environment
make -j2 -C "$WORK/zlib" libz.a >"$WORK/make.log"
$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$WORK/zlib" "$here/zlib_harness.c" "$WORK/zlib/libz.a" -o "$OUT/fuzzer"
