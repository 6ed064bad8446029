"""The recommendation, one typed document: ``recommendation.json``, written by the stage that decided
(``autotune tune`` beside ``report.json``, ``autotune race`` / ``autotune run`` beside ``race.json``) and
read by preflight, validate and ``autotune run --json`` through :func:`load_recommendation`.

It says which stage decided, the configuration it recommends (:class:`~autotune.configuration.Configuration`)
and why in one line, the env files written beside it (what the fuzzer loads), the stage's evidence document
(report.json or race.json: every trial behind the choice), and what the checks of the recommendation need
from that evidence: the probe it was made from, the collision limit it was made under, the execs/s tune's
replay recorded per configuration, the host profile it was made on, the compilers.

Directories written before this document existed hold only race.json or report.json:
:func:`derive_recommendation` makes the same Recommendation from them (the stages write it with the same
builders, :func:`from_tune` and :func:`from_race`), so an old directory reads as a new one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from autotune.configuration import CC_AUTOTUNE, Configuration
from autotune.emit.names import AUTOTUNE_RUN_ENV, RACE_ENV_FILES, TUNE_ENV_FILES
from autotune.errors import DocumentError
from autotune.mappoint import MapPoint
from autotune.profile.model import HostProfile
from autotune.race.document import RACE_JSON
from autotune.tune.defaults import DEFAULT_MAX_COLLISION_RATE
from autotune.tune.result import FILE_NAME as REPORT_JSON

if TYPE_CHECKING:
    from autotune.race.document import RaceOutcome
    from autotune.tune.result import TuneResult

SCHEMA_VERSION = 1
KIND = "recommendation"
RECOMMENDATION_JSON = "recommendation.json"
STAGE_TUNE, STAGE_RACE = "tune", "race"
EVIDENCE = {STAGE_TUNE: REPORT_JSON, STAGE_RACE: RACE_JSON}
TUNE_REASON = "tune's replay-based choice: the best score under the collision limit, measured by replaying the probe's corpus"


@dataclass(frozen=True)
class RecordedExecs:
    """The execs/s tune's replay recorded for one configuration (metric, layout, hash slots, counter width)."""

    config: MapPoint
    execs_per_s: float

    def to_dict(self) -> dict[str, Any]:
        return {**self.config.to_tune_dict(), "execs_per_s": self.execs_per_s}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "RecordedExecs":
        return cls(config=MapPoint.from_dict(dict(d)), execs_per_s=float(d["execs_per_s"]))


@dataclass(frozen=True)
class Recommendation:
    """What to fuzz with, who decided it and on what evidence (module doc)."""

    stage: str  # "tune" or "race"
    configuration: Configuration  # the recommended configuration (a race portfolio's: the one it tuned)
    is_default: bool  # AFL++'s default (afl-clang-fast, no variables)
    reason: str  # one line: why this one
    env_files: tuple[str, ...]  # the env files written beside this document (names in the directory)
    evidence: str  # the stage's own document beside this one: report.json or race.json
    probe_dir: str | None = None  # the probe it was made from (as recorded: a relative path is tune's)
    tune_dir: str | None = None  # the race's: tune's output, its prior
    max_collision_rate: float = DEFAULT_MAX_COLLISION_RATE  # the collision limit it was made under
    recorded_execs: tuple[RecordedExecs, ...] = ()  # tune's replay, per configuration, first record first
    host: HostProfile | None = None  # the host profile it was made on
    compilers: dict | None = None  # the clang behind afl-clang-fast and autotune cc (the race records it)
    schema_version: int = SCHEMA_VERSION

    def recorded_execs_per_s(self, config: MapPoint) -> float | None:
        """The execs/s tune recorded for ``config`` (TuneResult.recorded_execs_per_s); None when not recorded."""
        return next((r.execs_per_s for r in self.recorded_execs if r.config == config), None)

    def probe_path(self, base: Path) -> Path | None:
        """The probe directory: a relative one is tune's, relative to where tune ran when it is there
        (usually here), else to the recommendation's directory ``base``."""
        if not self.probe_dir:
            return None
        p = Path(self.probe_dir)
        if p.is_absolute():
            return p
        return p.resolve() if p.is_dir() else (Path(base) / p).resolve()

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "kind": KIND, "stage": self.stage,
                "configuration": self.configuration.to_compare_dict(), "is_default": self.is_default,
                "reason": self.reason, "env_files": list(self.env_files), "evidence": self.evidence,
                "probe_dir": self.probe_dir, "tune_dir": self.tune_dir, "max_collision_rate": self.max_collision_rate,
                "recorded_execs": [r.to_dict() for r in self.recorded_execs],
                "host": self.host.to_dict() if self.host else None, "compilers": self.compilers}

    @classmethod
    def from_dict(cls, d: Any, *, path: str | Path = f"<{RECOMMENDATION_JSON}>") -> "Recommendation":
        """The document; DocumentError (naming the fix) when it is of another schema version or malformed."""
        fix = "re-run the stage that wrote it (`autotune run`, `autotune race` or `autotune tune`) with this autotune"
        if not isinstance(d, dict) or d.get("kind") != KIND:
            raise DocumentError(path, "not a recommendation document (a JSON object of kind 'recommendation')",
                                fix=fix)
        if d.get("schema_version") != SCHEMA_VERSION:
            raise DocumentError(path, f"schema_version {d.get('schema_version')!r} is not supported (this autotune "
                                      f"reads version {SCHEMA_VERSION})", field="schema_version", fix=fix)
        try:
            stage = str(d["stage"])
            if stage not in EVIDENCE:
                raise ValueError(f"stage {stage!r} is neither {STAGE_TUNE!r} nor {STAGE_RACE!r}")
            is_default = bool(d["is_default"])
            return cls(stage=stage, configuration=replace(Configuration.from_dict(d["configuration"]),
                                                          is_default=is_default),
                       is_default=is_default, reason=str(d["reason"]),
                       env_files=tuple(str(f) for f in d["env_files"]), evidence=str(d["evidence"]),
                       probe_dir=d.get("probe_dir"), tune_dir=d.get("tune_dir"),
                       max_collision_rate=float(d["max_collision_rate"]),
                       recorded_execs=tuple(RecordedExecs.from_dict(r) for r in d.get("recorded_execs") or ()),
                       host=HostProfile.from_dict(d["host"], path=path) if d.get("host") else None,
                       compilers=d.get("compilers") or None)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise DocumentError(path, f"a malformed recommendation document ({type(exc).__name__}: {exc})",
                                fix=fix) from exc


