"""A user's own library judged by canaries of their own (docs/BUGS.md, "Your own library"): the
section's compare command run as written on docs/examples/canaries (a library built by its own
Makefile, its canary.h found through AUTOTUNE_CANARY_INCLUDE), the canary checked as every canary of
the benchmark is (a seed reaches it, a crafted input triggers it, an input the fix accepts does not),
and the variable reaching a build script whether autotune sets it or the user does."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autotune import afl
from autotune.bugs.page import replay
from autotune.paths import CANARY_INCLUDE_VAR, kernels_dir
from autotune.target.build import build
from autotune.target.recipe import TargetSpec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "canaries"
AUTOTUNE = Path(sys.executable).parent / "autotune"

needs_afl = pytest.mark.skipif(shutil.which("afl-fuzz") is None or shutil.which("afl-clang-fast") is None,
                               reason="AFL++ is not installed")


def documented_command() -> list[str]:
    """The sh block of docs/BUGS.md's "Your own library" section, as argv."""
    text = (ROOT / "docs" / "BUGS.md").read_text()
    section = text.split("## Your own library", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "docs/BUGS.md's own-library section lost its command"
    return shlex.split(block.group(1).replace("\\\n", " "))


def test_the_variable_survives_base_env_and_nothing_else_of_autotune_does():
    env = afl.base_env({CANARY_INCLUDE_VAR: "/opt/mine", "AUTOTUNE_METRIC": "ngram-4", "AFL_MAP_SIZE": "1", "HOME": "/h"})
    assert env == {CANARY_INCLUDE_VAR: "/opt/mine", "HOME": "/h"}


def test_a_build_script_sees_the_variable_autotune_sets_or_the_users(tmp_path):
    script = tmp_path / "build.sh"
    script.write_text('printf "%s" "$AUTOTUNE_CANARY_INCLUDE" > "$OUT/fuzzer"\n')
    spec = TargetSpec(kind="script", script=str(script))
    base = afl.base_env({k: v for k, v in os.environ.items() if k != CANARY_INCLUDE_VAR})
    assert build(spec=spec, cc_kind="plain", build_vars={}, env=base).read_text() == str(kernels_dir())
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "canary.h").write_text((kernels_dir() / "canary.h").read_text() + "\n/* my copy */\n")
    got = build(spec=spec, cc_kind="plain", build_vars={}, env=afl.base_env({**base, CANARY_INCLUDE_VAR: str(mine)}))
    assert got.read_text() == str(mine)  # its own build: the header differs, so does the cache key


@pytest.mark.slow
@needs_afl
def test_the_documented_own_library_compare_runs_as_written(tmp_path):
    argv = documented_command()
    assert argv[0] == ".venv/bin/autotune" and argv[1] == "compare"
    out = tmp_path / "canaries-out"
    argv = [str(AUTOTUNE), *argv[1:-2], "--out", str(out), "--json", "--no-plot"]
    assert documented_command()[-2:] == ["--out", "canaries-out"]
    env = {k: v for k, v in os.environ.items() if k != CANARY_INCLUDE_VAR}  # autotune sets it
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    (cfg,) = doc["configs"]
    trials = cfg["trials"]
    assert len(trials) == 2
    for t in trials:
        assert t["bugs"]["bugs"]["MINI001"]["reach_s"] == 0.0, t["bugs"]["bugs"]  # a seed reaches it at once
    assert any(t["bugs"]["bugs"]["MINI001"]["trigger_s"] is not None for t in trials)  # a length byte away
    assert "MINI001" in (out / "compare.md").read_text()

    # the canary checked as the benchmark's are, through the canary build compare named
    binary = re.search(r"kept inputs replayed through (\S+)", proc.stderr).group(1)
    seeds = sorted((EXAMPLE / "seeds").iterdir())
    fits = tmp_path / "ends-at-the-end"
    fits.write_bytes(b"MINI\x02C\x03abc")  # a record that ends exactly at the end: the fix accepts it
    got = {Path(r.path).name: r for r in replay(binary, [*seeds, EXAMPLE / "inputs" / "mini001", fits])}
    for s in seeds:
        assert "MINI001" in got[s.name].reached and not got[s.name].triggered, s.name
    assert got["mini001"].triggered == {"MINI001"}
    assert "MINI001" in got[fits.name].reached and not got[fits.name].triggered
