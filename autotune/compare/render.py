"""compare.md: the per-configuration table and the pairwise tests."""

from __future__ import annotations

from autotune.bugs.render import bugs_markdown
from autotune.compare.result import CompareResult
from autotune.llvm import compilers_text
from autotune.stats import Summary, median
from autotune.trials import aflpp_versions
from autotune.trials.llvmcov.profiles import KINDS


def _ci(s: Summary, fmt: str) -> str:
    return f"{format(s.median, fmt)} [{format(s.low, fmt)}, {format(s.high, fmt)}]"


def target_name(target: dict) -> str:
    """demo, the harness sources' names, or the build script's name."""
    from pathlib import Path

    if target.get("kind") == "script" and target.get("script"):
        return f"build script {Path(target['script']).name}"
    if target.get("kind") == "sources":
        return ", ".join(Path(s).name for s in target.get("sources") or ())
    return str(target.get("kind", "target")) + " target"


def measure_label(measure: str, unit: str) -> str:
    """A pair's measure as compare.md shows it (compare.json keeps yardstick_edges for every unit)."""
    if measure == "yardstick_edges":
        return f"yardstick {unit}"
    if measure == "mean_edges":
        return f"mean yardstick {unit} over the campaign"
    if measure.startswith("llvm_cov_"):
        return "llvm-cov " + measure.removeprefix("llvm_cov_")
    if measure == "unique_crashes":
        return "unique crashes (by yardstick edges)"
    return measure


def _covered(o, kind: str) -> list[float]:
    return sorted(float(t.yardstick.llvm_cov["totals"][kind]["covered"]) for t in o.trials
                  if t.yardstick is not None and t.yardstick.llvm_cov)


def _llvm_cov_table(r: CompareResult) -> list[str]:
    """Covered branches, regions, lines and functions (median [min, max] over the trials, of the build's count)."""
    first = next((t.yardstick.llvm_cov for o in r.configs for t in o.trials
                  if t.yardstick is not None and t.yardstick.llvm_cov), None)
    if first is None:
        return []
    count = {k: first["totals"][k]["count"] for k in KINDS}
    lines = ["", "## llvm-cov totals (covered, median [min, max] over the trials)", "",
             "| configuration | " + " | ".join(f"{k} (of {count[k]:,})" for k in KINDS) + " |",
             "|---|" + "---|" * len(KINDS)]
    for o in r.configs:
        cells = []
        for k in KINDS:
            xs = _covered(o, k)
            cells.append(f"{median(xs):,.0f} [{xs[0]:,.0f}, {xs[-1]:,.0f}]" if xs else "-")
        lines.append(f"| {o.config.name} | " + " | ".join(cells) + " |")
    return lines


def _remeasure_table(r: CompareResult, unit: str) -> list[str]:
    """The source's yardstick beside the new one: medians, p and A12 of every pair, per yardstick."""
    rm = r.remeasure
    if not rm:
        return []
    old_kind = rm.get("yardstick", {}).get("kind", "?")
    old_unit = rm.get("yardstick", {}).get("unit") or "edges"
    old_pairs = {(p["a"], p["b"]): p for p in rm.get("pairs", []) if p.get("measure") == "yardstick_edges"}
    lines = ["", f"## Re-measured: {old_kind} (campaign's yardstick) beside {r.yardstick.kind}", "",
             f"The campaigns of `{rm.get('from')}` replayed through this yardstick; afl-fuzz's figures are theirs.",
             "", f"| a | b | {old_kind}: median a | median b | p | A12 | {r.yardstick.kind}: median a | median b | p "
                 "| A12 |", "|---|---|---|---|---|---|---|---|---|---|"]
    for p in r.pairs:
        if p.measure != "yardstick_edges":
            continue
        q = old_pairs.get((p.a, p.b))
        before = (f"{q['median_a']:,.1f} {old_unit} | {q['median_b']:,.1f} | {q['mann_whitney']['p']:.4f} | "
                  f"{q['a12']:.3f}" if q else "- | - | - | -")
        lines.append(f"| {p.a} | {p.b} | {before} | {p.median_a:,.1f} {unit} | {p.median_b:,.1f} | {p.test.p:.4f} | "
                     f"{p.a12:.3f} |")
    return lines


