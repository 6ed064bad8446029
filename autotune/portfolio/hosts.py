"""The machines of a campaign: a hosts file, one machine a line.

    # NAME   CORES          ROOT (optional)
    fuzz1    8              /srv/fuzz/out
    fuzz2    cpus=0-3,6     fuzzer@fuzz2:/srv/fuzz/out

CORES is a count (CPUs 0..N-1) or ``cpus=`` a CPU list (``cpus=0-3,6``, ``cpus=1``): the CPUs afl-fuzz
instances are pinned to; ROOT is that machine's afl-fuzz output directory (``-o``), a path on the machine, written
``user@host:/path`` when the machine is not the one that runs the sync script (reached by ssh). A
line that cannot be read is an error naming the line and its fix; names are unique.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from autotune.errors import AutotuneError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_CPUS = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


@dataclass(frozen=True)
class Host:
    name: str
    cpus: tuple[int, ...]  # the CPUs instances are pinned to, in order
    root: str  # the output directory on that machine: /path, or user@host:/path (ssh)

    @property
    def cores(self) -> int:
        return len(self.cpus)

    @property
    def remote(self) -> str | None:
        """``user@host`` of a root reached by ssh, else None (a path on the machine running the scripts)."""
        head, sep, _ = self.root.partition(":")
        return head if sep and "/" not in head else None

    @property
    def path(self) -> str:
        """The root as a path on its own machine."""
        return self.root.partition(":")[2] if self.remote else self.root

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "cpus": list(self.cpus), "root": self.root}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Host":
        return cls(name=str(d["name"]), cpus=tuple(int(c) for c in d["cpus"]), root=str(d["root"]))


def parse_cpus(text: str) -> tuple[int, ...]:
    """``8`` -> 0..7; ``cpus=0-3,6`` -> 0, 1, 2, 3, 6. ValueError when it is neither."""
    if text.isdigit():
        n = int(text)
        if n < 1:
            raise ValueError("a machine needs at least one core")
        return tuple(range(n))
    if not text.startswith("cpus=") or not _CPUS.match(text[5:]):
        raise ValueError(f"{text!r} is neither a core count nor cpus=LIST")
    text = text[5:]
    cpus: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if b < a:
            raise ValueError(f"CPU range {part!r} runs backwards")
        cpus += [c for c in range(a, b + 1) if c not in cpus]
    return tuple(cpus)


def parse_hosts(text: str, *, path: str | Path = "<hosts>", default_root: Path) -> list[Host]:
    """The hosts of a hosts file's ``text``; ``default_root``/NAME/out when a line gives no ROOT."""
    hosts: list[Host] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{path}:{n}: {raw.strip()!r}"
        fields = line.split()
        fix = "write NAME CORES [ROOT], e.g. `fuzz1 8 /srv/fuzz/out` or `fuzz2 cpus=0-3 user@fuzz2:/srv/out`"
        if len(fields) not in (2, 3):
            raise AutotuneError(f"{where}: {len(fields)} fields, expected 2 or 3", fix=fix)
        name, cores = fields[0], fields[1]
        if not _NAME.match(name):
            raise AutotuneError(f"{where}: {name!r} is not a host name (letters, digits, . _ -)", fix=fix)
        if any(h.name == name for h in hosts):
            raise AutotuneError(f"{where}: host {name!r} is named twice", fix="give every machine its own name")
        try:
            cpus = parse_cpus(cores)
        except ValueError as exc:
            raise AutotuneError(f"{where}: {exc}", fix=fix) from exc
        root = fields[2] if len(fields) == 3 else str(Path(default_root).resolve() / name / "out")
        host = Host(name=name, cpus=cpus, root=root)
        if not host.path.startswith("/"):
            raise AutotuneError(f"{where}: the root {root!r} is not an absolute path", fix=fix)
        hosts.append(host)
    if not hosts:
        raise AutotuneError(f"{path}: no host", fix="write one machine a line: NAME CORES [ROOT]")
    return hosts


def read_hosts(path: Path, *, default_root: Path) -> list[Host]:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise AutotuneError(f"cannot read the hosts file {path} ({exc.strerror})",
                            fix="give a file with one machine a line: NAME CORES [ROOT]") from exc
    return parse_hosts(text, path=path, default_root=default_root)
