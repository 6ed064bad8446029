"""The preflight checks, small functions run in order over one :class:`Context`.

Each returns findings (autotune.preflight.findings). The collision limit is the one the recommendation was
made under (recommendation.json); the counter-overflow limit is derived (autotune.preflight.tuned).
"""

from __future__ import annotations

import mmap
import re
from dataclasses import dataclass, field
from pathlib import Path

from autotune import afl
from autotune.filenames import AFL_BUILD_ENV, AUTOTUNE_RUN_ENV
from autotune.io import read_json
from autotune.preflight.findings import PreflightFinding as F
from autotune.preflight.tuned import AFL_HASHED_MAP_SLOTS, PROBE_OVERFLOW_SPREAD, TUNED_OVERFLOW_SLACK, TunedDir
from autotune.probe.result import ProbeResult, load_probe
from autotune.profile import detect_host
from autotune.profile.checks import run_host_checks
from autotune.runtime.config import RuntimeConfig
from autotune.target import build_vars_of, read_record, sha256_file
from autotune.target.harness import has_probe_server
from autotune.tune.defaults import DEFAULT_MAX_COUNTER_OVERFLOW
from autotune.vocabulary import COUNTER_BITS_VAR, has_map_size
from autotune.vocabulary import LAYOUTS, VARIABLES

# tune picks the smallest map under the limit, so a configuration sits just below it; a short
# re-probe's Chao estimate varies by a few per cent (its sd). Up to 10 % over the limit is a
# warning (with the size that gives room), beyond it an error.
COLLISION_TOLERANCE = 0.10
AFL_DIR = Path("/usr/lib/afl")  # Debian's afl++: the LLVM passes read AFL_LLVM_* too


@dataclass
class Context:
    tuned: TunedDir
    probe: ProbeResult  # the fresh short probe
    harness: Path  # the autotune cc build that was probed
    env: dict[str, str]  # the environment afl runs with (PATH etc.)
    afl_binary: Path | None = None  # an afl-cc build of the target to check against afl-build.env
    procfs_root: Path = Path("/proc")
    sysfs_root: Path = Path("/sys")
    tools: dict[str, str] = field(default_factory=dict)


def _file(tuned: TunedDir, name: str) -> str:
    return str(tuned.path / name)


def _lost(*, keys: float, hash_slots: int, dense: int | None, layout: str = "twolevel") -> float:
    return LAYOUTS[layout].lost_keys(hash_slots=hash_slots, dense_slots=dense, n_keys=keys)


def _smallest_fit(*, keys: float, limit: float, layout: str) -> tuple[int, int | None] | None:
    """The smallest (hash slots, dense slots) of ``layout`` that loses at most ``limit`` of ``keys``
    (autotune.runtime.config Layout.smallest_fit, the race's rule too)."""
    return LAYOUTS[layout].smallest_fit(keys=keys, limit=limit)


def _size_fix(rt: RuntimeConfig, fit: tuple[int, int | None] | None) -> str:
    if fit is None:
        return "re-run `autotune tune` with a larger --max-collision-rate or another metric"
    h, dense = fit
    if rt.dense_slots is not None:  # a two-level map: never smaller than what is set
        h, dense = max(h, rt.index_slots), max(dense or 0, rt.map_slots)
    need = RuntimeConfig.sized(metric=rt.metric, layout=rt.layout, hash_slots=h, dense_slots=dense,
                               counter_bits=rt.counter_bits)
    sets = " and ".join(f"{name}={getattr(need, VARIABLES[name].field)}" for name in rt.layout_spec.size_vars)
    return f"set {sets} in autotune-run.env (or re-run `autotune tune`)"


def _estimate(ctx: Context, metric: str) -> tuple[int, float]:
    m = ctx.probe.metric(metric)
    return m.keys, max(float(m.keys), float(m.richness.estimate))


