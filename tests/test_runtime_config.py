"""autotune.runtime.config without the C runtime: the configuration's checks, its variables and
their order, parsing them back, and what each layout says "map size" means.
(tests/test_runtime_config_c.py checks the same tables against the C runtime.)"""

from __future__ import annotations

import pytest

from autotune.errors import AutotuneError
from autotune.vocabulary import METRICS, afl_mode, has_map_size
from autotune.runtime.config import RuntimeConfig
from autotune.vocabulary import HASH_SLOTS_POW2, LAYOUTS, METRIC_TABLE, VARIABLES, RuntimeConfigError, parse_u64
from autotune.mappoint import MapPoint
from autotune.tune.space import SearchSpace, map_pow2_range


def test_a_two_level_configuration_sets_index_and_dense_slots():
    rc = MapPoint("ngram-4", "twolevel", 20, 16).runtime(dense=4096, seed=3, index_file="/tmp/i.bin")
    assert (rc.hash_slots, rc.dense_slots, rc.index_slots, rc.map_slots) == (1 << 20, 4096, 1 << 20, 4096)
    assert [v.name for v in rc.to_env()] == [
        "AUTOTUNE_METRIC", "AUTOTUNE_LAYOUT", "AUTOTUNE_INDEX_SIZE", "AUTOTUNE_MAP_SIZE", "AUTOTUNE_KEY_HASH",
        "AUTOTUNE_INDEX_FILE", "AUTOTUNE_COUNTER_BITS", "AUTOTUNE_OVERFLOW", "AUTOTUNE_SEED"]
    assert all(v.reason for v in rc.to_env())
    assert RuntimeConfig.from_env(rc.env_values()) == rc


def test_a_flat_configuration_has_one_size_and_no_index_file():
    rc = MapPoint("edge", "flat", 18, 8).runtime(dense=None, seed=0, index_file="/tmp/i.bin")
    env = rc.env_values()
    assert env["AUTOTUNE_MAP_SIZE"] == str(1 << 18) and "AUTOTUNE_INDEX_SIZE" not in env
    assert "AUTOTUNE_INDEX_FILE" not in env and rc.dense_slots is None and rc.hash_slots == 1 << 18
    assert RuntimeConfig.from_env(env) == rc


def test_guard_sets_only_what_applies():
    rc = MapPoint("guard", "flat", 16, 8).runtime(dense=None, seed=9)
    assert list(rc.env_values()) == ["AUTOTUNE_METRIC", "AUTOTUNE_COUNTER_BITS", "AUTOTUNE_OVERFLOW"]
    assert RuntimeConfig.from_env(rc.env_values()) == rc


def test_reasons_can_be_given_per_variable():
    rc = RuntimeConfig(metric="edge")
    env = {v.name: v.reason for v in rc.to_env(reasons={"AUTOTUNE_METRIC": "because"})}
    assert env["AUTOTUNE_METRIC"] == "because" and env["AUTOTUNE_SEED"] == VARIABLES["AUTOTUNE_SEED"].reason


@pytest.mark.parametrize("values, var", [
    ({"AUTOTUNE_METRIC": "ngram-9"}, "AUTOTUNE_METRIC"), ({"AUTOTUNE_LAYOUT": "exact"}, "AUTOTUNE_LAYOUT"),
    ({"AUTOTUNE_MAP_SIZE": "1000"}, "AUTOTUNE_MAP_SIZE"), ({"AUTOTUNE_MAP_SIZE": str(1 << 31)}, "AUTOTUNE_MAP_SIZE"),
    ({"AUTOTUNE_INDEX_SIZE": "512"}, "AUTOTUNE_INDEX_SIZE"), ({"AUTOTUNE_COUNTER_BITS": "12"}, "AUTOTUNE_COUNTER_BITS"),
    ({"AUTOTUNE_OVERFLOW": "clamp"}, "AUTOTUNE_OVERFLOW"), ({"AUTOTUNE_SEED": "-1"}, "AUTOTUNE_SEED"),
    ({"AUTOTUNE_KEY_HASH": "murmur"}, "AUTOTUNE_KEY_HASH"), ({"AUTOTUNE_INDEX_FILE": "x" * 4096}, "AUTOTUNE_INDEX_FILE"),
])
def test_a_bad_value_names_the_variable_and_the_valid_values(values, var):
    with pytest.raises(RuntimeConfigError) as e:
        RuntimeConfig.from_env(values)
    assert e.value.variable == var and "valid values: " in e.value.message and e.value.fix
    assert isinstance(e.value, AutotuneError)


