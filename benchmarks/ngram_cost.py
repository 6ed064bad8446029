#!/usr/bin/env python3
"""Where an execution's cost goes: ngram-8 on our two-level map against AFL++'s builds (issue 36).

Per execution, on one fixed set of inputs, under callgrind with its cache simulation (instruction
counts and simulated misses: exact and repeatable on a loaded VM with no perf counters; no
wall-clock figure here):

  Ir, D1 read/write misses, LL read/write misses of the target: LLVMFuzzerTestOneInput inclusive,
      plus, for ours, the runtime's per-execution calls around it (cov_exec_begin, cov_exec_end);
      collected with --toggle-collect, so the figure is exactly that code while the cache model
      sees the whole process (the replay driver's own map work included, as afl-fuzz's would be);
  the same figures of our runtime's functions alone (the hook and what it calls: RUNTIME_FNS);
  hook calls: calls of __sanitizer_cov_trace_pc_guard (AFL++'s builds and our guard kind count
      inline: 0);
  afl-fuzz's map bytes per execution: the map size afl-fuzz would use (afl-showmap -C over the same
      inputs: "... out of N existing"), which afl-fuzz 5.02c zeroes, then scans (classify and
      compare) every execution.

Steady state: each variant runs twice, the inputs through 2 and through 3 passes (ours: the
driver's replay mode, AUTOTUNE_REPLAY_ROUNDS=1 and 2, a warm-up round first; AFL++'s libAFLDriver:
the file list given 2 and 3 times), and every figure is the difference over the inputs: one warm
pass per input, as in a persistent afl-fuzz child, with no first-touch of the map or the index.

Cache models (--models, MODELS): host, callgrind's default (the host's D1 and LL from cpuid); l2,
an LL of 1 MiB, 16-way, 64-byte lines (a typical L2, which our 16 MiB index does not fit while a
host's LL may); tlb, 4-KiB pages as the simulated caches' lines, a model of the data TLB (the
index spans 4096 4-KiB pages; under afl-fuzz it is a file mapped MAP_SHARED, which gets no huge
pages, and afl's SysV map gets none unless shmem_enabled allows them).

Variants (VARIANTS; --variants picks some): AFL++ 5.02c's PCGUARD and NGRAM-8 (2^16; 2^22 from
benchmarks/aflpp_bigmap.sh 22), ours (autotune cc, blocks kind: ngram-8 on a two-level map with an
index of 2^22 (the bug study's), 2^20, 2^18, and flat 2^16; guard kind: the guard metric).
--binary NAME=PATH uses a binary built elsewhere for a variant (e.g. the bug study's cached build);
the others are built through autotune's build cache from benchmarks/bugs/libxml2. --cell FILE takes
the variants of a speed cell instead (sensitive_metrics.py's result: any target, any metric, its
inline, indexed and two-level builds and AFL++'s), each with the binary and run environment the cell
ran; --variants names which.

Run inside the sid root (AFL++ 5.02c, clang 21, valgrind), one process at a time:
  BUGLIB_SRC=$(.venv/bin/python benchmarks/bugs/buglibs.py source libxml2) \\
  bash .ci/aflpp-current.sh run .venv-current/bin/python benchmarks/ngram_cost.py --inputs DIR --out OUT
Writes OUT/ngram_cost.json (after every variant) and OUT/ngram_cost.md; nothing else but
autotune's build cache. A speed cell's variants, e.g. sqlite3's ctx-2 indexed and flat maps under the TLB model:
  bash .ci/aflpp-current.sh run .venv-current/bin/python benchmarks/ngram_cost.py --inputs QUEUE \
      --cell CELL/sensitive_metrics.json --variants ours-ctx-2-ix16,ours-ctx-2-in16 --models tlb,host --out OUT
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _p in (ROOT, ROOT / "benchmarks", ROOT / "benchmarks" / "bugs"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from aflfs_bench import AFL_ENV, clean_env  # noqa: E402

SCHEMA_VERSION = 1
EVENTS = ("Ir", "D1mr", "D1mw", "DLmr", "DLmw")
HOOK = "__sanitizer_cov_trace_pc_guard"
# our runtime's per-hit code: the hook, the fast hooks, the batched hook and its loops, the general
# path, slot assignment, the
# per-execution calls (names as in kernels/cov_sink.c, cov_thread.c, bigmap.c)
RUNTIME_FNS = re.compile(r"^(__sanitizer_cov_\w+|fast_\w+|batch_\w+|hook_general|map_hit_\w+|both_hit|commit\w*|"
                         r"cov_thread_slow|cov_self|cov_exec_begin|cov_exec_end|cnt_\w+|bm_twolevel_assign|"
                         r"bm_exact_lookup_slow|cov_gen_bump)$")
TOGGLE_OURS = ("LLVMFuzzerTestOneInput", "cov_exec_begin", "cov_exec_end")
TOGGLE_AFL = ("LLVMFuzzerTestOneInput",)
# callgrind cache models: its default (the host's D1 and LL from cpuid); an LL of a typical L2;
# 4-KiB pages as cache lines, a TLB model: "D1" a 64-entry fully associative L1 DTLB, "LL" a
# 2048-entry 16-way L2 TLB (AMD Zen 3), for memory mapped in 4-KiB pages (afl's SysV map, our
# index file under afl-fuzz; the replay's anonymous index may get huge pages instead)
MODELS = {"host": [], "l2": ["--LL=1048576,16,64"], "tlb": ["--D1=262144,64,4096", "--LL=8388608,16,4096"]}
MODEL_TEXT = {"host": "callgrind's default: the host's D1 and LL (cpuid)",
              "l2": "--LL=1048576,16,64 (a 1 MiB L2 as the last level)",
              "tlb": "4-KiB pages as lines: D1 = 64-entry L1 DTLB, LL = 2048-entry 16-way L2 TLB "
                     "(--D1=262144,64,4096 --LL=8388608,16,4096): D1 misses = L1 DTLB misses, LL misses = page walks"}
COVERAGE = re.compile(r"A coverage of (\d+) edges were achieved out of (\d+) existing")

OURS_TL = {"AUTOTUNE_METRIC": "ngram-8", "AUTOTUNE_LAYOUT": "twolevel", "AUTOTUNE_MAP_SIZE": "262144",
           "AUTOTUNE_KEY_HASH": "exact", "AUTOTUNE_COUNTER_BITS": "8", "AUTOTUNE_OVERFLOW": "neverzero"}
# name: (side, build: ("afl", AFL_* vars, map pow2) | ("ours", build kind), run environment)
VARIANTS: dict[str, tuple[str, tuple, dict[str, str]]] = {
    "aflpp-pcguard": ("afl", ("afl", {}, 16), {}),
    "aflpp-ngram8-map16": ("afl", ("afl", {"AFL_LLVM_INSTRUMENT": "NGRAM-8"}, 16), {}),
    "aflpp-ngram8-map22": ("afl", ("afl", {"AFL_LLVM_INSTRUMENT": "NGRAM-8"}, 22), {"AFL_MAP_SIZE": str(1 << 22)}),
    "ours-ngram8-tl22": ("ours", ("ours", "blocks"), {**OURS_TL, "AUTOTUNE_INDEX_SIZE": str(1 << 22)}),
    "ours-ngram8-tl20": ("ours", ("ours", "blocks"), {**OURS_TL, "AUTOTUNE_INDEX_SIZE": str(1 << 20)}),
    "ours-ngram8-tl18": ("ours", ("ours", "blocks"), {**OURS_TL, "AUTOTUNE_INDEX_SIZE": str(1 << 18)}),
    "ours-ngram8-flat16": ("ours", ("ours", "blocks"), {"AUTOTUNE_METRIC": "ngram-8", "AUTOTUNE_LAYOUT": "flat",
                                                        "AUTOTUNE_MAP_SIZE": "65536", "AUTOTUNE_KEY_HASH": "exact",
                                                        "AUTOTUNE_COUNTER_BITS": "8",
                                                        "AUTOTUNE_OVERFLOW": "neverzero"}),
    "ours-guard": ("ours", ("ours", "guard"), {"AUTOTUNE_METRIC": "guard", "AUTOTUNE_COUNTER_BITS": "8",
                                               "AUTOTUNE_OVERFLOW": "neverzero"}),
}


# ---- callgrind output ---------------------------------------------------------------------------

def parse_callgrind(path: Path) -> dict:
    """Totals, per-function self cost and calls received, of a callgrind output file (name
    compression, and the call-cost lines after `calls=`, handled; positions ignored)."""
    events: list[str] = []
    names: dict[str, str] = {}
    self_cost: dict[str, list[int]] = defaultdict(lambda: [0] * len(events))
    calls: dict[str, int] = defaultdict(int)
    totals: list[int] = []
    fn = cfn = None
    after_calls = False

    def name_of(spec: str) -> str:
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", spec.strip())
        if not m:
            return spec.strip()
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), m.group(1))

    for line in path.read_text(errors="replace").splitlines():
        if not line:
            continue
        c = line[0]
        if c.isdigit() or c in "+-*":
            vals = [int(x) for x in line.split()[1:]]
            if after_calls:
                after_calls = False
                continue
            if fn is not None:
                acc = self_cost[fn]
                for i, v in enumerate(vals[:len(events)]):
                    acc[i] += v
            continue
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith(("summary:", "totals:")):
            totals = [int(x) for x in line.split()[1:]]
        elif line.startswith("fn="):
            fn = name_of(line[3:])
        elif line.startswith(("cfn=", "cfi=", "cfl=")):
            if line.startswith("cfn="):
                cfn = name_of(line[4:])
        elif line.startswith("calls="):
            calls[cfn] += int(line[6:].split()[0])
            after_calls = True
    ev = {e: (totals[i] if i < len(totals) else 0) for i, e in enumerate(events)}
    return {"events": events, "totals": ev,
            "self": {f: dict(zip(events, v)) for f, v in self_cost.items()}, "calls": dict(calls)}


def callgrind_run(cmd: list[str], env: dict[str, str], out_file: Path, toggles: tuple[str, ...],
                  cache_args: list[str]) -> dict:
    args = ["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--callgrind-out-file={out_file}",
            "--collect-atstart=no", *[f"--toggle-collect={t}" for t in toggles], *cache_args]
    p = subprocess.run([*args, *cmd], env=env, capture_output=True, text=True, timeout=7200,
                       stdin=subprocess.DEVNULL, check=False)
    if p.returncode != 0:
        raise SystemExit(f"valgrind failed ({' '.join(args)}):\n{p.stderr[-3000:]}")
    res = parse_callgrind(out_file)
    res["stdout_tail"] = p.stdout.strip().splitlines()[-1:] if p.stdout.strip() else []
    return res


def steady(a: dict, b: dict, n: int) -> dict:
    """Per-execution figures of one extra pass over n inputs: (b - a) / n."""
    def d(x: dict, y: dict, k: str) -> float:
        return (y.get(k, 0) - x.get(k, 0)) / n

    tot = {e: d(a["totals"], b["totals"], e) for e in EVENTS}
    rt = {e: 0.0 for e in EVENTS}
    per_fn = {}
    for f in set(a["self"]) | set(b["self"]):
        if not RUNTIME_FNS.match(f.split(":")[-1]):
            continue
        v = {e: d(a["self"].get(f, {}), b["self"].get(f, {}), e) for e in EVENTS}
        if any(v.values()):
            per_fn[f] = v
            for e in EVENTS:
                rt[e] += v[e]
    execs = (a["calls"].get("LLVMFuzzerTestOneInput", 0), b["calls"].get("LLVMFuzzerTestOneInput", 0))
    return {"target": tot, "runtime": rt, "runtime_functions": per_fn,
            "hook_calls": (b["calls"].get(HOOK, 0) - a["calls"].get(HOOK, 0)) / n,
            "executions": list(execs), "executions_per_pass": execs[1] - execs[0]}


# ---- builds and the map afl-fuzz sees -----------------------------------------------------------

BUILT_TARGET = "libxml2 2.9.10 (benchmarks/bugs/libxml2)"  # what build_variant builds


def build_variant(name: str) -> Path:
    import sensitive_metrics as sm
    from autotune.target import build

    spec, env, _ = sm.target("libxml2")
    kind = VARIANTS[name][1]
    if kind[0] == "afl":
        return build(spec=spec, cc_kind="afl", build_vars=kind[1], env=sm.aflpp_path(kind[2], env))
    return build(spec=spec, cc_kind="autotune", build_vars={"AUTOTUNE_CC_INSTRUMENT": kind[1]}, env=env)


def afl_map_size(binary: Path, env_extra: dict[str, str], inputs: Path, work: Path) -> dict:
    """The map afl-fuzz would use (afl-showmap -C's "out of N existing") and the entries the inputs
    cover."""
    extra = dict(env_extra)
    if "AUTOTUNE_LAYOUT" in extra and extra["AUTOTUNE_LAYOUT"] != "flat":
        idx = work / "showmap-index.bin"
        idx.unlink(missing_ok=True)
        extra["AUTOTUNE_INDEX_FILE"] = str(idx)
    p = subprocess.run(["afl-showmap", "-C", "-i", str(inputs), "-o", str(work / "showmap.out"), "-t", "5000", "--",
                        str(binary)], env=clean_env(**extra), capture_output=True, text=True, timeout=1800,
                       stdin=subprocess.DEVNULL, check=False)
    m = COVERAGE.search(p.stdout + p.stderr)
    if not m:
        return {"error": (p.stdout + p.stderr)[-1000:]}
    return {"map_bytes": int(m.group(2)), "covered": int(m.group(1))}


# ---- one variant --------------------------------------------------------------------------------

def cell_variants(path: Path, target: str | None = None, metric: str | None = None) -> tuple[str, dict]:
    """(what the binaries are, {name: (side, binary, run environment)}) of a speed cell's variants as
    sensitive_metrics.py ran them (its sensitive_metrics.json; a file of several cells needs target and
    metric): AFL++'s builds are side "afl", ours (inline, indexed, two-level) "ours"."""
    try:
        doc = json.loads(path.read_text())
        cells = doc["results"]
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"--cell {path}: not a sensitive_metrics.py result ({e})") from None
    picked = [c for c in cells if (target is None or c["target"] == target) and (metric is None or c["metric"] == metric)]
    if len(picked) != 1:
        have = ", ".join(f"{c['target']}/{c['metric']}" for c in cells) or "none"
        raise SystemExit(f"--cell {path}: name one of its cells with --cell-target and --cell-metric (it has: {have})")
    cell = picked[0]
    out = {v["name"]: ("afl" if v["side"] == "aflpp" else "ours", v["binary"], dict(v["run_env"]))
           for v in cell["variants"]}
    what = (f"{cell['target']} (sensitive_metrics.py's cell {cell['metric']}, commit {doc.get('commit', '?')}: "
            f"its builds)")
    return what, out


