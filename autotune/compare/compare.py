"""`autotune compare`: K afl-fuzz trials of T seconds for each of several configurations, every
trial measured by the same yardstick (autotune.trials), summarised the way Klees et al. (CCS 2018)
ask: medians with intervals, Mann-Whitney U and Vargha-Delaney A12 per pair, coverage over time.

Output directory: ``compare.json`` (:class:`CompareResult`, schema_version 1), ``compare.md``,
``coverage.png``, ``seeds/`` (the corpus as afl-fuzz got it), ``trials/<config>/trial-<k>/``
(afl-out/, afl-fuzz.log, trial.json, the index file of a runtime configuration that sets one).

``yardstick="bugs"`` (autotune.bugs.yardstick): the trials run with fatal known-bug canaries, edges
are measured by the pcguard yardstick as ever, and every trial's kept inputs are replayed through
that same (canary) build for their time-to-bug; compare.json gains an optional ``bugs`` block (the
survival statistics, autotune.bugs.survival) and trial.json a ``bugs`` block, compare.md a bugs
section, and ``bugs.png`` the Kaplan-Meier curves.

A stopped compare resumes (``resume=True``): every trial whose trial.json is there and was run as
this compare would run it (the same spec: binary, variables, seeds, seconds, seed) is kept, measured
by the same yardstick; the rest run. A trial.json that differs is an error, never silently mixed in.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from autotune import afl, llvm
from autotune.bugs import yardstick as bugs_yardstick
from autotune.bugs.attribution import attribute_trial
from autotune.bugs.plot import render_km_plot
from autotune.bugs.survival import BugReport, bug_report
from autotune.bugs.yardstick import PLOT_NAME as BUGS_PLOT
from autotune.compare.options import CompareSettings
from autotune.compare.plot import render_coverage_plot
from autotune.compare.render import markdown
from autotune.compare.result import (
    JSON_NAME, LLVM_COV_MEASURES, MD_NAME, MEASURES, PLOT_NAME, CompareResult, ConfigOutcome, CurvePoint, PairOutcome,
)
from autotune.configuration import CC_AFL, Configuration, check_serves
from autotune.errors import AutotuneError
from autotune.io import read_json, write_bytes_atomic, write_json_atomic, write_text_atomic
from autotune.measure.host import current_host
from autotune.stats import a12, a12_magnitude, mann_whitney, median_interval
from autotune.target import TargetSpec, build
from autotune.trials import TrialResult, TrialSpec, Yardstick, choose_yardstick, host_cores, interleaved, run_trials
from autotune.trials.ensemble import portfolio_members, trial_inputs
from autotune.trials.seeds import stage_seeds


def bug_report_of(outcomes: Sequence["ConfigOutcome"], seconds: float, scope=None) -> "BugReport | None":
    """The survival statistics of the trials' time-to-bug (None when no trial was attributed); the
    first configuration is the baseline; ``scope`` (autotune.bugs.depth.BugScope) restricts the
    judgement to its bugs."""
    if not any(t.bugs is not None for o in outcomes for t in o.trials):
        return None
    return bug_report(trials={o.config.name: [t.bugs for t in o.trials if t.bugs is not None] for o in outcomes},
                      indices={o.config.name: [t.spec.index for t in o.trials if t.bugs is not None] for o in outcomes},
                      horizon_s=float(seconds), scope=scope)


def finished_trial(spec: TrialSpec, yard: Yardstick) -> TrialResult | None:
    """The result a stopped compare left for ``spec`` (its trial.json), or None when it has none (never
    run, or stopped mid-trial: run again). A trial.json run otherwise (another binary, variables,
    seeds, length or seed; another yardstick) is an error naming what differs."""
    path = Path(spec.out_dir) / "trial.json"
    if not path.is_file():
        return None
    fix = "resume with the arguments of the stopped compare, or start afresh: a new --out, or drop --resume"
    try:
        res = TrialResult.from_dict(read_json(path))
    except (AutotuneError, ValueError, KeyError, TypeError) as e:
        raise AutotuneError(f"{path} cannot be read back ({e})", fix=f"delete {path.parent} to run that trial again") from e
    was, now = res.spec.to_dict(), spec.to_dict()
    diff = sorted(k for k in set(was) | set(now) if was.get(k) != now.get(k))
    if diff:
        raise AutotuneError(f"{path} was run otherwise than this compare asks ({', '.join(diff)} differ: "
                            f"{diff[0]} was {was.get(diff[0])!r}, now {now.get(diff[0])!r})", fix=fix)
    if res.yardstick is None or res.yardstick.kind != yard.kind:
        raise AutotuneError(f"{path} was measured by {res.yardstick.kind if res.yardstick else 'no yardstick'}, "
                            f"this compare by {yard.kind}", fix=fix)
    return res


def _quantile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def aggregate_curve(trials: Sequence[TrialResult]) -> tuple[CurvePoint, ...]:
    """Per time point, the median, min, max and quartiles over the trials' yardstick curves."""
    curves = [t.yardstick.curve for t in trials if t.yardstick is not None]
    if not curves:
        return ()
    out = []
    for i, (t, _) in enumerate(curves[0]):
        vals = [float(c[i][1]) for c in curves if i < len(c)]
        out.append(CurvePoint(t_s=t, median=_quantile(vals, 0.5), low=min(vals), high=max(vals),
                              q1=_quantile(vals, 0.25), q3=_quantile(vals, 0.75)))
    return tuple(out)


