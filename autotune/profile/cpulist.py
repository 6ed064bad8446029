"""CPU lists as the kernel writes them ("0-3,8,10-11") and hex CPU masks ("ff,00000003")."""

from __future__ import annotations


def parse_cpu_list(text: str) -> frozenset[int]:
    """Parse a kernel CPU list such as ``0-3,8``; raise ValueError on anything else."""
    cpus: set[int] = set()
    text = text.strip()
    if not text:
        return frozenset()
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo_s, hi_s = part.split("-", 1)
            lo, hi = int(lo_s), int(hi_s)
            if lo < 0 or hi < lo:
                raise ValueError(f"bad CPU range {part!r}")
            cpus.update(range(lo, hi + 1))
        else:
            cpu = int(part)
            if cpu < 0:
                raise ValueError(f"bad CPU number {part!r}")
            cpus.add(cpu)
    return frozenset(cpus)


def parse_cpu_mask(text: str) -> frozenset[int]:
    """Parse a kernel hex CPU mask such as ``00000000,00000003`` (32-bit words, high first)."""
    digits = text.strip().replace(",", "")
    if not digits:
        return frozenset()
    value = int(digits, 16)
    return frozenset(i for i in range(value.bit_length()) if value >> i & 1)


def format_cpu_list(cpus) -> str:
    """Format CPUs as a kernel CPU list: {0, 1, 2, 5} -> ``0-2,5``."""
    ordered = sorted(set(cpus))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)