def measure(name: str, binary: Path, inputs: list[Path], input_dir: Path, work: Path,
            models: dict[str, list[str]], extra_env: dict[str, str],
            variant: tuple[str, dict[str, str]] | None = None) -> dict:
    """One variant's figures; ``variant`` (side, run environment) for one not in VARIANTS (--cell)."""
    side, env_extra = variant or (VARIANTS[name][0], VARIANTS[name][2])
    work.mkdir(parents=True, exist_ok=True)
    copy = work / f"{name}.bin"
    shutil.copyfile(binary, copy)
    copy.chmod(0o755)
    subprocess.run(["strip", "--strip-debug", str(copy)], check=True)
    # no fuzzer here: none of afl-fuzz's settings, and a private index (no file)
    env = {k: v for k, v in clean_env(**{**env_extra, **extra_env}).items()  # --env overrides the variant's
           if k not in AFL_ENV and k != "AUTOTUNE_INDEX_FILE"}
    files = [str(p) for p in inputs]
    res: dict = {"variant": name, "binary": str(binary), "side": side, "env": {**env_extra, **extra_env},
                 "afl_fuzz_map": afl_map_size(binary, {**env_extra, **extra_env}, input_dir, work)}
    for model, cache_args in models.items():
        runs = []
        for passes in (2, 3):
            if side == "ours":
                cmd, e = [str(copy), *files], {**env, "AUTOTUNE_REPLAY_ROUNDS": str(passes - 1)}
            else:
                cmd, e = [str(copy), *(files * passes)], env
            out = work / f"callgrind.{name}.{model}.{passes}.out"
            runs.append(callgrind_run(cmd, e, out, TOGGLE_OURS if side == "ours" else TOGGLE_AFL, cache_args))
        res[model] = steady(runs[0], runs[1], len(files))
        if side == "ours":
            res[model]["replay"] = runs[1]["stdout_tail"]
        print(f"{name:22s} {model:4s} Ir/exec {res[model]['target']['Ir']:12,.0f}  runtime "
              f"{res[model]['runtime']['Ir']:11,.0f}  hooks {res[model]['hook_calls']:9,.0f}  "
              f"D1m {res[model]['target']['D1mr'] + res[model]['target']['D1mw']:9,.1f}  "
              f"LLm {res[model]['target']['DLmr'] + res[model]['target']['DLmw']:9,.1f}", file=sys.stderr)
    return res


