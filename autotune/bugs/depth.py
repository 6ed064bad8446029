"""Depth classes of known bugs, and a judgement restricted to some of them (docs/BUGS.md, "Depth").

A bug's class comes from a calibration: trials of one configuration (the bug table's 10 x 30 min of
AFL++'s default), by when and how often they triggered it:

- **shallow**: triggered within ``SHALLOW_S`` (60 s) in at least 90 % of the trials (9 of 10);
- **deep**: triggered in at most 10 % of the trials (1 of 10), whenever;
- **mid**: the rest.

Shallow bugs every configuration triggers in seconds separate nothing but speed, and deep ones are
never seen; a study that names its classes before it runs (``--depth mid``) judges on the bugs that
can tell configurations apart, so the others do not dilute the combined test. The classes are read
from a bug table's JSON (``benchmarks/bugs/table.py`` writes ``depth`` per row) or worked out from a
calibration compare's own trials (its first configuration), so a user's library gets classes the
same way the benchmark's do.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from autotune.errors import AutotuneError

SHALLOW_S = 60.0  # triggered this soon in nearly every trial: shallow
SHALLOW_SHARE = 0.9  # "nearly every": at least 9 of 10 trials
DEEP_SHARE = 0.1  # "almost never": at most 1 of 10 trials
CLASSES = ("shallow", "mid", "deep")


def classify(trigger_s: Sequence[float | None]) -> str:
    """The class of a bug from one configuration's trials: each trial's time to trigger it (None:
    never in that trial)."""
    n = len(trigger_s)
    if n == 0:
        raise ValueError("no trials to classify a bug by")
    hit = [t for t in trigger_s if t is not None]
    if sum(t <= SHALLOW_S for t in hit) >= SHALLOW_SHARE * n - 1e-9:
        return "shallow"
    if len(hit) <= DEEP_SHARE * n + 1e-9:
        return "deep"
    return "mid"


def parse_classes(values: Iterable[str]) -> tuple[str, ...]:
    """``--depth`` values (repeated or comma-separated) as classes, in CLASSES order."""
    got = {v.strip() for arg in values for v in arg.split(",") if v.strip()}
    bad = sorted(got - set(CLASSES))
    if bad:
        raise AutotuneError(f"--depth {bad[0]!r} is not a depth class", fix=f"give one or more of {', '.join(CLASSES)}")
    if not got:
        raise AutotuneError("--depth names no class", fix=f"give one or more of {', '.join(CLASSES)}")
    return tuple(c for c in CLASSES if c in got)


def _load(path: Path) -> dict:
    try:
        raw = path.read_bytes()
        return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    except (OSError, ValueError) as exc:
        raise AutotuneError(f"--depths {path}: cannot read it as JSON ({exc})",
                            fix="give a bug table's JSON (benchmarks/bugs/table.py) or a finished compare's "
                                "compare.json (.gz)") from exc


def depths_from(path: Path) -> dict[str, str]:
    """Bug -> class from ``path``: a bug table's JSON (rows with ``bug`` and ``depth``) or a finished
    compare judged by bugs (classes from its first configuration's trials, at their length)."""
    doc = _load(Path(path))
    if isinstance(doc.get("rows"), list):
        out = {str(r["bug"]): str(r["depth"]) for r in doc["rows"] if r.get("depth") in CLASSES}
        if not out:
            raise AutotuneError(f"--depths {path}: its rows carry no depth class",
                                fix="regenerate the table with benchmarks/bugs/table.py, which writes one per bug")
        return out
    if isinstance(doc.get("configs"), list) and doc["configs"]:
        trials = [t.get("bugs") for t in doc["configs"][0].get("trials", []) if t.get("bugs")]
        if not trials:
            raise AutotuneError(f"--depths {path}: its first configuration's trials were not judged by bugs",
                                fix="calibrate with `autotune compare --yardstick bugs --config default` first")
        names = sorted({b for t in trials for b in t.get("bugs", {})})
        return {b: classify([(t["bugs"].get(b) or {}).get("trigger_s") for t in trials]) for b in names}
    raise AutotuneError(f"--depths {path} is neither a bug table's JSON nor a compare.json",
                        fix="give benchmarks/results/bugtable-*.json or a calibration compare's compare.json")


@dataclass(frozen=True)
class BugScope:
    """The bugs a judgement is restricted to: those of ``classes`` by ``depths`` (bug -> class, read
    from ``source``)."""

    classes: tuple[str, ...]
    depths: Mapping[str, str]
    source: str

    @classmethod
    def read(cls, classes: Iterable[str], path: Path) -> "BugScope":
        return cls(classes=parse_classes(classes), depths=depths_from(Path(path)), source=str(path))

    def keeps(self, bug: str) -> bool:
        return self.depths.get(bug) in self.classes

    def describe(self, reached: Iterable[str]) -> str:
        """One line for the report: what it is judged on and what is left out (and why)."""
        reached = sorted(set(reached))
        kept = [b for b in reached if self.keeps(b)]
        out = [b for b in reached if not self.keeps(b)]
        unknown = [b for b in out if b not in self.depths]
        line = (f"judged on the {' and '.join(self.classes)} bugs by {self.source} ({len(kept)} reached: "
                f"{', '.join(kept) or 'none'})")
        if out:
            line += "; left out: " + ", ".join(f"{b} ({self.depths.get(b, 'no class')})" for b in out)
        if unknown:
            line += " (bugs with no class are left out: calibrate them)"
        return line
