"""Make libarchive's seeds and the crafted inputs of its bugs (benchmarks/bugs/libarchive/{seeds,inputs})
from the Debian source package (BUGLIB_SRC, fetched by buglibs.py): nothing here is written by hand.

- seeds: libarchive's own fuzzing corpus (contrib/oss-fuzz/corpus.zip, one small archive per format
  and filter: cab, gzip, jar, lrzip, lz4, lzh, lzop, rar, tar.gz, xz, zip, zstd; its 350 KB ISO left
  out, as AFL++ advises small seeds), and four archives of libarchive's own test suite
  (libarchive/test/*.uu) for the formats whose bugs the corpus does not reach: a RAR 4 archive
  with filters (the only one the test suite has: 94 KB), a solid RAR 5 archive, a WARC file and a
  zisofs ISO image (compress'd).
- inputs/<BUG>.reach: a test-suite archive that reaches the bug's canary and does not trigger it;
  inputs/<BUG>.trigger: the regression test archive the bug's Debian patch adds (uuencoded in the
  patch), which triggers it. The bugs without one (LAR004-LAR007) have no known trigger.

    BUGLIB_SRC=$(python benchmarks/bugs/buglibs.py source libarchive) python benchmarks/bugs/libarchive/make_inputs.py
"""

from __future__ import annotations

import binascii
import os
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # buglibs.py
from buglibs import SOURCE_VAR, library  # noqa: E402

CORPUS_SKIP = {"seed.iso"}  # 358,400 bytes
TEST_SEEDS = {  # seed name: the test suite's file (uuencoded)
    "filter.rar": "test_read_format_rar_filter.rar.uu",
    "solid.rar5": "test_read_format_rar5_solid.rar.uu",
    "records.warc": "test_read_format_warc.warc.uu",
    "zisofs.iso.Z": "test_read_format_iso_zisofs.iso.Z.uu",
}
REACH = {  # bug: the test suite's archive that reaches its canary
    "LAR001": "test_read_format_rar_filter.rar.uu",
    "LAR002": "test_read_format_warc.warc.uu",
    "LAR003": "test_read_format_rar5_solid.rar.uu",
    "LAR004": "test_read_format_rar_filter.rar.uu",
    "LAR005": "test_read_format_rar_filter.rar.uu",
    "LAR006": "test_read_format_rar_filter.rar.uu",
    "LAR007": "test_read_format_rar_unicode.rar.uu",
    "LAR008": "test_read_format_iso_zisofs.iso.Z.uu",
}
TRIGGER = {  # bug: (its Debian patch, the regression test archive the patch adds)
    "LAR001": ("CVE-2025-5915.patch", "test_read_format_rar_overflow.rar.uu"),
    # CVE-2025-5915's archive also copies more than the window out of it (the check CVE-2026-4424 adds)
    "LAR004": ("CVE-2025-5915.patch", "test_read_format_rar_overflow.rar.uu"),
    "LAR002": ("CVE-2025-5916.patch", "test_read_format_warc_incomplete.warc.uu"),
    "LAR003": ("CVE-2026-4111-1.patch", "test_read_format_rar5_loop_bug.rar.uu"),
    "LAR008": ("CVE-2026-4426_CVE-2026-5121.patch", "test_read_format_iso_zisofs_overflow.iso.uu"),
}


def uudecode(text: str) -> bytes:
    """The file of a uuencoded text (``begin MODE NAME`` ... ``end``)."""
    out = bytearray()
    inside = False
    for line in text.splitlines():
        if line.startswith("begin "):
            inside = True
        elif line.strip() == "end":
            break
        elif inside and line:
            count = (ord(line[0]) - 32) & 63  # the line's bytes; a2b_uu wants the line cut to them
            out += binascii.a2b_uu(line[:1 + (count * 4 + 2) // 3])
    if not inside:
        raise ValueError("no uuencoded file (no 'begin' line)")
    return bytes(out)


def added_file(patch: Path, name: str) -> bytes:
    """The uuencoded file a patch adds (its ``+`` lines under ``+++ .../NAME``), decoded."""
    lines = patch.read_text(errors="replace").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("+++ ") and ln.split()[1].endswith("/" + name))
    body = []
    for ln in lines[start + 2:]:  # after the +++ line and the @@ hunk header
        if not ln.startswith("+"):
            break
        body.append(ln[1:])
    return uudecode("\n".join(body))


def main() -> None:
    lib = library("libarchive")
    src = Path(os.environ.get(SOURCE_VAR) or lib.source_dir())
    tests = src / "libarchive" / "test"
    patches = src / "debian" / "patches"
    with zipfile.ZipFile(src / "contrib" / "oss-fuzz" / "corpus.zip") as z:
        seeds = {n: z.read(n) for n in sorted(z.namelist()) if n not in CORPUS_SKIP}
    seeds.update({n: uudecode((tests / f).read_text()) for n, f in TEST_SEEDS.items()})
    inputs = {f"{b}.reach": uudecode((tests / f).read_text()) for b, f in REACH.items()}
    inputs.update({f"{b}.trigger": added_file(patches / p, f) for b, (p, f) in TRIGGER.items()})
    lib.write_inputs(seeds=seeds, inputs=inputs)
    print(f"{len(seeds)} seeds, {len(inputs)} inputs", file=sys.stderr)


if __name__ == "__main__":
    main()
