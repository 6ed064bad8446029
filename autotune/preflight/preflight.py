"""`autotune preflight`: does the tuned configuration still fit this target, corpus and host?

Steps: read the tuned directory (corrupt: exit 1), find AFL++ (missing: exit 1), re-run a short
probe of the target with the corpus (default 30 s), then the checks of autotune.preflight.checks.
Findings are ok / warning / error; the verdict is "fits" (exit 0, warnings allowed) or "does not
fit" (exit 2, any error). ``--github`` prints GitHub Actions workflow commands
(``::error file=F,line=N::msg``) so the errors annotate the env file they concern.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from autotune import afl
from autotune.preflight.checks import AFL_TOOLS, CHECKS, Context
from autotune.preflight.findings import LEVELS, PreflightFinding
from autotune.preflight.tuned import load_tuned
from autotune.probe.campaign import run_probe
from autotune.probe.options import ProbeSettings

SCHEMA_VERSION = 1
DEFAULT_BUDGET_S = 30.0
EXIT_FITS, EXIT_COULD_NOT_RUN, EXIT_DOES_NOT_FIT = 0, 1, 2


@dataclass
class PreflightResult:
    tuned_dir: str
    harness: str
    corpus_dir: str | None
    budget_s: float
    probe: dict  # the short probe's campaign figures
    findings: list[PreflightFinding]
    schema_version: int = SCHEMA_VERSION
    notes: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return {lvl: sum(1 for f in self.findings if f.severity == lvl) for lvl in LEVELS}

    @property
    def fits(self) -> bool:
        return self.counts["error"] == 0

    @property
    def exit_code(self) -> int:
        return EXIT_FITS if self.fits else EXIT_DOES_NOT_FIT

    @property
    def verdict(self) -> str:
        c = self.counts
        if self.fits:
            return f"preflight: the configuration fits ({c['ok']} ok, {c['warning']} warnings)"
        return (f"preflight: the configuration does NOT fit ({c['error']} errors, {c['warning']} warnings, "
                f"{c['ok']} ok)")

    def sorted_findings(self) -> list[PreflightFinding]:
        return sorted(self.findings, key=lambda f: -LEVELS.index(f.severity))

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "tuned_dir": self.tuned_dir, "harness": self.harness,
                "corpus_dir": self.corpus_dir, "budget_s": self.budget_s, "probe": self.probe,
                "findings": [f.to_dict() for f in self.sorted_findings()], "counts": self.counts,
                "fits": self.fits, "exit_code": self.exit_code, "verdict": self.verdict, "notes": list(self.notes)}


@dataclass(frozen=True)
class PreflightHost:
    """Where the checks look besides the tuned directory: the afl-cc build ``afl_binary`` to check against
    afl-build.env (None: none), the caller's environment ``env`` (None: this process's), and the procfs and
    sysfs trees to read (tests give fake ones)."""

    afl_binary: Path | None = None
    env: dict[str, str] | None = None
    procfs_root: Path = Path("/proc")
    sysfs_root: Path = Path("/sys")


def run_preflight(*, tuned_dir: Path, harness: Path, corpus_dir: Path | None,
                  probe: ProbeSettings = ProbeSettings(time_s=DEFAULT_BUDGET_S), host: PreflightHost = PreflightHost(),
                  demo: bool = False, on_progress: Callable | None = None) -> PreflightResult:
    """Run the checks after a short probe of ``harness`` (``probe``: its settings, ``probe.time_s`` the
    budget; ``demo``: the demo target, as probe.json records); AutotuneError (exit 1) when preflight
    cannot run at all."""
    env = host.env
    tuned = load_tuned(tuned_dir)
    run_env = afl.base_env(env) | {k: v for k, v in (env or {}).items() if k.startswith("AFL_")}
    ctx_tools: dict[str, str] = {}
    work = Path(tempfile.mkdtemp(prefix="autotune-preflight-"))
    try:
        for tool in AFL_TOOLS:  # before spending the probe budget: missing AFL++ = could not run
            ctx_tools[tool] = afl.find_tool(tool, env=run_env)
        probed = run_probe(binary=harness, out_dir=work / "probe", corpus_dir=corpus_dir, settings=probe, demo=demo,
                           on_progress=on_progress)
        ctx = Context(tuned=tuned, probe=probed, harness=harness, env=run_env, afl_binary=host.afl_binary,
                      procfs_root=host.procfs_root, sysfs_root=host.sysfs_root, tools=ctx_tools)
        findings: list[PreflightFinding] = []
        for check in CHECKS:
            findings.extend(check(ctx))
        c = probed.campaign
        return PreflightResult(tuned_dir=str(tuned.path), harness=str(harness),
                               corpus_dir=str(corpus_dir) if corpus_dir else None, budget_s=probe.time_s,
                               probe={"execs": c.execs, "execs_per_s": round(c.execs_per_s, 1), "kept": c.kept,
                                      "crashes": c.crashes, "hangs": c.hangs, "elapsed_s": round(c.elapsed_s, 2)},
                               findings=findings)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _escape(s: str, *, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return s.replace(":", "%3A").replace(",", "%2C") if prop else s


def github_annotations(result: PreflightResult) -> list[str]:
    """GitHub Actions workflow commands: one per warning/error, and a notice with the verdict."""
    lines = []
    for f in result.sorted_findings():
        if f.severity == "ok":
            continue
        props = [f"title={_escape('autotune preflight: ' + f.check, prop=True)}"]
        if f.file:
            props.insert(0, f"file={_escape(f.file, prop=True)}")
            if f.line:
                props.insert(1, f"line={f.line}")
        lines.append(f"::{f.severity} {','.join(props)}::{_escape(f.message + ' | fix: ' + f.fix)}")
    lines.append(f"::{'notice' if result.fits else 'error'}::{_escape(result.verdict)}")
    return lines
