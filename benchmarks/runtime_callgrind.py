#!/usr/bin/env python3
"""Instructions per execution of our runtime's hooked build kinds, one revision against another.

For a change to the C runtime (kernels/) that must not change its hot path, e.g. a refactor: each
target's harness is built by `autotune cc` from the runtime of ``--before REV`` (the revision's
whole tree, exported with ``git archive``: its autotune package, its kernels, its recipes) and
from this working tree, per build kind, and every variant runs the same fixed inputs under
callgrind in the driver's replay mode (AUTOTUNE_REPLAY_ROUNDS=1: a warm-up pass and one timed
pass, the map sink configured from the variant's AUTOTUNE_* variables). The figure is exact:
LLVMFuzzerTestOneInput inclusive plus the runtime's per-execution work around it
(cov_exec_begin, cov_exec_end) over the calls of LLVMFuzzerTestOneInput, the routine of
benchmarks/aflfs_bench.py --build-kinds.

Inputs: --inputs DIR holds one folder of files per target (DIR/demo, DIR/lz4, DIR/libyaml); up to
--max-inputs of each, evenly spaced in name order. --make-inputs fills a missing folder from a
5-second afl-fuzz campaign (-s 1) of the target's blocks build of this tree, from its seeds; or
copy an existing afl-fuzz queue there. Make them once and reuse them for every comparison.

Variants (VARIANTS): the build kinds whose per-block work is the runtime's (blocks, full, guard)
with the map sink of edge, ngram-8 (both key hashes), guard and ctx/caller (the call-context path)
and the general hook path, and the inline kinds (guard, edge, ngram), whose per-execution work
(exec begin/end, the counter copy) is the runtime's.

    .venv/bin/python benchmarks/runtime_callgrind.py --before main --inputs /tmp/rt-inputs \\
        --targets demo,lz4,libyaml --out /tmp/rt-callgrind

Writes <out>/runtime_callgrind.json and .md (atomically, after each target) and prints the table.
Nothing is written outside --out and autotune's cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import aflfs_bench  # benchmarks/ (beside this script): its callgrind routines and clean environment

ROOT = Path(__file__).resolve().parent.parent
FLAT_64K = {"AUTOTUNE_LAYOUT": "flat", "AUTOTUNE_MAP_SIZE": "65536"}
# (variant, build kind, compile-time variables, runtime variables)
VARIANTS: list[tuple[str, str, dict[str, str], dict[str, str]]] = [
    ("blocks/edge", "blocks", {}, {"AUTOTUNE_METRIC": "edge", **FLAT_64K}),
    ("blocks/edge-twolevel", "blocks", {}, {"AUTOTUNE_METRIC": "edge"}),
    ("blocks/ngram-8", "blocks", {}, {"AUTOTUNE_METRIC": "ngram-8", **FLAT_64K}),
    ("blocks/ngram-8-aflhash", "blocks", {}, {"AUTOTUNE_METRIC": "ngram-8", "AUTOTUNE_KEY_HASH": "afl", **FLAT_64K}),
    ("blocks/guard", "blocks", {}, {"AUTOTUNE_METRIC": "guard"}),
    ("blocks/edge-general", "blocks", {}, {"AUTOTUNE_METRIC": "edge", "AUTOTUNE_HOOKS": "general", **FLAT_64K}),
    ("full/edge", "full", {}, {"AUTOTUNE_METRIC": "edge", **FLAT_64K}),
    ("full/ctx", "full", {}, {"AUTOTUNE_METRIC": "ctx", **FLAT_64K}),
    ("full/caller-twolevel", "full", {}, {"AUTOTUNE_METRIC": "caller"}),
    ("full/ctx-aflhash", "full", {}, {"AUTOTUNE_METRIC": "ctx", "AUTOTUNE_KEY_HASH": "afl", **FLAT_64K}),
    ("guard/guard", "guard", {}, {"AUTOTUNE_METRIC": "guard"}),
    ("edge/edge", "edge", {}, {"AUTOTUNE_METRIC": "edge", **FLAT_64K}),
    ("ngram/ngram-8", "ngram", {"AUTOTUNE_CC_NGRAM": "8"}, {"AUTOTUNE_METRIC": "ngram-8", **FLAT_64K}),
]
TARGETS = ("demo", "lz4", "libyaml")

# Run in a child interpreter whose `autotune` is the tree's (PYTHONPATH): the harness of each build
# kind, built by that tree's wrapper and runtime. Prints {"autotune": <package dir>, "<kind>": path}.
_BUILD_CHILD = r"""
import importlib.util, json, sys
tree, target, kinds = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
import autotune
spec = importlib.util.spec_from_file_location("aflfs_bench", f"{tree}/benchmarks/aflfs_bench.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
out = {"autotune": autotune.__file__}
for key, (kind, cc_vars) in kinds.items():
    out[key] = str(bench.kind_binary(target, "ours", kind, cc_vars))
print(json.dumps(out))
"""


def export_tree(rev: str, dest: Path) -> str:
    """The tree of ``rev`` unpacked into ``dest``; returns its full commit id."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                            capture_output=True, text=True, check=True).stdout.strip()
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(["git", "-C", str(ROOT), "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(dest)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit(f"git archive {commit} failed")
    return commit


def build_kinds(tree: Path, target: str) -> dict[str, Path]:
    """Each build kind's harness of ``target``, built by ``tree``'s autotune (a child process)."""
    kinds = {f"{kind} {json.dumps(cc, sort_keys=True)}": (kind, cc) for _, kind, cc, _ in VARIANTS}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AFL_", "AUTOTUNE_", "__AFL"))}
    if "AUTOTUNE_CACHE_DIR" in os.environ:
        env["AUTOTUNE_CACHE_DIR"] = os.environ["AUTOTUNE_CACHE_DIR"]
    env["PYTHONPATH"] = str(tree)
    p = subprocess.run([sys.executable, "-c", _BUILD_CHILD, str(tree), target, json.dumps(kinds)], env=env,
                       cwd=tree, capture_output=True, text=True, timeout=7200, check=False)
    if p.returncode != 0:
        raise SystemExit(f"building {target} from {tree} failed:\n{p.stderr[-3000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    if not Path(out.pop("autotune")).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"the build of {tree} did not use its own autotune package")
    return {key: Path(v) for key, v in out.items()}


def make_inputs(target: str, folder: Path) -> None:
    """A 5-second afl-fuzz campaign (-s 1) of this tree's blocks build from the target's seeds."""
    seeds = {"demo": aflfs_bench.demo_target, "lz4": aflfs_bench.lz4_target,
             "libyaml": aflfs_bench.libyaml_target}[target]()
    if seeds is None:
        raise SystemExit(f"target {target} is unavailable here")
    binary = build_kinds(ROOT, target)[f"blocks {json.dumps({})}"]
    with tempfile.TemporaryDirectory(prefix="rt-inputs-") as tmp:
        seed_dir = Path(tmp) / "in"
        seed_dir.mkdir()
        for s in seeds["seeds"]:
            shutil.copy(s, seed_dir / s.name)
        env = aflfs_bench.clean_env(AUTOTUNE_METRIC="edge")
        subprocess.run(["afl-fuzz", "-V", "5", "-s", "1", "-i", str(seed_dir), "-o", str(Path(tmp) / "out"), "--",
                        str(binary)], env=env, capture_output=True, timeout=300, check=False)
        queue = Path(tmp) / "out" / "default" / "queue"
        files = sorted(p for p in queue.iterdir() if p.is_file()) if queue.is_dir() else []
        if not files:
            raise SystemExit(f"the afl-fuzz campaign on {target} left no queue")
        folder.mkdir(parents=True)
        for i, f in enumerate(files):
            shutil.copyfile(f, folder / f"q{i:06d}")


def measure(binary: Path, env_extra: dict[str, str], inputs: list[Path], work: Path, name: str) -> dict:
    env = {k: v for k, v in aflfs_bench.clean_env(**env_extra).items() if k not in aflfs_bench.AFL_ENV}
    counted = aflfs_bench.callgrind_binary(binary, env, inputs, work, name)
    counted["executions"] = counted.pop("calls")  # this document's name for them (schema 1)
    return counted


def markdown(doc: dict) -> str:
    lines = [f"instructions per execution (callgrind, exact: LLVMFuzzerTestOneInput + cov_exec_begin/end, "
             f"replay mode), before = {doc['before'][:10]}, after = {doc['after_label']}", "",
             "| target | inputs | variant | before | after | after / before |", "|---|---|---|---|---|---|"]
    for r in doc["results"]:
        for name, v in r["variants"].items():
            b, a = v["before"]["per_exec"], v["after"]["per_exec"]
            lines.append(f"| {r['target']} | {r['inputs']} | {name} | {b:,.1f} | {a:,.1f} | {a / b:.5f} |")
    return "\n".join(lines)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="the revision to compare against (e.g. main)")
    ap.add_argument("--inputs", type=Path, required=True, help="one folder of inputs per target")
    ap.add_argument("--make-inputs", action="store_true", help="fill a missing input folder from a 5 s campaign")
    ap.add_argument("--max-inputs", type=int, default=300)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--variants", help="only these variants (comma-separated names of VARIANTS)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "runtime-callgrind")
    a = ap.parse_args(argv)
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind not found: apt-get install -y valgrind")
    variants = VARIANTS
    if a.variants:
        want = {v.strip() for v in a.variants.split(",")}
        unknown = want - {n for n, *_ in VARIANTS}
        if unknown:
            raise SystemExit(f"--variants: unknown {', '.join(sorted(unknown))}")
        variants = [v for v in VARIANTS if v[0] in want]
    a.out.mkdir(parents=True, exist_ok=True)
    before_tree = a.out / "before-tree"
    shutil.rmtree(before_tree, ignore_errors=True)
    before = export_tree(a.before, before_tree)
    status = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "kernels", "autotune"],
                            capture_output=True, text=True, check=False).stdout.strip()
    after = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                           check=False).stdout.strip()
    doc = {"schema_version": 1, "kind": "runtime-callgrind", "before": before, "after": after,
           "after_label": after[:10] + (" + uncommitted changes" if status else ""),
           "max_inputs": a.max_inputs, "variants": {n: {"build_kind": k, "build_vars": cc, "env": e}
                                                    for n, k, cc, e in variants}, "results": []}
    for target in a.targets.split(","):
        folder = a.inputs / target
        if not folder.is_dir():
            if not a.make_inputs:
                raise SystemExit(f"no inputs for {target} in {folder}: copy an afl-fuzz queue there or pass "
                                 "--make-inputs")
            make_inputs(target, folder)
        inputs = aflfs_bench.evenly_spaced(sorted(p for p in folder.iterdir() if p.is_file()), a.max_inputs)
        digest = hashlib.sha256(b"".join(p.name.encode() + b"\0" + p.read_bytes() for p in inputs)).hexdigest()
        bins = {"before": build_kinds(before_tree, target), "after": build_kinds(ROOT, target)}
        res = {"target": target, "inputs": len(inputs), "inputs_sha256": digest, "variants": {}}
        for name, kind, cc, env in variants:
            key = f"{kind} {json.dumps(cc, sort_keys=True)}"
            row = {}
            for side in ("before", "after"):
                work = a.out / target / side
                work.mkdir(parents=True, exist_ok=True)
                row[side] = measure(bins[side][key], env, inputs, work, name.replace("/", "_"))
                row[side]["binary"] = str(bins[side][key])
            res["variants"][name] = row
            print(f"{target:8s} {name:24s} before {row['before']['per_exec']:12,.1f}  after "
                  f"{row['after']['per_exec']:12,.1f}", file=sys.stderr)
        doc["results"].append(res)
        write_atomic(a.out / "runtime_callgrind.json", json.dumps(doc, indent=2))
        write_atomic(a.out / "runtime_callgrind.md", markdown(doc) + "\n")
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
