"""Cache and CPU topology from sysfs (``<sysfs_root>/devices/system/cpu``).

Per CPU, ``cache/index*/{level,type,size,ways_of_associativity,coherency_line_size,
number_of_sets,shared_cpu_list}``; an instance is one set of CPUs sharing a cache, and
instances of the same shape are grouped into one :class:`CacheLevel` with a count. Unreadable
files leave that figure unknown; the caller falls back to other sources when no cache at all
could be read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from autotune.profile.cpulist import format_cpu_list, parse_cpu_list, parse_cpu_mask
from autotune.profile.model import CACHE_KINDS, CacheLevel

SOURCE = "sysfs"
_TYPES = {"data": "data", "instruction": "instruction", "unified": "unified"}


@dataclass
class Topology:
    """What sysfs says about the CPUs; any part may be missing (empty / None)."""

    cpus: list[int] = field(default_factory=list)  # online CPUs
    core_of: dict[int, frozenset[int]] = field(default_factory=dict)  # cpu -> its SMT siblings
    package_of: dict[int, int] = field(default_factory=dict)  # cpu -> physical package id
    smt: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def cores(self) -> int | None:
        if not self.core_of or len(self.core_of) < len(self.cpus):
            return None
        return len(set(self.core_of.values()))

    @property
    def packages(self) -> int | None:
        if not self.package_of or len(self.package_of) < len(self.cpus):
            return None
        return len(set(self.package_of.values()))

    @property
    def threads_per_core(self) -> int | None:
        return max(len(s) for s in self.core_of.values()) if self.cores else None

    def package_cpus(self, package: int) -> frozenset[int]:
        return frozenset(c for c, p in self.package_of.items() if p == package)

    def scope_of(self, sharing: frozenset[int]) -> str:
        """core / cluster / package / system for the CPUs sharing one cache instance."""
        if not sharing:
            return "unknown"
        if self.core_of and any(sharing <= sib for sib in self.core_of.values()):
            return "core"
        if self.package_of and all(c in self.package_of for c in sharing):
            pkgs = {self.package_of[c] for c in sharing}
            if len(pkgs) > 1:
                return "system"
            whole = self.package_cpus(next(iter(pkgs)))
            return "package" if sharing >= whole else "cluster"
        return "unknown"


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def parse_size(text: str | None) -> int | None:
    """sysfs cache size ('48K', '2048K', '1M', '512') -> bytes."""
    if not text:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", text, re.IGNORECASE)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2).upper()]


def cpu_dir(sysfs_root: Path) -> Path:
    return Path(sysfs_root) / "devices/system/cpu"


def read_topology(*, sysfs_root: Path) -> Topology:
    base = cpu_dir(sysfs_root)
    topo = Topology()
    online = _read(base / "online")
    try:
        if online is not None:
            topo.cpus = sorted(parse_cpu_list(online))
        else:
            topo.cpus = sorted(int(p.name[3:]) for p in base.iterdir() if re.fullmatch(r"cpu\d+", p.name))
    except (OSError, ValueError) as exc:
        topo.problems.append(f"cannot list CPUs under {base}: {getattr(exc, 'strerror', None) or exc}")
        return topo
    for cpu in topo.cpus:
        t = base / f"cpu{cpu}/topology"
        siblings = _read(t / "thread_siblings_list") or _read(t / "core_cpus_list")
        if siblings:
            try:
                topo.core_of[cpu] = parse_cpu_list(siblings)
            except ValueError:
                pass
        pkg = _int(_read(t / "physical_package_id"))
        if pkg is not None:
            topo.package_of[cpu] = pkg
    topo.smt = _read(base / "smt/control")
    return topo


@dataclass
class _Instance:
    level: int
    kind: str
    size: int | None
    ways: int | None
    line: int | None
    sets: int | None
    sharing: frozenset[int] | None


def _read_index(index: Path) -> _Instance | None:
    level = _int(_read(index / "level"))
    kind = _TYPES.get((_read(index / "type") or "").lower())
    if level is None or kind is None:
        return None
    sharing = None
    text = _read(index / "shared_cpu_list")
    try:
        if text is not None:
            sharing = parse_cpu_list(text)
        elif (mask := _read(index / "shared_cpu_map")) is not None:
            sharing = parse_cpu_mask(mask)
    except ValueError:
        sharing = None
    ways = _int(_read(index / "ways_of_associativity"))
    return _Instance(
        level=level, kind=kind, size=parse_size(_read(index / "size")),
        ways=ways if ways else None,  # 0 means fully associative or not reported
        line=_int(_read(index / "coherency_line_size")) or None,
        sets=_int(_read(index / "number_of_sets")) or None,
        sharing=sharing or None,
    )


def read_caches(*, sysfs_root: Path, topology: Topology) -> tuple[list[CacheLevel], list[str]]:
    """Every cache shape sysfs describes, grouped; plus the problems met (for notes)."""
    base = cpu_dir(sysfs_root)
    problems: list[str] = []
    # instance identity -> (instance, CPUs that reported it)
    seen: dict[tuple, tuple[_Instance, set[int]]] = {}
    for cpu in topology.cpus:
        cache = base / f"cpu{cpu}/cache"
        try:
            indexes = sorted(p for p in cache.iterdir() if re.fullmatch(r"index\d+", p.name))
        except OSError as exc:
            problems.append(f"cannot read {cache}: {exc.strerror or exc}")
            continue
        for index in indexes:
            inst = _read_index(index)
            if inst is None:
                problems.append(f"cannot read level/type in {index}")
                continue
            ident = (inst.level, inst.kind, inst.sharing if inst.sharing else ("cpu", cpu))
            entry = seen.setdefault(ident, (inst, set()))
            entry[1].add(cpu)
    groups: dict[tuple, list[tuple[_Instance, set[int]]]] = {}
    for inst, cpus in seen.values():
        n_sharing = len(inst.sharing) if inst.sharing else None
        shape = (inst.level, inst.kind, inst.size, inst.ways, inst.line, inst.sets, n_sharing)
        groups.setdefault(shape, []).append((inst, cpus))
    caches = [_group_to_level(members, topology) for members in groups.values()]
    caches.sort(key=lambda c: (c.level, CACHE_KINDS.index(c.kind), min(parse_cpu_list(c.cpus)) if c.cpus else 0))
    return caches, problems


def _group_to_level(members: list[tuple[_Instance, set[int]]], topology: Topology) -> CacheLevel:
    members.sort(key=lambda m: min(m[1]))
    first = members[0][0]
    served: set[int] = set()
    for inst, cpus in members:
        served |= set(inst.sharing) if inst.sharing else cpus
    known_sharing = first.sharing is not None
    instances = len(members) if known_sharing else None
    total = first.size * instances if (first.size and instances) else None
    sources = {}
    values = {
        "size_bytes": first.size, "instances": instances, "total_bytes": total, "ways": first.ways,
        "line_bytes": first.line, "sets": first.sets,
        "shared_cpu_list": format_cpu_list(first.sharing) if known_sharing else None,
        "sharing_cpus": len(first.sharing) if known_sharing else None,
        "cpus": format_cpu_list(served) if served else None,
    }
    for key, value in values.items():
        if value is not None:
            sources[key] = SOURCE if key != "total_bytes" else "sysfs (size x instances)"
    return CacheLevel(
        level=first.level, kind=first.kind, **values,
        scope=topology.scope_of(first.sharing) if known_sharing else "unknown",
        sources=sources,
    )
