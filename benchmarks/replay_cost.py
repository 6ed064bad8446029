#!/usr/bin/env python3
"""CPU per execution of a finished `autotune compare`'s configurations on the same inputs (issue 13).

A campaign's execs/s mixes two things: what one execution of the binary costs, and which inputs
the campaign happens to run (two campaigns of near-identical feedback keep different queues, and
lz4's inputs differ 10x in cost). This benchmark separates them. It takes the final queue of one
trial of each configuration, and replays every queue through every configuration's binary under
the stock afl-showmap (`-C`: afl-showmap's fork server, persistent mode and shared-memory test
cases, as under afl-fuzz; the configuration's own variables, as its trial ran), one run at a
time, in rotated order, --rounds times. Each queue is repeated --repeat times (hard links) so a
run lasts seconds.

The figure is CPU time: `perf stat -e task-clock` over afl-showmap and every process it starts,
including a persistent child that is killed rather than reaped (which getrusage, and so
/usr/bin/time, leave out). Without a working `perf`, wall time (labelled so). Reported per
queue: the median over rounds of microseconds per execution for each configuration, and each
configuration's median paired ratio to the reference (the first configuration, or --reference)
on the same queue and round (> 1: costs more than the reference).

A configuration that sets AUTOTUNE_INDEX_FILE gets a file of its own, which every run starts from
fresh, as a trial does; with --warm-index the file is kept across its runs, filled first by one
unmeasured run of every queue, so the measured runs find every key assigned (as a long campaign
does, and as a fresh index does not: there the runs pay for assigning every key).

Without a finished compare (say, binaries built by hand, or a compare stopped before it wrote
compare.json): --binary NAME=PATH[:VAR=VALUE,...] (repeat; the variables are the run's) and --queue
NAME=DIR (repeat; an afl-fuzz queue directory, or any directory of inputs).

Run from the repository root with nothing else running on the host:
  .venv/bin/python benchmarks/replay_cost.py --compare /tmp/cmp-lz4 --trial 0 --rounds 5 --repeat 10 --out /tmp/replay-cost
  .venv/bin/python benchmarks/replay_cost.py --binary afl=/path/fuzzer --binary ours=/path/fuzzer:AUTOTUNE_METRIC=guard --queue q=/path/queue --out /tmp/replay-cost
Writes <out>/replay_cost.json (host profile inside) and replay_cost.md; nothing outside --out.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autotune import afl  # noqa: E402
from autotune.compare.compare import config_dir_name  # noqa: E402
from autotune.compare.remeasure import afl_out_of, load_compare  # noqa: E402
from autotune.io import write_json_atomic, write_text_atomic  # noqa: E402
from autotune.measure.host import current_host  # noqa: E402
from autotune.trials.trial import trial_env  # noqa: E402


def perf_works() -> str | None:
    """The perf executable when `perf stat -e task-clock` runs here, else None."""
    perf = shutil.which("perf")
    if not perf:
        return None
    try:
        p = subprocess.run([perf, "stat", "-x,", "-e", "task-clock", "true"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return perf if p.returncode == 0 and b"task-clock" in p.stderr else None


def queue_files(q: Path) -> list[Path]:
    return sorted(p for p in q.iterdir() if p.is_file())


@dataclass(frozen=True)
class Contestant:
    """A binary and the variables of its runs (a compare's configuration, or --binary)."""

    name: str
    binary: str
    env: dict[str, str]


def from_compare(a: argparse.Namespace) -> tuple[list[Contestant], dict[str, Path], dict]:
    result = load_compare(a.compare)
    outcomes = [o for o in result.configs if not a.configs or o.config.name in a.configs.split(",")]
    people, queues = [], {}
    for o in outcomes:
        trial = next((t for t in o.trials if t.spec.index == a.trial), None)
        if trial is None:
            raise SystemExit(f"{o.config.name} has no trial {a.trial}")
        people.append(Contestant(o.config.name, o.binary, dict(trial.spec.env)))
        queues[o.config.name] = afl_out_of(source=a.compare, old=result, trial=trial) / "default" / "queue"
    return people, queues, {o.config.name: o.execs_per_s.median for o in outcomes}


def _named(arg: str, what: str) -> tuple[str, str]:
    name, sep, rest = arg.partition("=")
    if not sep or not name or not rest:
        raise SystemExit(f"bad {what} {arg!r}: expected NAME=...")
    return name, rest


def from_args(a: argparse.Namespace) -> tuple[list[Contestant], dict[str, Path], dict]:
    people = []
    for arg in a.binary:
        name, rest = _named(arg, "--binary")
        path, _, variables = rest.partition(":")
        env = dict(_named(v, "variable") for v in variables.split(",") if v)
        if not os.access(path, os.X_OK):
            raise SystemExit(f"--binary {name}: {path} is not an executable")
        people.append(Contestant(name, path, env))
    queues = {}
    for arg in a.queue:
        name, d = _named(arg, "--queue")
        if not Path(d).is_dir():
            raise SystemExit(f"--queue {name}: {d} is not a directory")
        queues[name] = Path(d)
    if not queues:
        raise SystemExit("--binary needs at least one --queue")
    return people, queues, {}


def stage_queue(files: list[Path], dest: Path, repeat: int) -> int:
    dest.mkdir(parents=True)
    n = 0
    for r in range(repeat):
        for i, f in enumerate(files):
            target = dest / f"r{r:02d}-{i:06d}"
            try:
                os.link(f, target)
            except OSError:
                shutil.copyfile(f, target)
            n += 1
    return n


def one_run(*, perf: str | None, showmap: str, binary: str, env: dict, queue: Path, scratch: Path) -> dict:
    out = scratch / "map"  # afl-showmap -C writes one file
    out.unlink(missing_ok=True)
    stat = scratch / "perf.csv"
    cmd = [showmap, "-q", "-i", str(queue), "-C", "-o", str(out), "-t", "1000", "--", binary]
    if perf:
        cmd = [perf, "stat", "-x,", "-e", "task-clock", "-o", str(stat), *cmd]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=scratch, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    wall_ms = (time.perf_counter() - t0) * 1000.0
    cpu_ms = None
    if perf:
        for line in stat.read_text().splitlines():
            parts = line.split(",")
            if len(parts) > 2 and parts[2] == "task-clock":
                cpu_ms = float(parts[0])
    if not out.exists():
        raise SystemExit(f"afl-showmap wrote no map for {binary} on {queue} (exit {p.returncode}):\n"
                         f"{p.stderr.decode(errors='replace')[-2000:]}")
    return {"wall_ms": round(wall_ms, 2), "cpu_ms": cpu_ms, "rc": p.returncode}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", type=Path, help="a finished autotune compare --out directory")
    ap.add_argument("--trial", type=int, default=0, help="whose queue: this trial index of every configuration")
    ap.add_argument("--configs", default="", help="comma-separated configurations to keep (default: all)")
    ap.add_argument("--binary", action="append", default=[], help="NAME=PATH[:VAR=VALUE,...] instead of --compare")
    ap.add_argument("--queue", action="append", default=[], help="NAME=DIR: inputs to replay (with --binary)")
    ap.add_argument("--reference", default="", help="the configuration ratios are taken to (default: the first)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=10, help="copies of each queue in one run")
    ap.add_argument("--warm-index", action="store_true",
                    help="keep each configuration's AUTOTUNE_INDEX_FILE across its runs, filled first by one "
                         "unmeasured run of every queue (a long campaign runs from a nearly full index); default: "
                         "every run starts from a fresh index, as a trial does")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    if bool(a.compare) == bool(a.binary):
        raise SystemExit("give either --compare DIR or --binary (with --queue)")
    people, queue_dirs, campaign = from_compare(a) if a.compare else from_args(a)
    if len(people) < 2:
        raise SystemExit("need at least two configurations")
    names = [p.name for p in people]
    ref = a.reference or names[0]
    if ref not in names:
        raise SystemExit(f"--reference {ref} is none of {', '.join(names)}")
    perf = perf_works()
    base = afl.base_env(os.environ)
    showmap = afl.find_tool("afl-showmap", env=base)

    a.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="work-", dir=a.out))
    queues: dict[str, tuple[Path, int, int]] = {}  # queue owner -> (dir, inputs per run, queue entries)
    envs: dict[str, dict] = {}
    for q, qsrc in queue_dirs.items():
        files = queue_files(qsrc)
        qdir = work / "queues" / config_dir_name(q)
        queues[q] = (qdir, stage_queue(files, qdir, a.repeat), len(files))
    for p in people:
        rdir = work / "runs" / config_dir_name(p.name)
        rdir.mkdir(parents=True)
        envs[p.name] = trial_env(config_env=p.env, trial_dir=rdir)[0]

    def run(c: str, qdir: Path) -> dict:
        rdir = work / "runs" / config_dir_name(c)
        idx = Path(envs[c].get("AUTOTUNE_INDEX_FILE", rdir / "none"))
        if idx.exists() and not a.warm_index:
            idx.unlink()  # every run starts from a fresh index, as a trial does
        return one_run(perf=perf, showmap=showmap, binary=people[names.index(c)].binary, env=envs[c], queue=qdir,
                       scratch=rdir)

    if a.warm_index:  # the unmeasured runs that fill each configuration's index
        for q, (qdir, _, _) in queues.items():
            for c in names:
                m = run(c, qdir)
                print(f"filling the index: queue {q} config {c}: {m['cpu_ms'] or m['wall_ms']:.0f} ms", flush=True)
    load_before = os.getloadavg()
    runs = []
    for r in range(a.rounds):
        for q, (qdir, n, _) in queues.items():
            order = names[r % len(names):] + names[:r % len(names)]
            for c in order:
                m = run(c, qdir)
                runs.append({"round": r, "queue": q, "config": c, "inputs": n, **m})
                print(f"round {r} queue {q} config {c}: {m['cpu_ms'] or m['wall_ms']:.0f} ms", flush=True)
    load_after = os.getloadavg()
    shutil.rmtree(work)

    key = "cpu_ms" if perf else "wall_ms"
    table = []
    for q, (_, n, entries) in queues.items():
        row = {"queue": q, "queue_entries": entries, "inputs_per_run": n, "configs": {}}
        for c in names:
            xs = [x for x in runs if x["queue"] == q and x["config"] == c]
            us = [x[key] * 1000.0 / n for x in xs]
            ratios = []
            for x in xs:
                rr = next(y for y in runs if y["queue"] == q and y["config"] == ref and y["round"] == x["round"])
                ratios.append(x[key] / rr[key])
            row["configs"][c] = {"us_per_exec": round(statistics.median(us), 3),
                                 "ratio_to_reference": round(statistics.median(ratios), 4),
                                 "paired_ratios": [round(v, 4) for v in ratios]}
        table.append(row)
    doc = {"schema_version": 1, "compare": str(a.compare.resolve()) if a.compare else None, "trial": a.trial,
           "binaries": {p.name: {"binary": p.binary, "env": p.env} for p in people},
           "queues": {q: str(d) for q, d in queue_dirs.items()}, "rounds": a.rounds,
           "repeat": a.repeat, "warm_index": a.warm_index, "reference": ref,
           "measure": "task-clock (perf stat)" if perf else "wall time",
           "afl_showmap": showmap, "campaign_execs_per_s_median": campaign,
           "load_before": load_before, "load_after": load_after, "table": table, "runs": runs,
           "host_profile": current_host()}
    write_json_atomic(a.out / "replay_cost.json", doc)
    unit = "CPU µs per execution (task-clock)" if perf else "wall µs per execution (perf unavailable)"
    md = [f"# Replay cost: {', '.join(names)} on each other's queues", "",
          f"{unit}; median of {a.rounds} rounds; ratio = median paired ratio to `{ref}` on the same queue "
          f"and round. Queues: " + (f"trial {a.trial} of each configuration of `{a.compare}`" if a.compare else
                                    ", ".join(f"{q} = `{d}`" for q, d in queue_dirs.items())) + f", x{a.repeat}. "
          + ("Each configuration's index file kept across its runs, filled first by one unmeasured run of every "
             "queue. " if a.warm_index else "") +
          f"Load average before {load_before[0]:.2f}, after {load_after[0]:.2f}.", "",
          "| queue (entries) | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for row in table:
        cells = [f"{row['configs'][c]['us_per_exec']:.1f} ({row['configs'][c]['ratio_to_reference']:.3f}x)"
                 for c in names]
        md.append(f"| {row['queue']} ({row['queue_entries']}) | " + " | ".join(cells) + " |")
    if campaign:
        md += ["", "Campaign execs/s (median of the compare's trials): "
               + ", ".join(f"{c} {v:,.0f}" for c, v in campaign.items())]
    md.append("")
    write_text_atomic(a.out / "replay_cost.md", "\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
