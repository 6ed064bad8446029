"""The race's document, ``race.json``: the race (every rung's trials and the decision), the yardstick,
the binaries raced, and what the recommendation was made from (probe, tune's output, the collision
limit, the host). Written by the race stage, read back typed by preflight and validate
(:func:`load_race_document`); files written before a field was added read with its default."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from autotune.configuration import Configuration
from autotune.errors import DocumentError
from autotune.filenames import RACE_JSON, REPORT_JSON
from autotune.io import read_json
from autotune.profile.model import HostProfile
from autotune.race.core import RaceResult
from autotune.recommendation import STAGE_RACE, Recommendation, recorded_execs_of
from autotune.tune.defaults import DEFAULT_MAX_COLLISION_RATE

if TYPE_CHECKING:
    from autotune.tune.result import TuneResult

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RaceOutcome:
    """The race, the yardstick it used, the binaries raced and the files written."""

    race: RaceResult
    yardstick: dict
    binaries: dict[str, str]
    target: dict
    dropped: tuple[str, ...]  # candidates left out to fit the budget
    written: tuple[str, ...]
    probe_dir: str | None = None  # the probe whose census sized the maps
    tune_dir: str | None = None  # tune's output, the search's prior
    max_collision_rate: float = DEFAULT_MAX_COLLISION_RATE
    host: dict | None = None  # the host profile (HostProfile.to_dict) the race ran on
    compilers: dict | None = None  # the clang behind afl-clang-fast and autotune cc (autotune.llvm.compilers)

    @property
    def recommended(self) -> Configuration:
        """The configuration the race recommends (a portfolio's: the one it tuned, as its env files hold)."""
        return self.race.contestant(self.race.decision.recommended).tuned

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "race": self.race.to_dict(), "yardstick": self.yardstick,
                "binaries": dict(self.binaries), "target": self.target, "dropped": list(self.dropped),
                "written": list(self.written), "probe_dir": self.probe_dir, "tune_dir": self.tune_dir,
                "max_collision_rate": self.max_collision_rate, "host": self.host,
                **({"compilers": self.compilers} if self.compilers else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RaceOutcome":
        return cls(race=RaceResult.from_dict(d["race"]), yardstick=dict(d.get("yardstick") or {}),
                   binaries={str(k): str(v) for k, v in (d.get("binaries") or {}).items()},
                   target=dict(d.get("target") or {}), dropped=tuple(d.get("dropped") or ()),
                   written=tuple(d.get("written") or ()), probe_dir=d.get("probe_dir"), tune_dir=d.get("tune_dir"),
                   max_collision_rate=float(d.get("max_collision_rate", DEFAULT_MAX_COLLISION_RATE)),
                   host=d.get("host") or None, compilers=d.get("compilers") or None)


def load_race_document(path: Path) -> RaceOutcome:
    """Read ``race.json``; DocumentError (exit 1) when it is missing, of another schema or malformed."""
    doc = read_json(path)
    fix = "re-run `autotune run` or `autotune race` with this version of autotune"
    if not isinstance(doc, dict) or doc.get("schema_version") != SCHEMA_VERSION or not isinstance(doc.get("race"), dict):
        raise DocumentError(path, f"not a race document of schema_version {SCHEMA_VERSION}", fix=fix)
    try:
        return RaceOutcome.from_dict(doc)
    except (KeyError, TypeError, ValueError) as exc:
        raise DocumentError(path, f"a malformed race document ({exc!r})", fix=fix) from exc


def from_race(outcome: RaceOutcome, *, env_files: tuple[str, ...], tune: "TuneResult | None") -> Recommendation:
    """The race's recommendation (``env_files``: those written beside race.json; ``tune``: tune's result
    the race started from, for its recorded execs/s and, when the race recorded none, its host)."""
    d = outcome.race.decision
    config = replace(outcome.recommended, files=env_files, is_default=d.is_default)
    host = HostProfile.from_dict(outcome.host, path=RACE_JSON) if outcome.host else (tune.host if tune else None)
    return Recommendation(stage=STAGE_RACE, configuration=config, is_default=d.is_default, reason=d.reason,
                          env_files=env_files, evidence=RACE_JSON, probe_dir=outcome.probe_dir,
                          tune_dir=outcome.tune_dir, max_collision_rate=outcome.max_collision_rate,
                          recorded_execs=recorded_execs_of(tune) if tune else (), host=host,
                          compilers=outcome.compilers)




def tune_beside(tune_dir: str | Path | None) -> "TuneResult | None":
    """tune's result in ``tune_dir`` (the race's prior), None when there is none."""
    from autotune.tune.result import load_tune_result  # lazy: numpy

    if not tune_dir or not (Path(tune_dir) / REPORT_JSON).is_file():
        return None
    return load_tune_result(Path(tune_dir) / REPORT_JSON)