def recorded_execs_of(result: "TuneResult") -> tuple[RecordedExecs, ...]:
    """tune's recorded execs/s per configuration, in TuneResult.recorded_execs_per_s's order (the best,
    the no-rebuild best, then the trials), each configuration once."""
    out: dict[MapPoint, RecordedExecs] = {}
    for ev in (result.best, result.no_rebuild_best, *(t.evaluation for t in result.trials)):
        if ev is not None:
            out.setdefault(ev.config, RecordedExecs(config=ev.config, execs_per_s=ev.execs_per_s))
    return tuple(out.values())


def from_tune(result: "TuneResult", *, run_vars: Mapping[str, str], env_files: tuple[str, ...]) -> Recommendation:
    """tune's recommendation: its best configuration on our runtime (``run_vars``: autotune-run.env's
    variables; ``env_files``: the env files emit wrote)."""
    b = result.best_config
    desc = f"{b.metric}, {b.layout}, {b.map_slots} slots, {b.width_bits}-bit counters (autotune cc, our runtime)"
    config = Configuration.of(name=b.key(), cc_kind=CC_AUTOTUNE, run_vars=run_vars, files=env_files,
                              description=desc)
    probe = result.inputs.probe_dir
    return Recommendation(stage=STAGE_TUNE, configuration=config, is_default=False, reason=TUNE_REASON,
                          env_files=env_files, evidence=REPORT_JSON, probe_dir=str(probe) if probe else None,
                          max_collision_rate=result.settings.max_collision_rate,
                          recorded_execs=recorded_execs_of(result), host=result.host)


def from_race(outcome: "RaceOutcome", *, env_files: tuple[str, ...], tune: "TuneResult | None") -> Recommendation:
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
    from autotune.tune.result import load_tune_result

    if not tune_dir or not (Path(tune_dir) / REPORT_JSON).is_file():
        return None
    return load_tune_result(Path(tune_dir) / REPORT_JSON)


def _present(path: Path, names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(n for n in names if (path / n).is_file())


def derive_recommendation(path: Path) -> Recommendation:
    """The Recommendation of a directory written before recommendation.json existed: from race.json
    (and tune's report.json it names) or, without one, from report.json and autotune-run.env."""
    from autotune.preflight.envfile import read_env_file
    from autotune.race.document import load_race_document
    from autotune.tune.result import load_tune_result

    path = Path(path)
    if (path / RACE_JSON).is_file():
        outcome = load_race_document(path / RACE_JSON)
        return from_race(outcome, env_files=_present(path, RACE_ENV_FILES), tune=tune_beside(outcome.tune_dir))
    if not (path / REPORT_JSON).is_file():
        raise DocumentError(path / RECOMMENDATION_JSON, "file not found (nor race.json or report.json beside it)",
                            fix="pass the race directory of `autotune run` (OUT/race, or `autotune race --out`) or "
                                "the --out directory of `autotune tune`")
    result = load_tune_result(path / REPORT_JSON)
    run_env = path / AUTOTUNE_RUN_ENV
    run_vars = read_env_file(run_env).values if run_env.is_file() else {}
    return from_tune(result, run_vars=run_vars, env_files=_present(path, TUNE_ENV_FILES))


def load_recommendation(path: str | Path) -> Recommendation:
    """DIR/recommendation.json, typed; in a directory written before it existed, the same derived from
    race.json or report.json (:func:`derive_recommendation`). DocumentError (exit 1, naming the fix) when
    it is missing, corrupt or of another schema version."""
    from autotune.io import read_json

    path = Path(path)
    if not path.is_dir():
        raise DocumentError(path, "not a directory",
                            fix="pass the race directory of `autotune run` (OUT/race) or the --out of `autotune tune`")
    file = path / RECOMMENDATION_JSON
    if not file.is_file():
        return derive_recommendation(path)
    return Recommendation.from_dict(read_json(file), path=file)
