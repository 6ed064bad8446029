#!/usr/bin/env python3
"""Sensitive metrics on our two-level map against AFL++ 5.02c's own NGRAM-N / CTX builds (issue 36).

For each target and metric (ngram-4, ngram-8, ctx) and each map exponent P of --maps:

  aflpp-<metric>-map<P>  afl-clang-fast with AFL_LLVM_INSTRUMENT=NGRAM-4 | NGRAM-8 | CTX; P = 16 is
                         Debian's AFL++ as built, a larger P the same AFL++ 5.02c with MAP_SIZE 2^P
                         (benchmarks/aflpp_bigmap.sh P makes it; this script refuses to run without
                         it). afl-fuzz sees 2^P bytes.
  ours-<metric>-in<P>    (--layouts inline) autotune cc's inline kind for the metric (ngram kind for
                         ngram-N, ctx kind for ctx and ctx-2: no runtime call per block or call),
                         counting into a flat map of 2^P slots with AFL++'s hash, as AFL++'s build
                         does; afl-fuzz sees 2^P bytes.
  ours-<metric>-ix<P>    (--layouts indexed) the same inline kind built with AUTOTUNE_CC_INDEX=1: counted
                         inline through our two-level map, an index of 2^--index-pow2 slots (the
                         collisions) and a dense map of 2^P slots, which is what afl-fuzz sees: as
                         many bytes as AFL++'s map of 2^P.
  ours-<metric>-dense<C> (--dense C,...) the indexed build with a dense map of C slots (any multiple of 64
                         the runtime takes, e.g. sized from a census or by the race's rule,
                         autotune.vocabulary.dense_for_keys): afl-fuzz sees C bytes. With --layouts none
                         the cell is AFL++'s builds and these alone.
  ours-<metric>-tl<P>    autotune cc (blocks kind for ngram-N, full kind for ctx), our runtime with
                         AUTOTUNE_METRIC=<metric>, a two-level map: index of 2^P slots (as many as
                         AFL++'s map of 2^P, so Equation 1 gives both the same collision rate) and a
                         dense map of min(--dense-slots, 2^P) slots, which is what afl-fuzz sees; a
                         fresh index file per campaign.

Campaigns: --trials x --seconds of the stock afl-fuzz per variant (trial t of every variant with
afl-fuzz -s 11+t, the same seeds), the variants of a trial in rotated order, --jobs at a time
(AFL_NO_AFFINITY). Figures: fuzzer_stats' execs_per_sec, edges_found, total_edges (the map size
afl-fuzz used), corpus_count, stability; ours also the keys in use and overflowed.

Coverage: each campaign's queue replayed through AFL++'s PCGUARD build (afl-showmap -C): yardstick
edges, one measure for every variant.

Collisions, per target and metric, on the union of the campaigns' queues (at most --census-inputs),
each side against the census of its own instrumentation (AFL++'s CLASSIC pass and SanitizerCoverage
do not mark the same blocks, so their N-grams and contexts are not the same keys: on the demo our
ngram-8 keys outnumber AFL++'s 2.5 to 1 in either map): n = the keys our build finds with a 2^24
index and a 2^20 dense map, n' = the slots AFL++'s build at MAP_SIZE 2^24 occupies (Equation 1 at
2^24 loses about n / 2^25 of either); k_P = the keys ours at 2^P keeps, m_P = the slots AFL++'s
build at 2^P occupies. Reported: Equation 1 (BigMap, DSN 2021) at 2^P of each census, and measured
1 - k_P / n and 1 - m_P / n'.

Goal (issue 36's, two-level): per P, median execs/s of ours / AFL++'s >= 3 with Mann-Whitney p < 0.05, a
measured collision rate no worse, yardstick edges not significantly fewer. Inline (issue 54's): ours /
AFL++'s >= 0.9 at 2^16 and >= 1.5 at a larger P, p < 0.05 for the larger ratio. Every variant of ours is
also compared with AFL++'s 2^16 build when it ran (vs_aflpp16): the issue's question is ours at a size
with few collisions against AFL++'s default size.

Run inside the sid root (plan: benchmarks/results/plan-2026-11-27-sensitive-metrics.md):
  bash .ci/aflpp-current.sh && for p in 20 22 24; do bash benchmarks/aflpp_bigmap.sh $p; done
  bash .ci/aflpp-current.sh run .venv-current/bin/python benchmarks/sensitive_metrics.py \\
    --targets libxml2 --metrics ngram-8 --maps 16,20,22 --trials 5 --seconds 300 --jobs 2 --out DIR
Writes DIR/sensitive_metrics.json after every trial (a stopped run keeps what it did; --resume continues it) and
DIR/sensitive_metrics.md at the end; nothing outside DIR and autotune's build cache.

A finished run's tables as a results page gives them (every variant against each AFL++ build, per
trial, the census), with any trial that ran again in place of its first run (same variants, same -s):
  .venv/bin/python benchmarks/sensitive_metrics.py --report DIR/sensitive_metrics.json [--rerun OTHER.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "benchmarks", ROOT / "benchmarks" / "bugs"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from aflfs_bench import clean_env, collision_rate, fuzzer_stats, small_seeds, union_corpus  # noqa: E402
from autotune.afl import base_env  # noqa: E402
from autotune.measure.host import current_host  # noqa: E402
from autotune.runtime.afl_index import read_index_stats  # noqa: E402
from autotune.stats import a12, mann_whitney, median  # noqa: E402
from autotune.target import build, demo_spec  # noqa: E402

SCHEMA_VERSION = 1
AFL_INSTRUMENT = {"ngram-4": "NGRAM-4", "ngram-8": "NGRAM-8", "ctx": "CTX", "ctx-2": "CTX-2"}
OUR_KIND = {"ngram-4": "blocks", "ngram-8": "blocks", "ctx": "full", "ctx-2": "full"}  # the hooked kind serving it
LAYOUTS = ("twolevel", "inline", "indexed")  # --layouts none: none of them (--dense alone)
INDEX_POW2 = 22  # --index-pow2: the indexed variants' index
INLINE_GOAL = {16: 0.9}  # issue 54: ours / AFL++ at 2^16; at a larger P, INLINE_GOAL_LARGE
INLINE_GOAL_LARGE = 1.5
STOCK_POW2 = 16  # Debian's afl++ 5.02c: MAP_SIZE_POW2 16 (include/config.h)
BIGMAP_BASE = Path(os.environ.get("AUTOTUNE_AFLPP_ROOT", "/var/cache/autotune/aflpp-sid")).parent
CENSUS_INDEX_POW2 = 24  # the census's index: Equation 1 loses ~n / 2^25 of n keys
CENSUS_DENSE_SLOTS = 1 << 20  # room for every key of the census (no overflow)
AFLPP_CENSUS_POW2 = 24  # AFL++'s own census: its build at MAP_SIZE 2^24 (benchmarks/aflpp_bigmap.sh 24)
DENSE_SLOTS = 1 << 17  # --dense-slots: our dense map (afl-fuzz's map) at most this
GOAL_RATIO = 3.0  # issue 36: ours >= 3x their execs/s
SEED_BASE = 11  # afl-fuzz -s of trial t: SEED_BASE + t
COVERAGE = re.compile(r"A coverage of (\d+) edges were achieved out of (\d+) existing")


@dataclass(frozen=True)
class Variant:
    name: str
    side: str  # "aflpp", "ours" (two-level map, hooked build) or "inline" (flat map, inline kind)
    metric: str
    pow2: int  # AFL++'s MAP_SIZE_POW2, or log2 of our index: the slots keys hash into
    dense_slots: int  # the map afl-fuzz sees
    binary: str
    run_env: dict[str, str]


# ---- targets and builds ---------------------------------------------------------------------------

def target(name: str) -> tuple[object, dict[str, str], list[Path]]:
    """(build recipe, build environment, seeds) of a target."""
    if name == "demo":
        from autotune import demo
        return demo_spec(), base_env(), small_seeds(sorted(demo.seed_dir().iterdir()))
    if name == "lz4":
        from targets import lz4
        return lz4.LZ4.spec(lz4.LZ4_OWN_CFLAGS), lz4.LZ4.env(), small_seeds(lz4.lz4_sample_inputs())
    if name == "libyaml":
        from targets import libyaml
        return libyaml.LIBYAML.spec(), libyaml.LIBYAML.env(), small_seeds(libyaml.libyaml_sample_inputs())
    import buglibs
    libs = buglibs.load_manifest()
    if name in libs:  # a bug benchmark library (libxml2, sqlite3, ...)
        lib = libs[name]  # non-fatal canaries: the same build for every variant
        return lib.spec(), lib.env(), sorted(p for p in lib.seeds_dir.iterdir() if p.is_file())
    raise SystemExit(f"unknown target {name}: demo, lz4, libyaml or a bug benchmark library ({', '.join(sorted(libs))})")


def aflpp_path(pow2: int, env: dict[str, str]) -> dict[str, str]:
    """env with the afl-clang-fast of AFL++ at 2^pow2 first on PATH (2^16: Debian's, as it is)."""
    if pow2 == STOCK_POW2:
        return dict(env)
    d = BIGMAP_BASE / f"aflpp-map{pow2}"
    if not (d / ".ready").is_file():
        raise SystemExit(f"no AFL++ with MAP_SIZE 2^{pow2} at {d}: run 'bash benchmarks/aflpp_bigmap.sh {pow2}' first")
    # AFL_MAP_SIZE: the build's own test programs (configure's) run outside afl-fuzz, where the
    # patched runtime's static map is Debian's 2 MiB (aflpp_bigmap.sh): without it a 2^24 build's
    # conftest writes past that map and configure stops ("cannot run C compiled programs")
    return {**env, "PATH": f"{d / 'bin'}:{env.get('PATH', os.defpath)}", "AFL_MAP_SIZE": str(1 << pow2)}


def inline_binary(spec: object, env: dict[str, str], metric: str, *, indexed: bool = False) -> str:
    """The target built with autotune cc's inline kind for ``metric`` (autotune.buildkinds.inline_kind_for),
    counting through our two-level map's index when ``indexed`` (AUTOTUNE_CC_INDEX=1)."""
    from autotune.buildkinds import inline_kind_for

    build_vars = {**inline_kind_for(metric).build_vars(metric), **({"AUTOTUNE_CC_INDEX": "1"} if indexed else {})}
    return str(build(spec=spec, cc_kind="autotune", build_vars=build_vars, env=env))


def variants(spec: object, env: dict[str, str], metric: str, maps: list[int], dense_slots: int,
             layouts: tuple[str, ...] = ("twolevel",), index_pow2: int = INDEX_POW2,
             dense: tuple[int, ...] = ()) -> list[Variant]:
    ours_bin = (build(spec=spec, cc_kind="autotune", build_vars={"AUTOTUNE_CC_INSTRUMENT": OUR_KIND[metric]}, env=env)
                if "twolevel" in layouts else None)
    inline_bin = inline_binary(spec, env, metric) if "inline" in layouts else None
    indexed_bin = inline_binary(spec, env, metric, indexed=True) if "indexed" in layouts or dense else None
    out = []
    for p in maps:
        afl_bin = build(spec=spec, cc_kind="afl", build_vars={"AFL_LLVM_INSTRUMENT": AFL_INSTRUMENT[metric]},
                        env=aflpp_path(p, env))
        out.append(Variant(f"aflpp-{metric}-map{p}", "aflpp", metric, p, 1 << p, str(afl_bin), aflpp_run_env(p)))
        if inline_bin:
            out.append(Variant(f"ours-{metric}-in{p}", "inline", metric, p, 1 << p, inline_bin, inline_env(metric, p)))
        if indexed_bin and "indexed" in layouts:  # pow2: the index's (the collisions), as for the two-level variants
            out.append(Variant(f"ours-{metric}-ix{p}", "indexed", metric, index_pow2, 1 << p, indexed_bin,
                               indexed_env(metric, index_pow2=index_pow2, dense_slots=1 << p)))
        if ours_bin:
            tl_dense = min(dense_slots, 1 << p)
            out.append(Variant(f"ours-{metric}-tl{p}", "ours", metric, p, tl_dense, str(ours_bin),
                               ours_env(metric, index_pow2=p, dense_slots=tl_dense)))
    out += [Variant(f"ours-{metric}-dense{c}", "indexed", metric, index_pow2, c, indexed_bin,
                    indexed_env(metric, index_pow2=index_pow2, dense_slots=c)) for c in dense]
    return out


def indexed_env(metric: str, *, index_pow2: int, dense_slots: int) -> dict[str, str]:
    """An indexed inline build's run-time variables: index 2^index_pow2, a dense map of dense_slots, AFL++'s hash."""
    return {"AUTOTUNE_METRIC": metric, "AUTOTUNE_LAYOUT": "twolevel", "AUTOTUNE_INDEX_SIZE": str(1 << index_pow2),
            "AUTOTUNE_MAP_SIZE": str(dense_slots), "AUTOTUNE_KEY_HASH": "afl",
            **aflpp_run_env((dense_slots - 1).bit_length())}


def inline_env(metric: str, pow2: int) -> dict[str, str]:
    """Our inline kind's run-time variables: a flat map of 2^pow2 slots, AFL++'s hash (what the kind serves)."""
    return {"AUTOTUNE_METRIC": metric, "AUTOTUNE_LAYOUT": "flat", "AUTOTUNE_MAP_SIZE": str(1 << pow2),
            "AUTOTUNE_KEY_HASH": "afl", **aflpp_run_env(pow2)}


def aflpp_run_env(pow2: int) -> dict[str, str]:
    """afl-fuzz/afl-showmap offer an 8 MiB map (DEFAULT_SHMEM_SIZE) and abort on a target reporting a
    larger one unless AFL_MAP_SIZE says so."""
    return {"AFL_MAP_SIZE": str(1 << pow2)} if pow2 > 23 else {}


def ours_env(metric: str, *, index_pow2: int, dense_slots: int) -> dict[str, str]:
    return {"AUTOTUNE_METRIC": metric, "AUTOTUNE_LAYOUT": "twolevel", "AUTOTUNE_INDEX_SIZE": str(1 << index_pow2),
            "AUTOTUNE_MAP_SIZE": str(dense_slots), "AUTOTUNE_COUNTER_BITS": "8"}


# ---- campaigns ------------------------------------------------------------------------------------

def campaign(v: Variant, seeds: list[Path], run_dir: Path, seconds: int, rng_seed: int) -> dict:
    shutil.rmtree(run_dir, ignore_errors=True)
    (run_dir / "in").mkdir(parents=True)
    for i, s in enumerate(seeds):
        shutil.copyfile(s, run_dir / "in" / f"seed{i:03d}")
    env_extra = dict(v.run_env)
    if v.side in ("ours", "indexed"):
        env_extra["AUTOTUNE_INDEX_FILE"] = str(run_dir / "index.bin")
    cmd = ["afl-fuzz", "-i", str(run_dir / "in"), "-o", str(run_dir / "out"), "-V", str(seconds), "-s", str(rng_seed),
           "--", v.binary]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=clean_env(**env_extra), capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=seconds + 600, cwd=run_dir, check=False)
    inst = run_dir / "out" / "default"
    if proc.returncode != 0 or not (inst / "fuzzer_stats").is_file():
        raise SystemExit(f"afl-fuzz failed for {v.name} ({' '.join(cmd)}):\n{(proc.stdout + proc.stderr)[-3000:]}")
    st = fuzzer_stats(inst)
    res = {"variant": v.name, "rng_seed": rng_seed, "wall_s": round(time.monotonic() - t0, 1),
           "execs_per_s": float(st["execs_per_sec"]), "execs_done": int(st["execs_done"]),
           "edges_found": int(st["edges_found"]), "total_edges": int(st["total_edges"]),
           "corpus_count": int(st["corpus_count"]), "stability": st["stability"],
           "saved_crashes": int(st["saved_crashes"]), "queue": str(inst / "queue")}
    if v.side in ("ours", "indexed"):
        s = read_index_stats(path=run_dir / "index.bin")
        res.update(used_key=s.used_key, overflow_keys=s.overflow_keys)
    return res


