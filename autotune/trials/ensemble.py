"""An ensemble trial: the members of a portfolio as afl-fuzz instances syncing one output directory
(AFL++'s -M main and -S secondaries), each pinned to its own core, started together and time-boxed
alike (``-V``); member j runs with afl-fuzz ``-s`` rng_seed + j. A secondary that moves runs ``-V``
its move time; when it ends, the instance that takes its core (``s<j>-then``, another build, the same
variation) starts in the same output directory for the rest of the trial and imports the others' queues
by afl-fuzz's own sync. Read back as one TrialResult: the summed execs/s (a core's over its instances'
run time) and executions, the main's plot data, the kept inputs of every instance, and per instance
its own figures (``stats["members"]``). The yardstick then measures the union of everything
every instance kept and who found what first (autotune.trials.yardstick.contribution)."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

from autotune import afl
from autotune.errors import AutotuneError
from autotune.runtime.afl_index import campaign_index
from autotune.afl_output import KINDS, instances_of, kept_inputs, read_fuzzer_stats, read_plot_data
from autotune.trials.trial import (_ANSI, INDEX_FILE_NAME, START_SLACK_S, Member, TrialResult, TrialSpec,
                                   trial_env, trial_stats)
from autotune.afl import pin_prefix
from autotune.vocabulary import INDEX_FILE_VAR


# AFL++ 4.10c added the mutation strategy ``-P explore|exploit`` that its recipe for secondaries now
# names; before it the recipe varied the power schedule (``-p explore|exploit``). From 4.09c the
# power schedule's default is explore itself, so ``-p explore`` would be no variation at all there.
STRATEGY_FLAG_SINCE = (4, 10)


def strategy_flag(afl_version: afl.AflppVersion | None) -> str:
    """How the afl-fuzz of ``afl_version`` spells the secondaries' explore / exploit variation:
    ``-P`` (mutation strategy) from 4.10c, ``-p`` (power schedule) before it or when unknown."""
    if afl_version is not None and (afl_version.major, afl_version.minor) >= STRATEGY_FLAG_SINCE:
        return "-P"
    return "-p"


def aflpp_variation(i: int, afl_version: afl.AflppVersion | None = None) -> tuple[tuple[str, ...], dict[str, str]]:
    """afl-fuzz options and variables of secondary ``i`` (1, 2, ...) by AFL++'s documented recipe for
    secondaries (docs/fuzzing_in_depth.md): about 60 % AFL_DISABLE_TRIM, 40 % exploring and 20 %
    exploiting (:func:`strategy_flag`: the mutation strategy ``-P`` on the AFL++ that has it, the
    power schedule ``-p`` on older ones), 10 % ``-L 0`` (MOpt), 10 % ``-Z`` (sequential queue), by
    the index modulo 10 so any N gets the proportions as nearly as it can."""
    if i < 1:
        raise ValueError("secondaries are numbered from 1")
    args: list[str] = []
    env: dict[str, str] = {}
    flag = strategy_flag(afl_version)
    if i % 10 < 6:
        env["AFL_DISABLE_TRIM"] = "1"
    if i % 5 in (1, 3):
        args += [flag, "explore"]
    elif i % 5 == 2:
        args += [flag, "exploit"]
    if i % 10 == 4:
        args += ["-L", "0"]
    if i % 10 == 7:
        args += ["-Z"]
    return tuple(args), env


MAIN, SECONDARY = "main", "secondary"


@dataclass(frozen=True)
class InstanceRole:
    """Instance j of a portfolio: the ``main`` (j = 0, afl-fuzz -M) or secondary ``s<j>`` (-S) with
    AFL++'s documented variation (:func:`aflpp_variation`)."""

    index: int
    name: str
    role: str
    afl_args: tuple[str, ...]
    afl_env: dict[str, str]

    @property
    def flag(self) -> str:
        return afl_role_flag(self.role)


def afl_role_flag(role: str) -> str:
    """afl-fuzz's option for an instance of ``role``: -M the main, -S a secondary."""
    return "-M" if role == MAIN else "-S"


