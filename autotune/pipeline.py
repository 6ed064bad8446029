"""The main job: profile this host, probe the target, tune its map, race the candidates in afl-fuzz.

One call runs the stages in order, each writing its own versioned output under ``out_dir``
(``host-profile.toml``, ``probe/``, ``tune/``, ``race/``), so any stage can be re-run alone
afterwards. The order is this module's: the race's budget and seeds are checked before anything
runs, the target is built for the probe, then profile -> probe -> tune -> race; the CLI
(autotune/cli/run.py) parses the options into the stages' typed settings (:class:`Target`,
autotune.probe.options.ProbeSettings, autotune.tune.options.TuneSettings,
autotune.race.options.RaceSettings, :class:`PipelineProgress`) and prints the typed result.

The race (autotune.race) is what the recommendation rests on: AFL++'s default and our runtime's
metrics, sized from the probe's census, in the real afl-fuzz, measured by one yardstick; tune's
replay-based choice stays in ``tune/`` (and is the recommendation only without afl-fuzz).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager

from autotune.afl import base_env, find_tool
from autotune.errors import AutotuneError, ToolMissingError
from autotune.filenames import ENV_FILES
from autotune.probe.defaults import DEFAULT_PROBE_TIME_S
from autotune.probe.options import ProbeSettings
from autotune.profile import detect_host, save_profile
from autotune.race.options import RaceInputs, RaceProgress, RaceSettings
from autotune.race.stage import RaceOutcome, check_budget, check_request, race_target
from autotune.target import probe_harness
from autotune.tune.options import TuneSettings

if TYPE_CHECKING:
    from autotune.probe.result import ProbeResult
    from autotune.recommendation import Recommendation
    from autotune.target.recipe import TargetSpec
    from autotune.tune.result import TuneResult


@dataclass(frozen=True)
class Target:
    """The main job's target: a ``harness`` binary built with autotune cc (which every contestant then
    runs) or the recipe ``spec`` (built by each contestant's compiler), its seeds ``corpus`` (the race
    needs them), and whether it is the bundled ``demo`` (as probe.json records)."""

    harness: Path | None = None
    spec: "TargetSpec | None" = None
    corpus: Path | None = None
    demo: bool = False


@dataclass(frozen=True)
class PipelineProgress:
    """Who hears the main job (each None: nobody): ``on_stage`` a line as each stage starts, ``on_probe``
    the probe's progress, ``notice`` one-line messages; ``tune_run`` runs tune with its progress shown
    (autotune.tune.api.tune_probe_dir's ``run``), ``race_board`` makes the context
    (autotune.cli.board.TrialBoard) whose ``race_progress()`` hears the race as it runs."""

    on_stage: Callable[[str], None] | None = None
    on_probe: Callable[[Any], None] | None = None
    notice: Callable[[str], None] | None = None
    tune_run: Callable[..., Any] | None = None
    race_board: Callable[[], ContextManager[Any]] | None = None


@dataclass(frozen=True)
class PipelineResult:
    out_dir: Path
    host_profile: Path
    probe_dir: Path
    tune_dir: Path
    probe: "ProbeResult"
    tune: "TuneResult"
    written: list[Path]
    race_dir: Path | None = None
    race: "RaceOutcome | None" = None  # None when no race ran (--no-race, or afl-fuzz missing)
    document: "Recommendation | None" = None  # recommendation.json of recommendation_dir, as written

    @property
    def recommendation_dir(self) -> Path:
        """Where the recommendation's env files and document are: the race's directory, or tune's
        when no race ran (afl-fuzz missing, --no-race)."""
        return self.race_dir if self.race is not None and self.race_dir is not None else self.tune_dir

    def env_files(self) -> dict[str, Path]:
        d = self.recommendation_dir
        return {n: d / n for n in ENV_FILES if (d / n).is_file()}

    def recommendation(self) -> dict[str, Any]:
        """The one recommendation: the race's (afl-fuzz's verdict), else tune's replay-based choice."""
        if self.race is not None:
            r = self.race.race
            chosen = r.contestant(r.decision.recommended)
            return {"source": "race", "name": chosen.name, "is_default": r.decision.is_default,
                    "cc_kind": chosen.cc_kind, "build": chosen.build_vars, "settings": chosen.env,
                    "description": chosen.description, "reason": r.decision.reason}
        return {"source": "tune", "name": self.tune.best_config.key(), "is_default": False, "cc_kind": "autotune",
                "config": self.tune.best_config.to_tune_dict(),
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
            "tune_best": self.tune.best_config.to_tune_dict(),
            "race_dir": str(self.race_dir) if self.race_dir else None,
            "race": self.race.race.decision.to_dict() if self.race else None,
            **({"recommendation": self.document.to_dict()} if self.document is not None else {}),
        }


