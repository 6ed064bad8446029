"""Merging raw profiles (llvm-profdata merge) and reading the covered totals (llvm-cov export).

``llvm-cov export -format=text -summary-only`` prints JSON whose ``data[0].totals`` has, per
kind, ``count`` and ``covered``:

- ``branches``: each outcome of each condition is one branch (an ``if`` gives two, ``a && b``
  four, each ``case`` of a ``switch`` two: taken / not taken), covered when its count is non-zero
  (clang 12+ records branch regions; llvm-cov shows them with ``-show-branches``);
- ``regions``: the code regions of the mapping; ``lines``: source lines with code;
  ``functions``: functions entered.

Counts add up under merging, so the merge of the profiles of a set of inputs covers what the
union of their runs covered.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from autotune.errors import AutotuneError
from autotune.trials.llvmcov.tools import LlvmTools

KINDS = ("branches", "regions", "lines", "functions")
TOOL_TIMEOUT_S = 1800


@dataclass(frozen=True)
class CoverageTotals:
    covered: dict[str, int]  # per kind (KINDS)
    count: dict[str, int]  # what the binary has of each kind

    @property
    def branches(self) -> int:
        return self.covered["branches"]

    def to_dict(self) -> dict:
        return {k: {"covered": self.covered[k], "count": self.count[k]} for k in KINDS}

    @classmethod
    def from_dict(cls, d: Mapping) -> "CoverageTotals":
        return cls(covered={k: int(d[k]["covered"]) for k in KINDS}, count={k: int(d[k]["count"]) for k in KINDS})

    @classmethod
    def none(cls, count: Mapping[str, int] | None = None) -> "CoverageTotals":
        return cls(covered={k: 0 for k in KINDS}, count={k: int((count or {}).get(k, 0)) for k in KINDS})


def _run(argv: list[str], *, env: Mapping[str, str], what: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, env=dict(env), timeout=TOOL_TIMEOUT_S)
    if proc.returncode != 0:
        raise AutotuneError(f"{what} failed (exit {proc.returncode}):\n"
                            f"{proc.stderr.decode(errors='replace')[-2000:]}",
                            fix="run it by hand: " + " ".join(argv))
    return proc


def merge_profiles(*, tools: LlvmTools, profiles: Sequence[Path], out: Path, env: Mapping[str, str],
                   prefix: Sequence[str] = ()) -> Path:
    """``llvm-profdata merge`` of ``profiles`` (raw or indexed) into ``out``; one thread."""
    listing = out.with_name(out.name + ".inputs")
    listing.write_text("".join(f"{p}\n" for p in profiles))
    tmp = out.with_name(out.name + ".tmp")
    _run([*prefix, tools.profdata, "merge", "-sparse", "-num-threads=1", f"-input-files={listing}", "-o", str(tmp)],
         env=env, what=f"llvm-profdata merge of {len(profiles)} profiles")
    listing.unlink(missing_ok=True)
    tmp.replace(out)
    return out


def export_totals(*, tools: LlvmTools, binary: Path, profdata: Path, env: Mapping[str, str],
                  prefix: Sequence[str] = ()) -> CoverageTotals:
    """What ``profdata`` covers of ``binary``: llvm-cov export's totals."""
    proc = _run([*prefix, tools.cov, "export", "-format=text", "-summary-only", f"-instr-profile={profdata}",
                 str(binary)], env=env, what=f"llvm-cov export of {binary}")
    try:
        totals = json.loads(proc.stdout)["data"][0]["totals"]
        res = CoverageTotals(covered={k: int(totals[k]["covered"]) for k in KINDS},
                             count={k: int(totals[k]["count"]) for k in KINDS})
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise AutotuneError(f"llvm-cov export of {binary} printed no totals ({exc})",
                            fix=f"check that {tools.cov} is LLVM {tools.major}'s llvm-cov") from exc
    if res.count["regions"] == 0:
        raise AutotuneError(f"the coverage build {binary} has no coverage mapping (no region)",
                            fix="the build must compile the target with $CFLAGS (-fprofile-instr-generate "
                                "-fcoverage-mapping)")
    return res
