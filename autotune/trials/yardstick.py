"""The yardstick: one coverage measure for every configuration of a comparison (Klees et al.,
CCS 2018): everything a trial kept is replayed through ONE reference binary and its edges counted.

With ``choice`` pcguard (the default), one of two kinds, chosen by :func:`choose_yardstick`:

- ``aflpp-pcguard`` (when AFL++'s compiler is installed): the harness built by afl-clang-fast with
  no AFL_LLVM_* variable (PCGUARD: one guard per edge, numbered sequentially, so no collisions);
  an edge is a map entry afl-showmap reports non-zero for an input.
- ``autotune-census-edge`` (afl-clang-fast missing): the harness built by `autotune cc`, replayed
  with our runtime keyed by the exact edge key (``AUTOTUNE_METRIC=edge``, two-level, index of
  2^24 entries, exact key hash, dense map of 2^20 slots, a fresh index file per replay): an edge is
  a dense slot, i.e. a distinct exact edge key up to index collisions (Equation 1 at 2^24: under
  0.01 % for 3,000 keys). The index file's own key count is kept beside it as a cross-check.

How edges are counted, and why this way: ONE afl-showmap run per trial, ``-i <inputs> -o <dir>``
without ``-C``, which writes one map file per input (``slot:bucket`` lines). The union of the
slots of the inputs kept up to time t is the coverage at t, for every t at once, from one
execution of each input (cumulative replays of prefixes would execute the early inputs once per
time point). ``-C`` is not used: afl-showmap 4.04c's collect mode counted 201 edges for ONE demo
seed whose own run (file argument, or the per-input map) has 29, and 235 edges over a queue
for which afl-fuzz itself reported edges_found 189 and the per-input union gives 187 (it
accumulates counts across the persistent loop's executions; AFL++ issue #1245 reports the same
kind of disagreement).

A third kind, chosen by name (``autotune compare --yardstick llvm-cov``), is no contestant's
feedback: ``llvm-cov-branches``, the target's clang source-based coverage build replayed by our
own main, the covered branches by llvm-cov (autotune.trials.llvmcov). AFL++'s PCGUARD map is the
default contestant's own feedback (an input it kept is by construction new on that map); source
coverage measures every contestant by a criterion none of them fuzzed by, as FuzzBench's coverage
reports do. Its headline count is stored where the edges of the other kinds are (``edges``,
``unit`` says which), with regions, lines and functions beside it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from autotune import afl
from autotune.errors import AutotuneError, ToolMissingError
from autotune.afl_output import KeptInput
from autotune.afl import pin_prefix
from autotune.runtime.afl_index import read_index_stats
from autotune.target import build, sha256_file
from autotune.trials.llvmcov import build_coverage, find_llvm_tools, measure_llvmcov
from autotune.vocabulary import INDEX_FILE_VAR
from autotune.trials.coverage import (
    CENSUS_ENV, CHOICES, CURVE_POINTS, DESCRIPTIONS, KIND_CENSUS, KIND_LLVMCOV, KIND_PCGUARD, Yardstick, YardstickCoverage,
    coverage_curve,
)

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def yardstick_for_binary(*, kind: str, binary: Path, tools: Mapping | None = None) -> Yardstick:
    """A yardstick of a binary built elsewhere (``kind``: aflpp-pcguard, autotune-census-edge, or
    llvm-cov-branches with its ``tools``)."""
    if kind not in DESCRIPTIONS:
        raise AutotuneError(f"unknown yardstick kind {kind!r}", fix=f"use one of {', '.join(DESCRIPTIONS)}")
    if kind == KIND_LLVMCOV and not tools:
        raise AutotuneError("the llvm-cov yardstick needs its LLVM tools", fix="build it with choose_yardstick")
    return Yardstick(kind=kind, binary=str(binary), sha256=sha256_file(binary),
                     env=dict(CENSUS_ENV) if kind == KIND_CENSUS else {}, tools=dict(tools or {}))


def choose_yardstick(*, spec, env: Mapping[str, str], choice: str = "pcguard") -> Yardstick:
    """``choice`` pcguard: AFL++'s default PCGUARD build of ``spec`` when afl-clang-fast exists, else
    our census build; llvm-cov: the source-based coverage build (autotune.trials.llvmcov)."""
    if choice not in CHOICES:
        raise AutotuneError(f"unknown yardstick {choice!r}", fix=f"use one of {', '.join(CHOICES)}")
    if choice == "llvm-cov":
        tools = find_llvm_tools(env)
        binary = build_coverage(spec=spec, tools=tools, env=env)
        return yardstick_for_binary(kind=KIND_LLVMCOV, binary=binary, tools=tools.to_dict())
    try:
        afl.find_tool("afl-clang-fast", env=env)
    except ToolMissingError:
        binary = build(spec=spec, cc_kind="autotune", build_vars={}, env=env)
        return yardstick_for_binary(kind=KIND_CENSUS, binary=binary)
    binary = build(spec=spec, cc_kind="afl", build_vars={}, env=env)
    return yardstick_for_binary(kind=KIND_PCGUARD, binary=binary)


def _stage(inputs: Sequence[KeptInput], dest: Path) -> dict[str, KeptInput]:
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    names: dict[str, KeptInput] = {}
    for k in inputs:
        name = f"{k.kind}-{k.path.name}" if k.instance == "default" else f"{k.instance}-{k.kind}-{k.path.name}"
        try:
            os.link(k.path, dest / name)
        except OSError:
            shutil.copyfile(k.path, dest / name)
        names[name] = k
    return names


def _read_slots(path: Path) -> frozenset[int]:
    out = set()
    for line in path.read_text().splitlines():
        head, sep, _ = line.partition(":")
        if sep and head.strip():
            out.add(int(head))
    return frozenset(out)


def measure(*, yardstick: Yardstick, inputs: Sequence[KeptInput], seconds: float, work: Path,
            env: Mapping[str, str] | None = None, core: int | None = None,
            points: int = CURVE_POINTS) -> YardstickCoverage:
    """Replay ``inputs`` through the yardstick (one afl-showmap, one map per input); final edges
    and coverage over time. ``work`` is scratch space (emptied, left with the index file only).
    The llvm-cov yardstick replays by autotune.trials.llvmcov.measure_llvmcov."""
    if yardstick.kind == KIND_LLVMCOV:
        return measure_llvmcov(yardstick=yardstick, inputs=inputs, seconds=seconds, work=work, env=env, core=core,
                               points=points)
    benv = {**afl.base_env(env), **afl.HOST_ENV, **yardstick.env}
    tool = afl.find_tool("afl-showmap", env=benv)
    idx = None
    if yardstick.kind == KIND_CENSUS:
        idx = work / "census.idx"
        idx.unlink(missing_ok=True)
        benv[INDEX_FILE_VAR] = str(idx)
    staged = work / "inputs"
    maps = work / "maps"
    names = _stage(inputs, staged)
    shutil.rmtree(maps, ignore_errors=True)
    cmd = [*pin_prefix(core, env=benv), tool, "-i", str(staged), "-o", str(maps), "-t", str(yardstick.timeout_ms),
           "--", yardstick.binary]
    proc = subprocess.run(cmd, env=benv, capture_output=True, stdin=subprocess.DEVNULL, cwd=work,
                          timeout=600 + len(names) * yardstick.timeout_ms / 1000)
    if names and not maps.is_dir():
        tail = _ANSI.sub("", (proc.stdout + proc.stderr).decode(errors="replace"))[-1500:]
        raise AutotuneError(f"afl-showmap failed replaying {len(names)} inputs through the yardstick "
                            f"{yardstick.binary} (exit {proc.returncode}):\n{tail}",
                            fix="run the command by hand: " + " ".join(cmd))
    per_input: list[tuple[int | None, frozenset[int]]] = []
    unreplayed = 0
    for name, k in names.items():
        m = maps / name
        if m.is_file():
            per_input.append((k.time_ms, _read_slots(m)))
        else:
            unreplayed += 1
            per_input.append((k.time_ms, frozenset()))
    curve, edges, late = coverage_curve(slots_by_time=per_input, seconds=seconds, points=points)
    by_instance = contribution(list(names.values()), [s for _, s in per_input])
    unique_crashes = len({s for k, (_, s) in zip(names.values(), per_input) if k.kind == "crashes"})
    index_keys = overflow = None
    if idx is not None and idx.is_file():
        st = read_index_stats(path=idx)
        index_keys, overflow = st.keys, st.overflow_keys
    shutil.rmtree(staged, ignore_errors=True)
    shutil.rmtree(maps, ignore_errors=True)
    return YardstickCoverage(kind=yardstick.kind, edges=edges, inputs=len(names), unreplayed=unreplayed, curve=curve,
                             late_inputs=late, index_keys=index_keys, overflow_keys=overflow, by_instance=by_instance,
                             unique_crashes=unique_crashes)


def contribution(inputs: Sequence[KeptInput], slots: Sequence[frozenset[int]]) -> dict | None:
    """Who found what, when ``inputs`` come from several instances (else None): per instance the
    edges of its own finds (the seeds and the inputs imported by sync left out), those it reached
    first (the earliest own find holding the edge; inputs without a time count last) and those no
    other instance's own finds reached."""
    names = sorted({k.instance for k in inputs})
    if len(names) < 2:
        return None
    own: dict[str, set[int]] = {n: set() for n in names}
    first: dict[int, tuple[float, str]] = {}
    for k, s in zip(inputs, slots):
        if k.imported or ",orig:" in k.path.name:
            continue
        own[k.instance] |= s
        t = float("inf") if k.time_ms is None else float(k.time_ms)
        for e in s:
            if e not in first or t < first[e][0]:
                first[e] = (t, k.instance)
    out = {}
    for n in names:
        others = set().union(*(own[m] for m in names if m != n))
        out[n] = {"edges": len(own[n]), "first": sum(1 for _, who in first.values() if who == n),
                  "only": len(own[n] - others)}
    return out
