"""compare.md: the per-configuration table and the pairwise tests."""

from __future__ import annotations

from autotune.compare.compare import CompareResult
from autotune.stats import Summary


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


def markdown(r: CompareResult) -> str:
    conf = r.configs[0].coverage.confidence if r.configs else 0.0
    lines = [f"# autotune compare: {target_name(r.target)}",
             "",
             f"{r.trials} trials x {r.seconds} s of afl-fuzz per configuration, {r.jobs} at once (one per core, "
             f"interleaved across configurations), afl-fuzz RNG seeds -s {r.rng_seed}..{r.rng_seed + r.trials - 1} "
             f"(trial k of every configuration has the same seed), {r.seeds} seeds.",
             "",
             f"**Yardstick** (every configuration measured alike): `{r.yardstick.kind}`: {r.yardstick.description}; "
             f"binary `{r.yardstick.binary}` (sha256 {r.yardstick.sha256[:16]}...).",
             "",
             f"Medians with the order-statistic interval of the median [low, high] (binomial, Conover 1999 3.2; "
             f"actual coverage {100 * conf:.1f} % with {r.trials} trials).",
             "",
             "| configuration | yardstick edges | execs/s | queue (corpus_count) | afl edges_found (own map) | "
             "crashes | build |",
             "|---|---|---|---|---|---|---|"]
    for o in r.configs:
        ef = sorted(t.stats.get("edges_found") or 0 for t in o.trials)
        crashes = sum(t.kept.get("crashes", 0) for t in o.trials)
        lines.append(f"| {o.config.name} | {_ci(o.coverage, '.0f')} | {_ci(o.execs_per_s, ',.0f')} | "
                     f"{_ci(o.corpus_count, '.0f')} | {ef[len(ef) // 2] if ef else '-'} | {crashes} | "
                     f"{o.config.description} |")
    if r.pairs:
        lines += ["", "## Pairs", "",
                  "Mann-Whitney U, two-sided (exact over every split of the pooled trials, ties at mid-ranks; "
                  "asymptotic beyond 200,000 splits); A12 = P(a's trial > b's), ties half (Vargha & Delaney 2000: "
                  "0.56 small, 0.64 medium, 0.71 large).", "",
                  "| a | b | measure | median a | median b | U | p | A12 | effect |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for p in r.pairs:
            fmt = ",.0f" if p.measure == "execs_per_s" else ".1f"
            lines.append(f"| {p.a} | {p.b} | {p.measure} | {format(p.median_a, fmt)} | {format(p.median_b, fmt)} | "
                         f"{p.test.u:g} | {p.test.p:.4f} ({p.test.method}) | {p.a12:.3f} | {p.magnitude} |")
    lines += ["", "## Coverage over time (yardstick edges, median [min, max] over the trials)", "",
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
