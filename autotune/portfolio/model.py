"""A portfolio: the afl-fuzz instances of one campaign, on one or more machines, synced by AFL++'s
own mechanism (docs/fuzzing_in_depth.md, "parallel fuzzing"): one ``-M`` main per machine and ``-S``
secondaries sharing that machine's output directory; the main instances' queues copied between
machines at an interval (autotune.portfolio.launch writes the scripts).

Each instance has its role, its CPU, its configuration (a compare ``Configuration``: the build, i.e.
AFL++'s afl-clang-fast or ``autotune cc`` of a build kind, and the run-time variables, e.g. our
runtime's metric and map) and the afl-fuzz options of AFL++'s documented variations of secondaries
(:func:`aflpp_variation`). One ``autotune cc`` build of the ``blocks`` or ``full`` kind serves several
metrics, so instances of different metrics can share one binary; an instance whose binary cannot
serve its metric is refused before anything is written (:func:`check_portfolio`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from autotune.configuration import Configuration, check_serves
from autotune.errors import AutotuneError
from autotune.portfolio.hosts import Host
from autotune.trials.ensemble import MAIN, SECONDARY, aflpp_variation, instance_roles  # noqa: F401 (re-exported)

SCHEMA_VERSION = 1
# Between machines: AFL++'s docs copy the main instances' queues every few hours, or about a tenth
# of the campaign; 30 min is a tenth of a 5-hour run.
DEFAULT_SYNC_INTERVAL_S = 1800


@dataclass(frozen=True)
class Instance:
    name: str  # afl-fuzz -M/-S id, unique across machines
    host: str
    role: str  # main (-M) or secondary (-S)
    cpu: int
    config: Configuration
    afl_args: tuple[str, ...] = ()  # afl-fuzz options of its variation (-P explore, -L 0, -Z)
    afl_env: tuple[tuple[str, str], ...] = ()  # afl-fuzz variables of its variation (AFL_DISABLE_TRIM)
    # AFL++'s CMPLOG companion (afl-fuzz -c: the target built by afl-clang-fast under AFL_LLVM_CMPLOG=1);
    # its CMPLOG options (-l 2AT) are in afl_args
    cmplog: bool = False

    @property
    def binary_key(self) -> tuple:
        """Instances with the same key run the same binary."""
        return (self.config.cc_kind, tuple(sorted(self.config.build_vars.items())))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "host": self.host, "role": self.role, "cpu": self.cpu,
                "config": self.config.to_compare_dict(), "afl_args": list(self.afl_args), "afl_env": dict(self.afl_env),
                "cmplog": self.cmplog}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Instance":
        return cls(name=str(d["name"]), host=str(d["host"]), role=str(d["role"]), cpu=int(d["cpu"]),
                   config=Configuration.from_dict(d["config"]), afl_args=tuple(str(a) for a in d.get("afl_args", ())),
                   afl_env=tuple(sorted((str(k), str(v)) for k, v in dict(d.get("afl_env") or {}).items())),
                   cmplog=bool(d.get("cmplog", False)))


@dataclass(frozen=True)
class Portfolio:
    instances: tuple[Instance, ...]
    hosts: tuple[Host, ...]
    sync_interval_s: int = DEFAULT_SYNC_INTERVAL_S
    schema_version: int = field(default=SCHEMA_VERSION)

    def on(self, host: str) -> list[Instance]:
        return [i for i in self.instances if i.host == host]

    def main_of(self, host: str) -> Instance:
        return next(i for i in self.on(host) if i.role == MAIN)

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "sync_interval_s": self.sync_interval_s,
                "hosts": [h.to_dict() for h in self.hosts], "instances": [i.to_dict() for i in self.instances]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Portfolio":
        if d.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"portfolio schema_version {d.get('schema_version')!r}, expected {SCHEMA_VERSION}")
        return cls(instances=tuple(Instance.from_dict(i) for i in d["instances"]),
                   hosts=tuple(Host.from_dict(h) for h in d["hosts"]), sync_interval_s=int(d["sync_interval_s"]))


def cmplog_args(k: int) -> tuple[str, ...]:
    """afl-fuzz's CMPLOG options of the k-th CMPLOG secondary of a machine (k = 1, 2, ...): AFL++'s
    recipe has at least one CMPLOG instance follow transformations (``-l 2AT``); the others run
    CMPLOG's defaults."""
    return ("-l", "2AT") if k == 1 else ()


