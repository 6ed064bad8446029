"""What procfs says about the CPU (``cpuinfo``), memory (``meminfo``) and architecture."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# /proc/cpuinfo keys that hold the brand, vendor and feature flags on x86, ARM and RISC-V.
_BRAND_KEYS = ("model name", "Hardware", "uarch", "cpu model", "Processor")
_VENDOR_KEYS = ("vendor_id", "CPU implementer", "mvendorid")
_FLAG_KEYS = ("flags", "Features", "isa")


@dataclass
class CpuInfo:
    brand: str | None = None
    vendor: str | None = None
    flags: tuple[str, ...] | None = None
    processors: int | None = None
    cores_by_package: dict[str, set[str]] = field(default_factory=dict)  # physical id -> core ids


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def read_cpuinfo(*, procfs_root: Path) -> CpuInfo:
    text = _read(Path(procfs_root) / "cpuinfo")
    info = CpuInfo()
    if text is None:
        return info
    blocks = [b for b in text.split("\n\n") if b.strip()]
    processors = 0
    for block in blocks:
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if ":" in line:
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
        if "processor" in fields:
            processors += 1
        if "physical id" in fields and "core id" in fields:
            info.cores_by_package.setdefault(fields["physical id"], set()).add(fields["core id"])
        if info.brand is None:
            info.brand = next((fields[k] for k in _BRAND_KEYS if fields.get(k)), None)
        if info.vendor is None:
            info.vendor = next((fields[k] for k in _VENDOR_KEYS if fields.get(k)), None)
        if info.flags is None:
            raw = next((fields[k] for k in _FLAG_KEYS if fields.get(k)), None)
            if raw:
                info.flags = tuple(sorted(set(raw.split())))
    info.processors = processors or None
    return info


def read_memtotal_bytes(*, procfs_root: Path) -> int | None:
    text = _read(Path(procfs_root) / "meminfo")
    for line in (text or "").splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            try:
                return int(parts[1]) * (1024 if parts[2:] == ["kB"] else 1)
            except (IndexError, ValueError):
                return None
    return None


def read_arch(*, procfs_root: Path) -> str | None:
    text = _read(Path(procfs_root) / "sys/kernel/arch")
    return text.strip() or None if text else None
