"""The llvm-cov yardstick (autotune.trials.llvmcov): the coverage build and its replay count the
branches one counts by hand on tests/programs/branches.c (over time, by the inputs' time stamps);
crashing, hanging, exiting and self-killed inputs in a batch do not lose the others' coverage; a
missing llvm-profdata/llvm-cov is named with its package; `autotune compare --remeasure` measures
a finished compare again without touching it."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.main import app
from autotune.errors import AutotuneError
from autotune import afl
from autotune.target import TargetSpec
from autotune.trials import KIND_LLVMCOV, KeptInput, choose_yardstick, measure
from autotune.trials.llvmcov.measure import slice_index
from autotune.trials.llvmcov.tools import find_llvm_tools
from autotune.trials.coverage import curve_times

PROGRAMS = Path(__file__).resolve().parent / "programs"
BRANCHES_TOTAL = 26  # tests/programs/branches.c's header


def _cli(*args: str, env: dict | None = None):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "160", **(env or {})})


@pytest.fixture(scope="module")
def branches_yardstick():
    spec = TargetSpec(kind="sources", sources=(str(PROGRAMS / "branches.c"),), cflags="-O2")
    return choose_yardstick(spec=spec, env=afl.base_env(), choice="llvm-cov")


def _inputs(tmp_path: Path, items: list[tuple[bytes, int | None]]) -> list[KeptInput]:
    d = tmp_path / "in"
    d.mkdir(exist_ok=True)
    out = []
    for i, (data, t) in enumerate(items):
        p = d / f"id:{i:06d},time:{t}"
        p.write_bytes(data)
        out.append(KeptInput(kind="queue", path=p, time_ms=t))
    return out


def test_slices_follow_the_curve_points():
    times = curve_times(1.0, 10)
    assert [slice_index(t, times) for t in (0, 1, 100, 101, 999, 1000, 1001, None)] == [0, 1, 1, 2, 10, 10, 10, 10]


@pytest.mark.slow
def test_branches_counted_by_hand(branches_yardstick, tmp_path):
    y = branches_yardstick
    assert y.kind == KIND_LLVMCOV and y.unit == "branches" and Path(y.binary).is_file()
    record = json.loads(Path(y.binary + ".build.json").read_text())
    assert record["cc_kind"] == "llvm-cov"
    assert {"-fprofile-instr-generate", "-fcoverage-mapping",
            "-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION=1"} <= set(record["argv"])
    # "a" at 0 s: !initialized F, size == 0 F, 'a' T, 'b' F, size > 1 F          -> 5
    # "bb" at 0.5 s: 'a' F, 'b' T, size > 1 T (of 'b' &&), size > 1 T, '!' F     -> 10
    # "c!" late: '!' T, stop's default T and the five cases' F                  -> 17
    ins = _inputs(tmp_path, [(b"a", 0), (b"bb", 500), (b"c!", 5000)])
    cov = measure(yardstick=y, inputs=ins, seconds=1, work=tmp_path / "w")
    assert cov.edges == 17 and cov.inputs == 3 and cov.unreplayed == 0 and cov.late_inputs == 1
    assert [e for _, e in cov.curve] == [5] * 5 + [10] * 5 + [17]
    totals = cov.llvm_cov["totals"]
    assert totals["branches"] == {"covered": 17, "count": BRANCHES_TOTAL}
    assert totals["functions"] == {"covered": 3, "count": 3}  # Initialize, TestOneInput, stop
    assert cov.llvm_cov["processes"] == 3 and cov.llvm_cov["stopped_batches"] == 0  # one batch per slice
    assert Path(cov.llvm_cov["profile"]).is_file()


@pytest.mark.slow
def test_stopping_inputs_keep_the_others_coverage(branches_yardstick, tmp_path):
    """One batch: a segfault, an abort, a hang (300 ms timeout), an exit(3) and a SIGKILL between
    ordinary inputs. Covered: everything but the 'K' case's taken side (its run leaves no profile)
    and 'b' with one byte (no input): 26 - 4 = 22; the SIGKILL input is the one lost."""
    y = replace(branches_yardstick, timeout_ms=300)
    ins = _inputs(tmp_path, [(b"a", 0), (b"S!", 0), (b"bb", 0), (b"A!", 0), (b"H!", 0), (b"E!", 0), (b"K!", 0),
                             (b"c!", 0)])
    cov = measure(yardstick=y, inputs=ins, seconds=1, work=tmp_path / "w")
    # not covered: !initialized T, size == 0 T, size > 1 F (of 'b' &&), 'K' taken
    assert cov.edges == BRANCHES_TOTAL - 4 == 22
    assert cov.unreplayed == 1 and cov.llvm_cov["lost_inputs"] == ["queue/id:000006,time:0"]
    assert cov.llvm_cov["stopped_batches"] >= 5
    assert [e for _, e in cov.curve] == [22] * 11


@pytest.mark.parametrize("cc", ["clang", "gcc"])
def test_replay_main_is_warning_free(cc, tmp_path):
    import shutil
    import subprocess

    from autotune.trials.llvmcov.build import MAIN_FLAGS, REPLAY_MAIN

    if shutil.which(cc) is None:
        pytest.skip(f"{cc} is not installed")
    proc = subprocess.run([cc, *MAIN_FLAGS, "-Werror", "-c", str(REPLAY_MAIN), "-o", str(tmp_path / "m.o")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_missing_llvm_tools_name_the_package(tmp_path):
    """clang 14 on PATH (a stand-in answering --version) with no llvm-profdata/llvm-cov beside it,
    and those of another release (13) further on PATH: refused, naming llvm-14."""
    bin_dir, other = tmp_path / "bin", tmp_path / "llvm13"
    for d, name, text in ((bin_dir, "clang", "Debian clang version 14.0.6"),
                          (bin_dir, "clang++", "Debian clang version 14.0.6"),
                          (other, "llvm-profdata", "Debian LLVM version 13.0.1"),
                          (other, "llvm-cov", "Debian LLVM version 13.0.1")):
        d.mkdir(exist_ok=True)
        p = d / name
        p.write_text(f"#!/bin/sh\necho '{text}'\n")
        p.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{other}"
    with pytest.raises(AutotuneError) as err:
        find_llvm_tools({"PATH": path})
    assert "'llvm-profdata' of LLVM 14" in err.value.message and err.value.fix == "install it: apt-get install -y llvm-14"
    versioned = bin_dir / "llvm-profdata-14"
    versioned.write_text("#!/bin/sh\necho 'Debian LLVM version 14.0.6'\n")
    versioned.chmod(0o755)
    with pytest.raises(AutotuneError) as err:
        find_llvm_tools({"PATH": path})
    assert "'llvm-cov' of LLVM 14" in err.value.message and "llvm-14" in err.value.fix


def test_real_llvm_tools_match_clang():
    tools = find_llvm_tools(afl.base_env())
    for t in (tools.profdata, tools.cov):
        assert Path(t).is_file() and os.access(t, os.X_OK)
    assert tools.major >= 14


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file() and not p.is_symlink():
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.mark.slow
def test_remeasure_a_finished_compare(tmp_path):
    """A real 2 s compare of the demo (pcguard), re-measured by llvm-cov into another directory
    (the source untouched), then that result re-measured by pcguard: the source's edges again."""
    src = tmp_path / "cmp"
    r = _cli("compare", "--demo", "--config", "default", "--config", "runtime", "--trials", "1", "--fuzz-time", "2",
             "--jobs", "2", "--out", str(src), "--no-plot")
    assert r.exit_code == 0, r.output
    before = _tree_digest(src)
    old = json.loads((src / "compare.json").read_text())

    r = _cli("compare", "--remeasure", str(src), "--yardstick", "llvm-cov", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    out = tmp_path / "cmp-llvm-cov"  # the default --out
    assert doc == json.loads((out / "compare.json").read_text())
    assert _tree_digest(src) == before
    assert doc["yardstick"]["kind"] == "llvm-cov-branches" and doc["yardstick"]["unit"] == "branches"
    assert doc["remeasure"]["from"] == str(src.resolve())
    assert doc["remeasure"]["yardstick"] == old["yardstick"] and doc["remeasure"]["pairs"] == old["pairs"]
    for c_new, c_old in zip(doc["configs"], old["configs"]):
        for t_new, t_old in zip(c_new["trials"], c_old["trials"]):
            assert t_new["stats"] == t_old["stats"] and t_new["spec"] == t_old["spec"]
            y = t_new["yardstick"]
            assert y["kind"] == "llvm-cov-branches" and y["inputs"] == sum(t_old["kept"].values())
            assert y["curve"][-1][1] == y["edges"] == y["llvm_cov"]["totals"]["branches"]["covered"] > 0
            assert (out / "trials" / c_new["config"]["name"] / f"trial-{t_new['spec']['index']}"
                    / "trial.json").is_file()
    measures = {p["measure"] for p in doc["pairs"]}
    assert measures == {"yardstick_edges", "llvm_cov_regions", "llvm_cov_lines", "mean_edges", "execs_per_s"}
    md = (out / "compare.md").read_text()
    assert "Re-measured: aflpp-pcguard (campaign's yardstick) beside llvm-cov-branches" in md
    assert "| yardstick branches |" in md and "## llvm-cov totals" in md

    back = tmp_path / "back"
    r = _cli("compare", "--remeasure", str(out), "--yardstick", "pcguard", "--out", str(back), "--no-plot")
    assert r.exit_code == 0, r.output
    again = json.loads((back / "compare.json").read_text())
    assert [[t["yardstick"]["edges"] for t in c["trials"]] for c in again["configs"]] == \
        [[t["yardstick"]["edges"] for t in c["trials"]] for c in old["configs"]]

    r = _cli("compare", "--remeasure", str(src), "--yardstick", "llvm-cov", "--out", str(src / "sub"))
    assert r.exit_code == 1 and "only read" in r.stderr and not (src / "sub").exists()
    r = _cli("compare", "--remeasure", str(tmp_path / "nothing"), "--yardstick", "llvm-cov")
    assert r.exit_code == 1 and "holds no compare.json" in r.stderr