def mean_coverage(curve: Sequence[Sequence[float]]) -> float | None:
    """A trial's yardstick count averaged over its campaign: the area under its coverage curve (the
    trapezoids between the curve's points) over the curve's length; None for fewer than two points.
    Two configurations that end on one plateau tie on the final count and differ here by how soon
    they got there (a campaign stopped earlier would have found the difference)."""
    pts = [(float(t), float(e)) for t, e in curve]
    if len(pts) < 2 or pts[-1][0] <= pts[0][0]:
        return None
    area = sum((t1 - t0) * (e0 + e1) / 2 for (t0, e0), (t1, e1) in zip(pts, pts[1:]))
    return area / (pts[-1][0] - pts[0][0])


def _measure_values(o: ConfigOutcome, measure: str) -> list[float]:
    if measure == "yardstick_edges":
        return [float(t.yardstick.edges) for t in o.trials if t.yardstick is not None]
    if measure == "mean_edges":
        means = [mean_coverage(t.yardstick.curve) for t in o.trials if t.yardstick is not None]
        return [m for m in means if m is not None]
    if measure == "unique_crashes":  # crashes unique by their yardstick edges (none measured: left out)
        return [float(t.yardstick.unique_crashes) for t in o.trials
                if t.yardstick is not None and t.yardstick.unique_crashes is not None]
    if measure in LLVM_COV_MEASURES:
        kind = LLVM_COV_MEASURES[measure]
        return [float(t.yardstick.llvm_cov["totals"][kind]["covered"]) for t in o.trials
                if t.yardstick is not None and t.yardstick.llvm_cov]
    return [t.execs_per_s for t in o.trials]


def compare_pairs(outcomes: Sequence[ConfigOutcome]) -> tuple[PairOutcome, ...]:
    """Every pair (a before b in the order given), for each measure (with the llvm-cov yardstick, its
    covered regions and lines too)."""
    pairs = []
    measures = list(MEASURES)
    if any(t.yardstick is not None and t.yardstick.llvm_cov for o in outcomes for t in o.trials):
        measures[1:1] = LLVM_COV_MEASURES
    for i, a in enumerate(outcomes):
        for b in outcomes[i + 1:]:
            for m in measures:
                xa, xb = _measure_values(a, m), _measure_values(b, m)
                if not xa or not xb:
                    continue
                eff = a12(xa, xb)
                pairs.append(PairOutcome(a=a.config.name, b=b.config.name, measure=m,
                                         median_a=median_interval(xa).median, median_b=median_interval(xb).median,
                                         test=mann_whitney(xa, xb), a12=eff, magnitude=a12_magnitude(eff)))
    return tuple(pairs)


