#!/usr/bin/env python3
"""Throughput and keys of `autotune cc` builds under the stock afl-fuzz, side by side (issue 7).

For each target (the bundled demo, and lz4 when benchmarks/targets/libraries.py can fetch its source) and
each variant, one afl-fuzz campaign of --seconds (sequential, the same seeds, AFL_NO_AFFINITY, the
same afl-fuzz RNG seed -s within a round), repeated --rounds times in interleaved order; execs/s is fuzzer_stats' execs_per_sec, reported
as the median and best of the rounds. Variants:

  twolevel      autotune cc build; AUTOTUNE_METRIC=ngram-8, AUTOTUNE_LAYOUT=twolevel, index 2^24,
                dense map 64 KiB (afl-fuzz sees 64 KiB), AUTOTUNE_INDEX_FILE in the run dir
  twolevel-aflhash  the same with AUTOTUNE_KEY_HASH=afl: AFL++'s own NGRAM-8 hash into the 2^24
                index, so it tells apart about as many keys as AFL++ (the instrumentations still
                differ) and afl-fuzz's work per new key is alike: the runtime's and the layout's
                cost without the exact keys' richer feedback
  aflpp-ngram8  the same harness built by afl-clang-fast with AFL_LLVM_INSTRUMENT=NGRAM-8 (its
                default 64 KiB map)
  flat-1m       autotune cc build; ngram-8 in a flat 1 MiB map (afl-fuzz sees 1 MiB)

Keys: the union of every campaign's queue is replayed with afl-showmap through the twolevel build
(fresh index file: n = used keys, distinct up to index collisions) and through the AFL++ NGRAM-8
build (m = tuples, i.e. occupied slots of its 64 KiB map). On the same inputs 1 - m/n is the share of
our keys AFL++ does not tell apart; it includes collisions *and* the instrumentation difference
(AFL++'s CLASSIC pass and SanitizerCoverage's guards do not mark the same blocks, so its N-grams
are over other block sequences). BigMap's equation 1, 1 - (H/n)(1 - ((H-1)/H)^n), gives the
collision rate of n keys hashed into H = 65536 slots (AFL++'s map) and H = 2^24 (our index).

Seeds: the target's seeds of at most --max-seed-bytes (default 1 KiB, AFL++'s advice: "under 1 kB
is ideal", docs/fuzzing_in_depth.md); the smallest seed if none is that small.

Replay: the same inputs through each variant with afl-showmap -C, --replay-rounds interleaved
rounds; the ratios are of the best rounds and, steadier on a noisy host, the median of the
per-round paired ratios (a round's variants run back to back).

Instructions: callgrind's exact count of LLVMFuzzerTestOneInput (inclusive) per call on up to
--callgrind-inputs of the replay inputs, per variant: the target and its instrumentation without
the fuzzer, a figure the host's noise does not move.

Build kinds (--build-kinds, issue 13): instructions per execution only (callgrind), our build
kinds (AUTOTUNE_CC_INSTRUMENT=guard, edge, ngram, ctx, blocks, full; --variants picks some)
against afl-clang-fast's PCGUARD (default),
CLASSIC, NGRAM-8, CLASSIC,CTX and CLASSIC,CTX-2 on the same inputs: the queue of one afl-fuzz campaign (--seconds, -s 1) of
the PCGUARD build from the target's seeds, up to --callgrind-inputs of it. Ours count
LLVMFuzzerTestOneInput plus the runtime's per-execution work around it (cov_exec_begin,
cov_exec_end: the inline build's counter copy), in replay mode (the map sink configured as
afl-fuzz would have it); AFL++'s LLVMFuzzerTestOneInput alone (libAFLDriver running the files).
--variants keeps only the named variants (and aflpp-pcguard). Writes <out>/build_kinds.json and .md.

Host load matters on a shared machine: the JSON records the load average before and after, and
the host profile (autotune.profile) the figures were measured on.
Writes <out>/aflfs_bench.json and prints Markdown tables. Run from the repository root:
  .venv/bin/python benchmarks/aflfs_bench.py --seconds 30 --rounds 2 --out /tmp/aflfs-bench
Nothing is written outside --out and autotune's cache.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autotune.measure.host import current_host  # noqa: E402
from autotune.runtime.afl_index import read_index_stats  # noqa: E402

AFL_ENV = {"AFL_SKIP_CPUFREQ": "1", "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES": "1", "AFL_NO_UI": "1",
           "AFL_NO_AFFINITY": "1"}
NGRAM = "ngram-8"
INDEX_SLOTS = 1 << 24
DENSE_BYTES = 65536
FLAT_BYTES = 1 << 20
MAX_SEED_BYTES = 1024  # --max-seed-bytes: AFL++ advises seeds under 1 kB


def collision_rate(h: int, n: int) -> float:
    """BigMap (DSN 2021) equation 1: the fraction of n uniformly hashed keys that share a slot of h."""
    if n <= 0:
        return 0.0
    return 1.0 - (h / n) * (1.0 - ((h - 1) / h) ** n)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AFL_", "AUTOTUNE_", "__AFL"))}
    if "AUTOTUNE_CACHE_DIR" in os.environ:
        env["AUTOTUNE_CACHE_DIR"] = os.environ["AUTOTUNE_CACHE_DIR"]
    env.update(AFL_ENV)
    env.update(extra)
    return env


# ---- targets ------------------------------------------------------------------------------------

def demo_target() -> dict:
    from autotune import demo
    from autotune.target import build_harness

    src = demo.harness_source()
    ours = build_harness(sources=[src], output=Path(tempfile.mkdtemp(prefix="aflfs-demo-")) / "demo",
                         extra_cflags=list(demo.DEMO_CFLAGS))
    afl = Path(tempfile.mkdtemp(prefix="aflfs-demo-afl-")) / "demo_afl"
    env = dict(os.environ, AFL_LLVM_INSTRUMENT="NGRAM-8", AFL_QUIET="1")
    subprocess.run(["afl-clang-fast", *demo.DEMO_CFLAGS, "-fsanitize=fuzzer", str(src), "-o", str(afl)],
                   env=env, check=True, capture_output=True, text=True, timeout=600)
    return {"name": "demo", "ours": ours, "afl": afl, "seeds": small_seeds(sorted(demo.seed_dir().iterdir()))}


def small_seeds(files: list[Path]) -> list[Path]:
    """The seeds of at most MAX_SEED_BYTES, or the smallest one if none is that small."""
    files = [f for f in files if f.is_file()]
    small = [f for f in files if f.stat().st_size <= MAX_SEED_BYTES]
    return small or sorted(files, key=lambda f: f.stat().st_size)[:1]


def lz4_target() -> dict | None:
    try:
        from targets.libraries import LZ4, LZ4_OWN_CFLAGS
    except ImportError:
        return None
    try:
        ours = LZ4.build_harness(cc_kind="autotune", cflags=LZ4_OWN_CFLAGS)
        afl = LZ4.build_harness(cc_kind="afl", afl_env={"AFL_LLVM_INSTRUMENT": "NGRAM-8"}, cflags=LZ4_OWN_CFLAGS)
        seeds = small_seeds(LZ4.sample_inputs())
    except Exception as exc:  # noqa: BLE001 - the target is optional: report why it is skipped
        print(f"lz4 skipped: {exc}", file=sys.stderr)
        return None
    return {"name": "lz4", "ours": ours, "afl": afl, "seeds": seeds}


# ---- build kinds vs afl-clang-fast (issue 13) ------------------------------------------------------

FLAT_64K = {"AUTOTUNE_LAYOUT": "flat", "AUTOTUNE_MAP_SIZE": "65536"}  # AFL++'s hashed modes: flat 2^16
INDEXED_64K = {"AUTOTUNE_LAYOUT": "twolevel", "AUTOTUNE_INDEX_SIZE": str(1 << 22), "AUTOTUNE_MAP_SIZE": "65536"}  # an indexed build: 2^22 index, 2^16 dense
# (variant, (builder, our build kind or AFL_LLVM_INSTRUMENT; None = AFL++'s default PCGUARD), runtime env)
KIND_VARIANTS: list[tuple[str, tuple[str, str | None], dict[str, str]]] = [
    ("guard/guard-build", ("ours", "guard"), {"AUTOTUNE_METRIC": "guard"}),
    ("guard/blocks-build", ("ours", "blocks"), {"AUTOTUNE_METRIC": "guard"}),
    ("aflpp-pcguard", ("afl", None), {}),
    ("edge/edge-build", ("ours", "edge"), {"AUTOTUNE_METRIC": "edge", **FLAT_64K}),
    ("edge/edge-build-selects", ("ours", "edge"), {"AUTOTUNE_METRIC": "edge", **FLAT_64K}),
    ("edge/blocks-build", ("ours", "blocks"), {"AUTOTUNE_METRIC": "edge", **FLAT_64K}),
    ("edge/blocks-build-noselects", ("ours", "blocks"), {"AUTOTUNE_METRIC": "edge", **FLAT_64K}),
    ("edge/full-build", ("ours", "full"), {"AUTOTUNE_METRIC": "edge", **FLAT_64K}),
    ("aflpp-classic", ("afl", "CLASSIC"), {}),
    ("ngram-8/blocks-build", ("ours", "blocks"), {"AUTOTUNE_METRIC": "ngram-8", **FLAT_64K}),
    ("ngram-8/full-build", ("ours", "full"), {"AUTOTUNE_METRIC": "ngram-8", **FLAT_64K}),
    ("ngram-8/ngram-build", ("ours", "ngram"), {"AUTOTUNE_METRIC": "ngram-8", **FLAT_64K}),
    ("aflpp-ngram8", ("afl", "NGRAM-8"), {}),
    ("ctx/full-build", ("ours", "full"), {"AUTOTUNE_METRIC": "ctx", **FLAT_64K}),
    ("ctx/ctx-build", ("ours", "ctx"), {"AUTOTUNE_METRIC": "ctx", **FLAT_64K}),
    ("ctx/ctx-build-indexed", ("ours", "ctx"), {"AUTOTUNE_METRIC": "ctx", **INDEXED_64K}),
    ("aflpp-ctx", ("afl", "CLASSIC,CTX"), {}),
    ("ctx-2/full-build", ("ours", "full"), {"AUTOTUNE_METRIC": "ctx-2", **FLAT_64K}),
    ("ctx-2/ctx-build", ("ours", "ctx"), {"AUTOTUNE_METRIC": "ctx-2", **FLAT_64K}),
    ("ctx-2/ctx-build-indexed", ("ours", "ctx"), {"AUTOTUNE_METRIC": "ctx-2", **INDEXED_64K}),
    ("aflpp-ctx2", ("afl", "CLASSIC,CTX-2"), {}),
]
# compile-time variables of a variant besides its build kind (AUTOTUNE_CC_SELECTS: the edge kind splits
# selects only when asked, the other kinds unless told not to)
BUILD_VARS: dict[str, dict[str, str]] = {"edge/edge-build-selects": {"AUTOTUNE_CC_SELECTS": "1"},
                                         "edge/blocks-build-noselects": {"AUTOTUNE_CC_SELECTS": "0"},
                                         "ngram-8/ngram-build": {"AUTOTUNE_CC_NGRAM": "8"},
                                         "ctx/ctx-build": {"AUTOTUNE_CC_CTX": "ctx"},
                                         "ctx-2/ctx-build": {"AUTOTUNE_CC_CTX": "ctx-2"},
                                         "ctx/ctx-build-indexed": {"AUTOTUNE_CC_CTX": "ctx", "AUTOTUNE_CC_INDEX": "1"},
                                         "ctx-2/ctx-build-indexed": {"AUTOTUNE_CC_CTX": "ctx-2", "AUTOTUNE_CC_INDEX": "1"}}
PAIRS = [("guard/guard-build", "aflpp-pcguard"), ("guard/blocks-build", "aflpp-pcguard"),
         ("edge/edge-build", "aflpp-classic"), ("edge/edge-build-selects", "aflpp-classic"),
         ("edge/blocks-build", "aflpp-classic"), ("edge/blocks-build-noselects", "aflpp-classic"),
         ("edge/full-build", "aflpp-classic"),
         ("ngram-8/blocks-build", "aflpp-ngram8"), ("ngram-8/full-build", "aflpp-ngram8"),
         ("ngram-8/ngram-build", "aflpp-ngram8"),
         ("ctx/full-build", "aflpp-ctx"), ("ctx/ctx-build", "aflpp-ctx"),
         ("ctx-2/full-build", "aflpp-ctx2"), ("ctx-2/ctx-build", "aflpp-ctx2"),
         ("ctx/ctx-build-indexed", "aflpp-ctx"), ("ctx-2/ctx-build-indexed", "aflpp-ctx2")]


def kind_binary(target: str, builder: str, kind: str | None, cc_vars: dict[str, str] | None = None) -> Path:
    """The target's harness built by our wrapper with build kind ``kind`` (and the compile-time
    variables ``cc_vars``) or by afl-clang-fast."""
    cc_vars = dict(cc_vars or {})
    if target == "libyaml":
        from targets.libraries import LIBYAML
        if builder == "ours":
            return LIBYAML.build_harness(cc_kind="autotune", instrument=kind or "full", cc_vars=cc_vars)
        return LIBYAML.build_harness(cc_kind="afl", afl_env={"AFL_LLVM_INSTRUMENT": kind} if kind else {})
    if target == "lz4":
        from targets.libraries import LZ4, LZ4_OWN_CFLAGS
        if builder == "ours":
            return LZ4.build_harness(cc_kind="autotune", instrument=kind or "full", cc_vars=cc_vars,
                                         cflags=LZ4_OWN_CFLAGS)
        return LZ4.build_harness(cc_kind="afl", afl_env={"AFL_LLVM_INSTRUMENT": kind} if kind else {},
                                     cflags=LZ4_OWN_CFLAGS)
    from autotune import demo

    src = demo.harness_source()
    d = Path(tempfile.mkdtemp(prefix=f"kinds-{target}-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AFL_", "AUTOTUNE_CC"))}
    if builder == "ours":
        env.update({"AUTOTUNE_CC_INSTRUMENT": kind or "full", **cc_vars})
        cc = str(Path(sys.executable).parent / "autotune-cc")
    else:
        env.update(AFL_QUIET="1", **({"AFL_LLVM_INSTRUMENT": kind} if kind else {}))
        cc = "afl-clang-fast"
    subprocess.run([cc, *demo.DEMO_CFLAGS, "-fsanitize=fuzzer", str(src), "-o", str(d / "demo")],
                   env=env, check=True, capture_output=True, text=True, timeout=600)
    return d / "demo"


def _callgrind_functions(out_file: Path, names: tuple[str, ...]) -> dict[str, int]:
    """Inclusive instructions of each named function in a callgrind profile (0 when absent)."""
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out_file)],
                         capture_output=True, text=True, check=True).stdout
    res = dict.fromkeys(names, 0)
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+\S*:(\S+) ", line)
        if m and m.group(2) in res:
            res[m.group(2)] += int(m.group(1).replace(",", ""))
    return res


def kind_variants(names: str | None) -> list[tuple[str, tuple[str, str | None], dict[str, str]]]:
    """The KIND_VARIANTS named (comma-separated; None: all), always with aflpp-pcguard (the inputs' campaign)."""
    if not names:
        return list(KIND_VARIANTS)
    want = {n.strip() for n in names.split(",") if n.strip()} | {"aflpp-pcguard"}
    unknown = want - {n for n, _, _ in KIND_VARIANTS}
    if unknown:
        raise SystemExit(f"--variants: unknown {', '.join(sorted(unknown))}; choose from "
                         f"{', '.join(n for n, _, _ in KIND_VARIANTS)}")
    return [v for v in KIND_VARIANTS if v[0] in want]


def build_kinds_target(target: dict, seconds: int, n_inputs: int, out: Path,
                       kinds: list[tuple[str, tuple[str, str | None], dict[str, str]]] | None = None) -> dict:
    import hashlib

    kinds = list(KIND_VARIANTS) if kinds is None else kinds
    work = out / target["name"] / "kinds"
    work.mkdir(parents=True, exist_ok=True)
    bins = {name: kind_binary(target["name"], *how, BUILD_VARS.get(name)) for name, how, _ in kinds}
    # the inputs: one afl-fuzz campaign of AFL++'s default build (fixed RNG seed)
    camp = work / "campaign"
    shutil.rmtree(camp, ignore_errors=True)
    (camp / "in").mkdir(parents=True)
    for s in target["seeds"]:
        shutil.copy(s, camp / "in" / s.name)
    subprocess.run(["afl-fuzz", "-V", str(seconds), "-s", "1", "-i", str(camp / "in"), "-o", str(camp / "out"),
                    "--", str(bins["aflpp-pcguard"])], env=clean_env(), capture_output=True, timeout=seconds + 300,
                   check=False)
    queue = camp / "out" / "default" / "queue"
    files = sorted(p for p in queue.iterdir() if p.is_file()) if queue.is_dir() else []
    if not files:
        raise SystemExit(f"the afl-fuzz campaign on {target['name']} left no queue in {queue}")
    picked = evenly_spaced(files, n_inputs)
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in picked)).hexdigest()
    res = {}
    for name, (builder, kind), env_extra in kinds:
        env = {k: v for k, v in clean_env(**env_extra).items() if k not in AFL_ENV}
        r = callgrind_binary(bins[name], env, picked, work, name.replace("/", "_"))
        res[name] = {"builder": builder, "build": kind or "PCGUARD", "build_vars": BUILD_VARS.get(name, {}),
                     "env": env_extra, "harness_instructions": r["harness_instructions"],
                     "runtime_per_exec_instructions": r["runtime_per_exec_instructions"], "executions": r["calls"],
                     "per_exec": round(r["per_exec"]) if r["calls"] else None}
    ratios = {f"{a} / {b}": round(res[a]["per_exec"] / res[b]["per_exec"], 3) for a, b in PAIRS
              if a in res and b in res}
    return {"target": target["name"], "inputs": len(picked), "inputs_sha256": digest, "campaign_seconds": seconds,
            "queue_entries": len(files), "variants": res, "ratios": ratios}


