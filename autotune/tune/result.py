"""The tune document (report.json): inputs, space, objective settings, every trial, the choice.

:class:`TuneResult` holds typed parts (the choice as an :class:`Evaluation` of a ``MapPoint``, the
trials, the objective settings, the probe's facts, the host profile) and loads through
:meth:`TuneResult.from_dict` / :func:`load_tune_result`, which check the schema version. The
figures are held as report.json records them (rounded), so a result in memory and the same result
read back from its report.json are equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from autotune.errors import DocumentError
from autotune.filenames import REPORT_JSON
from autotune.io import read_json
from autotune.mappoint import MapPoint
from autotune.profile.model import HostProfile
from autotune.tune.inputs import TuneInputs
from autotune.tune.objective import Evaluation, ObjectiveSettings
from autotune.tune.optimise import Trial, calls_to_reach, convergence
from autotune.vocabulary import AFL_DEFAULT_MAP_SLOTS

SCHEMA_VERSION = 1
KIND = "tune"
FILE_NAME = REPORT_JSON


@dataclass(frozen=True)
class NoRebuildEvaluation(Evaluation):
    """The best point AFL++ as installed can build (flat, 64 KiB, 8-bit). An afl-cc build hashes
    with AFL++'s own hash: where the census measured its collision rate at 64 KiB, the score and
    feasibility under that rate are given too (much worse for ngram-N)."""

    afl_hash_collision_rate: float | None = None
    afl_score_bits: float | None = None
    afl_feasible: bool | None = None

    @property
    def chosen_score_bits(self) -> float:
        return self.score_bits if self.afl_score_bits is None else self.afl_score_bits

    @property
    def chosen_feasible(self) -> bool:
        return self.feasible if self.afl_feasible is None else self.afl_feasible

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        if self.afl_hash_collision_rate is not None:
            d.update({"afl_hash_collision_rate": round(self.afl_hash_collision_rate, 6),
                      "afl_score_bits": round(float(self.afl_score_bits or 0.0), 6), "afl_feasible": self.afl_feasible})
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "NoRebuildEvaluation":
        base = Evaluation.from_dict(d)
        afl = d.get("afl_hash_collision_rate")
        return cls(**{f.name: getattr(base, f.name) for f in fields(Evaluation)},
                   afl_hash_collision_rate=None if afl is None else float(afl),
                   afl_score_bits=None if afl is None else float(d["afl_score_bits"]),
                   afl_feasible=None if afl is None else bool(d["afl_feasible"]))


@dataclass(frozen=True)
class TuneResult:
    target: str
    inputs: TuneInputs  # the probe's facts tune ran on
    space: dict[str, Any]  # SearchSpace.to_dict()
    settings: ObjectiveSettings
    backend: str
    calls: int
    seed: int
    trials: tuple[Trial, ...]  # in call order
    best: Evaluation
    no_rebuild_best: NoRebuildEvaluation | None  # best evaluated flat / 64 KiB / 8-bit (AFL++ as installed)
    measured: int
    cache_hits: int
    elapsed_s: float
    host: HostProfile | None = None
    curves: dict[str, Any] = field(default_factory=dict)  # for the plot/report: collision and cost curves
    confirmation: dict[str, Any] | None = None  # Confirmation.to_dict(): the repeats behind the choice
    schema_version: int = SCHEMA_VERSION

    @property
    def best_config(self) -> MapPoint:
        return self.best.config

    @property
    def probe_seed(self) -> int:
        """The block-id seed of the probe tune ran on (AUTOTUNE_SEED: keys match its census)."""
        return int(self.inputs.extra.get("probe_seed", 0))

    @property
    def needs_afl_rebuild(self) -> bool:
        """AFL++'s own CLASSIC/NGRAM/CTX instrumentation would need a map larger than 2^16."""
        return self.best_config.map_slots > AFL_DEFAULT_MAP_SLOTS

    def rebuild_note(self) -> str:
        """What an afl-cc build of the best needs. AFL++'s maps are flat: the afl-cc equivalent of a
        two-level map is a flat map of the same hash space (its index size)."""
        bc = self.best_config
        pow2 = bc.map_pow2
        what = (f"its index has 2^{pow2} entries, so an afl-cc build with {bc.metric} (AFL++'s maps are flat) "
                f"would need a flat 2^{pow2} map" if bc.layout == "twolevel"
                else f"an afl-cc build with {bc.metric} would need a 2^{pow2} map")
        return f"{what} (AFL++ rebuilt with MAP_SIZE_POW2={pow2})"

    def convergence(self) -> list[float]:
        return convergence(self.trials)

    def calls_to_best(self) -> int:
        return calls_to_reach(self.trials, self.best.score_bits)

    def recorded_execs_per_s(self, config: MapPoint) -> float | None:
        """The execs/s tune recorded for ``config``: the best's, the no-rebuild best's, else its first trial's."""
        for ev in (self.best, self.no_rebuild_best, *(t.evaluation for t in self.trials)):
            if ev is not None and ev.config == config:
                return ev.execs_per_s
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version, "kind": KIND, "target": self.target,
            "best": self.best.to_dict(), "no_rebuild_best": self.no_rebuild_best.to_dict() if self.no_rebuild_best else None,
            "needs_afl_rebuild": self.needs_afl_rebuild,
            "afl_map_size_pow2": self.best_config.map_pow2,
            "calls": self.calls, "seed": self.seed, "backend": self.backend, "measured": self.measured,
            "cache_hits": self.cache_hits, "elapsed_s": round(self.elapsed_s, 3),
            "calls_to_best": self.calls_to_best(), "convergence": [round(v, 6) for v in self.convergence()],
            "settings": self.settings.to_dict(), "space": self.space, "inputs": self.inputs.to_dict(),
            "trials": [t.to_dict() for t in self.trials],
            "curves": self.curves, "host": self.host.to_dict() if self.host else None, "confirmation": self.confirmation,
        }

    @classmethod
    def from_dict(cls, d: Any, *, path: str | Path = "<tune result>") -> "TuneResult":
        """Load report.json's document; DocumentError when it is of another schema version or malformed."""
        if not isinstance(d, dict):
            raise DocumentError(path, "expected a tune document (a JSON object)", fix="re-run `autotune tune`")
        if d.get("schema_version") != SCHEMA_VERSION:
            raise DocumentError(path, f"schema_version {d.get('schema_version')!r} is not supported (this autotune "
                                      f"reads version {SCHEMA_VERSION})", field="schema_version",
                                fix="re-create it with this version of autotune (`autotune tune`)")
        try:
            nr = d.get("no_rebuild_best")
            return cls(target=str(d["target"]), inputs=TuneInputs.from_dict(d["inputs"]), space=dict(d["space"]),
                       settings=ObjectiveSettings.from_dict(d["settings"]), backend=str(d["backend"]),
                       calls=int(d["calls"]), seed=int(d["seed"]),
                       trials=tuple(Trial.from_dict(t) for t in d["trials"]), best=Evaluation.from_dict(d["best"]),
                       no_rebuild_best=NoRebuildEvaluation.from_dict(nr) if nr else None,
                       measured=int(d["measured"]), cache_hits=int(d["cache_hits"]), elapsed_s=float(d["elapsed_s"]),
                       host=HostProfile.from_dict(d["host"], path=path) if d.get("host") else None,
                       curves=dict(d.get("curves") or {}), confirmation=d.get("confirmation"),
                       schema_version=int(d["schema_version"]))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DocumentError(path, f"incomplete or malformed tune result ({type(exc).__name__}: {exc})",
                                fix="re-run `autotune tune`") from exc


def load_tune_result(path: str | Path) -> TuneResult:
    """Read ``<dir>/report.json`` (or the report.json path given); DocumentError if missing, corrupt
    or of another schema version."""
    p = Path(path)
    file = p / FILE_NAME if p.is_dir() else p
    return TuneResult.from_dict(read_json(file), path=file)
