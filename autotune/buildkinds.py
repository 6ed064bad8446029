"""The build kinds of `autotune cc` (``AUTOTUNE_CC_INSTRUMENT``), written once.

:data:`BUILD_KINDS` lists, in kernels/cov_kinds.h ``COV_BUILD_KINDS`` order, what each kind adds to
every compile, the pass plugin of its own, the metrics the runtime serves on it (what
kernels/cov_ids.c ``cov_metric_check`` accepts), the census it takes, how its blocks count, and the
words the env files, the race report and docs/BUILD_KINDS.md use for it. Every caller asks this
table: the wrapper's flags and plugins (autotune.cc), the cheapest kind serving a metric (the race,
tune's env files), whether a build serves a metric (the portfolio), the build-kind table.

Adding a build kind: a line in kernels/cov_kinds.h, a :class:`BuildKind` here, and the table of
docs/BUILD_KINDS.md (tests/test_buildkinds.py checks the three agree; :func:`markdown_table` writes
the table). Its instrumentation, when new, is its pass plugin (``plugin``) or runtime code.

This module is imported by every compiler call of the wrapper: it imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from autotune.vocabulary import METRIC_TABLE

KIND_VAR = "AUTOTUNE_CC_INSTRUMENT"
# An inline kind's pass counts through the runtime's two-level map (its index, then the dense
# counters afl-fuzz scans) instead of a flat map: "1"; unset or "0": the flat map.
INDEX_VAR = "AUTOTUNE_CC_INDEX"
INDEX_REASON = ("count inline through our two-level map: the index (AUTOTUNE_INDEX_SIZE, sized at run time) "
                "keeps collisions out, afl-fuzz scans only the dense map (AUTOTUNE_MAP_SIZE)")
DEFAULT_KIND = "full"
HOOKS_FLAG = "-finstrument-functions-after-inlining"  # function entry/exit hooks: the call stack

# What the runtime serves on a kind (cov_kinds.h SERVES): every metric, every metric not keyed by the
# call stack, the metric of the kind's compile-time parameter (KindParam.metric), or one metric's name.
SERVES_ALL, SERVES_NOSTACK, SERVES_PARAM = "all", "nostack", "param"
CENSUS_NONE = "none"
# How its blocks count (cov_kinds.h COUNTS): guard hooks into the map sink, clang's inline 8-bit
# counters (copied into the map at each execution's end), or inline into a flat map by our pass
# (8-bit NeverZero, AFL++'s hash: the runtime refuses other settings, kernels/cov_config.c edge_config_check).
COUNTS_HOOKS, COUNTS_COUNTERS, COUNTS_AREA = "hooks", "counters", "area"


@dataclass(frozen=True)
class KindParam:
    """A compile-time parameter a kind needs (the pass reads it from the compile's environment): one of
    ``values``, the build of ``values[i]`` serving ``metrics[i]``."""

    var: str
    values: tuple[str, ...]
    metrics: tuple[str, ...]
    reason: str  # why autotune-build.env sets it: reason.format(value)
    needs: str  # what the wrapper's refusal says the kind needs ("the N of its ngram-N metric")
    choice: str  # its fix's choice ("an N from 2 to 8 (the runtime's ngram-2 .. ngram-8)")
    example: str  # the value its fix suggests

    def metric(self, value: str | None) -> str | None:
        """The metric a build of ``value`` serves (None: not a value of this parameter)."""
        return dict(zip(self.values, self.metrics)).get(value or "")


@dataclass(frozen=True)
class BuildKind:
    """One ``AUTOTUNE_CC_INSTRUMENT`` value."""

    name: str
    flags: tuple[str, ...]  # added to every invocation of the wrapper
    serves: str  # SERVES_ALL, SERVES_NOSTACK, SERVES_PARAM or one metric
    census: str  # the census (probe) it takes: SERVES_ALL, SERVES_NOSTACK or CENSUS_NONE
    counts: str  # COUNTS_HOOKS, COUNTS_COUNTERS or COUNTS_AREA
    summary: str  # what it instruments (autotune-build.env's reason, the docs table)
    serves_text: str  # the metrics it serves, in words (the docs table)
    cost: str  # per block / per function call (the docs table)
    env_note: str = ""  # why autotune-run.env's header names it (tune's env files)
    plugin: str | None = None  # kernels/ source of its own pass plugin, loaded after the select plugin
    param: KindParam | None = None
    link_script: str | None = None  # kernels/ linker script every program link of the kind takes (-Wl,-T)

    @property
    def hooked(self) -> bool:
        """It has function entry/exit hooks (the link records the hook order: autotune.llvm.hook_order)."""
        return HOOKS_FLAG in self.flags

    @property
    def inline(self) -> bool:
        """Its blocks count inline into a flat map (8-bit NeverZero, AFL++'s hash): no call per block."""
        return self.counts == COUNTS_AREA

    @property
    def splits_selects(self) -> bool:
        """``AUTOTUNE_CC_SELECTS``'s default: the inline kinds count as AFL++'s CLASSIC/NGRAM, which do not split."""
        return not self.inline

    def metrics(self) -> tuple[str, ...]:
        """Every metric a build of this kind can serve (a parametrised kind: one of them per value)."""
        if self.serves == SERVES_ALL:
            return tuple(m.name for m in METRIC_TABLE)
        if self.serves == SERVES_NOSTACK:
            return tuple(m.name for m in METRIC_TABLE if not m.call_context)
        if self.serves == SERVES_PARAM and self.param:
            return self.param.metrics
        return (self.serves,)

    def serves_metric(self, metric: str, *, param: str | None = None) -> bool:
        """Whether the runtime on a build of this kind (with ``param``, its parameter's value) serves ``metric``."""
        if self.serves == SERVES_PARAM and self.param:
            return metric == self.param.metric(param)
        return metric in self.metrics()

    def param_of(self, metric: str) -> str | None:
        """The parameter value whose build serves ``metric`` (None: no parameter, or none serves it)."""
        if self.param is None:
            return None
        return next((v for v, m in zip(self.param.values, self.param.metrics) if m == metric), None)

    def build_vars(self, metric: str | None = None, *, indexed: bool = False) -> dict[str, str]:
        """The compile-time variables of this kind (for a parametrised kind, the build serving ``metric``;
        ``indexed``: an inline kind counting through the two-level map's index, ``AUTOTUNE_CC_INDEX=1``)."""
        if indexed and not self.inline:
            raise ValueError(f"the {self.name} kind does not count inline: it has no indexed build")
        out = {KIND_VAR: self.name}
        if self.param is not None and metric is not None:
            out[self.param.var] = self.param_of(metric) or ""
        if indexed:
            out[INDEX_VAR] = "1"
        return out

    def admits(self, *, counter_bits: int, overflow: str) -> bool:
        """Whether its counters are of this width and overflow policy (inline 8-bit counters: 8-bit NeverZero)."""
        return self.counts == COUNTS_HOOKS or (counter_bits == 8 and overflow == "neverzero")


BUILD_KINDS: tuple[BuildKind, ...] = (
    BuildKind("full", ("-fsanitize-coverage=trace-pc-guard", HOOKS_FLAG, "-g"), SERVES_ALL, SERVES_ALL, COUNTS_HOOKS,
              summary="guards and function hooks (call-context metrics)",
              serves_text="every metric, the probe's census", cost="a call per block, two per function call",
              env_note="the default: function hooks for the call context"),
    BuildKind("blocks", ("-fsanitize-coverage=trace-pc-guard", "-g"), SERVES_NOSTACK, SERVES_NOSTACK, COUNTS_HOOKS,
              summary="guards only (block metrics, no function hooks)",
              serves_text="`edge`, `ngram-N`, `guard`", cost="a call per block",
              env_note="no function hooks: this metric needs no call stack; full works too"),
    BuildKind("guard", ("-fsanitize-coverage=inline-8bit-counters", "-g"), "guard", CENSUS_NONE, COUNTS_COUNTERS,
              summary="inline 8-bit counters, one per guard (PCGUARD's coverage)",
              serves_text="`guard` only (8-bit NeverZero counters, as AFL++'s PCGUARD)",
              cost="one inline increment, no call",
              env_note="clang's inline 8-bit counters, NeverZero: no call per block",
              plugin="plugin/autotune_counters.cpp", link_script="guard_counters.ld"),
    BuildKind("edge", ("-g",), "edge", CENSUS_NONE, COUNTS_AREA,
              summary="edges counted inline, as AFL++'s CLASSIC counts them",
              serves_text="`edge` only, as AFL++'s CLASSIC counts it (flat map, 8-bit NeverZero)",
              cost="one inline update, no call", plugin="plugin/autotune_edges.cpp"),
    BuildKind("ngram", ("-g",), SERVES_PARAM, CENSUS_NONE, COUNTS_AREA,
              summary="N-grams of blocks counted inline, as AFL++'s NGRAM-N counts them",
              serves_text="`ngram-N` of that N only, as AFL++'s NGRAM-N counts it (flat map, 8-bit NeverZero)",
              cost="one inline update and a window shift, no call", plugin="plugin/autotune_edges.cpp",
              # AFL++ takes 2..16 (NGRAM_SIZE_MAX); the runtime's metrics are ngram-2 .. ngram-8 (kernels/cov_keys.h)
              param=KindParam("AUTOTUNE_CC_NGRAM", tuple(str(n) for n in range(2, 9)),
                              tuple(f"ngram-{n}" for n in range(2, 9)),
                              "the ngram kind's N: the last {} blocks make a key", needs="the N of its ngram-N metric",
                              choice="an N from 2 to 8 (the runtime's ngram-2 .. ngram-8)", example="8")),
    BuildKind("ctx", ("-g",), SERVES_PARAM, CENSUS_NONE, COUNTS_AREA,
              summary="edges in their call context counted inline, as AFL++'s CTX, CALLER and CTX-K count them",
              serves_text="the call-context metric it was built for (`ctx`, `caller`, `ctx-K`), as AFL++'s "
                          "CTX, CALLER, CTX-K count it (flat map, 8-bit NeverZero)",
              cost="one inline update per block; per call, one to four stores", plugin="plugin/autotune_edges.cpp",
              param=KindParam("AUTOTUNE_CC_CTX", ("ctx", "caller", "ctx-2", "ctx-4", "ctx-8"),
                              ("ctx", "caller", "ctx-2", "ctx-4", "ctx-8"),
                              "the ctx kind's metric: each edge keyed with its {} call context",
                              needs="the call-context metric it counts", choice="ctx, caller, ctx-2, ctx-4 or ctx-8",
                              example="ctx-2")),
)
KINDS: dict[str, BuildKind] = {k.name: k for k in BUILD_KINDS}
assert DEFAULT_KIND in KINDS


def kind_for(metric: str, *, counter_bits: int = 8, overflow: str = "neverzero") -> BuildKind:
    """The cheapest kind (the one serving the fewest metrics) whose runtime serves ``metric`` at any map
    layout and size, with counters of ``counter_bits`` and ``overflow``. The inline kinds, which fix the
    map (flat, AFL++'s hash), are :func:`inline_kind_for`'s."""
    fits = [k for k in BUILD_KINDS if not k.inline and k.serves_metric(metric)
            and k.admits(counter_bits=counter_bits, overflow=overflow)]
    if not fits:
        raise ValueError(f"no build kind serves the metric {metric!r}")
    return min(fits, key=lambda k: len(k.metrics()))


def inline_kind_for(metric: str) -> BuildKind | None:
    """The inline kind that counts ``metric`` (edge: edge; ngram-N: ngram), None when none does."""
    return next((k for k in BUILD_KINDS if k.inline and metric in k.metrics()), None)


def serves(build_vars: Mapping[str, str], metric: str) -> bool:
    """Whether our runtime on a build under ``build_vars`` (autotune cc's compile-time variables;
    no ``AUTOTUNE_CC_INSTRUMENT``: the full kind) serves ``metric`` (kernels/cov_ids.c cov_metric_check)."""
    kind = KINDS.get(build_vars.get(KIND_VAR) or DEFAULT_KIND)
    if kind is None:
        return False
    return kind.serves_metric(metric, param=build_vars.get(kind.param.var) if kind.param else None)


_CENSUS_TEXT = {SERVES_ALL: "every metric", SERVES_NOSTACK: "the metrics without call context", CENSUS_NONE: "none"}


def markdown_table() -> str:
    """The build-kind table of docs/BUILD_KINDS.md."""
    rows = ["| `AUTOTUNE_CC_INSTRUMENT` | what `autotune cc` adds | serves | census (probe) | "
            "cost per block / per function call |", "|---|---|---|---|---|"]
    for k in BUILD_KINDS:
        name = f"`{k.name}`" + (" (default)" if k.name == DEFAULT_KIND else "")
        if k.param:
            name += f" (with `{k.param.var}`: {k.param.choice})"
        adds = [f"`{' '.join(k.flags)}`"]
        if k.plugin:
            adds.append(f"our pass `-fpass-plugin=<{plugin_name(k.plugin)}.so>`")
        adds.append("the select plugin " + ("unless `AUTOTUNE_CC_SELECTS=0`" if k.splits_selects
                                            else "only with `AUTOTUNE_CC_SELECTS=1`"))
        rows.append(f"| {name} | {', '.join(adds)} | {k.serves_text} | {_CENSUS_TEXT[k.census]} | {k.cost} |")
    return "\n".join(rows)


def plugin_name(source: str) -> str:
    """The artefact name of a pass plugin's source: plugin/autotune_edges.cpp -> autotune-edges."""
    return source.rsplit("/", 1)[-1].removesuffix(".cpp").replace("_", "-")
