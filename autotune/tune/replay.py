"""ReplayMeasurer: real runs of the probe's harness through our runtime, configured per point.

The harness (linked by `autotune cc` with kernels/driver.c) has a replay mode
(docs/DESIGN.md "Driver modes"): ``AUTOTUNE_REPLAY_ROUNDS=R harness FILE...`` runs the inputs one
untimed warm-up round and R timed rounds through the map the AUTOTUNE_* variables configure,
doing afl-fuzz's per-exec map work, and prints one JSON line with ``execs_per_s``.

Budget: large flat maps cost milliseconds per execution, so each run replays a prefix of a
fixed seeded permutation of the kept corpus (nested subsets: every configuration sees the same
first inputs), sized so a round takes about ``round_s`` by a running estimate of the cost per
working-set byte, and the best of ``repeats`` runs is the figure (on a shared host other
processes only ever slow a run down; the spread of the repeats is kept and sets tune's noise band);
with normalisation (the default) the figure is relative to a reference configuration measured
around each run (see REFERENCE).
"""

from __future__ import annotations

import json
import math
import statistics
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autotune.errors import AutotuneError
from autotune.mappoint import MapPoint
from autotune.vocabulary import AFL_DEFAULT_MAP_POW2, VARIABLES
from autotune.tune.backends import Measurement

DEFAULT_ROUND_S = 0.12
DEFAULT_REPEATS = 3
MIN_INPUTS = 2
SLOW_RUN_S = 0.6
# Load normalisation: before and after each of a configuration's runs, a short run of a fixed
# reference (edge, flat, 64 KiB, 8-bit, on the first REFERENCE_INPUTS inputs); a configuration's
# figure is the median over its runs of (its rate / the mean rate of the reference runs around it),
# times the reference's best rate at the first measurement. A load change on the shared host
# between two measurements cancels out; a blip in one run does not move the median.
REFERENCE = MapPoint("edge", "flat", AFL_DEFAULT_MAP_POW2, 8)
REFERENCE_INPUTS = 64
REFERENCE_S = 0.04  # a run planned longer than this is done once, not `repeats` times
RUN_TIMEOUT_S = 120.0


def replay_env(*, config: MapPoint, dense: int | None, seed: int, rounds: int) -> dict[str, str]:
    """The AUTOTUNE_* variables of a replay run: the runtime configuration of ``config``
    (autotune.runtime.config) and the replay rounds (docs/DESIGN.md "Driver modes")."""
    return {"AUTOTUNE_REPLAY_ROUNDS": str(rounds), **config.runtime(dense=dense, seed=seed).env_values()}


@dataclass(frozen=True)
class ReplayTiming:
    """How long a replay run is and how often it repeats: about ``round_s`` of timed work a run, the best of
    ``repeats`` runs the figure, each run between runs of the reference configuration when ``normalise``."""

    round_s: float = DEFAULT_ROUND_S
    repeats: int = DEFAULT_REPEATS
    normalise: bool = True


