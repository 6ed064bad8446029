"""An ensemble trial: the members of a portfolio as afl-fuzz instances syncing one output directory
(AFL++'s -M main and -S secondaries), each pinned to its own core, started together and time-boxed
alike (``-V``); member j runs with afl-fuzz ``-s`` rng_seed + j. Read back as one TrialResult: the
summed execs/s and executions, the main's plot data, the kept inputs of every instance, and per
member its own figures (``stats["members"]``). The yardstick then measures the union of everything
every instance kept and who found what first (autotune.trials.yardstick.contribution)."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
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


def portfolio_members(instances: Sequence[tuple[str, Mapping[str, str]]],
                      afl_version: afl.AflppVersion | None = None) -> tuple[Member, ...]:
    """The afl-fuzz instances of a portfolio, from each one's (binary, variables): ``main`` (-M), then
    ``s1``, ``s2``, ... (-S) with AFL++'s documented variations (:func:`aflpp_variation`) as the
    afl-fuzz of ``afl_version`` spells them."""
    return tuple(Member(name=r.name, role=r.role, binary=str(binary), env={**env, **r.afl_env}, afl_args=r.afl_args)
                 for r, (binary, env) in zip(instance_roles(len(instances), afl_version), instances))


def ensemble_inputs(afl_out: Path):
    """Every instance's kept inputs, labelled by instance."""
    return [k for name in instances_of(afl_out) for k in kept_inputs(afl_out, instance=name)]


def trial_inputs(afl_out: Path, spec: TrialSpec):
    """What the trial ``spec`` kept in ``afl_out``: every instance's inputs for an ensemble (its
    members), else the lone instance's."""
    return ensemble_inputs(afl_out) if spec.members else kept_inputs(afl_out)


def run_ensemble_trial(*, spec: TrialSpec, cores: Sequence[int | None],
                       caller_env: Mapping[str, str] | None = None) -> TrialResult:
    import shutil

    tdir = Path(spec.out_dir).resolve()
    shutil.rmtree(tdir, ignore_errors=True)
    tdir.mkdir(parents=True)
    afl_out = tdir / "afl-out"
    seeds = str(Path(spec.seeds).resolve())
    procs, cmds, applied_all, logs = [], [], {}, []
    for j, m in enumerate(spec.members):
        core = cores[j % len(cores)] if cores else None
        env, applied = trial_env(config_env=m.env, trial_dir=tdir, binary=m.binary, caller_env=caller_env)
        if INDEX_FILE_VAR in applied:  # one table per instance
            applied[INDEX_FILE_VAR] = env[INDEX_FILE_VAR] = str(tdir / f"{m.name}.{INDEX_FILE_NAME}")
        applied_all[m.name] = applied
        tool = afl.find_tool("afl-fuzz", env=env)
        flag = afl_role_flag(m.role)
        cmd = [*pin_prefix(core, env=env), tool, flag, m.name, "-i", seeds, "-o", str(afl_out), "-V",
               str(int(spec.seconds)), "-s", str(int(spec.rng_seed) + j), *m.afl_args, "--",
               str(Path(m.binary).resolve())]
        cmds.append(cmd)
        log = open(tdir / f"afl-fuzz-{m.name}.log", "wb")
        logs.append(log)
        procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      cwd=tdir))
        if j == 0:
            time.sleep(0.5)  # the main creates the output directory first
    t0 = time.monotonic()
    deadline = t0 + spec.seconds + START_SLACK_S
    try:
        for p in procs:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired as exc:
        for p in procs:
            p.kill()
        raise AutotuneError(f"an afl-fuzz of {spec.config} trial {spec.index} ran over its -V {spec.seconds} s by "
                            f"{START_SLACK_S} s", fix="run its command by hand: " + " ".join(cmds[0])) from exc
    finally:
        for log in logs:
            log.close()
    wall = time.monotonic() - t0
    members: dict[str, dict] = {}
    for m, cmd in zip(spec.members, cmds):
        path = afl_out / m.name / "fuzzer_stats"
        if not path.is_file():
            text = (tdir / f"afl-fuzz-{m.name}.log").read_bytes().decode(errors="replace")
            raise AutotuneError(f"afl-fuzz did not run {m.name} of {spec.config} trial {spec.index}:\n"
                                f"{_ANSI.sub('', text)[-2000:]}", fix="run the command by hand: " + " ".join(cmd))
        members[m.name] = trial_stats(read_fuzzer_stats(path))
        index = campaign_index(applied_all[m.name])
        if index is not None:  # the instance's own dense map: never overflows silently
            members[m.name]["index"] = index
    main = spec.members[0].name
    stats = dict(members[main])
    stats["execs_per_sec"] = round(sum(float(s["execs_per_sec"] or 0) for s in members.values()), 2)
    stats["execs_done"] = sum(int(s["execs_done"] or 0) for s in members.values())
    stats["members"] = members
    kept = {k: 0 for k in KINDS}
    for ki in ensemble_inputs(afl_out):
        if not ki.imported:
            kept[ki.kind] += 1
    return TrialResult(spec=spec, core=None, command=tuple(cmds[0]), applied_env=applied_all[main], stats=stats,
                       plot=read_plot_data(afl_out / main / "plot_data"), kept=kept, wall_s=round(wall, 2))
