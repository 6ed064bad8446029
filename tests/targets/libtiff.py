"""libtiff as a real third-party target: the TIFF image library (Debian's source package tiff).

The recipe is libtiff/build.sh (targets/script_target.py): libtiff's own CMake build (the static
library with the codecs it carries itself) and our harness libtiff/libtiff_harness.c. A target that
does not plateau within a 10-minute campaign on this host, unlike lz4 and libyaml.

    python tests/targets/libtiff.py --source     # fetch (once) and print the source tree's path
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":  # run as a script: the repository's root and tests/ on the path
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

try:  # imported as targets.* (tests) or tests.targets.* (benchmarks)
    from .script_target import ScriptTarget, TargetUnavailable
except ImportError:  # run as a script
    from targets.script_target import ScriptTarget, TargetUnavailable  # noqa: E402

DEFAULT_CFLAGS = "-O2 -g"
LIBTIFF = ScriptTarget(package="tiff", folder=Path(__file__).resolve().parent / "libtiff",
                       harness="libtiff_harness.c", proof="libtiff/tiffio.h", source_var="LIBTIFF_SRC",
                       cflags=DEFAULT_CFLAGS)
BUILD_SCRIPT = LIBTIFF.build_script
HARNESS_SOURCE = LIBTIFF.harness_source
MAX_SEED_BYTES = 16 << 10  # small seeds keep afl-fuzz fast (its docs: small inputs); 14 of the 25 images

__all__ = ["BUILD_SCRIPT", "DEFAULT_CFLAGS", "HARNESS_SOURCE", "LIBTIFF", "TargetUnavailable",
           "libtiff_sample_inputs", "libtiff_source_dir"]


libtiff_source_dir = LIBTIFF.source_dir  # the unpacked upstream tree, fetched once


def libtiff_sample_inputs() -> list[Path]:
    """The TIFF files libtiff's tree ships for its own tests (test/images/*.tif, *.tiff) of at most
    MAX_SEED_BYTES."""
    images = LIBTIFF.source_dir() / "test" / "images"
    return [p for p in sorted(images.iterdir())
            if p.suffix in (".tif", ".tiff") and p.is_file() and p.stat().st_size <= MAX_SEED_BYTES]


if __name__ == "__main__":
    sys.exit(LIBTIFF.main(sys.argv[1:]))
