"""The fork server's fault suite (issue 26), shared by tests/test_fault_suite.py (seconds of the
real afl-fuzz per fault) and benchmarks/fault_soak.py (an hour of them).

Each fault of tests/programs_afl/faults.c is built twice from the same source and flags: by
`autotune cc` (our runtime's fork server) and by AFL++'s afl-clang-fast (AFL++'s own runtime and
libAFLDriver). Both run under the same afl-fuzz with the same seeds and options; then every crash
and hang either campaign saved is replayed through both binaries, outside afl-fuzz:

- real: a saved crash crashes the binary that found it, with the signal in its file name; a saved
  hang runs past afl-fuzz's timeout. A crash that does not replay is what a stray status word
  looks like (afl-fuzz 4.04c once read a pid as a status and saved 'crashes' with its low bits
  as the signal).
- none lost: the other build's crashes crash ours too (and ours crash AFL++'s), so a fault our
  fork server hides would show.
- afl-fuzz's own verdict: exit 0, no "Fork server is misbehaving" / handshake failure / warning
  about the fork server in its output; stability as in fuzzer_stats.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

REPO = Path(__file__).resolve().parents[1]
FAULTS_C = REPO / "tests" / "programs_afl" / "faults.c"  # a C program the tests build too (read, not imported)
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from autotune.afl import HOST_ENV, base_env  # noqa: E402
from autotune.afl_output import read_fuzzer_stats  # noqa: E402

TIMEOUT_MS = 250  # afl-fuzz -t (and AFL_HANG_TMOUT): FAULT_SLOW sleeps 1 s, past it


@dataclass(frozen=True)
class Fault:
    name: str
    macro: str
    expect: str  # crash, hang or none: what afl-fuzz should save
    cflags: tuple[str, ...] = ()


FAULTS: tuple[Fault, ...] = (
    Fault("segv", "FAULT_SEGV", "crash"),
    Fault("abort", "FAULT_ABORT", "crash"),
    Fault("asan", "FAULT_ASAN", "crash", ("-fsanitize=address",)),
    Fault("ubsan", "FAULT_UBSAN", "crash", ("-fsanitize=undefined", "-fno-sanitize-recover=all")),
    Fault("hang", "FAULT_HANG", "hang"),
    Fault("slow", "FAULT_SLOW", "hang"),
    Fault("exit", "FAULT_EXIT", "none"),
    Fault("fork", "FAULT_FORK", "none"),
    Fault("threads", "FAULT_THREADS", "none", ("-pthread",)),
    Fault("closefds", "FAULT_CLOSEFDS", "none"),
    Fault("leak", "FAULT_LEAK", "none"),
    Fault("rare", "FAULT_RARE", "crash"),
)
BY_NAME = {f.name: f for f in FAULTS}
SEEDS = (b"xyzA", b"AAAA", b"\x00\x00\x00\x00")

# What a replay runs under: a sanitizer report ends the process by SIGABRT (as afl-fuzz sets for
# its targets), so "crashed" is "killed by a signal" for every fault.
REPLAY_ENV = {"ASAN_OPTIONS": "abort_on_error=1:detect_leaks=0:symbolize=0:allocator_may_return_null=1",
              "UBSAN_OPTIONS": "halt_on_error=1:abort_on_error=1:print_stacktrace=0:symbolize=0"}
# afl-fuzz's words for a fork server it no longer trusts, or that it had to work around
BAD_OUTPUT = re.compile(r"misbehaving|handshake failed|Unable to communicate with fork server|"
                        r"Old fork server model|does not support futex|PROGRAM ABORT", re.I)
HANDSHAKE = re.compile(r"All right - (new fork server model v\d+|old fork server|fork server) is up")
WARNING = re.compile(r"\[!\] WARNING|^\[!\]|WARNING:")
# what afl-fuzz 4.20c+ says of a target speaking 4.04c's hello: expected of afl-clang-fast 4.04c's
# build (its runtime is as old as Debian's AFL++), a complaint about ours
OLD_HELLO = "Old fork server model"
COMMON_CFLAGS = ("-O1", "-g")
# the run-time variables of our guard kind (the race's autotune-run.env for guard has the same)
GUARD_ENV = {"AUTOTUNE_METRIC": "guard"}


def build_ours(fault: Fault, out: Path, *, kind: str = "guard") -> Path:
    """The fault built by autotune cc (kind: its build kind)."""
    from autotune.target import build_harness
    return build_harness(sources=[FAULTS_C], output=out / f"{fault.name}-ours-{kind}", kind=kind,
                         extra_cflags=[*COMMON_CFLAGS, f"-DFAULT={fault.macro}", *fault.cflags],
                         extra_ldflags=[f for f in fault.cflags if f == "-pthread"])


def build_aflpp(fault: Fault, out: Path) -> Path:
    """The fault built by AFL++'s afl-clang-fast (PCGUARD, libAFLDriver)."""
    cc = shutil.which("afl-clang-fast")
    if cc is None:
        raise FileNotFoundError("afl-clang-fast (apt-get install afl++)")
    exe = out / f"{fault.name}-aflpp"
    env = base_env()
    env["AFL_QUIET"] = "1"
    tmp = exe.with_name(exe.name + ".tmp")
    subprocess.run([cc, *COMMON_CFLAGS, f"-DFAULT={fault.macro}", *fault.cflags, "-fsanitize=fuzzer",
                    str(FAULTS_C), "-o", str(tmp)], env=env, check=True, capture_output=True, text=True,
                   timeout=300)
    tmp.rename(exe)
    return exe


