"""What the race writes for a person: race.md, and the env files of the recommendation."""

from __future__ import annotations

import statistics
from pathlib import Path

from autotune.emit.envfiles import EnvVar, render_env

INDEX_FILE = "autotune-index.bin"


def _median(xs) -> float:
    return statistics.median(xs) if xs else float("nan")


def env_files(outcome, *, out_dir: Path) -> dict[str, str]:
    """{file name: text}: afl-build.env (and afl-run.env) when AFL++'s default is recommended, else
    autotune-build.env and autotune-run.env for our runtime."""
    race = outcome.race
    d = race.decision
    chosen = race.contestant(d.recommended)
    why = f"the race: {d.reason}"
    if chosen.cc_kind == "afl":
        title = ["afl-build.env: AFL++'s default, recommended by autotune's race in afl-fuzz",
                 "build the target with afl-clang-fast (-fsanitize=fuzzer for a libFuzzer harness) and no AFL_LLVM_*",
                 "variables: PCGUARD, one counter per SanitizerCoverage guard, is AFL++'s default", why]
        run = ["afl-run.env: nothing to set for afl-fuzz: the target reports its own map size", why]
        return {"afl-build.env": render_env(title=title, variables=[]),
                "afl-run.env": render_env(title=run, variables=[])}
    build = [EnvVar(k, v, "autotune cc's build kind: " + {"guard": "inline 8-bit counters, one per guard (PCGUARD's coverage)",
                                                          "edge": "edges counted inline, as AFL++'s CLASSIC counts them",
                                                          "blocks": "guards only (block metrics, no function hooks)",
                                                          "full": "guards and function hooks (call-context metrics)"}.get(v, v))
             for k, v in chosen.build]
    settings = dict(chosen.settings)
    if "AUTOTUNE_INDEX_FILE" in settings:
        settings["AUTOTUNE_INDEX_FILE"] = str((out_dir / INDEX_FILE).resolve())
    flat = settings.get("AUTOTUNE_LAYOUT") == "flat"  # the edge kind's map
    reasons = {"AUTOTUNE_METRIC": f"coverage metric {chosen.name}",
               "AUTOTUNE_LAYOUT": "flat map, counted inline" if flat else "two-level map (BigMap)",
               "AUTOTUNE_INDEX_SIZE": "index slots: Equation 1 collisions within the limit at twice the census's keys",
               "AUTOTUNE_MAP_SIZE": "map slots: Equation 1 collisions within the limit at twice the census's keys"
                                    if flat else "dense slots afl-fuzz scans: room for twice the census's keys",
               "AUTOTUNE_COUNTER_BITS": "8-bit counters (afl-fuzz classifies bytes)",
               "AUTOTUNE_OVERFLOW": "NeverZero: a counter that wraps still counts as hit",
               "AUTOTUNE_KEY_HASH": "AFL++'s edge hash (cur ^ prev >> 1) of compile-time block ids" if flat
                                    else "exact keys (collision-free before the index)",
               "AUTOTUNE_INDEX_FILE": "slot assignments kept across afl tool runs (resume, afl-cmin, afl-showmap)"}
    run = [EnvVar(k, v, reasons.get(k, "runtime setting")) for k, v in sorted(settings.items())]
    title = [f"autotune-build.env: build the target with autotune cc under this file ({chosen.description})", why]
    rtitle = [f"autotune-run.env: afl-fuzz with our runtime, {chosen.name}; load with set -a; . FILE; set +a", why]
    return {"autotune-build.env": render_env(title=title, variables=build),
            "autotune-run.env": render_env(title=rtitle, variables=run)}


def markdown(outcome) -> str:
    race = outcome.race
    d = race.decision
    lines = ["# autotune race", "",
             f"Target: {outcome.target.get('kind')}; yardstick: {outcome.yardstick.get('description', outcome.yardstick.get('kind'))}.",
             f"Budget {race.budget_s:.0f} s on {race.jobs} cores; {race.repeats} trials per contestant and rung, "
             f"paired afl-fuzz seeds; successive halving with eta {race.eta}; seed {race.seed}.", ""]
    lines += [f"**Recommended: {d.recommended}.** {d.reason}.", ""]
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
            lines.append(f"| {name}{' (default)' if name == default else ''} | {', '.join(map(str, cov))} | "
                         f"{_median(cov):g} | {_median([t.execs_per_s for t in ts]):,.0f} | "
                         f"{_median([t.queue for t in ts]):,.0f} |")
        if rung.kept and rung.index + 1 < len(race.rungs):
            lines.append(f"\nOn to the next rung: {', '.join(rung.kept)}.")
    if race.stopped_early:
        lines += ["", "The race stopped early: every candidate covered significantly less than the default."]
    lines += ["", "All figures are afl-fuzz's own (execs/s, queue) and the yardstick's edges over everything each "
                  "trial kept (queue, crashes, hangs)."]
    return "\n".join(lines) + "\n"
