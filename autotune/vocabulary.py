"""The vocabulary every part of autotune speaks, on the ground floor: it imports nothing of the package
but its errors. The runtime's configuration (autotune.runtime.config), the probe, tune, the race,
preflight and the emitters read it; kernels/cov_config.c is its C side.

- :data:`METRIC_TABLE`: every coverage metric in census-id order (kernels/cov_keys.h ``COV_METRICS``,
  cov.h's ``COV_M_*``): its index key, whether it needs the call stack, and the afl-cc
  instrumentation that gives it; :data:`METRICS`, :data:`GUARD`, :func:`afl_mode` over it.
- :data:`LAYOUTS`: what "map size" means for each map layout: the hash space, the dense slots, the
  slots afl-fuzz sees, the working set and memory per execution, the keys it loses, its variables.
- :data:`VARIABLES`: each AUTOTUNE_* variable kernels/cov_config.c reads (``cov_config_from_env``):
  its name, default, accepted values (in the C runtime's words) and the reason an env file gives
  for it; the names as constants (:data:`METRIC_VAR`, ...), so no other module spells them.
- Equation 1 of BigMap: the expected collision rate of ``n`` uniform keys in ``H`` slots, and its
  sampling error (:func:`collision_rate`, :func:`collision_rate_sd`).

tests/test_runtime_config_c.py runs the C runtime and checks these names, ranges, defaults and
messages against it, so Python and C cannot drift apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from autotune.errors import AutotuneError

# ---- the variables' names ------------------------------------------------------------------------

METRIC_VAR = "AUTOTUNE_METRIC"
LAYOUT_VAR = "AUTOTUNE_LAYOUT"
INDEX_SIZE_VAR = "AUTOTUNE_INDEX_SIZE"
MAP_SIZE_VAR = "AUTOTUNE_MAP_SIZE"
# kernels/cov_config.c MAP_SIZE_VALID, word for word
MAP_SIZE_VALID = "a power of two from 64 (2^6) to 2^30 (flat); a multiple of 64 in that range (twolevel)"
KEY_HASH_VAR = "AUTOTUNE_KEY_HASH"
INDEX_FILE_VAR = "AUTOTUNE_INDEX_FILE"
COUNTER_BITS_VAR = "AUTOTUNE_COUNTER_BITS"
OVERFLOW_VAR = "AUTOTUNE_OVERFLOW"
SEED_VAR = "AUTOTUNE_SEED"

# ---- coverage metrics ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """One coverage metric (docs/DESIGN.md "Keys, ids and metrics")."""

    name: str
    index_key: str  # under AUTOTUNE_KEY_HASH=exact: "mix64" of the exact key, its "fold", or "slot" (no hash)
    call_context: bool  # keyed by the call stack: needs the function hooks of a `full` build
    afl_instrument: str  # AFL_LLVM_INSTRUMENT of afl-cc (AFL++ 4.x) that gives the same metric
    afl_extra: tuple[tuple[str, str], ...] = ()  # further afl-cc variables it needs

    @property
    def hashed(self) -> bool:
        """Keys are hashed into a map whose size, layout and key hash are chosen (all but guard)."""
        return self.index_key != "slot"

    @property
    def sensitive(self) -> bool:
        """Feedback edges cannot give: an order of blocks (ngram-N) or the call stack (ctx, caller, ctx-K)."""
        return self.index_key == "fold" or self.call_context

    @property
    def variables(self) -> tuple[str, ...]:
        """The AUTOTUNE_* variables that apply to this metric, in env-file order."""
        if self.hashed:
            return tuple(VARIABLES)
        return (METRIC_VAR, COUNTER_BITS_VAR, OVERFLOW_VAR)


METRIC_TABLE: tuple[Metric, ...] = (
    Metric("edge", "mix64", False, "CLASSIC"),
    *(Metric(f"ngram-{n}", "fold", False, f"NGRAM-{n}") for n in range(2, 9)),
    Metric("ctx", "mix64", True, "CTX"),
    Metric("caller", "mix64", True, "CALLER"),
    *(Metric(f"ctx-{k}", "mix64", True, f"CTX-{k}") for k in (2, 4, 8)),
    # AFL++'s PCGUARD: one counter per SanitizerCoverage guard, slot = guard index g (slot 0 unused),
    # exact and collision-free; the map is the guard count + 1, so size, layout and key hash do not apply
    Metric("guard", "slot", False, "PCGUARD"),
)
METRIC_SPECS: dict[str, Metric] = {m.name: m for m in METRIC_TABLE}

# ---- map layouts ---------------------------------------------------------------------------------

# Size for this many times the keys the probe estimated (a campaign finds more): a two-level map's
# dense slots (dense_for_keys: at least 2^MIN_DENSE_POW2), and the keys the race sizes a hash space
# for and rules a configuration out by.
KEY_HEADROOM = 2.0
MIN_DENSE_POW2 = 10
INDEX_ENTRY_BYTES = 4  # a two-level index entry (bigmap.h: the dense slot + 1, 0 = unassigned)
INDEX_LINE_BYTES = 64  # a cache line of the index, touched once per key
# AFL++'s compile-time map (include/config.h MAP_SIZE_POW2): its CLASSIC/NGRAM/CTX instrumentation
# hashes into 2^16 slots, and afl-fuzz offers that map to a target that does not report its own
AFL_DEFAULT_MAP_POW2 = 16
AFL_DEFAULT_MAP_SLOTS = 1 << AFL_DEFAULT_MAP_POW2

# A dense map is rounded up to whole 4 KiB pages or to the next power of two, whichever is smaller:
# afl-fuzz resets, classifies and compares every byte of it after each execution (ctx-2 on libxml2:
# 2 x 41,275 keys is 86,016 bytes in pages, 131,072 as a power of two; what it buys is measured by
# benchmarks/results/plan-2026-12-02-inline-speed.md, amendment of 2026-12-03 19:35).
DENSE_PAGE_SLOTS = 4096


def dense_for_keys(keys: float) -> int:
    """The dense slots of a two-level map for ``keys`` estimated keys: KEY_HEADROOM x keys, rounded up
    to the smaller of the next power of two and the next multiple of DENSE_PAGE_SLOTS, at least
    2^MIN_DENSE_POW2 (not capped by an index)."""
    need = max(1 << MIN_DENSE_POW2, int(KEY_HEADROOM * keys + 0.999))
    return min(1 << (need - 1).bit_length(), -(-need // DENSE_PAGE_SLOTS) * DENSE_PAGE_SLOTS)


# afl-fuzz's fork-server handshake carries map sizes up to 2^23 (AFL++ 4.04c; kernels/aflfs.c
# AFLFS_MAX_MAPSIZE): the slots afl-fuzz sees must not exceed it
AFL_MAX_MAP_SLOTS = 1 << 23
# The hash spaces the race sizes its contestants in and its search proposes: AFL++'s map (2^16) ..
# 2^24 (tune's own search spans autotune.tune.defaults.DEFAULT_MAP_POW2)
RACE_MAP_POW2: tuple[int, int] = (AFL_DEFAULT_MAP_POW2, 24)


@dataclass(frozen=True)
class Layout:
    """A map layout. ``hash_slots`` H is the space keys are hashed into; ``dense_slots`` C the
    counters a two-level map hands out (None for flat); afl-fuzz sees ``afl_map_slots``."""

    name: str
    summary: str
    bm_code: int  # its kernels/bigmap.h bm_layout value (the runtime's layouts[] table and bench.c use it too)
    hash_var: str  # the variable that holds H
    size_vars: tuple[str, ...]  # its size variables, in env-file order
    index_file: bool  # AUTOTUNE_INDEX_FILE applies (a key->slot table shared across processes)

    def hash_slots(self, *, index_slots: int, map_slots: int) -> int:
        return map_slots if self.hash_var == MAP_SIZE_VAR else index_slots

    def runtime_sizes(self, *, hash_slots: int, dense_slots: int | None) -> tuple[int, int]:
        """(AUTOTUNE_INDEX_SIZE, AUTOTUNE_MAP_SIZE) of a map of ``hash_slots`` and ``dense_slots``."""
        raise NotImplementedError

    def dense_slots(self, *, hash_slots: int, estimated_keys: float) -> int | None:
        return None

    def dense_of(self, *, map_slots: int) -> int | None:
        """The dense slots of a configuration whose AUTOTUNE_MAP_SIZE is ``map_slots`` (None: no dense array)."""
        return None

    def afl_map_slots(self, *, hash_slots: int, dense_slots: int | None) -> int:
        """The slots afl-fuzz sees (AUTOTUNE_MAP_SIZE, AFL_MAP_SIZE)."""
        return self.runtime_sizes(hash_slots=hash_slots, dense_slots=dense_slots)[1]

    def dense_overflow_rate(self, *, dense_slots: int | None, n_keys: float) -> float:
        """Share of the keys beyond the dense slots (they all share the overflow slot)."""
        return 0.0

    def smallest_fit(self, *, keys: float, limit: float, pow2: tuple[int, int] | None = None,
                     dense_keys: float | None = None) -> tuple[int, int | None] | None:
        """(hash slots, dense slots) of the smallest hash space 2^k, k in ``pow2`` (default: every size
        the runtime accepts), that loses at most ``limit`` of ``keys`` (:meth:`lost_keys`), the dense
        array sized for ``dense_keys`` (default ``keys``); None when none does. The one sizing rule:
        preflight's fix, the race's sizes and the search's feasibility all ask it."""
        lo, hi = pow2 or HASH_SLOTS_POW2
        for k in range(lo, hi + 1):
            h = 1 << k
            dense = self.dense_slots(hash_slots=h, estimated_keys=keys if dense_keys is None else dense_keys)
            if self.lost_keys(hash_slots=h, dense_slots=dense, n_keys=keys) <= limit:
                return h, dense
        return None

    def lost_keys(self, *, hash_slots: int, dense_slots: int | None, n_keys: float) -> float:
        """Share of ``n_keys`` uniform keys the map cannot tell apart: collided in H (BigMap's
        Equation 1) or in the overflow slot."""
        c = collision_rate(H=hash_slots, n=max(0, int(round(n_keys))))
        return combine_lost(collision_rate=c, dense_overflow_rate=self.dense_overflow_rate(dense_slots=dense_slots,
                                                                                          n_keys=n_keys))

    def working_set_bytes(self, *, hash_slots: int, dense_slots: int | None, n_keys: float, width_bits: int) -> int:
        """Bytes the map work touches per execution (runtime + afl-fuzz's trace and virgin maps)."""
        raise NotImplementedError

    def memory_bytes(self, *, hash_slots: int, dense_slots: int | None, width_bits: int) -> int:
        """Memory the map takes per instance (counters, trace, index)."""
        raise NotImplementedError


