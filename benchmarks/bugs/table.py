#!/usr/bin/env python3
"""The bug table (issue 38): every bug of the benchmark with how a measured campaign found it.

One row per bug of bugs.toml: library, version, bug, CVE, fix, canary site, and from one
`autotune compare --yardstick bugs` per library (AFL++'s default in the table's runs) how many
trials reached and triggered it, the Kaplan-Meier median times and the trigger's restricted mean
survival time, all at one horizon (the trials' length, or shorter: a reach or trigger after it is
censored there, as pool.py reads an arm), then per measured library its trials one by one (execs/s,
yardstick edges by the horizon, each bug's trigger or how far it got). A library without a measured
run is listed as such, its bugs included, so the table always shows the whole benchmark.

  .venv/bin/python benchmarks/bugs/table.py --horizon 1800 --out benchmarks/results/bugtable.md \\
      libtiff=benchmarks/results/bugtable-libtiff-2026-11-28/libtiff-compare.json.gz \\
      libpng=/work/runs/bugtable-libpng/compare

RUN is LIB=PATH or LIB=PATH:CONFIG, optionally @DATE: PATH a compare's directory or its compare.json
(gzipped or not), CONFIG the configuration (default: `default`), DATE the day the run started
(YYYY-MM-DD): a bug bugs.toml says was `added` after it is listed as not measured by the run. Writes OUT (Markdown) and OUT with .json,
atomically; prints the Markdown when --out is not given.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent.parent
HERE = Path(__file__).resolve().parent
for _p in (ROOT, HERE):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import buglibs  # noqa: E402
import pool  # noqa: E402
from autotune.bugs.attribution import TrialBugs  # noqa: E402
from autotune.bugs.depth import CLASSES, DEEP_SHARE, SHALLOW_S, SHALLOW_SHARE, classify  # noqa: E402
from autotune.bugs.survival import BugSurvival, event_time, survival_of, triggered_by  # noqa: E402
from autotune.compare.compare import CompareResult, ConfigOutcome  # noqa: E402
from autotune.io import write_json_atomic, write_text_atomic  # noqa: E402
from autotune.llvm import compilers_text  # noqa: E402
from autotune.stats import median_interval  # noqa: E402
from autotune.trials.trial import TrialResult, aflpp_versions  # noqa: E402

SCHEMA_VERSION = 1


class TableError(Exception):
    """A run the table cannot use; the message says what to change."""


@dataclass(frozen=True)
class Run:
    library: str
    path: Path
    config: str
    result: CompareResult
    outcome: ConfigOutcome
    date: str = ""  # when it ran (YYYY-MM-DD): bugs added to bugs.toml after it are not measured by it

    def measured(self, bug: "buglibs.Bug") -> bool:
        """Whether this run's canary build had ``bug``: every bug unless the run is dated and the bug
        was added to the benchmark after it."""
        return not (self.date and bug.added and bug.added > self.date)

    @property
    def trials(self) -> list[TrialBugs]:
        return [t.bugs for t in self.outcome.trials if t.bugs is not None]


def parse_run(text: str) -> tuple[str, Path, str, str]:
    """LIB=PATH[:CONFIG][@DATE] -> (LIB, PATH, CONFIG, DATE)."""
    text, at, date = text.rpartition("@") if "@" in text else (text, "", "")
    if at and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        raise TableError(f"run {text}@{date!r}: DATE must be YYYY-MM-DD (the day the run started)")
    lib, sep, rest = text.partition("=")
    if not sep or not lib or not rest:
        raise TableError(f"run {text!r}: expected LIB=PATH or LIB=PATH:CONFIG, optionally @DATE")
    where, colon, config = rest.rpartition(":")
    if not colon or "/" in config:  # no CONFIG given (a colon, if any, belongs to the path)
        where, config = rest, "default"
    return lib, Path(where), config, date


def load_run(text: str, libs: dict[str, buglibs.BugLibrary]) -> Run:
    lib, path, config, date = parse_run(text)
    if lib not in libs:
        raise TableError(f"run {text!r}: no library {lib!r} in bugs.toml (there are: {', '.join(libs)})")
    try:
        path, result, outcome = pool.read_bugs_config(path, config)
    except pool.PoolError as e:
        raise TableError(f"run {text!r}: {e}") from None
    return Run(library=lib, path=path, config=config, result=result, outcome=outcome, date=date)


def _trial_row(t: TrialResult, bugs: Sequence[str], horizon_s: float) -> dict:
    """One trial at the horizon: its afl-fuzz figures, yardstick edges by then, and each bug's times."""
    edges = None
    if t.yardstick is not None:
        edges = t.yardstick.edges if horizon_s >= t.spec.seconds else \
            max((e for s, e in t.yardstick.curve if s <= horizon_s), default=0)
    times = {b: {"reach_s": event_time(t.bugs, b, "reach", horizon_s),
                 "trigger_s": event_time(t.bugs, b, "trigger", horizon_s)} for b in bugs}
    return {"index": t.spec.index, "execs_per_s": t.execs_per_s, "yardstick_edges": edges, "bugs": times,
            "crashes": t.bugs.crashes, "crashes_without_bug": t.bugs.crashes_without_bug}


