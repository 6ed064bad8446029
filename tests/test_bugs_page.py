"""The canary page (autotune.bugs.page): its size against canary.h's struct, reading, and replay of
inputs through a real clang build of a harness with two canaries (tests/programs/canary_harness.c)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from autotune.bugs import page
from autotune.errors import AutotuneError, DocumentError
from autotune.paths import kernels_dir

PROGRAMS = Path(__file__).parent / "programs"
needs_clang = pytest.mark.skipif(shutil.which("clang") is None, reason="clang is not installed")


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    """canary_harness.c built by clang with libFuzzer's own driver (file arguments run once each)."""
    if shutil.which("clang") is None:
        pytest.skip("clang is not installed")
    out = tmp_path_factory.mktemp("canary") / "harness"
    subprocess.run(["clang", "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-fsanitize=fuzzer",
                    f"-I{kernels_dir()}", str(PROGRAMS / "canary_harness.c"), "-o", str(out)], check=True)
    return out


def _inputs(tmp_path: Path, **named: bytes) -> list[Path]:
    paths = []
    for name, data in named.items():
        p = tmp_path / name
        p.write_bytes(data)
        paths.append(p)
    return paths


def test_page_size_is_the_c_struct(harness, tmp_path):
    (probe,) = _inputs(tmp_path, size=b"size00")
    proc = subprocess.run([str(harness), str(probe)], capture_output=True, text=True, check=True)
    assert int(proc.stdout.split()[0]) == page.CANARY_BYTES


def test_make_page_is_zeroed_and_reads_empty(tmp_path):
    p = tmp_path / "sub" / "page"
    page.make_page(p)
    assert p.read_bytes() == bytes(page.CANARY_BYTES)
    assert page.read_page(p) == {}


def _page_bytes(entries: list[tuple[str, int, int]], *, magic: int = page.MAGIC, version: int = page.VERSION) -> bytes:
    buf = bytearray(page.CANARY_BYTES)
    struct.pack_into("<IIII", buf, 0, magic, version, page.MAX_ENTRIES, 0)
    for i, (name, reached, triggered) in enumerate(entries):
        struct.pack_into("<24sQQ", buf, 48 + 40 * i, name.encode(), reached, triggered)
    return bytes(buf)


def test_read_page_entries(tmp_path):
    p = tmp_path / "page"
    p.write_bytes(_page_bytes([("PNG003", 7, 0), ("TIF007", 3, 2)]))
    assert page.read_page(p) == {"PNG003": page.BugCount(7, 0), "TIF007": page.BugCount(3, 2)}


@pytest.mark.parametrize("data, words", [
    (_page_bytes([], magic=0x12345678), "not a canary page"),
    (_page_bytes([], version=2), "version 2"),
    (b"\0" * 100, "100 bytes"),
])
def test_read_page_rejects_what_is_not_a_page(tmp_path, data, words):
    p = tmp_path / "page"
    p.write_bytes(data)
    with pytest.raises(DocumentError, match=words) as info:
        page.read_page(p)
    assert info.value.fix


def test_read_page_missing_file(tmp_path):
    with pytest.raises(DocumentError, match="cannot read"):
        page.read_page(tmp_path / "nope")


@needs_clang
def test_replay_attributes_each_input(harness, tmp_path):
    ins = _inputs(tmp_path, a=b"Ax", az=b"AZ", b=b"Bxy", b4=b"Bxyz", none=b"zzz")
    got = page.replay(harness, ins)
    assert [g.path for g in got] == ins
    assert [(sorted(g.reached), sorted(g.triggered)) for g in got] == [
        (["BUG001"], []), (["BUG001"], ["BUG001"]), (["BUG002"], []), (["BUG002"], ["BUG002"]), ([], [])]
    assert not any(g.crashed or g.timed_out for g in got)
    # two at a time: the same answer in the same order
    assert page.replay(harness, ins, jobs=2) == got


@needs_clang
def test_replay_ignores_the_callers_fatal_setting(harness, tmp_path):
    (az,) = _inputs(tmp_path, az=b"AZ")
    (res,) = page.replay(harness, [az], env={"PATH": "/usr/bin:/bin", "AUTOTUNE_CANARY_FATAL": "1"})
    assert res.triggered == {"BUG001"} and not res.crashed