def markdown(r: CompareResult) -> str:
    conf = r.configs[0].coverage.confidence if r.configs else 0.0
    unit = r.yardstick.unit
    afl = aflpp_versions(t.stats for c in r.configs for t in c.trials)
    widest = max([len(c.config.members) for c in r.configs] + [1])
    at_once = (f"{r.jobs} at once (one per core, " if widest == 1 else  # the runner's core groups of `widest`
               f"each trial up to {widest} afl-fuzz instances, one core each, {max(1, r.jobs // widest)} trial"
               f"{'s' if r.jobs // widest > 1 else ''} at once (")
    lines = [f"# autotune compare: {target_name(r.target)}",
             "",
             f"{r.trials} trials x {r.seconds} s of afl-fuzz ({afl}; builds by {compilers_text(r.compilers)}) "
             f"per configuration, {at_once}"
             f"interleaved across configurations), afl-fuzz RNG seeds -s {r.rng_seed}..{r.rng_seed + r.trials - 1} "
             f"(trial k of every configuration has the same seed), {r.seeds} seeds.",
             "",
             f"**Yardstick** (every configuration measured alike): `{r.yardstick.kind}`: {r.yardstick.description}; "
             f"binary `{r.yardstick.binary}` (sha256 {r.yardstick.sha256[:16]}...).",
             "",
             f"Medians with the order-statistic interval of the median [low, high] (binomial, Conover 1999 3.2; "
             f"actual coverage {100 * conf:.1f} % with {r.trials} trials).",
             "",
             f"| configuration | yardstick {unit} | execs/s | queue (corpus_count) | afl edges_found (own map) | "
             "crashes | build |",
             "|---|---|---|---|---|---|---|"]
    for o in r.configs:
        ef = sorted(t.stats.get("edges_found") or 0 for t in o.trials)
        crashes = sum(t.kept.get("crashes", 0) for t in o.trials)
        lines.append(f"| {o.config.name} | {_ci(o.coverage, '.0f')} | {_ci(o.execs_per_s, ',.0f')} | "
                     f"{_ci(o.corpus_count, '.0f')} | {ef[len(ef) // 2] if ef else '-'} | {crashes} | "
                     f"{o.config.description} |")
    lines += _portfolio_lines(r)
    if r.pairs:
        lines += ["", "## Pairs", "",
                  "Mann-Whitney U, two-sided (exact over every split of the pooled trials, ties at mid-ranks; "
                  "asymptotic beyond 200,000 splits); A12 = P(a's trial > b's), ties half (Vargha & Delaney 2000: "
                  "0.56 small, 0.64 medium, 0.71 large). The final count is the headline; its mean over the "
                  "campaign (the area under a trial's coverage curve over its length) says who got there sooner.", "",
                  "| a | b | measure | median a | median b | U | p | A12 | effect |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for p in r.pairs:
            fmt = ",.0f" if p.measure == "execs_per_s" else ".1f"
            lines.append(f"| {p.a} | {p.b} | {measure_label(p.measure, unit)} | {format(p.median_a, fmt)} | "
                         f"{format(p.median_b, fmt)} | "
                         f"{p.test.u:g} | {p.test.p:.4f} ({p.test.method}) | {p.a12:.3f} | {p.magnitude} |")
    lines += _llvm_cov_table(r) + _remeasure_table(r, unit)
    if r.bugs is not None:
        lines += bugs_markdown(r.bugs, aflpp=afl)
    lines += ["", f"## Coverage over time (yardstick {unit}, median [min, max] over the trials)", "",
              "| t (s) | " + " | ".join(o.config.name for o in r.configs) + " |",
              "|---|" + "---|" * len(r.configs)]
    if r.configs and r.configs[0].curve:
        for i, pt in enumerate(r.configs[0].curve):
            cells = []
            for o in r.configs:
                c = o.curve[i] if i < len(o.curve) else None
                cells.append(f"{c.median:.0f} [{c.low:.0f}, {c.high:.0f}]" if c else "-")
            lines.append(f"| {pt.t_s:g} | " + " | ".join(cells) + " |")
    if r.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in r.notes]
    lines += ["", f"Wall time {r.wall_s:.0f} s. Per-trial figures: compare.json and trials/<config>/trial-<k>/trial.json.",
              ""]
    return "\n".join(lines)


def _portfolio_lines(r: CompareResult) -> list[str]:
    """Per portfolio configuration, each instance's part (medians over the trials): its own finds'
    edges, the edges it reached first, those no other instance reached, its execs/s."""
    import statistics

    out: list[str] = []
    for o in r.configs:
        if not o.config.members:
            continue
        if not out:
            out += ["", "## Portfolios: who found what (medians over the trials)", "",
                    "Own finds leave out the seeds and what an instance imported from the others by afl-fuzz's sync.",
                    ""]
        out += [f"**{o.config.name}**: {o.config.description}.", "",
                "| instance | configuration | variation | own-find edges | reached first | no other reached | execs/s |",
                "|---|---|---|---|---|---|---|"]
        specs = o.trials[0].spec.members if o.trials else ()
        for j, m in ((j, i) for j, first in enumerate(specs) for i in first.chain()):
            used = o.config.members[j] if m is specs[j] else o.config.members[j].then
            def med(key: str) -> str:
                vals = [t.yardstick.by_instance[m.name][key] for t in o.trials
                        if t.yardstick and t.yardstick.by_instance and m.name in t.yardstick.by_instance]
                return f"{statistics.median(vals):g}" if vals else "-"
            eps = [float(t.stats["members"][m.name]["execs_per_sec"] or 0) for t in o.trials
                   if m.name in (t.stats.get("members") or {})]
            var = " ".join(m.afl_args + tuple(f"{k}={v}" for k, v in m.env.items() if k.startswith("AFL_"))) or "-"
            out.append(f"| {m.name} | {used.name} | {var} | {med('edges')} | {med('first')} | "
                       f"{med('only')} | {statistics.median(eps):,.0f} |" if eps else "| - |")
        out.append("")
    return out