def _cell(s: BugSurvival) -> dict:
    return {"trials": s.trials, "events": s.events, "median_s": s.median_s, "rmst_s": s.rmst_s,
            "rmst_low_s": s.rmst_low_s, "rmst_high_s": s.rmst_high_s}


def table(runs: Sequence[Run], libs: dict[str, buglibs.BugLibrary], *, horizon_s: float) -> dict:
    """The table's document: every library and bug of the manifest, measured where a run is given."""
    by_lib = {r.library: r for r in runs}
    if len(by_lib) != len(runs):
        raise TableError("two runs for one library: give one run per library")
    short = [r for r in runs if r.result.seconds < horizon_s]
    if short:
        raise TableError("a run's trials are shorter than the horizon: "
                         + ", ".join(f"{r.library} ({r.result.seconds} s)" for r in short)
                         + f"; use --horizon {min(r.result.seconds for r in runs)} or less")
    unknown = {r.library: sorted(set().union(*(t.bugs for t in r.trials)) - {b.id for b in libs[r.library].bugs})
               for r in runs}
    unknown = {k: v for k, v in unknown.items() if v}
    if unknown:
        raise TableError("a run names bugs bugs.toml does not have (another benchmark's build?): "
                         + "; ".join(f"{k}: {', '.join(v)}" for k, v in unknown.items()))
    rows, libraries = [], []
    for lib in libs.values():
        run = by_lib.get(lib.name)
        entry = {"library": lib.name, "package": lib.package, "version": lib.version, "suite": lib.suite,
                 "upstream": lib.upstream, "bugs": len(lib.bugs), "measured": run is not None}
        if run is not None:
            trials = run.trials
            counts = [float(len(triggered_by(t, horizon_s))) for t in trials]
            entry.update({"source": str(run.path), "config": run.config, "trials": len(trials),
                          "trial_seconds": run.result.seconds,
                          "aflpp": aflpp_versions(t.stats for t in run.outcome.trials),
                          "compilers": run.result.compilers,
                          "execs_per_s_median": run.outcome.execs_per_s.median,
                          "yardstick_edges_median": run.outcome.coverage.median,
                          "triggered_per_trial": median_interval(counts).to_dict(),
                          "crashes": sum(t.crashes for t in trials),
                          "crashes_without_bug": sum(t.crashes_without_bug for t in trials),
                          "trials_with_crashes_without_bug": sum(1 for t in trials if t.crashes_without_bug),
                          "per_trial": [_trial_row(t, [b.id for b in lib.bugs if run.measured(b)], horizon_s)
                                        for t in run.outcome.trials if t.bugs is not None]})
        libraries.append(entry)
        for b in lib.bugs:
            row = {"library": lib.name, "upstream": lib.upstream, "suite": lib.suite, "bug": b.id, "cve": b.cve,
                   "fix": b.fix, "site": b.site, "trigger_known": b.trigger_known}
            if run is not None and not run.measured(b):
                row["not_measured"] = f"added {b.added}, after the run ({run.date})"
            elif run is not None:
                for event in ("reach", "trigger"):
                    row[event] = _cell(survival_of(config=run.config, bug=b.id, event=event, trials=run.trials,
                                                   horizon_s=horizon_s))
                row["depth"] = classify([event_time(t, b.id, "trigger", horizon_s) for t in run.trials])
            rows.append(row)
    measured = [r for r in rows if "trigger" in r]
    triggered = [r for r in measured if r["trigger"]["events"]]
    classes = {c: [r["bug"] for r in measured if r["depth"] == c] for c in CLASSES}
    return {"schema_version": SCHEMA_VERSION, "horizon_s": float(horizon_s), "libraries": libraries, "rows": rows,
            "totals": {"bugs": len(rows), "measured": len(measured), "reached": sum(1 for r in measured if r["reach"]["events"]),
                       "triggered": len(triggered), "depth": classes, "mid_depth": classes["mid"]}}


def _time(v: float | None) -> str:
    if v is None:
        return "never"
    return f"{v:,.1f} s" if v < 600 else f"{v / 60:,.1f} min"


def _fix(fix: str) -> str:
    """The fix's name: the Debian patch file or the commit title before its explanation."""
    name = fix.split(": ", 1)[0]
    return name.removeprefix("debian/patches/")


def _bug_text(times: dict) -> str:
    if times["trigger_s"] is not None:
        return _time(times["trigger_s"])
    if times["reach_s"] is not None:
        return f"reached {_time(times['reach_s'])}, not triggered"
    return "not reached"


def _per_trial_lines(lib: dict) -> list[str]:
    """A measured library's trials: execs/s, yardstick edges and each bug's trigger (or how far it got)."""
    rows = lib["per_trial"]
    bugs = list(rows[0]["bugs"]) if rows else []
    lines = [f"### {lib['library']}, per trial (times to trigger)", "",
             "| trial | execs/s | yardstick edges | crashes (no canary) | " + " | ".join(bugs) + " |",
             "|---" * (4 + len(bugs)) + "|"]
    for r in rows:
        edges = "-" if r["yardstick_edges"] is None else f"{r['yardstick_edges']:,}"
        lines.append(f"| {r['index']} | {r['execs_per_s']:,.0f} | {edges} | "
                     f"{r['crashes']:,} ({r['crashes_without_bug']:,}) | "
                     + " | ".join(_bug_text(r["bugs"][b]) for b in bugs) + " |")
    return lines