def check_collisions(ctx: Context) -> list[F]:
    t = ctx.tuned
    limit = t.max_collision_rate
    out = []
    rt = t.runtime
    if rt is not None and not has_map_size(rt.metric):
        seen, est = _estimate(ctx, rt.metric)
        out.append(F("collisions", "ok", f"{rt.metric}: one slot per guard, no collisions ({seen} guards seen; "
                                         "the map is the target's guard count)"))
    elif rt is not None:
        seen, est = _estimate(ctx, rt.metric)
        dense = rt.dense_slots
        lost = rt.layout_spec.lost_keys(hash_slots=rt.hash_slots, dense_slots=dense, n_keys=est)
        what = (f"{rt.metric}, {rt.layout}, {rt.hash_slots} {'index ' if dense else ''}slots"
                + (f", {dense} dense" if dense else ""))
        line = t.autotune_env.lines.get(rt.layout_spec.hash_var)
        if lost <= limit:
            out.append(F("collisions", "ok", f"{what}: {lost:.2%} of ~{est:.0f} keys ({seen} seen) lost to collisions "
                                             f"or dense overflow, under the limit {limit:.2%}"))
        elif lost <= limit * (1 + COLLISION_TOLERANCE):
            fit = _smallest_fit(keys=est, limit=limit, layout=rt.layout)
            out.append(F("collisions", "warning",
                         f"{what}: {lost:.2%} of ~{est:.0f} keys ({seen} seen) lost, at the limit {limit:.2%} "
                         f"(within the {COLLISION_TOLERANCE:.0%} allowance for the short probe's key estimate)",
                         f"give the map room: {_size_fix(rt, fit)}", file=_file(t, AUTOTUNE_RUN_ENV), line=line))
        else:
            fix = _size_fix(rt, _smallest_fit(keys=est, limit=limit, layout=rt.layout))
            out.append(F("collisions", "error", f"{what}: {lost:.2%} of ~{est:.0f} keys ({seen} seen) would be lost to "
                                                f"collisions or dense overflow, above the limit {limit:.2%}",
                         fix, file=_file(t, AUTOTUNE_RUN_ENV), line=line))
    am = t.afl_metric
    if am is not None:
        seen, est = _estimate(ctx, am)
        lost = _lost(keys=est, hash_slots=AFL_HASHED_MAP_SLOTS, dense=None, layout="flat")
        line = t.build_env.lines.get("AFL_LLVM_INSTRUMENT")
        if lost <= limit:
            out.append(F("afl_collisions", "ok", f"afl-build.env ({am}, AFL++'s 64 KiB map): {lost:.2%} of ~{est:.0f} "
                                                 f"keys collide, under the limit {limit:.2%}"))
        else:
            fit = _smallest_fit(keys=est, limit=limit, layout="flat")
            pow2 = fit[0].bit_length() - 1 if fit else None
            sev = "warning" if rt is not None else "error"
            fix = (f"rebuild AFL++ with MAP_SIZE_POW2={pow2} in include/config.h" if pow2 else "choose another metric")
            if rt is not None:
                fix = "fuzz the `autotune cc` build under autotune-run.env, or " + fix
            out.append(F("afl_collisions", sev, f"afl-build.env ({am}, AFL++'s 64 KiB map): {lost:.2%} of ~{est:.0f} keys "
                                               f"collide, above the limit {limit:.2%}", fix,
                         file=_file(t, AFL_BUILD_ENV), line=line))
    return out


def _overflow_share(ctx: Context, metric: str, width: int) -> float:
    for row in ctx.probe.metric(metric).overflow:
        if row.counter_bits == width:
            return row.overflow_share
    return 0.0  # 64-bit (and widths the census does not tabulate) never overflow in a run


def _tuned_share(ctx: Context, metric: str, width: int) -> float:
    """The overflow share the probe tune ran on saw (0 when that probe is not at hand)."""
    if ctx.tuned.probe_dir is None or not (ctx.tuned.probe_dir / "probe.json").is_file():
        return 0.0
    try:
        p = load_probe(ctx.tuned.probe_dir)
        return next((r.overflow_share for r in p.metric(metric).overflow if r.counter_bits == width), 0.0)
    except Exception:  # noqa: BLE001 - the old probe is optional context
        return 0.0


def overflow_limit(ctx: Context, metric: str, width: int) -> float:
    """tune has no counter-overflow limit: DEFAULT_MAX_COUNTER_OVERFLOW, or a little more than the
    tuned probe saw (autotune.preflight.tuned)."""
    return max(DEFAULT_MAX_COUNTER_OVERFLOW, TUNED_OVERFLOW_SLACK * _tuned_share(ctx, metric, width))