def instance_roles(n: int, afl_version: afl.AflppVersion | None = None) -> list[InstanceRole]:
    """The ``n`` instances of a portfolio: the main, then secondaries s1, s2, ... with AFL++'s
    variations as the afl-fuzz of ``afl_version`` spells them."""
    out = []
    for j in range(n):
        args, env = aflpp_variation(j, afl_version) if j else ((), {})
        out.append(InstanceRole(index=j, name="main" if j == 0 else f"s{j}", role=MAIN if j == 0 else SECONDARY,
                                afl_args=args, afl_env=env))
    return out


# the -S id of the instance that takes a moving secondary's core (s1 -> s1-then)
MOVED_SUFFIX = "-then"


def portfolio_members(instances: Sequence[tuple[str, Mapping[str, str]]],
                      afl_version: afl.AflppVersion | None = None,
                      moves: Mapping[int, tuple[str, Mapping[str, str], int]] | None = None) -> tuple[Member, ...]:
    """The afl-fuzz instances of a portfolio, from each one's (binary, variables): ``main`` (-M), then
    ``s1``, ``s2``, ... (-S) with AFL++'s documented variations (:func:`aflpp_variation`) as the
    afl-fuzz of ``afl_version`` spells them. ``moves``: by instance index, a secondary that moves
    (binary, variables, seconds): at that time it stops and ``s<j>-then`` fuzzes on its core, the same
    variation on the other build."""
    out = []
    for r, (binary, env) in zip(instance_roles(len(instances), afl_version), instances):
        m = Member(name=r.name, role=r.role, binary=str(binary), env={**env, **r.afl_env}, afl_args=r.afl_args)
        if (moves or {}).get(r.index) is not None:
            if r.role == MAIN:
                raise ValueError("the main instance does not move")
            then_binary, then_env, at_s = moves[r.index]
            m = replace(m, moves_at_s=int(at_s), then=Member(
                name=r.name + MOVED_SUFFIX, role=r.role, binary=str(then_binary), env={**then_env, **r.afl_env},
                afl_args=r.afl_args))
        out.append(m)
    return tuple(out)


def ensemble_inputs(afl_out: Path, offsets_ms: Mapping[str, int] | None = None):
    """Every instance's kept inputs, labelled by instance; an instance's times shifted by its
    ``offsets_ms`` (0 where none is given)."""
    return [k for name in instances_of(afl_out)
            for k in kept_inputs(afl_out, instance=name, offset_ms=(offsets_ms or {}).get(name, 0))]


def moved_offsets_ms(afl_out: Path, spec: TrialSpec) -> dict[str, int]:
    """How long after the main each instance that took a moving secondary's core started (fuzzer_stats'
    start_time, whole seconds): afl-fuzz names its finds by the time since its own start."""
    def start(name: str) -> int | None:
        path = afl_out / name / "fuzzer_stats"
        value = read_fuzzer_stats(path).get("start_time") if path.is_file() else None
        return int(value) if value not in (None, "") else None

    t0 = start(spec.members[0].name) if spec.members else None
    out = {}
    for m in spec.members:
        for later in m.chain()[1:]:
            t = start(later.name)
            if t0 is not None and t is not None:
                out[later.name] = 1000 * max(0, t - t0)
    return out


def trial_inputs(afl_out: Path, spec: TrialSpec):
    """What the trial ``spec`` kept in ``afl_out``: every instance's inputs for an ensemble (its
    members; an instance that took a moving secondary's core on the trial's clock), else the lone
    instance's."""
    return ensemble_inputs(afl_out, moved_offsets_ms(afl_out, spec)) if spec.members else kept_inputs(afl_out)


def _slot_rate(chain: Sequence[Mapping]) -> float:
    """One core's execs/s over a trial: its instance's, or for a secondary that moved, every execution of
    its instances over their run time together."""
    if len(chain) == 1:
        return float(chain[0]["execs_per_sec"] or 0)
    secs = sum(float(s.get("run_time") or 0) for s in chain)
    return sum(float(s["execs_done"] or 0) for s in chain) / secs if secs > 0 else 0.0