def yardstick_edges(pcguard: Path, queue: Path, work: Path) -> int | None:
    proc = subprocess.run(["afl-showmap", "-C", "-i", str(queue), "-o", str(work / "yardstick.map"), "-t", "5000",
                           "--", str(pcguard)], env=clean_env(), capture_output=True, text=True, timeout=3600,
                          stdin=subprocess.DEVNULL, check=False)
    m = COVERAGE.search(proc.stdout + proc.stderr)
    return int(m.group(1)) if m else None


# ---- collisions ----------------------------------------------------------------------------------

def showmap(binary: str, corpus: Path, out: Path, env_extra: dict[str, str]) -> int:
    """Occupied map entries (tuples) of the binary over the corpus (afl-showmap -C)."""
    proc = subprocess.run(["afl-showmap", "-C", "-i", str(corpus), "-o", str(out), "-t", "5000", "--", binary],
                          env=clean_env(**env_extra), capture_output=True, text=True, timeout=3600,
                          stdin=subprocess.DEVNULL, check=False)
    m = COVERAGE.search(proc.stdout + proc.stderr)
    if not m:
        raise SystemExit(f"afl-showmap gave no coverage line for {binary}:\n{(proc.stdout + proc.stderr)[-2000:]}")
    return int(m.group(1))


