"""Reading what one afl-fuzz 4.04c instance left in its output directory (``-o DIR``, instance
``default``): ``fuzzer_stats``, ``plot_data`` and the kept inputs (queue, crashes, hangs).

- ``plot_data``: a CSV whose first line is a header comment naming the columns
  (``# relative_time, cycles_done, ..., edges_found`` in 4.04c); the columns are read from that
  line, never assumed. ``relative_time`` is in seconds since the start in 4.04c.
- Kept inputs: files named ``id:NNNNNN,...,time:T,...`` where ``T`` is milliseconds since the
  campaign's start (seeds: ``time:0``); afl-fuzz's own files (``README.txt``, ``.state/``) are
  not inputs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from autotune.errors import DocumentError

KINDS = ("queue", "crashes", "hangs")
_TIME = re.compile(r"(?:^|,)time:(\d+)(?:,|$)")


@dataclass(frozen=True)
class KeptInput:
    kind: str  # queue, crashes, hangs
    path: Path
    time_ms: int | None  # from the name; None when the name has no time: field
    instance: str = "default"  # the afl-fuzz instance (-M/-S id) that kept it

    @property
    def imported(self) -> bool:
        """Taken from another instance by afl-fuzz's sync (its name says ``sync:``): not its own find."""
        return ",sync:" in self.path.name

    def to_dict(self) -> dict:
        return {"kind": self.kind, "name": self.path.name, "time_ms": self.time_ms, "instance": self.instance}


def instance_dir(afl_out: Path) -> Path:
    return afl_out / "default"


def read_fuzzer_stats(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise DocumentError(path, f"cannot read it ({exc})", fix="check that afl-fuzz ran to its end") from exc
    out: dict[str, str] = {}
    for line in text.splitlines():
        k, sep, v = line.partition(":")
        if sep:
            out[k.strip()] = v.strip()
    return out


@dataclass(frozen=True)
class PlotData:
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def column(self, name: str) -> list[float]:
        """A column's values as numbers ("80.08%" -> 80.08)."""
        i = self.columns.index(name)
        return [float(r[i].rstrip("%")) for r in self.rows if i < len(r)]

    def to_dict(self) -> dict:
        return {"columns": list(self.columns), "rows": [list(r) for r in self.rows]}

    @classmethod
    def from_dict(cls, d: dict) -> "PlotData":
        return cls(columns=tuple(d["columns"]), rows=tuple(tuple(r) for r in d["rows"]))


def read_plot_data(path: Path) -> PlotData:
    """plot_data's columns (from its header line) and rows, as text."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as exc:
        raise DocumentError(path, f"cannot read it ({exc})", fix="check that afl-fuzz ran to its end") from exc
    if not lines or not lines[0].startswith("#"):
        raise DocumentError(path, "no header line ('# relative_time, ...')", fix="this afl-fuzz writes another format")
    columns = tuple(c.strip() for c in lines[0].lstrip("#").split(","))
    rows = tuple(tuple(c.strip() for c in line.split(",")) for line in lines[1:] if line.strip()
                 and not line.startswith("#"))
    return PlotData(columns=columns, rows=rows)


def time_of(name: str) -> int | None:
    m = _TIME.search(name)
    return int(m.group(1)) if m else None


def kept_inputs(afl_out: Path, *, instance: str = "default", offset_ms: int = 0) -> list[KeptInput]:
    """Every input the instance kept, in queue, crashes, hangs order (each sorted by name); its time
    shifted by ``offset_ms`` (an instance that started later than the campaign's first)."""
    inst = afl_out / instance
    found: list[KeptInput] = []
    for kind in KINDS:
        d = inst / kind
        if not d.is_dir():
            continue
        for p in sorted(d.iterdir()):
            if p.is_file() and p.name.startswith("id:"):
                t = time_of(p.name)
                found.append(KeptInput(kind=kind, path=p, time_ms=None if t is None else t + offset_ms,
                                       instance=instance))
    return found


def instances_of(afl_out: Path) -> list[str]:
    """The afl-fuzz instances of an output directory (-M/-S ids; ``default`` for a lone instance):
    its subdirectories holding a fuzzer_stats, by name."""
    if not afl_out.is_dir():
        return []
    return sorted(d.name for d in afl_out.iterdir() if d.is_dir() and (d / "fuzzer_stats").is_file())