def make_portfolio(*, configs: Sequence[Configuration], hosts: Sequence[Host], instances: int | None = None,
                   sync_interval_s: int = DEFAULT_SYNC_INTERVAL_S, cmplog: int = 0,
                   warn: Callable[[str], None] | None = None, afl_version=None) -> Portfolio:
    """``instances`` per machine (default: its cores), the ``configs`` given to them in turn (instance
    j of a machine, j = 0 its main, takes configs[j mod len]), AFL++'s variations on the
    secondaries. ``cmplog``: so many secondaries of each machine (the first ones) also run AFL++'s
    CMPLOG companion, as AFL++'s recipe has one or two of them (:func:`cmplog_args`). More instances
    than a machine's cores is said in ``warn``: they share CPUs (never silently). ``afl_version``:
    the afl-fuzz that will run them, whose spelling of the variations they get (None: the old one)."""
    if not configs:
        raise AutotuneError("a portfolio needs at least one configuration", fix="give --config default (or an env file)")
    if instances is not None and instances < 1:
        raise AutotuneError(f"--instances {instances}: a portfolio needs at least one instance",
                            fix="give --instances 1 or more")
    if cmplog < 0:
        raise AutotuneError(f"--cmplog {cmplog}: a count of CMPLOG secondaries cannot be negative",
                            fix="give --cmplog 0 (none), 1 or 2 (AFL++'s recipe)")
    out: list[Instance] = []
    for h in hosts:
        n = instances or h.cores
        if n > h.cores and warn:
            warn(f"host {h.name}: {n} instances on {h.cores} core{'s' if h.cores != 1 else ''}: instances share CPUs "
                 "(each runs slower; afl-fuzz's own advice is one instance a core)")
        if cmplog > n - 1:
            raise AutotuneError(f"--cmplog {cmplog}: host {h.name} runs {n - 1} secondar{'y' if n == 2 else 'ies'}, "
                                "and CMPLOG runs on secondaries only",
                                fix=f"give --cmplog {n - 1} or fewer, or more --instances")
        for r in instance_roles(n, afl_version):
            j = r.index
            with_cmplog = 1 <= j <= cmplog
            out.append(Instance(name=f"{r.name}-{h.name}", host=h.name, role=r.role, cpu=h.cpus[j % h.cores],
                                config=configs[j % len(configs)],
                                afl_args=(cmplog_args(j) if with_cmplog else ()) + r.afl_args,
                                afl_env=tuple(sorted(r.afl_env.items())), cmplog=with_cmplog))
    p = Portfolio(instances=tuple(out), hosts=tuple(hosts), sync_interval_s=sync_interval_s)
    check_portfolio(p)
    return p


def check_portfolio(p: Portfolio) -> None:
    """Refuse what cannot run: no main or two on a machine, a name twice, an instance on an unknown
    machine, an instance whose binary cannot serve its metric (with the build kind that would)."""
    names = [i.name for i in p.instances]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise AutotuneError(f"two instances are named {dup[0]!r}", fix="give every instance its own name")
    known = {h.name for h in p.hosts}
    for i in p.instances:
        if i.host not in known:
            raise AutotuneError(f"instance {i.name} runs on {i.host!r}, which is not a host of the portfolio",
                                fix=f"use one of: {', '.join(sorted(known))}")
    for h in p.hosts:
        mains = [i.name for i in p.on(h.name) if i.role == MAIN]
        if len(mains) != 1:
            raise AutotuneError(f"host {h.name} has {len(mains)} main instances ({', '.join(mains) or 'none'})",
                                fix="AFL++ syncs through one -M instance per machine: make exactly one main")
    for i in p.instances:
        check_serves(i.config, what=f"instance {i.name} ({i.config.name})")
