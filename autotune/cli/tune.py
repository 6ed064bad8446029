"""`autotune tune`: choose map size, counter width, metric and layout for a probed target."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import (CallsOpt, InstancesOpt, JsonOpt, MaxCollisionRateOpt, MaxMapBytesOpt, MinMapBytesOpt,
                                  NoPlotOpt, OutDirOpt, ProbeDirOpt, SeedOpt)
from autotune.tune.defaults import (DEFAULT_CALLS, DEFAULT_CONFIRM, DEFAULT_CONFIRM_REPEATS, DEFAULT_MAX_COLLISION_RATE,
                                     DEFAULT_SENSITIVITY_WEIGHT, MAX_MAP_POW2, MIN_MAP_POW2)
from autotune.tune.options import TuneSettings
from autotune.tune.space import map_pow2_range

HELP = """Bayesian optimisation (scikit-optimize GP) over map size, counter width, coverage metric and
layout for a probed target. Each point's execs/s is measured (the probe's harness replaying its
corpus through our runtime so configured, or bench.c on the probe's traces), joined with the
census's collision rate (Equation 1) and counter overflow. Writes afl-build.env, afl-run.env,
autotune-run.env, report.json, report.md, tune.png and recommendation.json (the choice, as preflight
and validate read it) to --out."""


@command("tune", HELP)
def tune_cmd(
    probe: ProbeDirOpt,
    out_dir: OutDirOpt = Path("tune-out"),
    metric: Annotated[Optional[str], typer.Option("--metric", help="Fix the coverage metric (default: search all).")] = None,
    max_collision_rate: MaxCollisionRateOpt = DEFAULT_MAX_COLLISION_RATE,
    sensitivity_weight: Annotated[float, typer.Option("--sensitivity-weight", help="Credit per doubling of a metric's keys, in bits.")] = DEFAULT_SENSITIVITY_WEIGHT,
    calls: CallsOpt = DEFAULT_CALLS,
    confirm_k: Annotated[int, typer.Option("--confirm", help="Re-measure the top K configurations (and the best's smaller maps) in interleaved repeats before choosing; 0 skips it.")] = DEFAULT_CONFIRM,
    confirm_repeats: Annotated[int, typer.Option("--confirm-repeats", help="Repeats per configuration in the confirmation round.")] = DEFAULT_CONFIRM_REPEATS,
    seed: SeedOpt = 0,
    instances: InstancesOpt = 1,
    backend: Annotated[str, typer.Option("--backend", help="auto (replay when the harness is there), replay, bench.")] = "auto",
    min_map_bytes: MinMapBytesOpt = 1 << MIN_MAP_POW2,
    max_map_bytes: MaxMapBytesOpt = 1 << MAX_MAP_POW2,
    profile: Annotated[Optional[str], typer.Option("--profile", help="Host profile (TOML path or reference name); default: detect this host.")] = None,
    no_plot: NoPlotOpt = False,
    fresh: Annotated[bool, typer.Option("--fresh", help="Measure everything again (ignore --out's measurements.json).")] = False,
    json_out: JsonOpt = False,
) -> None:
    from autotune.emit.write import emit_all
    from autotune.tune.api import tune_probe_dir
    from autotune.tune.run import run_tune

    pows = map_pow2_range(min_map_slots=min_map_bytes, max_map_slots=max_map_bytes)
    settings = TuneSettings(metric=metric, map_pow2=(pows[0], pows[1]), max_collision_rate=max_collision_rate,
                            sensitivity_weight=sensitivity_weight, jobs=instances, calls=calls, seed=seed,
                            backend=backend, fresh=fresh, confirm_k=confirm_k, confirm_repeats=confirm_repeats)
    result = tune_probe_dir(probe_dir=probe, out_dir=out_dir, host=_host(profile), settings=settings,
                            run=lambda **kw: run_with_progress(run_tune, **kw),
                            notice=lambda m: err.print(m, highlight=False))
    written = emit_all(result=result, out_dir=out_dir, plot=not no_plot)
    if json_out:
        print_json(result.to_dict())
        return
    print_summary(result, out_dir, [p.name for p in written])


def _host(profile: str | None):
    """The HostProfile tune models the caches of: --profile's, else this host's."""
    from autotune.measure.host import host_profile

    if profile:
        from autotune.profile import resolve_profile

        return resolve_profile(profile)
    return host_profile()


def run_with_progress(run_tune, *, calls_on_screen: bool = True, **kw):
    """run_tune under a progress bar; on a log (no terminal) also a line per call unless
    ``calls_on_screen`` is off (`autotune run`: report.md's "Every call" has them)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    calls = kw["tune"].calls
    with Progress(TextColumn("tune"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=err, transient=False,
                  disable=not err.is_terminal) as bar:
        task = bar.add_task("", total=min(calls, kw["space"].n_points))
        best = [float("-inf")]

        def progress(trial) -> None:
            e = trial.evaluation
            best[0] = max(best[0], e.score_bits)
            bar.update(task, advance=1, description=f"{e.config.key()} {e.execs_per_s:,.0f}/s best {best[0]:.3f} bits")
            if calls_on_screen and not err.is_terminal:
                err.print(f"call {trial.call} ({trial.phase}): {e.config.key()} {e.execs_per_s:,.0f} replayed execs/s "
                          f"score {e.score_bits:.3f}{'' if e.feasible else ' (infeasible)'}", highlight=False)

        def confirm_progress(config, repeat: int) -> None:
            bar.update(task, description=f"confirming: {config.key()} repeat {repeat}")

        return run_tune(progress=progress, confirm_progress=confirm_progress, **kw)


def calls_summary(result, report: Path) -> str:
    """The search's calls in one line, for `autotune run` (every call is in ``report``)."""
    return f"tune: {result.calls} calls by replay, best {result.best_config.key()}; every call in {report}"


def print_summary(result, out_dir: Path, names: list[str]) -> None:
    b, bc = result.best, result.best_config
    conv = result.convergence()
    out.print(f"best: {bc.metric}, {bc.layout}, {bc.map_slots} slots, {bc.width_bits}-bit counters: "
              f"{b.execs_per_s:,.0f} replayed execs/s, collision rate {100 * b.precision.collision_rate:.2f} %, "
              f"score {b.score_bits:.3f} bits", highlight=False)
    nr = result.no_rebuild_best
    if nr:
        out.print(f"best without rebuilding AFL++: {nr.config.metric} (flat 64 KiB, 8-bit): {nr.execs_per_s:,.0f} "
                  f"replayed execs/s, collision rate {100 * nr.precision.collision_rate:.2f} %", highlight=False)
    conf = result.confirmation
    if conf:
        out.print(f"confirmation: {conf['decision']}", highlight=False)
    if result.needs_afl_rebuild:
        out.print(result.rebuild_note() + "; autotune-run.env runs it with our runtime and the stock afl-fuzz",
                  highlight=False)
    out.print(f"convergence: {result.calls} calls, {result.measured} measured, best at call {result.calls_to_best()}, "
              f"best score after 1/4/1/2/all calls: {conv[max(0, len(conv) // 4 - 1)]:.3f} / "
              f"{conv[max(0, len(conv) // 2 - 1)]:.3f} / {conv[-1]:.3f}; {result.elapsed_s:.1f} s", highlight=False)
    out.print(f"wrote {', '.join(names)} to {out_dir}/", highlight=False)
    out.print(f"load: set -a; . {out_dir}/autotune-run.env; set +a   (target built with autotune cc)", highlight=False)
    out.print(f"  or: set -a; . {out_dir}/afl-build.env; set +a   (afl-cc), then {out_dir}/afl-run.env for afl-fuzz",
              highlight=False)
