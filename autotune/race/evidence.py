"""What the portfolio study measured of sensitive secondaries, cited beside a portfolio race's recommendation.

A race of two or more instances (`--instances N`) judges its candidates in minutes; the study
(benchmarks/results/plan-2026-12-01-portfolio-study.md, issue 54) judged the same question in ten
30-minute two-instance campaigns an arm, by known bugs. Its plan (amendment of 2026-12-04 13:55) fixed
in advance what the race does with the answer (:func:`secondary_rule`): our sensitive secondary found
sooner on a library and later on none, a race judged by bugs tries it first among its candidates;
otherwise the race's rule stays (a secondary is recommended only when it wins its race) and its report
says so, with the figures. They live here, once, as the pooled statistics recorded them (``source``);
tests/test_race_evidence.py checks every figure against that file.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArmFinding:
    """One secondary's arm against AFL++'s default pair: ``combined_p``, the two-sided p of the combined
    time-to-trigger test over whole trials (a permutation test; ``later_side`` when its z favours the
    default pair); ``bugs_sooner`` and ``bugs_later``, the bugs whose own log-rank test stays below 0.05
    after Holm's correction, by side; ``edges``, its median union yardstick edges at the horizon, with
    the Mann-Whitney U p against the default pair's; ``main_execs`` and ``secondary_execs``, the median
    execs/s of its -M and its -S; ``bugs``, its median known bugs triggered per trial, with
    ``bugs_p``, the Mann-Whitney U p of bugs per trial against the default pair's."""

    arm: str
    secondary: str
    combined_p: float
    later_side: bool
    bugs_sooner: tuple[str, ...]
    bugs_later: tuple[str, ...]
    edges: float
    edges_p: float
    main_execs: float
    secondary_execs: float
    bugs: float
    bugs_p: float
    ours: bool = True  # our runtime's secondary (arm B); False: AFL++'s own build (arm C)

    @property
    def secondary_speed(self) -> float:
        """The -S's median execs/s over the -M's."""
        return self.secondary_execs / self.main_execs

    def later(self) -> bool:
        """*Later* by the plan's amendment of 2026-12-04 13:55: the combined test significant on the side
        of later, or a bug's Holm-corrected log-rank test on that side."""
        return (self.combined_p < 0.05 and self.later_side) or bool(self.bugs_later)

    def sooner(self) -> bool:
        """*Sooner*, the same on the other side, and not later by any bug."""
        return ((self.combined_p < 0.05 and not self.later_side) or bool(self.bugs_sooner)) and not self.later()


@dataclass(frozen=True)
class StudyFinding:
    """One library's result: ``trials`` campaigns of ``minutes`` an arm, two instances on two cores,
    AFL++'s default pair (arm ``baseline``, ``baseline_edges`` and ``baseline_bugs``, its medians) against
    each of ``arms``; ``same_bugs``, when every trial of every arm triggered the same known bugs, how
    many (None: the bugs a trial triggered varied)."""

    library: str
    trials: int
    minutes: int
    aflpp: str
    clang: str
    baseline: str
    baseline_edges: float
    baseline_bugs: float
    same_bugs: int | None
    arms: tuple[ArmFinding, ...]
    source: str

    def sooner(self) -> tuple[str, ...]:
        """The arms the study found sooner: what would change the race's order (the amendment's rule 1)."""
        return tuple(a.arm for a in self.arms if a.sooner())

    def text(self) -> str:
        arms = "; ".join(
            f"{a.secondary} (arm {a.arm}) combined p = {a.combined_p:.2f} on the side of "
            f"{'later' if a.later_side else 'sooner'}"
            + "".join(f", {', '.join(bugs)} {side} after Holm" for bugs, side in
                      ((a.bugs_sooner, "sooner"), (a.bugs_later, "later")) if bugs)
            + f", {_num(a.edges)} union yardstick edges against {_num(self.baseline_edges)} "
            f"(Mann-Whitney p = {a.edges_p:.3f}), its -S at {a.secondary_speed:.2f}x its -M's execs/s"
            for a in self.arms)
        sooner = self.sooner()
        found = (f"sooner than AFL++'s default pair: arm {', '.join(sooner)}" if sooner
                 else "no sensitive secondary triggered a known bug sooner than AFL++'s default pair")
        if self.same_bugs is not None:
            bugs = f"every trial of every arm triggered the same {self.same_bugs} bugs"
        else:
            bugs = (f"known bugs a trial triggered, median: {self.baseline} {_num(self.baseline_bugs)}, "
                    + ", ".join(f"{a.arm} {_num(a.bugs)} (Mann-Whitney p = {a.bugs_p:.2f})" for a in self.arms))
        return (f"On {self.library} ({self.trials} x {self.minutes} min an arm, two instances, {self.aflpp}, "
                f"{self.clang}; {bugs}) {found}: {arms} ({self.source}).")

    def short(self) -> str:
        """One line for the terminal."""
        when = f"({self.trials} x {self.minutes} min an arm, {self.aflpp})"
        sooner = [a.secondary for a in self.arms if a.sooner()]
        if sooner:
            return (f"on {self.library}, {' and '.join(sooner)} as the -S triggered known bugs sooner than "
                    f"AFL++'s default pair {when}")
        if len(self.arms) > 1:
            who = "neither " + " nor ".join(a.secondary for a in self.arms) + " as the -S triggered a known bug"
        else:
            who = f"{self.arms[0].secondary} as the -S triggered no known bug"
        return f"on {self.library}, {who} sooner than AFL++'s default pair {when}"


