"""Make libpng's seeds and the crafted inputs of its bugs (benchmarks/bugs/libpng/{seeds,inputs}):
PNG files written chunk by chunk, each after png_harness.c's 2 option bytes (the simplified API's
format index, the flags).

    python benchmarks/bugs/libpng/make_inputs.py     # rewrites seeds/ and inputs/
"""

from __future__ import annotations

import struct
import zlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # buglibs.py
from buglibs import library  # noqa: E402
SIG = b"\x89PNG\r\n\x1a\n"
GRAY, RGB, PALETTE, GRAY_ALPHA, RGBA = 0, 2, 3, 4, 6
# png_harness.c's FORMATS indices and flags
F_GRAY, F_RGB, F_RGBA, F_LINEAR_Y, F_RGB_COLORMAP = 0, 3, 5, 9, 13
BACKGROUND, QUANTIZE, WHITE = 1, 2, 4


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, depth: int, color: int, rows: list[bytes], *, interlace: int = 0,
        before_idat: bytes = b"") -> bytes:
    """``rows`` are the filtered scanlines' data without the filter byte (filter 0 is added), or for
    an interlaced image the raw stream's rows, filter bytes included."""
    raw = b"".join(rows) if interlace else b"".join(b"\0" + r for r in rows)
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, interlace)
    return SIG + chunk(b"IHDR", ihdr) + before_idat + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def opts(fmt: int, flags: int, data: bytes) -> bytes:
    return bytes([fmt, flags]) + data


def plte(colors: list[tuple[int, int, int]]) -> bytes:
    return chunk(b"PLTE", b"".join(bytes(c) for c in colors))


def adam7_rows(width: int, height: int, bytes_per_pixel: int) -> list[bytes]:
    """The rows of an Adam7-interlaced image of zero pixels: each pass's rows, filter byte 0."""
    passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
    rows = []
    for x0, y0, dx, dy in passes:
        w = len(range(x0, width, dx))
        for _ in range(y0, height, dy):
            if w:
                rows.append(b"\0" + bytes(w * bytes_per_pixel))
    return rows


def lcg_colors(n: int, seed: int = 1) -> list[tuple[int, int, int]]:
    """``n`` scattered colours from a linear congruential generator (glibc's constants)."""
    out, x = [], seed
    for _ in range(n):
        rgb = []
        for _ in range(3):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            rgb.append(x >> 23)
        out.append(tuple(rgb))
    return out


def main() -> None:
    gray8 = png(4, 4, 8, GRAY, [bytes([0, 64, 128, 255])] * 4)
    pal = plte([(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)])
    palette8 = png(4, 2, 8, PALETTE, [bytes([0, 1, 2, 3])] * 2, before_idat=pal)
    palette_trns = png(4, 2, 8, PALETTE, [bytes([0, 1, 2, 3])] * 2,
                       before_idat=chunk(b"gAMA", struct.pack(">I", 45455)) + pal
                       + chunk(b"tRNS", bytes([0, 128, 255])))
    rgba8 = png(2, 2, 8, RGBA, [bytes([255, 0, 0, 128, 0, 255, 0, 255])] * 2)
    gray16 = png(2, 2, 16, GRAY, [bytes([0x12, 0x34, 0xff, 0xff])] * 2)
    seeds = {
        "gray8.png": opts(F_GRAY, 0, gray8),
        "gray8-rgb.png": opts(F_RGB, BACKGROUND, gray8),
        "palette8.png": opts(F_RGBA, 0, palette8),
        "palette8-colormap.png": opts(F_RGB_COLORMAP, 0, palette8),
        "palette-trns-gamma.png": opts(F_RGBA, 0, palette_trns),
        "rgba8-linear.png": opts(F_LINEAR_Y, 0, rgba8),
        "gray16.png": opts(F_LINEAR_Y, 0, gray16),
        "palette8-quantize.png": opts(F_RGB, QUANTIZE | 0xf0, palette8),
    }
    big_palette = plte([(i * 37 % 256, i * 91 % 256, i * 13 % 256) for i in range(64)])
    inputs = {
        # PNG001: a 16-bit image read to 8-bit output, not interlaced (reach) / interlaced (trigger)
        "PNG001.reach": opts(F_GRAY, 0, gray16),
        "PNG001.trigger": opts(F_GRAY, 0, png(16, 16, 16, GRAY, adam7_rows(16, 16, 2), interlace=1)),
        # PNG002: composited in png_image_read_composite (an RGBA image to RGB output: reach) / a
        # palette image with partial alpha to RGB output onto a white buffer (trigger)
        "PNG002.reach": opts(F_RGB, 0, rgba8),
        "PNG002.trigger": opts(F_RGB, WHITE, palette_trns),
        # PNG003: a palette with partial alpha and gamma composited onto a given background (reach) /
        # the file's own, the simplified API's premultiplied case (trigger)
        "PNG003.reach": opts(F_RGB, BACKGROUND, palette_trns),
        "PNG003.trigger": opts(F_RGB, 0, palette_trns),
        # PNG004: quantizing a palette image (reach) / one with an index past its 4-colour palette (trigger)
        "PNG004.reach": opts(F_RGB, QUANTIZE | 0xf0, palette8),
        "PNG004.trigger": opts(F_RGB, QUANTIZE | 0xf0, png(4, 1, 8, PALETTE, [bytes([0, 1, 9, 200])],
                                                           before_idat=pal)),
        # PNG005: quantizing 64 colours to 16 without a histogram prunes by colour distance (reach) /
        # 100 scattered colours to 16: pruning renumbers the palette before the table is built (trigger)
        "PNG005.reach": opts(F_RGB, QUANTIZE, png(8, 8, 8, PALETTE, [bytes(range(i * 8, i * 8 + 8)) for i in range(8)],
                                                  before_idat=big_palette)),
        "PNG005.trigger": opts(F_RGB, QUANTIZE, png(8, 1, 8, PALETTE, [bytes(range(8))],
                                                    before_idat=plte(lcg_colors(100)))),
    }
    library(HERE.name).write_inputs(seeds=seeds, inputs=inputs)


if __name__ == "__main__":
    main()