def check_counter_overflow(ctx: Context) -> list[F]:
    t = ctx.tuned
    out = []
    rt = t.runtime
    if rt is not None:
        limit = overflow_limit(ctx, rt.metric, rt.counter_bits)
        share = _overflow_share(ctx, rt.metric, rt.counter_bits)
        what = f"{share:.2%} of {rt.metric} keys overflow {rt.counter_bits}-bit counters"
        if share <= limit:
            out.append(F("counter_overflow", "ok", f"{what}, under the limit {limit:.2%}"))
        else:
            wider = next((w for w in (16, 32, 64) if w > rt.counter_bits and _overflow_share(ctx, rt.metric, w) <= limit), 64)
            where = dict(file=_file(t, AUTOTUNE_RUN_ENV), line=t.autotune_env.lines.get(COUNTER_BITS_VAR))
            fix = f"set AUTOTUNE_COUNTER_BITS={wider} in autotune-run.env"
            if share <= PROBE_OVERFLOW_SPREAD * limit:
                out.append(F("counter_overflow", "warning",
                             f"{what}, above the limit {limit:.2%} but within the spread of short probes (up to "
                             f"{PROBE_OVERFLOW_SPREAD:g}x the limit)",
                             f"{fix}, or run preflight with a longer --probe-time (e.g. 120) to tell", **where))
            else:
                out.append(F("counter_overflow", "error", f"{what}, above {PROBE_OVERFLOW_SPREAD:g}x the limit "
                                                          f"{limit:.2%}", fix, **where))
    am = t.afl_metric
    if am is not None:
        limit = overflow_limit(ctx, am, 8)
        share = _overflow_share(ctx, am, 8)
        if share <= limit:
            out.append(F("afl_counter_overflow", "ok", f"{share:.2%} of {am} keys overflow AFL++'s 8-bit counters"))
        else:
            out.append(F("afl_counter_overflow", "warning",
                         f"{share:.2%} of {am} keys overflow AFL++'s 8-bit counters (AFL++ has no wider ones)",
                         "fuzz the `autotune cc` build with AUTOTUNE_COUNTER_BITS=16 (autotune-run.env)",
                         file=_file(t, AFL_BUILD_ENV)))
    return out


AFL_TOOLS = ("afl-fuzz", "afl-cc", "afl-showmap")


def check_afl_present(ctx: Context) -> list[F]:
    """afl-fuzz, afl-cc, afl-showmap on PATH (a missing one raises ToolMissingError: could not run)."""
    for tool in AFL_TOOLS:
        if tool not in ctx.tools:
            ctx.tools[tool] = afl.find_tool(tool, env=ctx.env)
    return [F("afl_present", "ok", "AFL++ found: " + ", ".join(ctx.tools.values()))]


