"""Env files of a :class:`autotune.configuration.Configuration`: the race's recommendation
(afl-build.env, afl-run.env, autotune-build.env, autotune-run.env) and a portfolio instance's
``env/<instance>.env`` and ``host.env``. Each variable a line with its reason, rendered by
:func:`autotune.emit.envfiles.render_env`; the callers write the texts."""

from __future__ import annotations

from typing import Mapping, Sequence

from autotune.buildkinds import BUILD_KINDS, INDEX_REASON, INDEX_VAR, KIND_VAR, KINDS
from autotune.configuration import CC_AFL, Configuration
from autotune.emit.envfiles import EnvVar, render_env, runtime_afl_vars
from autotune.filenames import AFL_BUILD_ENV, AFL_RUN_ENV, AUTOTUNE_BUILD_ENV, AUTOTUNE_RUN_ENV
from autotune.vocabulary import CONTEXT_METRICS, METRIC_SPECS, COUNTER_BITS_VAR, INDEX_FILE_VAR, INDEX_SIZE_VAR, KEY_HASH_VAR, LAYOUT_VAR, MAP_SIZE_VAR, METRIC_VAR, OVERFLOW_VAR


def build_var_reason(var: str, value: str) -> str:
    """The reason for one of autotune cc's compile-time variables (autotune.buildkinds), or of
    afl-clang-fast's ``AFL_LLVM_INSTRUMENT``."""
    if var == "AFL_LLVM_INSTRUMENT":
        return f"afl-clang-fast's instrumentation: {value} (AFL++'s own build of it)"
    if var == KIND_VAR:
        return "autotune cc's build kind: " + (KINDS[value].summary if value in KINDS else value)
    if var == INDEX_VAR:
        return INDEX_REASON if value == "1" else "count inline into a flat map"
    param = next((k.param for k in BUILD_KINDS if k.param and k.param.var == var), None)
    return param.reason.format(value) if param else "autotune cc compile-time setting"


def build_variables(config: Configuration) -> list[EnvVar]:
    """The configuration's compile-time variables, in order, each with its reason."""
    return [EnvVar(k, v, build_var_reason(k, v)) for k, v in config.build]


def _inline_hash(metric: str) -> str:
    """AUTOTUNE_KEY_HASH=afl's reason on an inline kind's flat map: the AFL++ key it counts."""
    if metric.startswith("ngram-"):
        return "AFL++'s NGRAM hash (cur ^ p1 >> 1 ^ .. ^ p(N-1) >> 1) of compile-time block ids"
    if metric in CONTEXT_METRICS:
        return (f"AFL++'s {METRIC_SPECS[metric].afl_instrument} hash (cur ^ prev >> 1 ^ the xor of the callers' "
                "function ids) of compile-time ids")
    return "AFL++'s edge hash (cur ^ prev >> 1) of compile-time block ids"


def race_run_variables(chosen: Configuration, *, index_file: str) -> list[EnvVar]:
    """The race's tuned configuration's run-time variables (sorted by name; its index file at
    ``index_file``) with their reasons, then afl-fuzz's for our runtime."""
    settings = dict(chosen.settings)
    if INDEX_FILE_VAR in settings:
        settings[INDEX_FILE_VAR] = index_file
    flat = settings.get(LAYOUT_VAR) == "flat"  # an inline kind's flat map
    afl_keys = settings.get(KEY_HASH_VAR) == "afl"  # an inline kind's keys (flat or through the index)
    reasons = {METRIC_VAR: f"coverage metric {chosen.name}",
               LAYOUT_VAR: "flat map, counted inline" if flat else "two-level map (BigMap)",
               INDEX_SIZE_VAR: "index slots (the hash space): Equation 1 collisions within the limit at twice "
                                      "the census's keys",
               MAP_SIZE_VAR: "map slots (the hash space): Equation 1 collisions within the limit at twice the "
                                    "census's keys"
                                    if flat else "dense slots afl-fuzz scans: room for twice the census's keys",
               COUNTER_BITS_VAR: f"{settings.get('AUTOTUNE_COUNTER_BITS', '8')}-bit counters"
                                        + (" (afl-fuzz classifies bytes)" if settings.get(COUNTER_BITS_VAR, "8") == "8"
                                           else ", classified into afl-fuzz's buckets (fewer wrap in hot loops)"),
               OVERFLOW_VAR: {"neverzero": "NeverZero: a counter that wraps still counts as hit",
                                     "saturate": "saturate: a counter stops at its largest value",
                                     "wrap": "wrap: a counter past its largest value starts again at 0"
                                     }.get(settings.get(OVERFLOW_VAR, "neverzero"), "overflow policy"),
               KEY_HASH_VAR: _inline_hash(settings.get(METRIC_VAR, chosen.name)) if afl_keys
                                    else "exact keys (collision-free before the index)",
               INDEX_FILE_VAR: "slot assignments kept across afl tool runs (resume, afl-cmin, afl-showmap)"}
    run = [EnvVar(k, v, reasons.get(k, "runtime setting")) for k, v in sorted(settings.items())]
    return run + runtime_afl_vars()