def collisions(vs: list[Variant], queues: list[Path], work: Path, limit: int, aflpp_census: str) -> dict:
    """Each variant's keys kept against its own instrumentation's census: ours against our build at a
    2^24 index, AFL++'s against its build at MAP_SIZE 2^24 (``aflpp_census``): the two instrumentations
    do not mark the same blocks, so AFL++'s slots measured against our keys would count that too."""
    corpus = work / "union"
    if queues:
        shutil.rmtree(work, ignore_errors=True)
        n_inputs = union_corpus(queues, corpus, limit)
    else:  # resumed on another machine: the union kept with the state (benchmarks/keep_state.py)
        n_inputs = sum(1 for _ in corpus.iterdir())
        for stale in work.glob("*.idx"):  # a stopped census's index files
            stale.unlink()
    n_afl = showmap(aflpp_census, corpus, work / "aflpp-census.map", aflpp_run_env(AFLPP_CENSUS_POW2))
    ours = next((v for v in vs if v.side == "ours"), None)
    n, c = None, None
    if ours is not None:
        census_idx = work / "census.idx"
        showmap(ours.binary, corpus, work / "census.map",
                {**ours_env(ours.metric, index_pow2=CENSUS_INDEX_POW2, dense_slots=CENSUS_DENSE_SLOTS),
                 "AUTOTUNE_INDEX_FILE": str(census_idx)})
        c = read_index_stats(path=census_idx)
        n = c.keys
    inline = next((v for v in vs if v.side == "inline"), None)
    indexed = next((v for v in vs if v.side == "indexed"), None)
    # the inline builds' own keys (our pass's blocks, AFL++'s hash): through the indexed build's 2^24 index
    # when there is one (the same keys), else a flat map of 2^23 slots, the largest the fork server's
    # handshake carries (the runtime refuses 2^24: afl-showmap would be told a smaller map)
    n_inline = (showmap(inline.binary, corpus, work / "inline-census.map", inline_env(inline.metric, 23))
                if inline is not None and indexed is None else None)
    if indexed is not None:  # the same keys through the index: a 2^24 index, 2^22 dense
        cidx = work / "indexed-census.idx"
        showmap(indexed.binary, corpus, work / "indexed-census.map",
                {**indexed_env(indexed.metric, index_pow2=24, dense_slots=1 << 22), "AUTOTUNE_INDEX_FILE": str(cidx)})
        n_inline = read_index_stats(path=cidx).used_key
    rows = {}
    for v in vs:
        if v.side == "aflpp":
            kept, census = showmap(v.binary, corpus, work / f"{v.name}.map", v.run_env), n_afl
        elif v.side == "inline":
            kept, census = showmap(v.binary, corpus, work / f"{v.name}.map", v.run_env), n_inline
        elif v.side == "indexed":  # the inline build's keys (the same pass and hash), kept in its dense map
            idx = work / f"{v.name}.idx"
            showmap(v.binary, corpus, work / f"{v.name}.map", {**v.run_env, "AUTOTUNE_INDEX_FILE": str(idx)})
            kept, census = read_index_stats(path=idx).used_key, n_inline
        else:
            idx = work / f"{v.name}.idx"
            showmap(v.binary, corpus, work / f"{v.name}.map", {**v.run_env, "AUTOTUNE_INDEX_FILE": str(idx)})
            s = read_index_stats(path=idx)
            kept, census = s.used_key, n  # keys beyond the dense map share its overflow slot
        rows[v.name] = {"slots_pow2": v.pow2, "kept": kept, "census": census,
                        "measured_collision_rate": round(1 - kept / census, 4) if census else None,
                        "eq1_collision_rate": round(collision_rate(1 << v.pow2, census), 4)}
    return {"inputs": n_inputs, "census_keys": n, "census_overflow_keys": c.overflow_keys if c else None,
            "census_eq1_at_2p24": round(collision_rate(1 << CENSUS_INDEX_POW2, n), 5) if n else None,
            "inline_census_slots": n_inline,
            "aflpp_census_slots": n_afl, "aflpp_census_eq1_at_2p24": round(collision_rate(1 << 24, n_afl), 5),
            "variants": rows}


