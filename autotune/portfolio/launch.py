"""The portfolio's scripts: one launch script per machine and, for several machines, the sync of the
main instances' queues between them, on AFL++'s own mechanism (no layer of our own).

- ``launch-<host>.sh [SECONDS]``: every afl-fuzz of that machine, each pinned to its CPU
  (``taskset -c``, with ``AFL_NO_AFFINITY=1`` so afl-fuzz does not bind again), under its env file
  ``env/<instance>.env`` (the configuration's run-time variables, its variation's afl-fuzz variables,
  our runtime's index file in ``<root>/.autotune/``), all in the machine's output directory (``-o``),
  logs in ``<root>/<instance>.log``; SECONDS, when given, is afl-fuzz's ``-V`` (each instance stops
  after that long), else they run until stopped. ``host.env``, when present, is loaded first (what
  autotune's own trials set on this host: edit it for yours).
- ``sync.sh [ROUNDS]`` (several machines): every ``SYNC_INTERVAL`` seconds (default the portfolio's)
  copy each machine's ``main-<host>/queue`` into every other machine's output directory as
  ``main-<host>/queue``, where that machine's main imports it (AFL++ docs/fuzzing_in_depth.md, and
  its utils/distributed_fuzzing/sync_script.sh, which packs queues with tar over ssh the same way). A
  root written ``user@host:/path`` is reached by ssh; a plain path is local (two "machines" on one
  host for a test). ROUNDS > 0 stops after that many rounds.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Mapping

from autotune.emit.configuration import host_env_file, instance_env_file
from autotune.emit.write import write_env_files
from autotune.errors import AutotuneError
from autotune.io import write_text_atomic
from autotune.portfolio.hosts import Host
from autotune.portfolio.model import MAIN, Instance, Portfolio
from autotune.trials.ensemble import afl_role_flag

INDEX_DIR = ".autotune"


def index_file(inst: Instance, host: Host) -> str:
    """This instance's key->slot table on its host."""
    return f"{host.path.rstrip('/')}/{INDEX_DIR}/{inst.name}.index.bin"


def launch_script(p: Portfolio, host: Host, *, binaries: Mapping[str, str], seeds: str, afl_fuzz: str,
                  cmplog_binary: str | None = None) -> str:
    q = shlex.quote
    lines = ["#!/usr/bin/env bash",
             f"# autotune portfolio, host {host.name}: {len(p.on(host.name))} afl-fuzz instances on CPUs "
             f"{','.join(str(i.cpu) for i in p.on(host.name))}, one output directory (AFL++'s -M/-S sync).",
             "# usage: bash THIS [SECONDS]   (SECONDS: afl-fuzz -V; without it the instances run until stopped)",
             "set -euo pipefail",
             'here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)',
             f"OUT={q(host.path)}",
             f"SEEDS={q(seeds)}",
             f"AFL_FUZZ=${{AFL_FUZZ:-{q(afl_fuzz)}}}",
             'V=(); [ $# -ge 1 ] && V=(-V "$1")',
             '[ -d "$SEEDS" ] || { echo "no seeds at $SEEDS: copy them to this machine" >&2; exit 1; }']
    here = p.on(host.name)
    if any(i.cmplog for i in here) and not cmplog_binary:
        raise AutotuneError(f"host {host.name} runs CMPLOG secondaries but no CMPLOG build was given",
                            fix="build AFL++'s CMPLOG companion (afl-clang-fast, AFL_LLVM_CMPLOG=1) first")
    needed = {binaries[i.name] for i in here} | {cmplog_binary for i in here if i.cmplog}
    for b in sorted(needed):
        lines.append(f'[ -x {q(b)} ] || {{ echo "no binary at {b}: copy it to this machine" >&2; exit 1; }}')
    lines += [f'mkdir -p "$OUT/{INDEX_DIR}"',
              "launch() {  # NAME CPU: the rest is afl-fuzz's command line",
              '  local name=$1 cpu=$2; shift 2',
              '  ( [ -f "$here/host.env" ] && { set -a; . "$here/host.env"; set +a; }',
              '    set -a; . "$here/env/$name.env"; set +a',
              '    exec taskset -c "$cpu" "$AFL_FUZZ" "$@" ) >"$OUT/$name.log" 2>&1 &',
              '  echo "started $name on CPU $cpu (log: $OUT/$name.log)"',
              "}"]
    for i in p.on(host.name):
        flag = afl_role_flag(i.role)
        extra = " ".join(q(a) for a in (("-c", cmplog_binary) if i.cmplog else ()) + i.afl_args)
        lines.append(f'launch {i.name} {i.cpu} {flag} {i.name} -i "$SEEDS" -o "$OUT" "${{V[@]}}"'
                     + (f" {extra}" if extra else "") + f" -- {q(binaries[i.name])}")
    lines += ["wait", ""]
    return "\n".join(lines)


