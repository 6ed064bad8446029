"""Detect this host's profile: sysfs first, then py-cpuinfo and ``lscpu -C`` for what is missing."""

from __future__ import annotations

import dataclasses
import platform
import socket
from pathlib import Path
from typing import Any, Mapping

from autotune.profile import fallback, procfs, sysfs
from autotune.profile.checks import hugetlb_pages, run_host_checks, thp_mode
from autotune.profile.cpulist import format_cpu_list
from autotune.profile.model import CACHE_FIGURES, CACHE_KINDS, CacheLevel, HostProfile


def _is_live(sysfs_root: Path, procfs_root: Path) -> bool:
    return Path(sysfs_root).resolve() == Path("/sys") and Path(procfs_root).resolve() == Path("/proc")


def detect_host(
    *,
    sysfs_root: Path = Path("/sys"),
    procfs_root: Path = Path("/proc"),
    use_cpuinfo: bool | None = None,
    use_lscpu: bool = True,
    name: str | None = None,
    cpuinfo: Mapping[str, Any] | None = None,
) -> HostProfile:
    """Profile the host whose sysfs/procfs trees are given.

    ``use_cpuinfo``: None (default) calls py-cpuinfo only when reading the live host and sysfs/
    procfs left the brand, flags or caches unknown; False never; True whenever something is
    missing, even for other trees (py-cpuinfo always describes the running machine).
    ``cpuinfo``: py-cpuinfo's answer to use instead of asking py-cpuinfo (a recorded answer of
    the host whose trees are given: tests run every fallback on every host with it); it is used
    whenever something is missing unless ``use_cpuinfo`` is False.
    """
    sysfs_root, procfs_root = Path(sysfs_root), Path(procfs_root)
    live = _is_live(sysfs_root, procfs_root)
    allow_cpuinfo = (live or cpuinfo is not None) if use_cpuinfo is None else use_cpuinfo

    def cpuinfo_answer() -> Mapping[str, Any]:
        return fallback.cpuinfo_dict() if cpuinfo is None else cpuinfo
    notes: list[str] = []
    sources: dict[str, str] = {}

    topo = sysfs.read_topology(sysfs_root=sysfs_root)
    notes += topo.problems
    caches, problems = sysfs.read_caches(sysfs_root=sysfs_root, topology=topo)
    notes += problems
    cpu = procfs.read_cpuinfo(procfs_root=procfs_root)

    brand, vendor, flags = cpu.brand, cpu.vendor, cpu.flags
    for key, value in (("brand", brand), ("vendor", vendor), ("flags", flags)):
        if value is not None:
            sources[key] = "procfs"

    if not caches:
        notes.append(f"no cache information in sysfs under {sysfs.cpu_dir(sysfs_root)}")
        if allow_cpuinfo:
            found, problems = fallback.cpuinfo_caches(cpuinfo_answer())
            caches = _merge(caches, found)
            notes += problems
        if use_lscpu:
            found, problem = fallback.lscpu_caches(sysfs_root=sysfs_root)
            caches = _merge(caches, found)
            if problem:
                notes.append(problem)
    if allow_cpuinfo and (brand is None or flags is None or vendor is None):
        info = cpuinfo_answer()
        if brand is None and info.get("brand_raw"):
            brand, sources["brand"] = info["brand_raw"], fallback.CPUINFO
        if vendor is None and info.get("vendor_id_raw"):
            vendor, sources["vendor"] = info["vendor_id_raw"], fallback.CPUINFO
        if flags is None and info.get("flags"):
            flags, sources["flags"] = tuple(sorted(set(info["flags"]))), fallback.CPUINFO

    arch = procfs.read_arch(procfs_root=procfs_root)
    if arch:
        sources["arch"] = "procfs"
    elif live:
        arch, sources["arch"] = platform.machine() or None, "uname"

    threads = len(topo.cpus) or cpu.processors
    if threads:
        sources["threads"] = "sysfs" if topo.cpus else "procfs"
    cores, packages = topo.cores, topo.packages
    if cores:
        sources["cores"] = "sysfs"
    elif cpu.cores_by_package:
        cores, sources["cores"] = sum(len(v) for v in cpu.cores_by_package.values()), "procfs"
    if packages:
        sources["packages"] = "sysfs"
    elif cpu.cores_by_package:
        packages, sources["packages"] = len(cpu.cores_by_package), "procfs"
    threads_per_core = topo.threads_per_core
    if threads_per_core is None and cores and threads and threads % cores == 0:
        threads_per_core = threads // cores
    if threads_per_core:
        sources["threads_per_core"] = sources.get("cores", "sysfs")

    memory_bytes = procfs.read_memtotal_bytes(procfs_root=procfs_root)
    if memory_bytes:
        sources["memory_bytes"] = "procfs"
    thp_dir = sysfs_root / "kernel/mm/transparent_hugepage"
    thp_enabled = thp_mode(_read(thp_dir / "enabled"))
    thp_defrag = thp_mode(_read(thp_dir / "defrag"))
    hugepages = hugetlb_pages(sysfs_root=sysfs_root)
    for key, value in (("thp_enabled", thp_enabled), ("thp_defrag", thp_defrag), ("hugepages", hugepages)):
        if value:
            sources[key] = "sysfs"

    return HostProfile(
        name=name or (socket.gethostname() if live else f"host at {sysfs_root}") or "this host",
        origin="detected",
        citation="detected by autotune profile from sysfs and procfs",
        arch=arch, vendor=vendor, brand=brand, flags=flags,
        packages=packages, cores=cores, threads=threads, threads_per_core=threads_per_core,
        smt=topo.smt, online_cpus=format_cpu_list(topo.cpus) if topo.cpus else None,
        memory_bytes=memory_bytes, thp_enabled=thp_enabled, thp_defrag=thp_defrag,
        hugepages=tuple(hugepages) if hugepages or (sysfs_root / "kernel/mm/hugepages").is_dir() else None,
        caches=tuple(caches),
        checks=tuple(run_host_checks(procfs_root=procfs_root, sysfs_root=sysfs_root)),
        sources=sources,
        notes=tuple(notes),
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _merge(have: list[CacheLevel], more: list[CacheLevel]) -> list[CacheLevel]:
    """Fill figures still unknown in ``have`` from ``more`` (same level, compatible kind)."""
    out = list(have)
    for extra in more:
        idx = next((i for i, c in enumerate(out) if c.level == extra.level and _compatible(c.kind, extra.kind)), None)
        if idx is None:
            out.append(extra)
            continue
        cur = out[idx]
        changes: dict = {}
        sources = dict(cur.sources)
        for fig in CACHE_FIGURES:
            if getattr(cur, fig) is None and getattr(extra, fig) is not None:
                changes[fig] = getattr(extra, fig)
                sources[fig] = extra.sources.get(fig, "?")
        if cur.kind == "unspecified" and extra.kind != "unspecified":
            changes["kind"] = extra.kind
        notes = [n for n in (cur.note, extra.note) if n]
        out[idx] = dataclasses.replace(cur, **changes, sources=sources, note="; ".join(notes))
    out.sort(key=lambda c: (c.level, CACHE_KINDS.index(c.kind)))
    return out


def _compatible(a: str, b: str) -> bool:
    if a == b:
        return True
    return "unspecified" in (a, b) and "instruction" not in (a, b)