# ---- the run -------------------------------------------------------------------------------------

def summarise(vs: list[Variant], runs: dict[str, list[dict]], coll: dict | None) -> dict:
    out = {}
    for v in vs:
        rs = runs.get(v.name, [])
        eps = [r["execs_per_s"] for r in rs]
        ys = [r["yardstick_edges"] for r in rs if r.get("yardstick_edges") is not None]
        out[v.name] = {"side": v.side, "pow2": v.pow2, "afl_map_bytes": v.dense_slots, "trials": len(rs),
                       "execs_per_s_median": median(eps) if eps else None, "execs_per_s": eps,
                       "yardstick_edges_median": median(ys) if ys else None, "yardstick_edges": ys,
                       "total_edges": sorted({r["total_edges"] for r in rs}),
                       **({"overflow_keys": [r.get("overflow_keys") for r in rs]} if v.side in ("ours", "indexed")
                          else {})}
    cr_all = (coll or {}).get("variants", {})
    for v in vs:
        me, base = out[v.name], out.get(f"aflpp-{v.metric}-map{STOCK_POW2}")
        if v.side != "aflpp" and base and base["execs_per_s"] and me["execs_per_s"]:
            mw16 = mann_whitney(me["execs_per_s"], base["execs_per_s"])
            mine_c = cr_all.get(v.name, {}).get("measured_collision_rate")
            base_c = cr_all.get(f"aflpp-{v.metric}-map{STOCK_POW2}", {}).get("measured_collision_rate")
            me["vs_aflpp16"] = {"execs_per_s_ratio": round(me["execs_per_s_median"] / base["execs_per_s_median"], 3),
                                "execs_p": round(mw16.p, 4), "measured_collision_rate": mine_c,
                                "aflpp16_measured_collision_rate": base_c}
    for v in vs:
        if v.side == "aflpp":
            continue
        dense_pow2 = v.dense_slots.bit_length() - 1
        # indexed: compared with the AFL++ build whose map afl-fuzz scans as many slots (none for a
        # dense map that is no power of two); the others with AFL++'s map of their own 2^pow2
        scans = [a for a in vs if a.side == "aflpp" and a.metric == v.metric
                 and (a.dense_slots == v.dense_slots if v.side == "indexed" else a.pow2 == v.pow2)]
        them = out[scans[0].name] if scans else None
        me = out[v.name]
        if not them or not me["execs_per_s"] or not them["execs_per_s"]:
            continue
        ratio = me["execs_per_s_median"] / them["execs_per_s_median"]
        mw = mann_whitney(me["execs_per_s"], them["execs_per_s"])
        cov = {}
        if me["yardstick_edges"] and them["yardstick_edges"]:
            mwe = mann_whitney(me["yardstick_edges"], them["yardstick_edges"])
            cov = {"edges_p": round(mwe.p, 4),
                   "edges_a12": round(a12(me["yardstick_edges"], them["yardstick_edges"]), 3),
                   "edges_not_fewer": mwe.p >= 0.05 or me["yardstick_edges_median"] >= them["yardstick_edges_median"]}
        cr = (coll or {}).get("variants", {})
        mine_c, theirs_c = cr.get(v.name), cr.get(f"aflpp-{v.metric}-map{v.pow2}")
        no_worse = (mine_c["measured_collision_rate"] <= theirs_c["measured_collision_rate"]
                    if mine_c and theirs_c else None)
        if v.side in ("inline", "indexed"):  # issue 54: speed against AFL++'s map of the size afl-fuzz scans
            goal = INLINE_GOAL.get(v.pow2 if v.side == "inline" else dense_pow2, INLINE_GOAL_LARGE)
            met = ratio >= goal and (goal <= 1 or mw.p < 0.05)
        else:
            goal = GOAL_RATIO
            met = bool(ratio >= goal and mw.p < 0.05 and no_worse and cov.get("edges_not_fewer", False))
        me["vs_aflpp"] = {"execs_per_s_ratio": round(ratio, 3), "execs_p": round(mw.p, 4),
                          "execs_a12": round(a12(me["execs_per_s"], them["execs_per_s"]), 3),
                          "collision_rate_no_worse": no_worse, **cov, "goal_ratio": goal, "goal_met": bool(met)}
    return out