def finding_from_pooled(doc: dict, *, library: str, source: str,
                        secondaries: dict[str, tuple[str, bool]]) -> StudyFinding:
    """The :class:`StudyFinding` a pooled statistics document (benchmarks/bugs/pool.py's pooled.json) records:
    its first arm the baseline, each other arm's ``secondaries[arm]`` = (how the text names its -S, whether
    it is ours). The one reading of that file: benchmarks/bugs/study_finding.py prints it as the literal
    below, and tests/test_race_evidence.py checks every literal against it."""
    arms = {a["name"]: a for a in doc["arms"]}
    base = doc["arms"][0]
    bugs = doc["bugs"]
    combined = {c["config"]: c for c in bugs["combined"] if c["event"] == "trigger"}
    edges = {m["arm"]: m for m in doc["measures"] if m["measure"] == "yardstick_edges"}
    per_trial, tests = bugs["per_trial"], {t["config"]: t for t in bugs["per_trial_tests"]}
    triggered: dict[str, list[bool]] = {}
    for sv in bugs["survival"]:
        if sv["event"] == "trigger" and sv["events"]:
            triggered.setdefault(sv["bug"], []).append(sv["events"] == sv["trials"])
    same = {v for p in per_trial.values() for v in p["values"]} == {len(triggered)} and all(
        len(v) == len(arms) and all(v) for v in triggered.values())

    def arm(name: str) -> ArmFinding:
        holm = [t for t in bugs["logrank"] if t["event"] == "trigger" and t["config"] == name
                and t["p_holm"] is not None and t["p_holm"] < 0.05]
        by_instance = arms[name]["execs_per_s_median_by_instance"]
        text, ours = secondaries[name]
        return ArmFinding(arm=name, secondary=text, combined_p=combined[name]["p"], later_side=combined[name]["z"] < 0,
                          bugs_sooner=tuple(t["bug"] for t in holm if t["z"] > 0),
                          bugs_later=tuple(t["bug"] for t in holm if t["z"] < 0),
                          edges=edges[name]["median"], edges_p=edges[name]["mann_whitney"]["p"],
                          main_execs=by_instance["main"], secondary_execs=by_instance["s1"],
                          bugs=per_trial[name]["median"], bugs_p=tests[name]["mann_whitney"]["p"], ours=ours)

    compilers = sorted({c for a in doc["arms"] for c in a["compilers"].values()})
    return StudyFinding(library=library, trials=base["trials"], minutes=int(round(base["trial_seconds"] / 60)),
                        aflpp=base["aflpp"], clang=", ".join(compilers), baseline=base["name"],
                        baseline_edges=base["yardstick_edges_median"], baseline_bugs=per_trial[base["name"]]["median"],
                        same_bugs=len(triggered) if same else None,
                        arms=tuple(arm(a["name"]) for a in doc["arms"][1:]), source=source)


def _num(x: float) -> str:
    return f"{x:,.1f}".removesuffix(".0")


# libxml2 2.9.10's canary build (benchmarks/bugs), 2026-12-01 to 2026-12-04: A AFL++'s default pair, B
# the default -M with our ctx-2 -S (inline, indexed, 131,072 dense slots), C the default -M with
# AFL++'s own CLASSIC,CTX-2 -S (OSS-Fuzz's practice).
LIBXML2 = StudyFinding(
    library="libxml2", trials=10, minutes=30, aflpp="AFL++ 5.02c", clang="clang 21.1.8",
    baseline="A", baseline_edges=9754.0, baseline_bugs=5.0, same_bugs=5,
    arms=(ArmFinding(arm="B", secondary="our collision-free ctx-2", combined_p=0.6640625, later_side=True,
                     bugs_sooner=(), bugs_later=(),
                     edges=9619.5, edges_p=0.00893069778518695, main_execs=5978.625, secondary_execs=3646.875,
                     bugs=5.0, bugs_p=1.0),
          ArmFinding(arm="C", secondary="AFL++'s CLASSIC,CTX-2", combined_p=0.353515625, later_side=True,
                     bugs_sooner=(), bugs_later=(),
                     edges=9658.0, edges_p=0.03546298902336054, main_execs=5846.725, secondary_execs=4341.665,
                     bugs=5.0, bugs_p=1.0, ours=False)),
    source="benchmarks/results/portfolio-study-2026-12-01-libxml2-pooled/pooled.json")

