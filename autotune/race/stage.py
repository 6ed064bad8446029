"""The race as a stage: build each contestant, race them in the real afl-fuzz (autotune.trials),
write ``race.json`` / ``race.md`` and the env files of the recommendation.

Every trial is one afl-fuzz of ``afl-fuzz -V`` seconds pinned to a core, measured by one
yardstick for every contestant (autotune.trials.yardstick: AFL++'s PCGUARD build replayed over
everything the trial kept, or our exact edge census without afl-clang-fast).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from autotune import afl, llvm
from autotune.afl import base_env, find_tool
from autotune.bugs.race import OBJECTIVES
from autotune.bugs.yardstick import CAMPAIGN_ENV, check_seeds, require_canaries
from autotune.configuration import CC_AUTOTUNE
from autotune.errors import AutotuneError, ToolMissingError
from autotune.io import write_json_atomic, write_text_atomic
from autotune.profile import detect_host
from autotune.race.contestants import ALTERNATIVE_SECONDARIES, DEFAULT_KEYS, default_metrics, make_contestants
from autotune.race.core import (Contestant, RaceResult, RungPlan, TrialFigures, TrialPlan, most_that_fit, plan_race,
                                portfolio_of, race_budget_for)
from autotune.filenames import RACE_JSON
from autotune.race.document import RaceOutcome, from_race, tune_beside
from autotune.race.evidence import secondary_rule
from autotune.race.halving import run_race
from autotune.race.options import RaceBudget, RaceInputs, RaceProgress, RaceSettings
from autotune.race.search import Space, SpaceFacts, build_key, enumerate_space, prior_seeds, replay_rows, run_search
from autotune.target import build
from autotune.target.recipe import TargetSpec
from autotune.trials import TrialSpec as AflTrial
from autotune.trials import choose_yardstick, host_cores, run_trials, yardstick_for_binary
from autotune.trials.coverage import KIND_CENSUS
from autotune.trials.ensemble import portfolio_members
from autotune.trials.seeds import stage_seeds
from autotune.tune.defaults import DEFAULT_MAX_COUNTER_OVERFLOW
from autotune.vocabulary import METRIC_SPECS, METRIC_VAR, METRICS

RACE_MD = "race.md"


def _afl_cc_installed(env: Mapping[str, str]) -> bool:
    try:
        find_tool("afl-clang-fast", env=env)
    except ToolMissingError:
        return False
    return True


def check_budget(settings: RaceSettings) -> None:
    """Refuse, before anything runs, a budget too small to race even one candidate against the
    default (the AutotuneError names the smallest budget that does: plan_race's message), and
    portfolios the strategy or this machine cannot race (:func:`_trials_at_once`)."""
    plan_race(candidates=1, budget=settings.budget.at_once(_trials_at_once(settings)))


def fit_to_budget(contestants: list[Contestant], *, budget: RaceBudget
                  ) -> tuple[list[Contestant], tuple[str, ...], tuple[RungPlan, ...]]:
    """Drop candidates from the end of the priority list until the race fits the budget (core.most_that_fit):
    (the contestants kept, the names dropped, the plan that fits)."""
    candidates = [i for i, c in enumerate(contestants) if not c.is_default]  # in priority order
    n, plan = most_that_fit(top=len(candidates), plan=lambda k, _shortest: plan_race(candidates=k, budget=budget),
                            min_trial_s=budget.min_trial_s)
    dropped = set(candidates[n:])
    keep = [c for i, c in enumerate(contestants) if i not in dropped]
    return keep, tuple(contestants[i].name for i in candidates[n:]), plan


def afl_backend(*, contestants: Mapping[str, Contestant], binaries: Mapping[str, Path], seeds: Path, work: Path,
                yardstick, jobs: int, on_trial: Callable[[Any], None] | None = None,
                bug_binary: str | None = None) -> Callable[[Sequence[TrialPlan]], list[TrialFigures]]:
    """A ``run_trials`` for run_race / run_search: each spec becomes one afl-fuzz trial (autotune.trials).
    ``contestants`` and ``binaries`` are read at each call: the search adds to them as it proposes.
    With ``bug_binary`` (judged by bugs) the trials run with fatal canaries and their kept inputs are
    replayed through it: each figure carries its time to trigger per bug."""
    by_name = contestants
    versions: dict[str, Any] = {}

    def fuzz_version():
        """The afl-fuzz the trials run, once: how its secondaries' variations are spelt."""
        if "afl-fuzz" not in versions:
            versions["afl-fuzz"] = afl.fuzz_version(afl.base_env())
        return versions["afl-fuzz"]

    def members(name: str) -> tuple:
        """A portfolio contestant's afl-fuzz instances (binaries keyed <name>#<j>), AFL++'s variations."""
        return portfolio_members([(binaries[f"{name}#{j}"], m.env) for j, m in enumerate(by_name[name].members)],
                                 fuzz_version())

    def run(specs: Sequence[TrialPlan]) -> list[TrialFigures]:
        afl_specs = [AflTrial(config=s.contestant, index=s.repeat, binary=str(binaries[s.contestant]),
                              env={**by_name[s.contestant].env, **(CAMPAIGN_ENV if bug_binary else {})},
                              seeds=str(seeds), seconds=s.seconds,
                              rng_seed=s.fuzz_seed,
                              out_dir=str(work / f"rung-{s.rung}" / s.contestant / f"trial-{s.repeat}"),
                              members=members(s.contestant) if by_name[s.contestant].members else ())
                     for s in specs]
        results = run_trials(specs=afl_specs, yardstick=yardstick, jobs=jobs, on_done=on_trial, bug_binary=bug_binary)
        by_trial = {(s.contestant, s.repeat): s for s in specs}
        out = []
        for r in results:
            s = by_trial[(r.spec.config, r.spec.index)]
            out.append(TrialFigures(contestant=s.contestant, rung=s.rung, repeat=s.repeat, seconds=s.seconds,
                                    coverage=int(r.yardstick.edges), execs_per_s=float(r.execs_per_s),
                                    queue=int(r.kept.get("queue", 0)), stability=r.stats.get("stability"),
                                    afl_version=r.stats.get("afl_version"),
                                    bugs=None if r.bugs is None else {b: t.trigger_s for b, t in r.bugs.bugs.items()}))
        return out

    return run


def build_contestants(*, contestants: Sequence[Contestant], spec: TargetSpec | None, binary: Path | None,
                      env: Mapping[str, str], notice: Callable[[str], None] | None = None) -> dict[str, Path]:
    """The binary of each contestant: the recipe built by its compiler and build kind (cached), or,
    without a recipe, the one binary given for every contestant of our runtime."""
    out: dict[str, Path] = {}
    if spec is not None and notice:
        def how(c: Contestant) -> str:
            kind = c.build_vars.get("AUTOTUNE_CC_INSTRUMENT")
            return f"{c.compiler}, {kind} kind" if kind and c.cc_kind == CC_AUTOTUNE else c.compiler
        notice(f"building {len(contestants)} contestant{'s' if len(contestants) != 1 else ''} (cached once built): "
               + ", ".join(f"{c.name} ({how(c)})" for c in contestants))
    for c in contestants:
        for key, one in [(c.name, c)] + [(f"{c.name}#{j}", m) for j, m in enumerate(c.members)]:
            if spec is None:
                if one.cc_kind != CC_AUTOTUNE or binary is None:
                    raise AutotuneError(f"contestant {c.name} needs a build recipe",
                                        fix="give the harness's sources (--source) or a --build-script")
                out[key] = binary
            else:
                out[key] = build(spec=spec, cc_kind=one.cc_kind, build_vars=one.build_vars, env=env)
    return out


STRATEGIES = ("search", "list")


def check_request(*, strategy: str, judge: str, spec: TargetSpec | None, binary: Path | None) -> None:
    """Refuse a race that cannot run as asked (strategy, objective, target), naming the fix; `autotune
    run` asks before its build and probe, so a wrong option costs no minutes."""
    if strategy not in STRATEGIES:
        raise AutotuneError(f"unknown race strategy {strategy!r}", fix=f"use one of: {', '.join(STRATEGIES)}")
    if judge not in OBJECTIVES:
        raise AutotuneError(f"unknown --judge {judge!r}", fix=f"use one of: {', '.join(OBJECTIVES)}")
    if judge == "bugs" and (strategy != "list" or spec is None):
        raise AutotuneError("the race judges by bugs with the list strategy and a recipe (the canary build is the "
                            "target's PCGUARD build)", fix="pass --strategy list and --demo, --source or --build-script")
    if spec is None and binary is None:
        raise AutotuneError("the race needs a target", fix="give a harness binary, --source files or --demo")


def _trials_at_once(settings: RaceSettings) -> int:
    """afl-fuzz trials run at once: the budget's ``jobs`` (default: a core each), fewer when every trial
    is a portfolio of ``settings.instances`` afl-fuzz, one core each."""
    instances = settings.instances
    jobs = settings.budget.jobs or len(host_cores())
    if instances < 1:
        raise AutotuneError(f"--instances {instances}: a campaign needs at least one afl-fuzz instance",
                            fix="give --instances 1 or more")
    if instances == 1:
        return jobs
    cores = len(host_cores())
    if cores < instances:
        raise AutotuneError(f"a portfolio of {instances} instances needs {instances} cores; this machine has "
                            f"{cores}", fix=f"give --instances {cores} or fewer (afl-fuzz wants one core an instance)")
    return max(1, min(jobs, cores) // instances)


def _listed(settings: RaceSettings, *, estimated_keys: Mapping[str, float] | None, afl_cc: bool, recipe: bool,
            notice: Callable[[str], None] | None) -> tuple[list[Contestant], tuple[str, ...], tuple[RungPlan, ...]]:
    """The list strategy's contestants (``settings.metrics``, default the judge's ``default_metrics``, each
    sized by the census), as many as the budget races: (contestants, those left out, the plan).
    ``recipe`` False: one binary, which every contestant runs. With ``settings.instances`` above 1 each
    is a portfolio (:func:`portfolio_contestants`)."""
    contestants = make_contestants(metrics=tuple(settings.metrics or default_metrics(settings.judge)),
                                   estimated_keys=estimated_keys, afl_cc=afl_cc,
                                   max_collision_rate=settings.max_collision_rate)
    if not recipe:  # one binary: every contestant runs it (its build kind serves every metric)
        contestants = [Contestant(name=c.name, is_default=c.is_default, settings=c.settings,
                                  description=c.description.rsplit(",", 1)[0] + ", the given binary",
                                  cc_kind=CC_AUTOTUNE) for c in contestants]
    if settings.instances > 1:
        contestants = portfolio_contestants(contestants, instances=settings.instances, afl_cc=afl_cc and recipe,
                                            sensitive_first=settings.judge == "bugs" and secondary_rule().sensitive_first)
    contestants, dropped, plan = fit_to_budget(contestants, budget=settings.budget)
    if dropped and notice:
        n, b = len(contestants) - 1, settings.budget
        more = f"--budget {race_budget_for(candidates=n + 1, budget=b)} races {n + 1}"
        if len(dropped) > 1:
            more += f", --budget {race_budget_for(candidates=n + len(dropped), budget=b)} all {n + len(dropped)}"
        notice(f"the budget of {b.budget_s:.0f} s races {n} candidate{'s' if n != 1 else ''}: left out "
               f"{', '.join(dropped)} ({more}; {b.jobs} trial{'s' if b.jobs != 1 else ''} at a time)")
    return contestants, dropped, plan


def portfolio_contestants(contestants: Sequence[Contestant], *, instances: int, afl_cc: bool,
                          sensitive_first: bool = False) -> list[Contestant]:
    """The list's contestants as ``instances``-instance portfolios (AFL++'s default as the -M main in
    each): AFL++'s default portfolio (the default), then, with afl-clang-fast, OSS-Fuzz's practice (its
    CLASSIC,CTX-2 build of AFL++'s own on the secondaries: race.contestants.ALTERNATIVE_SECONDARIES),
    then each candidate on the secondaries, in the list's order. ``sensitive_first`` (the portfolio
    study's rule 1, autotune.race.evidence.secondary_rule, for a race judged by bugs): the list's first
    sensitive metric on the secondaries comes before OSS-Fuzz's practice, so a budget that races one
    candidate races it."""
    default = next(c for c in contestants if c.is_default)
    ours = [portfolio_of(default=default, secondary=c, instances=instances) for c in contestants if not c.is_default]
    first = next((p for p in ours if is_sensitive(p.tuned)), None) if sensitive_first else None
    return ([portfolio_of(default=default, secondary=None, instances=instances)] + ([first] if first else [])
            + [*alternative_portfolios(default, instances=instances, afl_cc=afl_cc)] + [p for p in ours if p is not first])


def is_sensitive(c: Contestant) -> bool:
    """Whether ``c`` runs a metric edges cannot give (vocabulary.Metric.sensitive: ngram-N, ctx, caller, ctx-K)."""
    spec = METRIC_SPECS.get(c.run_vars.get(METRIC_VAR, ""))
    return spec is not None and spec.sensitive


def alternative_portfolios(default: Contestant, *, instances: int, afl_cc: bool) -> tuple[Contestant, ...]:
    """What users run on secondaries today besides AFL++'s default (ALTERNATIVE_SECONDARIES), each as an
    ``instances``-instance portfolio with ``default`` as the main; none for one instance or without
    afl-clang-fast (and a recipe to build with it)."""
    if instances < 2 or not afl_cc:
        return ()
    return tuple(portfolio_of(default=default, secondary=s, instances=instances) for s in ALTERNATIVE_SECONDARIES)


def _evaluations(tune_dir: Path | None) -> tuple[Any, ...]:
    """tune's replay evaluations in ``tune_dir`` (the search's first proposals), none without it."""
    if tune_dir is None:
        return ()
    from autotune.tune.result import load_tune_result  # lazy: numpy

    return tuple(t.evaluation for t in load_tune_result(tune_dir).trials)


def _bug_binary(yard, *, seeds: Path, env: Mapping[str, str]) -> str:
    """Judged by bugs: the yardstick's canary build, checked before any afl-fuzz runs (autotune.bugs.yardstick)."""
    require_canaries(yard.binary)
    check_seeds(yard.binary, sorted(seeds.iterdir()), env=env)
    return yard.binary


def race_target(*, inputs: RaceInputs, settings: RaceSettings = RaceSettings(),
                progress: RaceProgress = RaceProgress()) -> RaceOutcome:
    """Race AFL++'s default against our runtime on the target of ``inputs``; write the outcome to
    ``inputs.out_dir``.

    ``settings.strategy``: ``search`` (autotune.race.search: Bayesian optimisation over metric, layout,
    size, width and overflow policy, judged by paired afl-fuzz trials, seeded by the inputs' tune
    evaluations, the space limited to ``settings.metrics`` (default: all) and sized by the probe's census
    in ``inputs.probe_dir``), or ``list`` (the fixed list ``settings.metrics``, default
    ``default_metrics(judge)``, each sized by the census). ``settings.judge``: ``edges`` (the yardstick's
    edges) or ``bugs`` (a target with known-bug canaries, the list strategy: autotune.bugs.race states the
    objective and the decision rule). ``inputs.tune_evaluations`` None: those of tune's report in
    ``inputs.tune_dir``, if given. ``settings.budget.jobs`` None: a core each (fewer for portfolios)."""
    spec, binary, probe_dir, estimated_keys = inputs.spec, inputs.binary, inputs.probe_dir, inputs.estimated_keys
    out_dir, notice, instances = inputs.out_dir, progress.notice, settings.instances
    tune_evaluations = _evaluations(inputs.tune_dir) if inputs.tune_evaluations is None else inputs.tune_evaluations
    if probe_dir is None and estimated_keys is None and notice:
        notice(f"no --probe: maps are sized for {DEFAULT_KEYS:,} keys (run `autotune probe` and pass --probe to "
               "size them from the census)")
    env = base_env()
    find_tool("afl-fuzz", env=env)  # ToolMissingError names the package
    check_request(strategy=settings.strategy, judge=settings.judge, spec=spec, binary=binary)
    settings = settings.at_once(_trials_at_once(settings))
    jobs = settings.budget.jobs
    host = inputs.host
    if host is None:
        host = detect_host()
    afl_cc = spec is not None and _afl_cc_installed(env)
    if probe_dir is not None and estimated_keys is None:
        estimated_keys = estimated_keys_of(probe_dir)
    single = make_contestants(metrics=(), afl_cc=afl_cc)[0]
    default = single if instances == 1 else portfolio_of(default=single, secondary=None, instances=instances)
    contestants, dropped, plan = [default], (), None
    if settings.strategy == "list":
        contestants, dropped, plan = _listed(settings, estimated_keys=estimated_keys, afl_cc=afl_cc,
                                             recipe=spec is not None, notice=notice)
    out_dir.mkdir(parents=True, exist_ok=True)
    seeds = out_dir / "seeds"
    stage_seeds(corpus=inputs.corpus, dest=seeds)
    binaries = build_contestants(contestants=contestants, spec=spec, binary=binary, env=env, notice=notice)
    yard = choose_yardstick(spec=spec, env=env) if spec is not None else yardstick_for_binary(kind=KIND_CENSUS,
                                                                                               binary=binary)
    by_name = {c.name: c for c in contestants}
    backend = afl_backend(contestants=by_name, binaries=binaries, seeds=seeds, work=out_dir / "trials",
                          yardstick=yard, jobs=jobs, on_trial=progress.on_trial,
                          bug_binary=_bug_binary(yard, seeds=seeds, env=env) if settings.judge == "bugs" else None)
    if settings.strategy == "list":
        race = run_race(contestants=contestants, run_trials=backend, settings=settings, progress=progress, plan=plan)
    else:
        facts = search_facts(probe_dir=probe_dir, estimated_keys=estimated_keys,
                             l2_bytes=host.l2_bytes if inputs.l2_bytes is None else inputs.l2_bytes,
                             max_collision_rate=settings.max_collision_rate, inline=spec is not None,
                             llc_bytes=host.llc_bytes, instances=instances)
        wrap = (lambda c: portfolio_of(default=single, secondary=c, instances=instances)) if instances > 1 else None
        alternatives = alternative_portfolios(single, instances=instances, afl_cc=afl_cc)
        race = _search(default=default, facts=facts, tune_evaluations=tune_evaluations,
                       prepare=Builds(spec=spec, binary=binary, env=env, default=default, binaries=binaries,
                                      by_name=by_name, notice=notice),
                       backend=backend, settings=settings, progress=progress, wrap=wrap, alternatives=alternatives)
        dropped = tuple(d["name"] for d in race.search["dropped"])
    target = spec.to_dict() if isinstance(spec, TargetSpec) else {"kind": "binary", "binary": str(binary)}
    outcome = RaceOutcome(race=race, yardstick=yard.to_dict(), binaries={k: str(v) for k, v in binaries.items()},
                          target=target, dropped=dropped, written=(),
                          probe_dir=str(Path(probe_dir).resolve()) if probe_dir else None,
                          tune_dir=str(Path(inputs.tune_dir).resolve()) if inputs.tune_dir else None,
                          max_collision_rate=settings.max_collision_rate, host=host.to_dict(),
                          compilers=llvm.compilers(env))
    written = write_outputs(outcome=outcome, out_dir=out_dir)
    return RaceOutcome(**{**outcome.__dict__, "written": tuple(str(p) for p in written)})


def search_facts(*, probe_dir: Path | None, estimated_keys: Mapping[str, float] | None, l2_bytes: int | None,
                 max_collision_rate: float, inline: bool, llc_bytes: int | None = None, instances: int = 1):
    """What rules the search's points out: the probe census's keys and counter overflow per metric,
    the per-core L2 and the shared LLC (race_target passes its host profile's; None: unknown, no cache
    rule), the limits."""
    keys = dict(estimated_keys or {})
    overflow: dict[str, dict[int, float]] = {}
    if probe_dir is not None:
        from autotune.tune.probe_inputs import inputs_from_probe  # lazy: numpy

        for m, f in inputs_from_probe(probe_dir).metrics.items():
            keys.setdefault(m, f.estimated_keys)
            overflow[m] = dict(f.overflow_by_width)
    return SpaceFacts(keys=keys, overflow=overflow, l2_bytes=l2_bytes, max_collision_rate=max_collision_rate,
                      max_counter_overflow=DEFAULT_MAX_COUNTER_OVERFLOW, inline=inline, llc_bytes=llc_bytes,
                      instances=instances)


class Builds:
    """The search's ``prepare``: each proposal's target built as it is proposed (one build per build key,
    cached; without a recipe, the one binary given), its binaries and contestant registered for the trial
    backend; a build that fails is returned with its reason (the search drops its build kind)."""

    def __init__(self, *, spec: TargetSpec | None, binary: Path | None, env: Mapping[str, str], default: Contestant,
                 binaries: dict[str, Path], by_name: dict[str, Contestant], notice: Callable[[str], None] | None):
        self.spec, self.binary, self.env, self.default = spec, binary, env, default
        self.binaries, self.by_name, self.notice = binaries, by_name, notice
        self.built: dict[tuple, Path | str] = {}  # build key -> binary, or why its build failed

    def __call__(self, cands: Sequence[Contestant]) -> dict[str, str]:
        failed = {}
        for c in cands:
            got = self._build(c.tuned)  # what the point builds (a portfolio's secondary; its main is the default's)
            if isinstance(got, str):
                failed[c.name] = got
                if self.notice:
                    self.notice(f"dropped {c.name}: {got}")
                continue
            if c.members:  # a portfolio: AFL++'s default's binary for the main, the point's for the secondaries
                main = self.binaries[f"{self.default.name}#0"]
                self.binaries[c.name] = main
                for j in range(len(c.members)):
                    self.binaries[f"{c.name}#{j}"] = main if j == 0 else got
            else:
                self.binaries[c.name] = got
            self.by_name[c.name] = c
        return failed

    def _build(self, t: Contestant) -> Path | str:
        key = build_key(t)
        if key not in self.built:
            if self.spec is None:
                self.built[key] = self.binary
            else:
                kind = t.build_vars.get("AUTOTUNE_CC_INSTRUMENT", "")
                if self.notice:
                    how = f"autotune cc, {kind} kind" if t.cc_kind == CC_AUTOTUNE else (
                        f"{t.compiler}, {', '.join(f'{k}={v}' for k, v in t.build)}")
                    self.notice(f"building {t.name}'s target ({how}; cached once built)")
                try:
                    self.built[key] = build(spec=self.spec, cc_kind=t.cc_kind, build_vars=t.build_vars, env=self.env)
                except AutotuneError as exc:
                    self.built[key] = f"{kind or t.compiler} build failed: {exc.message}"
        return self.built[key]


def _search(*, default: Contestant, facts, tune_evaluations: Sequence[Any], prepare: Builds, backend,
            settings: RaceSettings, progress: RaceProgress,
            wrap: Callable[[Contestant], Contestant] | None, alternatives: Sequence[Contestant] = ()) -> RaceResult:
    """The search as the stage runs it: the space ``facts`` allow for ``settings.metrics`` (default: all),
    tune's evaluations as its first proposals and as the model's cheap-fidelity data, contestants built
    as they are proposed (``prepare``); ``alternatives`` (OSS-Fuzz's portfolio) raced first, outside the space."""
    names = tuple(settings.metrics or METRICS)
    points, ruled = enumerate_space(metrics=names, facts=facts)
    seeds = prior_seeds(space=points, tune_evaluations=tune_evaluations)
    if progress.notice:
        progress.notice(f"search: {len(points)} configurations of {', '.join(names)} can run here "
                        f"({sum(ruled.values())} ruled out by the census and the host: "
                        + ", ".join(f"{k} {v}" for k, v in sorted(ruled.items())) + "); first proposals: "
                        + ", ".join(p.name for p, _ in seeds))
    replay = replay_rows(tune_evaluations)
    if progress.notice and replay:
        progress.notice(f"search: tune's {len(replay)} replayed evaluations join the model as observations "
                        "at the replay fidelity")
    space = Space(points=tuple(points), facts=facts, seeds=tuple(seeds), ruled_out=ruled, replay=replay)
    return run_search(default=default, space=space, prepare=prepare, run_trials=backend, settings=settings,
                      progress=progress, wrap=wrap, alternatives=alternatives)


def write_outputs(*, outcome: RaceOutcome, out_dir: Path) -> list[Path]:
    """The env files of the recommendation, race.md, race.json, then recommendation.json (autotune.recommendation:
    the one document preflight and validate read; race.json's ``written`` lists the files before it, as it
    always did). Returns race.json's ``written``."""
    from autotune.emit.write import write_env_files, write_recommendation  # lazy: numpy
    from autotune.race.report import env_files, markdown  # lazy: numpy

    envs = env_files(outcome, out_dir=out_dir)
    written = write_env_files(out_dir, envs)
    written.append(write_text_atomic(out_dir / RACE_MD, markdown(outcome)))
    doc = outcome.to_dict()
    doc["written"] = [str(p) for p in written] + [str(out_dir / RACE_JSON)]
    written.append(write_json_atomic(out_dir / RACE_JSON, doc))
    write_recommendation(out_dir, from_race(outcome, env_files=tuple(envs), tune=tune_beside(outcome.tune_dir)))
    return written


def estimated_keys_of(probe_dir: Path) -> dict[str, float]:
    """Per metric, the probe census's estimate of the keys a campaign reaches (Chao1, at least those seen)."""
    from autotune.tune.probe_inputs import inputs_from_probe  # lazy: numpy

    return {m: f.estimated_keys for m, f in inputs_from_probe(probe_dir).metrics.items()}
