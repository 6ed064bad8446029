"""The probe's afl-fuzz engine: afl-fuzz mutates, the census replays what it kept (issue 12).

The probe's census should count the keys that afl-fuzz's own mutations reach, not those of a
Python havoc loop. So, where afl-fuzz is installed, the probe first runs the stock afl-fuzz on
the harness (the same ``full`` build: the census needs every metric's hooks) with
``AUTOTUNE_AFL_UNION`` set: the runtime then hands afl-fuzz one flat map holding the keys of every
census metric at once (kernels/cov_census.c ``cov_events_to_map``), so afl-fuzz keeps each input
that is new for *any* metric, up to that map's collisions. Everything it kept (queue, crashes,
hangs) is then replayed through the probe server, which takes the exact census as for its own
inputs; the havoc loop fills any time left over.

It is not the default (``--probe-engine havoc`` is): measured side by side (benchmarks/probe_engines.py,
60 s, 3 pairs, this 2-core VM), the havoc loop's census held more keys of every metric on libyaml
(edge 3,424 vs 2,766, ngram-8 58,476 vs 37,071, ctx 35,590 vs 21,471 medians; havoc ahead in 3 of
3 pairs) and on the demo (edge 551 vs 542, ngram-8 16,358 vs 14,458). afl-fuzz runs the census
build on a union map at a fraction of the probe server's rate, and calibrates every new entry.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from autotune import afl
from autotune.afl_output import kept_inputs
from autotune.errors import AutotuneError
from autotune.trials.runner import run_trial
from autotune.trials.trial import TrialSpec
from autotune.vocabulary import LAYOUT_VAR, MAP_SIZE_VAR

ENGINES = ("auto", "afl", "havoc")
# afl-fuzz's share of the probe's time left after the seeds; the rest replays what it kept (well
# under a millisecond per input) and traces, dumps and analyses the census.
AFL_SHARE = 0.75  # of the time left after the seeds
AFL_START_S = 1.0  # afl-fuzz's start and calibration, before its -V clock runs
MIN_AFL_SECONDS = 2
# Slots of the union map of every metric's keys. afl-fuzz classifies and compares its whole map after
# each execution: on the demo (this 2-core VM, 6 s runs of afl-fuzz 4.04c side by side) a 2^20 map
# ran at 1,517 execs/s against 7,063 for 2^16; the keys themselves (computed per distinct event at
# the execution's end) cost about half of that, against 14,612 for AUTOTUNE_METRIC=edge. 2^18 slots
# keep the demo's ~30k keys of all metrics at a few % collisions (BigMap's Equation 1); a target
# with far more keys loses some novelty to collisions here, not in the census, which is exact.
UNION_MAP_SLOTS = 1 << 18
EMPTY_SEED = b"\n"  # afl-fuzz needs one seed; the havoc loop starts from an empty input instead


@dataclass(frozen=True)
class AflEngineRun:
    """What afl-fuzz did during the probe (fuzzer_stats), and how many inputs it handed on."""

    seconds: int
    execs: int | None
    execs_per_s: float | None
    queue: int
    crashes: int
    hangs: int
    afl_version: str | None
    map_slots: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: Mapping) -> "AflEngineRun":
        return cls(seconds=int(d["seconds"]), execs=None if d.get("execs") is None else int(d["execs"]),
                   execs_per_s=None if d.get("execs_per_s") is None else float(d["execs_per_s"]),
                   queue=int(d["queue"]), crashes=int(d["crashes"]), hangs=int(d["hangs"]),
                   afl_version=d.get("afl_version"), map_slots=int(d["map_slots"]))

    def note(self) -> str:
        rate = f" at {self.execs_per_s:,.0f}/s" if self.execs_per_s else ""
        execs = f"{self.execs:,} execs{rate}, " if self.execs is not None else ""
        tool = f"afl-fuzz {self.afl_version.lstrip('+')}" if self.afl_version else "afl-fuzz"
        return (f"engine: {tool} for {self.seconds} s ({execs}queue {self.queue}, crashes {self.crashes}, "
                f"hangs {self.hangs}) on the union map of every metric ({self.map_slots:,} slots); "
                f"the census replays what it kept")


def union_env(metrics: Sequence[str] | None, *, slots: int = UNION_MAP_SLOTS) -> dict[str, str]:
    """The runtime's variables for afl-fuzz to see every metric's keys (None: all metrics)."""
    return {"AUTOTUNE_AFL_UNION": ",".join(metrics) if metrics else "1", LAYOUT_VAR: "flat",
            MAP_SIZE_VAR: str(slots)}


def afl_fuzz_path(env: Mapping[str, str] | None = None) -> str | None:
    """afl-fuzz on PATH, or None."""
    import os

    try:
        return afl.find_tool("afl-fuzz", env=os.environ if env is None else env)
    except AutotuneError:
        return None


def run_afl_engine(*, binary: Path, seeds: Sequence[tuple[str, bytes]], work: Path, seconds: int, seed: int,
                   metrics: Sequence[str] | None) -> tuple[AflEngineRun, list[tuple[str, bytes]]]:
    """Run afl-fuzz for ``seconds`` on the union map from ``seeds``; its figures and every input it
    kept, named ``afl-<kind>:<file>``. AutotuneError when afl-fuzz does not run."""
    shutil.rmtree(work, ignore_errors=True)
    in_dir = work / "in"
    in_dir.mkdir(parents=True)
    for i, (_, data) in enumerate(seeds):
        (in_dir / f"seed-{i:06d}").write_bytes(data)
    if not seeds:
        (in_dir / "empty").write_bytes(EMPTY_SEED)
    spec = TrialSpec(config="probe", index=0, binary=str(Path(binary).resolve()), env=union_env(metrics),
                     seeds=str(in_dir), seconds=int(seconds), rng_seed=int(seed), out_dir=str(work / "trial"))
    res = run_trial(spec=spec, core=None)
    kept = kept_inputs(work / "trial" / "afl-out")
    inputs = [(f"afl-{k.kind}:{k.path.name}", k.path.read_bytes()) for k in kept]
    run = AflEngineRun(seconds=int(seconds), execs=res.stats.get("execs_done"),
                       execs_per_s=res.stats.get("execs_per_sec"), queue=res.kept.get("queue", 0),
                       crashes=res.kept.get("crashes", 0), hangs=res.kept.get("hangs", 0),
                       afl_version=res.stats.get("afl_version"), map_slots=UNION_MAP_SLOTS)
    return run, inputs
