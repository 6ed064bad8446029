"""Python and C cannot drift: autotune.runtime.config's registry (variables, metrics, layouts)
against the C runtime itself.

Sturdier than reading C source text: the runtime reports what it accepts. A harness built with
`autotune cc` runs in the driver's replay mode (kernels/driver.c): with no AUTOTUNE_* variable it
prints its effective configuration (the defaults); a refused value makes cov_config_from_env print
"VAR='value' is not valid; valid values: ..." built from its own name tables (cov_config.c bad_choice),
so the Python wording must equal it; each name Python registers must be accepted and echoed
back. Two facts the replay mode cannot report (the fork server's largest map and the variables
cov_config_from_env reads) are read from the C source."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from autotune.runtime import binding
from autotune.runtime.config import RuntimeConfig
from autotune.vocabulary import AFL_MAX_MAP_SLOTS, LAYOUTS, METRIC_TABLE, VARIABLES
from autotune.target import demo_harness

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
# what the driver's JSON line calls each variable
JSON_NAME = {"AUTOTUNE_METRIC": "metric", "AUTOTUNE_LAYOUT": "layout", "AUTOTUNE_INDEX_SIZE": "index_size",
             "AUTOTUNE_MAP_SIZE": "map_size", "AUTOTUNE_KEY_HASH": "key_hash", "AUTOTUNE_COUNTER_BITS": "counter_bits",
             "AUTOTUNE_OVERFLOW": "overflow", "AUTOTUNE_SEED": "seed"}
# small maps, so that a run costs little whatever is being checked
SMALL = {"AUTOTUNE_INDEX_SIZE": str(1 << 12), "AUTOTUNE_MAP_SIZE": str(1 << 10)}


@pytest.fixture(scope="module")
def harness():
    return demo_harness()


@pytest.fixture(scope="module")
def one_input(tmp_path_factory):
    p = tmp_path_factory.mktemp("rc") / "x"
    p.write_bytes(b"x")
    return p


def replay(harness, one_input, **variables) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AUTOTUNE_", "__AFL"))}
    env.update(AUTOTUNE_REPLAY_ROUNDS="1", **variables)
    return subprocess.run([str(harness), str(one_input)], capture_output=True, text=True, timeout=60, env=env)


def reported(p: subprocess.CompletedProcess) -> dict:
    assert p.returncode == 0, p.stderr
    return json.loads(next(ln for ln in reversed(p.stdout.splitlines()) if ln.startswith("{")))


def test_defaults_are_the_runtimes(harness, one_input):
    doc = reported(replay(harness, one_input))
    want = RuntimeConfig()
    for name, key in JSON_NAME.items():
        assert str(doc[key]) == str(getattr(want, VARIABLES[name].field)), name


@pytest.mark.parametrize("name", [n for n in VARIABLES if n != "AUTOTUNE_INDEX_FILE"])
def test_a_refused_value_gets_the_runtimes_message(harness, one_input, name):
    bad = "0x1000000000000000000" if name == "AUTOTUNE_SEED" else "12345"
    p = replay(harness, one_input, **{name: bad})
    assert p.returncode == 2
    c_message = p.stderr.strip().removeprefix("autotune driver: ")
    with pytest.raises(Exception) as e:
        RuntimeConfig.from_env({name: bad})
    assert e.value.message == c_message  # the same variable, value and valid values, word for word


def test_every_registered_name_is_accepted(harness, one_input):
    for name, var in VARIABLES.items():
        for choice in var.choices:
            doc = reported(replay(harness, one_input, **{**SMALL, name: choice}))
            if name == "AUTOTUNE_METRIC" and not RuntimeConfig(metric=choice).metric_spec.hashed:
                assert doc["metric"] == choice  # guard: the runtime sizes its map itself
            else:
                assert str(doc[JSON_NAME[name]]) == choice, (name, choice)
    assert tuple(m.name for m in METRIC_TABLE) == VARIABLES["AUTOTUNE_METRIC"].choices
    assert tuple(LAYOUTS) == VARIABLES["AUTOTUNE_LAYOUT"].choices


@pytest.mark.parametrize("name", ["AUTOTUNE_INDEX_SIZE", "AUTOTUNE_MAP_SIZE"])
def test_size_ranges_are_the_runtimes(harness, one_input, name):
    lo, hi = VARIABLES[name].pow2
    # the smallest is accepted (hi is not run: a 2^30 map is large), one below and one above are not
    doc = reported(replay(harness, one_input, **{**SMALL, "AUTOTUNE_LAYOUT": "twolevel", name: str(1 << lo)}))
    assert doc[JSON_NAME[name]] == 1 << lo
    for refused in (1 << (lo - 1), 1 << (hi + 1)):
        p = replay(harness, one_input, **{name: str(refused)})
        assert p.returncode == 2 and f"{name}='{refused}'" in p.stderr
        with pytest.raises(Exception):
            RuntimeConfig.from_env({name: str(refused)})
    RuntimeConfig.from_env({name: str(1 << hi)})  # Python accepts the top, the C message names it


def test_a_dense_map_takes_any_multiple_of_64_a_flat_one_a_power_of_two(harness, one_input):
    """AUTOTUNE_MAP_SIZE=12288 (three 4 KiB pages): a two-level map's dense slots, accepted by the C
    runtime and Python alike; as a flat map's hash space refused by both, with the same message."""
    doc = reported(replay(harness, one_input, AUTOTUNE_LAYOUT="twolevel", AUTOTUNE_INDEX_SIZE=str(1 << 16),
                          AUTOTUNE_MAP_SIZE="12288"))
    assert (doc["layout"], doc["map_size"]) == ("twolevel", 12288)
    assert RuntimeConfig.from_env({"AUTOTUNE_LAYOUT": "twolevel", "AUTOTUNE_MAP_SIZE": "12288"}).dense_slots == 12288
    p = replay(harness, one_input, AUTOTUNE_LAYOUT="flat", AUTOTUNE_MAP_SIZE="12288")
    assert p.returncode == 2
    with pytest.raises(Exception) as e:
        RuntimeConfig.from_env({"AUTOTUNE_LAYOUT": "flat", "AUTOTUNE_MAP_SIZE": "12288"})
    assert e.value.message == p.stderr.strip().removeprefix("autotune driver: ")
    for refused in ("12300", "32"):  # not a multiple of 64; below 64
        assert replay(harness, one_input, AUTOTUNE_MAP_SIZE=refused).returncode == 2
        with pytest.raises(Exception):
            RuntimeConfig.from_env({"AUTOTUNE_MAP_SIZE": refused})


