"""Read the shared key->slot index file of a target running under afl-fuzz (AUTOTUNE_INDEX_FILE).

The fork server (kernels/aflfs.c) keeps the two-level map's index table and its live counters
in this file, mapped MAP_SHARED by every child, so ``used_key`` and ``overflow_keys`` here are
the campaign's own figures at any moment (docs/DESIGN.md "Running under afl-fuzz"). Preflight
and validate read them with :func:`read_index_stats`.

Layout (little-endian, host order): a 64-byte header ``char magic[8] = "ATAFLIX3"; u32
header_bytes (64); u32 layout; u32 metric; u32 guards; u64 seed; u64 index_slots; u64
dense_slots; u32 ready; u32 key_hash; u32 reserved[2]``, then bigmap's control region (``bm_ctl``: u64 magic;
u32 layout, width_bits; u64 index_slots, capacity; u32 used_key, overflow_keys, ...; 64 bytes),
then the index table (index_slots x u32 holding slot + 1, 0 = unassigned, so a new file is an
empty index without being written). Older formats are refused: 1 (``"ATAFLIX1"``, 0xFFFFFFFF =
unassigned), 2 (``"ATAFLIX2"``, ngram-N indexed by mix64 of the exact key, not its fold).
"""

from __future__ import annotations

import struct
from dataclasses import asdict, dataclass
from pathlib import Path

from autotune.errors import AutotuneError
from autotune.vocabulary import INDEX_FILE_VAR, KEY_HASHES, METRICS
from autotune.vocabulary import LAYOUTS, dense_for_keys

INDEX_MAGIC = b"ATAFLIX3"
# older formats: 1 stored the slot as is (0xFFFFFFFF = unassigned); 2 indexed ngram-N by mix64
INDEX_MAGIC_OLD = {b"ATAFLIX1": 1, b"ATAFLIX2": 2}
HEADER = struct.Struct("<8sIIIIQQQII8x")  # 64 bytes
CTL = struct.Struct("<QIIQQII")  # the first 40 bytes of bm_ctl
LAYOUT_NAMES = {lay.bm_code: name for name, lay in LAYOUTS.items()}  # the header's layout code -> name
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class AflIndexStats:
    """The figures of one index file."""

    path: str
    layout: str
    metric: str
    seed: int
    guards: int  # coverage guards of the build that made the file
    key_hash: str  # AUTOTUNE_KEY_HASH the slots were assigned with
    index_slots: int
    dense_slots: int
    used_key: int  # dense slots taken (<= dense_slots)
    overflow_keys: int  # keys that found the dense map full and share its last slot

    @property
    def keys(self) -> int:
        """Distinct keys seen (used slots plus the keys sent to the overflow slot)."""
        return self.used_key + self.overflow_keys

    @property
    def overflowed(self) -> bool:
        return self.overflow_keys > 0

    def fitting_dense_slots(self) -> int:
        """The dense slots these keys want: a two-level map sized as the race sizes one
        (autotune.vocabulary.dense_for_keys; not capped by the index, so a too-small index shows)."""
        return dense_for_keys(self.keys)

    def advice(self) -> str | None:
        """What a reader must be told when the dense map overflowed (None when it did not): how many
        keys shared its last slot, and the variables that fit the keys this campaign found."""
        if not self.overflowed:
            return None
        fit = self.fitting_dense_slots()
        line = (f"our dense map of {self.dense_slots:,} slots overflowed: {self.overflow_keys:,} of the "
                f"{self.keys:,} keys it saw share its last slot, so their counts collide; the size that fits "
                f"them: AUTOTUNE_MAP_SIZE={fit}")
        if fit > self.index_slots:
            index = 1 << (fit - 1).bit_length()  # the index is a power of two
            line += f" and AUTOTUNE_INDEX_SIZE={index} or more (the index has {self.index_slots:,} slots)"
        return line

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, **asdict(self), "keys": self.keys}


def read_index_stats(*, path: str | Path) -> AflIndexStats:
    """Read the header and live counters of an index file; AutotuneError if it is not one."""
    p = Path(path)
    try:
        with open(p, "rb") as f:
            head = f.read(HEADER.size + CTL.size)
    except OSError as exc:
        raise AutotuneError(f"cannot read the index file {p}: {exc.strerror}",
                            fix="check AUTOTUNE_INDEX_FILE (the target creates it on its first run)") from exc
    if len(head) < HEADER.size + CTL.size:
        raise AutotuneError(f"{p} is too short to be an autotune index file",
                            fix="delete it; the target recreates it on its next run")
    magic, header_bytes, layout, metric, guards, seed, index_slots, dense_slots, ready, key_hash = HEADER.unpack_from(head)
    if magic in INDEX_MAGIC_OLD:
        raise AutotuneError(f"{p} has index format {INDEX_MAGIC_OLD[magic]} (made by an older autotune runtime); "
                            f"this version reads format 3", fix="delete it; the target recreates it on its next run")
    if magic != INDEX_MAGIC or header_bytes != HEADER.size:
        raise AutotuneError(f"{p} is not an autotune index file", fix="point AUTOTUNE_INDEX_FILE at another path")
    if not ready:
        raise AutotuneError(f"{p} is not initialised yet", fix="run the target once, or delete the file")
    _m, _lay, _w, _h, _c, used_key, overflow_keys = CTL.unpack_from(head, HEADER.size)
    return AflIndexStats(
        path=str(p),
        layout=LAYOUT_NAMES.get(layout, str(layout)),
        metric=METRICS[metric] if metric < len(METRICS) else str(metric),
        seed=seed,
        guards=guards,
        key_hash=KEY_HASHES[key_hash] if key_hash < len(KEY_HASHES) else str(key_hash),
        index_slots=index_slots,
        dense_slots=dense_slots,
        used_key=used_key,
        overflow_keys=overflow_keys,
    )


def campaign_index(applied: dict[str, str]) -> dict | None:
    """The live counters of the index file a campaign's variables name (AUTOTUNE_INDEX_FILE), as a
    trial keeps them: the figures and, when the dense map overflowed, the advice; None when the
    configuration has no index file or the target never made one (it did not run)."""
    path = applied.get(INDEX_FILE_VAR)
    if not path or not Path(path).is_file():
        return None
    try:
        st = read_index_stats(path=path)
    except AutotuneError as exc:
        return {"path": str(path), "error": exc.message}
    d = {k: v for k, v in st.to_dict().items() if k != "schema_version"}
    advice = st.advice()
    return {**d, **({"advice": advice} if advice else {})}