def race_env_files(chosen: Configuration, *, why: str, index_file: str) -> dict[str, str]:
    """{file name: text}: afl-build.env (and afl-run.env) when an afl-clang-fast configuration
    (``chosen``: AFL++'s default, or the secondaries' build of a portfolio alternative such as OSS-Fuzz's
    CLASSIC,CTX-2, its variables in afl-build.env) is recommended, else also autotune-build.env and
    autotune-run.env for ``chosen`` on our runtime; ``why`` the race's reason, on every file."""
    afl_title = ["afl-build.env: AFL++'s default, recommended by autotune's race in afl-fuzz",
                 "build the target with afl-clang-fast (-fsanitize=fuzzer for a libFuzzer harness) and no AFL_LLVM_*",
                 "variables: PCGUARD, one counter per SanitizerCoverage guard, is AFL++'s default", why]
    afl_run = ["afl-run.env: nothing to set for afl-fuzz: the target reports its own map size", why]
    if chosen.cc_kind == CC_AFL and chosen.build:
        title = [f"afl-build.env: the secondaries' (-S) build recommended by autotune's race: {chosen.description}",
                 "build a second copy of the target with afl-clang-fast under this file for the -S instances; the -M",
                 "main is AFL++'s default build (afl-clang-fast, no AFL_LLVM_* variables)", why]
        return {AFL_BUILD_ENV: render_env(title=title, variables=build_variables(chosen)),
                AFL_RUN_ENV: render_env(title=afl_run, variables=[])}
    if chosen.cc_kind == CC_AFL:
        return {AFL_BUILD_ENV: render_env(title=afl_title, variables=[]),
                AFL_RUN_ENV: render_env(title=afl_run, variables=[])}
    # ours is recommended; for a user who builds with afl-cc all the same, the race tried no afl-cc
    # configuration but AFL++'s default, so that is what these two files hold (validate's aflpp-tuned)
    afl_title = ["afl-build.env: if you build with afl-clang-fast instead of autotune cc, AFL++'s default",
                 "(no AFL_LLVM_* variables: PCGUARD); the race's recommendation is autotune-build.env +",
                 "autotune-run.env, which the race measured against this default", why]
    afl_run = ["afl-run.env: nothing to set for afl-fuzz with AFL++'s default build", why]
    title = [f"autotune-build.env: build the target with autotune cc under this file ({chosen.description})", why]
    rtitle = [f"autotune-run.env: afl-fuzz with our runtime, {chosen.name}; load with set -a; . FILE; set +a", why]
    return {AFL_BUILD_ENV: render_env(title=afl_title, variables=[]),
            AFL_RUN_ENV: render_env(title=afl_run, variables=[]),
            AUTOTUNE_BUILD_ENV: render_env(title=title, variables=build_variables(chosen)),
            AUTOTUNE_RUN_ENV: render_env(title=rtitle, variables=race_run_variables(chosen, index_file=index_file))}


def instance_variables(config: Configuration, *, main: bool, afl_env: Sequence[tuple[str, str]], index_file: str,
                       known: set[str] | None) -> list[EnvVar]:
    """A portfolio instance's variables, each with its reason: pinned by the launch script, afl-fuzz's
    variation ``afl_env``, the configuration's run-time variables (its index file at ``index_file``)."""
    out = [EnvVar("AFL_NO_AFFINITY", "1", "the launch script pins the instance with taskset"),
           EnvVar("AFL_NO_UI", "1", "the instance writes its status to its log, not a terminal")]
    if main and (known is None or "AFL_FINAL_SYNC" in known):
        out.append(EnvVar("AFL_FINAL_SYNC", "1", "the main imports the secondaries' last finds before it stops"))
    out += [EnvVar(k, v, "AFL++'s documented variation of secondaries") for k, v in afl_env]
    for k, v in config.settings:
        if k == INDEX_FILE_VAR:
            out.append(EnvVar(k, index_file, "this instance's key->slot table, kept across its children and a resume"))
        else:
            out.append(EnvVar(k, v, f"configuration {config.name}"))
    if config.cc_kind != CC_AFL:  # a build with our runtime (AFL++'s keeps afl-fuzz's defaults)
        out += [e for e in runtime_afl_vars() if e.name not in config.run_vars]
    return out


def instance_env_file(title: str, config: Configuration, *, main: bool, afl_env: Sequence[tuple[str, str]],
                      index_file: str, known: set[str] | None) -> str:
    """``env/<instance>.env`` of a portfolio instance, loaded by its launch script."""
    return render_env(title=[title, "loaded by the launch script; load by hand with set -a; . FILE; set +a"],
                      variables=instance_variables(config, main=main, afl_env=afl_env, index_file=index_file,
                                                   known=known))


def host_env_file(host_env: Mapping[str, str]) -> str:
    """A portfolio's ``host.env``: what autotune's own afl-fuzz trials set on this host."""
    return render_env(title=["what autotune's own afl-fuzz trials set on this host (no change to the host itself);",
                             "delete the lines your machines do not need"],
                      variables=[EnvVar(k, v, "autotune's trial setting") for k, v in host_env.items()])
