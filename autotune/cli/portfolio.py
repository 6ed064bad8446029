"""`autotune portfolio`: a campaign of several afl-fuzz instances, on one or more machines, on AFL++'s
own -M/-S sync: the binaries built, one launch script per machine, the cross-machine sync script."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from autotune.cli.common import command, err, out, print_json
from autotune.cli.options import JsonOpt, OutDirOpt, TargetOptions, option_group
from autotune.errors import AutotuneError

HELP = (
    "Write a campaign of afl-fuzz instances as AFL++ documents parallel fuzzing: one -M main per machine "
    "and -S secondaries in one output directory (AFL++'s variations on the secondaries: AFL_DISABLE_TRIM, "
    "-P/-p explore/exploit, -L 0, -Z; with --cmplog, AFL++'s CMPLOG companion), each instance pinned to a CPU under its env file, and for several "
    "machines (--hosts) the sync of the main instances' queues between them. --config gives the "
    "configurations (as `autotune compare` takes them: default, an env file such as race/autotune-run.env) "
    "to the instances in turn: the first to each machine's main. Builds every binary first; writes "
    "portfolio.json, launch-<host>.sh, env/, host.env and sync.sh to --out."
)


@command("portfolio", HELP)
@option_group("target", TargetOptions, omit=("harness",))
def portfolio_cmd(
    target: TargetOptions = TargetOptions(),
    config: Annotated[Optional[list[str]], typer.Option(
        "--config", help="A configuration ([NAME=]default | runtime | ENV file | BUILD.env+RUN.env); repeat: "
                         "the instances take them in turn. Default: AFL++'s default for every instance.")] = None,
    instances: Annotated[Optional[int], typer.Option(
        "--instances", help="afl-fuzz instances per machine (default: its cores).")] = None,
    hosts: Annotated[Optional[Path], typer.Option(
        "--hosts", help="Machines, one a line: NAME CORES [ROOT] (CORES a count or cpus=LIST; ROOT the output "
                        "directory there, user@host:/path when reached by ssh). Default: this machine, its cores.")] = None,
    cmplog: Annotated[int, typer.Option(
        "--cmplog", help="Secondaries per machine that also run AFL++'s CMPLOG companion (afl-fuzz -c: the target "
                         "built by afl-clang-fast under AFL_LLVM_CMPLOG=1; the first with -l 2AT), as AFL++'s "
                         "recipe has one or two. Default 0: none.")] = 0,
    sync_minutes: Annotated[float, typer.Option(
        "--sync-minutes", min=0.05, help="Minutes between the main instances' queue copies across machines.")] = 30.0,
    out_dir: OutDirOpt = Path("portfolio"),
    json_out: JsonOpt = False,
) -> None:
    from autotune.portfolio.build import PortfolioSettings, build_portfolio

    spec = target.recipe()
    if spec is None:
        raise AutotuneError("a portfolio needs the target's recipe: every configuration builds its own binary",
                            fix="give --demo, --source files or an OSS-Fuzz style --build-script")
    settings = PortfolioSettings(configs=config or ["default"], instances=instances, hosts_file=hosts,
                                 sync_interval_s=int(round(sync_minutes * 60)), cmplog=cmplog)
    res = build_portfolio(spec=spec, seeds=target.seeds(required=True), out_dir=out_dir, settings=settings,
                          warn=lambda m: err.print(f"warning: {m}", highlight=False, soft_wrap=True),
                          notice=lambda m: err.print(m, highlight=False, soft_wrap=True))
    if json_out:
        print_json(res)
        return
    for i in res["portfolio"]["instances"]:
        cfg = i["config"]
        extra = " ".join((["CMPLOG (-c)"] if i.get("cmplog") else []) + i["afl_args"]
                         + [f"{k}={v}" for k, v in i["afl_env"].items()])
        out.print(f"{i['host']}: {i['name']} ({i['role']}, CPU {i['cpu']}): {cfg['name']}" + (f"; {extra}" if extra else ""),
                  highlight=False, soft_wrap=True)
    for h in res["portfolio"]["hosts"]:
        out.print(f"launch on {h['name']}: bash {Path(res['out_dir']) / ('launch-' + h['name'] + '.sh')} [SECONDS]",
                  highlight=False, soft_wrap=True)
    if len(res["portfolio"]["hosts"]) > 1:
        out.print(f"sync between machines (run on one of them): bash {Path(res['out_dir']) / 'sync.sh'}",
                  highlight=False, soft_wrap=True)
    out.print(f"status: autotune status {res['portfolio']['hosts'][0]['root']}", highlight=False, soft_wrap=True)