def run_ensemble_trial(*, spec: TrialSpec, cores: Sequence[int | None],
                       caller_env: Mapping[str, str] | None = None) -> TrialResult:
    import shutil

    tdir = Path(spec.out_dir).resolve()
    shutil.rmtree(tdir, ignore_errors=True)
    tdir.mkdir(parents=True)
    afl_out = tdir / "afl-out"
    seeds = str(Path(spec.seeds).resolve())
    cmds: dict[str, list[str]] = {}
    applied_all: dict[str, dict[str, str]] = {}
    logs = []

    def launch(j: int, m: Member, seconds: int) -> subprocess.Popen:
        core = cores[j % len(cores)] if cores else None
        env, applied = trial_env(config_env=m.env, trial_dir=tdir, binary=m.binary, caller_env=caller_env)
        if INDEX_FILE_VAR in applied:  # one table per instance
            applied[INDEX_FILE_VAR] = env[INDEX_FILE_VAR] = str(tdir / f"{m.name}.{INDEX_FILE_NAME}")
        applied_all[m.name] = applied
        tool = afl.find_tool("afl-fuzz", env=env)
        cmd = [*pin_prefix(core, env=env), tool, afl_role_flag(m.role), m.name, "-i", seeds, "-o", str(afl_out),
               "-V", str(max(1, int(seconds))), "-s", str(int(spec.rng_seed) + j), *m.afl_args, "--",
               str(Path(m.binary).resolve())]
        cmds[m.name] = cmd
        log = open(tdir / f"afl-fuzz-{m.name}.log", "wb")
        logs.append(log)
        return subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=tdir)

    # one core a member: its instance, then (a secondary that moves) the one that takes the core after it
    running: list[tuple[int, Member, subprocess.Popen]] = []
    for j, m in enumerate(spec.members):
        running.append((j, m, launch(j, m, m.moves_at_s if m.then is not None else spec.seconds)))
        if j == 0:
            time.sleep(0.5)  # the main creates the output directory first
    t0 = time.monotonic()
    deadline = t0 + spec.seconds + START_SLACK_S
    try:
        while running:
            if time.monotonic() > deadline:
                raise AutotuneError(f"an afl-fuzz of {spec.config} trial {spec.index} ran over its -V {spec.seconds} s "
                                    f"by {START_SLACK_S} s", fix="run its command by hand: "
                                    + " ".join(cmds[spec.members[0].name]))
            still = []
            for j, m, p in running:
                if p.poll() is None:
                    still.append((j, m, p))
                elif m.then is not None:  # moves: the next instance fuzzes what is left of the trial
                    still.append((j, m.then, launch(j, m.then, spec.seconds - (time.monotonic() - t0))))
            running = still
            if running:
                time.sleep(0.2)
    except BaseException:
        for _j, _m, p in running:
            p.kill()
            p.wait()
        raise
    finally:
        for log in logs:
            log.close()
    wall = time.monotonic() - t0
    members: dict[str, dict] = {}
    for m in (i for first in spec.members for i in first.chain()):
        path = afl_out / m.name / "fuzzer_stats"
        if not path.is_file():
            text = (tdir / f"afl-fuzz-{m.name}.log").read_bytes().decode(errors="replace")
            raise AutotuneError(f"afl-fuzz did not run {m.name} of {spec.config} trial {spec.index}:\n"
                                f"{_ANSI.sub('', text)[-2000:]}", fix="run the command by hand: " + " ".join(cmds[m.name]))
        members[m.name] = trial_stats(read_fuzzer_stats(path))
        index = campaign_index(applied_all[m.name])
        if index is not None:  # the instance's own dense map: never overflows silently
            members[m.name]["index"] = index
    main = spec.members[0].name
    stats = dict(members[main])
    stats["execs_per_sec"] = round(sum(_slot_rate([members[i.name] for i in m.chain()]) for m in spec.members), 2)
    stats["execs_done"] = sum(int(s["execs_done"] or 0) for s in members.values())
    stats["members"] = members
    kept = {k: 0 for k in KINDS}
    for ki in ensemble_inputs(afl_out):
        if not ki.imported:
            kept[ki.kind] += 1
    return TrialResult(spec=spec, core=None, command=tuple(cmds[main]), applied_env=applied_all[main], stats=stats,
                       plot=read_plot_data(afl_out / main / "plot_data"), kept=kept, wall_s=round(wall, 2))