def combine_lost(*, collision_rate: float, dense_overflow_rate: float) -> float:
    return 1.0 - (1.0 - collision_rate) * (1.0 - dense_overflow_rate)


def _trace_bytes(width_bits: int) -> int:
    """afl-fuzz's classified 8-bit trace, a copy only when the counters are wider."""
    return 1 if width_bits > 8 else 0


class FlatLayout(Layout):
    def runtime_sizes(self, *, hash_slots: int, dense_slots: int | None) -> tuple[int, int]:
        return int(VARIABLES[INDEX_SIZE_VAR].default_value), hash_slots

    def working_set_bytes(self, *, hash_slots: int, dense_slots: int | None, n_keys: float, width_bits: int) -> int:
        return hash_slots * (width_bits // 8 + _trace_bytes(width_bits) + 1)

    def memory_bytes(self, *, hash_slots: int, dense_slots: int | None, width_bits: int) -> int:
        return hash_slots * (width_bits // 8 + _trace_bytes(width_bits))


class TwoLevelLayout(Layout):
    def runtime_sizes(self, *, hash_slots: int, dense_slots: int | None) -> tuple[int, int]:
        return hash_slots, dense_slots or hash_slots

    def dense_slots(self, *, hash_slots: int, estimated_keys: float) -> int | None:
        """dense_for_keys(keys), never more than H."""
        return min(dense_for_keys(estimated_keys), hash_slots)

    def dense_of(self, *, map_slots: int) -> int | None:
        return map_slots

    def dense_overflow_rate(self, *, dense_slots: int | None, n_keys: float) -> float:
        if not dense_slots or n_keys <= 0:
            return 0.0
        return max(0.0, n_keys - dense_slots) / n_keys

    def working_set_bytes(self, *, hash_slots: int, dense_slots: int | None, n_keys: float, width_bits: int) -> int:
        c = dense_slots or hash_slots
        used = min(int(n_keys), c)
        index = min(INDEX_ENTRY_BYTES * hash_slots, INDEX_LINE_BYTES * int(n_keys))
        return 2 * c + used * (width_bits // 8) + index

    def memory_bytes(self, *, hash_slots: int, dense_slots: int | None, width_bits: int) -> int:
        c = dense_slots or hash_slots
        return c * (width_bits // 8 + _trace_bytes(width_bits)) + INDEX_ENTRY_BYTES * hash_slots


# ---- the variables -------------------------------------------------------------------------------


class RuntimeConfigError(AutotuneError):
    """A value the runtime refuses; the message is the one kernels/cov_config.c gives for it."""

    def __init__(self, variable: str, value: str, valid: str):
        super().__init__(f"{variable}='{value}' is not valid; valid values: {valid}", fix=f"set {variable} to {valid}")
        self.variable = variable
        self.value = value
        self.valid = valid


def parse_u64(text: str) -> int | None:
    """strtoull(text, &end, 0) as kernels/cov_config.c ``parse_u64`` uses it (decimal, 0x hex, 0 octal);
    None when the C runtime would refuse it."""
    if not text or text[0] in "-+ ":
        return None
    t = text.lower()
    try:
        if t.startswith("0x"):
            v = int(t[2:], 16) if t[2:] and t[2:].isalnum() else None
        elif t.startswith("0") and len(t) > 1:
            v = int(t[1:], 8)
        else:
            v = int(t, 10) if t.isdigit() else None
    except ValueError:
        return None
    return v if v is not None and v < 1 << 64 else None


@dataclass(frozen=True)
class Variable:
    """One AUTOTUNE_* variable as kernels/cov_config.c ``cov_config_from_env`` reads it."""

    name: str
    field: str  # the RuntimeConfig field
    default: str  # what an unset or empty variable means
    reason: str  # why an env file sets it (callers may give a more specific one)
    choices: tuple[str, ...] = ()  # the accepted names, in the C runtime's order
    pow2: tuple[int, int] | None = None  # a power of two from 2^lo to 2^hi
    valid_text: str = ""  # the C runtime's wording of the valid values, when not derived

    @property
    def valid(self) -> str:
        """The valid values, worded as the C runtime's error message words them."""
        if self.valid_text:
            return self.valid_text
        if self.pow2:
            lo, hi = self.pow2
            return f"a power of two from {1 << lo} (2^{lo}) to 2^{hi}"
        return ", ".join(self.choices)

    def parse(self, text: str) -> Any:
        """The field value of ``text`` (RuntimeConfigError when the runtime would refuse it)."""
        return _PARSERS[self.field](self, text)

    @property
    def default_value(self) -> Any:
        return self.parse(self.default) if self.default else None

    def check(self, value: Any) -> None:
        """RuntimeConfigError unless ``value`` (a field value) is one the runtime accepts."""
        if value is None and not self.default:
            return
        text = str(value)
        if self.parse(text) != value:
            raise RuntimeConfigError(self.name, text, self.valid)


def _choice(var: Variable, text: str) -> Any:
    if text not in var.choices:
        raise RuntimeConfigError(var.name, text, var.valid)
    return int(text) if var.field == "counter_bits" else text


def _size(var: Variable, text: str, *, multiple_of: int = 0) -> int:
    """A power of two in the variable's range; with ``multiple_of``, any multiple of it in that range."""
    v = parse_u64(text)
    lo, hi = var.pow2 or (0, 63)
    shaped = v is not None and (v % multiple_of == 0 if multiple_of else v & (v - 1) == 0)
    if not shaped or not (1 << lo) <= v <= (1 << hi):
        raise RuntimeConfigError(var.name, text, var.valid)
    return v


def _map_slots(var: Variable, text: str) -> int:
    """AUTOTUNE_MAP_SIZE alone: a multiple of 64 in its range (a flat map's power of two is checked
    with the layout: RuntimeConfig)."""
    return _size(var, text, multiple_of=64)


def _counter_bits(var: Variable, text: str) -> int:
    v = parse_u64(text)
    if v is None or str(v) not in var.choices:
        raise RuntimeConfigError(var.name, text, var.valid)
    return v


def _seed(var: Variable, text: str) -> int:
    v = parse_u64(text)
    if v is None:
        raise RuntimeConfigError(var.name, text, var.valid)
    return v


def _path(var: Variable, text: str) -> str | None:
    if len(text.encode()) >= 4096:
        raise RuntimeConfigError(var.name, "...", var.valid)
    return text or None


_PARSERS: dict[str, Callable[[Variable, str], Any]] = {
    "metric": _choice, "layout": _choice, "index_slots": _size, "map_slots": _map_slots, "key_hash": _choice,
    "index_file": _path, "counter_bits": _counter_bits, "overflow": _choice, "seed": _seed,
}

# In env-file order. Defaults, choices and ranges are kernels/cov_config.c cov_config_from_env's.
VARIABLES: dict[str, Variable] = {v.name: v for v in (
    Variable(METRIC_VAR, "metric", "edge", "the coverage metric", choices=tuple(METRIC_SPECS)),
    Variable(LAYOUT_VAR, "layout", "twolevel", "the map layout", choices=("flat", "twolevel")),
    Variable(INDEX_SIZE_VAR, "index_slots", str(1 << 24), "index slots of a two-level map (the hash space)",
             pow2=(10, 30)),
    Variable(MAP_SIZE_VAR, "map_slots", str(1 << 16),
             "slots afl-fuzz sees: a flat map's counters (the hash space), a two-level map's dense slots",
             pow2=(6, 30), valid_text=MAP_SIZE_VALID),
    Variable(KEY_HASH_VAR, "key_hash", "exact",
             "index key: mix64 of the exact key (ngram-N: its fold), uniform, so collisions follow Equation 1",
             choices=("exact", "afl")),
    Variable(INDEX_FILE_VAR, "index_file", "",
             "the key->slot table shared by every fork-server child, afl tool run and resumed campaign",
             valid_text="a path shorter than 4096 bytes"),
    Variable(COUNTER_BITS_VAR, "counter_bits", "8", "counter width in bits", choices=("8", "16", "32", "64")),
    Variable(OVERFLOW_VAR, "overflow", "neverzero", "what a counter does past its largest value",
             choices=("wrap", "neverzero", "saturate")),
    Variable(SEED_VAR, "seed", "0", "the block-id seed (keys match a census taken with the same seed)",
             valid_text="an unsigned 64-bit integer"),
)}

LAYOUTS: dict[str, Layout] = {
    "flat": FlatLayout("flat", "flat map: one counter per hash slot", bm_code=0, hash_var=MAP_SIZE_VAR,
                       size_vars=(MAP_SIZE_VAR,), index_file=False),
    "twolevel": TwoLevelLayout("twolevel", "two-level map: per-exec work covers only the used slots (BigMap, DSN 2021)",
                               bm_code=1, hash_var=INDEX_SIZE_VAR, size_vars=(INDEX_SIZE_VAR, MAP_SIZE_VAR),
                               index_file=True),
}
assert tuple(LAYOUTS) == VARIABLES[LAYOUT_VAR].choices
KEY_HASHES: tuple[str, ...] = VARIABLES[KEY_HASH_VAR].choices
"""Values of AUTOTUNE_KEY_HASH (the runtime map sink's index key), default first."""
COUNTER_WIDTHS: tuple[int, ...] = tuple(int(c) for c in VARIABLES[COUNTER_BITS_VAR].choices)
OVERFLOW_POLICIES: tuple[str, ...] = VARIABLES[OVERFLOW_VAR].choices


def hash_slots_pow2() -> tuple[int, int]:
    """The hash-space sizes every layout accepts, as (lo, hi) powers of two."""
    ranges = [VARIABLES[lay.hash_var].pow2 or (0, 63) for lay in LAYOUTS.values()]
    return max(r[0] for r in ranges), min(r[1] for r in ranges)


HASH_SLOTS_POW2: tuple[int, int] = hash_slots_pow2()


# ---- the metrics' names -------------------------------------------------------------------------

METRICS: tuple[str, ...] = tuple(m.name for m in METRIC_TABLE)
METRIC_ID = {name: i for i, name in enumerate(METRICS)}
CONTEXT_METRICS: tuple[str, ...] = tuple(m.name for m in METRIC_TABLE if m.call_context)
"""Metrics keyed by the call stack: they need the function hooks of a ``full`` build."""
GUARD = "guard"
"""AFL++'s PCGUARD: one counter per SanitizerCoverage guard (slot = guard index g, slot 0 unused),
exact and collision-free; the map is the guard count + 1, so map size, layout and key hash do not
apply."""
assert not METRIC_SPECS[GUARD].hashed


def has_map_size(metric: str) -> bool:
    """Whether ``metric``'s keys are hashed into a map whose size and layout are chosen (all but guard)."""
    spec = METRIC_SPECS.get(metric)
    return spec is None or spec.hashed


@dataclass(frozen=True)
class AflMode:
    """How AFL++'s afl-cc builds the same metric: AFL_LLVM_INSTRUMENT and its extra variables."""

    instrument: str
    extra: dict


def afl_mode(metric: str) -> AflMode:
    """The afl-cc settings (AFL++ 4.x) that give ``metric``: CLASSIC instrumentation and its
    variants, or (guard) AFL++'s default PCGUARD."""
    spec = METRIC_SPECS.get(metric)
    if spec is None:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    return AflMode(spec.afl_instrument, dict(spec.afl_extra))


# ---- Equation 1 ----------------------------------------------------------------------------------
# Equation 1 of BigMap (Ahmed et al., DSN 2021): the expected hash collision rate.
# 
# Draw ``n`` keys uniformly from ``H`` slots. A draw *collides* when its slot was already taken by
# an earlier draw, so the number of collisions is ``n - X`` where ``X`` is the number of occupied
# slots, and the collision rate is ``(n - X) / n``. Its expectation is Equation 1::
# 
#     CollisionRate(H, n) = 1 - (H / n) * (1 - ((H - 1) / H) ** n)
# 
# (the correct form, from bigmap-dsn21.txt section II-B; check: H = 65536, n = 40948 gives
# 25.64 %, sqlite3 in Table II). For the sampling error we also need the variance of ``X``, the
# classical occupancy variance (e.g. Johnson & Kotz, *Urn Models*, 1977)::
# 
#     Var[X] = H q1 (1 - q1) + H (H - 1) (q2 - q1^2),  q1 = (1 - 1/H)^n, q2 = (1 - 2/H)^n
# 
# computed in a cancellation-free form (``q2 / q1^2 = (1 - 1/(H-1)^2)^n``).


def _check(H: int, n: int) -> None:
    if H < 1:
        raise ValueError(f"map size H must be >= 1, got {H}")
    if n < 0:
        raise ValueError(f"number of keys n must be >= 0, got {n}")


def _q1(H: int, n: int) -> float:
    """(1 - 1/H)^n: the chance that a given slot stays empty after n draws."""
    return math.exp(n * math.log1p(-1.0 / H))


def expected_occupied(*, H: int, n: int) -> float:
    """E[X]: the expected number of distinct slots ``n`` uniform keys occupy in ``H`` slots."""
    _check(H, n)
    if H == 1:
        return 1.0 if n > 0 else 0.0
    return -H * math.expm1(n * math.log1p(-1.0 / H))


def collision_rate(*, H: int, n: int) -> float:
    """Equation 1: the expected share of the ``n`` keys whose slot was already taken (0..1)."""
    _check(H, n)
    if n == 0:
        return 0.0
    return 1.0 - expected_occupied(H=H, n=n) / n


def occupied_variance(*, H: int, n: int) -> float:
    """Var[X] of the number of occupied slots (uniform draws)."""
    _check(H, n)
    if H <= 2 or n == 0:
        if H == 1 or n == 0:
            return 0.0
        # H == 2: X is 1 with probability 2 * 2^-n, else 2
        p1 = 2.0 * 0.5 ** n
        return p1 * (1.0 - p1)
    q1 = _q1(H, n)
    ratio_m1 = math.expm1(n * math.log1p(-1.0 / (H - 1) ** 2))  # q2 / q1^2 - 1
    var = H * q1 * (1.0 - q1) + H * (H - 1) * q1 * q1 * ratio_m1
    return max(var, 0.0)


def collision_rate_sd(*, H: int, n: int) -> float:
    """Standard deviation of the empirical collision rate ``(n - X) / n`` under uniform draws."""
    if n == 0:
        return 0.0
    return math.sqrt(occupied_variance(H=H, n=n)) / n
