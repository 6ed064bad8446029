"""The recommendation, as validate and preflight read it: the race's directory (``autotune run``'s
``race/``, ``autotune race --out``), or the tuned output directory of ``autotune tune``.

The race's directory holds ``race.json`` (the recommendation with every trial's figures and the
search's history, which names the probe, tune's report and the limits) and the env files of the
recommendation: ``afl-build.env`` + ``afl-run.env`` always (AFL++'s default), ``autotune-build.env``
+ ``autotune-run.env`` when our runtime is recommended. tune's directory is read as before:

Files (docs/DESIGN.md "The tuned directory"): ``afl-build.env`` (afl-cc), ``afl-run.env``
(afl-fuzz), ``autotune-run.env`` (our runtime under the stock afl-fuzz), ``report.json``.
The configuration itself is read from the env files (they are what the fuzzer loads), through
autotune.runtime.config as the runtime reads it; ``report.json`` loads as the typed
:class:`~autotune.tune.result.TuneResult` (its schema version checked), for the probe directory
it was tuned from, the collision limit it was tuned under, the execs/s it recorded per
configuration and the host profile it was tuned on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autotune.errors import DocumentError
from autotune.preflight.envfile import EnvFile, read_env_file
from autotune.race.document import RACE_JSON, RaceOutcome, load_race_document
from autotune.runtime.config import AFL_DEFAULT_MAP_SLOTS, METRIC_TABLE, RuntimeConfig, RuntimeConfigError
from autotune.tune.result import TuneResult, load_tune_result

BUILD_ENV, RUN_ENV, AUTOTUNE_ENV, REPORT = "afl-build.env", "afl-run.env", "autotune-run.env", "report.json"
AUTOTUNE_BUILD_ENV, RACE = "autotune-build.env", RACE_JSON
# preflight accepts a counter-overflow share up to DEFAULT_MAX_COUNTER_OVERFLOW (autotune.tune.defaults),
# or 1.25x the share the tuned probe saw, whichever is larger: "still fits" means no worse than what was tuned.
TUNED_OVERFLOW_SLACK = 1.25
# How far one target's overflow share moves between short probes: 60-s probes of libyaml by four
# `autotune run`s (benchmarks/results/README.md, 2026-11-26) put 7.6-10.2 % of edge keys over 8 bits,
# 5.9-9.0 % of caller keys (up to 1.52x between runs); preflight's probe is shorter. A share above
# the limit but within this factor of it is a warning (a longer probe tells), beyond it an error.
PROBE_OVERFLOW_SPREAD = 2.0
AFL_HASHED_MAP_SLOTS = AFL_DEFAULT_MAP_SLOTS  # AFL++'s map for CLASSIC/NGRAM/CTX (autotune.runtime.config)
AFL_GUARD_MODES = ("PCGUARD", "LTO", "")  # guard-numbered modes: collision-free, map = guards


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
    report: TuneResult | None  # tune's report (None: a race run without tune)
    probe_dir: Path | None
    race: RaceOutcome | None = None  # race.json, typed, when DIR is the race's
    autotune_build_env: EnvFile | None = None

    @property
    def kind(self) -> str:
        return "race" if self.race is not None else "tune"

    @property
    def host(self):
        """The host profile the recommendation was made on (None when not recorded)."""
        from autotune.profile.model import HostProfile

        if self.race is not None and self.race.host:
            return HostProfile.from_dict(self.race.host, path=self.path / RACE)
        return self.report.host if self.report is not None else None

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
        if self.race is not None:
            return self.race.max_collision_rate
        return self.report.settings.max_collision_rate

    def to_dict(self) -> dict:
        return {"path": str(self.path), "probe_dir": str(self.probe_dir) if self.probe_dir else None,
                "afl_build_env": self.build_env.values, "afl_run_env": self.run_env.values,
                "autotune_run_env": self.autotune_env.values if self.autotune_env else None}


def load_tuned(path: Path) -> TunedDir:
    """Read a race or tuned directory; DocumentError (exit 1) when a file is missing or corrupt."""
    path = Path(path).resolve()
    if not path.is_dir():
        raise DocumentError(path, "not a directory",
                            fix="pass the race directory of `autotune run` (OUT/race) or the --out of `autotune tune`")
    if (path / RACE).is_file():
        return _load_race_dir(path)
    if not (path / REPORT).is_file():
        raise DocumentError(path / REPORT, "file not found",
                            fix=f"pass the --out directory of `autotune tune` (it holds {REPORT} and the env files)")
    report = load_tune_result(path / REPORT)
    build, run = read_env_file(path / BUILD_ENV), read_env_file(path / RUN_ENV)
    at = read_env_file(path / AUTOTUNE_ENV) if (path / AUTOTUNE_ENV).exists() else None
    probe_dir = report.inputs.probe_dir
    if probe_dir is not None and not probe_dir.is_absolute():
        # a relative probe path: relative to where tune ran (usually here), else to DIR
        probe_dir = probe_dir.resolve() if probe_dir.is_dir() else (path / probe_dir).resolve()
    tuned = TunedDir(path=path, build_env=build, run_env=run, autotune_env=at, report=report, probe_dir=probe_dir)
    if at is not None:
        runtime_config(at)  # validate now: a corrupt file is a "could not run"
    return tuned


def _load_race_dir(path: Path) -> TunedDir:
    doc = load_race_document(path / RACE)
    report = None
    tune_dir = doc.tune_dir
    if tune_dir and (Path(tune_dir) / REPORT).is_file():
        report = load_tune_result(Path(tune_dir) / REPORT)
    for name in (BUILD_ENV, RUN_ENV):
        if not (path / name).is_file():
            raise DocumentError(path / name, "file not found",
                                fix="re-run `autotune race` (it writes the recommendation's env files beside race.json)")
    build, run = read_env_file(path / BUILD_ENV), read_env_file(path / RUN_ENV)
    at = read_env_file(path / AUTOTUNE_ENV) if (path / AUTOTUNE_ENV).exists() else None
    abuild = read_env_file(path / AUTOTUNE_BUILD_ENV) if (path / AUTOTUNE_BUILD_ENV).exists() else None
    probe_dir = Path(doc.probe_dir) if doc.probe_dir else None
    tuned = TunedDir(path=path, build_env=build, run_env=run, autotune_env=at, report=report, probe_dir=probe_dir,
                     race=doc, autotune_build_env=abuild)
    if at is not None:
        runtime_config(at)
    return tuned