def test_a_configuration_round_trips_through_the_runtime(harness, one_input):
    rc = RuntimeConfig.sized(metric="ngram-3", layout="twolevel", hash_slots=1 << 14, dense_slots=1 << 11,
                             counter_bits=16, overflow="saturate", key_hash="afl", seed=77)
    doc = reported(replay(harness, one_input, **rc.env_values()))
    assert {n: str(doc[k]) for n, k in JSON_NAME.items()} == {n: str(getattr(rc, VARIABLES[n].field))
                                                              for n in JSON_NAME}


def test_what_the_c_source_says_and_the_runtime_cannot_report():
    src = (KERNELS / "cov_config.c").read_text()
    body = src[src.index("int cov_config_from_env("):src.index("void cov_config_to_bm(")]
    read = set(re.findall(r'getenv\("(AUTOTUNE_[A-Z_]+)"\)', body))
    assert read - {"AUTOTUNE_HOOKS"} == set(VARIABLES)  # AUTOTUNE_HOOKS: a C-only switch for comparisons
    header = (KERNELS / "bigmap.h").read_text()
    enum = dict(re.findall(r"BM_([A-Z]+) = (\d+)", header))
    assert {n: lay.bm_code for n, lay in LAYOUTS.items()} == {n: int(enum[n.upper()]) for n in LAYOUTS}
    # the ctypes binding names every bm_layout (the kernels-only exact layout too) and bm_policy
    for table, typedef in ((binding.LAYOUTS, "bm_layout"), (binding.POLICIES, "bm_policy")):
        body = re.search(r"typedef enum \{([^}]*)\} " + typedef + ";", header)
        assert body, typedef
        assert table == {n.lower(): int(v) for n, v in re.findall(r"BM_([A-Z]+) = (\d+)", body.group(1))}
    m = re.search(r"#define AFLFS_MAX_MAPSIZE \((\d+)u << (\d+)\)", (KERNELS / "aflfs.h").read_text())
    assert m and int(m.group(1)) << int(m.group(2)) == AFL_MAX_MAP_SLOTS


def test_the_ngram_window_is_sized_alike_in_the_pass_and_the_runtime():
    """The pass declares autotune_ngram_hist with kWindowAt + kNgramMax words; the runtime defines it
    with COV_NGRAM_HIST_WORDS: a smaller definition would let the pass write past it."""
    plugin = (KERNELS / "plugin" / "autotune_edges.cpp").read_text()
    consts = {k: int(v) for k, v in re.findall(r"constexpr unsigned (kWindowAt|kNgramMax) = (\d+);", plugin)}
    assert re.search(r"kHistWords = kWindowAt \+ kNgramMax;", plugin)
    m = re.search(r"#define COV_NGRAM_HIST_WORDS (\d+)", (KERNELS / "cov_internal.h").read_text())
    assert m and int(m.group(1)) == consts["kWindowAt"] + consts["kNgramMax"]
