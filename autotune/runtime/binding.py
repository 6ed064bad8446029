"""ctypes binding of the BigMap kernels (kernels/bigmap*.c, kernels/cpu.c).

``Kernels.load()`` builds the kernels as a shared library once per source hash into the cache
(``autotune.runtime.build.build_artifact``, flock-safe) and loads it; ``Kernels.new_map()``
makes a ``BigMap`` whose counters, trace, stored index (``index_raw``) and virgin maps are numpy
views of the C memory; ``index`` decodes the index to BigMap's view (UNASSIGNED = -1).
The per-exec kernels run through the active variant (scalar / avx2 / avx512), chosen once from
the CPU features; ``AUTOTUNE_FORCE_SCALAR=1`` or ``Kernels.select_variant("scalar")`` forces
scalar. The ``*_raw`` methods run one named variant on numpy arrays (differential tests, timing).
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from autotune.errors import AutotuneError
from autotune.runtime.build import build_artifact
from autotune.vocabulary import LAYOUTS as LAYOUT_SPECS

LIB_NAME = "autotune-bigmap"
SOURCES = ("bigmap.c", "bigmap_ops.c", "bigmap_scalar.c", "bigmap_simd.c", "bigmap_ffi.c", "cpu.c")
CFLAGS = ("-O2", "-g")

Layout = Literal["flat", "twolevel", "exact"]
Policy = Literal["wrap", "neverzero", "saturate"]
Variant = Literal["scalar", "avx2", "avx512"]

# the runtime's layouts (autotune.vocabulary) and the kernels' exact layout (tests and bench only)
LAYOUTS: dict[str, int] = {**{n: lay.bm_code for n, lay in LAYOUT_SPECS.items()},
                           "exact": 2}  # kernels/bigmap.h BM_EXACT (tests/test_runtime_config_c.py checks the table)
POLICIES: dict[str, int] = {"wrap": 0, "neverzero": 1, "saturate": 2}
VARIANTS: dict[str, int] = {"scalar": 0, "avx2": 1, "avx512": 2}
WIDTH_DTYPES: dict[int, type] = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
UNASSIGNED = 0xFFFFFFFF  # BigMap's -1 in the decoded index (``BigMap.index``)
INDEX_EMPTY = 0  # the stored index encoding (``BigMap.index_raw``): slot + 1, 0 = unassigned
BM_F_NO_HUGEPAGE = 1

_p = ctypes.c_void_p
_u64 = ctypes.c_uint64
_size = ctypes.c_size_t

# name: (restype, argtypes)
_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "bm_map_new": (_p, [ctypes.c_int, ctypes.c_uint, ctypes.c_int, _u64, _u64, ctypes.c_uint,
                        ctypes.POINTER(ctypes.c_int)]),
    "bm_map_free": (None, [_p]),
    "bm_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "bm_validate": (ctypes.c_int, [_p, ctypes.POINTER(ctypes.c_char_p)]),
    "bm_map_holes": (_u64, [_p]),
    "bm_map_hugepage_bytes": (ctypes.c_long, [_p]),
    "bm_select_variant": (ctypes.c_int, [ctypes.c_int]),
    "bm_active_variant": (ctypes.c_int, []),
    "bm_kernels_get": (_p, [ctypes.c_int]),
    "bm_reset": (None, [_p]),
    "bm_flat_reset_nt": (None, [_p]),
    "bm_classify": (None, [_p]),
    "bm_compare": (ctypes.c_int, [_p, _p]),
    "bm_classify_compare": (ctypes.c_int, [_p, _p]),
    "bm_hash": (_u64, [_p]),
    "bm_count_nonzero": (_u64, [_p]),
    "bm_hash_bytes": (_u64, [_p, _size]),
    "bm_ffi_counters": (_p, [_p]),
    "bm_ffi_trace": (_p, [_p]),
    "bm_ffi_index": (_p, [_p]),
    "bm_ffi_used": (_u64, [_p]),
    "bm_ffi_overflow_keys": (_u64, [_p]),
    "bm_ffi_table_full": (_u64, [_p]),
    "bm_ffi_hugepage_advised": (ctypes.c_int, [_p]),
    "bm_ffi_update_many": (None, [_p, _p, _size]),
    "bm_ffi_classify": (ctypes.c_int, [ctypes.c_int, ctypes.c_uint, _p, _p, _size]),
    "bm_ffi_classify_compare": (ctypes.c_int, [ctypes.c_int, ctypes.c_uint, _p, _p, _p, _size]),
    "bm_ffi_compare": (ctypes.c_int, [ctypes.c_int, _p, _p, _size]),
    "bm_ffi_count_nonzero": (ctypes.c_int64, [ctypes.c_int, ctypes.c_uint, _p, _size]),
    "bm_ffi_last_nonzero": (ctypes.c_int64, [ctypes.c_int, _p, _size]),
}


def build_library() -> Path:
    """Build (or reuse) the kernels' shared library in the cache; returns its path."""
    return build_artifact(LIB_NAME, SOURCES, kind="shared", flags=CFLAGS)


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def _check_array(a: np.ndarray, dtype: type, name: str, *, min_len: int = 0, writable: bool = False) -> None:
    if not isinstance(a, np.ndarray) or a.dtype != np.dtype(dtype) or not a.flags.c_contiguous:
        raise TypeError(f"{name} must be a C-contiguous numpy array of {np.dtype(dtype).name}")
    if writable and not a.flags.writeable:
        raise ValueError(f"{name} must be writable")
    if a.size < min_len:
        raise ValueError(f"{name} has {a.size} elements, needs at least {min_len}")


