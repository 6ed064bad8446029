"""The main job: profile this host, probe the target, tune its map, race the candidates in afl-fuzz.

One call runs the stages in order, each writing its own versioned output under ``out_dir``
(``host-profile.toml``, ``probe/``, ``tune/``, ``race/``), so any stage can be re-run alone
afterwards. The race (autotune.race) is what the recommendation rests on: AFL++'s default and our
runtime's metrics, sized from the probe's census, in the real afl-fuzz, measured by one yardstick;
tune's replay-based choice stays in ``tune/`` (and is the recommendation only without afl-fuzz).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from autotune.errors import AutotuneError
from autotune.tune.defaults import DEFAULT_CALLS, DEFAULT_MAX_COLLISION_RATE


@dataclass(frozen=True)
class PipelineResult:
    out_dir: Path
    host_profile: Path
    probe_dir: Path
    tune_dir: Path
    probe: Any  # ProbeResult
    tune: Any  # TuneResult
    written: list[Path]
    race_dir: Path | None = None
    race: Any = None  # RaceOutcome, or None when no race ran

    @property
    def recommendation_dir(self) -> Path:
        """Where the recommendation's env files and document are: the race's directory, or tune's
        when no race ran (afl-fuzz missing, --no-race)."""
        return self.race_dir if self.race is not None and self.race_dir is not None else self.tune_dir

    def env_files(self) -> dict[str, Path]:
        names = ("autotune-build.env", "autotune-run.env", "afl-build.env", "afl-run.env", "afl-build-rebuilt.env")
        d = self.recommendation_dir
        return {n: d / n for n in names if (d / n).is_file()}

    def recommendation(self) -> dict[str, Any]:
        """The one recommendation: the race's (afl-fuzz's verdict), else tune's replay-based choice."""
        if self.race is not None:
            r = self.race.race
            chosen = r.contestant(r.decision.recommended)
            return {"source": "race", "name": chosen.name, "is_default": r.decision.is_default,
                    "cc_kind": chosen.cc_kind, "build": chosen.build_vars, "settings": chosen.env,
                    "description": chosen.description, "reason": r.decision.reason}
        return {"source": "tune", "name": self.tune.best_config.key(), "is_default": False, "cc_kind": "autotune",
                "config": self.tune.best_config.to_dict(),
                "reason": "tune's replay-based choice: no race in afl-fuzz ran (afl-fuzz missing or --no-race)"}

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": 2,
            "out_dir": str(self.out_dir),
            "host_profile": str(self.host_profile),
            "probe_dir": str(self.probe_dir),
            "tune_dir": str(self.tune_dir),
            "recommendation_dir": str(self.recommendation_dir),
            "env_files": {k: str(v) for k, v in self.env_files().items()},
            "best": self.recommendation(),
            "tune_best": self.tune.best_config.to_dict(),
            "race_dir": str(self.race_dir) if self.race_dir else None,
            "race": self.race.race.decision.to_dict() if self.race else None,
        }


def run_pipeline(
    *,
    out_dir: Path,
    binary: Path,
    corpus_dir: Path | None,
    demo: bool = False,
    probe_time_s: float = 60.0,
    probe_engine: str = "havoc",
    max_execs: int | None = None,
    seed: int = 0,
    calls: int = DEFAULT_CALLS,
    max_collision_rate: float = DEFAULT_MAX_COLLISION_RATE,
    jobs: int = 1,
    timeout_ms: int = 1000,
    on_stage: Callable[[str], None] | None = None,
    on_probe_progress: Callable[[Any], None] | None = None,
    tune_run: Callable[..., Any] | None = None,
    notice: Callable[[str], None] | None = None,
    race: Callable[..., Any] | None = None,
) -> PipelineResult:
    """Run profile -> probe -> tune [-> race] for ``binary`` (a harness built with autotune cc).

    ``race``: called as ``race(out_dir=, probe_dir=, tune=, tune_dir=, host=, max_collision_rate=)`` after tune (autotune.race.stage.race_target
    with the target and budget bound), or None for no race."""
    from autotune.probe.campaign import run_probe
    from autotune.profile import detect_host, save_profile
    from autotune.emit.write import emit_all
    from autotune.tune.api import tune_probe_dir

    if probe_time_s <= 0:
        raise AutotuneError(f"probe time {probe_time_s} s is not positive", fix="pass --probe-time 60")
    out_dir = Path(out_dir).resolve()
    stage = on_stage or (lambda _s: None)

    stage("profile: reading this host's caches")
    host = detect_host()
    host_path = save_profile(host, out_dir / "host-profile.toml")

    stage(f"probe: {probe_time_s:g} s campaign on {binary.name}, census of every metric")
    probe_dir = out_dir / "probe"
    probe = run_probe(binary=binary, out_dir=probe_dir, corpus_dir=corpus_dir, time_s=probe_time_s,
                      max_execs=max_execs, seed=seed, timeout_ms=timeout_ms, demo=demo,
                      engine=probe_engine, on_progress=on_probe_progress)

    stage(f"tune: Bayesian optimisation, {calls} calls, measured by replaying the probe's corpus")
    tune_dir = out_dir / "tune"
    tune = tune_probe_dir(probe_dir=probe_dir, probe=probe, out_dir=tune_dir, host=host, calls=calls, seed=seed,
                          jobs=jobs, max_collision_rate=max_collision_rate, run=tune_run, notice=notice)
    written = emit_all(result=tune, out_dir=tune_dir)
    race_dir = outcome = None
    if race is not None:
        stage("race: configurations judged in afl-fuzz against AFL++'s default, paired trials, one yardstick")
        race_dir = out_dir / "race"
        outcome = race(out_dir=race_dir, probe_dir=probe_dir, tune=tune, tune_dir=tune_dir, host=host,
                       max_collision_rate=max_collision_rate)
    return PipelineResult(out_dir=out_dir, host_profile=host_path, probe_dir=probe_dir, tune_dir=tune_dir,
                          probe=probe, tune=tune, written=list(written), race_dir=race_dir, race=outcome)
