"""autotune.trials and autotune.compare without afl-fuzz: plot_data and queue names as afl-fuzz
4.04c writes them, the coverage curve, the trial environment, --config parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from autotune.compare.config import parse_config, parse_configs
from autotune.errors import AutotuneError
from autotune.trials import coverage_curve, kept_inputs, read_plot_data, trial_env
from autotune.afl_output import time_of

PLOT_4_04C = """# relative_time, cycles_done, cur_item, corpus_count, pending_total, pending_favs, map_size, saved_crashes, saved_hangs, max_depth, execs_per_sec, total_execs, edges_found
3, 0, 3, 157, 152, 36, 80.08%, 0, 1, 4, 39934.45, 78214, 189
8, 1, 9, 170, 100, 20, 81.00%, 1, 1, 5, 40000.00, 278214, 195
"""


def test_plot_data_columns_come_from_the_header(tmp_path):
    p = tmp_path / "plot_data"
    p.write_text(PLOT_4_04C)
    pd = read_plot_data(p)
    assert pd.columns[0] == "relative_time" and pd.columns[-1] == "edges_found"
    assert pd.column("edges_found") == [189, 195] and pd.column("map_size") == [80.08, 81.0]
    # another column order is read as it is
    p.write_text("# edges_found, relative_time\n5, 1\n")
    assert read_plot_data(p).column("relative_time") == [1.0]
    p.write_text("1, 2\n")
    with pytest.raises(AutotuneError, match="header"):
        read_plot_data(p)


def test_kept_inputs_and_their_times(tmp_path):
    inst = tmp_path / "default"
    for d, names in {"queue": ["id:000000,time:0,execs:0,orig:seed", "id:000001,src:000000,time:1234,execs:9,op:havoc"],
                     "crashes": ["id:000000,sig:06,src:000001,time:2500,execs:99,op:havoc,rep:2", "README.txt"],
                     "hangs": []}.items():
        (inst / d).mkdir(parents=True)
        for n in names:
            (inst / d / n).write_bytes(b"x")
    (inst / "queue" / ".state").mkdir()
    got = [(k.kind, k.time_ms) for k in kept_inputs(tmp_path)]
    assert got == [("queue", 0), ("queue", 1234), ("crashes", 2500)]
    assert time_of("id:000001,src:000000,execs:9") is None and time_of("id:1,time:7") == 7


def test_coverage_curve_is_the_union_up_to_each_point():
    per_input = [(0, frozenset({1, 2})), (1500, frozenset({2, 3})), (4000, frozenset({4})),
                 (10_500, frozenset({5})), (None, frozenset({6}))]
    curve, final, late = coverage_curve(slots_by_time=per_input, seconds=10, points=5)
    assert curve == ((0.0, 2), (2.0, 3), (4.0, 4), (6.0, 4), (8.0, 4), (10.0, 6))
    assert final == 6 and late == 2  # the last point takes the late inputs too: it ends at the final figure


def test_trial_env_keeps_the_callers_afl_variables_out_and_moves_the_index_file(tmp_path):
    caller = {"PATH": "/usr/bin", "AFL_LLVM_INSTRUMENT": "CLASSIC", "AUTOTUNE_METRIC": "ctx", "AFL_NO_UI": "0"}
    env, applied = trial_env(config_env={"AUTOTUNE_METRIC": "edge", "AUTOTUNE_INDEX_FILE": "/elsewhere/idx"},
                             trial_dir=tmp_path, caller_env=caller)
    assert env["AUTOTUNE_METRIC"] == "edge" and "AFL_LLVM_INSTRUMENT" not in env
    assert env["AFL_NO_UI"] == "1" and env["AFL_NO_AFFINITY"] == "1" and env["PATH"] == "/usr/bin"
    assert env["AUTOTUNE_INDEX_FILE"] == applied["AUTOTUNE_INDEX_FILE"] == str(tmp_path / "index.bin")


def test_config_specs(tmp_path):
    assert parse_config("default").cc_kind == "afl" and parse_config("runtime").cc_kind == "autotune"
    tune = tmp_path / "tune"
    tune.mkdir()
    (tune / "autotune-run.env").write_text("AUTOTUNE_METRIC=ngram-4\nAUTOTUNE_INDEX_FILE=/x/idx\n")
    (tune / "afl-build.env").write_text("AFL_LLVM_INSTRUMENT=NGRAM-4\n")
    (tune / "afl-run.env").write_text("AFL_MAP_SIZE=65536\n")
    c = parse_config(str(tune / "autotune-run.env"))
    assert (c.name, c.cc_kind, c.run_vars["AUTOTUNE_METRIC"]) == ("tune/autotune-run", "autotune", "ngram-4")
    assert c.build_vars == {}
    # the build kind: from an autotune-build.env beside the run file (the race writes one) ...
    race = tmp_path / "race"
    race.mkdir()
    (race / "autotune-run.env").write_text("AUTOTUNE_METRIC=guard\n")
    (race / "autotune-build.env").write_text("# build kind\nAUTOTUNE_CC_INSTRUMENT=guard\n")
    c = parse_config(str(race / "autotune-run.env"))
    assert (c.build_vars, c.run_vars) == ({"AUTOTUNE_CC_INSTRUMENT": "guard"}, {"AUTOTUNE_METRIC": "guard"})
    assert c.files == (str(race / "autotune-build.env"), str(race / "autotune-run.env"))
    # ... or from the file itself, which wins
    (race / "both.env").write_text("AUTOTUNE_METRIC=edge\nAUTOTUNE_CC_INSTRUMENT=blocks\n")
    c = parse_config(str(race / "both.env"))
    assert (c.build_vars, c.run_vars) == ({"AUTOTUNE_CC_INSTRUMENT": "blocks"}, {"AUTOTUNE_METRIC": "edge"})
    # every compile-time variable of the wrapper is a build variable (the ngram kind needs its N)
    (race / "ngram.env").write_text("AUTOTUNE_METRIC=ngram-8\nAUTOTUNE_CC_INSTRUMENT=ngram\nAUTOTUNE_CC_NGRAM=8\n")
    c = parse_config(str(race / "ngram.env"))
    assert (c.build_vars, c.run_vars) == ({"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "8"},
                                          {"AUTOTUNE_METRIC": "ngram-8"})
    (race / "nb.env").write_text("AUTOTUNE_METRIC=ngram-4\n")
    (race / "autotune-build.env").write_text("AUTOTUNE_CC_INSTRUMENT=ngram\nAUTOTUNE_CC_NGRAM=4\n")
    c = parse_config(str(race / "nb.env"))
    assert c.build_vars == {"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "4"}
    # the race's pair given as BUILD+RUN: the autotune cc build, not afl-clang-fast
    c = parse_config(f"{race / 'autotune-build.env'}+{race / 'autotune-run.env'}")
    assert (c.name, c.cc_kind, c.build_vars, c.run_vars) == (
        "race/autotune-run", "autotune", {"AUTOTUNE_CC_INSTRUMENT": "ngram", "AUTOTUNE_CC_NGRAM": "4"},
        {"AUTOTUNE_METRIC": "guard"})
    with pytest.raises(AutotuneError, match="AFL_LLVM_INSTRUMENT"):
        parse_config(f"{tune / 'afl-build.env'}+{race / 'autotune-run.env'}")
    c = parse_config(f"ng4={tune / 'afl-build.env'}")
    assert (c.name, c.cc_kind, c.build_vars, c.run_vars) == ("ng4", "afl", {"AFL_LLVM_INSTRUMENT": "NGRAM-4"},
                                                             {"AFL_MAP_SIZE": "65536"})
    c = parse_config(f"{tune / 'afl-build.env'}+{tune / 'afl-run.env'}")
    assert c.build_vars == {"AFL_LLVM_INSTRUMENT": "NGRAM-4"} and len(c.files) == 2
    c = parse_config(str(tune / "afl-run.env"))
    assert (c.cc_kind, c.build_vars, c.run_vars) == ("afl", {}, {"AFL_MAP_SIZE": "65536"})
    assert type(c).from_dict(c.to_compare_dict()) == c
    with pytest.raises(AutotuneError, match="not a file"):
        parse_config(str(tmp_path / "missing.env"))
    with pytest.raises(AutotuneError, match="named 'default'"):
        parse_configs(["default", "default"])


def test_a_trial_whose_afl_fuzz_fails_stops_the_runner_with_its_output(tmp_path):
    """A fake afl-fuzz on PATH (the process boundary) that aborts as afl-fuzz does."""
    from autotune.trials import TrialSpec, run_trials

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "afl-fuzz"
    fake.write_text("#!/bin/sh\necho '[-] PROGRAM ABORT : no seeds here' >&2\nexit 1\n")
    fake.chmod(0o755)
    specs = [TrialSpec(config=c, index=0, binary="/bin/true", env={}, seeds=str(tmp_path), seconds=1, rng_seed=0,
                       out_dir=str(tmp_path / c)) for c in ("a", "b", "c")]
    with pytest.raises(AutotuneError, match="PROGRAM ABORT : no seeds here") as exc:
        run_trials(specs=specs, yardstick=None, jobs=2, cores=[0, 1], caller_env={"PATH": str(bin_dir)})
    assert "did not run" in exc.value.message and "afl-fuzz -i" not in exc.value.message
    assert not (tmp_path / "c").exists()  # no new trial after the first failure


def test_contribution_counts_own_finds_first_and_alone():

    from autotune.afl_output import KeptInput
    from autotune.trials.yardstick import contribution

    def k(inst, name, t):
        return KeptInput(kind="queue", path=Path(f"/x/{inst}/queue/{name}"), time_ms=t, instance=inst)

    inputs = [k("main", "id:000000,time:0,execs:0,orig:seed", 0),  # a seed: nobody's find
              k("main", "id:000001,src:000000,time:50,execs:9,op:havoc", 50),
              k("s1", "id:000000,time:0,execs:0,orig:seed", 0),
              k("s1", "id:000001,src:000000,time:20,execs:9,op:havoc", 20),
              k("s1", "id:000002,sync:main,src:000001", 60)]  # imported from main: not s1's find
    slots = [frozenset({1, 2}), frozenset({2, 3, 4}), frozenset({1, 2}), frozenset({3, 5}), frozenset({2, 3, 4})]
    by = contribution(inputs, slots)
    assert by == {"main": {"edges": 3, "first": 2, "only": 2}, "s1": {"edges": 2, "first": 2, "only": 1}}
    assert contribution(inputs[:2], slots[:2]) is None  # one instance: nothing to split


def test_trial_stats_keeps_numbers_and_text():
    from autotune.trials.trial import trial_stats

    st = trial_stats({"execs_per_sec": "1234.50", "execs_done": "99", "corpus_count": "x", "stability": "100.00%",
                      "afl_version": "++4.04c"})
    assert st["execs_per_sec"] == 1234.5 and st["execs_done"] == 99 and st["corpus_count"] is None
    assert st["edges_found"] is None and st["stability"] == "100.00%" and st["afl_version"] == "++4.04c"
    assert st["bitmap_cvg"] is None


def test_every_campaign_figure_names_the_aflpp_version_that_ran_it():
    from autotune.race.core import TrialFigures
    from autotune.trials import aflpp_versions

    assert aflpp_versions([{"afl_version": "++4.04c"}, {"afl_version": "++4.04c"}]) == "AFL++ 4.04c"
    assert aflpp_versions([{"afl_version": "++4.22a"}, {"afl_version": "++4.04c"}, {}]) == "AFL++ 4.04c, 4.22a"
    assert aflpp_versions([{"afl_version": None}]) == "AFL++ (version not recorded)"
    t = TrialFigures(contestant="guard", rung=0, repeat=0, seconds=28, coverage=100, execs_per_s=1.0, queue=3,
                     afl_version="++4.04c")
    assert TrialFigures.from_dict(t.to_dict()) == t
    old = {k: v for k, v in t.to_dict().items() if k != "afl_version"}  # a race.json from before
    assert TrialFigures.from_dict(old).afl_version is None