def run_pipeline(*, out_dir: Path, target: Target, probe: ProbeSettings = ProbeSettings(),
                 tune: TuneSettings = TuneSettings(), race: RaceSettings | None = None,
                 progress: PipelineProgress = PipelineProgress()) -> PipelineResult:
    """Run profile -> probe -> tune [-> race] for ``target``, each stage by its settings.

    ``race``: the race's settings, or None for no race (without afl-fuzz installed none runs either).
    The afl-fuzz instances of the campaign are ``tune.jobs`` (tune sizes maps for them) and
    ``race.instances`` (the race races portfolios of them); the CLI sets both, and the seed and the
    collision limit of every stage, from its one option each."""
    from autotune.emit.write import emit_all  # lazy: numpy
    from autotune.probe.campaign import run_probe  # lazy: numpy
    from autotune.tune.api import tune_probe_dir  # lazy: numpy

    harness, spec, corpus_dir, notice = target.harness, target.spec, target.corpus, progress.notice
    if probe.time_s <= 0:
        raise AutotuneError(f"probe time {probe.time_s} s is not positive", fix=f"pass --probe-time {DEFAULT_PROBE_TIME_S:g}")
    stage = progress.on_stage or (lambda _s: None)
    if race is not None:  # a request the race would refuse is refused before the build and the probe
        check_request(strategy=race.strategy, judge=race.judge, spec=spec, binary=harness)
        check_budget(race)
    if spec is not None:  # a real library's build takes minutes: say what is going on
        stage("build: the target for the probe (autotune cc, full build kind; cached once built)")
    binary = probe_harness(harness=harness, spec=spec)
    if race is not None and corpus_dir is None:
        raise AutotuneError("the race in afl-fuzz needs seeds", fix="pass --corpus DIR (or --no-race)")
    if race is not None and not _afl_fuzz_installed():
        race = None  # tune's replay-based choice stands (the CLI says so)
    out_dir = Path(out_dir).resolve()

    stage("profile: reading this host's caches")
    host = detect_host()
    host_path = save_profile(host, out_dir / "host-profile.toml")

    stage(f"probe: {probe.time_s:g} s campaign on {binary.name}, census of every metric")
    probe_dir = out_dir / "probe"
    probed = run_probe(binary=binary, out_dir=probe_dir, corpus_dir=corpus_dir, settings=probe, demo=target.demo,
                       on_progress=progress.on_probe)

    stage(f"tune: Bayesian optimisation, {tune.calls} calls, measured by replaying the probe's corpus")
    tune_dir = out_dir / "tune"
    tuned = tune_probe_dir(probe_dir=probe_dir, probe=probed, out_dir=tune_dir, host=host, settings=tune,
                           run=progress.tune_run, notice=notice)
    written = emit_all(result=tuned, out_dir=tune_dir)
    race_dir = outcome = None
    if race is not None:
        stage("race: configurations judged in afl-fuzz against AFL++'s default, paired trials, one yardstick")
        race_dir = out_dir / "race"
        with (progress.race_board() if progress.race_board else nullcontext()) as board:
            heard = board.race_progress() if board is not None else RaceProgress(notice=notice)
            # on the probe's census and tune's evaluations; with a binary alone (no recipe), every
            # contestant runs that binary
            inputs = RaceInputs(out_dir=race_dir, corpus=corpus_dir, spec=spec, binary=None if spec else binary,
                                probe_dir=probe_dir, tune_evaluations=tuple(t.evaluation for t in tuned.trials),
                                tune_dir=tune_dir, host=host)
            outcome = race_target(inputs=inputs, settings=race, progress=heard)
    from autotune.preflight.tuned import load_recommendation  # lazy: numpy

    document = load_recommendation(race_dir if outcome is not None else tune_dir)  # what preflight will read
    return PipelineResult(out_dir=out_dir, host_profile=host_path, probe_dir=probe_dir, tune_dir=tune_dir,
                          probe=probed, tune=tuned, written=list(written), race_dir=race_dir, race=outcome,
                          document=document)


def _afl_fuzz_installed() -> bool:
    try:
        find_tool("afl-fuzz", env=base_env())
    except ToolMissingError:
        return False
    return True