def build_kinds_markdown(results: list[dict]) -> str:
    names = [n for n, _, _ in KIND_VARIANTS if results and n in results[0]["variants"]]
    pairs = [(a, b) for a, b in PAIRS if results and f"{a} / {b}" in results[0]["ratios"]]
    lines = ["instructions per execution (callgrind, exact; ours: LLVMFuzzerTestOneInput + cov_exec_begin/end "
             "in replay mode; AFL++: LLVMFuzzerTestOneInput under libAFLDriver), the same inputs", "",
             "| target | inputs | " + " | ".join(names) + " |",
             "|---|---|" + "---|" * len(names)]
    for r in results:
        lines.append(f"| {r['target']} | {r['inputs']} | " +
                     " | ".join(f"{r['variants'][n]['per_exec']:,}" for n in names) + " |")
    lines += ["", "| target | " + " | ".join(f"{a} / {b}" for a, b in pairs) + " |", "|---|" + "---|" * len(pairs)]
    for r in results:
        lines.append(f"| {r['target']} | " + " | ".join(f"{r['ratios'][f'{a} / {b}']:.3f}x" for a, b in pairs) + " |")
    return "\n".join(lines)


# ---- runs ---------------------------------------------------------------------------------------

KEY_HASH: str | None = None  # --key-hash: AUTOTUNE_KEY_HASH of our variants (None: the runtime's default)


