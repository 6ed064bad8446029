"""The race's contestants: AFL++'s default, and our runtime's metrics sized from the probe's census.

- The default is AFL++'s untuned build (afl-clang-fast, PCGUARD) when afl-clang-fast is installed;
  otherwise our runtime's ``guard`` metric on its inline-counter build, which is the same
  coverage (one counter per guard) through our runtime.
- Each candidate metric runs on the cheapest build kind that serves it (``autotune cc``'s
  ``AUTOTUNE_CC_INSTRUMENT``: ``guard`` = inline counters, ``edge`` = edges counted inline as
  AFL++'s CLASSIC counts them, ``blocks`` = guards only, ``full`` = guards and function hooks for
  call-context metrics).
- Hashed metrics use the two-level layout (BigMap): the index H is the smallest power of two
  whose Equation 1 collision rate (BigMap, DSN 2021) at twice the census's estimated keys is
  within ``max_collision_rate``, and the dense map has room for twice the estimated keys
  (``tune.space.dense_slots``), so the map afl-fuzz scans is only as large as the keys need.
- Edge, ngram-N and the call-context metrics count inline, on the kind built for them: edge on the
  edge kind, ngram-N on the ngram kind built for its N (``AUTOTUNE_CC_NGRAM``), ctx, caller and ctx-K
  on the ctx kind built for it (``AUTOTUNE_CC_CTX``): no call per block (about CLASSIC's / NGRAM-N's /
  CTX's instructions per execution, where the blocks kind's hook cost 1.1-1.8x / 1.05-2.5x and the
  full kind's hooks 1.2-9.4x CTX's). When that H is at most ``EDGE_KIND_MAX_MAP_SLOTS`` into a flat
  map of H slots (afl-fuzz scans all H); above, the same kind built indexed (``AUTOTUNE_CC_INDEX=1``)
  counts through the two-level map of the same H and dense size (1.01-1.20x CTX's instructions with
  every key's first sight, benchmarks/results/build-kinds-2026-12-02-ctx-indexed-demo-lz4-libyaml.md).
  Only guard has no inline kind of its own: its inline counters are the guard kind's.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from autotune.buildkinds import inline_kind_for, kind_for
from autotune.cc import KIND_VAR
from autotune.configuration import CC_AFL, CC_AUTOTUNE
from autotune.errors import AutotuneError
from autotune.race.core import Contestant
from autotune.runtime.config import RuntimeConfig
from autotune.tune.space import dense_slots
from autotune.vocabulary import KEY_HEADROOM, LAYOUTS, METRIC_VAR, METRICS, RACE_MAP_POW2, SEED_VAR
from autotune.tune.defaults import DEFAULT_MAX_COLLISION_RATE

DEFAULT_NAME = "aflpp-default"
# Candidates in priority order: when the budget cannot race them all, the last ones are dropped.
# guard first (AFL++'s coverage through our runtime, at inline-counter cost), then the cheapest
# hashed metric, then richer ones whose extra keys may or may not pay for their larger queue. On
# --instances the same order holds for the secondaries, by the portfolio study's rule 4
# (benchmarks/results/plan-2026-12-01-portfolio-study.md, amendment of 2026-12-04 13:55): our sensitive
# -S ran below 0.8x its -M's execs/s in all 10 of libxml2's trials (ctx-2, 0.48-0.78x) and in all 10 of
# expat's (ngram-4, 0.23-0.34x), and covered fewer union yardstick edges on both (Mann-Whitney p = 0.009
# and 0.025; AFL++ 5.02c, clang 21.1.8): judged by edges it spends the budget on throughput it loses.
DEFAULT_METRICS: tuple[str, ...] = ("guard", "edge", "ngram-4", "caller")
# Judged by bugs, the metrics whose feedback differs from the default's come first: they can trigger
# a bug sooner by what they keep, where guard and edge keep the default's feedback and can only be
# faster (Wang et al., RAID 2019: different coverage metrics trigger different bugs). On the demo the
# edge order left ngram-4, the metric its planted bug is built for, out of a 480 s race.
BUG_METRICS: tuple[str, ...] = ("ngram-4", "caller", "guard", "edge")
DEFAULT_KEYS = 1 << 14  # sizing without a probe's census
# Largest flat map the edge and ngram kinds get in the race. afl-fuzz resets, classifies and compares the
# whole flat map each execution; BigMap (DSN 2021) measured AFL's throughput at 64 KiB about the
# two-level map's (0.98x) and 1/1.4 of it at 256 KiB. At 2^17 the flat map's extra scanning is
# about what the blocks kind's per-block hook costs in the target; beyond, the two-level map on
# the blocks kind is the cheaper edge contestant. The ngram kind follows the same rule: its per-block
# code is the edge kind's plus the window update, and its map is scanned the same way.
EDGE_KIND_MAX_MAP_SLOTS = 1 << 17


# What users run on their secondaries today besides AFL++'s default: OSS-Fuzz's compile_afl builds
# about a fifth of its AFL++ targets CLASSIC,CTX-2 (AFL++'s own call-context build, in its 64 KiB
# map). A portfolio race (--instances N) races it as an alternative to AFL++'s default portfolio.
ALTERNATIVE_SECONDARIES: tuple[Contestant, ...] = (
    Contestant(name="aflpp-classic-ctx2", cc_kind=CC_AFL, build=(("AFL_LLVM_INSTRUMENT", "CLASSIC,CTX-2"),),
               description="OSS-Fuzz's practice: AFL++'s own CLASSIC,CTX-2 build (afl-clang-fast, 64 KiB map)"),
)


def default_metrics(judge: str) -> tuple[str, ...]:
    """The list strategy's candidates, in priority order, when --metrics is not given."""
    return BUG_METRICS if judge == "bugs" else DEFAULT_METRICS