def outcome_of(*, config: Configuration, binary: str, trials: Sequence[TrialResult]) -> ConfigOutcome:
    cov = [float(t.yardstick.edges) for t in trials if t.yardstick is not None]
    return ConfigOutcome(config=config, binary=binary, trials=tuple(trials),
                         coverage=median_interval(cov or [0.0]),
                         execs_per_s=median_interval([t.execs_per_s for t in trials]),
                         corpus_count=median_interval([float(t.stats.get("corpus_count") or 0) for t in trials]),
                         curve=aggregate_curve(trials))


def config_dir_name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)


def check_tools(*, configs: Sequence[Configuration], env: Mapping[str, str]) -> None:
    """afl-fuzz and afl-showmap always; afl-clang-fast when a configuration is built with it."""
    for tool in ("afl-fuzz", "afl-showmap"):
        afl.find_tool(tool, env=env)
    if any(c.cc_kind == CC_AFL for c in configs):
        afl.find_tool("afl-clang-fast", env=env)


def ensemble_members(c: Configuration, binary_of: Callable[[Configuration], str],
                     afl_version: afl.AflppVersion | None = None) -> tuple:
    """The afl-fuzz instances of a portfolio configuration (autotune.trials.ensemble.portfolio_members),
    the secondaries' variations spelt for the afl-fuzz of ``afl_version``, a secondary that moves with
    the instance that takes its core."""
    moves = {j: (binary_of(m.then), m.then.run_vars, m.moves_at_s) for j, m in enumerate(c.members) if m.then}
    return portfolio_members([(binary_of(m), m.run_vars) for m in c.members], afl_version, moves)