def variants(target: dict, run_dir: Path) -> dict[str, tuple[Path, dict[str, str]]]:
    common = {"AUTOTUNE_METRIC": NGRAM, **({"AUTOTUNE_KEY_HASH": KEY_HASH} if KEY_HASH else {})}
    return {
        "twolevel": (target["ours"], {**common, "AUTOTUNE_LAYOUT": "twolevel", "AUTOTUNE_INDEX_SIZE": str(INDEX_SLOTS),
                                      "AUTOTUNE_MAP_SIZE": str(DENSE_BYTES),
                                      "AUTOTUNE_INDEX_FILE": str(run_dir / "index.bin")}),
        "aflpp-ngram8": (target["afl"], {}),
        "flat-1m": (target["ours"], {**common, "AUTOTUNE_LAYOUT": "flat", "AUTOTUNE_MAP_SIZE": str(FLAT_BYTES)}),
        # our runtime keyed as AFL++ keys (its hash, the same 2^24 index): about as many keys as AFL++
        # NGRAM-8 tells apart, so the fuzzer's work per new key is alike and the runtime's cost shows
        "twolevel-aflhash": (target["ours"], {"AUTOTUNE_METRIC": NGRAM, "AUTOTUNE_KEY_HASH": "afl",
                                              "AUTOTUNE_LAYOUT": "twolevel", "AUTOTUNE_INDEX_SIZE": str(INDEX_SLOTS),
                                              "AUTOTUNE_MAP_SIZE": str(DENSE_BYTES),
                                              "AUTOTUNE_INDEX_FILE": str(run_dir / "index-afl.bin")}),
    }


