#!/usr/bin/env python3
"""Pool arms of several `autotune compare --yardstick bugs` runs into one bug report at one horizon.

An arm whose trials ran longer than the horizon is read as if they had stopped there
(autotune.bugs.survival.bug_report: a reach or trigger after the horizon is censored at it). So one
10 x 30 min run of AFL++'s default serves issue 38's bug table at 30 min and, censored at 20 min,
the bug study's baseline against its other arms' 20-min trials, instead of running the default twice.

The arms did not run side by side (Klees et al. compare configurations under the same conditions):
the report names each arm's source, trial length, AFL++ version, clang and median execs/s, and
refuses arms whose canary builds differ (the yardstick binary's sha256) unless --different-builds
says the reader was told. Beside the bugs, every later arm's yardstick edges (at the horizon, and their
mean over the campaign) and execs/s are tested against the first arm's (Mann-Whitney U, A12), and a
portfolio arm's execs/s is given per instance.

  .venv/bin/python benchmarks/bugs/pool.py --horizon 1200 --out /tmp/pooled \\
      /work/runs/bugtable-libtiff/compare:default /work/runs/libtiff/compare:ngram-8

ARM is DIR:CONFIG or DIR:CONFIG=NAME (DIR holds a compare.json, or is one, gzipped or not, as the
results keep them; NAME renames the arm in the report, needed when two arms share a configuration
name). The first arm is the baseline of the tests.
Writes OUT/pooled.json, OUT/pooled.md and OUT/bugs.png, each atomically.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from autotune.bugs.plot import render_km_plot  # noqa: E402
from autotune.bugs.render import bugs_markdown  # noqa: E402
from autotune.bugs.survival import bug_report  # noqa: E402
from autotune.compare.compare import JSON_NAME, CompareResult, ConfigOutcome, mean_coverage  # noqa: E402
from autotune.compare.render import compilers_text  # noqa: E402
from autotune.errors import DocumentError  # noqa: E402
from autotune.io import read_json, write_bytes_atomic, write_json_atomic, write_text_atomic  # noqa: E402
from autotune.stats import a12, a12_magnitude, mann_whitney, median, signed_rank  # noqa: E402
from autotune.trials import aflpp_versions  # noqa: E402

SCHEMA_VERSION = 3  # 2: each arm's coverage and speed against the baseline ("measures"); 3: late_edges, paired

# Each arm's trials against the baseline's, by Mann-Whitney U (two-sided) and A12 (the arm's value
# beating the baseline's): the union's yardstick edges and their mean over the campaign, both at the
# horizon (read from the trial's yardstick curve), the edges the union gained over the horizon's second
# half ("late_edges", exploratory: what an arm still adds once the campaign slows, the question of a
# secondary moved to a sensitive metric late, plan-2026-12-01-portfolio-study.md, amendment of
# 2026-12-04 20:33), and afl-fuzz's execs/s over the whole trial. Beside each test, exploratory: the
# differences of the trials of one index (arms of one --seed ran trial k with the same afl-fuzz seeds,
# and a study that alternates its arms ran trial k of each on the same machine), their median and the
# two-sided Wilcoxon signed-rank p.
MEASURES = ("yardstick_edges", "mean_edges", "late_edges", "execs_per_s")


class PoolError(Exception):
    """A pooling the arms cannot support; the message says what to change."""


@dataclass(frozen=True)
class Arm:
    source: Path  # the compare's directory
    config: str  # its configuration's name there
    name: str  # the arm's name in the report
    result: CompareResult
    outcome: ConfigOutcome

    def to_dict(self) -> dict:
        trials = [t for t in self.outcome.trials if t.bugs is not None]
        return {"name": self.name, "source": str(self.source), "config": self.config,
                "trial_seconds": self.result.seconds, "trials": len(trials),
                "aflpp": aflpp_versions(t.stats for t in self.outcome.trials),
                "compilers": self.result.compilers, "yardstick_sha256": self.result.yardstick.sha256,
                "execs_per_s_median": self.outcome.execs_per_s.median,
                "execs_per_s_median_by_instance": self.execs_by_instance(),
                "yardstick_edges_median": self.outcome.coverage.median}

    def execs_by_instance(self) -> dict[str, float]:
        """A portfolio's median execs/s of each instance (-M main, -S s1, ...) over its trials; empty for one instance."""
        runs: dict[str, list[float]] = {}
        for t in self.outcome.trials:
            for name, m in ((t.stats or {}).get("members") or {}).items():
                if m.get("execs_per_sec") is not None:
                    runs.setdefault(name, []).append(float(m["execs_per_sec"]))
        return {name: median(v) for name, v in runs.items()}

    def values(self, measure: str, horizon_s: float) -> list[float]:
        """One value per trial with a yardstick (execs/s: every trial): ``measure`` of MEASURES at the horizon."""
        return list(self.by_index(measure, horizon_s).values())

    def by_index(self, measure: str, horizon_s: float) -> dict[int, float]:
        """:meth:`values` by trial index (trial k of two arms of one --seed ran the same afl-fuzz seeds)."""
        if measure == "execs_per_s":
            return {t.spec.index: t.execs_per_s for t in self.outcome.trials}
        out = {}
        for t in self.outcome.trials:
            if t.yardstick is None:
                continue
            curve = [(float(s), float(e)) for s, e in t.yardstick.curve if s <= horizon_s]
            end = float(t.yardstick.edges) if self.result.seconds <= horizon_s else (curve[-1][1] if curve else None)
            value = None
            if measure == "yardstick_edges":
                value = end
            elif measure == "late_edges":
                half = [e for s, e in curve if s <= horizon_s / 2]
                value = end - half[-1] if end is not None and half else None
            else:
                value = mean_coverage(curve)
            if value is not None:
                out[t.spec.index] = value
        return out