def resume_entry(doc: dict, tname: str, metric: str, names: list[str]) -> tuple[dict | None, int | None]:
    """(the entry of ``tname`` / ``metric`` in a resumed document, the trial to go on from): (None, 0)
    when it has none, (entry, None) when it is finished (its census done). Whole trials are kept; a
    trial a stopped run left half done is dropped, so every variant has run the same trials."""
    entry = next((e for e in doc["results"] if e["target"] == tname and e["metric"] == metric), None)
    if entry is None:
        return None, 0
    if [v["name"] for v in entry["variants"]] != names:
        raise SystemExit(f"--resume: {tname} {metric} was run with other variants "
                         f"({', '.join(v['name'] for v in entry['variants'])}); use a new --out")
    if "collisions" in entry:
        return entry, None
    done = min(len(entry["runs"].get(n, [])) for n in names)
    entry["runs"] = {n: entry["runs"].get(n, [])[:done] for n in names}
    entry.setdefault("resumed", []).append({"at_trial": done, "loadavg": list(os.getloadavg())})
    return entry, done


def run_metric(tname: str, metric: str, a: argparse.Namespace, doc: dict, save) -> None:
    spec, env, seeds = target(tname)
    vs = variants(spec, env, metric, a.maps, a.dense_slots, a.layouts, a.index_pow2, a.dense)
    pcguard = build(spec=spec, cc_kind="afl", build_vars={}, env=env)  # the yardstick: AFL++'s default
    aflpp_census = build(spec=spec, cc_kind="afl", build_vars={"AFL_LLVM_INSTRUMENT": AFL_INSTRUMENT[metric]},
                         env=aflpp_path(AFLPP_CENSUS_POW2, env))
    entry, start = resume_entry(doc, tname, metric, [v.name for v in vs])
    if entry is not None and start is None:
        print(f"  {tname} {metric}: finished in {a.out} (resumed), skipped", file=sys.stderr)
        return
    if entry is not None:
        print(f"  {tname} {metric}: resuming at trial {start} of {a.trials}", file=sys.stderr)
    else:
        entry, start = {"target": tname, "metric": metric, "seeds": len(seeds), "pcguard": str(pcguard),
                        "variants": [asdict(v) for v in vs], "runs": {}, "loadavg_before": os.getloadavg()}, 0
        doc["results"].append(entry)
    base = a.out / tname / metric
    for t in range(start, a.trials):
        k = t % len(vs)
        order = vs[k:] + vs[:k]  # rotated: no variant always first
        def one(v: Variant) -> dict:
            d = base / f"{v.name}-t{t}"
            r = campaign(v, seeds, d, a.seconds, SEED_BASE + t)
            r["yardstick_edges"] = yardstick_edges(pcguard, Path(r["queue"]), d)
            print(f"  {tname} {v.name:22s} trial {t}: {r['execs_per_s']:10.1f} execs/s, map {r['total_edges']}, "
                  f"edges {r['edges_found']}, yardstick {r['yardstick_edges']}, queue {r['corpus_count']}",
                  file=sys.stderr)
            return r
        with ThreadPoolExecutor(max_workers=a.jobs) as pool:
            for v, r in zip(order, pool.map(one, order)):
                entry["runs"].setdefault(v.name, []).append(r)
        entry["summary"] = summarise(vs, entry["runs"], None)
        save()
    queues = [Path(r["queue"]) for rs in entry["runs"].values() for r in rs]
    kept = [q for q in queues if q.is_dir()]  # a run resumed on another machine lost the earlier queues
    if not kept and not (base / "collisions" / "union").is_dir():
        raise SystemExit(f"{tname} {metric}: no campaign's queue is left under {base} for the collision census, "
                         "nor the union of them a packed state keeps")
    entry["collisions"] = collisions(vs, kept, base / "collisions", a.census_inputs, str(aflpp_census))
    entry["collisions"]["queues"] = {"used": len(kept), "campaigns": len(queues),
                                     **({} if kept else {"from": "the kept union (keep_state.py)"})}
    entry["summary"] = summarise(vs, entry["runs"], entry["collisions"])
    entry["loadavg_after"] = os.getloadavg()
    save()


