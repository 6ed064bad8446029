"""The real third-party libraries the tests and benchmarks build, one table: each is a ScriptTarget
(targets/script_target.py), its recipe the folder's build.sh (the library's own build) around our
harness, its source Debian's source package, and its sample inputs the files its tree ships.

- lz4: lz4's own Makefile for the library (``make -C lib liblz4.a``, so the wrapper works as a real
  build system's ``CC``) and our harness lz4/lz4_harness.c, an ``LLVMFuzzerTestOneInput``.
- libyaml: many small functions (benchmarks, compare, race); libyaml's own CMake build
  (``libyaml.a``) and our harness libyaml/libyaml_harness.c.
- libjpeg_turbo: an image decoder (the race's fourth library); libjpeg-turbo's own CMake build
  (``libturbojpeg.a``, SIMD off) and our harness libjpeg_turbo/libjpeg_turbo_harness.c.
- jsoncpp: a C++ JSON library (Debian's source package libjsoncpp); jsoncpp's own CMake build (the
  static library) and our C++ harness jsoncpp/jsoncpp_harness.cpp, so it also exercises the CXX
  side of every build kind (afl-clang-fast++, `autotune cc --cxx`).
- libtiff: the TIFF image library (Debian's source package tiff); libtiff's own CMake build (the
  static library with the codecs it carries itself) and our harness libtiff/libtiff_harness.c (on
  libtiff/tiff_fuzz.h, which the bug benchmark's libtiff harness shares). A target that does not
  plateau within a 10-minute campaign on this host, unlike lz4 and libyaml.
- zlib: deflate and inflate (Debian's source package zlib); zlib's own configure and Makefile
  (``./configure --static``, ``make libz.a``) and our harness zlib/zlib_harness.c (inflate of a
  zlib, gzip or raw stream; deflate round trips with parameters from the first bytes). The tree
  ships no compressed files but its PDFs: the seeds are the zlib streams zlib.3.pdf carries and
  gzip and raw deflate streams of three of its text files, made by Python's zlib (zlib_seeds).

    python benchmarks/targets/libraries.py lz4 --source     # fetch (once) and print the source tree's path
"""

from __future__ import annotations

import gzip
import re
import sys
import zlib
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository's root and benchmarks/ on the path
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

try:  # imported as targets.* (benchmarks/ on the path: the tests and the benchmarks)
    from .script_target import ScriptTarget, TargetUnavailable
except ImportError:  # run as a script
    from targets.script_target import ScriptTarget, TargetUnavailable  # noqa: E402

HERE = Path(__file__).resolve().parent

# The tests' builds of lz4: -O1 compiles it in about half the CPU time of lz4's own -O2 (Debian's
# patch 0002), which the benchmarks pass (LZ4_OWN_CFLAGS) to measure the program users build.
LZ4_OWN_CFLAGS = "-O2 -g"
# jsoncpp, libtiff and zlib are built only by the tests (tests/test_cc_*.py: the wrapper through each
# build system, maps of like size to afl-clang-fast's, the harness under the sanitizers), which read no
# debug information: -O1 without -g, the cheapest build that still runs clang's optimising pipeline,
# where the pass plugins sit (the suite's largest builds; campaigns build with the CLI's -O2 -g).
TEST_CFLAGS = "-O1"
LZ4 = ScriptTarget(package="lz4", folder=HERE / "lz4", harness="lz4_harness.c", proof="lib/lz4.h",
                   source_var="LZ4_SRC", cflags="-O1 -g",
                   # its golden frame samples and its documents
                   samples=("tests/goldenSamples/*", "README.md", "NEWS", "LICENSE", "doc/*.md"))
LIBYAML = ScriptTarget(package="libyaml", folder=HERE / "libyaml", harness="libyaml_harness.c",
                       proof="include/yaml.h", source_var="LIBYAML_SRC", cflags="-O2 -g",
                       samples=("examples/*.yaml", "regression-inputs/*"))
