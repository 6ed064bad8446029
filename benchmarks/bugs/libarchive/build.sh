#!/usr/bin/env bash
# libarchive 3.6.2 (Debian's libarchive, bookworm, upstream's pristine tree) with our canaries
# (canaries.diff, kernels/canary.h) through libarchive's own CMake build (the static library only;
# no bsdtar, bsdcpio, bsdcat or tests; of the optional libraries only zlib, for gzip, zip's deflate
# and zisofs: the other compression libraries, crypto, XML (xar), iconv, ACLs and xattrs are off, so
# the harness links with -lz alone), and our harness archive_harness.c (libarchive's own
# contrib/oss-fuzz/libarchive_fuzzer.cc, written in C: every filter and format, each entry's data),
# in OSS-Fuzz's build-script convention (autotune run/compare --build-script): CC, CFLAGS,
# LIB_FUZZING_ENGINE, OUT and WORK come from the caller; writes $OUT/fuzzer. Needs zlib's headers
# (zlib1g-dev).
# BUGLIB_SRC names the unpacked pristine tree (never changed: the canaries go into a copy):
#   BUGLIB_SRC=$(.venv/bin/python benchmarks/bugs/buglibs.py source libarchive)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../canaried_tree.sh"  # $WORK/src: BUGLIB_SRC's copy with canaries.diff applied; canary_dir
off=""
for o in MBEDTLS NETTLE OPENSSL LIBB2 LZ4 LZO LZMA ZSTD BZip2 LIBXML2 EXPAT PCREPOSIX LIBGCC CNG TAR CPIO CAT \
         XATTR ACL ICONV TEST INSTALL; do
  off="$off -DENABLE_$o=OFF"
done
# shellcheck disable=SC2086
cmake -S "$WORK/src" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS -I$canary_dir" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE= -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -DBUILD_SHARED_LIBS=OFF \
  -DENABLE_ZLIB=ON -DENABLE_WERROR=OFF $off \
  >"$WORK/cmake.log"
cmake --build "$WORK/build" --target archive_static -j2 >>"$WORK/cmake.log"
$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$WORK/src/libarchive" "$here/archive_harness.c" \
  "$WORK/build/libarchive/libarchive.a" -lz -o "$OUT/fuzzer"
