"""Instructions per execution of the binaries that campaigns ran, on the same inputs, under callgrind.

Where a campaign's execs/s follow the queue entry being fuzzed as much as the build, the build's
cost is what each binary executes on the same inputs. Each NAME=TRIAL names a binary as `autotune
compare` ran it: TRIAL is a trial.json (or its directory) and `@MEMBER` an ensemble trial's
instance (main, s1, ...), with the variables it ran under. Every binary runs the same inputs (up to
--max-inputs of --inputs, every k-th file in name order, e.g. an afl-fuzz queue), debug info
stripped, under valgrind's callgrind: AFL++'s builds through libAFLDriver given the files, once
each; ours through our driver's replay mode (AUTOTUNE_REPLAY_ROUNDS=1: a warm-up and a timed pass,
so twice each; an indexed build's index file in --work). Canaries run non-fatal (an input that
triggers one would end the run). The figure: LLVMFuzzerTestOneInput inclusive, plus our runtime's
cov_exec_begin and cov_exec_end, over the calls of LLVMFuzzerTestOneInput. Exact for a run; a
harness whose work varies between runs (OpenJPEG: 0.3 %) varies that much. afl-fuzz's own work per
execution (resetting, classifying and comparing the map) is outside it: the map bytes each binary
reports are printed beside it.

Run it where the binaries were built (for AFL++ 5.02c's, inside the root: valgrind needs their
libraries):

    bash .ci/aflpp-current.sh run .venv-current/bin/python benchmarks/trial_callgrind.py \\
        --inputs RUN/trials/ours/trial-3/afl-out/s1/queue --work /tmp/cg \\
        pcguard=RUN/trials/ours/trial-3@main ours=RUN/trials/ours/trial-3@s1 aflpp=OTHER/trial-4@s1

Writes --work/trial_callgrind.json (atomically) and prints a table, each ratio against the first.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import aflfs_bench  # benchmarks/ (beside this script): its callgrind routines and clean environment


def pick_inputs(folder: Path, n: int) -> list[Path]:
    """n files of folder (an afl-fuzz queue's id:* entries when it has them), evenly spaced in name order."""
    files = sorted(p for p in folder.glob("id:*") if p.is_file()) or sorted(p for p in folder.glob("*") if p.is_file())
    if not files:
        raise SystemExit(f"{folder}: no input files (give an afl-fuzz queue or a folder of inputs)")
    return aflfs_bench.evenly_spaced(files, n)


def trial_binary(ref: str) -> tuple[str, dict[str, str]]:
    """(binary, variables) of TRIAL[@MEMBER]: a trial.json or its directory, an ensemble's instance."""
    path, _, member = ref.partition("@")
    doc_path = Path(path) / "trial.json" if Path(path).is_dir() else Path(path)
    if not doc_path.is_file():
        raise SystemExit(f"{ref}: no trial.json there (a trial directory of autotune compare, or its trial.json)")
    spec = json.loads(doc_path.read_text())["spec"]
    if not member:
        return spec["binary"], dict(spec.get("env", {}))
    members = {m["name"]: m for m in spec.get("members") or []}
    if member not in members:
        raise SystemExit(f"{ref}: no instance {member!r} in that trial (it has: {', '.join(members) or 'none'})")
    return members[member]["binary"], dict(members[member].get("env", {}))


def measure(binary: str, env: dict[str, str], inputs: list[Path], work: Path, name: str) -> dict:
    """One binary's instructions per execution on ``inputs`` (see the module's doc)."""
    bench = aflfs_bench
    run_env = {k: v for k, v in bench.clean_env(**{k: v for k, v in env.items() if k.startswith("AUTOTUNE_")})
               .items() if k not in bench.AFL_ENV and k != "AUTOTUNE_CANARY_FATAL"}
    if "AUTOTUNE_INDEX_FILE" in run_env:
        index = work / f"{name}.index.bin"
        index.unlink(missing_ok=True)
        run_env["AUTOTUNE_INDEX_FILE"] = str(index)
    counted = bench.callgrind_binary(binary, run_env, inputs, work, name)
    slots = env.get("AUTOTUNE_MAP_SIZE")  # our map's slots; its bytes are slots x the counter's bytes
    map_bytes = int(slots) * int(env.get("AUTOTUNE_COUNTER_BITS", "8")) // 8 if slots else None
    return {"binary": binary, "env": env, **counted, "map_bytes": map_bytes}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binaries", nargs="+", metavar="NAME=TRIAL[@MEMBER]")
    ap.add_argument("--inputs", type=Path, required=True, help="a folder of inputs (e.g. an afl-fuzz queue)")
    ap.add_argument("--max-inputs", type=int, default=200)
    ap.add_argument("--work", type=Path, required=True, help="where the callgrind files and trial_callgrind.json go")
    a = ap.parse_args(argv)
    if a.max_inputs < 1:
        raise SystemExit("--max-inputs: 1 or more")
    named = []
    for spec in a.binaries:
        name, eq, ref = spec.partition("=")
        if not eq or not name or not ref:
            raise SystemExit(f"{spec!r}: give NAME=TRIAL[@MEMBER]")
        named.append((name, *trial_binary(ref)))
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind not found: apt-get install -y valgrind (where the binaries were built)")
    inputs = pick_inputs(a.inputs, a.max_inputs)
    a.work.mkdir(parents=True, exist_ok=True)
    doc = {"inputs": len(inputs), "inputs_from": str(a.inputs), "binaries": {}}
    for i, (name, binary, env) in enumerate(named):
        doc["binaries"][name] = measure(binary, env, inputs, a.work, f"b{i}")
    first = doc["binaries"][named[0][0]]["per_exec"]
    print(f"instructions per execution on {len(inputs)} inputs of {a.inputs} (callgrind)")
    print(f"| binary | per execution | vs {named[0][0]} | LLVMFuzzerTestOneInput calls | map bytes (ours) |")
    print("|---|---|---|---|---|")
    for name, r in doc["binaries"].items():
        print(f"| {name} | {r['per_exec']:,.0f} | {r['per_exec'] / first:.3f}x | {r['calls']} | {r['map_bytes'] or '-'} |")
    part = a.work / "trial_callgrind.json.tmp"
    part.write_text(json.dumps(doc, indent=2))
    os.replace(part, a.work / "trial_callgrind.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
