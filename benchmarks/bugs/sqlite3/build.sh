#!/usr/bin/env bash
# SQLite 3.34.1 (Debian's sqlite3, bullseye, upstream's pristine tree) with our canaries
# (canaries.diff, kernels/canary.h): the amalgamation made by SQLite's own build (configure; make
# sqlite3.c, which needs tclsh), compiled with FTS3/4/5 and R*Tree, and SQLite's own fuzz target
# test/ossfuzz.c, in OSS-Fuzz's build-script convention (autotune run/compare --build-script): CC,
# CFLAGS, LIB_FUZZING_ENGINE, OUT and WORK come from the caller; writes $OUT/fuzzer. The build's
# own tools (lemon, mkkeywordhash) are compiled with BUILD_CC (default: clang), not with $CC.
# BUGLIB_SRC names the unpacked pristine tree (never changed: the canaries go into a copy):
#   BUGLIB_SRC=$(.venv/bin/python benchmarks/bugs/buglibs.py source sqlite3)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../canaried_tree.sh"  # $WORK/src: BUGLIB_SRC's copy with canaries.diff applied; canary_dir
mkdir "$WORK/bld"
cd "$WORK/bld"
CC="${BUILD_CC:-clang}" BCC="${BUILD_CC:-clang}" ../src/configure --disable-shared --disable-tcl \
  >"$WORK/configure.log" 2>&1
make sqlite3.c >"$WORK/make.log" 2>&1
defs=(-DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_ENABLE_FTS3 -DSQLITE_ENABLE_FTS4
      -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_RTREE -DSQLITE_MAX_MEMORY=25000000 -DSQLITE_MAX_PAGE_COUNT=16384)
$CC $CFLAGS "${defs[@]}" -I. -I"$canary_dir" -c sqlite3.c -o "$WORK/sqlite3.o"
$CC $CFLAGS $LIB_FUZZING_ENGINE "${defs[@]}" -I. "$WORK/src/test/ossfuzz.c" "$WORK/sqlite3.o" -lm \
  -o "$OUT/fuzzer"