class Kernels:
    """The loaded library. One per process (``Kernels.load()`` is cached)."""

    def __init__(self, lib: ctypes.CDLL, path: Path) -> None:
        self.lib = lib
        self.path = path

    @classmethod
    @functools.lru_cache(maxsize=1)
    def load(cls) -> Kernels:
        path = build_library()
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as exc:
            raise AutotuneError(f"cannot load the kernels library {path}: {exc}",
                                fix="remove the build cache (AUTOTUNE_CACHE_DIR) and retry") from exc
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        return cls(lib, path)

    # ---- variants ------------------------------------------------------------------------
    @property
    def variant(self) -> str:
        """The active kernel variant."""
        return {v: k for k, v in VARIANTS.items()}[self.lib.bm_active_variant()]

    def available_variants(self) -> list[str]:
        return [name for name, v in VARIANTS.items() if self.lib.bm_kernels_get(v)]

    def select_variant(self, name: Variant | Literal["auto"]) -> None:
        code = -1 if name == "auto" else VARIANTS.get(name)
        if code is None or self.lib.bm_select_variant(code) != 0:
            raise AutotuneError(f"kernel variant {name!r} is not available on this host",
                                fix=f"use one of: auto, {', '.join(self.available_variants())}")

    # ---- maps ----------------------------------------------------------------------------
    def new_map(self, *, layout: Layout = "twolevel", width_bits: int = 8, policy: Policy = "neverzero",
                index_slots: int = 1 << 16, capacity: int | None = None, hugepages: bool = True) -> BigMap:
        if layout not in LAYOUTS or policy not in POLICIES or width_bits not in WIDTH_DTYPES:
            raise ValueError(f"bad map configuration: layout={layout} width_bits={width_bits} policy={policy}")
        cap = index_slots if capacity is None else capacity
        err = ctypes.c_int(0)
        handle = self.lib.bm_map_new(LAYOUTS[layout], width_bits, POLICIES[policy], index_slots, cap,
                                     0 if hugepages else BM_F_NO_HUGEPAGE, ctypes.byref(err))
        if not handle:
            msg = self.lib.bm_strerror(err.value).decode()
            raise AutotuneError(f"cannot create a {layout} map (H={index_slots}, C={cap}, {width_bits}-bit): {msg}",
                                fix="use a power-of-two index size up to 2^31 and a capacity in 1..2^31 "
                                    "(exact: capacity <= index size)")
        return BigMap(self, handle, layout=layout, width_bits=width_bits, policy=policy,
                      index_slots=index_slots, capacity=index_slots if layout == "flat" else cap)

    def hash_bytes(self, data: np.ndarray) -> int:
        _check_array(data, np.uint8, "data")
        return int(self.lib.bm_hash_bytes(_ptr(data), data.size))

    # ---- one named variant on raw arrays -------------------------------------------------
    def _variant_code(self, variant: Variant) -> int:
        code = VARIANTS[variant]
        if not self.lib.bm_kernels_get(code):
            raise AutotuneError(f"kernel variant {variant!r} is not available on this host",
                                fix=f"use one of: {', '.join(self.available_variants())}")
        return code

    def classify_raw(self, variant: Variant, counters: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Bucket bytes of ``counters`` (any width); 8-bit in place when ``out`` is counters."""
        w = counters.dtype.itemsize * 8
        _check_array(counters, WIDTH_DTYPES.get(w, np.uint8), "counters")
        out = np.empty(counters.size, np.uint8) if out is None else out
        _check_array(out, np.uint8, "out", min_len=counters.size, writable=True)
        self.lib.bm_ffi_classify(self._variant_code(variant), w, _ptr(out), _ptr(counters), counters.size)
        return out

    def classify_compare_raw(self, variant: Variant, counters: np.ndarray, virgin: np.ndarray,
                             out: np.ndarray | None = None) -> tuple[int, np.ndarray]:
        w = counters.dtype.itemsize * 8
        _check_array(counters, WIDTH_DTYPES.get(w, np.uint8), "counters")
        _check_array(virgin, np.uint8, "virgin", min_len=counters.size, writable=True)
        out = np.empty(counters.size, np.uint8) if out is None else out
        _check_array(out, np.uint8, "out", min_len=counters.size, writable=True)
        ret = self.lib.bm_ffi_classify_compare(self._variant_code(variant), w, _ptr(out), _ptr(counters),
                                               _ptr(virgin), counters.size)
        return int(ret), out

    def compare_raw(self, variant: Variant, trace: np.ndarray, virgin: np.ndarray) -> int:
        _check_array(trace, np.uint8, "trace")
        _check_array(virgin, np.uint8, "virgin", min_len=trace.size, writable=True)
        return int(self.lib.bm_ffi_compare(self._variant_code(variant), _ptr(trace), _ptr(virgin), trace.size))

    def count_nonzero_raw(self, variant: Variant, counters: np.ndarray) -> int:
        w = counters.dtype.itemsize * 8
        _check_array(counters, WIDTH_DTYPES.get(w, np.uint8), "counters")
        return int(self.lib.bm_ffi_count_nonzero(self._variant_code(variant), w, _ptr(counters), counters.size))

    def last_nonzero_raw(self, variant: Variant, data: np.ndarray) -> int:
        _check_array(data, np.uint8, "data")
        return int(self.lib.bm_ffi_last_nonzero(self._variant_code(variant), _ptr(data), data.size))


@dataclass
class MapCheck:
    ok: bool
    reason: str


class BigMap:
    """One map (C memory owned by the library; freed by ``close()`` or on garbage collection)."""

    def __init__(self, k: Kernels, handle: int, *, layout: str, width_bits: int, policy: str,
                 index_slots: int, capacity: int) -> None:
        self._k = k
        self._lib = k.lib
        self._h: int | None = handle
        self.layout = layout
        self.width_bits = width_bits
        self.policy = policy
        self.index_slots = index_slots
        self.capacity = capacity

    # ---- lifetime ------------------------------------------------------------------------
    def close(self) -> None:
        if self._h:
            self._lib.bm_map_free(self._h)
            self._h = None

    def __del__(self) -> None:  # pragma: no cover - depends on the collector
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> BigMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def handle(self) -> int:
        if not self._h:
            raise ValueError("the map is closed")
        return self._h

    # ---- state ---------------------------------------------------------------------------
    @property
    def used(self) -> int:
        """Slots the per-exec kernels cover (flat: H; twolevel/exact: used_key)."""
        return int(self._lib.bm_ffi_used(self.handle))

    @property
    def overflow_keys(self) -> int:
        return int(self._lib.bm_ffi_overflow_keys(self.handle))

    @property
    def table_full(self) -> int:
        return int(self._lib.bm_ffi_table_full(self.handle))

    @property
    def hugepage_advised(self) -> bool:
        """madvise(MADV_HUGEPAGE) succeeded on every region (maps of at least 2 MiB)."""
        return bool(self._lib.bm_ffi_hugepage_advised(self.handle))

    def hugepage_bytes(self) -> int:
        """Bytes of this map backed by transparent huge pages now (-1 if unknown)."""
        return int(self._lib.bm_map_hugepage_bytes(self.handle))

    def _view(self, addr: int, ctype: type, n: int, dtype: type) -> np.ndarray:
        if not addr or n == 0:
            return np.zeros(0, dtype)
        buf = (ctype * n).from_address(addr)
        return np.ctypeslib.as_array(buf).view(dtype)

    @property
    def counters(self) -> np.ndarray:
        """The dense counters (flat: all H), a live view."""
        ctype = {8: ctypes.c_uint8, 16: ctypes.c_uint16, 32: ctypes.c_uint32, 64: ctypes.c_uint64}[self.width_bits]
        return self._view(self._lib.bm_ffi_counters(self.handle), ctype, self.capacity, WIDTH_DTYPES[self.width_bits])

    @property
    def trace(self) -> np.ndarray:
        """The classified bucket bytes (the counters themselves for 8-bit maps), a live view."""
        return self._view(self._lib.bm_ffi_trace(self.handle), ctypes.c_uint8, self.capacity, np.uint8)

    @property
    def index_raw(self) -> np.ndarray:
        """The stored index table (twolevel/exact): slot + 1, INDEX_EMPTY (0) = unassigned; a live
        view (reading it touches its pages); empty for flat."""
        return self._view(self._lib.bm_ffi_index(self.handle), ctypes.c_uint32, self.index_slots, np.uint32)

    @property
    def index(self) -> np.ndarray:
        """The index table as BigMap shows it (DSN'21 Fig. 5): the slot of each entry, UNASSIGNED
        (0xFFFFFFFF, BigMap's -1) where none; a decoded copy (H x 4 bytes); empty for flat."""
        return self.index_raw - np.uint32(1)  # uint32 wrap-around: 0 -> 0xFFFFFFFF

    def new_virgin(self) -> np.ndarray:
        """A fresh virgin map (all 0xFF) sized for this map."""
        return np.full(self.capacity, 0xFF, np.uint8)

    def validate(self) -> MapCheck:
        reason = ctypes.c_char_p()
        ok = bool(self._lib.bm_validate(self.handle, ctypes.byref(reason)))
        return MapCheck(ok=ok, reason=(reason.value or b"").decode())

    def holes(self) -> int:
        return int(self._lib.bm_map_holes(self.handle))

    # ---- hot path ------------------------------------------------------------------------
    def update(self, keys: np.ndarray) -> None:
        """One hit per key, in order (keys: uint64; other integer arrays are converted)."""
        arr = np.ascontiguousarray(keys, dtype=np.uint64)
        self._lib.bm_ffi_update_many(self.handle, _ptr(arr), arr.size)

    def reset(self) -> None:
        self._lib.bm_reset(self.handle)

    def reset_nt(self) -> None:
        """Non-temporal reset of all C (flat: H) counters."""
        self._lib.bm_flat_reset_nt(self.handle)

    def classify(self) -> None:
        self._lib.bm_classify(self.handle)

    def _virgin(self, virgin: np.ndarray) -> int:
        _check_array(virgin, np.uint8, "virgin", min_len=self.capacity, writable=True)
        return _ptr(virgin)

    def compare(self, virgin: np.ndarray) -> int:
        """0 nothing new, 1 a new bucket of a known slot, 2 a new slot; clears virgin bits."""
        return int(self._lib.bm_compare(self.handle, self._virgin(virgin)))

    def classify_compare(self, virgin: np.ndarray) -> int:
        return int(self._lib.bm_classify_compare(self.handle, self._virgin(virgin)))

    def hash(self) -> int:
        """Hash of the classified bytes up to the last non-zero one (call classify first)."""
        return int(self._lib.bm_hash(self.handle))

    def count_nonzero(self) -> int:
        return int(self._lib.bm_count_nonzero(self.handle))