@dataclass
class Campaign:
    """One afl-fuzz campaign of one build and what it saved."""
    build: str  # ours or aflpp
    returncode: int
    execs: int
    execs_per_sec: float
    stability: str
    crashes: list[Path] = field(default_factory=list)
    hangs: list[Path] = field(default_factory=list)
    bad_lines: list[str] = field(default_factory=list)  # afl-fuzz's complaints about the fork server
    handshake: str = "?"  # "new fork server model v1", "old fork server", as afl-fuzz reports it
    warnings: list[str] = field(default_factory=list)  # every warning line afl-fuzz printed

    def summary(self) -> dict:
        d = asdict(self)
        d["crashes"], d["hangs"] = len(self.crashes), len(self.hangs)
        return d


def run_afl(binary: Path, work: Path, *, seconds: int, build: str, afl_fuzz: str | None = None,
            env: Mapping[str, str] | None = None, seed: int = 1) -> Campaign:
    """afl-fuzz on ``binary`` for ``seconds`` (-V), -s seed, -t TIMEOUT_MS, from SEEDS."""
    afl_fuzz = afl_fuzz or shutil.which("afl-fuzz")
    in_dir, out_dir = work / "in", work / "out"
    in_dir.mkdir(parents=True, exist_ok=True)
    for i, s in enumerate(SEEDS):
        (in_dir / f"seed{i}").write_bytes(s)
    run_env = base_env()
    run_env.update(HOST_ENV)
    run_env["AFL_HANG_TMOUT"] = str(TIMEOUT_MS)  # a saved hang: past -t again (default 1 s)
    run_env.update(env or {})
    cmd = [afl_fuzz, "-i", str(in_dir), "-o", str(out_dir), "-V", str(seconds), "-s", str(seed),
           "-t", str(TIMEOUT_MS), "--", str(binary)]
    proc = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=seconds + 120,
                          stdin=subprocess.DEVNULL, cwd=work)
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]|\x1b\(B", "", proc.stdout + proc.stderr)
    inst = out_dir / "default"
    st = read_fuzzer_stats(inst / "fuzzer_stats") if (inst / "fuzzer_stats").exists() else {}
    return Campaign(
        build=build, returncode=proc.returncode, execs=int(st.get("execs_done", 0)),
        execs_per_sec=float(st.get("execs_per_sec", 0.0)), stability=st.get("stability", "?"),
        crashes=sorted((inst / "crashes").glob("id:*")), hangs=sorted((inst / "hangs").glob("id:*")),
        bad_lines=[line.strip() for line in text.splitlines() if BAD_OUTPUT.search(line)
                   and not (build == "aflpp" and OLD_HELLO in line)],
        handshake=next((m.group(1) for m in map(HANDSHAKE.search, text.splitlines()) if m), "?"),
        warnings=sorted({line.strip() for line in text.splitlines() if WARNING.search(line)}))


@dataclass
class Replay:
    crashed_signal: int | None  # the signal that ended it, None if it exited
    seconds: float
    timed_out: bool


def replay(binary: Path, path: Path, *, limit_s: float = 2.0) -> Replay:
    """Run ``binary path`` once, outside afl-fuzz (no __AFL_SHM_ID: the driver's standalone mode,
    libAFLDriver's file mode)."""
    env = base_env()
    env.update(REPLAY_ENV)
    t0 = time.monotonic()
    try:
        proc = subprocess.run([str(binary), str(path)], env=env, capture_output=True, timeout=limit_s,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Replay(None, time.monotonic() - t0, True)
    dt = time.monotonic() - t0
    return Replay(-proc.returncode if proc.returncode < 0 else None, dt, False)


def saved_signal(path: Path) -> int | None:
    m = re.search(r"sig:(\d+)", path.name)
    return int(m.group(1)) if m else None


@dataclass
class FaultResult:
    fault: str
    expect: str
    campaigns: dict[str, Campaign]
    # replays: {finder build: {replaying build: [what each saved crash did]}}
    crash_replays: dict[str, dict[str, list[int | None]]]
    hang_replays: dict[str, dict[str, list[bool]]]
    problems: list[str]
    spurious_hangs: dict[str, int] = field(default_factory=dict)  # hangs saved that replay fast

    def summary(self) -> dict:
        return {"fault": self.fault, "expect": self.expect,
                "campaigns": {k: c.summary() for k, c in self.campaigns.items()},
                "crash_replays": self.crash_replays, "hang_replays": self.hang_replays,
                "problems": self.problems, "spurious_hangs": self.spurious_hangs}


def judge(fault: Fault, binaries: Mapping[str, Path], campaigns: Mapping[str, Campaign],
          *, max_replays: int = 20) -> FaultResult:
    """Replay every saved crash and hang (up to max_replays each) through every build; list what
    breaks the suite's promises."""
    problems: list[str] = []
    crash_rep: dict[str, dict[str, list[int | None]]] = {}
    hang_rep: dict[str, dict[str, list[bool]]] = {}
    for name, c in campaigns.items():
        if c.returncode != 0:
            problems.append(f"{name}: afl-fuzz exited {c.returncode}")
        problems += [f"{name}: afl-fuzz said: {line}" for line in c.bad_lines]
        if c.execs == 0:
            problems.append(f"{name}: no executions")
        if fault.expect != "crash" and c.crashes:
            problems.append(f"{name}: {len(c.crashes)} crashes saved, the harness has none")
        if fault.expect == "crash" and not c.crashes:
            problems.append(f"{name}: no crash saved")
        if fault.expect == "hang" and not c.hangs:
            problems.append(f"{name}: no hang saved")
        crash_rep[name], hang_rep[name] = {}, {}
        for other, exe in binaries.items():
            sigs = [replay(exe, p).crashed_signal for p in c.crashes[:max_replays]]
            crash_rep[name][other] = sigs
            for p, sig in zip(c.crashes[:max_replays], sigs):
                if sig is None:
                    problems.append(f"{name}'s crash {p.name} does not crash {other}'s build")
                elif other == name and saved_signal(p) not in (None, sig):
                    problems.append(f"{name}'s crash {p.name} ends {other}'s build by signal {sig}")
            slow = []
            for p in c.hangs[:max_replays]:
                r = replay(exe, p, limit_s=2.0)
                slow.append(r.timed_out or r.seconds * 1000 >= TIMEOUT_MS)
            hang_rep[name][other] = slow
            if fault.expect == "hang":
                if c.hangs and not any(slow):
                    problems.append(f"none of {name}'s {len(c.hangs)} hangs runs past the timeout in {other}'s build")
            else:  # a harness without a hang: a saved hang that replays slow is a real problem
                problems += [f"{name}'s hang {p.name} is slow in {other}'s build too, the harness has none"
                             for p, s in zip(c.hangs[:max_replays], slow) if s]
    # a saved hang that replays within the timeout: afl's timeout (-t, then AFL_HANG_TMOUT) hit by a
    # stall of a loaded host, not by the harness; counted, not a problem (the soak compares the counts)
    spurious = {n: sum(1 for s in hang_rep[n][n] if not s) for n in campaigns}
    return FaultResult(fault.name, fault.expect, dict(campaigns), crash_rep, hang_rep, problems, spurious)


def stability_value(s: str) -> float | None:
    try:
        return float(s.rstrip("%"))
    except ValueError:
        return None


def run_pair(fault: Fault, binaries: Mapping[str, Path], work: Path, *, seconds: int,
             afl_fuzz: str | None = None, env_by_build: Mapping[str, Mapping[str, str]] | None = None,
             seed: int = 1) -> FaultResult:
    """Both builds' campaigns side by side (one per core), then judge()."""
    from concurrent.futures import ThreadPoolExecutor
    env_by_build = env_by_build or {"ours": GUARD_ENV}
    names = list(binaries)

    def one(name: str) -> Campaign:
        w = work / name
        if w.exists():
            shutil.rmtree(w)
        return run_afl(binaries[name], w, seconds=seconds, build=name, afl_fuzz=afl_fuzz,
                       env=env_by_build.get(name), seed=seed)

    with ThreadPoolExecutor(len(names)) as pool:
        campaigns = dict(zip(names, pool.map(one, names)))
    return judge(fault, binaries, campaigns)


# ---- the faults under benchmarks/protocol_driver.c (AFL++ 5.x's futex sync, and the pipes) ------

DRIVER_C = REPO / "benchmarks" / "protocol_driver.c"
DRIVER_TIMEOUT_MS = 200


def build_driver(out: Path) -> Path:
    exe = out / "protocol_driver"
    subprocess.run([shutil.which("clang") or "cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", str(DRIVER_C),
                    "-o", str(exe)], check=True)
    return exe


def fnv1a(data: bytes) -> int:
    """FAULT_RARE's hash (faults.c): an input crashes it when this is 0 modulo 100."""
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def driver_inputs(d: Path) -> dict[str, list[Path]]:
    """Nine harmless inputs and one that fires the fault: 'F' first, or for FAULT_RARE an input
    whose FNV-1a is 0 modulo 100. The driver cycles through them: every tenth execution fires."""
    harmless = [b"xyz%d" % i for i in range(9)]
    rare = b"r\x00'"
    assert all(fnv1a(x) % 100 != 0 for x in harmless) and fnv1a(rare) % 100 == 0
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, trigger in (("F", b"Fxyz"), ("rare", rare)):
        files = []
        for i, data in enumerate([*harmless, trigger]):
            files.append(d / f"{name}{i}")
            files[-1].write_bytes(data)
        out[name] = files
    return out


def run_driver(driver: Path, fault: Fault, binary: Path, inputs: dict[str, list[Path]], *, mode: str, execs: int,
               limit_s: float | None = None) -> dict[str, int]:
    """Our build of ``fault`` under the driver (futex: AFL++ 5.x's sync; pipes: the child answering
    4.04c's protocol): how the executions ended."""
    files = inputs["rare" if fault.name == "rare" else "F"]
    env = base_env()
    env.update(REPLAY_ENV, **GUARD_ENV, AUTOTUNE_AFL_HANDSHAKE="versioned" if mode == "futex" else "old")
    cmd = [str(driver), "-t", str(DRIVER_TIMEOUT_MS), *(["-T", str(limit_s)] if limit_s else []), mode, str(execs),
           *map(str, files), "--", str(binary)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=(limit_s or 60) + 120)
    if proc.returncode != 0:  # exit 3: the target did not take the futex
        raise RuntimeError(f"protocol_driver {mode} on {fault.name}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    f = proc.stdout.split()
    return {k: int(f[f.index(k) + 1]) for k in ("execs", "ok", "crash", "timeout", "exit", "children")}


PERSISTENT_ITERS = 10_000  # AUTOTUNE_AFL_PERSISTENT's default: inputs per child, then exit 0


def driver_expectation(fault: Fault, mode: str, execs: int, n_inputs: int = 10) -> dict[str, int]:
    """How ``execs`` executions must end when one input in ``n_inputs`` fires ``fault``."""
    fired = execs // n_inputs
    want = {"ok": execs - fired, "crash": 0, "timeout": 0, "exit": 0}
    if fault.expect == "crash":
        want["crash"] = fired
    elif fault.expect == "hang":
        want["timeout"] = fired
    elif fault.name == "exit":
        want["exit"] = fired
    elif fault.name == "closefds" and mode == "pipes" and execs >= n_inputs:
        # the child hands over to the server at the first firing input (an exit 0); the relay's
        # children then end after their last persistent input
        want["ok"], want["exit"] = execs, 1 + (execs - n_inputs) // PERSISTENT_ITERS
        want["ok"] -= want["exit"]
    else:  # nothing ends a child but its last persistent input (exit 0)
        want["exit"] = execs // PERSISTENT_ITERS
        want["ok"] = execs - want["exit"]
    return want


__all__: Sequence[str] = ("FAULTS", "BY_NAME", "Fault", "build_ours", "build_aflpp", "run_afl", "replay",
                          "judge", "run_pair", "FaultResult", "Campaign", "stability_value")