def run_compare(*, spec: TargetSpec, corpus: Path, configs: Sequence[Configuration], out_dir: Path,
                settings: CompareSettings, env: Mapping[str, str] | None = None,
                progress: Callable[[str], None] | None = None) -> CompareResult:
    """Build every configuration, run ``settings.trials`` x ``configs`` afl-fuzz trials of ``settings.seconds``
    (interleaved, ``settings.measure.jobs`` at once), measure each by the yardstick (``settings.measure``'s:
    pcguard or llvm-cov, see autotune.trials.yardstick.choose_yardstick; bugs: autotune.bugs.yardstick), write
    the outputs; the result. With ``settings.resume``, the trials a stopped compare in ``out_dir`` finished
    are kept (:func:`finished_trial`), the rest run. ``settings.measure.bug_scope`` (with the bugs yardstick):
    judge on its bugs only (autotune.bugs.depth.BugScope). ``env``: the caller's environment (None: this
    process's)."""
    trials, seconds, rng_seed, resume = settings.trials, settings.seconds, settings.rng_seed, settings.resume
    measure = settings.measure
    yardstick, jobs = measure.yardstick, measure.jobs
    say = progress or (lambda _m: None)
    by_bugs = yardstick == bugs_yardstick.CHOICE
    if trials < 1 or seconds < 1:
        raise AutotuneError("trials and seconds must be at least 1", fix="pass --trials >= 1 and --minutes/--seconds > 0")
    benv = afl.base_env(env)
    every = [i for c in configs for m in (c.members or (c,)) for i in (m, m.then) if i is not None]
    check_tools(configs=every, env=benv)
    for c in configs:
        for j, m in enumerate(c.members or (c,)):
            for i in (m, m.then) if m.then else (m,):
                check_serves(i, what=f"{c.name}" + (f" instance {j} ({i.name})" if c.members else ""))
            if m.then is not None and m.moves_at_s >= seconds:
                raise AutotuneError(f"{c.name} instance {j} moves at {m.moves_at_s} s, but a trial lasts {seconds} s",
                                    fix=f"move it before the trial's end (e.g. @{seconds // 2}s>) or run longer trials")
    if not corpus.is_dir():
        raise AutotuneError(f"the corpus {corpus} is not a directory", fix="pass --corpus DIR with the seed inputs")
    t0 = time.monotonic()
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    n_seeds = stage_seeds(corpus=corpus, dest=out_dir / "seeds", keep=resume)
    yard = choose_yardstick(spec=spec, env=benv, choice=bugs_yardstick.EDGE_CHOICE if by_bugs else yardstick)
    say(f"yardstick: {yard.kind} ({yard.binary})")
    if by_bugs:  # before any afl-fuzz runs: the canaries are there, and no seed triggers one
        bugs_yardstick.require_canaries(yard.binary)
        bugs_yardstick.check_seeds(yard.binary, sorted((out_dir / "seeds").iterdir()), env=benv)
        say(f"bugs: fatal canaries in the trials, kept inputs replayed through {yard.binary}")
    campaign = bugs_yardstick.with_campaign_env if by_bugs else dict
    binaries: dict[str, str] = {}
    built: dict[tuple, str] = {}

    def binary_of(c: Configuration) -> str:
        key = (c.cc_kind, tuple(sorted(c.build_vars.items())))
        if key not in built:
            say(f"{c.name}: building with {c.compiler}")
            built[key] = str(build(spec=spec, cc_kind=c.cc_kind, build_vars=c.build_vars, env=benv))
        return built[key]

    members: dict[str, tuple] = {}
    fuzz_version = afl.fuzz_version(benv) if any(c.members for c in configs) else None
    for c in configs:
        binaries[c.name] = binary_of(c)
        members[c.name] = tuple(replace(m, env=campaign(m.env)) for m in ensemble_members(c, binary_of, fuzz_version)) \
            if c.members else ()
    by_name = {c.name: c for c in configs}
    specs = [TrialSpec(config=name, index=k, binary=binaries[name], env=campaign(by_name[name].run_vars),
                       seeds=str(out_dir / "seeds"), seconds=int(seconds), rng_seed=rng_seed + k,
                       out_dir=str(out_dir / "trials" / config_dir_name(name) / f"trial-{k}"), members=members[name])
            for k, name in interleaved([c.name for c in configs], trials)]
    widest = max((len(c.members) for c in configs), default=0)
    say(f"{len(specs)} trials of {seconds} s, " + (f"each up to {widest} afl-fuzz instances, one core each"
                                                  if widest > 1 else f"{jobs or 'one per core'} at once"))

    def done(r: TrialResult) -> None:
        write_json_atomic(Path(r.spec.out_dir) / "trial.json", r.to_dict())
        y = r.yardstick
        b = r.bugs
        say(f"{r.spec.config} trial {r.spec.index}: {r.execs_per_s:,.0f} execs/s, "
            f"{y.edges if y else '?'} yardstick {yard.unit}, {r.stats.get('corpus_count')} queued"
            + (f", bugs triggered: {', '.join(sorted(b.triggered())) or 'none'}" if b is not None else ""))

    kept = {i: r for i, r in enumerate(finished_trial(s, yard) for s in specs) if r is not None} if resume else {}
    if by_bugs:  # a finished trial of a bugs compare without its attribution (cut short between the two)
        kept = {i: r if r.bugs is not None else _attributed(r, yard, env) for i, r in kept.items()}
    if resume:
        say(f"resuming: {len(kept)} of {len(specs)} trials finished, {len(specs) - len(kept)} to run")
    fresh = iter(run_trials(specs=[s for i, s in enumerate(specs) if i not in kept], yardstick=yard, jobs=jobs,
                            caller_env=env, on_done=done, bug_binary=yard.binary if by_bugs else None,
                            on_start=lambda s, core: say(f"{s.config} trial {s.index}: afl-fuzz on core {core}")))
    results = [kept[i] if i in kept else next(fresh) for i in range(len(specs))]
    outcomes = tuple(outcome_of(config=c, binary=binaries[c.name], trials=[r for r in results if r.spec.config == c.name])
                     for c in configs)
    notes = outcome_notes(outcomes, yard)
    bugs = bug_report_of(outcomes, seconds, measure.bug_scope) if by_bugs else None
    if kept:
        notes.append(f"resumed: {len(kept)} of {len(specs)} trials were finished by a stopped compare and kept "
                     f"(their trial.json); the wall time is this run's")
    host_doc = None
    if settings.host:
        host_doc = current_host()
    used_jobs = max(1, min(jobs or len(host_cores()), len(specs)))
    res = CompareResult(target=spec.to_dict(), corpus=str(corpus.resolve()), seeds=n_seeds, seconds=int(seconds),
                        trials=trials, jobs=used_jobs, rng_seed=rng_seed, yardstick=yard, configs=outcomes,
                        pairs=compare_pairs(outcomes), out_dir=str(out_dir), wall_s=round(time.monotonic() - t0, 1),
                        host=host_doc, notes=tuple(notes), bugs=bugs, compilers=llvm.compilers(benv))
    write_outputs(result=res, out_dir=out_dir, plot=measure.plot)
    return res


