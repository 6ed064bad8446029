"""Make OpenJPEG's seeds and the crafted inputs of its bugs (benchmarks/bugs/openjpeg/{seeds,inputs}),
written field by field: JPEG 2000 codestreams (ITU-T T.800 annex A: SOC, SIZ, COD, QCD, one SOT/SOD
tile-part per tile, EOC) whose packets are all empty (a packet header of one 0 bit: no code-block is
included, every sample decodes to 0), and JP2 files around such codestreams (annex I: the signature,
file type, header and codestream boxes). Every image is decoded through the inverse 5/3
transform (one decomposition level or more), so what an input sets is the geometry: image and tile
origins and sizes, the components' subsampling, EPH markers, tile-part numbers.

    python benchmarks/bugs/openjpeg/make_inputs.py
"""

from __future__ import annotations

import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # buglibs.py
from buglibs import library  # noqa: E402

SOC, SIZ, COD, QCD, SOT, SOD, EPH, EOC = 0xFF4F, 0xFF51, 0xFF52, 0xFF5C, 0xFF90, 0xFF93, 0xFF92, 0xFFD9
SCOD_EPH = 0x04  # Scod: EPH marker after each packet header


def marker(code: int, body: bytes = b"") -> bytes:
    """A marker segment: the code, then (with a body) its length (counting itself) and the body."""
    return struct.pack(">H", code) + (struct.pack(">H", len(body) + 2) + body if body else b"")


