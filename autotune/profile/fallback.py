"""Second-hand sources: py-cpuinfo (brand, flags, cache totals) and ``lscpu -C``.

py-cpuinfo takes about a second (it runs CPUID in a child process), so it is called lazily,
once per process, and only when sysfs/procfs left a gap. Its cache sizes are totals over all
instances, and its L2 line size and associativity are wrong on some hosts (2048 and 7 on a
Sapphire Rapids VM whose sysfs says 64 and 16), so only its totals are used.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

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


def _bytes(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value > 0 else None
    if isinstance(value, str):  # older py-cpuinfo: "256 KB"
        parts = value.split()
        try:
            n = int(parts[0])
        except (IndexError, ValueError):
            return None
        unit = parts[1].upper() if len(parts) > 1 else "B"
        return n * {"B": 1, "KB": 1 << 10, "KIB": 1 << 10, "MB": 1 << 20, "MIB": 1 << 20}.get(unit, 0) or None
    return None


def cpuinfo_caches(info: dict[str, Any]) -> list[CacheLevel]:
    """py-cpuinfo's cache totals as CacheLevel entries that know only ``total_bytes``."""
    out = []
    for key, level, kind in (("l1_data_cache_size", 1, "data"), ("l1_instruction_cache_size", 1, "instruction"),
                             ("l2_cache_size", 2, "unspecified"), ("l3_cache_size", 3, "unspecified")):
        total = _bytes(info.get(key))
        if total:
            out.append(CacheLevel(level=level, kind=kind, total_bytes=total,
                                  sources={"total_bytes": CPUINFO},
                                  note="py-cpuinfo gives the total over all instances"))
    return out


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