def sync_script(p: Portfolio) -> str:
    q = shlex.quote
    names = " ".join(q(h.name) for h in p.hosts)
    roots = " ".join(q(h.root) for h in p.hosts)
    return "\n".join([
        "#!/usr/bin/env bash",
        "# autotune portfolio: the main instances' queues copied between machines, as AFL++ documents",
        "# (docs/fuzzing_in_depth.md; utils/distributed_fuzzing/sync_script.sh): every SYNC_INTERVAL seconds",
        "# each machine's main-<host>/queue goes into every other machine's output directory, where that",
        "# machine's main imports it. usage: bash THIS [ROUNDS]   (ROUNDS > 0: stop after that many)",
        "set -euo pipefail",
        f"SYNC_INTERVAL=${{SYNC_INTERVAL:-{p.sync_interval_s}}}",
        'ROUNDS=${1:-0}',
        f"HOSTS=({names})",
        f"ROOTS=({roots})",
        'STAGE=$(mktemp -d); trap \'rm -rf "$STAGE"\' EXIT',
        "remote() { case $1 in *:*) [[ ${1%%:*} != */* ]] && return 0;; esac; return 1; }",
        "# a queue is read while afl-fuzz writes to it: tar's 'file changed' is expected (the next round",
        "# copies the rest); a machine that cannot be reached is said and skipped, as in AFL++'s script",
        "TAR_OUT=(tar --warning=no-file-changed --ignore-failed-read -cf -)",
        "pull() {  # ROOT NAME: NAME/queue of ROOT into the stage",
        '  local root=$1 name=$2; rm -rf "${STAGE:?}/$name"',
        '  if remote "$root"; then',
        '    ssh "${root%%:*}" "test -d ${root#*:}/$name/queue || exit 0; ${TAR_OUT[*]} -C ${root#*:} $name/queue; [ \\$? -le 1 ]" \\',
        '      | tar -C "$STAGE" -xf - || echo "sync: could not read $name from $root" >&2',
        '  elif [ -d "$root/$name/queue" ]; then',
        '    { "${TAR_OUT[@]}" -C "$root" "$name/queue" || [ $? -eq 1 ]; } | tar -C "$STAGE" -xf -',
        '  fi',
        "}",
        "push() {  # ROOT NAME: the staged NAME/queue into ROOT",
        '  local root=$1 name=$2; [ -d "$STAGE/$name/queue" ] || return 0',
        '  if remote "$root"; then',
        '    tar -C "$STAGE" -cf - "$name" | ssh "${root%%:*}" "mkdir -p ${root#*:} && tar -C ${root#*:} -xf -" \\',
        '      || echo "sync: could not write $name to $root" >&2',
        '  else mkdir -p "$root" && tar -C "$STAGE" -cf - "$name" | tar -C "$root" -xf -; fi',
        "}",
        "n=0",
        "while :; do",
        '  for i in "${!HOSTS[@]}"; do pull "${ROOTS[$i]}" "main-${HOSTS[$i]}"; done',
        '  for i in "${!HOSTS[@]}"; do for j in "${!HOSTS[@]}"; do',
        '    [ "$i" = "$j" ] || push "${ROOTS[$j]}" "main-${HOSTS[$i]}"',
        "  done; done",
        '  n=$((n + 1)); echo "sync round $n done: $(date -u +%H:%M:%S)"',
        '  [ "$ROUNDS" -gt 0 ] && [ "$n" -ge "$ROUNDS" ] && break',
        '  sleep "$SYNC_INTERVAL"',
        "done", ""])


def write_scripts(p: Portfolio, out_dir: Path, *, binaries: Mapping[str, str], seeds: str, afl_fuzz: str,
                  host_env: Mapping[str, str], known: set[str] | None, cmplog_binary: str | None = None) -> list[Path]:
    """Every file of the portfolio directory (each written atomically); portfolio.json is the caller's."""
    hosts = {h.name: h for h in p.hosts}
    envs = {f"env/{i.name}.env": instance_env_file(
        f"afl-fuzz instance {i.name} ({i.role}, host {i.host}, CPU {i.cpu}): {i.config.description or i.config.name}",
        i.config, main=i.role == MAIN, afl_env=i.afl_env, index_file=index_file(i, hosts[i.host]), known=known)
        for i in p.instances}
    envs["host.env"] = host_env_file(host_env)
    written: list[Path] = write_env_files(out_dir, envs)  # emit's one writer of env files
    for h in p.hosts:
        path = write_text_atomic(out_dir / f"launch-{h.name}.sh",
                                 launch_script(p, h, binaries=binaries, seeds=seeds, afl_fuzz=afl_fuzz,
                                               cmplog_binary=cmplog_binary))
        path.chmod(0o755)
        written.append(path)
    if len(p.hosts) > 1:
        path = write_text_atomic(out_dir / "sync.sh", sync_script(p))
        path.chmod(0o755)
        written.append(path)
    return written
