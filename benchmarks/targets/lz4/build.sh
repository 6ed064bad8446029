#!/usr/bin/env bash
# lz4 (Debian's source package) through its own Makefile, and our harness beside this script, in
# OSS-Fuzz's build-script convention (autotune validate/compare/race/run --build-script, with
# --source lz4_harness.c so a change to the harness rebuilds): CC, CFLAGS,
# LIB_FUZZING_ENGINE, OUT and WORK are set by the caller; writes $OUT/fuzzer. LZ4_SRC names the
# unpacked source tree (LZ4_SRC=$(.venv/bin/python benchmarks/targets/libraries.py lz4 --source)).
set -euo pipefail
: "${LZ4_SRC:?set LZ4_SRC to an unpacked lz4 tree: .venv/bin/python benchmarks/targets/libraries.py lz4 --source}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cp -a "$LZ4_SRC" "$WORK/lz4"
make -j2 -C "$WORK/lz4/lib" liblz4.a CC="$CC" >"$WORK/make.log"   # CFLAGS from the environment, as lz4's Makefile wants
$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$WORK/lz4/lib" "$here/lz4_harness.c" "$WORK/lz4/lib/liblz4.a" -o "$OUT/fuzzer"
