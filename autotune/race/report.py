"""What the race writes for a person: race.md, and the env files of the recommendation."""

from __future__ import annotations

import statistics
from pathlib import Path

from autotune.bugs import race as by_bugs
from autotune.configuration import CC_AFL
from autotune.emit.configuration import race_env_files
from autotune.llvm import compilers_text
from autotune.race.evidence import secondaries_note
from autotune.trials import aflpp_versions

INDEX_FILE = "autotune-index.bin"


def _median(xs) -> float:
    return statistics.median(xs) if xs else float("nan")


def env_files(outcome, *, out_dir: Path) -> dict[str, str]:
    """{file name: text}: afl-build.env (and afl-run.env) when AFL++'s default is recommended, else
    autotune-build.env and autotune-run.env for our runtime (autotune.emit.configuration)."""
    d = outcome.race.decision
    # a portfolio's env files are those of the configuration the race tuned (its secondaries'); its
    # main is AFL++'s default (afl-build.env); portfolio_line() says how to launch it
    return race_env_files(outcome.race.contestant(d.recommended).tuned, why=f"the race: {d.reason}",
                          index_file=str((out_dir / INDEX_FILE).resolve()))


def recipe_args(target: dict) -> str:
    """The CLI arguments of a recorded target recipe (TargetSpec.to_dict)."""
    import shlex

    if target.get("kind") == "demo":
        return "--demo"
    args = (["--build-script", target["script"]] if target.get("script") else [])
    args += [a for src in target.get("sources") or () for a in ("--source", src)]
    if target.get("kind") == "sources" and target.get("cflags"):
        args += ["--cflags", target["cflags"]]
    return " ".join(shlex.quote(a) for a in args) or "<the recipe>"


def portfolio_line(outcome, *, out_dir: Path, cores: int = 1) -> str | None:
    """How to launch the recommendation as a campaign of afl-fuzz instances: the portfolio `autotune
    run --instances N` recommended, or (``cores`` > 1) a one-instance recommendation on every core;
    else None."""
    c = outcome.race.contestant(outcome.race.decision.recommended)
    if not c.members and cores < 2:
        return None
    n = len(c.members) or cores
    recipe = recipe_args(outcome.target or {})
    seeds = "" if recipe == "--demo" else f" --corpus {out_dir}/seeds"  # the race's copy of the seeds it ran
    head = f"autotune portfolio {recipe}{seeds}"
    if c.is_default:
        return (f"{head} --config default --instances {n}   "
                f"(AFL++'s default portfolio: {n} x afl-clang-fast, -M + -S with AFL++'s variations)")
    if c.members and c.tuned.cc_kind == CC_AFL:  # an alternative of AFL++'s own (OSS-Fuzz's CLASSIC,CTX-2 -S)
        return f"{head} --config default --config {out_dir}/afl-build.env --instances {n}   (-M AFL++'s default, -S {c.tuned.name})"
    if c.members:
        return f"{head} --config default --config {out_dir}/autotune-run.env --instances {n}   (-M AFL++'s default, -S {c.tuned.name})"
    return (f"{head} --config {out_dir}/autotune-run.env --instances {n}   ({c.tuned.name} on every instance, -M + -S "
            f"with AFL++'s variations; the race measured one instance: `--instances {n}` races {n}-instance portfolios)")


def races_portfolios(outcome) -> bool:
    """Whether the race judged portfolios (``--instances`` 2 or more): then its report cites what the
    portfolio study measured of sensitive secondaries (autotune.race.evidence)."""
    return any(c.members for c in outcome.race.contestants)


