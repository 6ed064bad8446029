"""Make libtiff's seeds and the crafted inputs of its bugs (benchmarks/bugs/libtiff/{seeds,inputs}):
small classic little-endian TIFF files written field by field, so each input says what it is.

    python benchmarks/bugs/libtiff/make_inputs.py     # rewrites seeds/ and inputs/
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # buglibs.py
from buglibs import library  # noqa: E402
SHORT, LONG, ASCII = 3, 4, 2
TYPE_BYTES = {1: 1, 2: 1, 3: 2, 4: 4}


def tiff(tags: dict[int, tuple[int, list[int] | bytes]], data: bytes = b"", *, offsets_tag: int = 273,
         counts: list[int] | None = None) -> bytes:
    """A one-directory TIFF: ``tags`` {tag: (type, values)}; ``data`` goes after the directory and the
    ``offsets_tag`` (StripOffsets or TileOffsets) values are offsets into it (given relative)."""
    n = len(tags)
    ifd_at = 8
    extra_at = ifd_at + 2 + 12 * n + 4
    extra = b""
    entries = []
    fixed = {}
    for tag, (typ, vals) in sorted(tags.items()):
        raw = vals if isinstance(vals, bytes) else b"".join(
            struct.pack("<H" if typ == SHORT else "<I", v) for v in vals)
        count = len(raw) // TYPE_BYTES[typ]
        fixed[tag] = (typ, count, raw)
    # the image data after the out-of-line values; offsets relative to it become absolute
    out_of_line = sum((len(r) + 1) & ~1 for (_, _, r) in fixed.values() if len(r) > 4)
    data_at = extra_at + out_of_line
    if offsets_tag in fixed:
        typ, count, raw = fixed[offsets_tag]
        rel = struct.unpack(f"<{count}I", raw) if count else ()
        fixed[offsets_tag] = (typ, count, b"".join(struct.pack("<I", data_at + r) for r in rel))
    for tag, (typ, count, raw) in sorted(fixed.items()):
        if len(raw) <= 4:
            value = raw.ljust(4, b"\0")
        else:
            value = struct.pack("<I", extra_at + len(extra))
            extra += raw + (b"\0" if len(raw) % 2 else b"")
        entries.append(struct.pack("<HHI", tag, typ, count) + value)
    head = b"II*\0" + struct.pack("<I", ifd_at)
    ifd = struct.pack("<H", n) + b"".join(entries) + struct.pack("<I", 0)
    return head + ifd + extra + data


def gray(width: int, height: int, pixels: bytes, *, rows_per_strip: int | None = None, compression: int = 1,
         strips: list[bytes] | None = None, more: dict | None = None) -> bytes:
    rps = rows_per_strip or height
    strips = strips if strips is not None else [pixels[i * width * rps:(i + 1) * width * rps]
                                                for i in range((height + rps - 1) // rps)]
    offsets, at = [], 0
    for s in strips:
        offsets.append(at)
        at += len(s)
    tags = {256: (LONG, [width]), 257: (LONG, [height]), 258: (SHORT, [8]), 259: (SHORT, [compression]),
            262: (SHORT, [1]), 273: (LONG, offsets), 277: (SHORT, [1]), 278: (LONG, [rps]),
            279: (LONG, [len(s) for s in strips])}
    tags.update(more or {})
    return tiff(tags, b"".join(strips))


def lzw(codes: list[int]) -> bytes:
    """9-bit LZW codes, most significant bit first (TIFF's LZW; fine while the table stays under 510 entries)."""
    bits = "".join(format(c, "09b") for c in codes)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def main() -> None:
    w, h = 8, 4
    px = bytes(range(0, 256, 8))[: w * h]
    ok_lzw = lzw([256, *px, 257])
    seeds = {
        "gray8.tif": gray(w, h, px),
        "gray8-2strips.tif": gray(w, h, px, rows_per_strip=2),
        "gray8-lzw.tif": gray(w, h, px, compression=5, strips=[ok_lzw]),
        "gray8-packbits.tif": gray(w, h, px, compression=32773, strips=[bytes([31]) + px]),
        "gray8-desc.tif": gray(w, h, px, more={270: (ASCII, b"seed\0")}),
        "rgb8.tif": tiff({256: (LONG, [4]), 257: (LONG, [2]), 258: (SHORT, [8, 8, 8]), 259: (SHORT, [1]),
                          262: (SHORT, [2]), 273: (LONG, [0]), 277: (SHORT, [3]), 278: (LONG, [2]),
                          279: (LONG, [24])}, bytes(range(24))),
        "gray8-tiled.tif": tiff({256: (LONG, [16]), 257: (LONG, [16]), 258: (SHORT, [8]), 259: (SHORT, [1]),
                                 262: (SHORT, [1]), 277: (SHORT, [1]), 322: (LONG, [16]), 323: (LONG, [16]),
                                 324: (LONG, [0]), 325: (LONG, [256])}, bytes(256), offsets_tag=324),
    }
    inputs = {
        # TIF001: StripOffsets of one entry for two strips (reach) / of none (trigger)
        "TIF001.reach": gray(w, h, px, rows_per_strip=2, more={273: (LONG, [0]), 279: (LONG, [16, 16])}),
        "TIF001.trigger": gray(w, h, px, rows_per_strip=2, more={273: (LONG, []), 279: (LONG, [16, 16])}),
        # TIF002: RGB with 5 samples and one ExtraSamples value (reach) / 4 samples and no ExtraSamples (trigger)
        "TIF002.reach": tiff({256: (LONG, [2]), 257: (LONG, [2]), 258: (SHORT, [8] * 5), 259: (SHORT, [1]),
                              262: (SHORT, [2]), 273: (LONG, [0]), 277: (SHORT, [5]), 278: (LONG, [2]),
                              279: (LONG, [20]), 338: (SHORT, [0])}, bytes(20)),
        "TIF002.trigger": tiff({256: (LONG, [2]), 257: (LONG, [2]), 258: (SHORT, [8] * 4), 259: (SHORT, [1]),
                                262: (SHORT, [2]), 273: (LONG, [0]), 277: (SHORT, [4]), 278: (LONG, [2]),
                                279: (LONG, [16])}, bytes(16)),
        # TIF003: ImageDescription without its terminating NUL (reach) / of count 0 (trigger)
        "TIF003.reach": gray(w, h, px, more={270: (ASCII, b"abc")}),
        "TIF003.trigger": gray(w, h, px, more={270: (ASCII, b"")}),
        # TIF004: an LZW strip (reach) / one whose second code is not a literal after a Clear (trigger:
        # the first scanline fails, the second decodes on from the unsaved state)
        "TIF004.reach": gray(w, h, px, compression=5, strips=[ok_lzw]),
        "TIF004.trigger": gray(w, h, px, compression=5, strips=[lzw([256, 300, 1, 2, 257])]),
        # TIF005: Predictor with LZW, a configured codec (reach) / with Deflate, not configured here (trigger)
        "TIF005.reach": gray(w, h, px, compression=5, strips=[ok_lzw], more={317: (SHORT, [1])}),
        "TIF005.trigger": gray(w, h, px, compression=8, strips=[b"\x78\x9c\x03\x00\x00\x00\x00\x01"],
                               more={317: (SHORT, [1])}),
        # TIF006: a tiled image 20 wide in 16x16 tiles: the edge tile is read short (reach)
        "TIF006.reach": tiff({256: (LONG, [20]), 257: (LONG, [16]), 258: (SHORT, [8]), 259: (SHORT, [1]),
                              262: (SHORT, [1]), 277: (SHORT, [1]), 322: (LONG, [16]), 323: (LONG, [16]),
                              324: (LONG, [0, 256]), 325: (LONG, [256, 256])}, bytes(512), offsets_tag=324),
    }
    library(HERE.name).write_inputs(seeds=seeds, inputs=inputs)


if __name__ == "__main__":
    main()
