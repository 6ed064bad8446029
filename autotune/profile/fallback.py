"""Second-hand sources: py-cpuinfo (brand, flags, cache totals) and ``lscpu -C``.

py-cpuinfo takes about a second (it runs CPUID in a child process), so it is called lazily,
once per process, and only when sysfs/procfs left a gap. Its cache sizes are totals over all
instances, and its L2 line size and associativity are wrong on some hosts (2048 and 7 on a
Sapphire Rapids VM whose sysfs says 64 and 16), so only its totals are used.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Mapping

from autotune.profile.model import CacheLevel

CPUINFO = "py-cpuinfo"
LSCPU = "lscpu"


@functools.lru_cache(maxsize=1)
def cpuinfo_dict() -> dict[str, Any]:
    """py-cpuinfo's report for this machine (cached: it takes about a second)."""
    try:
        import cpuinfo
    except ImportError:  # pragma: no cover - a dependency
        return {}
    try:
        return dict(cpuinfo.get_cpu_info())
    except Exception:  # py-cpuinfo fails on some platforms; it is only a fallback
        return {}


# Cache sizes as py-cpuinfo 9.0.0 gives them: an int (bytes), or the string lscpu, sysctl or
# /proc/cpuinfo printed when its own parser gave up: "2.5 MiB", "256 KB", "1 MB", "32 KiB", "8192K",
# "2 MiB (2 instances)". Cache sizes are binary in all of them (lscpu and the kernel's
# /proc/cpuinfo "cache size: 8192 KB" count KB = 1024 bytes; so does py-cpuinfo's own parser).
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*(?:\([^)]*\))?\s*$")
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}


def parse_cache_size(value: Any) -> int:
    """Bytes of a py-cpuinfo cache size (an int, or a string such as "2.5 MiB"); ValueError says why not."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, str):
        m = _SIZE.match(value)
        if m is None:
            raise ValueError(f"not a size: {value!r} (expected a number and a unit such as '2.5 MiB')")
        unit = m.group(2).lower()
        if unit not in _UNITS:
            raise ValueError(f"unknown unit {m.group(2)!r} in {value!r} (known: B, K/KB/KiB, M/MB/MiB, G/GB/GiB)")
        number = float(m.group(1)) * _UNITS[unit]
    else:
        number = float(value)
    if number != int(number) or number <= 0:
        raise ValueError(f"not a whole positive number of bytes: {value!r}")
    return int(number)


CPUINFO_CACHE_KEYS = (("l1_data_cache_size", 1, "data"), ("l1_instruction_cache_size", 1, "instruction"),
                      ("l2_cache_size", 2, "unspecified"), ("l3_cache_size", 3, "unspecified"))


def cpuinfo_caches(info: Mapping[str, Any]) -> tuple[list[CacheLevel], list[str]]:
    """py-cpuinfo's cache totals as CacheLevel entries that know only ``total_bytes``; and the
    figures it gave that could not be read (each a note naming the key and the value)."""
    out, problems = [], []
    for key, level, kind in CPUINFO_CACHE_KEYS:
        if info.get(key) in (None, "", 0):
            continue
        try:
            total = parse_cache_size(info[key])
        except ValueError as exc:
            problems.append(f"py-cpuinfo {key} left out: {exc}")
            continue
        out.append(CacheLevel(level=level, kind=kind, total_bytes=total,
                              sources={"total_bytes": CPUINFO},
                              note="py-cpuinfo gives the total over all instances"))
    return out, problems


def lscpu_caches(*, sysfs_root: Path) -> tuple[list[CacheLevel], str | None]:
    """``lscpu -C -B -J`` (reading ``sysroot`` = the parent of sysfs_root); entries and a problem."""
    exe = shutil.which("lscpu")
    if exe is None:
        return [], "lscpu not found"
    cmd = [exe, "-C", "-B", "-J"]
    sysfs_root = Path(sysfs_root)
    if sysfs_root.resolve() != Path("/sys"):
        if sysfs_root.name != "sys":
            return [], f"lscpu cannot read a sysfs tree not named 'sys' ({sysfs_root})"
        cmd += ["--sysroot", str(sysfs_root.parent)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [], f"lscpu failed: {exc}"
    if proc.returncode != 0:
        return [], f"lscpu -C failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else proc.returncode}"
    return parse_lscpu_json(proc.stdout), None


def parse_lscpu_json(text: str) -> list[CacheLevel]:
    try:
        rows = json.loads(text).get("caches", [])
    except (ValueError, AttributeError):
        return []
    out = []
    for row in rows:
        kind = {"data": "data", "instruction": "instruction", "unified": "unified"}.get(str(row.get("type", "")).lower())
        try:
            level = int(row.get("level"))
        except (TypeError, ValueError):
            continue
        if kind is None:
            continue
        one, total = _int(row.get("one-size")), _int(row.get("all-size"))
        values = {
            "size_bytes": one, "total_bytes": total,
            "instances": total // one if one and total and total % one == 0 else None,
            "ways": _int(row.get("ways")), "sets": _int(row.get("sets")),
            "line_bytes": _int(row.get("coherency-size")),
        }
        out.append(CacheLevel(level=level, kind=kind, **values,
                              sources={k: LSCPU for k, v in values.items() if v is not None}))
    return out


def _int(value: Any) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None
