"""One configuration of the C runtime (:class:`RuntimeConfig`, frozen, validated): ``to_env()`` gives
its variables with their reasons, ``from_env()`` parses them as kernels/cov_config.c does, with its
messages. The variables, metrics and layouts it is made of are autotune.vocabulary's."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

from autotune.vocabulary import (
    LAYOUTS, METRIC_SPECS, VARIABLES, Layout, Metric, RuntimeConfigError, Variable, METRIC_VAR, LAYOUT_VAR, INDEX_SIZE_VAR, MAP_SIZE_VAR, INDEX_FILE_VAR,
)

_BY_FIELD: dict[str, Variable] = {v.field: v for v in VARIABLES.values()}


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
        # a flat map's size is its hash space (key & (size - 1)); guard sizes its own map
        if self.layout == "flat" and self.metric_spec.hashed and self.map_slots & (self.map_slots - 1):
            var = VARIABLES[MAP_SIZE_VAR]
            raise RuntimeConfigError(var.name, str(self.map_slots), var.valid)

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
            if name in (INDEX_SIZE_VAR, MAP_SIZE_VAR) and name not in lay.size_vars:
                continue
            if name == INDEX_FILE_VAR and not (lay.index_file and self.index_file):
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
        raise RuntimeConfigError(METRIC_VAR, name, VARIABLES[METRIC_VAR].valid)
    return METRIC_SPECS[name]


def _layout(name: str) -> Layout:
    if name not in LAYOUTS:
        raise RuntimeConfigError(LAYOUT_VAR, name, VARIABLES[LAYOUT_VAR].valid)
    return LAYOUTS[name]
