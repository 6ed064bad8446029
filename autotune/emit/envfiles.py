"""Env files: one ``NAME=value`` a line, each after a comment giving its reason; loadable with
``set -a; . FILE; set +a`` (values are plain shell words, checked). Built as lists of
(name, value, reason) and rendered; nothing touches os.environ."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from autotune.afl import RUNTIME_AFL_VARS
from autotune.buildkinds import COUNTS_COUNTERS, KIND_VAR, kind_for
from autotune.runtime.config import EnvVar, RuntimeConfig
from autotune.tune.result import TuneResult
from autotune.vocabulary import COUNTER_BITS_VAR, INDEX_FILE_VAR, INDEX_SIZE_VAR, KEY_HASH_VAR, LAYOUT_VAR, MAP_SIZE_VAR, METRIC_VAR, OVERFLOW_VAR, SEED_VAR, afl_mode, has_map_size
from autotune.vocabulary import AFL_DEFAULT_MAP_POW2, AFL_DEFAULT_MAP_SLOTS

_SAFE = re.compile(r"^[A-Za-z0-9_./:,+-]*$")
_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


def render_env(*, title: list[str], variables: list[EnvVar]) -> str:
    """Comment lines, then per variable its reason and ``NAME=value`` (shell-quoted when needed)."""
    lines = [f"# {t}" if t else "#" for t in title]
    for v in variables:
        if not _NAME.match(v.name) or "\n" in v.value or "\0" in v.value:
            raise ValueError(f"not an env line: {v.name}={v.value!r}")
        lines.append("")
        lines += [f"# {r}" for r in v.reason.splitlines()]
        lines.append(f"{v.name}={v.value if _SAFE.match(v.value) else shlex.quote(v.value)}")
    return "\n".join(lines) + "\n"


def _pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def _afl_build_vars(*, metric: str, overflow8: float) -> list[EnvVar]:
    mode = afl_mode(metric)
    out = [EnvVar("AFL_LLVM_INSTRUMENT", mode.instrument,
                  f"coverage metric {metric}: afl-cc's {mode.instrument} instrumentation hashes the same keys"
                  if has_map_size(metric) else
                  f"coverage metric {metric}: afl-cc's default {mode.instrument} instrumentation, one counter per "
                  "guard,\nits map the guard count")]
    for k, v in mode.extra.items():
        out.append(EnvVar(k, str(v), f"part of the {metric} metric"))
    if overflow8 > 0:
        out.append(EnvVar("AFL_LLVM_NOT_ZERO", "1",
                          f"NeverZero on: {_pct(overflow8)} of the keys reach 256 hits in one execution in the "
                          f"census;\nan 8-bit counter must wrap to 1, not 0, so the key still counts as hit"))
    else:
        out.append(EnvVar("AFL_LLVM_SKIP_NEVERZERO", "1",
                          "NeverZero off: no key reached 256 hits in one execution in the census,\n"
                          "so 8-bit counters never wrap and the extra instruction is saved"))
    return out


def afl_build_env(result: TuneResult) -> str:
    """For afl-cc: the configuration AFL++ as installed can build (map 2^16)."""
    nr = result.no_rebuild_best or result.best
    metric = nr.config.metric
    ov8 = _overflow8(result, metric)
    title = [
        "afl-build.env: for afl-cc / afl-clang-fast (AFL++ as installed, its map of 2^16 bytes), written by autotune tune",
        "load: set -a; . ./afl-build.env; set +a; then build the target with afl-clang-fast",
        (f"target {result.target}: {metric} in a flat 64 KiB map of 8-bit counters, {nr.execs_per_s:.0f} execs/s "
         f"measured, {_collisions(result, metric, AFL_DEFAULT_MAP_SLOTS, nr.precision.collision_rate)}")
        if has_map_size(metric) else
        (f"target {result.target}: {metric}, one 8-bit counter per guard (no collisions), "
         f"{nr.execs_per_s:.0f} execs/s measured"),
    ]
    if result.needs_afl_rebuild:
        b = result.best_config
        title += [f"the best configuration ({b.metric}, {b.layout}, {b.map_slots} slots, {b.width_bits}-bit) "
                  f"needs a larger map: see afl-build-rebuilt.env, or run it without rebuilding AFL++ via autotune-run.env"]
    return render_env(title=title, variables=_afl_build_vars(metric=metric, overflow8=ov8))


def afl_build_rebuilt_env(result: TuneResult) -> str | None:
    """For afl-cc of an AFL++ rebuilt with a larger MAP_SIZE_POW2 (only when the best needs it)."""
    if not result.needs_afl_rebuild:
        return None
    b = result.best_config
    pow2 = b.map_pow2
    title = [
        f"afl-build-rebuilt.env: for afl-cc of an AFL++ REBUILT with MAP_SIZE_POW2={pow2} (stock AFL++ has "
        f"{AFL_DEFAULT_MAP_POW2}), written by autotune tune",
        f"rebuild AFL++: set '#define MAP_SIZE_POW2 {pow2}' in include/config.h, then make && make install",
        "load: set -a; . ./afl-build-rebuilt.env; set +a; then build the target with that afl-clang-fast",
        f"target {result.target}: {b.metric} in a map of 2^{pow2} slots, "
        f"{_collisions(result, b.metric, b.map_slots, result.best.precision.collision_rate)}",
        f"AFL++'s counters are 8-bit and flat (the chosen {b.layout} map of {b.width_bits}-bit counters "
        "runs only with our runtime)",
    ]
    return render_env(title=title, variables=_afl_build_vars(metric=b.metric, overflow8=_overflow8(result, b.metric)))


def afl_run_env(result: TuneResult) -> str:
    """For afl-fuzz running the afl-cc build of afl-build.env."""
    title = [
        "afl-run.env: for afl-fuzz running the target built with afl-build.env, written by autotune tune",
        "load: set -a; . ./afl-run.env; set +a; then afl-fuzz -i IN -o OUT -- ./target",
    ]
    variables = [EnvVar("AFL_MAP_SIZE", str(AFL_DEFAULT_MAP_SLOTS),
                        "the map size afl-fuzz offers: AFL++'s compile-time map for CLASSIC/NGRAM/CTX;\n"
                        "the target reports its own size in the fork-server handshake and that wins")]
    jobs = result.settings.jobs
    if jobs > 1:
        variables.append(EnvVar("AFL_NO_AFFINITY", "1",
                                f"--jobs {jobs}: several instances on a small host; let the OS place them"))
    return render_env(title=title, variables=variables)


def index_file_name(result: TuneResult) -> str:
    """One index file per configuration: the runtime refuses a file made for another one."""
    b = result.best_config
    dense = result.best.precision.dense_slots or b.map_slots
    return f"autotune-index-{b.metric}-h{b.map_slots}-c{dense}-w{b.width_bits}-s{result.probe_seed}.bin"


NEVERZERO_REASON = "a wrapped counter still reads as hit (AFL++'s NeverZero)"


def _guard_run_env(result: TuneResult) -> str:
    """autotune-run.env for the guard metric: one slot per guard (no layout, size or key hash)."""
    best = result.best
    b, bp = best.config, best.precision
    kind = kind_for(b.metric, counter_bits=b.width_bits, overflow="neverzero")
    inline = kind.counts == COUNTS_COUNTERS  # the guard kind's inline counters are 8-bit NeverZero, as PCGUARD's
    title = [
        "autotune-run.env: for a target built with `autotune cc` (our runtime), run by the stock afl-fuzz",
        f"build the target with {KIND_VAR}={kind.name} "
        + (f"({kind.env_note})" if inline else "(guards only: no function hooks; inline counters are 8-bit)"),
        "load: set -a; . ./autotune-run.env; set +a; then afl-fuzz -i IN -o OUT -- ./target",
        f"target {result.target}: score {best.score_bits:.3f} bits, {best.execs_per_s:.0f} execs/s "
        "measured, no collisions (one slot per guard: the map is the target's guard count)",
    ]
    rc = RuntimeConfig.sized(metric=b.metric, layout=b.layout, hash_slots=b.map_slots, counter_bits=b.width_bits,
                             overflow="neverzero")
    reasons = {
        METRIC_VAR: f"coverage metric chosen by tune (about {best.n_keys:.0f} keys): AFL++'s PCGUARD, "
                           "one counter\nper guard; the runtime reports the guard count as the map (layout and sizes do "
                           "not apply)",
        COUNTER_BITS_VAR: f"counter width: {_pct(bp.counter_overflow)} of the keys overflow it in one execution",
        OVERFLOW_VAR: NEVERZERO_REASON + (f"; an {KIND_VAR}={kind.name} build's\ninline counters "
                                                 "count so" if inline else ""),
    }
    return render_env(title=title, variables=rc.to_env(reasons=reasons))


def tuned_runtime(result: TuneResult, *, out_dir: Path) -> RuntimeConfig:
    """The runtime configuration of the best (its index file in ``out_dir``), as autotune-run.env sets it."""
    return result.best_config.runtime(dense=result.best.precision.dense_slots, seed=result.probe_seed,
                                      index_file=str(out_dir / index_file_name(result)))


def autotune_run_env(result: TuneResult, *, out_dir: Path) -> str:
    """For a target built with `autotune cc`, under the stock afl-fuzz: the best configuration."""
    best = result.best
    b, bp = best.config, best.precision
    if not has_map_size(b.metric):
        return _guard_run_env(result)
    rc = tuned_runtime(result, out_dir=out_dir)
    kind = kind_for(b.metric)
    title = [
        "autotune-run.env: for a target built with `autotune cc` (our runtime), run by the stock afl-fuzz",
        f"build the target with {KIND_VAR}={kind.name} ({kind.env_note})",
        "no AFL++ rebuild is needed: the runtime sizes the map at start-up and reports it in the handshake",
        "load: set -a; . ./autotune-run.env; set +a; then afl-fuzz -i IN -o OUT -- ./target",
        f"target {result.target}: score {best.score_bits:.3f} bits, {best.execs_per_s:.0f} execs/s "
        f"measured, collision rate {_pct(bp.collision_rate)}",
    ]
    collisions = f"collision rate {_pct(bp.collision_rate)} by Equation 1"
    reasons = {
        METRIC_VAR: f"coverage metric chosen by tune (about {best.n_keys:.0f} keys)",
        LAYOUT_VAR: ("two-level map: per-exec work covers only the used slots (BigMap, DSN 2021)"
                            if rc.dense_slots else "flat map: the cheapest at this size on this host"),
        INDEX_SIZE_VAR: f"index slots (the hash space): {collisions}",
        MAP_SIZE_VAR: (f"dense slots afl-fuzz sees: twice the estimated keys, rounded up to 4 KiB pages or a power of two "
                              f"(overflow {_pct(bp.dense_overflow_rate)})") if rc.dense_slots
        else f"map slots (the hash space): {collisions}",
        KEY_HASH_VAR: "index key = mix64 of the exact key (ngram-N: its fold): slots are uniform, so\n"
                             "collisions follow Equation 1 (AFL++'s own hash makes distinct N-grams share a slot\n"
                             "at every size)",
        INDEX_FILE_VAR: "the key->slot table shared by every fork-server child, afl tool run and resumed "
                               "campaign\n(one file per configuration; the runtime creates it and refuses one made "
                               "for another)",
        COUNTER_BITS_VAR: f"counter width: {_pct(bp.counter_overflow)} of the keys overflow it in one execution",
        OVERFLOW_VAR: NEVERZERO_REASON,
        SEED_VAR: "the block-id seed the probe used, so keys match its census",
    }
    v = rc.to_env(reasons=reasons)
    v.append(EnvVar("AFL_MAP_SIZE", str(rc.map_slots), "the map size afl-fuzz offers, equal to the runtime's"))
    v += runtime_afl_vars()
    return render_env(title=title, variables=v)


def runtime_afl_vars() -> list[EnvVar]:
    """afl-fuzz's variables for a target built with our runtime (afl.RUNTIME_AFL_VARS), with their reasons."""
    return [EnvVar(k, v, why) for k, (v, why) in RUNTIME_AFL_VARS.items()]


def afl_hash_collision(result: TuneResult, metric: str, map_slots: int) -> float | None:
    """The collision rate the census measured at ``map_slots`` with AFL++'s own hash, if known."""
    facts = result.inputs.metrics.get(metric)
    return None if facts is None else facts.afl_hash_collision.get(map_slots)


def _collisions(result: TuneResult, metric: str, map_slots: int, eq1: float) -> str:
    afl = afl_hash_collision(result, metric, map_slots)
    if afl is None:
        return f"collision rate {_pct(eq1)} (Equation 1)"
    return f"collision rate {_pct(afl)} with AFL++'s hash as the census measured it (Equation 1, uniform: {_pct(eq1)})"


def _overflow8(result: TuneResult, metric: str) -> float:
    facts = result.inputs.metrics.get(metric)
    return 0.0 if facts is None else facts.overflow_by_width.get(8, 0.0)
