"""The env files autotune tune writes (``afl-build.env``, ``afl-run.env``, ``autotune-run.env``).

One variable a line, ``NAME=value`` (optionally ``export NAME=value``), ``#`` comments, loadable
with ``set -a; . FILE; set +a``. :func:`read_env_file` parses that subset (shell quoting with
shlex) into an ordered dict and keeps each variable's line number, for GitHub annotations.
Nothing here touches ``os.environ``: callers pass the dict to subprocesses as ``env``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from autotune.errors import DocumentError

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class EnvFile:
    path: Path
    values: dict[str, str]
    lines: dict[str, int] = field(default_factory=dict)  # name -> 1-based line number

    def to_dict(self) -> dict:
        return {"path": str(self.path), "values": dict(self.values)}


def parse_env_text(text: str, *, path: Path) -> EnvFile:
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, eq, rest = line.partition("=")
        if not eq or not _NAME.match(name):
            raise DocumentError(path, f"line {no} is not NAME=value: {raw.strip()[:80]!r}",
                                fix="re-create the tuned directory with `autotune tune`")
        try:
            words = shlex.split(rest, comments=True)
        except ValueError as exc:
            raise DocumentError(path, f"line {no}: bad quoting ({exc})",
                                fix="re-create the tuned directory with `autotune tune`") from exc
        if len(words) > 1:
            raise DocumentError(path, f"line {no}: the value of {name} has unquoted spaces",
                                fix=f"quote it: {name}=\"...\"")
        values[name] = words[0] if words else ""
        lines[name] = no
    return EnvFile(path=path, values=values, lines=lines)


def read_env_file(path: Path) -> EnvFile:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise DocumentError(path, "file not found", fix="run `autotune tune` to write the tuned directory") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise DocumentError(path, f"cannot read it ({exc})", fix="re-create it with `autotune tune`") from exc
    return parse_env_text(text, path=path)
