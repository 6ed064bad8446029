"""The demo target's seed corpus and its documented crashing and hanging inputs, as code.

``python -m autotune.demo.inputs`` rewrites ``seeds/`` and ``inputs/`` beside this file; a test
checks the shipped files are exactly these.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def crc8(data: bytes) -> int:
    """CRC-8 (polynomial 0x07, init 0), as the harness's 'C' chunk checks it."""
    c = 0
    for b in data:
        c ^= b
        for _ in range(8):
            c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
    return c


def header(*, version: int = 1, strict: bool = False, stats: bool = False) -> bytes:
    return b"ATLV" + bytes([version, int(strict) | int(stats) << 1])


def chunk(kind: str, payload: bytes, *, version: int = 1) -> bytes:
    n = len(payload)
    size = bytes([n]) if version == 1 else n.to_bytes(2, "little")
    if version == 1 and n > 255:
        raise ValueError("version 1 chunks hold at most 255 bytes")
    return kind.encode() + size + payload


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def zigzag(v: int) -> int:
    return (v << 1) if v >= 0 else ((-v) << 1) | 1


def with_checksum(data: bytes, *, version: int = 1) -> bytes:
    return data + chunk("C", bytes([crc8(data)]), version=version)


def seeds() -> dict[str, bytes]:
    v2 = header(version=2, stats=True)
    return {
        "01-name": header() + chunk("N", b"demo_target"),
        "02-ints": header() + chunk("I", b"".join(varint(zigzag(v)) for v in (1, -2, 300, -70000, 5))),
        "03-text": header(stats=True) + chunk("T", b'hello world 42, "quoted \\" text" end.'),
        "04-expr": header() + chunk("E", b"(1 + 2) * 3 - 10 / 2 % 3"),
        "05-rle": header() + chunk("R", bytes([5, 65, 3, 66, 0, 0, 10, 67])),
        "06-kv": header() + chunk("K", b"width=640;height=480;title=demo;depth=8"),
        "07-loop": header() + chunk("L", bytes([0, 200, 10, ord("B")])) + chunk("L", bytes([1, 2, 2, ord("B")])),
        "08-group": header() + chunk("G", chunk("N", b"inner") + chunk("G", chunk("I", varint(7)) + chunk("E", b"2*21"))),
        "09-checksum": with_checksum(header(strict=True) + chunk("N", b"checked") + chunk("E", b"6/3")),
        "10-v2-mixed": v2 + chunk("T", b"version two text " * 20, version=2) + chunk("K", b"level=3", version=2)
        + chunk("R", bytes([127, 0, 127, 1]), version=2),
        # every step of the 'S' machine once, in alphabetical order: no two consecutive steps of a
        # planted bug's order adjacent (DEMO001's "bad": one mutation away, c -> a, as 5.02c found)
        "11-steps": header() + chunk("S", b"abcdefgh"),
    }


def bad_inputs() -> dict[str, bytes]:
    """Inputs that crash or hang the demo target, or trigger its planted canary, by name (the name
    says which and how)."""
    return {
        # strict mode, an expression dividing by zero: abort() (SIGABRT)
        "crash-abort": header(strict=True) + chunk("E", b"7 / (3 - 3)"),
        # a 'K' chunk setting an unknown key with a '!' value: write through NULL (SIGSEGV)
        "crash-null": header() + chunk("K", b"width=1;bogus=!5"),
        # an 'L' chunk 1, 2, step 2 in mode 'W': i = 1, 3, 5, ... wraps mod 256, never equals 2
        "hang-loop": header() + chunk("N", b"x") + chunk("L", bytes([1, 2, 2, ord("W")])),
        # the planted known bug DEMO001: the steps b, a, d back to back (a canary; it aborts only
        # with AUTOTUNE_CANARY_FATAL=1)
        "canary-demo001": header() + chunk("N", b"x") + chunk("S", b"hgbad"),
        # DEMO002 and DEMO003: the steps h, c, f and g, e, b, d back to back
        "canary-demo002": header() + chunk("N", b"x") + chunk("S", b"ahcf"),
        "canary-demo003": header() + chunk("N", b"x") + chunk("S", b"hgebd"),
    }


def write_all(root: Path = HERE) -> None:
    for sub, items in (("seeds", seeds()), ("inputs", bad_inputs())):
        d = root / sub
        d.mkdir(parents=True, exist_ok=True)
        for name, data in items.items():
            (d / name).write_bytes(data)


if __name__ == "__main__":
    write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
