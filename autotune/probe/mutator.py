"""Havoc-style mutations from a seeded RNG (the operators of AFL's havoc stage, written anew).

One call of :meth:`Havoc.mutate` stacks 1..16 random operators on a copy of the parent:
bit flip, byte flip, interesting 8/16/32-bit values (either byte order), add/subtract small
values to 8/16/32-bit words, random byte, block delete, block insert (copy or constant), block
overwrite (copy or constant), and with some probability first a splice with another input.
Everything random comes from the ``random.Random`` given, so a seed gives the same inputs.
"""

from __future__ import annotations

import itertools
import random
import struct

# AFL's "interesting" values (small boundary values: the numbers, not AFL's code).
INTERESTING_8 = (-128, -1, 0, 1, 16, 32, 64, 100, 127)
INTERESTING_16 = INTERESTING_8 + (-32768, -129, 128, 255, 256, 512, 1000, 1024, 4096, 32767)
INTERESTING_32 = INTERESTING_16 + (-2147483648, -100663046, -32769, 32768, 65535, 65536, 100663045,
                                   2147483647)
ARITH_MAX = 35
MAX_STACK_POW2 = 4  # 1..16 stacked operators
SPLICE_PROBABILITY = 0.15
_PACK = {(2, "<"): struct.Struct("<H"), (2, ">"): struct.Struct(">H"),
         (4, "<"): struct.Struct("<I"), (4, ">"): struct.Struct(">I")}


class Havoc:
    """The mutator. ``max_len`` bounds every output's length."""

    def __init__(self, *, rng: random.Random, max_len: int):
        if max_len < 1:
            raise ValueError("max_len must be >= 1")
        self.rng = rng
        self._random = rng.random  # one float per draw: much cheaper than randrange/randint
        self.max_len = max_len
        self._ops = (self._flip_bit, self._flip_byte, self._interesting8, self._interesting16,
                     self._interesting32, self._arith8, self._arith16, self._arith32, self._random_byte,
                     self._delete_block, self._insert_block, self._overwrite_block)
        # block inserts and deletes are as likely as one of the others, byte-level ops more so
        weights = (3, 2, 2, 2, 2, 3, 2, 2, 3, 2, 2, 2)
        self._cum_weights = tuple(itertools.accumulate(weights))

    def mutate(self, data: bytes, *, other: bytes | None = None) -> bytes:
        rng = self.rng
        buf = bytearray(data)
        if other is not None and len(other) > 1 and len(buf) > 1 and self._random() < SPLICE_PROBABILITY:
            buf = self._splice(buf, other)
        n_ops = 1 << self._between(0, MAX_STACK_POW2)
        for op in rng.choices(self._ops, cum_weights=self._cum_weights, k=n_ops):
            op(buf)
        if len(buf) > self.max_len:
            del buf[self.max_len:]
        return bytes(buf)

    def _below(self, n: int) -> int:
        """Uniform in [0, n) (n >= 1)."""
        return int(self._random() * n)

    def _between(self, a: int, b: int) -> int:
        """Uniform in [a, b]."""
        return a + int(self._random() * (b - a + 1))

    # --- operators (each edits buf in place; an empty buf gets bytes inserted) -----------------
    def _pos(self, buf: bytearray, width: int) -> int | None:
        if len(buf) < width:
            return None
        return self._below(len(buf) - width + 1)

    def _flip_bit(self, buf: bytearray) -> None:
        if not buf:
            return self._insert_block(buf)
        bit = self._below(len(buf) * 8)
        buf[bit >> 3] ^= 0x80 >> (bit & 7)

    def _flip_byte(self, buf: bytearray) -> None:
        if not buf:
            return self._insert_block(buf)
        buf[self._below(len(buf))] ^= 0xFF

    def _random_byte(self, buf: bytearray) -> None:
        if not buf:
            return self._insert_block(buf)
        i = self._below(len(buf))
        buf[i] ^= self._between(1, 255)

    def _interesting8(self, buf: bytearray) -> None:
        if not buf:
            return self._insert_block(buf)
        buf[self._below(len(buf))] = INTERESTING_8[self._below(len(INTERESTING_8))] & 0xFF

    def _put_word(self, buf: bytearray, width: int, value: int) -> None:
        i = self._pos(buf, width)
        if i is None:
            return self._interesting8(buf)
        order = "<" if self._random() < 0.5 else ">"
        _PACK[(width, order)].pack_into(buf, i, value & ((1 << (8 * width)) - 1))

    def _interesting16(self, buf: bytearray) -> None:
        self._put_word(buf, 2, INTERESTING_16[self._below(len(INTERESTING_16))])

    def _interesting32(self, buf: bytearray) -> None:
        self._put_word(buf, 4, INTERESTING_32[self._below(len(INTERESTING_32))])

    def _delta(self) -> int:
        d = self._between(1, ARITH_MAX)
        return d if self._random() < 0.5 else -d

    def _arith8(self, buf: bytearray) -> None:
        if not buf:
            return self._insert_block(buf)
        i = self._below(len(buf))
        buf[i] = (buf[i] + self._delta()) & 0xFF

    def _arith_word(self, buf: bytearray, width: int) -> None:
        i = self._pos(buf, width)
        if i is None:
            return self._arith8(buf)
        s = _PACK[(width, "<" if self._random() < 0.5 else ">")]
        (v,) = s.unpack_from(buf, i)
        s.pack_into(buf, i, (v + self._delta()) & ((1 << (8 * width)) - 1))

    def _arith16(self, buf: bytearray) -> None:
        self._arith_word(buf, 2)

    def _arith32(self, buf: bytearray) -> None:
        self._arith_word(buf, 4)

    def _block_len(self, limit: int) -> int:
        """A block length in 1..limit, small lengths more likely (AFL-like)."""
        u = self._random()
        cap = min(limit, 32 if u < 0.6 else 128 if u < 0.9 else 1500)
        return self._between(1, max(cap, 1))

    def _delete_block(self, buf: bytearray) -> None:
        if len(buf) < 2:
            return self._flip_bit(buf) if buf else self._insert_block(buf)
        n = self._block_len(len(buf) - 1)
        i = self._below(len(buf) - n + 1)
        del buf[i:i + n]

    def _insert_block(self, buf: bytearray) -> None:
        room = self.max_len - len(buf)
        if room <= 0:
            return
        n = self._block_len(room)
        at = self._between(0, len(buf))
        if buf and self._random() < 0.75:
            n = min(n, len(buf))
            src = self._below(len(buf) - n + 1)
            block = bytes(buf[src:src + n])
        else:
            block = bytes((self._below(256) if self._random() < 0.5 else buf[self._below(len(buf))] if buf
                           else 0,)) * n
        buf[at:at] = block

    def _overwrite_block(self, buf: bytearray) -> None:
        if len(buf) < 2:
            return self._insert_block(buf)
        n = self._block_len(len(buf) - 1)
        dst = self._below(len(buf) - n + 1)
        if self._random() < 0.75:
            src = self._below(len(buf) - n + 1)
            buf[dst:dst + n] = bytes(buf[src:src + n])
        else:
            buf[dst:dst + n] = bytes((self._below(256),)) * n

    def _splice(self, buf: bytearray, other: bytes) -> bytearray:
        """Head of buf up to a random cut, tail of other from the same cut (AFL's splice)."""
        cut_max = min(len(buf), len(other)) - 1
        cut = self._between(1, cut_max) if cut_max >= 1 else 1
        return bytearray(buf[:cut]) + other[cut:]
