"""report.md: which file to use when, the choice and why, the objective, the trials, convergence."""

from __future__ import annotations

from autotune.filenames import AFL_BUILD_REBUILT_ENV
from autotune.mappoint import MapPoint
from autotune.measure.stats import human_bytes
from autotune.tune.result import TuneResult
from autotune.vocabulary import AFL_DEFAULT_MAP_SLOTS

OBJECTIVE_MD = """score = log2(execs_per_s with N instances)
      + log2(1 - lost_keys)          # Equation 1 collisions (+ two-level dense overflow)
      + log2(1 - counter_overflow)   # keys whose hit count wraps a W-bit counter
      + w_s * log2(keys)             # credit for a richer metric
      - P * (1 - exp(-max(0, lost_keys / c_max - 1)))"""
TRIALS_HEADER = "| call | phase | configuration | execs/s | collision | overflow | score (bits) | feasible |"
TRIALS_RULE = "|---:|---|---|---:|---:|---:|---:|---|"


def _pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def _cfg(c: MapPoint | dict) -> str:
    c = c if isinstance(c, MapPoint) else MapPoint.from_dict(c)  # confirmation rows are report.json's records
    return f"{c.metric}, {c.layout}, {human_bytes(c.map_slots)} slots, {c.width_bits}-bit"


def _confirmation(conf: dict | None) -> list[str]:
    """The confirmation round (autotune.tune.confirm): every repeat and the decision."""
    if not conf:
        return []
    L = ["## Confirmation", "", f"{conf['decision']}.", "",
         "| configuration | search execs/s | repeats execs/s | median execs/s | median score (bits) | map memory | |",
         "|---|---:|---|---:|---:|---:|---|"]
    for r in conf["rows"]:
        s = r["search_execs_per_s"]
        mark = ("chosen" if r["config"] == conf["chosen"] else "") + \
            (" highest median" if r["config"] == conf["leader"] else "") + ("" if r["feasible"] else " infeasible")
        L += [f"| {_cfg(r['config'])} | {'' if s is None else f'{s:.0f}'} | "
              f"{', '.join(f'{x:.0f}' for x in r['repeats_execs_per_s'])} | {r['execs_per_s']:.0f} | "
              f"{r['score_bits']:.3f} | {human_bytes(int(r['memory_bytes']))} | {mark.strip()} |"]
    return L + ["", f"Ties: medians within {conf['band_bits']:.3f} bits of the highest (the interquartile range of its "
                "repeats, at least the median one of all rows and the search's noise estimate) go to the least "
                "map memory, then the narrower counters.", ""]