def markdown(doc: dict) -> str:
    lines = [f"sensitive metrics, afl-fuzz {doc['seconds']} s x {doc['trials']} trials per variant "
             f"({doc['afl_fuzz']}); execs/s and yardstick edges (AFL++ PCGUARD, afl-showmap) medians", ""]
    for e in doc["results"]:
        s, c = e.get("summary", {}), e.get("collisions") or {}
        q = c.get("queues") or {}
        lost = (f"; from {q['used']} of {q['campaigns']} campaigns' queues, the rest lost with a machine"
                if q and q["used"] < q["campaigns"] else "")
        lines += [f"### {e['target']}, {e['metric']} (census on {c.get('inputs', '?')} inputs{lost}: ours "
                  f"{c.get('census_keys', '?')} keys, inline {c.get('inline_census_slots', '?')} slots, "
                  f"AFL++ {c.get('aflpp_census_slots', '?')} slots at 2^24)", "",
                  "| variant | slots | afl-fuzz map | execs/s | yardstick edges | eq.1 | measured "
                  "| ours/AFL++ execs/s (p) | edges p, A12 | goal |", "|---|---|---|---|---|---|---|---|---|---|"]
        for name, r in s.items():
            cr = c.get("variants", {}).get(name, {})
            vs = r.get("vs_aflpp", {})
            versus = (f"{vs['execs_per_s_ratio']}x ({vs['execs_p']}) | {vs.get('edges_p', '')}, "
                      f"{vs.get('edges_a12', '')} | {'met' if vs['goal_met'] else 'not met'} |") if vs else "| | |"
            lines.append(f"| {name} | 2^{r['pow2']} | {r['afl_map_bytes']:,} | {r['execs_per_s_median'] or 0:,.0f} | "
                         f"{r['yardstick_edges_median'] or 0:,.0f} | {cr.get('eq1_collision_rate', '')} | "
                         f"{cr.get('measured_collision_rate', '')} | {versus}")
        lines.append("")
    return "\n".join(lines)


def with_reruns(entry: dict, reruns: list[dict]) -> tuple[dict, list[str]]:
    """``entry`` with every trial that ran again in place of the first run (the plans' rule: a trial
    that shared its cores is set aside and run again): the run of the same variant and afl-fuzz seed in
    a rerun document's entry for the same target and metric. Returns the new entry and what it took."""
    runs = {name: list(rs) for name, rs in entry["runs"].items()}
    again = [(name, r) for doc in reruns for e in doc["results"]
             if (e["target"], e["metric"]) == (entry["target"], entry["metric"])
             for name, rs in e["runs"].items() for r in rs]
    for name, r in again:
        mine = runs.get(name, [])
        i = next((i for i, o in enumerate(mine) if o.get("rng_seed") == r.get("rng_seed")), None)
        if i is None:
            raise SystemExit(f"--rerun: {name} with afl-fuzz -s {r.get('rng_seed')} is not a trial of "
                             f"{entry['target']} {entry['metric']}: a rerun repeats a trial's seed")
        mine[i] = r
    return {**entry, "runs": runs}, [f"{name} -s {r.get('rng_seed')}" for name, r in again]


def _scan_order(entry: dict) -> list[dict]:
    """The entry's variants by the bytes afl-fuzz scans, AFL++'s first at each size."""
    rank = {"aflpp": 0, "inline": 1, "indexed": 2, "ours": 3}
    return sorted(entry["variants"], key=lambda v: (v["dense_slots"], rank.get(v["side"], 9), v["name"]))


