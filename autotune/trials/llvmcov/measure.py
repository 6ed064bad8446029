"""One trial's coverage by the llvm-cov yardstick, final and over time.

The curve's points are the pcguard yardstick's (0, T/10, ..., T; an input counts from the first
point at or after its ``time:`` stamp, one stamped after T or without a stamp at the last). The
inputs are split into those slices and each slice replayed in batches
(:func:`~autotune.trials.llvmcov.replay.replay_batches`), so every input runs once; the profile
of the points up to j is the merge of the profile up to j-1 with slice j's raw profiles, and
llvm-cov reads the totals of each. That is one replay of the corpus, at most one merge and one
export per point (11 of each), whatever the corpus size; a point whose slice is empty repeats the
previous totals.

``work`` keeps ``coverage.profdata``, the merged profile of every input (for ``llvm-cov show`` /
``report`` against the yardstick binary); the raw profiles and the intermediate merges are
deleted.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Mapping, Sequence

from autotune.errors import AutotuneError
from autotune import afl
from autotune.afl_output import KeptInput
from autotune.trials.llvmcov.profiles import CoverageTotals, export_totals, merge_profiles
from autotune.trials.llvmcov.replay import replay_batches
from autotune.trials.llvmcov.tools import LlvmTools
from autotune.afl import pin_prefix
from autotune.trials.coverage import CURVE_POINTS, KIND_LLVMCOV, Yardstick, YardstickCoverage, curve_times

PROFILE_NAME = "coverage.profdata"


def tools_of(yardstick: Yardstick) -> LlvmTools:
    t = yardstick.tools
    try:
        return LlvmTools(clang=str(t["clang"]), clangxx=str(t["clang++"]), major=int(t["llvm_major"]),
                         profdata=str(t["llvm-profdata"]), cov=str(t["llvm-cov"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise AutotuneError(f"the llvm-cov yardstick names no LLVM tools ({exc})",
                            fix="measure with a yardstick made by choose_yardstick(choice='llvm-cov')") from exc


def slice_index(time_ms: int | None, times_s: Sequence[float]) -> int:
    """The first curve point an input counts at: the first t with time_ms <= t (the last point for an
    input stamped after the time-box or without a stamp)."""
    if time_ms is not None:
        for j, t in enumerate(times_s):
            if time_ms <= t * 1000:
                return j
    return len(times_s) - 1


def measure_llvmcov(*, yardstick: Yardstick, inputs: Sequence[KeptInput], seconds: float, work: Path,
                    env: Mapping[str, str] | None = None, core: int | None = None,
                    points: int = CURVE_POINTS) -> YardstickCoverage:
    tools = tools_of(yardstick)
    binary = Path(yardstick.binary)
    if not binary.is_file():
        raise AutotuneError(f"the llvm-cov yardstick {binary} is missing", fix="run the compare again to rebuild it")
    renv = {**afl.base_env(env)}
    renv.pop("LLVM_PROFILE_FILE", None)
    prefix = pin_prefix(core, env=renv)
    shutil.rmtree(work, ignore_errors=True)
    raw = work / "profiles"
    raw.mkdir(parents=True)
    times = curve_times(seconds, points)
    limit_ms = seconds * 1000
    late = sum(1 for k in inputs if k.time_ms is None or k.time_ms > limit_ms)
    slices: list[list[KeptInput]] = [[] for _ in times]
    for k in inputs:
        slices[slice_index(k.time_ms, times)].append(k)
    totals: CoverageTotals | None = None
    merged: Path | None = None
    curve: list[tuple[float, int]] = []
    detail_curve: list[list] = []
    lost: list[str] = []
    processes = stopped = 0
    for j, (t, part) in enumerate(zip(times, slices)):
        if part:
            rep = replay_batches(binary=binary, inputs=[k.path for k in part], tools=tools, work=raw, tag=f"p{j}",
                                 timeout_ms=yardstick.timeout_ms, env=renv, prefix=prefix)
            processes += rep.processes
            stopped += rep.stopped
            lost += [f"{part[i].kind}/{part[i].path.name}" for i in rep.lost]
            if rep.profiles:
                out = work / f"upto-{j}.profdata"
                merge_profiles(tools=tools, profiles=[*([merged] if merged else []), *rep.profiles], out=out,
                               env=renv, prefix=prefix)
                for p in rep.profiles:
                    p.unlink(missing_ok=True)
                if merged:
                    merged.unlink(missing_ok=True)
                merged = out
                totals = export_totals(tools=tools, binary=binary, profdata=merged, env=renv, prefix=prefix)
        cur = totals or CoverageTotals.none()
        curve.append((t, cur.branches))
        detail_curve.append([t, dict(cur.covered)])
    final = work / PROFILE_NAME
    if merged:
        merged.replace(final)
    shutil.rmtree(raw, ignore_errors=True)
    if totals is None and inputs:
        raise AutotuneError(f"no input of {len(inputs)} left a profile in the coverage build {binary}",
                            fix=f"replay one by hand: LLVM_PROFILE_FILE=x.profraw {binary} {inputs[0].path}")
    end = totals or CoverageTotals.none()
    detail = {"totals": end.to_dict(), "curve": detail_curve, "processes": processes, "stopped_batches": stopped,
              "lost_inputs": lost[:20], "profile": str(final) if merged else None}
    return YardstickCoverage(kind=KIND_LLVMCOV, edges=end.branches, inputs=len(inputs), unreplayed=len(lost),
                             curve=tuple(curve), late_inputs=late, llvm_cov=detail)
