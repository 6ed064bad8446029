"""`autotune compare` end to end on the demo with the real afl-fuzz / afl-showmap / afl-clang-fast:
2 configurations x 1 trial x 5 s side by side; the census yardstick when afl-clang-fast is not on
PATH; the error when afl-fuzz is not."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.main import app
from autotune.compare import CompareResult
from autotune.llvm import compilers_text
from autotune.trials import host_cores
from autotune.vocabulary import dense_for_keys

pytestmark = pytest.mark.slow


def _cli(*args: str, env: dict | None = None):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "160", **(env or {})})


def _path_without(tmp_path: Path, drop: tuple[str, ...]) -> str:
    """A PATH holding every program of /usr/bin but those named (the process boundary: what is installed)."""
    d = tmp_path / "bin"
    d.mkdir()
    for p in Path("/usr/bin").iterdir():
        if p.name not in drop:
            os.symlink(p, d / p.name)
    return str(d)


def _check_curves(doc: dict) -> None:
    for c in doc["configs"]:
        for t in c["trials"]:
            y = t["yardstick"]
            edges = [e for _, e in y["curve"]]
            assert edges == sorted(edges) and edges[-1] == y["edges"] > 0
            assert y["kind"] == doc["yardstick"]["kind"]


def test_compare_demo_default_vs_runtime_edge(tmp_path):
    env_file = tmp_path / "edge.env"
    env_file.write_text("AUTOTUNE_METRIC=edge\nAUTOTUNE_LAYOUT=twolevel\nAUTOTUNE_INDEX_FILE=/nowhere/index.bin\n")
    out = tmp_path / "out"
    r = _cli("compare", "--demo", "--config", "default", "--config", f"edge={env_file}", "--trials", "1",
             "--fuzz-time", "5", "--jobs", "2", "--out", str(out), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc == json.loads((out / "compare.json").read_text())  # --json prints compare.json's content
    res = CompareResult.from_dict(doc)
    assert res.to_dict() == doc
    for f in ("compare.md", "coverage.png"):
        assert (out / f).stat().st_size > 0
    assert doc["yardstick"]["kind"] == "aflpp-pcguard"
    # one yardstick binary for both: the default configuration's own PCGUARD build
    assert doc["yardstick"]["binary"] == res.config("default").binary != res.config("edge").binary
    _check_curves(doc)
    edge = res.config("edge").trials[0]
    assert edge.applied_env["AUTOTUNE_INDEX_FILE"] == str(Path(edge.spec.out_dir) / "index.bin")
    assert Path(edge.applied_env["AUTOTUNE_INDEX_FILE"]).is_file()
    cores = {t.core for c in res.configs for t in c.trials}
    assert len(cores) == min(2, len(host_cores()))  # side by side, one core each
    assert all("relative_time" in t.plot.columns for c in res.configs for t in c.trials)
    assert {(p.a, p.b) for p in res.pairs} == {("default", "edge")}
    md = (out / "compare.md").read_text()
    assert "aflpp-pcguard" in md and "A12" in md and "Mann-Whitney" in md
    # the figures name the clang of both builds (afl-clang-fast's and autotune cc's)
    assert set(doc["compilers"]) == {"afl-clang-fast", "autotune cc"}
    assert all(v.startswith("clang ") for v in doc["compilers"].values())
    assert f"builds by {compilers_text(doc['compilers'])}" in md


def test_compare_without_afl_clang_fast_uses_the_census_yardstick(tmp_path):
    path = _path_without(tmp_path, ("afl-clang-fast", "afl-clang-fast++", "afl-cc", "afl-c++"))
    r = _cli("compare", "--demo", "--config", "runtime", "--trials", "1", "--fuzz-time", "2", "--jobs", "1",
             "--out", str(tmp_path / "out"), "--no-plot", env={"PATH": path})
    assert r.exit_code == 0, r.output
    assert "autotune-census-edge" in r.stdout and "afl-clang-fast was not found" in r.stdout
    doc = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert doc["yardstick"]["kind"] == "autotune-census-edge" and doc["yardstick"]["env"]["AUTOTUNE_METRIC"] == "edge"
    assert list(doc["compilers"]) == ["autotune cc"]
    _check_curves(doc)
    y = doc["configs"][0]["trials"][0]["yardstick"]
    assert y["index_keys"] >= y["edges"] and y["overflow_keys"] == 0
    # AFL++'s default build needs afl-clang-fast: named, with the package
    r = _cli("compare", "--demo", "--config", "default", "--trials", "1", "--fuzz-time", "1",
             "--out", str(tmp_path / "out2"), env={"PATH": path})
    assert r.exit_code == 1 and "'afl-clang-fast' was not found" in r.stderr and "afl++" in r.stderr


def test_compare_without_afl_fuzz_is_a_one_line_error(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _cli("compare", "--demo", "--trials", "1", "--fuzz-time", "1", "--out", str(tmp_path / "out"),
             env={"PATH": str(empty)})
    assert r.exit_code == 1
    assert "'afl-fuzz' was not found on PATH" in r.stderr and "apt-get install -y afl++" in r.stderr
    assert "Traceback" not in r.output and not (tmp_path / "out" / "compare.json").exists()


def test_yardstick_per_input_maps_equal_single_runs(tmp_path):
    """The yardstick's one afl-showmap over a directory (a map per input) counts what afl-showmap run
    on each file alone counts: the union of their slots (the demo's seeds, AFL++'s PCGUARD build)."""
    import subprocess

    from autotune import demo
    from autotune import afl
    from autotune.target import demo_spec
    from autotune.trials import KIND_PCGUARD, KeptInput, choose_yardstick, measure

    env = afl.base_env()
    y = choose_yardstick(spec=demo_spec(), env=env)
    assert y.kind == KIND_PCGUARD
    seeds = sorted(demo.seed_dir().iterdir())
    work = tmp_path / "w"
    work.mkdir()
    cov = measure(yardstick=y, inputs=[KeptInput(kind="queue", path=p, time_ms=0) for p in seeds], seconds=1,
                  work=work)
    union: set[int] = set()
    for i, p in enumerate(seeds):
        out = tmp_path / f"single-{i}"
        subprocess.run(["afl-showmap", "-q", "-o", str(out), "-t", "1000", "--", y.binary, str(p)],
                       env={**env, **afl.HOST_ENV}, capture_output=True, timeout=60, check=False)
        union |= {int(line.split(":")[0]) for line in out.read_text().split()}
    assert cov.edges == len(union) > 0 and cov.inputs == len(seeds) and cov.unreplayed == 0
    assert cov.curve[0][1] == cov.curve[-1][1] == cov.edges  # every seed is at time 0


def test_compare_resume_keeps_finished_trials_and_refuses_a_different_compare(tmp_path):
    """A stopped compare (here: one round of two done) finishes with --resume: the finished trials are
    kept as they were (trial.json and afl-out untouched), a trial stopped mid-way runs again, and
    compare.json holds every trial. A resume that asks something else (another --seed, another corpus)
    is an error naming what differs, and leaves the output as it was."""
    out = tmp_path / "out"
    base = ("compare", "--demo", "--config", "runtime", "--fuzz-time", "2", "--jobs", "1", "--no-plot", "--out", str(out))
    r = _cli(*base, "--trials", "1")
    assert r.exit_code == 0, r.output
    t0 = out / "trials" / "runtime" / "trial-0"
    first = (t0 / "trial.json").read_bytes()
    stamp = (t0 / "afl-out").stat().st_mtime_ns
    stopped = out / "trials" / "runtime" / "trial-1"  # a trial stopped before it wrote trial.json
    stopped.mkdir(parents=True)
    (stopped / "leftover").write_text("x")
    r = _cli(*base, "--trials", "2", "--resume")
    assert r.exit_code == 0, r.output
    assert "resuming: 1 of 2 trials finished, 1 to run" in r.stderr
    assert (t0 / "trial.json").read_bytes() == first and (t0 / "afl-out").stat().st_mtime_ns == stamp
    assert not (stopped / "leftover").exists() and (stopped / "trial.json").is_file()
    doc = json.loads((out / "compare.json").read_text())
    trials = doc["configs"][0]["trials"]
    assert [t["spec"]["index"] for t in trials] == [0, 1] and trials[0] == json.loads(first)
    assert any(n.startswith("resumed: 1 of 2 trials") for n in doc["notes"])
    _check_curves(doc)
    done = (out / "compare.json").read_bytes()
    r = _cli(*base, "--trials", "2", "--resume", "--seed", "5")
    assert r.exit_code == 1 and "rng_seed" in r.stderr and "--resume" in r.stderr and "Traceback" not in r.output
    other = tmp_path / "other-seeds"
    other.mkdir()
    (other / "a").write_bytes(b"not the demo's seeds")
    r = _cli(*base, "--trials", "2", "--resume", "--corpus", str(other))
    assert r.exit_code == 1 and "is not the one the stopped compare staged" in r.stderr
    assert (out / "compare.json").read_bytes() == done
    r = _cli("compare", "--remeasure", str(out), "--resume")
    assert r.exit_code == 1 and "drop one of them" in r.stderr


def test_a_dense_map_that_overflows_in_a_campaign_is_said_with_the_size_that_fits(tmp_path):
    """The runtime's own counters (the campaign's index file) are read after every trial: a dense map
    too small for the demo's edges (128 slots for its ~250) is named in the trial and the report, with
    the AUTOTUNE_MAP_SIZE that fits, never silently."""
    env_file = tmp_path / "small.env"
    env_file.write_text("AUTOTUNE_METRIC=edge\nAUTOTUNE_LAYOUT=twolevel\nAUTOTUNE_INDEX_SIZE=65536\n"
                        "AUTOTUNE_MAP_SIZE=128\nAUTOTUNE_INDEX_FILE=index.bin\n")
    out = tmp_path / "out"
    r = _cli("compare", "--demo", "--config", f"small={env_file}", "--trials", "1", "--fuzz-time", "5",
             "--jobs", "1", "--out", str(out), "--json", "--no-plot")
    assert r.exit_code == 0, r.output
    res = CompareResult.from_dict(json.loads(r.stdout))
    idx = res.config("small").trials[0].stats["index"]
    assert idx["dense_slots"] == 128 and idx["used_key"] == 128 and idx["overflow_keys"] > 0
    keys = idx["used_key"] + idx["overflow_keys"]
    assert f"AUTOTUNE_MAP_SIZE={dense_for_keys(keys)}" in idx["advice"]
    assert any("overflowed" in n and "AUTOTUNE_MAP_SIZE=" in n for n in res.notes)
    assert "overflowed" in (out / "compare.md").read_text()