def measures_against(arms: list["Arm"], horizon_s: float) -> list[dict]:
    """Every later arm against the first, for each of MEASURES both have values for."""
    base, rows = arms[0], []
    for arm in arms[1:]:
        for m in MEASURES:
            xs, ys = arm.values(m, horizon_s), base.values(m, horizon_s)
            if not xs or not ys:
                continue
            eff = a12(xs, ys)
            mine, theirs = arm.by_index(m, horizon_s), base.by_index(m, horizon_s)
            diffs = [mine[k] - theirs[k] for k in sorted(set(mine) & set(theirs))]
            rows.append({"arm": arm.name, "baseline": base.name, "measure": m, "median": median(xs),
                         "median_baseline": median(ys), "n": len(xs), "n_baseline": len(ys),
                         "mann_whitney": mann_whitney(xs, ys).to_dict(), "a12": eff, "magnitude": a12_magnitude(eff),
                         "paired": {"n": len(diffs), "median_difference": median(diffs) if diffs else None,
                                    "signed_rank_p": signed_rank(diffs, alternative="two-sided") if diffs else None}})
    return rows


def parse_arm(text: str) -> tuple[Path, str, str]:
    """DIR:CONFIG[=NAME] -> (DIR, CONFIG, NAME)."""
    where, sep, rest = text.rpartition(":")
    if not sep or not where or not rest:
        raise PoolError(f"arm {text!r}: expected DIR:CONFIG or DIR:CONFIG=NAME")
    config, _, name = rest.partition("=")
    return Path(where), config, name or config


def read_bugs_config(where: Path, config: str) -> tuple[Path, CompareResult, ConfigOutcome]:
    """One configuration of a finished `autotune compare --yardstick bugs`, with its time-to-bug.

    WHERE is the compare's directory or its compare.json, gzipped or not (the results keep runs as
    ``*-compare.json.gz``). Returns (the file read, the compare, the configuration's outcome); the
    PoolError's message says what is wrong without naming the caller's argument (callers prefix it).
    """
    path = where / JSON_NAME if where.is_dir() else where
    if not path.is_file():
        raise PoolError(f"no such file {path} (a finished `autotune compare --yardstick bugs` "
                        f"directory holds its {JSON_NAME})")
    try:
        result = CompareResult.from_dict(read_json(path))
    except (DocumentError, ValueError, KeyError, TypeError) as e:
        raise PoolError(f"{path} is not a compare document autotune reads ({e})") from None
    names = [c.config.name for c in result.configs]
    if config not in names:
        raise PoolError(f"{path} has no configuration {config!r} (it has {', '.join(names)})")
    outcome = result.config(config)
    if not any(t.bugs is not None for t in outcome.trials):
        raise PoolError("its trials carry no time-to-bug (run the compare with --yardstick bugs)")
    return path, result, outcome


def load_arm(text: str) -> Arm:
    source, config, name = parse_arm(text)
    try:
        _, result, outcome = read_bugs_config(source, config)
    except PoolError as e:
        raise PoolError(f"arm {text!r}: {e}") from None
    return Arm(source=source, config=config, name=name, result=result, outcome=outcome)


def pool(arms: list[Arm], *, horizon_s: float, different_builds: bool = False, scope=None) -> dict:
    """The pooled document: the arms and the bug report of their trials censored at ``horizon_s``;
    ``scope`` (autotune.bugs.depth.BugScope) restricts the judgement to its bugs."""
    if len(arms) < 2:
        raise PoolError("pool needs at least two arms (the first is the baseline)")
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise PoolError(f"two arms share a name ({', '.join(names)}): rename one, DIR:CONFIG=NAME")
    if horizon_s <= 0:
        raise PoolError(f"--horizon {horizon_s:g}: must be positive")
    short = [a for a in arms if a.result.seconds < horizon_s]
    if short:
        raise PoolError("an arm's trials are shorter than the horizon, so its later bugs are unknown: "
                        + ", ".join(f"{a.name} ({a.result.seconds} s)" for a in short)
                        + f"; use --horizon {min(a.result.seconds for a in arms)} or less")
    builds = {a.result.yardstick.sha256 for a in arms}
    if len(builds) > 1 and not different_builds:
        raise PoolError("the arms' canary builds differ (yardstick sha256: "
                        + ", ".join(f"{a.name} {a.result.yardstick.sha256[:12]}" for a in arms)
                        + "): their bugs are not one benchmark's; --different-builds pools them anyway, and says so")
    # trial k of every arm: the combined test's pairs (the same afl-fuzz seed when the arms share --seed)
    report = bug_report(trials={a.name: [t.bugs for t in a.outcome.trials if t.bugs is not None] for a in arms},
                        indices={a.name: [t.spec.index for t in a.outcome.trials if t.bugs is not None] for a in arms},
                        horizon_s=horizon_s, scope=scope)
    return {"schema_version": SCHEMA_VERSION, "horizon_s": float(horizon_s), "arms": [a.to_dict() for a in arms],
            "different_builds": len(builds) > 1, "measures": measures_against(arms, horizon_s),
            "bugs": report.to_dict()}


