"""The bugs section of compare.md (and of the race's report): time-to-trigger and time-to-reach per
configuration and bug, the log-rank tests against the baseline, bugs triggered per trial, and the
bugs only one configuration triggered."""

from __future__ import annotations

from autotune.bugs.survival import ALPHA, BugReport, BugSurvival


def _s(x: float | None) -> str:
    return "never" if x is None else f"{x:,.1f}"


def _cell(c: BugSurvival) -> str:
    return (f"{c.events}/{c.trials}, median {_s(c.median_s)}, RMST {c.rmst_s:,.1f} "
            f"[{c.rmst_low_s:,.1f}, {c.rmst_high_s:,.1f}]")


def bugs_markdown(rep: BugReport, *, aflpp: str = "") -> list[str]:
    h = rep.horizon_s
    lines = ["", "## Bugs (known-bug canaries)", "",
             f"Every kept input (queue, crashes, hangs) replayed through the canary build; per bug the earliest kept "
             f"input that reached / triggered it (seconds since the start; the campaigns ran with fatal canaries, "
             f"so a trigger is a crash with its time){', ' + aflpp if aflpp else ''}. A trial that never did is "
             f"censored at {h:g} s. Cells: trials that did / trials, Kaplan-Meier median, RMST (restricted mean "
             f"time to the bug up to {h:g} s, never counted as {h:g}; lower is sooner) with its 95 % interval "
             "(normal, Klein-Moeschberger variance of the Kaplan-Meier estimate). Baseline for the tests: "
             f"**{rep.baseline}**.", ""]
    if rep.scope:
        lines += [f"**Scope:** {rep.scope}.", ""]
    if not rep.bugs:
        return lines + ["No trial reached any canary.", ""] + [f"- {n}" for n in rep.notes]
    for event, title in (("trigger", "Time to trigger (s)"), ("reach", "Time to reach (s)")):
        lines += [f"### {title}", "", "| bug | " + " | ".join(rep.configs) + " |", "|---|" + "---|" * len(rep.configs)]
        for b in rep.bugs:
            lines.append(f"| {b} | " + " | ".join(_cell(rep.cell(c, b, event)) for c in rep.configs) + " |")
        lines.append("")
    tests = [t for t in rep.logrank]
    if tests:
        lines += ["### Log-rank against the baseline", "",
                  "Per bug: chi-square (1 df) and p of lifelines' log-rank test, z signed by scipy's (z > 0: the "
                  "configuration gets there sooner than the baseline). Combined: Stouffer's z over the bugs either "
                  "side saw (each bug weighs the same), its two-sided p from relabelling whole trials (the bugs of "
                  "one trial are not independent, and the normal tail, which treats them as if they were, called one "
                  "half of a 5-vs-5 split of the libxml2 study's default trials sooner in 11.5 % of the splits at a "
                  "nominal 5 %)" + _methods(rep.combined) + ". Holm: a bug's p after Holm's correction over the "
                  "configuration's per-bug tests of that event (a target has several bugs; one below 0.05 by chance "
                  "is likely).", "",
                  "| configuration | event | bug | chi2 | z | p | Holm |", "|---|---|---|---|---|---|---|"]
        for t in list(rep.logrank) + list(rep.combined):
            if not t.informative:
                lines.append(f"| {t.config} | {t.event} | {t.bug} | - | - | nothing to test (no events, or all at one "
                             "time) | - |")
                continue
            star = " *" if t.p_judged < ALPHA else ""
            name = f"{t.bug} ({t.bugs} bugs)" if t.bug == "(combined)" else t.bug
            holm_p = "-" if t.p_holm is None else f"{t.p_holm:.4f}"
            lines.append(f"| {t.config} | {t.event} | {name} | {t.chi2:.3f} | {t.z:+.3f} | {t.p:.4f} | {holm_p}{star} |")
        lines += ["", f"\\* p < {ALPHA}: a bug's after Holm's correction, the combined test's its own.", ""]
    lines += ["### Bugs triggered per trial", "", "| configuration | median [low, high] | values | Mann-Whitney p "
              "vs baseline | A12 |", "|---|---|---|---|---|"]
    by = {t.config: t for t in rep.per_trial_tests}
    for c in rep.configs:
        s = rep.per_trial[c]
        t = by.get(c)
        lines.append(f"| {c} | {s.median:g} [{s.low:g}, {s.high:g}] | {', '.join(f'{v:g}' for v in s.values)} | "
                     f"{f'{t.test.p:.4f}' if t else '-'} | {f'{t.a12:.3f}' if t else '-'} |")
    lines += ["", "Bugs only one configuration triggered: " +
              (", ".join(f"{b} ({c})" for b, c in rep.only.items()) if rep.only else "none") + "."]
    if rep.notes:
        lines += [""] + [f"- {n}" for n in rep.notes]
    return lines + [""]


def _methods(combined) -> str:
    """The combined tests' relabellings, once each (": all of the 1024 swaps within 10 seed-paired
    trials"); a document from before the permutation says its p is the normal tail's."""
    how = sorted({t.method or "the normal tail (a document written before the permutation test)"
                  for t in combined if t.informative})
    return (": " + "; ".join(how)) if how else ""