def _stray(lib: dict) -> str:
    """Crashes that triggered no canary when replayed alone: another fault of the library, or one that
    needs the campaign process's state (the time-to-bug figures leave them out)."""
    n, k = lib["crashes_without_bug"], lib["trials_with_crashes_without_bug"]
    return f"none of {lib['crashes']:,}" if not n else f"{n:,} of {lib['crashes']:,} (in {k} of {lib['trials']} trials)"


def markdown(doc: dict) -> str:
    h = doc["horizon_s"]
    t = doc["totals"]
    lines = [f"# The bug table: {t['bugs']} known bugs in {len(doc['libraries'])} libraries, read at {h / 60:g} min", "",
             "Per bug: how many trials reached and triggered its canary, the Kaplan-Meier median time (seconds "
             "from the campaign's start; `never`: the curve stays above one half) and the trigger's restricted "
             f"mean survival time to {h:g} s with its 95 % interval. A trial that never did is censored at "
             f"{h:g} s. Crashes no canary explains: kept crashes that, replayed alone, triggered no known bug "
             "(another fault of the library, or one that needs the campaign process's state); the times leave "
             "them out. Written by `benchmarks/bugs/table.py` from each library's `autotune compare "
             "--yardstick bugs` run.", "",
             "| library | runs | trials x length | AFL++ | builds by | execs/s median | yardstick edges median | "
             "bugs triggered per trial | crashes no canary explains (whole trials) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for lib in doc["libraries"]:
        name = f"{lib['library']} {lib['upstream']} ({lib['package']} {lib['version']}, {lib['suite']})"
        if not lib["measured"]:
            lines.append(f"| {name} | not measured yet | | | | | | | |")
            continue
        per = lib["triggered_per_trial"]
        lines.append(f"| {name} | `{lib['source']}` ({lib['config']}) | {lib['trials']} x {lib['trial_seconds']:g} s | "
                     f"{lib['aflpp']} | {compilers_text(lib['compilers'])} | {lib['execs_per_s_median']:,.0f} | "
                     f"{lib['yardstick_edges_median']:,.0f} | {per['median']:g} [{per['low']:g}, {per['high']:g}] | "
                     f"{_stray(lib)} |")
    lines += ["", "| library | bug | CVE | fix | canary site | reached | median reach | triggered | median trigger "
              "| RMST of trigger [95 %] | depth |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        head = f"| {r['library']} {r['upstream']} | {r['bug']} | {r['cve'] or '-'} | {_fix(r['fix'])} | `{r['site']}` |"
        if "trigger" not in r:
            lines.append(head + f" not measured{' (' + r['not_measured'] + ')' if r.get('not_measured') else ''} "
                                "| | | | | |")
            continue
        re_, tr = r["reach"], r["trigger"]
        lines.append(f"{head} {re_['events']}/{re_['trials']} | {_time(re_['median_s'])} | {tr['events']}/{tr['trials']} "
                     f"| {_time(tr['median_s'])} | {tr['rmst_s']:,.1f} [{tr['rmst_low_s']:,.1f}, {tr['rmst_high_s']:,.1f}] "
                     f"| {r.get('depth', '-')} |")
    for lib in doc["libraries"]:
        if lib["measured"]:
            lines += [""] + _per_trial_lines(lib)
    lines += ["", f"Measured: {t['measured']} of {t['bugs']} bugs; reached in some trial: {t['reached']}; triggered "
              f"in some trial within {h / 60:g} min: {t['triggered']}.",
              "", f"Depth classes (autotune.bugs.depth; docs/BUGS.md): shallow, triggered within {SHALLOW_S:g} s in at "
              f"least {SHALLOW_SHARE:.0%} of the trials; deep, triggered in at most {DEEP_SHARE:.0%}; mid, the rest. "
              + "; ".join(f"{c} ({len(t['depth'][c])}): {', '.join(t['depth'][c]) or 'none'}" for c in CLASSES) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="RUN", help="LIB=PATH[:CONFIG], one per measured library")
    ap.add_argument("--horizon", type=float, default=1800.0, help="seconds: read every trial as if it stopped here")
    ap.add_argument("--out", type=Path, default=None, help="the Markdown file (its .json beside it)")
    a = ap.parse_args(argv)
    try:
        if a.horizon <= 0:
            raise TableError(f"--horizon {a.horizon:g}: must be positive")
        libs = buglibs.load_manifest()
        doc = table([load_run(r, libs) for r in a.runs], libs, horizon_s=a.horizon)
    except TableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    text = markdown(doc)
    if a.out is None:
        sys.stdout.write(text)
        return 0
    write_json_atomic(a.out.with_suffix(".json"), doc)
    write_text_atomic(a.out, text)
    print(f"wrote {a.out} and {a.out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
