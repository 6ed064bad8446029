#!/usr/bin/env python3
"""Every build kind of `autotune cc` under each afl-fuzz given (issue 26): Debian's AFL++ 4.04c, and
a newer one built by hand (AFL++'s repository snapshot: `git archive` into a directory, `make
afl-fuzz afl-showmap`; CI cannot fetch it, so this is not a test).

For each afl-fuzz and each build kind (the race's run-time variables for its metric:
race/contestants.py), the fault suite's harness without a fault (tests/programs_afl/faults.c) and
the segv harness are fuzzed for --seconds; recorded: afl-fuzz's exit code, the handshake it
reports ("new fork server model v1" or "old fork server"), every warning line it printed,
stability, executions, crashes (the segv harness must have one; replayed by benchmarks/fault_suite.py's
judge).

  .venv/bin/python benchmarks/afl_versions.py --afl-fuzz /usr/bin/afl-fuzz,/tmp/afl422/afl-fuzz --out /tmp/aflv

Writes <out>/afl_versions.json and afl_versions.md; nothing outside --out and autotune's cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import fault_suite as fs  # noqa: E402
from autotune import afl  # noqa: E402
from autotune.io import write_json_atomic, write_text_atomic  # noqa: E402
from autotune.measure.host import current_host  # noqa: E402
from autotune.race.contestants import edge_kind_settings, runtime_settings  # noqa: E402

# build kind -> (compile-time variables, run-time variables)
KINDS = {
    "guard": ({}, {"AUTOTUNE_METRIC": "guard"}),
    "edge": ({}, edge_kind_settings(estimated_keys=200, max_collision_rate=0.02, metric="edge")),
    "ngram": ({"AUTOTUNE_CC_NGRAM": "4"}, edge_kind_settings(estimated_keys=2000, max_collision_rate=0.02, metric="ngram-4")),
    "blocks": ({}, runtime_settings(metric="edge", estimated_keys=200, max_collision_rate=0.02, index_file="{work}/index.bin")),
    "full": ({}, runtime_settings(metric="ctx", estimated_keys=400, max_collision_rate=0.02, index_file="{work}/index.bin")),
    "aflpp": ({}, {}),  # AFL++ 4.04c's afl-clang-fast build, for contrast
}


# afl-fuzz's warnings about the seeds, the host and the time box: the same for every build
NOISE = ("Time limit was reached", "No new instrumentation output", "Not binding to a CPU core",
         "Some test cases look useless", "System under apparent load")


def build(kind: str, fault: fs.Fault, out: Path) -> Path:
    from autotune.target import build_harness
    if kind == "aflpp":
        return fs.build_aflpp(fault, out)
    cc_vars, _ = KINDS[kind]
    return build_harness(sources=[fs.FAULTS_C], output=out / f"{fault.name}-{kind}", kind=kind, cc_vars=cc_vars,
                         extra_cflags=[*fs.COMMON_CFLAGS, f"-DFAULT={fault.macro}"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--afl-fuzz", required=True, help="comma-separated afl-fuzz executables")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("AUTOTUNE_CACHE_DIR", str(a.out / "cache"))
    faults = [fs.Fault("none", "FAULT_NONE", "none"), fs.BY_NAME["segv"]]
    rows = []
    for tool in a.afl_fuzz.split(","):
        version = str(afl.aflpp_version(tool))
        for kind in KINDS:
            for fault in faults:
                binary = build(kind, fault, a.out / "bins")
                work = a.out / "work" / f"{version}-{kind}-{fault.name}"
                if work.exists():
                    shutil.rmtree(work)
                work.mkdir(parents=True)
                env = {k: v.format(work=work) for k, v in KINDS[kind][1].items()}
                c = fs.run_afl(binary, work, seconds=a.seconds, build=kind, afl_fuzz=tool, env=env)
                res = fs.judge(fault, {kind: binary}, {kind: c})
                rows.append({"afl_fuzz": tool, "version": version, "kind": kind, "fault": fault.name,
                             "env": env, **c.summary(), "handshake": c.handshake,
                             "warnings": [w for w in c.warnings if not any(n in w for n in NOISE)],
                             "problems": res.problems})
                print(f"{version} {kind} {fault.name}: exit {c.returncode}, {c.handshake}, {c.execs:,} execs, "
                      f"stability {c.stability}, crashes {len(c.crashes)}, warnings {rows[-1]['warnings']}, "
                      f"problems {res.problems}", flush=True)
    doc = {"rows": rows, "seconds": a.seconds, "host_profile": current_host()}
    write_json_atomic(a.out / "afl_versions.json", doc)
    md = ["# Every build kind under each afl-fuzz", "",
          f"{a.seconds} s each, -t {fs.TIMEOUT_MS} ms, tests/programs_afl/faults.c (none: no fault; segv: "
          "must save a crash that replays); kind aflpp = afl-clang-fast 4.04c's build, for contrast. Warnings: "
          f"afl-fuzz's lines with [!] or WARNING but those about the seeds, the host and the time box ({', '.join(NOISE)}).", "",
          "| AFL++ | kind | harness | exit | handshake | execs | stability | crashes | warnings | problems |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['version']} | {r['kind']} | {r['fault']} | {r['returncode']} | {r['handshake']} | "
                  f"{r['execs']:,} | {r['stability']} | {r['crashes']} | {'; '.join(r['warnings']) or 'none'} | "
                  f"{'; '.join(r['problems']) or 'none'} |")
    write_text_atomic(a.out / "afl_versions.md", "\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