def markdown(doc: dict, report) -> str:
    h = doc["horizon_s"]
    lines = [f"# Bugs of {len(doc['arms'])} compare arms pooled at {h:g} s", "",
             "Each arm's trials are read as if they had stopped at the horizon (a reach or trigger after it is "
             "censored there). The arms ran at different times, not side by side: compare their conditions below.",
             "", "| arm | source | configuration there | trials x length | AFL++ | builds by | execs/s median | "
             "yardstick edges median (whole trial) |", "|---|---|---|---|---|---|---|---|"]
    for a in doc["arms"]:
        lines.append(f"| {a['name']} | `{a['source']}` | {a['config']} | {a['trials']} x {a['trial_seconds']} s | "
                     f"{a['aflpp']} | {compilers_text(a['compilers'])} | {a['execs_per_s_median']:,.0f} | "
                     f"{a['yardstick_edges_median']:,.0f} |")
    per_instance = [a for a in doc["arms"] if a.get("execs_per_s_median_by_instance")]
    if per_instance:
        lines += ["", "Execs/s per instance (median over the arm's trials): " + "; ".join(
            f"{a['name']} " + ", ".join(f"{k} {v:,.0f}" for k, v in a["execs_per_s_median_by_instance"].items())
            for a in per_instance) + "."]
    if doc.get("measures"):
        lines += ["", f"Against the baseline ({doc['arms'][0]['name']}), Mann-Whitney U two-sided; A12 is the chance "
                  "that the arm's trial beats the baseline's (edges at the horizon; late_edges, those gained over the "
                  "horizon's second half, exploratory; execs/s over the whole trial):", "",
                  "| arm | measure | median | baseline's median | trials | p | A12 | paired by trial index: n, median "
                  "difference, signed-rank p |", "|---|---|---|---|---|---|---|---|"]
        for r in doc["measures"]:
            pr = r.get("paired") or {}
            paired = (f"{pr['n']}, {pr['median_difference']:+,.1f}, {pr['signed_rank_p']:.3g}"
                      if pr.get("n") else "-")
            lines.append(f"| {r['arm']} | {r['measure']} | {r['median']:,.1f} | {r['median_baseline']:,.1f} | "
                         f"{r['n']} vs {r['n_baseline']} | {r['mann_whitney']['p']:.3g} | {r['a12']:.2f} ({r['magnitude']}) | "
                         f"{paired} |")
    if doc["different_builds"]:
        lines += ["", "**The arms' canary builds differ** (--different-builds): their yardstick binaries' sha256 "
                  "are not one."]
    aflpp = ", ".join(sorted({a["aflpp"] for a in doc["arms"]}))
    return "\n".join(lines + bugs_markdown(report, aflpp=aflpp)) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("arms", nargs="+", metavar="ARM", help="DIR:CONFIG[=NAME], the baseline first")
    ap.add_argument("--horizon", type=float, required=True, help="seconds: every arm's trials censored here")
    ap.add_argument("--different-builds", action="store_true",
                    help="pool arms whose canary builds differ (the report says so)")
    ap.add_argument("--depth", action="append", default=None,
                    help="judge on the bugs of these depth classes only (shallow, mid, deep), by --depths")
    ap.add_argument("--depths", type=Path, help="a bug table's JSON or a calibration compare.json (autotune.bugs.depth)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    from autotune.errors import AutotuneError

    try:
        scope = None
        if args.depth or args.depths:
            if not (args.depth and args.depths):
                raise PoolError("--depth and --depths go together (e.g. --depth mid --depths "
                                "benchmarks/results/bugtable-2026-11-29.json)")
            from autotune.bugs.depth import BugScope

            scope = BugScope.read(args.depth, args.depths)
        doc = pool([load_arm(a) for a in args.arms], horizon_s=args.horizon, different_builds=args.different_builds,
                   scope=scope)
    except (PoolError, AutotuneError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from autotune.bugs.survival import BugReport

    report = BugReport.from_dict(doc["bugs"])
    md, png = markdown(doc, report), render_km_plot(report)  # rendered before anything is written
    args.out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(args.out / "pooled.json", doc)
    write_text_atomic(args.out / "pooled.md", md)
    write_bytes_atomic(args.out / "bugs.png", png)
    print(f"wrote {args.out / 'pooled.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
