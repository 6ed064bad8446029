"""One afl-fuzz trial: a binary, a configuration's variables, seeds, a time-box (``-V``), an RNG
seed (``-s``), its own output directory, pinned to one core.

Environment: the caller's environment without AFL_*/AUTOTUNE_* (``afl.base_env``) plus
``afl.HOST_ENV`` (afl-fuzz starts without root and without touching the host; AFL_NO_UI), then the
configuration's variables; an ``AUTOTUNE_INDEX_FILE`` the configuration sets is moved into the
trial's directory, so trials never share slot assignments. Pinning: ``taskset -c N`` with
``AFL_NO_AFFINITY=1``. afl-fuzz 4.04c's own ``-b N`` is not used: with AFL_NO_AFFINITY it aborts
("-b and AFL_NO_AFFINITY are mututally exclusive"), and without it afl-fuzz binds only to a core
no other afl-fuzz of the host (another user's) is bound to.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from autotune import afl
from autotune.bugs.attribution import TrialBugs
from autotune.errors import AutotuneError
from autotune.runtime.afl_index import campaign_index
from autotune.afl_output import KINDS, PlotData, instance_dir, kept_inputs, read_fuzzer_stats, read_plot_data
from autotune.afl import pin_prefix
from autotune.trials.coverage import YardstickCoverage
from autotune.vocabulary import INDEX_FILE_VAR

SCHEMA_VERSION = 1
INDEX_FILE_NAME = "index.bin"
START_SLACK_S = 600  # afl-fuzz's calibration and dry run come before its -V clock
STAT_FIELDS = {"execs_per_sec": float, "execs_done": int, "corpus_count": int, "edges_found": int,
               "total_edges": int, "saved_crashes": int, "saved_hangs": int, "run_time": int}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Member:
    """One afl-fuzz instance of an ensemble trial (a portfolio: AFL++'s -M/-S in one output directory)."""

    name: str  # -M/-S id
    role: str  # main or secondary
    binary: str
    env: dict[str, str]  # its configuration's variables and its variation's afl-fuzz variables
    afl_args: tuple[str, ...] = ()
    # a secondary that moves: it stops ``moves_at_s`` seconds into the trial and ``then`` (another -S
    # id, the same core and output directory) fuzzes the rest of the trial
    then: "Member | None" = None
    moves_at_s: int | None = None

    def chain(self) -> tuple["Member", ...]:
        """This instance and those that take its core after it, in order."""
        return (self,) + (self.then.chain() if self.then else ())

    def to_dict(self) -> dict:
        d = {"name": self.name, "role": self.role, "binary": self.binary, "env": dict(self.env),
             "afl_args": list(self.afl_args)}
        if self.then is not None:
            d["then"], d["moves_at_s"] = self.then.to_dict(), self.moves_at_s
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "Member":
        return cls(name=str(d["name"]), role=str(d["role"]), binary=str(d["binary"]), env=dict(d["env"]),
                   afl_args=tuple(str(a) for a in d.get("afl_args", ())),
                   then=cls.from_dict(d["then"]) if d.get("then") else None,
                   moves_at_s=int(d["moves_at_s"]) if d.get("then") else None)


@dataclass(frozen=True)
class TrialSpec:
    """What one trial runs (the configuration's ``env`` holds its variables only). With ``members``
    it is an ensemble trial: every member an afl-fuzz instance syncing one output directory, each
    on its own core; ``binary`` and ``env`` are then the main's."""

    config: str
    index: int
    binary: str
    env: dict[str, str]
    seeds: str
    seconds: int
    rng_seed: int
    out_dir: str
    members: tuple[Member, ...] = ()

    def to_dict(self) -> dict:
        d = {"config": self.config, "index": self.index, "binary": self.binary, "env": dict(self.env),
             "seeds": self.seeds, "seconds": self.seconds, "rng_seed": self.rng_seed, "out_dir": self.out_dir}
        if self.members:
            d["members"] = [m.to_dict() for m in self.members]
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> "TrialSpec":
        return cls(config=str(d["config"]), index=int(d["index"]), binary=str(d["binary"]), env=dict(d["env"]),
                   seeds=str(d["seeds"]), seconds=int(d["seconds"]), rng_seed=int(d["rng_seed"]),
                   out_dir=str(d["out_dir"]), members=tuple(Member.from_dict(m) for m in d.get("members", ())))


@dataclass(frozen=True)
class TrialResult:
    spec: TrialSpec
    core: int | None
    command: tuple[str, ...]
    applied_env: dict[str, str]  # the configuration's variables as run (index file moved)
    stats: dict  # fuzzer_stats figures (STAT_FIELDS, plus stability and bitmap_cvg as text)
    plot: PlotData
    kept: dict[str, int]  # queue, crashes, hangs
    wall_s: float
    yardstick: YardstickCoverage | None = None
    # the bugs yardstick: its kept inputs replayed through the canary build (autotune.bugs.attribution);
    # an optional block of trial.json, so trials measured without it read back as before
    bugs: "TrialBugs | None" = None
    schema_version: int = SCHEMA_VERSION

    @property
    def execs_per_s(self) -> float:
        return float(self.stats["execs_per_sec"])

    def with_yardstick(self, cov: YardstickCoverage) -> "TrialResult":
        from dataclasses import replace

        return replace(self, yardstick=cov)

    def with_bugs(self, bugs: "TrialBugs") -> "TrialResult":
        from dataclasses import replace

        return replace(self, bugs=bugs)

    def to_dict(self) -> dict:
        return {"schema_version": self.schema_version, "spec": self.spec.to_dict(), "core": self.core,
                "command": list(self.command), "applied_env": dict(self.applied_env), "stats": dict(self.stats),
                "plot_data": self.plot.to_dict(), "kept": dict(self.kept), "wall_s": self.wall_s,
                "yardstick": self.yardstick.to_dict() if self.yardstick else None,
                **({"bugs": self.bugs.to_dict()} if self.bugs is not None else {})}

    @classmethod
    def from_dict(cls, d: Mapping) -> "TrialResult":
        if int(d.get("schema_version", 0)) != SCHEMA_VERSION:
            raise ValueError(f"trial schema_version {d.get('schema_version')!r}, expected {SCHEMA_VERSION}")
        return cls(spec=TrialSpec.from_dict(d["spec"]), core=d.get("core"), command=tuple(d["command"]),
                   applied_env=dict(d["applied_env"]), stats=dict(d["stats"]), plot=PlotData.from_dict(d["plot_data"]),
                   kept=dict(d["kept"]), wall_s=float(d["wall_s"]),
                   yardstick=YardstickCoverage.from_dict(d["yardstick"]) if d.get("yardstick") else None,
                   bugs=_bugs_from(d.get("bugs")))


def _bugs_from(d: Mapping | None) -> "TrialBugs | None":
    if not d:
        return None
    return TrialBugs.from_dict(d)


def trial_stats(raw: Mapping[str, str]) -> dict:
    """The figures a trial keeps of afl-fuzz's fuzzer_stats: STAT_FIELDS as numbers (None when
    missing or unreadable), stability, bitmap_cvg and afl_version as text."""
    stats: dict = {}
    for k, conv in STAT_FIELDS.items():
        try:
            stats[k] = conv(raw[k])
        except (KeyError, ValueError):
            stats[k] = None
    for k in ("stability", "bitmap_cvg", "afl_version"):
        stats[k] = raw.get(k)
    return stats


def aflpp_versions(stats: Iterable[Mapping]) -> str:
    """The AFL++ version(s) that ran some trials, from their fuzzer_stats' afl_version (``++4.04c``):
    "AFL++ 4.04c", or every one seen, or that none was reported."""
    seen = sorted({str(s.get("afl_version")).lstrip("+") for s in stats if s.get("afl_version")})
    return "AFL++ " + ", ".join(seen) if seen else "AFL++ (version not recorded)"


def trial_env(*, config_env: Mapping[str, str], trial_dir: Path, binary: str | None = None,
              caller_env: Mapping[str, str] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """(the whole environment of the run, the configuration's variables as applied); a ``binary``
    built with our runtime also gets afl-fuzz's variables for it (afl.RUNTIME_AFL_VARS)."""
    applied = dict(config_env)
    if INDEX_FILE_VAR in applied:
        applied[INDEX_FILE_VAR] = str(trial_dir / INDEX_FILE_NAME)
    ours = afl.runtime_afl_env(binary, applied) if binary else {}
    env = {**afl.base_env(caller_env), **afl.HOST_ENV, **ours, **applied, "AFL_NO_UI": "1", "AFL_NO_AFFINITY": "1"}
    return env, applied


def run_single_trial(*, spec: TrialSpec, core: int | tuple | None = None,
                     caller_env: Mapping[str, str] | None = None) -> TrialResult:
    """Run one afl-fuzz for ``spec.seconds`` in ``spec.out_dir`` (emptied first); its figures (an ensemble
    trial: autotune.trials.ensemble; either: autotune.trials.runner.run_trial)."""
    tdir = Path(spec.out_dir).resolve()  # afl-fuzz runs in it: every path it gets is absolute
    shutil.rmtree(tdir, ignore_errors=True)
    tdir.mkdir(parents=True)
    env, applied = trial_env(config_env=spec.env, trial_dir=tdir, binary=spec.binary, caller_env=caller_env)
    tool = afl.find_tool("afl-fuzz", env=env)
    afl_out = tdir / "afl-out"
    cmd = [*pin_prefix(core, env=env), tool, "-i", str(Path(spec.seeds).resolve()), "-o", str(afl_out), "-V", str(int(spec.seconds)),
           "-s", str(int(spec.rng_seed)), "--", str(Path(spec.binary).resolve())]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, stdin=subprocess.DEVNULL, cwd=tdir,
                              timeout=spec.seconds + START_SLACK_S)
    except subprocess.TimeoutExpired as exc:
        raise AutotuneError(f"afl-fuzz ran over its -V {spec.seconds} s by {START_SLACK_S} s ({spec.config} "
                            f"trial {spec.index})", fix="run the command by hand: " + " ".join(cmd)) from exc
    wall = time.monotonic() - t0
    (tdir / "afl-fuzz.log").write_bytes(_ANSI.sub("", (proc.stdout + proc.stderr).decode(errors="replace"))[-20000:]
                                        .encode())
    inst = instance_dir(afl_out)
    stats_path = inst / "fuzzer_stats"
    if not stats_path.is_file():
        tail = _ANSI.sub("", (proc.stdout + proc.stderr).decode(errors="replace"))[-2000:]
        raise AutotuneError(f"afl-fuzz did not run {spec.config} trial {spec.index} on {spec.binary} "
                            f"(exit {proc.returncode}):\n{tail}", fix="run the command by hand: " + " ".join(cmd))
    stats = trial_stats(read_fuzzer_stats(stats_path))
    plot = read_plot_data(inst / "plot_data")
    kept = {k: 0 for k in KINDS}
    for ki in kept_inputs(afl_out):
        kept[ki.kind] += 1
    index = campaign_index(applied)
    if index is not None:  # the runtime's own counters: the dense map never overflows silently
        stats["index"] = index
    return TrialResult(spec=spec, core=core if pin_prefix(core, env=env) else None, command=tuple(cmd),
                       applied_env=applied, stats=stats, plot=plot, kept=kept, wall_s=round(wall, 2))
