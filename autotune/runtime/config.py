"""The runtime's configuration contract, written once: the AUTOTUNE_* variables kernels/cov_config.c reads
(``cov_config_from_env``), and the registries of coverage metrics and map layouts.

- :data:`VARIABLES`: each variable's name, default, accepted values (in the C runtime's words) and
  the reason an env file gives for it.
- :data:`METRIC_TABLE`: every coverage metric in census-id order (kernels/cov_keys.h ``COV_METRICS``, cov.h's ``COV_M_*``): its
  index key, whether it needs the call stack, and the afl-cc instrumentation that gives it.
- :data:`LAYOUTS`: what "map size" means for each map layout: the hash space, the dense slots, the
  slots afl-fuzz sees, the working set and memory per execution, the keys it loses, its variables.
- :class:`RuntimeConfig`: one configuration (frozen, validated); ``to_env()`` gives its variables
  with their reasons, ``from_env()`` parses them as the C runtime does, with its messages.

tests/test_runtime_config_c.py runs the C runtime and checks these names, ranges, defaults and
messages against it, so Python and C cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping

from autotune.errors import AutotuneError

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
    def variables(self) -> tuple[str, ...]:
        """The AUTOTUNE_* variables that apply to this metric, in env-file order."""
        if self.hashed:
            return tuple(VARIABLES)
        return ("AUTOTUNE_METRIC", "AUTOTUNE_COUNTER_BITS", "AUTOTUNE_OVERFLOW")


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
# dense slots (rounded up to a power of two, at least 2^MIN_DENSE_POW2), and the keys the race sizes
# a hash space for and rules a configuration out by.
KEY_HEADROOM = 2.0
MIN_DENSE_POW2 = 10
INDEX_ENTRY_BYTES = 4  # a two-level index entry (bigmap.h: the dense slot + 1, 0 = unassigned)
INDEX_LINE_BYTES = 64  # a cache line of the index, touched once per key
# AFL++'s compile-time map (include/config.h MAP_SIZE_POW2): its CLASSIC/NGRAM/CTX instrumentation
# hashes into 2^16 slots, and afl-fuzz offers that map to a target that does not report its own
AFL_DEFAULT_MAP_POW2 = 16
AFL_DEFAULT_MAP_SLOTS = 1 << AFL_DEFAULT_MAP_POW2
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
        return map_slots if self.hash_var == "AUTOTUNE_MAP_SIZE" else index_slots

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
        from autotune.probe.equation1 import collision_rate  # probe's package imports this module

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
        return int(VARIABLES["AUTOTUNE_INDEX_SIZE"].default_value), hash_slots

    def working_set_bytes(self, *, hash_slots: int, dense_slots: int | None, n_keys: float, width_bits: int) -> int:
        return hash_slots * (width_bits // 8 + _trace_bytes(width_bits) + 1)

    def memory_bytes(self, *, hash_slots: int, dense_slots: int | None, width_bits: int) -> int:
        return hash_slots * (width_bits // 8 + _trace_bytes(width_bits))


class TwoLevelLayout(Layout):
    def runtime_sizes(self, *, hash_slots: int, dense_slots: int | None) -> tuple[int, int]:
        return hash_slots, dense_slots or hash_slots

    def dense_slots(self, *, hash_slots: int, estimated_keys: float) -> int | None:
        """Next power of two >= KEY_HEADROOM x keys, within [2^MIN_DENSE_POW2, H]."""
        need = max(1, int(KEY_HEADROOM * estimated_keys + 0.999))
        return min(1 << max(MIN_DENSE_POW2, (need - 1).bit_length()), hash_slots)

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


def _size(var: Variable, text: str) -> int:
    v = parse_u64(text)
    lo, hi = var.pow2 or (0, 63)
    if v is None or v & (v - 1) or not (1 << lo) <= v <= (1 << hi):
        raise RuntimeConfigError(var.name, text, var.valid)
    return v


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
    "metric": _choice, "layout": _choice, "index_slots": _size, "map_slots": _size, "key_hash": _choice,
    "index_file": _path, "counter_bits": _counter_bits, "overflow": _choice, "seed": _seed,
}

# In env-file order. Defaults, choices and ranges are kernels/cov_config.c cov_config_from_env's.
VARIABLES: dict[str, Variable] = {v.name: v for v in (
    Variable("AUTOTUNE_METRIC", "metric", "edge", "the coverage metric", choices=tuple(METRIC_SPECS)),
    Variable("AUTOTUNE_LAYOUT", "layout", "twolevel", "the map layout", choices=("flat", "twolevel")),
    Variable("AUTOTUNE_INDEX_SIZE", "index_slots", str(1 << 24), "index slots of a two-level map (the hash space)",
             pow2=(10, 30)),
    Variable("AUTOTUNE_MAP_SIZE", "map_slots", str(1 << 16),
             "slots afl-fuzz sees: a flat map's counters (the hash space), a two-level map's dense slots",
             pow2=(6, 30)),
    Variable("AUTOTUNE_KEY_HASH", "key_hash", "exact",
             "index key: mix64 of the exact key (ngram-N: its fold), uniform, so collisions follow Equation 1",
             choices=("exact", "afl")),
    Variable("AUTOTUNE_INDEX_FILE", "index_file", "",
             "the key->slot table shared by every fork-server child, afl tool run and resumed campaign",
             valid_text="a path shorter than 4096 bytes"),
    Variable("AUTOTUNE_COUNTER_BITS", "counter_bits", "8", "counter width in bits", choices=("8", "16", "32", "64")),
    Variable("AUTOTUNE_OVERFLOW", "overflow", "neverzero", "what a counter does past its largest value",
             choices=("wrap", "neverzero", "saturate")),
    Variable("AUTOTUNE_SEED", "seed", "0", "the block-id seed (keys match a census taken with the same seed)",
             valid_text="an unsigned 64-bit integer"),
)}
_BY_FIELD = {v.field: v for v in VARIABLES.values()}

LAYOUTS: dict[str, Layout] = {
    "flat": FlatLayout("flat", "flat map: one counter per hash slot", bm_code=0, hash_var="AUTOTUNE_MAP_SIZE",
                       size_vars=("AUTOTUNE_MAP_SIZE",), index_file=False),
    "twolevel": TwoLevelLayout("twolevel", "two-level map: per-exec work covers only the used slots (BigMap, DSN 2021)",
                               bm_code=1, hash_var="AUTOTUNE_INDEX_SIZE", size_vars=("AUTOTUNE_INDEX_SIZE", "AUTOTUNE_MAP_SIZE"),
                               index_file=True),
}
assert tuple(LAYOUTS) == VARIABLES["AUTOTUNE_LAYOUT"].choices
KEY_HASHES: tuple[str, ...] = VARIABLES["AUTOTUNE_KEY_HASH"].choices
"""Values of AUTOTUNE_KEY_HASH (the runtime map sink's index key), default first."""
COUNTER_WIDTHS: tuple[int, ...] = tuple(int(c) for c in VARIABLES["AUTOTUNE_COUNTER_BITS"].choices)
OVERFLOW_POLICIES: tuple[str, ...] = VARIABLES["AUTOTUNE_OVERFLOW"].choices


def hash_slots_pow2() -> tuple[int, int]:
    """The hash-space sizes every layout accepts, as (lo, hi) powers of two."""
    ranges = [VARIABLES[lay.hash_var].pow2 or (0, 63) for lay in LAYOUTS.values()]
    return max(r[0] for r in ranges), min(r[1] for r in ranges)


HASH_SLOTS_POW2: tuple[int, int] = hash_slots_pow2()


def _default(field_name: str) -> Any:
    return _BY_FIELD[field_name].default_value


@dataclass(frozen=True)
class EnvVar:
    """One line of an env file: ``NAME=value`` after a comment giving its reason."""

    name: str
    value: str
    reason: str


@dataclass(frozen=True)
class RuntimeConfig:
    """One configuration of the runtime; construction checks every value as the runtime does.

    ``map_slots`` is AUTOTUNE_MAP_SIZE, the slots afl-fuzz sees (flat: the counters and the hash
    space; two-level: the dense slots), ``index_slots`` AUTOTUNE_INDEX_SIZE (two-level: the hash
    space; unused by flat). For guard only the metric, counter width and overflow policy apply
    (the runtime sizes its map to the target's guard count)."""

    metric: str = _default("metric")
    layout: str = _default("layout")
    index_slots: int = _default("index_slots")
    map_slots: int = _default("map_slots")
    key_hash: str = _default("key_hash")
    index_file: str | None = _default("index_file")
    counter_bits: int = _default("counter_bits")
    overflow: str = _default("overflow")
    seed: int = _default("seed")

    def __post_init__(self) -> None:
        for f in fields(self):
            _BY_FIELD[f.name].check(getattr(self, f.name))

    @classmethod
    def sized(cls, *, metric: str, layout: str, hash_slots: int, dense_slots: int | None = None,
              counter_bits: int, overflow: str = _default("overflow"), key_hash: str = _default("key_hash"),
              seed: int = _default("seed"), index_file: str | None = None) -> "RuntimeConfig":
        """The configuration of a map of ``hash_slots`` (and ``dense_slots``); for a metric with no
        map size (guard) the variables that do not apply keep their defaults."""
        spec = _metric(metric)
        if not spec.hashed:
            return cls(metric=metric, counter_bits=counter_bits, overflow=overflow)
        lay = _layout(layout)
        index_slots, map_slots = lay.runtime_sizes(hash_slots=hash_slots, dense_slots=dense_slots)
        return cls(metric=metric, layout=layout, index_slots=index_slots, map_slots=map_slots, key_hash=key_hash,
                   index_file=index_file if lay.index_file else None, counter_bits=counter_bits, overflow=overflow,
                   seed=seed)

    @property
    def metric_spec(self) -> Metric:
        return METRIC_SPECS[self.metric]

    @property
    def layout_spec(self) -> Layout:
        return LAYOUTS[self.layout]

    @property
    def hash_slots(self) -> int:
        """Slots keys are hashed into: the flat map, or the two-level index."""
        return self.layout_spec.hash_slots(index_slots=self.index_slots, map_slots=self.map_slots)

    @property
    def dense_slots(self) -> int | None:
        """A two-level map's dense slots (None for flat)."""
        return self.layout_spec.dense_of(map_slots=self.map_slots)

    def variables(self) -> tuple[str, ...]:
        """The variables this configuration sets, in env-file order."""
        lay = self.layout_spec
        out = []
        for name in self.metric_spec.variables:
            if name in ("AUTOTUNE_INDEX_SIZE", "AUTOTUNE_MAP_SIZE") and name not in lay.size_vars:
                continue
            if name == "AUTOTUNE_INDEX_FILE" and not (lay.index_file and self.index_file):
                continue
            out.append(name)
        return tuple(out)

    def to_env(self, *, reasons: Mapping[str, str] | None = None) -> list[EnvVar]:
        """Each variable this configuration sets, its value and its reason (``reasons`` overrides
        the generic ones per variable)."""
        given = reasons or {}
        return [EnvVar(name, str(getattr(self, VARIABLES[name].field)), given.get(name, VARIABLES[name].reason))
                for name in self.variables()]

    def env_values(self) -> dict[str, str]:
        return {v.name: v.value for v in self.to_env()}

    @classmethod
    def from_env(cls, values: Mapping[str, str]) -> "RuntimeConfig":
        """Parse AUTOTUNE_* values as kernels/cov_config.c does: unset or empty takes the default, a bad
        value raises RuntimeConfigError with the runtime's own message. Other names are ignored."""
        kw = {}
        for var in VARIABLES.values():
            text = values.get(var.name, "")
            kw[var.field] = var.parse(text) if text else var.default_value
        return cls(**kw)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _metric(name: str) -> Metric:
    if name not in METRIC_SPECS:
        raise RuntimeConfigError("AUTOTUNE_METRIC", name, VARIABLES["AUTOTUNE_METRIC"].valid)
    return METRIC_SPECS[name]


def _layout(name: str) -> Layout:
    if name not in LAYOUTS:
        raise RuntimeConfigError("AUTOTUNE_LAYOUT", name, VARIABLES["AUTOTUNE_LAYOUT"].valid)
    return LAYOUTS[name]