@needs_clang
def test_fatal_mode_aborts_with_the_name(harness, tmp_path):
    """canary.h's campaign mode, which replay turns off: a trigger prints its name and aborts."""
    (az,) = _inputs(tmp_path, az=b"AZ")
    proc = subprocess.run([str(harness), str(az)], env={"AUTOTUNE_CANARY_FATAL": "1"}, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "autotune-canary: triggered BUG001" in proc.stderr


@needs_clang
def test_has_canaries(harness, tmp_path):
    assert page.has_canaries(harness)
    plain = tmp_path / "plain.c"
    plain.write_text("int main(void) { return 0; }\n")
    subprocess.run(["clang", str(plain), "-o", str(tmp_path / "plain")], check=True)
    assert not page.has_canaries(tmp_path / "plain")


def test_replay_missing_binary(tmp_path):
    with pytest.raises(AutotuneError, match="does not exist"):
        page.replay(tmp_path / "nope", [])


@needs_clang
def test_cli_replay_json_equals_the_api(harness, tmp_path):
    from typer.testing import CliRunner

    from autotune.cli.main import app

    ins = _inputs(tmp_path, a=b"Ax", az=b"AZ", b4=b"Bxyz")
    res = CliRunner().invoke(app, ["bugs", "replay", "--binary", str(harness), *map(str, ins), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {"binary": str(harness),
                                      "inputs": [r.to_dict() for r in page.replay(harness, ins)]}
    table = CliRunner().invoke(app, ["bugs", "replay", "--binary", str(harness), *map(str, ins)])
    assert table.exit_code == 0
    assert "BUG001" in table.stdout and "BUG002" in table.stdout


@needs_clang
def test_replay_takes_paths_relative_to_the_callers_directory(harness, tmp_path, monkeypatch):
    """The harness runs in a scratch directory: relative input paths are the caller's."""
    _inputs(tmp_path, az=b"AZ")
    monkeypatch.chdir(tmp_path)
    (res,) = page.replay(harness, [Path("az")])
    assert res.triggered == {"BUG001"} and res.path == Path("az")


# --- sweep: many inputs to a process, split where a batch shows something new ---------------------

def _mixed(tmp_path: Path, n: int = 120) -> list[Path]:
    """n inputs in "time order", most reaching no bug, a few reaching or triggering each, one crash."""
    import random

    rng = random.Random(5)
    special = {17: b"Bq", 18: b"Ax", 40: b"AZ", 41: b"Bxyz", 77: b"Ayy", 90: b"crash", 91: b"AZZ", 119: b"Bxyz"}
    data = {i: special.get(i, bytes([rng.choice(b"xyz")]) * rng.randint(1, 6)) for i in range(n)}
    return _inputs(tmp_path, **{f"in{i:03d}": d for i, d in data.items()})


def _expected(every: list[page.InputBugs]) -> dict[int, set[str]]:
    """What a sweep must hold, from a replay of every input: each trigger, and each bug's first reach."""
    need: dict[int, set[str]] = {i: set() for i, r in enumerate(every) if r.triggered}
    first: dict[str, int] = {}
    for i, r in enumerate(every):
        for b in r.reached:
            first.setdefault(b, i)
    for b, i in first.items():
        need.setdefault(i, set()).add(b)
    return need


@needs_clang
@pytest.mark.parametrize("batch", [1, 4, 64])
def test_sweep_finds_what_a_replay_of_every_input_finds(harness, tmp_path, batch):
    ins = _mixed(tmp_path)
    every = page.replay(harness, ins)
    stats = page.SweepStats()
    got = page.sweep(harness, ins, alone=[3], batch=batch, stats=stats)
    for i in _expected(every):
        assert got.get(i) == every[i], i
    assert got[3] == every[3]  # run on its own whatever it reached
    assert all(got[i] == every[i] for i in got)  # every replay it keeps is a single input's
    assert 90 not in got  # the crash reached no bug: a batch around it ran one input a process
    if batch == 64:
        assert stats.processes < len(ins) / 2  # far fewer processes than inputs
    else:
        assert stats.processes >= len(ins) / batch


@needs_clang
def test_sweep_of_a_binary_that_reads_one_file_runs_one_input_a_process(tmp_path):
    """A harness with its own main reading only argv[1] must not be given many inputs a process."""
    src = tmp_path / "one.c"
    src.write_text('#include <stdio.h>\n#include "canary.h"\n'
                   'int main(int argc, char **argv) { FILE *f = fopen(argv[1], "rb"); if (!f) return 1;\n'
                   '  int c = fgetc(f); fclose(f); if (c == \'A\') AUTOTUNE_BUG(ONE001, 0); return 0; }\n')
    binary = tmp_path / "one"
    subprocess.run(["clang", "-std=c11", f"-I{kernels_dir()}", str(src), "-o", str(binary)], check=True)
    assert not page.runs_every_argument(binary)
    ins = _inputs(tmp_path, a=b"x", b=b"y", c=b"A")
    stats = page.SweepStats()
    got = page.sweep(binary, ins, stats=stats)
    assert list(got) == [2] and got[2].reached == {"ONE001"}
    assert stats.processes == stats.single == 3


@needs_clang
def test_sweep_runs_a_batch_that_timed_out_one_input_a_process(harness, tmp_path):
    ins = _inputs(tmp_path, a=b"xx", h=b"hang", az=b"AZ", b=b"Bq")
    stats = page.SweepStats()
    got = page.sweep(harness, ins, timeout_s=0.3, batch=4, stats=stats)
    assert sorted(got) == [2, 3]
    assert got[2].triggered == {"BUG001"} and got[3].reached == {"BUG002"}
    assert stats.processes == 1 + 4  # the batch, then each input on its own


def _stateful(tmp_path: Path, name: str, state: str, body: str) -> Path:
    """A libFuzzer harness with a global ``state`` that its ``body`` (inputs ``d``, ``n``) keeps
    between inputs, built by clang with libFuzzer's driver."""
    src = tmp_path / f"{name}.c"
    src.write_text('#include <stddef.h>\n#include <stdint.h>\n#include "canary.h"\n'
                   f"{state}\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) {{\n  {body}\n  return 0;\n}}\n")
    binary = tmp_path / name
    subprocess.run(["clang", "-std=c11", "-fsanitize=fuzzer", f"-I{kernels_dir()}", str(src), "-o", str(binary)],
                   check=True)
    return binary


@needs_clang
def test_sweep_names_bugs_only_a_batch_reached(tmp_path):
    """A harness that keeps state between inputs breaks the sweep's rule: the bug its second input
    reaches in a batch is reached by no input on its own; the sweep attributes it to none and says so."""
    binary = _stateful(tmp_path, "stateful", "static int runs;",
                       "(void)d; (void)n; if (++runs == 2) AUTOTUNE_BUG(STATE01, 0);")
    ins = _inputs(tmp_path, a=b"1", b=b"2")
    stats = page.SweepStats()
    assert page.sweep(binary, ins, stats=stats) == {}
    assert stats.unexplained == {"STATE01"}
    clean = page.SweepStats()
    page.sweep(binary, ins, batch=1, stats=clean)
    assert clean.unexplained == set()
    # a trial's document names them, and so does the bug report
    from autotune.bugs.attribution import TrialBugs, attribute_trial
    from autotune.bugs.survival import report_notes
    from autotune.afl_output import KeptInput

    tb = attribute_trial(binary=binary, kept=[KeptInput("queue", p, 1000 * k) for k, p in enumerate(ins)], seconds=10)
    assert tb.bugs == {} and tb.unexplained == ("STATE01",)
    assert TrialBugs.from_dict(tb.to_dict()) == tb
    assert any("STATE01" in n and "stateless" in n for n in report_notes(trials={"x": [tb]}, bugs=[], tests=[],
                                                                         horizon_s=10))


# --- replay_check: a recorded trial's sweep against a replay of every input on its own -------------

def _kept(ins: list[Path], crash_at: int | None = None) -> list:
    from autotune.afl_output import KeptInput

    return [KeptInput("crashes" if k == crash_at else "queue", p, 1000 * k) for k, p in enumerate(ins)]


@needs_clang
def test_replay_check_agrees_with_the_sweep_of_a_stateless_harness(harness, tmp_path):
    from autotune.bugs.attribution import attribute_trial, replay_check

    ins = _inputs(tmp_path, a=b"xx", b=b"Bq", c=b"Ax", d=b"crash", e=b"AZ", f=b"zz", g=b"Bxyz", h=b"AZZ")
    kept = _kept(ins, crash_at=3)
    recorded = attribute_trial(binary=harness, kept=kept, seconds=10, batch=4)
    assert recorded.triggered() == {"BUG001", "BUG002"} and recorded.crashes_without_bug == 1
    own, diff = replay_check(recorded, kept)
    assert diff == [] and own == recorded


@needs_clang
def test_replay_check_finds_a_reach_that_a_batch_hid(tmp_path):
    """State one input leaves behind hides the next input's bug in a batch: the sweep sees nothing
    (and cannot know), the replay of every input on its own finds the reach and says so."""
    from autotune.bugs.attribution import attribute_trial, differences, replay_check

    binary = _stateful(tmp_path, "hiding", "static int poisoned;",
                       "if (n && d[0] == 'x') poisoned = 1;\n"
                       "  if (n && d[0] == 'A' && !poisoned) AUTOTUNE_BUG(HIDE01, n == 3);")
    kept = _kept(_inputs(tmp_path, a=b"x", b=b"Ay", c=b"AZZ"))
    recorded = attribute_trial(binary=binary, kept=kept, seconds=10)
    assert recorded.bugs == {} and recorded.unexplained == ()  # the sweep's own check sees nothing
    own, diff = replay_check(recorded, kept)
    assert own.bugs["HIDE01"].reach_s == 1.0 and own.bugs["HIDE01"].trigger_s == 2.0
    assert diff[0] == "HIDE01: never reached against reach 1.000 s, trigger 2.000 s"
    assert any(d.startswith("input default/queue/b: not decisive against reached HIDE01") for d in diff)
    assert differences(own, own) == []


def test_replay_check_needs_the_recorded_binary():
    from autotune.bugs.attribution import TrialBugs, replay_check

    with pytest.raises(ValueError, match="names no canary build"):
        replay_check(TrialBugs(seconds=1, bugs={}, inputs=0, crashes=0, crashes_without_bug=0, late_inputs=0), [])