def render_report(result: TuneResult, *, files: list[str]) -> str:
    b, bc = result.best, result.best_config
    s = result.settings
    nr = result.no_rebuild_best
    L = [f"# autotune tune: {result.target}", ""]
    L += ["## Which file to use when", ""]
    L += ["| file | use it when |", "|---|---|"]
    L += ["| `autotune-run.env` | the target is built with `autotune cc` (our runtime) and run by the stock "
          "afl-fuzz: runs the best configuration below, no AFL++ rebuild |"]
    L += ["| `afl-build.env` + `afl-run.env` | the target is built with AFL++'s own afl-cc as installed "
          "(map fixed at 64 KiB, 8-bit counters): the best such configuration |"]
    if AFL_BUILD_REBUILT_ENV in files:
        L += [f"| `afl-build-rebuilt.env` + `afl-run.env` | you rebuild AFL++ with MAP_SIZE_POW2="
              f"{bc.map_pow2} to use afl-cc at the chosen map size |"]
    L += ["", "Load any of them with `set -a; . ./FILE; set +a` before building or fuzzing.", ""]
    L += ["## Choice", ""]
    L += [f"- **Best**: {_cfg(bc)}: {b.execs_per_s:.0f} execs/s measured ({b.measurement.source}), "
          f"collision rate {_pct(b.precision.collision_rate)}, counter overflow "
          f"{_pct(b.precision.counter_overflow)}, score {b.score_bits:.3f} bits."]
    if result.needs_afl_rebuild:
        L += [f"- It hashes into {human_bytes(bc.map_slots)} slots, more than AFL++'s compile-time "
              f"64 KiB for CLASSIC/NGRAM/CTX; {result.rebuild_note()}. Our runtime (`autotune-run.env`) runs it "
              f"with the stock afl-fuzz, without rebuilding AFL++."]
    else:
        L += ["- It fits AFL++'s compile-time 64 KiB map: no rebuild needed."]
    if nr:
        afl = nr.afl_hash_collision_rate
        coll = (f"collision rate {_pct(afl)} with AFL++'s own hash (census; Equation 1: "
                f"{_pct(nr.precision.collision_rate)})" if afl is not None
                else f"collision rate {_pct(nr.precision.collision_rate)}")
        L += [f"- **Best without a rebuild** (AFL++ as installed): {_cfg(nr.config)}: {nr.execs_per_s:.0f} "
              f"execs/s, {coll}, score {nr.chosen_score_bits:.3f} bits"
              + ("" if nr.chosen_feasible else " (above the collision limit)") + "."]
    L += [f"- Search: {result.calls} calls, {result.measured} configurations measured, "
          f"{result.cache_hits} answered from the cache, best reached at call {result.calls_to_best()}; "
          f"backend `{result.backend}`, seed {result.seed}.", ""]
    L += _confirmation(result.confirmation)
    L += ["## Objective", "", "```", OBJECTIVE_MD, "```", ""]
    L += [f"Settings: c_max = {s.max_collision_rate}, w_s = {s.sensitivity_weight}, P = {s.penalty_bits}, "
          f"N = {s.jobs} instance(s)"
          + (f", LLC {human_bytes(int(s.llc_bytes))}" if s.llc_bytes else "") + ". "
          "Execs/s are measured: the probe's harness replaying its corpus through our runtime so configured "
          "(`replay`), or bench.c replaying the probe's key trace plus the target's own time per execution "
          "(`bench`). Collision rates are BigMap's Equation 1 (DSN 2021) at the probe's estimated key count; "
          "counter overflow is the share of census keys whose hit count in one execution reaches 2^W "
          "(Sarafov et al., FUZZING 2024). A configuration is feasible when it loses at most c_max of twice the "
          "estimated keys (a campaign finds more) and its map fits afl-fuzz's handshake and the host's L2 (and, "
          "with N instances, half the LLC): the race's rule too (autotune.feasibility). Ties within the "
          "measurement noise go to the smaller map.", ""]
    L += ["## Metrics (from the probe)", "", "| metric | keys seen | keys estimated | 8-bit overflow | "
          "collision rate at 64 KiB (Equation 1) | at 64 KiB with AFL++'s hash (census) |", "|---|---:|---:|---:|---:|---:|"]
    coll = result.curves.get("collision_rate", {})
    for m in result.inputs.metrics.values():
        c64 = coll.get(m.metric, {}).get(str(AFL_DEFAULT_MAP_SLOTS))
        a64 = m.afl_hash_collision.get(AFL_DEFAULT_MAP_SLOTS)
        L += [f"| {m.metric} | {m.observed_keys} | {m.estimated_keys:.0f} | "
              f"{_pct(m.overflow_by_width.get(8, 0.0))} | {'' if c64 is None else _pct(c64)} | "
              f"{'' if a64 is None else _pct(a64)} |"]
    L += ["", "Our runtime indexes with a uniform hash of the exact key (`AUTOTUNE_KEY_HASH=exact`), so Equation 1 "
          "holds for it; AFL++'s own N-gram hash makes distinct N-grams share a slot at every map size, so an "
          "afl-cc build sees the census's column."]
    L += ["", "## Best trials", "", TRIALS_HEADER, TRIALS_RULE]
    top = sorted(result.trials, key=lambda t: (-t.evaluation.score_bits, t.call))[:10]
    L += [_trial_row(t) for t in top]
    conv = result.convergence()
    marks = sorted({1, len(conv) // 4, len(conv) // 2, 3 * len(conv) // 4, len(conv)} - {0})
    L += ["", "## Convergence", "", "| after call | best score (bits) |", "|---:|---:|"]
    L += [f"| {i} | {conv[i - 1]:.3f} |" for i in marks]
    L += ["", "## Every call", "", "The search's calls in order (`autotune run` prints only a summary line for them).", "",
          TRIALS_HEADER, TRIALS_RULE]
    L += [_trial_row(t) for t in sorted(result.trials, key=lambda t: t.call)]
    L += ["", "## Files", ""] + [f"- `{f}`" for f in files] + [""]
    return "\n".join(L)


def _trial_row(t) -> str:
    """One call of the search as a row under TRIALS_HEADER."""
    e = t.evaluation
    return (f"| {t.call} | {t.phase} | {_cfg(e.config)} | {e.execs_per_s:.0f} | "
            f"{_pct(e.precision.collision_rate)} | {_pct(e.precision.counter_overflow)} | "
            f"{e.score_bits:.3f} | {'yes' if e.feasible else 'no'} |")