def build_kind_for(metric: str) -> str:
    """The cheapest ``AUTOTUNE_CC_INSTRUMENT`` build kind whose runtime serves ``metric`` (autotune.buildkinds)."""
    if metric not in METRICS:
        raise AutotuneError(f"unknown metric {metric!r}", fix=f"use one of: {', '.join(METRICS)}")
    return kind_for(metric).name


def index_slots_for(*, keys: float, max_collision_rate: float) -> int:
    """Smallest hash space H = 2^k (RACE_MAP_POW2: 2^16..2^24) with Equation 1's collision rate at KEY_HEADROOM x keys
    within the limit (Layout.smallest_fit, the rule preflight checks by), else 2^24."""
    fit = LAYOUTS["flat"].smallest_fit(keys=KEY_HEADROOM * max(1.0, float(keys)), limit=max_collision_rate,
                                       pow2=RACE_MAP_POW2)
    return fit[0] if fit else 1 << RACE_MAP_POW2[1]


def inline_kind_build(metric: str, *, indexed: bool = False) -> dict[str, str] | None:
    """The compile-time variables of the inline build kind that counts ``metric`` (edge: the edge
    kind; ngram-N: the ngram kind with ``AUTOTUNE_CC_NGRAM=N``; a call-context metric: the ctx kind with
    ``AUTOTUNE_CC_CTX``), counting through the two-level map's index when ``indexed``; None for guard."""
    kind = inline_kind_for(metric)
    return None if kind is None else kind.build_vars(metric, indexed=indexed)


def sized_settings(*, metric: str, layout: str, hash_slots: int, dense_slots: int | None = None,
                   counter_bits: int = 8, overflow: str = "neverzero", key_hash: str = "exact",
                   index_file: str | None = None) -> dict[str, str]:
    """The AUTOTUNE_* run-time variables of ``metric`` on a map of ``hash_slots`` (and ``dense_slots``),
    written by the one writer of them (autotune.runtime.config.RuntimeConfig), without the block-id
    seed (the race's contestants run under the runtime's default)."""
    rc = RuntimeConfig.sized(metric=metric, layout=layout, hash_slots=hash_slots, dense_slots=dense_slots,
                             counter_bits=counter_bits, overflow=overflow, key_hash=key_hash, index_file=index_file)
    return {k: v for k, v in rc.env_values().items() if k != SEED_VAR}


def edge_kind_settings(*, estimated_keys: float | None, max_collision_rate: float,
                       metric: str = "edge") -> dict[str, str] | None:
    """The run-time variables of edge (or ngram-N) on its inline build kind (:func:`inline_kind_build`:
    a flat map of Equation 1's H, counted inline as CLASSIC / NGRAM-N: 8-bit NeverZero, AFL++'s hash),
    or None when H exceeds ``EDGE_KIND_MAX_MAP_SLOTS`` or no inline kind counts the metric."""
    if inline_kind_build(metric) is None:
        return None
    keys = max(1.0, float(estimated_keys)) if estimated_keys else float(DEFAULT_KEYS)
    h = index_slots_for(keys=keys, max_collision_rate=max_collision_rate)
    if h > EDGE_KIND_MAX_MAP_SLOTS:
        return None
    return sized_settings(metric=metric, layout="flat", hash_slots=h, key_hash="afl")