def fuzzer_stats(inst: Path) -> dict[str, str]:
    out = {}
    for line in (inst / "fuzzer_stats").read_text().splitlines():
        k, _, v = line.partition(":")
        out[k.strip()] = v.strip()
    return out


def start_campaign(binary: Path, env_extra: dict[str, str], seeds: list[Path], run_dir: Path,
                   seconds: int, rng_seed: int) -> tuple[subprocess.Popen, list[str], float]:
    in_dir = run_dir / "in"
    in_dir.mkdir(parents=True)
    for i, s in enumerate(seeds):
        shutil.copyfile(s, in_dir / f"seed{i:03d}")
    cmd = ["afl-fuzz", "-i", str(in_dir), "-o", str(run_dir / "out"), "-V", str(seconds), "-s", str(rng_seed), "--",
           str(binary)]
    proc = subprocess.Popen(cmd, env=clean_env(**env_extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, stdin=subprocess.DEVNULL, cwd=run_dir)
    return proc, cmd, time.monotonic()


def finish_campaign(started: tuple[subprocess.Popen, list[str], float], env_extra: dict[str, str], run_dir: Path,
                    seconds: int) -> dict:
    proc, cmd, t0 = started
    try:
        text, _ = proc.communicate(timeout=seconds + 300)
    except subprocess.TimeoutExpired:
        proc.kill()
        text, _ = proc.communicate()
    wall = time.monotonic() - t0
    inst = run_dir / "out" / "default"
    if proc.returncode != 0 or not (inst / "fuzzer_stats").is_file():
        raise SystemExit(f"afl-fuzz failed ({' '.join(cmd)}):\n{text[-3000:]}")
    st = fuzzer_stats(inst)
    res = {"execs_per_s": float(st["execs_per_sec"]), "execs_done": int(st["execs_done"]),
           "edges_found": int(st["edges_found"]), "total_edges": int(st["total_edges"]),
           "stability": st["stability"], "corpus_count": int(st["corpus_count"]),
           "saved_crashes": int(st["saved_crashes"]), "saved_hangs": int(st["saved_hangs"]),
           "wall_s": round(wall, 1), "queue": str(inst / "queue")}
    idx = env_extra.get("AUTOTUNE_INDEX_FILE")
    if idx:
        s = read_index_stats(path=idx)
        res.update(used_key=s.used_key, overflow_keys=s.overflow_keys)
    return res


def union_corpus(queues: list[Path], dest: Path, limit: int) -> int:
    """Copy the queues' inputs (<= 1 MiB each) into dest, at most limit, in a fixed order."""
    dest.mkdir(parents=True)
    files = sorted(f for q in queues for f in q.iterdir() if f.is_file() and f.stat().st_size <= 1 << 20)
    step = max(1, len(files) // limit) if limit else 1
    picked = files[::step][:limit] if limit else files
    for i, f in enumerate(picked):
        shutil.copyfile(f, dest / f"u{i:06d}")
    return len(picked)


def replay_rate(target: dict, corpus: Path, n_inputs: int, rounds: int, out: Path) -> dict:
    """inputs/s of each variant over the same corpus (afl-showmap -C), best and median of rounds."""
    times: dict[str, list[float]] = {}
    for r in range(rounds):
        run_dir = out / f"replay-r{r}"
        run_dir.mkdir(parents=True, exist_ok=True)
        vs = variants(target, run_dir)
        order = list(vs) if r % 2 == 0 else list(vs)[::-1]
        for name in order:
            binary, env_extra = vs[name]
            env = clean_env(**env_extra, AUTOTUNE_AFL_PERSISTENT="1000000")
            t0 = time.monotonic()
            proc = subprocess.run(["afl-showmap", "-C", "-i", str(corpus), "-o", str(run_dir / f"{name}.map"),
                                   "-t", "5000", "--", str(binary)], env=env, capture_output=True, text=True, check=False,
                                  timeout=1800, stdin=subprocess.DEVNULL)
            dt = time.monotonic() - t0
            if proc.returncode != 0:
                raise SystemExit(f"afl-showmap failed for {name}:\n{proc.stdout[-2000:]}")
            times.setdefault(name, []).append(dt)
    out_d = {name: {"inputs_per_s_best": round(n_inputs / min(ts), 1),
                    "inputs_per_s_median": round(n_inputs / statistics.median(ts), 1),
                    "wall_s": [round(t, 3) for t in ts]} for name, ts in times.items()}
    # paired: the variants of one round ran back to back, so their ratio cancels slow drift
    for mine in ("twolevel", "twolevel-aflhash"):
        for other in ("aflpp-ngram8", "flat-1m"):
            out_d[mine][f"paired_ratio_median_vs_{other}"] = round(statistics.median(
                b / a for a, b in zip(times[mine], times[other])), 3)
    return out_d


def replay_keys(target: dict, queues: list[Path], work: Path) -> dict:
    """Distinct keys of the union of the queues: ours (index 2^24) vs AFL++ NGRAM-8 (64 KiB)."""
    union = work / "union"
    n_inputs = union_corpus(queues, union, 0)
    idx = work / "replay.idx"
    env = clean_env(**variants(target, work)["twolevel"][1])
    env.update(AUTOTUNE_METRIC=NGRAM, AUTOTUNE_LAYOUT="twolevel", AUTOTUNE_INDEX_SIZE=str(INDEX_SLOTS),
                    AUTOTUNE_MAP_SIZE=str(DENSE_BYTES), AUTOTUNE_INDEX_FILE=str(idx))
    for binary, e, name in ((target["ours"], env, "ours"), (target["afl"], clean_env(), "afl")):
        subprocess.run(["afl-showmap", "-C", "-i", str(union), "-o", str(work / f"{name}.map"), "-t", "5000",
                        "--", str(binary)], env=e, capture_output=True, text=True, timeout=1200, check=False,
                       stdin=subprocess.DEVNULL)
    ours = read_index_stats(path=idx)
    m = sum(1 for _ in (work / "afl.map").read_text().split())
    n = ours.keys
    return {"inputs": n_inputs, "our_keys": n, "our_used_key": ours.used_key, "our_overflow_keys": ours.overflow_keys,
            "afl_ngram8_tuples": m,
            "afl_keys_not_told_apart": round(1 - m / n, 4) if n else None,
            "eq1_collision_rate_64k": round(collision_rate(65536, n), 4),
            "eq1_collision_rate_index_2p24": round(collision_rate(INDEX_SLOTS, n), 6)}


def _callgrind_per_exec(cmd: list[str], env: dict[str, str], work: Path, name: str) -> tuple[int, int]:
    """(inclusive instructions of LLVMFuzzerTestOneInput, its calls) of one valgrind run."""
    out_file = work / f"callgrind.{name}.out"
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *cmd], env=env,
                       capture_output=True, text=True, timeout=3600, stdin=subprocess.DEVNULL, check=False)
    if p.returncode != 0:
        raise SystemExit(f"valgrind failed for {name}:\n{p.stderr[-2000:]}")
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=caller", str(out_file)],
                         capture_output=True, text=True, check=True).stdout
    lines = ann.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+\*\s+\S*:LLVMFuzzerTestOneInput ", line)
        if not m:
            continue
        calls, j = 0, i - 1
        while j >= 0 and "<" in lines[j]:
            c = re.search(r"\(([\d,]+)x\)", lines[j])
            calls += int(c.group(1).replace(",", "")) if c else 0
            j -= 1
        return int(m.group(1).replace(",", "")), calls
    raise SystemExit(f"no LLVMFuzzerTestOneInput in the callgrind profile of {name}")


