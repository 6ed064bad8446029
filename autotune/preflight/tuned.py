"""The recommendation, as validate and preflight read it: the race's directory (``autotune run``'s
``race/``, ``autotune race --out``), or the tuned output directory of ``autotune tune``; either way the
directory of ``recommendation.json`` (autotune.recommendation), read here with :func:`load_recommendation`,
which derives it from race.json or report.json in a directory written before it existed).

Files (docs/DESIGN.md "The tuned directory"): ``recommendation.json``, the stage's evidence document
(``race.json`` or ``report.json``) and the env files of the recommendation: ``afl-build.env`` (afl-cc)
and ``afl-run.env`` (afl-fuzz) always, ``autotune-run.env`` (our runtime under the stock afl-fuzz) when
our runtime is recommended (tune always writes one), ``autotune-build.env`` (autotune cc's build kind) when
the race recommends our runtime. The configuration itself is read from the env files (they are what the
fuzzer loads), through autotune.runtime.config as the runtime reads it; the recommendation gives the probe
directory it was made from, the collision limit it was made under, the execs/s tune recorded per
configuration and the host profile it was made on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autotune.emit.write import from_tune
from autotune.envfile import EnvFile, read_env_file
from autotune.errors import DocumentError
from autotune.filenames import AFL_BUILD_ENV, AFL_RUN_ENV, AUTOTUNE_BUILD_ENV, AUTOTUNE_RUN_ENV
from autotune.filenames import RACE_ENV_FILES, RACE_JSON, RECOMMENDATION_JSON, REPORT_JSON, TUNE_ENV_FILES
from autotune.io import read_json
from autotune.race.document import from_race, load_race_document, tune_beside
from autotune.recommendation import Recommendation
from autotune.runtime.config import RuntimeConfig
from autotune.tune.result import load_tune_result
from autotune.vocabulary import AFL_DEFAULT_MAP_SLOTS, METRIC_TABLE, RuntimeConfigError

# preflight accepts a counter-overflow share up to DEFAULT_MAX_COUNTER_OVERFLOW (autotune.tune.defaults),
# or 1.25x the share the tuned probe saw, whichever is larger: "still fits" means no worse than what was tuned.
TUNED_OVERFLOW_SLACK = 1.25
# How far one target's overflow share moves between short probes: 60-s probes of libyaml by four
# `autotune run`s (benchmarks/results/overflow-spread-2026-11-26.md) put 7.6-10.2 % of edge keys
# over 8 bits, 5.9-9.0 % of caller keys (up to 1.52x between runs); preflight's probe is shorter. A
# share above the limit but within this factor of it is a warning (a longer probe tells), beyond it
# an error.
PROBE_OVERFLOW_SPREAD = 2.0
AFL_HASHED_MAP_SLOTS = AFL_DEFAULT_MAP_SLOTS  # AFL++'s map for CLASSIC/NGRAM/CTX (autotune.vocabulary)
AFL_GUARD_MODES = ("PCGUARD", "LTO", "")  # guard-numbered modes: collision-free, map = guards


def _present(path: Path, names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(n for n in names if (path / n).is_file())


def derive_recommendation(path: Path) -> Recommendation:
    """The Recommendation of a directory written before recommendation.json existed: from race.json
    (and tune's report.json it names) or, without one, from report.json and autotune-run.env."""
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
    path = Path(path)
    if not path.is_dir():
        raise DocumentError(path, "not a directory",
                            fix="pass the race directory of `autotune run` (OUT/race) or the --out of `autotune tune`")
    file = path / RECOMMENDATION_JSON
    if not file.is_file():
        return derive_recommendation(path)
    return Recommendation.from_dict(read_json(file), path=file)


def afl_metric(build_env: dict[str, str]) -> str | None:
    """Our metric name for afl-cc's instrumentation settings (None for PCGUARD/LTO: guard-numbered)."""
    mode = build_env.get("AFL_LLVM_INSTRUMENT", "").upper()
    parts = [p for p in mode.replace(",", " ").replace("_", "-").split() if p]
    ngram = build_env.get("AFL_LLVM_NGRAM_SIZE")
    ctx_k = build_env.get("AFL_LLVM_CTX_K")
    for p in parts:
        if p.startswith("NGRAM-"):
            ngram = p.split("-", 1)[1]
        elif p.startswith("CTX-"):
            ctx_k = p.split("-", 1)[1]
    if ngram:
        return f"ngram-{int(ngram)}"
    if ctx_k:
        return "caller" if int(ctx_k) == 1 else f"ctx-{int(ctx_k)}"
    if "CALLER" in parts or build_env.get("AFL_LLVM_CALLER") == "1":
        return "caller"
    if "CTX" in parts or build_env.get("AFL_LLVM_CTX") == "1":
        return "ctx"
    if "CLASSIC" in parts or "AFL" in parts:
        return "edge"
    for spec in METRIC_TABLE:  # any other hashed metric of the registry, by its own afl-cc settings
        if spec.hashed and mode == spec.afl_instrument and all(build_env.get(k) == v for k, v in spec.afl_extra):
            return spec.name
    return None


def runtime_config(env: EnvFile) -> RuntimeConfig:
    """autotune-run.env's configuration, read as the runtime reads it (autotune.runtime.config:
    its defaults for unset variables, its checks and messages)."""
    try:
        return RuntimeConfig.from_env(env.values)
    except RuntimeConfigError as exc:
        raise DocumentError(env.path, exc.message, field=exc.variable,
                            fix=f"set {exc.variable} to {exc.valid}, or re-create the file with `autotune tune`") from exc


@dataclass(frozen=True)
class TunedDir:
    path: Path
    build_env: EnvFile
    run_env: EnvFile
    autotune_env: EnvFile | None
    recommendation: Recommendation
    probe_dir: Path | None
    autotune_build_env: EnvFile | None = None

    @property
    def kind(self) -> str:
        """The stage that decided: "race" or "tune"."""
        return self.recommendation.stage

    @property
    def host(self):
        """The host profile the recommendation was made on (None when not recorded)."""
        return self.recommendation.host

    @property
    def autotune_build_vars(self) -> dict[str, str]:
        """autotune cc's compile-time variables of the recommendation (autotune-build.env; none: the full kind)."""
        return dict(self.autotune_build_env.values) if self.autotune_build_env else {}

    @property
    def runtime(self) -> RuntimeConfig | None:
        return runtime_config(self.autotune_env) if self.autotune_env else None

    @property
    def afl_metric(self) -> str | None:
        return afl_metric(self.build_env.values)

    @property
    def max_collision_rate(self) -> float:
        """The collision limit the recommendation was made under."""
        return self.recommendation.max_collision_rate

    def to_dict(self) -> dict:
        return {"path": str(self.path), "probe_dir": str(self.probe_dir) if self.probe_dir else None,
                "afl_build_env": self.build_env.values, "afl_run_env": self.run_env.values,
                "autotune_run_env": self.autotune_env.values if self.autotune_env else None}


def load_tuned(path: Path) -> TunedDir:
    """Read a race or tuned directory (its recommendation and env files); DocumentError (exit 1) when a
    file is missing or corrupt."""
    path = Path(path).resolve()
    rec = load_recommendation(path)
    for name in (AFL_BUILD_ENV, AFL_RUN_ENV):
        if not (path / name).is_file():
            raise DocumentError(path / name, "file not found",
                                fix=f"re-run `autotune {rec.stage}` (it writes the recommendation's env files beside "
                                    f"{rec.evidence})")
    build, run = read_env_file(path / AFL_BUILD_ENV), read_env_file(path / AFL_RUN_ENV)
    # our runtime's files, when the recommendation wrote them (a stale one of an earlier run is not read)
    at, abuild = (read_env_file(path / name) if name in rec.env_files else None
                  for name in (AUTOTUNE_RUN_ENV, AUTOTUNE_BUILD_ENV))
    tuned = TunedDir(path=path, build_env=build, run_env=run, autotune_env=at, recommendation=rec,
                     probe_dir=rec.probe_path(path), autotune_build_env=abuild)
    if at is not None:
        runtime_config(at)  # validate now: a corrupt file is a "could not run"
    return tuned
