"""The probe protocol (docs/RUNTIME.md "The probe protocol"): commands, replies, binary files.

Python side only: packing commands, unpacking replies, reading the census and trace files the
server writes. Everything is little-endian.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autotune.errors import DocumentError
from autotune.io import write_bytes_atomic
from autotune.probe.defaults import DEFAULT_CAPACITY, DEFAULT_MAX_INPUT, DEFAULT_TIMEOUT_MS  # noqa: F401 (the protocol's)
from autotune.vocabulary import METRICS

N_METRICS = len(METRICS)

# Commands: u32 op; u32 arg.
OP_RUN, OP_TRACE, OP_DUMP, OP_QUIT = 1, 2, 3, 4
COMMAND = struct.Struct("<II")

# Reply: u32 status; u32 detail; u64 exec_ns; u32 new_keys[14]; u32 total_keys[14].
REPLY = struct.Struct(f"<IIQ{N_METRICS}I{N_METRICS}I")
REPLY_SIZE = REPLY.size  # 16 + 8 * 14 = 128
NEW_KEYS_SLICE = slice(16, 16 + 4 * N_METRICS)  # the raw bytes of new_keys[] in a reply
NO_NEW_KEYS = bytes(4 * N_METRICS)

ST_OK, ST_CRASH, ST_HANG, ST_FULL, ST_ERROR = 0, 1, 2, 3, 4
STATUS_NAMES = {ST_OK: "ok", ST_CRASH: "crash", ST_HANG: "hang", ST_FULL: "census-full", ST_ERROR: "error"}

# Shared input buffer: u32 len; u32 reserved; u8 data[MAX_INPUT].
INPUT_HEADER = struct.Struct("<II")
INPUT_BUF_NAME = "input.buf"

CENSUS_MAGIC = b"ATCENS01"
CENSUS_HEADER = struct.Struct("<8sIIQQ")  # magic, metric, reserved, n_entries, dropped
CENSUS_DTYPE = np.dtype([("key", "<u8"), ("hk32", "<u4"), ("n_inputs", "<u4"), ("max_hits", "<u8"),
                         ("total_hits", "<u8"), ("first_exec", "<u8")])
TRACE_BLOCK = struct.Struct("<II")  # seq, n_records
TRACE_DTYPE = np.dtype([("key", "<u8"), ("hk32", "<u4"), ("count", "<u4")])

assert REPLY_SIZE == 16 + 8 * N_METRICS
assert CENSUS_DTYPE.itemsize == 40 and TRACE_DTYPE.itemsize == 16


@dataclass(frozen=True)
class Reply:
    status: int
    detail: int
    exec_ns: int
    new_keys: tuple[int, ...]
    total_keys: tuple[int, ...]

    @classmethod
    def unpack(cls, raw: bytes) -> "Reply":
        v = REPLY.unpack(raw)
        return cls(status=v[0], detail=v[1], exec_ns=v[2], new_keys=tuple(v[3:3 + N_METRICS]),
                   total_keys=tuple(v[3 + N_METRICS:]))

    def pack(self) -> bytes:
        return REPLY.pack(self.status, self.detail, self.exec_ns, *self.new_keys, *self.total_keys)


def census_path(probe_dir: Path, metric: str) -> Path:
    return Path(probe_dir) / "census" / f"{metric}.bin"


def trace_path(probe_dir: Path, metric: str) -> Path:
    return Path(probe_dir) / "traces" / f"{metric}.bin"


@dataclass
class CensusTable:
    """One metric's census: structured array of CENSUS_DTYPE records, and the keys dropped."""

    metric: str
    records: np.ndarray
    dropped: int


def read_census(path: Path, *, metric: str | None = None) -> CensusTable:
    """Read ``census/<metric>.bin``; DocumentError if it is missing, truncated or not a census."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise DocumentError(path, "census file not found", fix="run `autotune probe` again") from exc
    if len(raw) < CENSUS_HEADER.size:
        raise DocumentError(path, "truncated census header", fix="run `autotune probe` again")
    magic, mid, _res, n, dropped = CENSUS_HEADER.unpack_from(raw, 0)
    if magic != CENSUS_MAGIC:
        raise DocumentError(path, f"not a census file (magic {magic!r})", fix="run `autotune probe` again")
    if mid >= N_METRICS:
        raise DocumentError(path, f"unknown metric id {mid}", fix="run `autotune probe` again")
    if metric is not None and METRICS[mid] != metric:
        raise DocumentError(path, f"holds metric {METRICS[mid]!r}, expected {metric!r}")
    need = CENSUS_HEADER.size + n * CENSUS_DTYPE.itemsize
    if len(raw) != need:
        raise DocumentError(path, f"size {len(raw)} does not match its {n} records ({need} bytes)",
                            fix="run `autotune probe` again")
    rec = np.frombuffer(raw, dtype=CENSUS_DTYPE, count=n, offset=CENSUS_HEADER.size)
    return CensusTable(metric=METRICS[mid], records=rec, dropped=int(dropped))


def write_census(path: Path, *, metric: str, records: np.ndarray, dropped: int = 0) -> None:
    """Write a census file (used by tests' fake server and by tools that rewrite a census)."""
    rec = np.asarray(records, dtype=CENSUS_DTYPE)
    hdr = CENSUS_HEADER.pack(CENSUS_MAGIC, METRICS.index(metric), 0, len(rec), dropped)
    write_bytes_atomic(path, hdr + rec.tobytes())


def read_traces(path: Path) -> dict[int, np.ndarray]:
    """Read ``traces/<metric>.bin``: {seq: TRACE_DTYPE records in first-hit order}."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise DocumentError(path, "trace file not found", fix="run `autotune probe` again") from exc
    out: dict[int, np.ndarray] = {}
    off = 0
    while off < len(raw):
        if off + TRACE_BLOCK.size > len(raw):
            raise DocumentError(path, f"truncated trace block header at byte {off}")
        seq, n = TRACE_BLOCK.unpack_from(raw, off)
        off += TRACE_BLOCK.size
        end = off + n * TRACE_DTYPE.itemsize
        if end > len(raw):
            raise DocumentError(path, f"trace block {seq} is truncated (needs {n} records)")
        out[seq] = np.frombuffer(raw, dtype=TRACE_DTYPE, count=n, offset=off)
        off = end
    return out