def evenly_spaced(files: list, n: int) -> list:
    """Up to ``n`` of ``files`` in their order, every k-th (k = len // n, at least 1): a fixed spread of a queue."""
    return files[::max(1, len(files) // n)][:n]


RUNTIME_PER_EXEC = ("cov_exec_begin", "cov_exec_end")  # our runtime's per-execution work around the harness


def callgrind_binary(binary: Path | str, env: dict[str, str], inputs: list[Path], work: Path, name: str) -> dict:
    """Instructions per execution of ``binary`` on ``inputs`` under callgrind, run with exactly ``env``.

    A copy in ``work`` with its debug info stripped runs (valgrind 3.19 gives up on clang-14's debug
    info); AUTOTUNE_REPLAY_ROUNDS=1 puts our driver in its replay mode (a warm-up and a timed pass, so
    each input twice) and is ignored by AFL++'s libAFLDriver (each input once). The figure, exact for
    a run: LLVMFuzzerTestOneInput inclusive plus our runtime's cov_exec_begin and cov_exec_end, over
    the calls of LLVMFuzzerTestOneInput; the harness's part alone is kept beside it."""
    copy = work / f"{name}.bin"
    shutil.copyfile(binary, copy)
    copy.chmod(0o755)
    subprocess.run(["strip", "--strip-debug", str(copy)], check=True)
    ir, calls = _callgrind_per_exec([str(copy), *map(str, inputs)], {**env, "AUTOTUNE_REPLAY_ROUNDS": "1"}, work, name)
    around = _callgrind_functions(work / f"callgrind.{name}.out", RUNTIME_PER_EXEC)
    return {"harness_instructions": ir, "runtime_per_exec_instructions": around, "calls": calls,
            "per_exec": (ir + sum(around.values())) / calls if calls else None}


def instructions_per_exec(target: dict, corpus: Path, n_inputs: int, work: Path) -> dict | None:
    """Exact instructions per execution (callgrind: LLVMFuzzerTestOneInput, inclusive, over its calls)
    of each variant on the same inputs: the target plus its instrumentation, no fuzzer. Ours runs in
    the driver's replay mode (AUTOTUNE_REPLAY_ROUNDS=1: a warm-up pass and one timed pass, the map
    sink configured as the variant's); the afl-clang-fast build runs each file once (libAFLDriver)."""
    if not shutil.which("valgrind"):
        return None
    work.mkdir(parents=True, exist_ok=True)
    picked = evenly_spaced(sorted(corpus.iterdir()), n_inputs)
    res = {}
    for name, (binary, env_extra) in variants(target, work).items():
        # no fuzzer here: none of afl-fuzz's settings, and a private index (no file)
        env = {k: v for k, v in clean_env(**env_extra).items() if k not in AFL_ENV and k != "AUTOTUNE_INDEX_FILE"}
        r = callgrind_binary(binary, env, picked, work, name)
        ir, calls = r["harness_instructions"], r["calls"]  # the harness alone, as this figure always was
        res[name] = {"instructions": ir, "executions": calls, "per_exec": round(ir / calls) if calls else None}
    return {"inputs": len(picked), "variants": res}


def bench_target(target: dict, seconds: int, rounds: int, out: Path, *, sequential: bool,
                 replay_inputs: int, replay_rounds: int, callgrind_inputs: int) -> dict:
    runs: dict[str, list[dict]] = {}
    for r in range(rounds):
        names = list(variants(target, out).keys())
        order = names if r % 2 == 0 else names[::-1]  # interleave against drift
        started = {}
        for name in order:
            run_dir = out / target["name"] / f"{name}-r{r}"
            shutil.rmtree(run_dir, ignore_errors=True)
            binary, env_extra = variants(target, run_dir)[name]
            # afl-fuzz's RNG seed: the same for every variant of a round, another in each round
            started[name] = (start_campaign(binary, env_extra, target["seeds"], run_dir, seconds, 1000 + r), env_extra,
                             run_dir)
            if sequential:
                st, e, d = started.pop(name)
                runs.setdefault(name, []).append(finish_campaign(st, e, d, seconds))
        for name, (st, e, d) in started.items():
            runs.setdefault(name, []).append(finish_campaign(st, e, d, seconds))
        for name in order:
            res = runs[name][-1]
            print(f"  {target['name']:5s} {name:16s} round {r}: {res['execs_per_s']:9.1f} execs/s, "
                  f"edges {res['edges_found']}, stability {res['stability']}", file=sys.stderr)
    summary = {}
    for name, rs in runs.items():
        eps = [x["execs_per_s"] for x in rs]
        summary[name] = {"execs_per_s_median": round(statistics.median(eps), 1), "execs_per_s_best": max(eps),
                         "execs_per_s_runs": eps, "edges_found": [x["edges_found"] for x in rs],
                         "stability": [x["stability"] for x in rs], "total_edges": rs[0]["total_edges"],
                         "corpus_count": [x["corpus_count"] for x in rs],
                         **({"used_key": [x["used_key"] for x in rs], "overflow_keys": [x["overflow_keys"] for x in rs]}
                            if "used_key" in rs[0] else {})}
    queues = [Path(x["queue"]) for rs in runs.values() for x in rs]
    corpus = out / target["name"] / "replay-corpus"
    shutil.rmtree(corpus, ignore_errors=True)
    n_replay = union_corpus(queues, corpus, replay_inputs)
    replay = replay_rate(target, corpus, n_replay, replay_rounds, out / target["name"])
    for name, v in replay.items():
        print(f"  {target['name']:5s} {name:16s} replay: {v['inputs_per_s_best']:9.1f} inputs/s (best)", file=sys.stderr)
    def ratio(table: dict, key: str, a: str, b: str) -> float | None:
        return round(table[a][key] / table[b][key], 3) if table[b][key] else None
    ratios = {"campaign_twolevel_vs_aflpp_ngram8": ratio(summary, "execs_per_s_median", "twolevel", "aflpp-ngram8"),
              "campaign_twolevel_aflhash_vs_aflpp_ngram8": ratio(summary, "execs_per_s_median", "twolevel-aflhash",
                                                                 "aflpp-ngram8"),
              "campaign_twolevel_aflhash_vs_flat_1m": ratio(summary, "execs_per_s_median", "twolevel-aflhash", "flat-1m"),
              "replay_twolevel_aflhash_vs_aflpp_ngram8": ratio(replay, "inputs_per_s_best", "twolevel-aflhash",
                                                               "aflpp-ngram8"),
              "campaign_twolevel_vs_flat_1m": ratio(summary, "execs_per_s_median", "twolevel", "flat-1m"),
              "replay_twolevel_vs_aflpp_ngram8": ratio(replay, "inputs_per_s_best", "twolevel", "aflpp-ngram8"),
              "replay_twolevel_vs_flat_1m": ratio(replay, "inputs_per_s_best", "twolevel", "flat-1m"),
              "replay_paired_median_vs_aflpp_ngram8": replay["twolevel"]["paired_ratio_median_vs_aflpp-ngram8"],
              "replay_paired_median_vs_flat_1m": replay["twolevel"]["paired_ratio_median_vs_flat-1m"]}
    shutil.rmtree(out / target["name"] / "replay", ignore_errors=True)
    keys = replay_keys(target, queues, out / target["name"] / "replay")
    instr = instructions_per_exec(target, corpus, callgrind_inputs, out / target["name"] / "callgrind") \
        if callgrind_inputs else None
    return {"target": target["name"], "seeds": len(target["seeds"]), "variants": summary, "replay_inputs": n_replay,
            "replay": replay, "ratios": ratios, "keys": keys, "instructions": instr, "runs": runs}


# the four variants of the tables, in their order: (key, column)
TABLE_VARIANTS = (("twolevel", "twolevel 2^24/64K"), ("twolevel-aflhash", "twolevel, afl hash"),
                  ("aflpp-ngram8", "AFL++ NGRAM-8 64K"), ("flat-1m", "flat 1 MiB"))
VARIANT_COLUMNS = tuple(column for _, column in TABLE_VARIANTS)


def _row(*cells: object) -> str:
    """A Markdown table's row of ``cells``."""
    return "| " + " | ".join(map(str, cells)) + " |"


def _table_head(title: str, *columns: str) -> list[str]:
    """A Markdown table's title, a blank line, its header row and the rule under it."""
    return [title, "", _row(*columns), "|---" * len(columns) + "|"]


def _variant_cells(figures: dict, first: str, second: str) -> str:
    """The four variants' cells of a row, each "FIRST (SECOND)" of its figures."""
    return " | ".join(f"{figures[k][first]:.0f} ({figures[k][second]:.0f})" for k, _ in TABLE_VARIANTS)


# the ratios of the campaign table, in its order (``ratios["campaign_" + r]``); the replay table
# shows the first three (``ratios["replay_" + r]``), each with its median of paired ratios
TABLE_RATIOS = ("twolevel_vs_aflpp_ngram8", "twolevel_vs_flat_1m", "twolevel_aflhash_vs_aflpp_ngram8",
                "twolevel_aflhash_vs_flat_1m")


def markdown(results: list[dict], seconds: int, rounds: int) -> str:
    lines = _table_head(f"campaigns: afl-fuzz {seconds} s x {rounds} round(s) per variant, execs/s median (best)",
                        "target", *VARIANT_COLUMNS, "twolevel/NGRAM-8", "twolevel/flat", "afl-hash twolevel/NGRAM-8",
                        "afl-hash twolevel/flat", "stability (both twolevel)")
    for r in results:
        v, q = r["variants"], r["ratios"]
        lines.append(_row(r["target"], _variant_cells(v, "execs_per_s_median", "execs_per_s_best"),
                          *(f"{q['campaign_' + k]}x" for k in TABLE_RATIOS),
                          ", ".join(v["twolevel"]["stability"] + v["twolevel-aflhash"]["stability"])))
    lines += ["", *_table_head("campaign detail per variant: execs/s median, corpus entries and keys (edges_found) "
                               "per round", "target", "variant", "execs/s", "corpus entries", "edges_found")]
    for r in results:
        for name, v in r["variants"].items():
            lines.append(_row(r["target"], name, f"{v['execs_per_s_median']:.0f}",
                              ", ".join(map(str, v["corpus_count"])), ", ".join(map(str, v["edges_found"]))))
    lines += ["", *_table_head("replay: the same inputs through each variant (afl-showmap -C), inputs/s best "
                               "(median); ratios of the best, and [median of the per-round paired ratios]",
                               "target", "inputs", *VARIANT_COLUMNS, "twolevel/NGRAM-8", "twolevel/flat",
                               "afl-hash twolevel/NGRAM-8")]
    for r in results:
        p, q = r["replay"], r["ratios"]
        paired = (q["replay_paired_median_vs_aflpp_ngram8"], q["replay_paired_median_vs_flat_1m"],
                  p["twolevel-aflhash"]["paired_ratio_median_vs_aflpp-ngram8"])
        lines.append(_row(r["target"], r["replay_inputs"],
                          _variant_cells(p, "inputs_per_s_best", "inputs_per_s_median"),
                          *(f"{q['replay_' + k]}x [{m}x]" for k, m in zip(TABLE_RATIOS, paired))))
    if any(r.get("instructions") for r in results):
        lines += ["", *_table_head("instructions per execution (callgrind, exact: LLVMFuzzerTestOneInput inclusive "
                                   "/ calls; target + instrumentation, no fuzzer)",
                                   "target", "inputs", *VARIANT_COLUMNS, "twolevel/NGRAM-8", "afl-hash twolevel/NGRAM-8")]
        for r in results:
            ins = r.get("instructions")
            if not ins:
                continue
            per_exec = {k: v["per_exec"] for k, v in ins["variants"].items()}
            lines.append(_row(r["target"], ins["inputs"], *(per_exec[k] for k, _ in TABLE_VARIANTS),
                              *(f"{per_exec[k] / per_exec['aflpp-ngram8']:.2f}x"
                                for k in ("twolevel", "twolevel-aflhash"))))
    lines += ["", _row("target", "replayed inputs", "our keys (used+overflow)", "AFL++ NGRAM-8 tuples",
                       "1 - tuples/keys", "eq.1 at 64K", "eq.1 at 2^24"), "|---" * 7 + "|"]
    for r in results:
        k = r["keys"]
        lines.append(_row(r["target"], k["inputs"], f"{k['our_keys']} ({k['our_used_key']}+{k['our_overflow_keys']})",
                          k["afl_ngram8_tuples"], k["afl_keys_not_told_apart"], k["eq1_collision_rate_64k"],
                          k["eq1_collision_rate_index_2p24"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--targets", default="demo,lz4")
    ap.add_argument("--concurrent", action="store_true", help="run the campaigns of a round at the same time "
                    "(default: one at a time; concurrent runs share the cores and the caches)")
    ap.add_argument("--max-seed-bytes", type=int, default=1024, help="seeds larger than this are left "
                    "out (the smallest is kept if none is this small)")
    ap.add_argument("--replay-rounds", type=int, default=5, help="interleaved rounds of the replay")
    ap.add_argument("--callgrind-inputs", type=int, default=200, help="inputs in the callgrind instruction count "
                    "(0: skip)")
    ap.add_argument("--key-hash", choices=("exact", "afl"), help="AUTOTUNE_KEY_HASH of our builds (default: "
                    "the runtime's default)")
    ap.add_argument("--replay-inputs", type=int, default=20000, help="at most this many inputs in the replay")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "aflfs-bench")
    ap.add_argument("--variants", "--kind-variants", dest="variants", help="with --build-kinds: only these variants (comma-separated names of "
                    "KIND_VARIANTS; aflpp-pcguard is always run: its campaign gives the inputs)")
    ap.add_argument("--build-kinds", action="store_true", help="only the instruction counts of our build kinds "
                    "vs afl-clang-fast PCGUARD/CLASSIC/NGRAM-8 (issue 13): --seconds is the campaign making the inputs")
    a = ap.parse_args(argv)
    for tool in ("afl-fuzz", "afl-showmap", "afl-clang-fast"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found: apt-get install -y afl++")
    global KEY_HASH, MAX_SEED_BYTES
    KEY_HASH = a.key_hash
    MAX_SEED_BYTES = a.max_seed_bytes
    a.out.mkdir(parents=True, exist_ok=True)
    if a.build_kinds:
        return build_kinds_main(a)
    results = []
    for name in a.targets.split(","):
        target = demo_target() if name == "demo" else lz4_target() if name == "lz4" else None
        if target is None:
            print(f"target {name} unavailable, skipped", file=sys.stderr)
            continue
        load_before = os.getloadavg()
        results.append(bench_target(target, a.seconds, a.rounds, a.out, sequential=not a.concurrent,
                                    replay_inputs=a.replay_inputs, replay_rounds=a.replay_rounds,
                                    callgrind_inputs=a.callgrind_inputs))
        results[-1]["loadavg_before_after"] = [load_before, os.getloadavg()]
    doc = {"schema_version": 1, "host": {"machine": platform.machine(), "node": platform.node(),
                                         "cpus": os.cpu_count(), "kernel": platform.release()},
           "afl_fuzz": subprocess.run(["afl-fuzz", "-h"], capture_output=True, text=True, check=False).stdout.splitlines()[0:1],
           "host_profile": current_host(),
           "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                                    check=False).stdout.strip() or None,
           "seconds": a.seconds, "rounds": a.rounds, "replay_rounds": a.replay_rounds, "sequential": not a.concurrent,
           "key_hash": a.key_hash, "results": results}
    tmp = a.out / "aflfs_bench.json.tmp"
    tmp.write_text(json.dumps(doc, indent=2))
    os.replace(tmp, a.out / "aflfs_bench.json")
    print(markdown(results, a.seconds, a.rounds))
    return 0


def libyaml_target() -> dict | None:
    """libyaml (benchmarks/targets/libraries.py): many small functions, built by its own CMake build."""
    try:
        from targets.libraries import LIBYAML
        return {"name": "libyaml", "seeds": small_seeds(LIBYAML.sample_inputs())}
    except Exception as exc:  # noqa: BLE001 - the target is optional: report why it is skipped
        print(f"libyaml skipped: {exc}", file=sys.stderr)
        return None


def build_kinds_main(a: argparse.Namespace) -> int:
    results = []
    for name in a.targets.split(","):
        target = {"demo": demo_target, "lz4": lz4_target, "libyaml": libyaml_target}.get(name, lambda: None)()
        if target is None:
            print(f"target {name} unavailable, skipped", file=sys.stderr)
            continue
        results.append(build_kinds_target(target, a.seconds, a.callgrind_inputs, a.out, kind_variants(a.variants)))
    doc = {"schema_version": 1, "kind": "build-kinds",
           "afl_fuzz": subprocess.run(["afl-fuzz", "-h"], capture_output=True, text=True, check=False).stdout.splitlines()[0:1],
           "host_profile": current_host(),
           "commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                                    check=False).stdout.strip() or None,
           "campaign_seconds": a.seconds, "variants": [n for n, _, _ in kind_variants(a.variants)], "results": results}
    md = build_kinds_markdown(results)
    for fname, text in (("build_kinds.json", json.dumps(doc, indent=2)), ("build_kinds.md", md + "\n")):
        tmp = a.out / (fname + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, a.out / fname)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