def runtime_settings(*, metric: str, estimated_keys: float | None, max_collision_rate: float,
                     index_file: str = "index.bin", indexed: bool = False) -> dict[str, str]:
    """AUTOTUNE_* run-time variables of a candidate's two-level map on the blocks or full build kind
    (docs/DESIGN.md "Runtime configuration"), or on an inline kind built indexed (``indexed``: AFL++'s
    key of the metric, as the kind counts it); the inline kinds' flat maps are :func:`edge_kind_settings`."""
    if metric == "guard":
        # one slot per guard: no index, no map size to choose; the guard kind's inline 8-bit counters are NeverZero
        return {METRIC_VAR: metric}
    keys = max(1.0, float(estimated_keys)) if estimated_keys else float(DEFAULT_KEYS)
    h = index_slots_for(keys=keys, max_collision_rate=max_collision_rate)
    return sized_settings(metric=metric, layout="twolevel", hash_slots=h,
                          dense_slots=dense_slots(map_slots=h, estimated_keys=keys), index_file=index_file,
                          key_hash="afl" if indexed else "exact")


def make_contestants(*, metrics: Sequence[str] = DEFAULT_METRICS, estimated_keys: Mapping[str, float] | None = None,
                     afl_cc: bool, max_collision_rate: float = DEFAULT_MAX_COLLISION_RATE) -> list[Contestant]:
    """The default, then one candidate per metric (in the order given)."""
    if len(set(metrics)) != len(metrics):
        raise AutotuneError(f"a metric is named twice in {', '.join(metrics)}", fix="name each metric once")
    keys = dict(estimated_keys or {})
    out = []
    if afl_cc:
        out.append(Contestant(name=DEFAULT_NAME, is_default=True, cc_kind=CC_AFL,
                              description="AFL++'s default: afl-clang-fast, PCGUARD (no variables)"))
    else:
        out.append(Contestant(name=DEFAULT_NAME, is_default=True, cc_kind=CC_AUTOTUNE,
                              build=((KIND_VAR, build_kind_for("guard")),), settings=((METRIC_VAR, "guard"),),
                              description="AFL++'s default coverage (one counter per guard) through our runtime: "
                                          "afl-clang-fast is not installed"))
    for m in metrics:
        if m == "guard" and not afl_cc:
            continue  # it is the default already
        inline = edge_kind_settings(estimated_keys=keys.get(m), max_collision_rate=max_collision_rate, metric=m)
        if inline is not None:
            settings, build = inline, inline_kind_build(m) or {}
            desc = f"our runtime, {m} (flat, {settings['AUTOTUNE_MAP_SIZE']} slots, counted inline)"
        elif inline_kind_build(m) is not None:  # too many keys for a flat map: the same kind, indexed
            settings = runtime_settings(metric=m, estimated_keys=keys.get(m), max_collision_rate=max_collision_rate,
                                        indexed=True)
            build = inline_kind_build(m, indexed=True) or {}
            desc = (f"our runtime, {m} (twolevel, index {settings['AUTOTUNE_INDEX_SIZE']}, "
                    f"{settings['AUTOTUNE_MAP_SIZE']} slots, counted inline through the index)")
        else:
            settings = runtime_settings(metric=m, estimated_keys=keys.get(m), max_collision_rate=max_collision_rate)
            build = {KIND_VAR: build_kind_for(m)}
            desc = f"our runtime, {m}" + (f" ({settings['AUTOTUNE_LAYOUT']}, index {settings['AUTOTUNE_INDEX_SIZE']}, "
                                          f"{settings['AUTOTUNE_MAP_SIZE']} slots)" if m != "guard"
                                          else " (a counter per guard)")
        out.append(Contestant(name=m, settings=tuple(sorted(settings.items())), cc_kind=CC_AUTOTUNE,
                              build=tuple(sorted(build.items())), description=f"{desc}, {build[KIND_VAR]} build"))
    return out