LIBJPEG_TURBO = ScriptTarget(package="libjpeg-turbo", folder=HERE / "libjpeg_turbo",
                             harness="libjpeg_turbo_harness.c", proof="turbojpeg.h",
                             source_var="LIBJPEG_TURBO_SRC", cflags="-O2 -g", samples=("testimages/*.jpg",))
JSONCPP = ScriptTarget(package="libjsoncpp", folder=HERE / "jsoncpp", harness="jsoncpp_harness.cpp",
                       proof="include/json/reader.h", source_var="JSONCPP_SRC", cflags=TEST_CFLAGS,
                       samples=("test/data/*.json",))  # its own tests' documents, valid and invalid
LIBTIFF = ScriptTarget(package="tiff", folder=HERE / "libtiff", harness="libtiff_harness.c",
                       proof="libtiff/tiffio.h", source_var="LIBTIFF_SRC", cflags=TEST_CFLAGS,
                       samples=("test/images/*.tif", "test/images/*.tiff"),  # its own tests' images
                       # small seeds keep afl-fuzz fast (its docs: small inputs); 14 of the 25 images
                       max_seed_bytes=16 << 10)


def zlib_seeds(tree: Path) -> dict[str, bytes]:
    """zlib's seeds, made from its tree (which ships no .gz, .z or raw deflate file): the zlib streams
    of zlib.3.pdf (its /FlateDecode streams, cut out as they are: the PDF's producer made them, not
    we), and a gzip (level 9, mtime 0) and a raw deflate (level 6) stream of each of README, INDEX
    and doc/txtvsbin.txt made by Python's zlib, so each of the harness's three stream formats has
    valid inputs."""
    seeds: dict[str, bytes] = {}
    pdf = (tree / "zlib.3.pdf").read_bytes()
    found = re.finditer(rb"<<([^>]*?/FlateDecode[^>]*?)>>\s*stream\r?\n(.*?)(?:\r?\n)?endstream", pdf, re.S)
    for n, m in enumerate(found):
        seeds[f"zlib.3.pdf-{n}.zz"] = m.group(2)
    for name in ("README", "INDEX", "doc/txtvsbin.txt"):
        text = (tree / name).read_bytes()
        stem = Path(name).name
        seeds[f"{stem}.gz"] = gzip.compress(text, compresslevel=9, mtime=0)
        raw = zlib.compressobj(6, zlib.DEFLATED, -15)
        seeds[f"{stem}.deflate"] = raw.compress(text) + raw.flush()
    return seeds


ZLIB = ScriptTarget(package="zlib", folder=HERE / "zlib", harness="zlib_harness.c", proof="zlib.h",
                    source_var="ZLIB_SRC", cflags=TEST_CFLAGS, derive=zlib_seeds)

LIBRARIES = {t.folder.name: t for t in (LZ4, LIBYAML, LIBJPEG_TURBO, JSONCPP, LIBTIFF, ZLIB)}

__all__ = ["JSONCPP", "LIBJPEG_TURBO", "LIBRARIES", "LIBTIFF", "LIBYAML", "LZ4", "LZ4_OWN_CFLAGS",
           "TargetUnavailable", "ZLIB", "lz4_build_tree", "zlib_seeds"]


def lz4_build_tree(harness: Path) -> Path:
    """The lz4 tree a build of build.sh compiled (``$WORK/lz4``: lib/liblz4.a and its objects)."""
    return harness.parent / "work" / "lz4"


def main(argv: list[str]) -> int:
    """``python benchmarks/targets/libraries.py NAME --source``: print the unpacked tree (build.sh's variable)."""
    if len(argv) != 2 or argv[0] not in LIBRARIES or argv[1] != "--source":
        print(f"usage: python benchmarks/targets/libraries.py {{{','.join(LIBRARIES)}}} --source", file=sys.stderr)
        return 2
    try:
        print(LIBRARIES[argv[0]].source_dir())
    except TargetUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