def _attributed(r: TrialResult, yard: Yardstick, env: Mapping[str, str] | None) -> TrialResult:
    """A finished trial's time-to-bug, as the trial runner attributes it: its kept inputs replayed
    through the yardstick's binary (the canary build), the yardstick's per-input timeout."""
    afl_out = Path(r.spec.out_dir) / "afl-out"
    inputs = trial_inputs(afl_out, r.spec)
    res = r.with_bugs(attribute_trial(binary=yard.binary, kept=inputs, seconds=r.spec.seconds, env=env,
                                        timeout_s=yard.timeout_ms / 1000))
    write_json_atomic(Path(r.spec.out_dir) / "trial.json", res.to_dict())
    return res


def campaign_overflows(stats: Mapping) -> list[tuple[str, str]]:
    """(" instance NAME" or "", advice) for every instance of a trial whose own dense map overflowed
    during the campaign (the runtime's counters in its index file, autotune.runtime.afl_index)."""
    members = stats.get("members") or {}
    found = ([(f" instance {n}", m.get("index")) for n, m in members.items()] if members
             else [("", stats.get("index"))])
    return [(who, idx["advice"]) for who, idx in found if idx and idx.get("advice")]


def outcome_notes(outcomes: Sequence[ConfigOutcome], yard: Yardstick) -> list[str]:
    notes = [f"yardstick: {yard.kind}: {yard.description}"]
    for o in outcomes:
        for t in o.trials:
            for who, said in campaign_overflows(t.stats):
                notes.append(f"{o.config.name} trial {t.spec.index}{who}: {said}")
            y = t.yardstick
            if y and y.overflow_keys:
                notes.append(f"{o.config.name} trial {t.spec.index}: the census replay's dense map overflowed "
                             f"({y.overflow_keys} keys share its last slot): edges are a lower bound")
            if y and y.unreplayed:
                what = ("left no readable profile (replayed alone, it crashed or hung before the profile was written)"
                        if y.llvm_cov is not None else "got no map from afl-showmap")
                notes.append(f"{o.config.name} trial {t.spec.index}: {y.unreplayed} inputs {what}")
    n = outcomes[0].coverage.n if outcomes else 0
    if 0 < n < 6:
        notes.append(f"with {n} trials no order-statistic interval of the median reaches 95 %: the interval "
                     f"shown is [min, max], of coverage {100 * outcomes[0].coverage.confidence:.1f} %")
    return notes


def write_outputs(*, result: CompareResult, out_dir: Path, plot: bool = True) -> list[Path]:
    written = [write_json_atomic(out_dir / JSON_NAME, result.to_dict()),
               write_text_atomic(out_dir / MD_NAME, markdown(result))]
    if plot:
        written.append(write_bytes_atomic(out_dir / PLOT_NAME, render_coverage_plot(result)))
        if result.bugs is not None:
            written.append(write_bytes_atomic(out_dir / BUGS_PLOT, render_km_plot(result.bugs)))
    return written