def cell_report(entry: dict) -> str:
    """A speed cell's tables (plan-2026-12-02-inline-speed.md): per variant the median execs/s against
    every AFL++ build of the cell (Mann-Whitney U, two-sided), yardstick and own-map edges, the indexed
    builds' dense overflow per trial; execs/s per trial; the census's collisions."""
    vs = [v for v in _scan_order(entry) if entry["runs"].get(v["name"])]
    eps = {v["name"]: [r["execs_per_s"] for r in entry["runs"][v["name"]]] for v in vs}
    theirs = [v for v in vs if v["side"] == "aflpp"]
    metric = entry["metric"].upper()
    head = " | ".join(f"vs AFL++'s {metric} at 2^{t['pow2']} (p)" for t in theirs)
    out = [f"| variant | execs/s median [min, max] | {head} | yardstick edges (PCGUARD) | own map's edges "
           "| dense overflow (keys, per trial) |", "|---|---|" + "---|" * len(theirs) + "---|---|---|"]
    for v in vs:
        name, rs, e = v["name"], entry["runs"][v["name"]], eps[v["name"]]
        ratios = " | ".join("-" if t["name"] == name else
                            f"{median(e) / median(eps[t['name']]):.3f}x ({mann_whitney(e, eps[t['name']]).p:.3f})"
                            for t in theirs)
        ys = [r["yardstick_edges"] for r in rs if r.get("yardstick_edges") is not None]
        own = median([r["edges_found"] for r in rs])
        own_s = f"{own:,.0f} keys" if v["side"] == "indexed" else f"{own:,.0f} of {v['dense_slots']:,} slots"
        over = ", ".join(str(r.get("overflow_keys", "?")) for r in rs) if v["side"] == "indexed" else "-"
        ys_s = f"{median(ys):,.0f}" if ys else "-"
        out.append(f"| {name} | {median(e):,.0f} [{min(e):,.0f}, {max(e):,.0f}] | {ratios} | {ys_s} | {own_s} | {over} |")
    seeds = sorted({r["rng_seed"] for v in vs for r in entry["runs"][v["name"]]})
    out += ["", "| variant | " + " | ".join(f"-s {s}" for s in seeds) + " |", "|---|" + "---|" * len(seeds)]
    for v in vs:
        by_seed = {r["rng_seed"]: r["execs_per_s"] for r in entry["runs"][v["name"]]}
        out.append(f"| {v['name']} | " + " | ".join(f"{by_seed[s]:,.0f}" if s in by_seed else "-" for s in seeds)
                   + " |")
    cv = (entry.get("collisions") or {}).get("variants") or {}
    if cv:
        out += ["", "| variant | slots keys land in | kept | census | merged, measured | Equation 1 |",
                "|---|---|---|---|---|---|"]
        for v in vs:
            c = cv.get(v["name"])
            if not c:
                continue
            where = (f"2^{c['slots_pow2']} index, {v['dense_slots']:,} dense" if v["side"] == "indexed"
                     else f"2^{c['slots_pow2']}")
            out.append(f"| {v['name']} | {where} | {c['kept']:,} | {c['census']:,} | "
                       f"{100 * c['measured_collision_rate']:.2f} % | {100 * c['eq1_collision_rate']:.2f} % |")
    return "\n".join(out)


def report(path: Path, rerun_paths: list[Path]) -> str:
    """--report: every cell of a sensitive_metrics.json as a results page's tables, each trial that ran
    again (--rerun) in place of its first run."""
    docs = []
    for p in [path, *rerun_paths]:
        try:
            docs.append(json.loads(p.read_text()))
        except (OSError, ValueError) as err:
            raise SystemExit(f"--report: cannot read {p} ({err}): give a sensitive_metrics.json this script wrote")
        if not isinstance(docs[-1], dict) or not isinstance(docs[-1].get("results"), list):
            raise SystemExit(f"--report: {p} has no cells (no 'results' list): give a sensitive_metrics.json "
                             "this script wrote")
    cells = {(e["target"], e["metric"]) for e in docs[0]["results"]}
    for p, d in zip(rerun_paths, docs[1:]):
        if not any((e["target"], e["metric"]) in cells for e in d["results"]):
            raise SystemExit(f"--rerun: {p} runs none of {path}'s cells (target and metric)")
    parts = [f"{docs[0].get('afl_fuzz', '?')}, {docs[0].get('seconds', '?')} s trials"]
    for e in docs[0]["results"]:
        e, took = with_reruns(e, docs[1:])
        parts += ["", f"### {e['target']}, {e['metric']}" + (f" (run again: {', '.join(took)})" if took else ""),
                  "", cell_report(e)]
    return "\n".join(parts)


def parse_maps(text: str) -> list[int]:
    maps = sorted({int(x) for x in text.split(",") if x.strip()})
    if not maps or any(p != STOCK_POW2 and not 17 <= p <= 24 for p in maps):
        raise SystemExit(f"--maps: exponents 16 (Debian's AFL++) or 17..24 (benchmarks/aflpp_bigmap.sh), got {text}")
    return maps


SETTINGS = ("seconds", "trials", "maps", "dense_slots", "census_inputs", "layouts", "index_pow2", "dense")  # what --resume must see unchanged


def parse_layouts(text: str) -> tuple[str, ...]:
    if text.strip() == "none":
        return ()
    out = tuple(x.strip() for x in text.split(",") if x.strip())
    if not out or any(x not in LAYOUTS for x in out):
        raise SystemExit(f"--layouts: comma-separated {', '.join(LAYOUTS)}, or none, got {text}")
    return out