def check_afl_version(ctx: Context) -> list[F]:
    """Which AFL++ afl-fuzz is, and whether the harness's runtime speaks its fork-server protocol:
    4.04c's hello before 4.20c, the versioned handshake from 4.20c (kernels/aflfs.c)."""
    tool = ctx.tools["afl-fuzz"]
    v = afl.aflpp_version(tool, env=ctx.env)
    run_env = ctx.tuned.autotune_env
    forced = (run_env.values.get("AUTOTUNE_AFL_HANDSHAKE", "") if run_env else "") or "auto"
    env_file = str(run_env.path) if run_env else None
    env_line = run_env.lines.get("AUTOTUNE_AFL_HANDSHAKE") if run_env else None
    if v is None:
        return [F("afl_version", "warning", f"cannot tell which AFL++ {tool} is (no ++X.YYz version string in it "
                                            "or in its -h banner): the runtime will send 4.04c's hello, which "
                                            "afl-fuzz 4.x reads (4.20c and later with a warning)",
                  "use an afl-fuzz of AFL++ 4.04c or later, or set AUTOTUNE_AFL_HANDSHAKE=versioned in "
                  "autotune-run.env if it is 4.20c or later")]
    runtime_knows = "AUTOTUNE_AFL_HANDSHAKE" in _strings(ctx.harness, rb"AUTOTUNE_AFL_HANDSHAKE")
    what = {"old": "4.04c's fork-server hello", "versioned": "the versioned fork-server handshake (v1) of 4.20c+"}
    if v < afl.AflppVersion(4, 0, "a"):
        return [F("afl_version", "warning", f"{tool} is AFL++ {v}, older than 4.04c, the oldest AFL++ the runtime's "
                                            "fork server was run against",
                  "install AFL++ 4.04c or later (Debian 12 ships 4.04c)")]
    if forced == "versioned" and v.handshake == "old":
        return [F("afl_version", "error", f"{tool} is AFL++ {v}, which reads only 4.04c's fork-server hello, but "
                                          "autotune-run.env sets AUTOTUNE_AFL_HANDSHAKE=versioned (4.20c and later): "
                                          "the fork server would fail to start",
                  "remove AUTOTUNE_AFL_HANDSHAKE from autotune-run.env (auto picks the handshake)",
                  file=env_file, line=env_line)]
    speaks = "old" if forced == "old" or not runtime_knows else v.handshake
    msg = f"{tool} is AFL++ {v}; the harness's runtime speaks its protocol: {what[speaks]}"
    if v.handshake == "versioned" and speaks == "old":
        why = ("autotune-run.env sets AUTOTUNE_AFL_HANDSHAKE=old" if runtime_knows else
               f"the runtime in {ctx.harness} predates the versioned handshake")
        return [F("afl_version", "warning", f"{msg}, which afl-fuzz {v} still reads with the warning \"Old fork "
                                            f"server model is used by the target\" ({why})",
                  "rebuild the harness with this autotune's `autotune cc` and leave AUTOTUNE_AFL_HANDSHAKE unset",
                  file=env_file if forced == "old" else None, line=env_line if forced == "old" else None)]
    if (v.major, v.minor) > afl.CHECKED_UP_TO:
        newest = afl.AflppVersion(*afl.CHECKED_UP_TO, "c")
        return [F("afl_version", "warning", f"{msg}; AFL++ {v} is newer than {newest}, the newest afl-fuzz the "
                                            "runtime's fork server is tested against (futex sync of persistent "
                                            "children included)",
                  "run `autotune validate` with this afl-fuzz: it must start, report 100 % stability and not warn "
                  "\"target does not support futex synchronization\"; if it does, set AUTOTUNE_AFL_FUTEX=0 (pipes) "
                  f"or use AFL++ 4.04c-{newest}")]
    return [F("afl_version", "ok", msg)]


def check_afl_variables(ctx: Context) -> list[F]:
    t = ctx.tuned
    cc_tools = [ctx.tools["afl-cc"], *map(str, sorted(AFL_DIR.glob("*.so")))]
    known_cc = afl.known_variables(tools=cc_tools)
    known_fuzz = afl.known_variables(tools=[ctx.tools["afl-fuzz"]])
    out = []
    for envf, known, tool in ((t.build_env, known_cc, "afl-cc"), (t.run_env, known_fuzz, "afl-fuzz")):
        for name in envf.values:
            if name.startswith("AFL_") and name not in known:
                out.append(F("afl_variables", "error", f"{tool} ({ctx.tools['afl-cc' if tool == 'afl-cc' else 'afl-fuzz']}) "
                                                       f"does not know {name}: it would be ignored",
                             f"remove {name} from {envf.path.name}, or install an AFL++ that reads it",
                             file=str(envf.path), line=envf.lines.get(name)))
    if t.autotune_env is not None:
        names = _strings(ctx.harness, rb"AUTOTUNE_[A-Z0-9_]+")
        for name in t.autotune_env.values:
            if name.startswith("AFL_") and name not in known_fuzz:
                out.append(F("afl_variables", "error", f"afl-fuzz does not know {name}: it would be ignored",
                             f"remove {name} from autotune-run.env, or install an AFL++ that reads it",
                             file=str(t.autotune_env.path), line=t.autotune_env.lines.get(name)))
            if name.startswith("AUTOTUNE_") and name not in names:
                out.append(F("autotune_variables", "error", f"the harness {ctx.harness} does not read {name} "
                                                            "(its runtime is older or it was not built with autotune cc)",
                             "rebuild the harness with this autotune's `autotune cc`",
                             file=str(t.autotune_env.path), line=t.autotune_env.lines.get(name)))
    if not out:
        n = len(t.build_env.values) + len(t.run_env.values) + len(t.autotune_env.values if t.autotune_env else {})
        out.append(F("afl_variables", "ok", f"all {n} variables of the env files are known to afl-cc, afl-fuzz "
                                            "and the harness's runtime"))
    return out


def _strings(path: Path, pattern: bytes) -> set[str]:
    try:
        with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return {m.decode() for m in re.findall(pattern, mm)}
    except (OSError, ValueError):
        return set()


