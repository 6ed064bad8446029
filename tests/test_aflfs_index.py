"""autotune.runtime.afl_index: the index file's header and live counters (format: docs/RUNTIME.md)."""

from __future__ import annotations

import struct

import pytest

from autotune.errors import AutotuneError
from autotune.runtime.afl_index import CTL, HEADER, INDEX_MAGIC, read_index_stats

BM_CTL_MAGIC = 0x32304C54434D4221  # "!BMCTL02"


def index_bytes(*, used: int, overflow: int, metric: int = 7, ready: int = 1, magic: bytes = INDEX_MAGIC) -> bytes:
    head = HEADER.pack(magic, 64, 1, metric, 99, 42, 1 << 10, 256, ready, 1)
    ctl = CTL.pack(BM_CTL_MAGIC, 1, 8, 1 << 10, 256, used, overflow) + bytes(24)
    return head + ctl + bytes(4 << 10)  # an empty index: all zero


def test_reads_header_and_live_counters(tmp_path):
    p = tmp_path / "idx"
    p.write_bytes(index_bytes(used=256, overflow=17))
    st = read_index_stats(path=p)
    assert (st.layout, st.metric, st.seed, st.index_slots, st.dense_slots) == ("twolevel", "ngram-8", 42, 1024, 256)
    assert st.guards == 99 and st.key_hash == "afl"
    assert (st.used_key, st.overflow_keys, st.keys, st.overflowed) == (256, 17, 273, True)
    d = st.to_dict()
    assert d["schema_version"] == 1 and d["keys"] == 273 and d["overflow_keys"] == 17
    # the counters sit where docs/RUNTIME.md says: used_key at offset 96, overflow_keys at 100
    raw = p.read_bytes()
    assert struct.unpack_from("<II", raw, 96) == (256, 17)


@pytest.mark.parametrize("data,msg", [
    (b"short", "too short"),
    (index_bytes(used=1, overflow=0, magic=b"NOTINDEX"), "not an autotune index file"),
    (index_bytes(used=1, overflow=0, ready=0), "not initialised"),
    (index_bytes(used=1, overflow=0, magic=b"ATAFLIX1"), "index format 1"),
    (index_bytes(used=1, overflow=0, magic=b"ATAFLIX2"), "index format 2"),
])
def test_bad_files_are_clear_errors(tmp_path, data, msg):
    p = tmp_path / "idx"
    p.write_bytes(data)
    with pytest.raises(AutotuneError) as e:
        read_index_stats(path=p)
    assert msg in e.value.message and e.value.fix


def test_missing_file(tmp_path):
    with pytest.raises(AutotuneError) as e:
        read_index_stats(path=tmp_path / "nope")
    assert "cannot read" in e.value.message


def test_overflow_advice_names_the_size_that_fits():
    from autotune.runtime.afl_index import AflIndexStats, campaign_index

    def stats(dense, used, over, index=1 << 16):
        return AflIndexStats(path="x", layout="twolevel", metric="edge", seed=0, guards=1, key_hash="exact",
                             index_slots=index, dense_slots=dense, used_key=used, overflow_keys=over)

    assert stats(1024, 500, 0).advice() is None
    said = stats(1024, 1024, 1000).advice()  # 2,024 keys: 2x is 4,048 -> 4,096 slots
    assert "1,000 of the 2,024 keys" in said and "AUTOTUNE_MAP_SIZE=4096" in said and "INDEX_SIZE" not in said
    said = stats(1 << 16, 1 << 16, 1 << 16, index=1 << 16).advice()  # the index is too small as well
    assert "AUTOTUNE_MAP_SIZE=262144" in said and "AUTOTUNE_INDEX_SIZE=262144 or more" in said
    said = stats(1 << 15, 1 << 15, 12_232, index=1 << 16).advice()  # 45,000 keys: 2x in 4 KiB pages, 90,112
    assert "AUTOTUNE_MAP_SIZE=90112" in said and "AUTOTUNE_INDEX_SIZE=131072 or more" in said  # the index: a power of two
    assert campaign_index({}) is None and campaign_index({"AUTOTUNE_INDEX_FILE": "/nonexistent/i.bin"}) is None
