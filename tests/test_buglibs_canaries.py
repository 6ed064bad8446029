"""A test per canary of the bug benchmark (benchmarks/bugs): each library built from Debian's
sources with plain clang and its canaries (once per session, cached like the other real targets),
each bug's crafted input that reaches its canary without triggering it, and where one is known the
input that triggers it, attributed by the replay tool (autotune.bugs.page.replay); the seeds
trigger nothing (a campaign must find the bugs); a trigger under AUTOTUNE_CANARY_FATAL=1 aborts
(campaign mode); our harnesses compile warning-free (C11, -Wall -Wextra) against the built trees."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from autotune.bugs.page import FATAL_VAR, replay
from buglibs_support import LIBRARIES, built

pytestmark = [pytest.mark.slow, pytest.mark.bugbench,  # CI's bug-benchmark stage (.ci/run), not the default run
              pytest.mark.skipif(shutil.which("clang") is None or shutil.which("apt-get") is None,
                                 reason="needs clang and apt-get (Debian's archive)")]

CASES = [pytest.param(lib.name, bug.id, id=bug.id) for lib in LIBRARIES.values() for bug in lib.bugs]
TRIGGERS = [pytest.param(lib.name, bug.id, id=bug.id) for lib in LIBRARIES.values() for bug in lib.bugs
            if bug.trigger_known]
REPLAY_TIMEOUT_S = 20.0


@pytest.mark.parametrize("name,bug", CASES)
def test_reach_input_reaches_the_canary_without_triggering_it(name, bug):
    lib = LIBRARIES[name]
    [got] = replay(built(name), [lib.input_path(bug, "reach")], timeout_s=REPLAY_TIMEOUT_S)
    assert bug in got.reached, f"{bug}: inputs/{bug}.reach reached only {sorted(got.reached)}"
    assert bug not in got.triggered
    assert not got.crashed and not got.timed_out


@pytest.mark.parametrize("name,bug", TRIGGERS)
def test_trigger_input_triggers_the_canary(name, bug):
    lib = LIBRARIES[name]
    [got] = replay(built(name), [lib.input_path(bug, "trigger")], timeout_s=REPLAY_TIMEOUT_S)
    assert bug in got.reached and bug in got.triggered, (
        f"{bug}: inputs/{bug}.trigger triggered only {sorted(got.triggered)}")


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_seeds_trigger_nothing(name):
    lib = LIBRARIES[name]
    seeds = sorted(lib.seeds_dir.iterdir())
    results = replay(built(name), seeds, timeout_s=REPLAY_TIMEOUT_S, jobs=2)
    assert {str(r.path.name): sorted(r.triggered) for r in results if r.triggered} == {}
    assert not [r.path.name for r in results if r.crashed or r.timed_out]
    assert set().union(*(r.reached for r in results))  # the seeds reach some canaries


def test_fatal_canary_aborts_with_the_bug_named():
    """Campaign mode: the first trigger aborts the harness, naming the bug on stderr."""
    lib = LIBRARIES["libtiff"]
    binary = built("libtiff")
    env = {**os.environ, FATAL_VAR: "1"}
    trig = subprocess.run([str(binary), str(lib.input_path("TIF002", "trigger"))], env=env, capture_output=True,
                          timeout=60)
    assert trig.returncode < 0 and b"autotune-canary: triggered TIF002" in trig.stderr
    reach = subprocess.run([str(binary), str(lib.input_path("TIF002", "reach"))], env=env, capture_output=True,
                           timeout=60)
    assert reach.returncode == 0, reach.stderr[-2000:]


HARNESS_INCLUDES = {  # the built tree's header folders each harness needs, under the build's work/
    "libtiff": ["src/libtiff", "build/libtiff"],
    "libxml2": ["src/include"],
    "libpng": ["src"],
    "expat": ["src/expat/lib"],
    "libarchive": ["src/libarchive"],
    # openjpeg.h and the opj_config.h CMake writes; color.h; the opj_apps_config.h build.sh writes
    "openjpeg": ["src/src/lib/openjp2", "build/src/lib/openjp2", "src/src/bin/common", "apps"],
}
HARNESS_DEFINES = {"expat": ["-DENCODING_FOR_FUZZING=UTF-8"]}  # as its build.sh compiles it


@pytest.mark.parametrize("name", sorted(HARNESS_INCLUDES))
def test_our_harness_compiles_warning_free(name):
    lib = LIBRARIES[name]
    work = built(name).parent / "work"
    includes = [f"-I{work / d}" for d in HARNESS_INCLUDES[name]]
    proc = subprocess.run(["clang", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", *includes,
                           *HARNESS_DEFINES.get(name, []), str(lib.folder / lib.harness)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
