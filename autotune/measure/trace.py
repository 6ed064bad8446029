"""Key traces: per execution, the (hashed key, hit count) records the map work replays.

A trace comes from a probe (``traces/<metric>.bin``, format in docs/RUNTIME.md) or is synthetic
(seeded). Records are kept as flat numpy arrays with per-execution offsets, the shape
kernels/bench.c takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autotune.errors import AutotuneError, DocumentError
from autotune.io import write_bytes_atomic
from autotune.metrics import index_key
from autotune.vocabulary import KEY_HASHES, METRICS

_HEADER = np.dtype([("seq", "<u4"), ("n_records", "<u4")])
_RECORD = np.dtype([("key", "<u8"), ("hk32", "<u4"), ("count", "<u4")])


@dataclass(frozen=True)
class KeyTrace:
    """Per execution e, records offsets[e]:offsets[e+1] of keys (hk32) and counts."""

    source: str  # "probe:<dir>/traces/<metric>.bin" or "synthetic:keys=N,execs=E,seed=S"
    offsets: np.ndarray  # uint64, n_execs + 1
    keys: np.ndarray  # uint32
    counts: np.ndarray  # uint32

    @property
    def n_execs(self) -> int:
        return int(len(self.offsets) - 1)

    @property
    def n_records(self) -> int:
        return int(self.offsets[-1])

    @property
    def distinct_keys(self) -> int:
        return int(np.unique(self.keys).size)

    @property
    def hits_per_exec(self) -> float:
        return float(self.counts.sum(dtype=np.uint64)) / max(1, self.n_execs)

    def summary(self) -> dict:
        return {
            "source": self.source,
            "n_execs": self.n_execs,
            "n_records": self.n_records,
            "distinct_keys": self.distinct_keys,
            "records_per_exec": round(self.n_records / max(1, self.n_execs), 2),
            "hits_per_exec": round(self.hits_per_exec, 2),
        }


def read_trace_file(path: str | Path, *, key_hash: str = "exact", metric: str | None = None) -> KeyTrace:
    """Parse a probe trace file (blocks of ``u32 seq; u32 n_records;`` + 16-byte records).

    The replayed key is the runtime's index key (docs/DESIGN.md "The map sink's index key"):
    ``exact`` (the default, AUTOTUNE_KEY_HASH's): the metric's index key of the exact 64-bit key
    (``autotune.metrics.index_key``); ``afl``: hk32, AFL++'s own hash. Its low 32 bits pick the
    slot at every map size up to 2^32. ``metric`` defaults to the file's name
    (``traces/<metric>.bin``)."""
    if key_hash not in KEY_HASHES:
        raise AutotuneError(f"unknown key hash {key_hash!r}", fix=f"use one of: {', '.join(KEY_HASHES)}")
    path = Path(path)
    metric = metric or path.stem
    if metric not in METRICS:
        raise AutotuneError(f"{path}: cannot tell the metric of this trace file ({metric!r})",
                            fix=f"name it traces/<metric>.bin or pass one of: {', '.join(METRICS)}")
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise DocumentError(path, "file not found", fix="run `autotune probe` first") from exc
    offsets = [0]
    chunks_k, chunks_c = [], []
    pos = 0
    while pos < len(data):
        if pos + _HEADER.itemsize > len(data):
            raise DocumentError(path, f"truncated block header at byte {pos}", fix="re-run `autotune probe`")
        hdr = np.frombuffer(data, dtype=_HEADER, count=1, offset=pos)[0]
        n = int(hdr["n_records"])
        pos += _HEADER.itemsize
        end = pos + n * _RECORD.itemsize
        if end > len(data):
            raise DocumentError(path, f"block {int(hdr['seq'])} is truncated ({n} records announced)",
                                fix="re-run `autotune probe`")
        recs = np.frombuffer(data, dtype=_RECORD, count=n, offset=pos)
        if key_hash == "exact":
            chunks_k.append((index_key(recs["key"], metric=metric) & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        else:
            chunks_k.append(recs["hk32"].astype(np.uint32))
        chunks_c.append(recs["count"].astype(np.uint32))
        offsets.append(offsets[-1] + n)
        pos = end
    if len(offsets) == 1:
        raise DocumentError(path, "holds no execution", fix="re-run `autotune probe` (it traces kept inputs)")
    return KeyTrace(
        source=f"probe:{path}" + ("" if key_hash == "exact" else f" ({key_hash} hash)"),
        offsets=np.asarray(offsets, dtype=np.uint64),
        keys=np.concatenate(chunks_k) if chunks_k else np.zeros(0, np.uint32),
        counts=np.concatenate(chunks_c) if chunks_c else np.zeros(0, np.uint32),
    )


def probe_trace(probe_dir: str | Path, *, metric: str = "edge", key_hash: str = "exact") -> KeyTrace:
    """The probe's trace of ``metric`` (``<probe_dir>/traces/<metric>.bin``)."""
    if metric not in METRICS:
        raise AutotuneError(f"unknown metric {metric!r}", fix=f"use one of: {', '.join(METRICS)}")
    path = Path(probe_dir) / "traces" / f"{metric}.bin"
    if not path.is_file():
        raise AutotuneError(
            f"{probe_dir} has no key trace for metric {metric} ({path} is missing)",
            fix="run `autotune probe` on the target first, or use --synthetic-keys N",
        )
    return read_trace_file(path, key_hash=key_hash, metric=metric)


def synthetic_trace(*, n_keys: int, seed: int, n_execs: int = 64, keys_per_exec: int | None = None,
                    zipf_a: float = 2.5, max_count: int = 100_000) -> KeyTrace:
    """A seeded trace over ``n_keys`` distinct random 32-bit hashed keys.

    Each execution hits a hot core (the first quarter of the keys each execution shares, like
    start-up and parsing code) plus a random subset of the rest, ``keys_per_exec`` records in
    all (default: half the keys, at most 20,000); hit counts follow a Zipf law (exponent
    ``zipf_a``, capped at ``max_count``), the heavy tail loops give.
    """
    if n_keys < 1 or n_execs < 1:
        raise AutotuneError("a synthetic trace needs at least one key and one execution",
                            fix="pass --synthetic-keys N with N >= 1")
    rng = np.random.default_rng(seed)
    keys = rng.choice(np.uint64(1) << np.uint64(32), size=n_keys, replace=False).astype(np.uint32)
    per_exec = keys_per_exec or max(1, min(n_keys // 2, 20_000))
    per_exec = min(per_exec, n_keys)
    hot = min(per_exec, max(1, n_keys // 4))
    offsets = [0]
    ks, cs = [], []
    for _ in range(n_execs):
        rest = rng.choice(np.arange(hot, n_keys), size=min(per_exec - hot, n_keys - hot), replace=False) \
            if per_exec > hot else np.zeros(0, np.int64)
        idx = np.concatenate([np.arange(hot), rest]).astype(np.int64)
        rng.shuffle(idx)
        cnt = np.minimum(rng.zipf(zipf_a, size=idx.size), max_count).astype(np.uint32)
        ks.append(keys[idx])
        cs.append(cnt)
        offsets.append(offsets[-1] + idx.size)
    return KeyTrace(
        source=f"synthetic:keys={n_keys},execs={n_execs},seed={seed}",
        offsets=np.asarray(offsets, dtype=np.uint64),
        keys=np.concatenate(ks).astype(np.uint32),
        counts=np.concatenate(cs).astype(np.uint32),
    )


def write_trace_file(path: str | Path, trace: KeyTrace) -> Path:
    """Write a trace in the probe's format (tests): ``keys`` become both the exact key and hk32."""
    parts = []
    for e in range(trace.n_execs):
        lo, hi = int(trace.offsets[e]), int(trace.offsets[e + 1])
        hdr = np.array([(e + 1, hi - lo)], dtype=_HEADER)
        recs = np.zeros(hi - lo, dtype=_RECORD)
        recs["key"] = trace.keys[lo:hi]
        recs["hk32"] = trace.keys[lo:hi]
        recs["count"] = trace.counts[lo:hi]
        parts += [hdr.tobytes(), recs.tobytes()]
    return write_bytes_atomic(path, b"".join(parts))
