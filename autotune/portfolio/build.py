"""Building a portfolio directory: parse the configurations and hosts, check the portfolio, build each
distinct binary (cached builds), write the scripts and portfolio.json (last, atomically)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from autotune import afl
from autotune.compare.config import parse_configs
from autotune.errors import AutotuneError
from autotune.io import write_json_atomic
from autotune.portfolio.hosts import Host, read_hosts
from autotune.portfolio.model import DEFAULT_SYNC_INTERVAL_S, make_portfolio
from autotune.target import build
from autotune.trials import host_cores

PORTFOLIO_JSON = "portfolio.json"


def this_host(*, out_dir: Path):
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in socket.gethostname().split(".")[0]) or "local"
    return Host(name=name, cpus=tuple(host_cores()), root=str(Path(out_dir).resolve() / "out"))


# AFL++'s CMPLOG build of the target (instrumentation/README.cmplog.md): afl-clang-fast under this variable
CMPLOG_BUILD = {"AFL_LLVM_CMPLOG": "1"}


@dataclass(frozen=True)
class PortfolioSettings:
    """The portfolio asked for: the ``configs`` (as `autotune compare --config` takes them) its instances
    take in turn, ``instances`` per machine (None: its cores), the machines (``hosts_file``; None: this
    one), the main instances' sync interval, and how many secondaries per machine also run AFL++'s
    CMPLOG companion (autotune.portfolio.model.make_portfolio)."""

    configs: Sequence[str] = ("default",)
    instances: int | None = None
    hosts_file: Path | None = None
    sync_interval_s: int = DEFAULT_SYNC_INTERVAL_S
    cmplog: int = 0


def build_portfolio(*, spec, seeds: Path, out_dir: Path, settings: PortfolioSettings,
                    warn: Callable[[str], None] | None = None,
                    notice: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build ``settings``' portfolio of the recipe ``spec`` with ``seeds`` into ``out_dir`` (module
    docstring); ``warn`` and ``notice`` hear what the user should know. Returns portfolio.json's document."""
    from autotune.portfolio.launch import write_scripts  # lazy: numpy

    out_dir = Path(out_dir).resolve()
    cfgs = parse_configs(list(settings.configs))
    hosts = (read_hosts(settings.hosts_file, default_root=out_dir / "hosts") if settings.hosts_file
             else [this_host(out_dir=out_dir)])
    env = afl.base_env()
    fuzz = afl.find_tool("afl-fuzz", env=env)
    p = make_portfolio(configs=cfgs, hosts=hosts, instances=settings.instances, sync_interval_s=settings.sync_interval_s,
                       cmplog=settings.cmplog, warn=warn, afl_version=afl.aflpp_version(fuzz, env=env))
    known = afl.known_variables(tools=[str(fuzz)])
    binaries: dict[str, str] = {}
    by_key: dict[tuple, str] = {}
    for i in p.instances:  # every binary before anything is written
        if i.binary_key not in by_key:
            if notice:
                notice(f"building {i.config.name} ({i.config.compiler}; "
                       "cached once built)")
            by_key[i.binary_key] = str(build(spec=spec, cc_kind=i.config.cc_kind, build_vars=i.config.build_vars,
                                             env=env))
        binaries[i.name] = by_key[i.binary_key]
    cmplog_binary = None
    if any(i.cmplog for i in p.instances):
        if notice:
            notice("building AFL++'s CMPLOG companion (afl-clang-fast, AFL_LLVM_CMPLOG=1; cached once built)")
        cmplog_binary = str(build(spec=spec, cc_kind="afl", build_vars=CMPLOG_BUILD, env=env))
    seeds = Path(seeds).resolve()
    if not seeds.is_dir():
        raise AutotuneError(f"seeds {seeds} is not a directory", fix="give --corpus DIR")
    written = write_scripts(p, out_dir, binaries=binaries, seeds=str(seeds), afl_fuzz=str(fuzz),
                            host_env=dict(afl.HOST_ENV), known=known, cmplog_binary=cmplog_binary)
    doc = {"schema_version": 1, "out_dir": str(out_dir), "portfolio": p.to_dict(), "binaries": binaries,
           "cmplog_binary": cmplog_binary,
           "seeds": str(seeds), "afl_fuzz": str(fuzz), "target": spec.to_dict(),
           "written": [str(w) for w in written] + [str(out_dir / PORTFOLIO_JSON)]}
    write_json_atomic(out_dir / PORTFOLIO_JSON, doc)
    return doc