def parse_dense(text: str) -> tuple[int, ...]:
    """--dense: the dense maps' slots, each a multiple of 64 (the runtime's rule for a two-level map,
    kernels/cov_config.c) from 2^MIN_DENSE_POW2 (the smallest the race sizes, autotune.vocabulary) to
    what afl-fuzz's fork-server handshake carries."""
    from autotune.vocabulary import AFL_MAX_MAP_SLOTS, MIN_DENSE_POW2

    try:
        out = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        out = ()
    if not out or any(c % 64 or not 1 << MIN_DENSE_POW2 <= c <= AFL_MAX_MAP_SLOTS for c in out):
        raise SystemExit(f"--dense: comma-separated slot counts, each a multiple of 64 from {1 << MIN_DENSE_POW2} "
                         f"to {AFL_MAX_MAP_SLOTS}, got {text}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", default="libxml2", help="comma-separated: demo, lz4, libyaml, or a bug benchmark library (libxml2, sqlite3, ...)")
    ap.add_argument("--metrics", default="ngram-8", help=f"comma-separated: {', '.join(AFL_INSTRUMENT)}")
    ap.add_argument("--maps", default="16,20,22", type=parse_maps, help="map exponents P (AFL++'s MAP_SIZE_POW2, "
                    "our index's log2): 16 is Debian's AFL++, the others need benchmarks/aflpp_bigmap.sh P")
    ap.add_argument("--layouts", default="twolevel", type=parse_layouts,
                    help="our variants: twolevel (hooked build, two-level map), inline (the metric's inline kind, "
                         "flat map), indexed (the inline kind, two-level map); comma-separated, or none "
                         "(then --dense)")
    ap.add_argument("--dense", type=parse_dense, default=(), metavar="C[,C...]",
                    help="also the indexed build with a dense map of C slots each (ours-METRIC-denseC)")
    ap.add_argument("--index-pow2", type=int, default=INDEX_POW2, help="the indexed variants' index: 2^this slots")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=1, help="afl-fuzz campaigns at once (2 only on idle cores)")
    ap.add_argument("--dense-slots", type=int, default=DENSE_SLOTS, help="our dense map: at most this many slots")
    ap.add_argument("--census-inputs", type=int, default=20000, help="at most this many inputs in the census")
    ap.add_argument("--out", type=Path, help="the run's directory (required unless --report)")
    ap.add_argument("--report", type=Path, metavar="JSON",
                    help="print a sensitive_metrics.json's cells as a results page's tables; runs nothing")
    ap.add_argument("--rerun", type=Path, action="append", default=[], metavar="JSON",
                    help="with --report: a run of trials again (same variants and -s), in place of the first")
    ap.add_argument("--resume", action="store_true",
                    help="continue OUT/sensitive_metrics.json: finished targets and whole trials kept (same settings)")
    a = ap.parse_args(argv)
    if a.report:
        print(report(a.report, a.rerun))
        return 0
    if a.out is None:
        ap.error("--out is required (or --report JSON to print a finished run's tables)")
    if not a.layouts and not a.dense:
        ap.error("--layouts none leaves nothing of ours to run: give --dense C[,C...] or a layout")
    bad = [m for m in a.metrics.split(",") if m not in AFL_INSTRUMENT]
    if bad:
        raise SystemExit(f"--metrics: unknown {', '.join(bad)}; choose from {', '.join(AFL_INSTRUMENT)}")
    for tool in ("afl-fuzz", "afl-showmap", "afl-clang-fast"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found: run inside the sid root (bash .ci/aflpp-current.sh run ...)")
    a.out.mkdir(parents=True, exist_ok=True)
    doc = {"schema_version": SCHEMA_VERSION, "kind": "sensitive-metrics", "host_profile": current_host(),
           "afl_fuzz": re.sub(r"\x1b\[[0-9;]*m", "", subprocess.run(["afl-fuzz", "-h"], capture_output=True, text=True,
                                                                     check=False).stdout.partition("\n")[0]),
           "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                                    check=False).stdout.strip() or None,
           "seconds": a.seconds, "trials": a.trials, "jobs": a.jobs, "maps": a.maps, "dense_slots": a.dense_slots,
           "census_inputs": a.census_inputs, "layouts": list(a.layouts), "index_pow2": a.index_pow2, "dense": list(a.dense),
           "results": []}
    prior = a.out / "sensitive_metrics.json"
    if a.resume and prior.is_file():
        old = json.loads(prior.read_text())
        old.setdefault("layouts", ["twolevel"])  # documents written before --layouts
        old.setdefault("index_pow2", INDEX_POW2)
        old.setdefault("dense", [])  # documents written before --dense
        doc["layouts"] = list(a.layouts)
        differ = [k for k in SETTINGS if old.get(k) != doc[k]]
        if differ:
            raise SystemExit(f"--resume: {prior} was run with other settings ({', '.join(differ)}); "
                             "pass the same ones or a new --out")
        old.setdefault("resumed_at", []).append({"commit": doc["commit"], "afl_fuzz": doc["afl_fuzz"]})
        doc = old
    elif prior.is_file():
        raise SystemExit(f"{prior} exists: pass --resume to continue it, or a new --out")

    def save() -> None:
        tmp = a.out / "sensitive_metrics.json.tmp"
        tmp.write_text(json.dumps(doc, indent=2, default=str))
        os.replace(tmp, a.out / "sensitive_metrics.json")

    for tname in a.targets.split(","):
        for metric in a.metrics.split(","):
            run_metric(tname, metric, a, doc, save)
    md = markdown(doc)
    (a.out / "sensitive_metrics.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