def check_build(ctx: Context) -> list[F]:
    """The binaries were built the way the tuned directory says (build records + SHA-256)."""
    t = ctx.tuned
    out = []
    if has_probe_server(ctx.harness):
        out.append(F("harness_build", "ok", f"{ctx.harness} carries autotune's runtime and driver (autotune cc)"))
    else:
        out.append(F("harness_build", "error", f"{ctx.harness} was not built with `autotune cc -fsanitize=fuzzer`",
                     "build the harness with autotune cc"))
    want = build_vars_of(t.build_env.values)
    binary = ctx.afl_binary
    if binary is None:
        vj = t.path / "validate.json"
        if not vj.is_file():
            out.append(F("afl_build", "warning", "no afl-cc build to check against afl-build.env (no --afl-binary, "
                                                 "no validate.json)",
                         f"run `autotune validate {t.path}`, or pass the afl-cc build with --afl-binary"))
            return out
        doc = read_json(vj)
        v = next((x for x in doc.get("variants", []) if x.get("name") == "aflpp-tuned"), None) if isinstance(doc, dict) else None
        if v is None:
            out.append(F("afl_build", "warning", f"{vj} has no aflpp-tuned build", f"run `autotune validate {t.path}` again"))
            return out
        binary = Path(v["binary"])
    rec = read_record(binary) if binary.is_file() else None
    if rec is None:
        out.append(F("afl_build", "warning", f"{binary}: no build record ({binary}.build.json), so how it was built "
                                             "cannot be told", f"rebuild it with `autotune validate {t.path}`"))
        return out
    if rec.get("sha256") != sha256_file(binary):
        out.append(F("afl_build", "error", f"{binary} changed since its build record was written",
                     f"rebuild it with `autotune validate {t.path}`"))
    elif rec.get("build_vars") != want:
        out.append(F("afl_build", "error", f"{binary} was built with {rec.get('build_vars')}, afl-build.env now says {want}",
                     f"rebuild it under afl-build.env (`autotune validate {t.path}`)", file=_file(t, AFL_BUILD_ENV)))
    else:
        out.append(F("afl_build", "ok", f"{binary} was built under afl-build.env ({want or 'PCGUARD defaults'}), "
                                        "SHA-256 matches its record"))
    return out


def check_host_profile(ctx: Context) -> list[F]:
    tuned = ctx.tuned.host
    if tuned is None:
        return [F("host_profile", "warning", "the recommendation does not record the host profile it was made for",
                  "re-run `autotune run` (it records the host's caches)")]
    here = detect_host(sysfs_root=ctx.sysfs_root, procfs_root=ctx.procfs_root)
    diffs = []
    for name in ("l1d_bytes", "l2_bytes", "llc_bytes", "line_bytes"):
        a, b = getattr(tuned, name), getattr(here, name)
        if a != b:
            diffs.append(f"{name} {a} tuned for, {b} here")
    if diffs:
        return [F("host_profile", "warning", "this host's caches differ from the tuned host's: " + "; ".join(diffs),
                  "re-run `autotune tune` on this host (map costs depend on the cache sizes)")]
    return [F("host_profile", "ok", f"caches match the tuned host (L2 {here.l2_bytes}, LLC {here.llc_bytes} bytes)")]


OVERRIDES = {"core_pattern": "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES", "cpu_governor": "AFL_SKIP_CPUFREQ"}


def check_host(ctx: Context) -> list[F]:
    out = []
    for f in run_host_checks(procfs_root=ctx.procfs_root, sysfs_root=ctx.sysfs_root):
        if f.severity == "ok":
            out.append(F(f"host:{f.check}", "ok", f.message))
        elif f.severity == "error":
            var = OVERRIDES.get(f.check)
            if var and (ctx.tuned.run_env.values.get(var) == "1" or ctx.env.get(var) == "1"):
                out.append(F(f"host:{f.check}", "warning", f"{f.message} ({var}=1 is set, so afl-fuzz starts)", f.fix))
            else:
                out.append(F(f"host:{f.check}", "error", f.message,
                             f.fix + (f", or set {var}=1 in afl-run.env" if var else "")))
        else:
            out.append(F(f"host:{f.check}", "warning", f.message, f.fix or "see `autotune profile`"))
    return out


CHECKS = (check_afl_present, check_afl_version, check_afl_variables, check_build, check_collisions, check_counter_overflow,
          check_host_profile, check_host)