@dataclass
class Image:
    width: int  # the image area: x0 = xo, x1 = xo + width
    height: int
    comps: list[tuple[int, int]] = field(default_factory=lambda: [(1, 1)])  # (XRsiz, YRsiz) per component
    xo: int = 0  # XOsiz, YOsiz: the image's origin on the reference grid
    yo: int = 0
    tile: tuple[int, int] | None = None  # XTsiz, YTsiz (the whole image by default)
    tile_origin: tuple[int, int] = (0, 0)  # XTOsiz, YTOsiz
    levels: int = 1  # decomposition levels (resolutions - 1)
    layers: int = 1
    eph: bool = False  # EPH markers announced by the COD
    eph_written: bool = True  # ... and written after each packet header
    tiles: list[int] | None = None  # the tiles written (all by default), in this order
    parts: int = 1  # tile-parts per tile (TNsot), each tile's packets all in its last part

    def grid(self) -> tuple[int, int, int, int]:
        tw, th = self.tile or (self.xo + self.width, self.yo + self.height)
        return tw, th, -(-(self.xo + self.width - self.tile_origin[0]) // tw), \
            -(-(self.yo + self.height - self.tile_origin[1]) // th)

    def header(self) -> bytes:
        tw, th, _, _ = self.grid()
        siz = struct.pack(">HIIIIIIIIH", 0, self.xo + self.width, self.yo + self.height, self.xo, self.yo,
                          tw, th, *self.tile_origin, len(self.comps))
        siz += b"".join(struct.pack(">BBB", 7, dx, dy) for dx, dy in self.comps)  # 8-bit unsigned samples
        cod = struct.pack(">BBHBBBBBB", SCOD_EPH if self.eph else 0, 0, self.layers, 0, self.levels,
                          4, 4, 0, 1)  # LRCP, no MCT; 64 x 64 code-blocks, no style bits, 5/3 reversible
        qcd = bytes([0x40]) + bytes([(8 + (1 if b else 0)) << 3 for b in range(3 * self.levels + 1)])  # none
        return marker(SOC) + marker(SIZ, siz) + marker(COD, cod) + marker(QCD, qcd)

    def packets(self) -> bytes:
        """A tile's packets: one empty packet per layer, resolution, component (one precinct each)."""
        one = b"\x00" + (struct.pack(">H", EPH) if self.eph and self.eph_written else b"")
        return one * (self.layers * (self.levels + 1) * len(self.comps))

    def tile_part(self, tile: int, part: int, data: bytes) -> bytes:
        sot = struct.pack(">HIBB", tile, 12 + 2 + len(data), part, self.parts)
        return marker(SOT, sot) + marker(SOD) + data

    def codestream(self) -> bytes:
        _, _, nx, ny = self.grid()
        out = self.header()
        for t in self.tiles if self.tiles is not None else range(nx * ny):
            for p in range(self.parts):
                out += self.tile_part(t, p, self.packets() if p == self.parts - 1 else b"")
        return out + marker(EOC)


def box(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", 8 + len(body)) + kind + body


def jp2(img: Image, colourspace: int) -> bytes:
    """A JP2 file: signature, file type, header (image header, colour specification by enumerated
    colourspace), the codestream."""
    ihdr = struct.pack(">IIHBBBB", img.height, img.width, len(img.comps), 7, 7, 0, 0)
    colr = struct.pack(">BBBI", 1, 0, 0, colourspace)
    return (box(b"jP  ", b"\r\n\x87\n") + box(b"ftyp", b"jp2 " + struct.pack(">I", 0) + b"jp2 ")
            + box(b"jp2h", box(b"ihdr", ihdr) + box(b"colr", colr)) + box(b"jp2c", img.codestream()))


YCC420 = [(1, 1), (2, 2), (2, 2)]
YCC422 = [(1, 1), (2, 1), (2, 1)]


def seeds() -> dict[str, bytes]:
    return {
        "gray.j2k": Image(8, 8).codestream(),
        "two-levels.j2k": Image(16, 12, levels=2, layers=2).codestream(),
        "ycc420.j2k": Image(8, 7, YCC420).codestream(),
        "ycc422.j2k": Image(7, 4, YCC422).codestream(),
        "eph.j2k": Image(8, 8, [(1, 1), (1, 1), (1, 1)], eph=True).codestream(),
        "tiles.j2k": Image(16, 16, tile=(8, 8), parts=2).codestream(),
        "gray.jp2": jp2(Image(8, 8), 17),  # greyscale
        "srgb.jp2": jp2(Image(6, 6, [(1, 1)] * 3), 16),  # sRGB
    }


def inputs() -> dict[str, bytes]:
    return {
        # OPJ001: EPH markers announced; written after every packet header / missing
        "OPJ001.reach": Image(8, 8, eph=True).codestream(),
        "OPJ001.trigger": Image(8, 8, eph=True, eph_written=False).codestream(),
        # OPJ002: tile-parts counted in their SOT (the index's entries allocated to match)
        "OPJ002.reach": Image(16, 16, tile=(8, 8), parts=2).codestream(),
        # OPJ003: an image 2048 wide, which the harness decodes at half resolution (reduce 1), in tiles
        # of width 1, with 2 decomposition levels: the tile at x = 1 is ceil(1/2)..ceil(2/2), no
        # column, at half resolution, and its one packet (full resolution) is skipped, which leaves
        # it 2 resolutions to transform; the reach input: the tile at x = 0 (one column)
        "OPJ003.reach": Image(2048, 1, tile=(1, 1), levels=2, tiles=[0]).codestream(),
        "OPJ003.trigger": Image(2048, 1, tile=(1, 1), levels=2, tiles=[1]).codestream(),
        # OPJ004: 4:2:0 with an odd number of rows (the last row on its own); x0 even / x0 odd and
        # an odd width
        "OPJ004.reach": Image(8, 3, YCC420).codestream(),
        "OPJ004.trigger": Image(3, 3, YCC420, xo=1).codestream(),
        # OPJ005: 4:2:2 with an odd width (the last column on its own); the trigger: x0 = 2, x1 = 2048,
        # which the harness decodes at half resolution: luma 1..1024 (1023 columns), chroma
        # ceil(2/4)..ceil(2048/4), 511 columns, and the last luma column's chroma sample is the 512th
        "OPJ005.reach": Image(7, 4, YCC422).codestream(),
        "OPJ005.trigger": Image(2046, 2, YCC422, xo=2).codestream(),
    }


def main() -> None:
    lib = library("openjpeg")
    s, i = seeds(), inputs()
    lib.write_inputs(seeds=s, inputs=i)
    print(f"{len(s)} seeds, {len(i)} inputs", file=sys.stderr)


if __name__ == "__main__":
    main()