def markdown(outcome) -> str:
    race = outcome.race
    d = race.decision
    lines = ["# autotune race", "",
             f"Target: {outcome.target.get('kind')}; yardstick: {outcome.yardstick.get('description', outcome.yardstick.get('kind'))}.",
             f"afl-fuzz: {aflpp_versions(t.__dict__ for r in race.rungs for t in r.trials)}"
             f"{f'; builds by {compilers_text(outcome.compilers)}' if outcome.compilers else ''}. "
             f"Budget {race.budget_s:.0f} s, {race.jobs} trial{'s' if race.jobs != 1 else ''} at once; {race.repeats} trials per contestant and rung, "
             f"paired afl-fuzz seeds; successive halving with eta {race.eta}; seed {race.seed}.", ""]
    lines += [f"**Recommended: {d.recommended}.** {d.reason}.", ""]
    if d.objective == "bugs":
        lines += [f"**Judged by bugs** (known-bug canaries, fatal in the trials). {by_bugs.RULE}", ""]
    launch = portfolio_line(outcome, out_dir=Path("race"))
    if launch:
        lines += [f"A portfolio of {len(race.contestant(d.recommended).members)} afl-fuzz instances: `{launch}`.", ""]
    if races_portfolios(outcome):
        lines += [secondaries_note(), ""]
    if outcome.dropped:
        lines += [f"Left out to fit the budget: {', '.join(outcome.dropped)}.", ""]
    lines += ["| contestant | description |", "|---|---|"]
    lines += [f"| {c.name}{' (default)' if c.is_default else ''} | {c.description} |" for c in race.contestants]
    for rung in race.rungs:
        lines += ["", f"## Rung {rung.index}: {rung.seconds} s trials", "",
                  "| contestant | yardstick edges (trials) | median | execs/s (median) | queue (median) |",
                  "|---|---|---|---|---|"]
        default = race.default.name
        for name in (*rung.ranking, default):
            ts = [t for t in rung.trials if t.contestant == name]
            cov = [t.coverage for t in ts]
            bugs = ("; bugs triggered: " + ", ".join(
                str(sum(1 for v in (t.bugs or {}).values() if v is not None)) for t in ts)) if d.objective == "bugs" else ""
            lines.append(f"| {name}{' (default)' if name == default else ''} | {', '.join(map(str, cov))}{bugs} | "
                         f"{_median(cov):g} | {_median([t.execs_per_s for t in ts]):,.0f} | "
                         f"{_median([t.queue for t in ts]):,.0f} |")
        if rung.kept and rung.index + 1 < len(race.rungs):
            lines.append(f"\nOn to the next rung: {', '.join(rung.kept)}.")
    if race.stopped_early:
        lines += ["", "The race stopped early: every candidate covered significantly less than the default."]
    if race.search:
        lines += search_markdown(race.search)
    lines += ["", "All figures are afl-fuzz's own (execs/s, queue) and the yardstick's edges over everything each "
                  "trial kept (queue, crashes, hangs)."]
    return "\n".join(lines) + "\n"


def search_markdown(search: dict) -> list[str]:
    """The search's history: the space, every proposal with where it came from and the model's
    prediction beside what afl-fuzz measured, and the best-so-far against afl-fuzz seconds."""
    sp = search["space"]
    ruled = ", ".join(f"{k} {v}" for k, v in sorted(sp.get("ruled_out", {}).items())) or "none"
    lines = ["", "## The search", "",
             f"{sp['points']} configurations could run here (ruled out by the census and the host: {ruled}); "
             f"first-rung batches {search['batches']}. Objective of a configuration at a rung: the median over its "
             f"trials of ln((edges + 1) / (default's edges + 1)) + {search['speed_weight']} x ln(execs/s ratio), "
             f"each trial paired with the default's of the same afl-fuzz seed; pair noise sd "
             f"{search['pair_sd']:.3f} (pooled).", "",
             "| configuration | from | rung | trial s | edges (default's) | execs/s ratio | predicted | measured |",
             "|---|---|---|---|---|---|---|---|"]
    origin = {p["name"]: p["origin"] for p in search["proposals"]}
    for o in search["observations"]:
        pred = o.get("predicted")
        pred_s = f"{pred['mean']:+.3f} ± {pred['sd']:.3f}" if pred else "-"
        lines.append(f"| {o['name']} | {origin.get(o['name'], '?')} | {o['rung']} | {o['seconds']} | "
                     f"{', '.join(map(str, o['coverage']))} ({', '.join(map(str, o['default_coverage']))}) | "
                     f"{o['execs_ratio']:.2f} | {pred_s} | {o['objective']:+.3f} |")
    for o in (search.get("alternatives") or {}).get("observations", []):
        lines.append(f"| {o['name']} | alternative (outside the space, not modelled) | {o['rung']} | {o['seconds']} | "
                     f"{', '.join(map(str, o['coverage']))} ({', '.join(map(str, o['default_coverage']))}) | "
                     f"{o['execs_ratio']:.2f} | - | {o['objective']:+.3f} |")
    if search.get("dropped"):
        lines += ["", "Dropped (their build kind's other configurations were not proposed again):", ""]
        lines += [f"- {d['name']}: {d['reason']}" for d in search["dropped"]]
    lines += ["", "Convergence (the model's best after each batch and rung):", "",
              "| afl-fuzz seconds | rung | tried | best so far | its objective (model) |", "|---|---|---|---|---|"]
    lines += [f"| {c['afl_seconds']:,.0f} | {c['rung']} | {c['tried']} | {c['best']} | {c['best_objective']:+.3f} |"
              for c in search["convergence"]]
    return lines