# expat 2.2.10's canary build (benchmarks/bugs), 2026-12-04 to 2026-12-05: A AFL++'s default pair, B the
# default -M with our ngram-4 -S (inline, indexed, 131,072 dense slots). No C arm (the plan).
EXPAT = StudyFinding(
    library="expat", trials=10, minutes=30, aflpp="AFL++ 5.02c", clang="clang 21.1.8",
    baseline="A", baseline_edges=5222.0, baseline_bugs=4.0, same_bugs=None,
    arms=(ArmFinding(arm="B", secondary="our collision-free ngram-4", combined_p=0.296875, later_side=True,
                     bugs_sooner=(), bugs_later=(),
                     edges=5185.0, edges_p=0.024562125181320227, main_execs=48232.14, secondary_execs=12127.75,
                     bugs=5.0, bugs_p=0.7017471692394293),),
    source="benchmarks/results/portfolio-study-2026-12-04-expat-pooled/pooled.json")

STUDIES: tuple[StudyFinding, ...] = (LIBXML2, EXPAT)


@dataclass(frozen=True)
class SecondaryRule:
    """What the studies set for a portfolio race's secondaries, by the plan's amendment of 2026-12-04 13:55:
    ``rule`` 1, our sensitive secondary sooner on some library and later on none (a race judged by bugs
    tries it before OSS-Fuzz's portfolio); 2, AFL++'s own CLASSIC,CTX-2 secondary sooner on libxml2 and ours
    not (OSS-Fuzz's portfolio stays first); 3, no sensitive secondary sooner anywhere (the order stays).
    In every case a secondary is recommended only when it wins its own race. ``sooner``: the arms found
    sooner, as "secondary on library"."""

    rule: int
    sooner: tuple[str, ...]

    @property
    def sensitive_first(self) -> bool:
        """A race judged by bugs puts our first sensitive secondary before OSS-Fuzz's portfolio."""
        return self.rule == 1

    def text(self) -> str:
        if self.rule == 1:
            return (f"So a portfolio race judged by bugs tries our sensitive secondary first among its candidates, "
                    f"before OSS-Fuzz's portfolio ({', '.join(self.sooner)} sooner); it is recommended only when "
                    "it wins its own race, otherwise AFL++'s default pair.")
        if self.rule == 2:
            return (f"Our collision-free CTX-2 did not carry what AFL++'s colliding CLASSIC,CTX-2 build gave "
                    f"({', '.join(self.sooner)} sooner), so OSS-Fuzz's portfolio stays first among a portfolio "
                    "race's candidates; a secondary is recommended only when it wins its own race, otherwise "
                    "AFL++'s default pair.")
        return "So a secondary is recommended only when it wins its own race; otherwise AFL++'s default pair."


def secondary_rule(studies: tuple[StudyFinding, ...] = STUDIES) -> SecondaryRule:
    """The rule ``studies`` set (:class:`SecondaryRule`): the race's one reading of the study."""
    def found(pick) -> tuple[str, ...]:
        return tuple(f"{a.secondary} on {s.library}" for s in studies for a in s.arms if pick(s, a))

    ours_sooner = found(lambda s, a: a.ours and a.sooner())
    if ours_sooner and not found(lambda s, a: a.ours and a.later()):
        return SecondaryRule(rule=1, sooner=ours_sooner)
    theirs = found(lambda s, a: s.library == "libxml2" and not a.ours and a.sooner())
    if theirs and not found(lambda s, a: s.library == "libxml2" and a.ours and a.sooner()):
        return SecondaryRule(rule=2, sooner=theirs)
    return SecondaryRule(rule=3, sooner=())


def secondaries_line() -> str:
    """The study's answer in one line, for the terminal."""
    return "the portfolio study: " + "; ".join(s.short() for s in STUDIES)


def secondaries_note() -> str:
    """The study's answer, for a portfolio race's report: what it found on every library measured, and
    the rule it set."""
    return ("The portfolio study (docs/RESULTS.md, \"Portfolios judged by bugs\"). "
            + " ".join(s.text() for s in STUDIES) + " " + secondary_rule().text())