class ReplayMeasurer:
    name = "replay"

    def __init__(self, *, harness: Path, inputs: list[Path], seed: int, target_exec_ns: float, shuffle_seed: int = 0,
                 dense_for, working_set, timing: ReplayTiming = ReplayTiming()):
        if not harness.is_file() or not os.access(harness, os.X_OK):
            raise AutotuneError(f"the probe's harness {harness} is missing or not executable",
                                fix="re-run `autotune probe`, or tune with --backend bench")
        if not inputs:
            raise AutotuneError("the probe kept no corpus input to replay",
                                fix="re-run `autotune probe` longer, or tune with --backend bench")
        self.harness = harness
        perm = np.random.default_rng(shuffle_seed).permutation(len(inputs))
        self.inputs = [inputs[int(i)] for i in perm]
        self.seed = seed  # AUTOTUNE_SEED: the block-id seed the probe used, so keys match its census
        self.target_exec_ns = max(50.0, float(target_exec_ns))
        self.dense_for = dense_for  # MapPoint -> dense slots (two-level)
        self.working_set = working_set  # MapPoint -> bytes
        self.round_s = timing.round_s
        self.repeats = timing.repeats
        self.ns_per_ws_byte = 0.3  # running estimate of map ns per working-set byte (refined per run)
        self.runs = 0
        self.normalise = timing.normalise
        self.ref_baseline: float | None = None
        self._ref_rounds: int | None = None

    def _plan(self, config: MapPoint) -> tuple[int, int, int]:
        """(inputs, rounds, repeats) for about round_s of timed work per run."""
        ws = self.working_set(config)
        est_ns = self.target_exec_ns + self.ns_per_ws_byte * ws
        n = int(max(MIN_INPUTS, min(len(self.inputs), self.round_s * 1e9 / est_ns)))
        n = min(n, len(self.inputs))
        rounds = max(1, int(self.round_s * 1e9 / (est_ns * n)))
        run_s = est_ns * n * (rounds + 1) * 1e-9  # + the warm-up round
        return n, rounds, (1 if run_s > SLOW_RUN_S else self.repeats)

    def run_once(self, config: MapPoint, *, n_inputs: int, rounds: int) -> dict:
        # the runtime's variables of this run only: none inherited from the caller's environment
        env = {k: v for k, v in os.environ.items() if k not in VARIABLES}
        env.update(replay_env(config=config, dense=self.dense_for(config), seed=self.seed, rounds=rounds))
        env.pop("__AFL_SHM_ID", None)
        env.pop("AUTOTUNE_PROBE_CTL_FD", None)
        cmd = [str(self.harness), *map(str, self.inputs[:n_inputs])]
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise AutotuneError(f"replay of {config.key()} took longer than {RUN_TIMEOUT_S:.0f} s",
                                fix="narrow the map sizes (--max-map-bytes)") from exc
        self.runs += 1
        line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("{")), None)
        if proc.returncode != 0 or line is None:
            raise AutotuneError(
                f"replay of {config.key()} failed (exit {proc.returncode}): {proc.stderr.strip()[-400:]}",
                fix="check that the harness was built by this autotune (`autotune probe` rebuilds it), "
                    "or tune with --backend bench")
        try:
            return json.loads(line)
        except json.JSONDecodeError as exc:
            raise AutotuneError(f"replay of {config.key()} printed a malformed result: {line[:200]}") from exc

    def _reference_run(self) -> float:
        """One short run of the reference configuration on a fixed input prefix (its execs/s)."""
        n = min(len(self.inputs), REFERENCE_INPUTS)
        if self._ref_rounds is None:
            est = self.target_exec_ns + self.ns_per_ws_byte * self.working_set(REFERENCE)
            self._ref_rounds = max(1, int(REFERENCE_S * 1e9 / (est * n)))
        return float(self.run_once(REFERENCE, n_inputs=n, rounds=self._ref_rounds)["execs_per_s"])

    def measure(self, config: MapPoint) -> Measurement:
        n, rounds, repeats = self._plan(config)
        refs, docs = [], []
        for _ in range(repeats):  # reference and configuration interleaved: R X R X ... R
            if self.normalise:
                refs.append(self._reference_run())
            docs.append(self.run_once(config, n_inputs=n, rounds=rounds))
        if self.normalise:
            refs.append(self._reference_run())
        rates = [float(d["execs_per_s"]) for d in docs]
        raw = max(rates)  # best of the repeats: interference from other processes only slows a run down
        eps, load = raw, None
        if self.normalise and len(refs) == len(rates) + 1:
            if self.ref_baseline is None:
                self.ref_baseline = max(refs)
            # each run against the mean of the reference runs just before and after it; the median of
            # those ratios ignores a blip in any one run
            ratios = [x / max(1e-9, (refs[i] + refs[i + 1]) / 2) for i, x in enumerate(rates)]
            ratio = statistics.median(ratios)
            eps = self.ref_baseline * ratio
            load = raw / eps if eps > 0 else None
        ws = self.working_set(config)
        map_ns = max(0.0, 1e9 / max(raw, 1e-9) - self.target_exec_ns)
        if ws > 0 and math.isfinite(map_ns):
            # a smoothed estimate for planning the next runs only (not part of any figure)
            self.ns_per_ws_byte = max(0.01, 0.5 * self.ns_per_ws_byte + 0.5 * map_ns / ws)
        d0 = docs[0]
        detail = {"runs_execs_per_s": [round(r, 1) for r in rates], "inputs": n, "rounds": rounds,
                  "used_keys": d0.get("used_keys"), "covered_slots": d0.get("covered_slots"),
                  "overflow_keys": d0.get("overflow_keys"), "kernel_variant": d0.get("kernel_variant"),
                  "hugepage_advised": d0.get("hugepage_advised")}
        if load is not None:
            detail.update({"raw_execs_per_s": round(raw, 1), "reference_execs_per_s": [round(r, 1) for r in refs],
                           "load_factor": round(load, 4)})
        return Measurement(execs_per_s=eps, source="replay", detail=detail)