def reparse(doc: dict, out: Path, n_inputs: int) -> None:
    """Recompute every variant's figures from its kept callgrind files (after a change of
    RUNTIME_FNS, say)."""
    for key, v in doc["variants"].items():
        name = v.get("variant") or max((n for n in VARIANTS if key.startswith(n)), key=len)
        for model in doc["cache_models"]:
            files = [out / key / f"callgrind.{name}.{model}.{p}.out" for p in (2, 3)]
            if model in v and all(f.is_file() for f in files):
                replay = v[model].get("replay")
                v[model] = steady(parse_callgrind(files[0]), parse_callgrind(files[1]), n_inputs)
                if replay:
                    v[model]["replay"] = replay


def markdown(doc: dict) -> str:
    lines = [f"# Cost per execution: {doc['target']} ({doc['inputs']} inputs)", "",
             f"{doc['toolchain']}; host: {doc['host_cpu']} ({doc['host_caches']}). Steady state (one warm pass: "
             "the difference of 3 and 2 passes over the inputs). Target = LLVMFuzzerTestOneInput inclusive "
             "(+ cov_exec_begin/end for ours); runtime = our hook functions alone (included in target).", ""]
    for model in doc["cache_models"]:
        lines += [f"## cache model: {model} ({doc['cache_models'][model]})", "",
                  "| variant | Ir | D1 rd miss | D1 wr miss | LL rd miss | LL wr miss | runtime Ir | runtime D1 miss "
                  "| runtime LL miss | hook calls | afl-fuzz map bytes/exec |", "|---|" + "---:|" * 10]
        for name, v in doc["variants"].items():
            if model not in v:
                continue
            t, r = v[model]["target"], v[model]["runtime"]
            mb = v["afl_fuzz_map"].get("map_bytes", "?")
            lines.append(f"| {name} | {t['Ir']:,.0f} | {t['D1mr']:,.1f} | {t['D1mw']:,.1f} | {t['DLmr']:,.1f} | "
                         f"{t['DLmw']:,.1f} | {r['Ir']:,.0f} | {r['D1mr'] + r['D1mw']:,.1f} | "
                         f"{r['DLmr'] + r['DLmw']:,.1f} | {v[model]['hook_calls']:,.0f} | "
                         f"{mb:,} |" if isinstance(mb, int) else f"{mb} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--inputs", type=Path, required=True, help="a folder of input files (all are used)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--binary", action="append", default=[], help="NAME=PATH: this binary for variant NAME")
    ap.add_argument("--models", default="host,l2", help=f"cache models, of {', '.join(MODELS)}")
    ap.add_argument("--env", action="append", default=[],
                    help="VAR=VALUE for every variant, over its own (e.g. a runtime switch, AUTOTUNE_INDEX_SIZE)")
    ap.add_argument("--name-suffix", default="", help="appended to the variants' names in the documents")
    ap.add_argument("--label", action="append", default=[], help="NAME=TEXT: a note on a variant")
    ap.add_argument("--reparse", action="store_true", help="only recompute the figures from the kept callgrind files")
    ap.add_argument("--target", default=None,
                    help=f"what the binaries are, for the documents (default: {BUILT_TARGET}, the target this "
                         "script builds; required when every variant's binary is given by --binary)")
    ap.add_argument("--cell", type=Path, default=None,
                    help="a speed cell's sensitive_metrics.json: --variants name its variants, run with its "
                         "binaries and run environments (e.g. ours-ctx-2-ix16,ours-ctx-2-in16)")
    ap.add_argument("--cell-target", default=None, help="with --cell: the cell's target, if the file has several")
    ap.add_argument("--cell-metric", default=None, help="with --cell: the cell's metric, if the file has several")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    names = [v.strip() for v in a.variants.split(",") if v.strip()]
    known, cell = VARIANTS, {}
    if a.cell:
        a.target, cell = cell_variants(a.cell, a.cell_target, a.cell_metric)
        known = cell
        if names == list(VARIANTS):
            raise SystemExit(f"--cell: name the variants to count with --variants (the cell has: {', '.join(cell)})")
    unknown = set(names) - set(known)
    if unknown:
        raise SystemExit(f"--variants: unknown {', '.join(sorted(unknown))} (known: {', '.join(known)})")
    missing = [f"{n} ({cell[n][1]})" for n in names if n in cell and not Path(cell[n][1]).is_file()]
    if missing:
        raise SystemExit(f"--cell: binaries not on this machine: {', '.join(missing)}; run the cell's "
                         "sensitive_metrics.py command (its builds are cached by autotune's build cache)")
    given = {**{n: cell[n][1] for n in names if n in cell}, **dict(b.split("=", 1) for b in a.binary)}
    if a.target is None and names and all(n in given for n in names):
        raise SystemExit("--target: name the target the --binary files were built from (this script builds "
                         f"{BUILT_TARGET} only for variants without a --binary)")
    target = a.target or BUILT_TARGET
    models = {m: MODELS[m] for m in a.models.split(",")}
    extra_env = dict(x.split("=", 1) for x in a.env)
    path = a.out / "ngram_cost.json"
    if a.reparse:
        doc = json.loads(path.read_text())
        reparse(doc, a.out, len(sorted(p for p in a.inputs.iterdir() if p.is_file())))
        path.write_text(json.dumps(doc, indent=2, default=str))
        (a.out / "ngram_cost.md").write_text(markdown(doc) + "\n")
        print(markdown(doc))
        return 0
    labels = dict(x.split("=", 1) for x in a.label)
    inputs = sorted(p for p in a.inputs.iterdir() if p.is_file())
    a.out.mkdir(parents=True, exist_ok=True)
    doc = json.loads(path.read_text()) if path.is_file() else {"variants": {}}
    from autotune.measure.host import current_host

    host = current_host() or {}
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), "?")
    caches = subprocess.run(["getconf", "-a"], capture_output=True, text=True, check=False).stdout
    cache_lines = {ln.split()[0]: ln.split()[1] for ln in caches.splitlines()
                   if "CACHE_SIZE" in ln and len(ln.split()) == 2}
    cc = subprocess.run(["clang", "--version"], capture_output=True, text=True, check=False).stdout.split("\n")[0]
    afl = subprocess.run(["afl-fuzz", "-h"], capture_output=True, text=True, check=False)
    aflv = re.search(r"afl-fuzz\+*\s*([0-9][0-9A-Za-z.]*)", afl.stdout + afl.stderr)
    doc.update(schema_version=SCHEMA_VERSION, kind="ngram-cost", target=target,
               inputs=len(inputs), toolchain=f"AFL++ {aflv.group(1) if aflv else '?'}, {cc}",
               host=host, host_cpu=cpu, host_caches=cache_lines,
               cache_models={**doc.get("cache_models", {}), **{m: MODEL_TEXT[m] for m in models}})
    for name in names:
        binary = Path(given[name]) if name in given else build_variant(name)
        key = name + a.name_suffix
        doc["variants"].setdefault(key, {}).update(measure(name, binary, inputs, a.inputs, a.out / key, models,
                                                           extra_env, (cell[name][0], cell[name][2]) if name in cell
                                                           else None))
        if name in labels:
            doc["variants"][key]["note"] = labels[name]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=2, default=str))
        os.replace(tmp, path)
    (a.out / "ngram_cost.md").write_text(markdown(doc) + "\n")
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