def test_construction_checks_like_parsing():
    with pytest.raises(RuntimeConfigError):
        RuntimeConfig(map_slots=3)
    with pytest.raises(RuntimeConfigError):
        MapPoint("edge", "flat", 31, 8).runtime(dense=None, seed=0)
    assert RuntimeConfig.from_env({"AUTOTUNE_COUNTER_BITS": "0x10", "AUTOTUNE_SEED": ""}).counter_bits == 16


def test_parse_u64_is_strtoull_base_0():
    assert [parse_u64(s) for s in ("0", "12", "0x1F", "010", "18446744073709551615")] == [0, 12, 31, 8, (1 << 64) - 1]
    assert [parse_u64(s) for s in ("", "-1", "+1", " 1", "1e3", "08", "0x", "18446744073709551616")] == [None] * 8


def test_metric_registry_gives_names_afl_modes_and_map_size():
    assert METRICS == tuple(m.name for m in METRIC_TABLE) == VARIABLES["AUTOTUNE_METRIC"].choices
    assert [m for m in METRICS if not has_map_size(m)] == ["guard"]
    assert afl_mode("ngram-5").instrument == "NGRAM-5" and afl_mode("guard").instrument == "PCGUARD"


def test_layouts_say_what_map_size_means():
    flat, two = LAYOUTS["flat"], LAYOUTS["twolevel"]
    assert flat.dense_slots(hash_slots=1 << 20, estimated_keys=1000) is None
    assert two.dense_slots(hash_slots=1 << 20, estimated_keys=1000) == 2048
    assert two.dense_slots(hash_slots=1 << 10, estimated_keys=5000) == 1 << 10  # never more than the index
    assert flat.afl_map_slots(hash_slots=1 << 20, dense_slots=None) == 1 << 20
    assert two.afl_map_slots(hash_slots=1 << 20, dense_slots=2048) == 2048
    assert two.dense_overflow_rate(dense_slots=1000, n_keys=2000) == 0.5 and flat.dense_overflow_rate(
        dense_slots=None, n_keys=2000) == 0.0
    assert two.lost_keys(hash_slots=1 << 24, dense_slots=1000, n_keys=2000) == pytest.approx(0.5, abs=1e-3)
    assert flat.working_set_bytes(hash_slots=1 << 20, dense_slots=None, n_keys=10, width_bits=8) == 2 << 20


def test_the_map_size_range_is_checked_once():
    assert map_pow2_range(min_map_slots=1 << 13, max_map_slots=1 << 27) == (13, 27)
    for lo, hi, msg in ((1000, 1 << 16, "power of two"), (1 << 16, 1 << 13, "larger than"),
                        (1 << (HASH_SLOTS_POW2[0] - 1), 1 << 16, "outside"), (1 << 16, 1 << (HASH_SLOTS_POW2[1] + 1), "outside")):
        with pytest.raises(AutotuneError, match=msg):
            map_pow2_range(min_map_slots=lo, max_map_slots=hi)
    with pytest.raises(AutotuneError, match="outside"):
        SearchSpace(map_pow2=(8, 12))


def test_a_dense_map_is_rounded_to_pages_or_a_power_of_two_whichever_is_smaller():
    """afl-fuzz scans every dense byte after each execution: 2 x 41,275 keys (ctx-2 on libxml2) take 21
    pages (86,016 slots), not the next power of two (131,072); small maps keep their power of two."""
    from autotune.vocabulary import dense_for_keys
    assert [dense_for_keys(k) for k in (0, 100, 1000, 2500, 10_000, 41_275)] == [1024, 1024, 2048, 8192, 20480, 86016]
    two = LAYOUTS["twolevel"]
    assert two.dense_slots(hash_slots=1 << 16, estimated_keys=41_275) == 65536  # never more than the index
    rc = RuntimeConfig.sized(metric="ctx-2", layout="twolevel", hash_slots=1 << 21, dense_slots=86016, counter_bits=8)
    assert rc.env_values()["AUTOTUNE_MAP_SIZE"] == "86016" and RuntimeConfig.from_env(rc.env_values()) == rc
    with pytest.raises(RuntimeConfigError, match="a power of two from 64"):
        RuntimeConfig(metric="edge", layout="flat", map_slots=86016)
    RuntimeConfig(metric="guard", layout="flat", map_slots=65536)  # guard sizes its own map
