#!/usr/bin/env bash
# expat 2.2.10 (Debian's expat, bullseye, upstream's pristine tree) with our canaries (canaries.diff,
# kernels/canary.h) through expat's own CMake build (expat/: the static library only; no xmlwf,
# examples, tests, docs or fuzzers; XML_DTD, XML_NS and XML_CONTEXT_BYTES=1024 as expat's defaults),
# and our harness expat_harness.c, in OSS-Fuzz's build-script convention (autotune run/compare
# --build-script): CC, CFLAGS, LIB_FUZZING_ENGINE, OUT and WORK come from the caller; writes
# $OUT/fuzzer.
# The harness is ours, a superset of expat's own fuzz/xml_parse_fuzzer.c (which it equals with its
# two option bytes 0): that one never creates a namespace or external-entity parser, sets no
# declaration handler, never suspends and never runs out of memory, so of our 11 bugs it can trigger
# EXP001 and EXP006 only (expat_harness.c's header comment).
# ENCODING_FOR_FUZZING=UTF-8, as expat's harness needs one: the parser's protocol encoding. UTF-8
# because it is the encoding whose name characters CVE-2022-25235 (EXP001) mis-validates, and the
# one that still lets a document switch to UTF-16 by its byte order mark or a leading "<\0"
# (expat's initial scan); the document's own encoding declaration (ISO-8859-1, US-ASCII) takes
# effect under the harness's option 0x10 (no protocol encoding).
# BUGLIB_SRC names the unpacked pristine tree (never changed: the canaries go into a copy):
#   BUGLIB_SRC=$(.venv/bin/python benchmarks/bugs/buglibs.py source expat)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../canaried_tree.sh"  # $WORK/src: BUGLIB_SRC's copy with canaries.diff applied; canary_dir
cmake -S "$WORK/src/expat" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS -I$canary_dir" \
  -DCMAKE_BUILD_TYPE=None -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -DEXPAT_SHARED_LIBS=OFF -DEXPAT_BUILD_TOOLS=OFF \
  -DEXPAT_BUILD_EXAMPLES=OFF -DEXPAT_BUILD_TESTS=OFF -DEXPAT_BUILD_DOCS=OFF -DEXPAT_BUILD_FUZZERS=OFF \
  -DEXPAT_BUILD_PKGCONFIG=OFF -DEXPAT_ENABLE_INSTALL=OFF >"$WORK/cmake.log"
cmake --build "$WORK/build" --target expat -j2 >>"$WORK/cmake.log"
$CC $CFLAGS $LIB_FUZZING_ENGINE -DENCODING_FOR_FUZZING=UTF-8 -I "$WORK/src/expat/lib" \
  "$here/expat_harness.c" "$WORK/build/libexpat.a" -o "$OUT/fuzzer"
