"""Host settings that afl-fuzz checks or that change a campaign's speed, as small check classes.

Each check reads procfs/sysfs under the roots it is given (so tests use fake trees) and returns
one :class:`Finding`. Severities: ``ok`` (state, nothing to do), ``advice`` (works, could be
better), ``warning`` (could not tell, or likely to cost speed), ``error`` (afl-fuzz refuses to
start with its defaults). What afl-fuzz itself checks follows AFL++'s ``check_crash_handling``
and ``check_cpu_governor`` (src/afl-fuzz-init.c): a core_pattern starting with ``|`` aborts
unless AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES is set; a governor not starting with ``perf``
whose scaling_min_freq differs from scaling_max_freq aborts unless AFL_SKIP_CPUFREQ is set.
ASLR and huge pages are what afl-system-config tunes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEVERITIES = ("ok", "advice", "warning", "error")


@dataclass(frozen=True)
class Finding:
    check: str
    severity: str  # one of SEVERITIES
    message: str
    fix: str = ""  # "" when there is nothing to fix

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, not {self.severity!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "severity": self.severity, "message": self.message, "fix": self.fix}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Finding":
        return cls(check=d["check"], severity=d["severity"], message=d["message"], fix=d.get("fix", ""))


def _unreadable(check: str, path: Path) -> Finding:
    return Finding(check, "warning", f"cannot read {path}",
                   "run on Linux with /proc mounted, or pass the right --procfs-root")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


class _KernelSettingCheck:
    """A check of one kernel setting, the file procfs's sys/kernel/<setting>: a warning when it cannot
    be read, else what ``judge`` makes of its value."""

    name: str
    setting: str

    def run(self, *, procfs_root: Path, sysfs_root: Path) -> Finding:
        path = procfs_root / "sys/kernel" / self.setting
        value = _read(path)
        if value is None:
            return _unreadable(self.name, path)
        return self.judge(value)

    def judge(self, value: str) -> Finding:
        raise NotImplementedError


class CorePatternCheck(_KernelSettingCheck):
    name, setting = "core_pattern", "core_pattern"

    def judge(self, value: str) -> Finding:
        if value.startswith("|"):
            return Finding(
                self.name, "error",
                f"core dumps are piped to a program ({value.split()[0]}): afl-fuzz aborts "
                "('Pipe at the beginning of core_pattern') unless AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1, "
                "and crashes may be seen late, as hangs",
                "echo core | sudo tee /proc/sys/kernel/core_pattern")
        return Finding(self.name, "ok", f"core_pattern is '{value}'")


class CpuGovernorCheck:
    name = "cpu_governor"

    def run(self, *, procfs_root: Path, sysfs_root: Path) -> Finding:
        cpu0 = sysfs_root / "devices/system/cpu/cpu0/cpufreq"
        governor = _read(cpu0 / "scaling_governor")
        if governor is None:
            return Finding(self.name, "ok", "no cpufreq (e.g. a VM): afl-fuzz skips this check")
        if governor.startswith("perf"):
            return Finding(self.name, "ok", f"CPU governor is '{governor}'")
        lo, hi = _read(cpu0 / "scaling_min_freq"), _read(cpu0 / "scaling_max_freq")
        if lo is not None and lo == hi:
            return Finding(self.name, "ok", f"CPU governor is '{governor}' but the clock is fixed at {int(lo) // 1000} MHz")
        return Finding(
            self.name, "error",
            f"CPU governor is '{governor}' with a scaled clock: afl-fuzz aborts ('Suboptimal CPU scaling "
            "governor') unless AFL_SKIP_CPUFREQ=1, and timings are noisier",
            "echo performance | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor "
            "(or set AFL_SKIP_CPUFREQ=1 and accept noisier timings)")


class AslrCheck(_KernelSettingCheck):
    name, setting = "aslr", "randomize_va_space"

    def judge(self, value: str) -> Finding:
        if value == "0":
            return Finding(self.name, "ok", "ASLR is off (randomize_va_space=0)")
        return Finding(
            self.name, "advice",
            f"ASLR is on (randomize_va_space={value}); afl-system-config turns it off for steadier runs",
            "echo 0 | sudo tee /proc/sys/kernel/randomize_va_space (less secure; undo with 2)")


class TransparentHugePagesCheck:
    name = "transparent_hugepages"

    def run(self, *, procfs_root: Path, sysfs_root: Path) -> Finding:
        path = sysfs_root / "kernel/mm/transparent_hugepage/enabled"
        mode = thp_mode(_read(path))
        fix = "echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled"
        if mode is None:
            return Finding(self.name, "advice", f"transparent huge pages not available ({path} unreadable)",
                           "use a kernel with CONFIG_TRANSPARENT_HUGEPAGE")
        if mode in ("always", "madvise"):
            return Finding(self.name, "ok", f"THP '{mode}': large maps can use MADV_HUGEPAGE")
        return Finding(self.name, "advice",
                       f"THP '{mode}': large maps pay for 4 KiB page walks", fix)


class HugetlbCheck:
    name = "hugetlb_pages"

    def run(self, *, procfs_root: Path, sysfs_root: Path) -> Finding:
        pages = hugetlb_pages(sysfs_root=sysfs_root)
        if not pages:
            return Finding(self.name, "ok", "no hugetlb page sizes exposed: MAP_HUGETLB fails")
        reserved = [f"{p['reserved']} x {_page(p['page_bytes'])}" for p in pages if p["reserved"]]
        if not reserved:
            return Finding(self.name, "ok", "none reserved: MAP_HUGETLB fails (THP still works)")
        return Finding(self.name, "ok", "reserved: " + ", ".join(reserved))


def _page(n: int) -> str:
    return f"{n >> 30} GiB" if n >= 1 << 30 and n % (1 << 30) == 0 else f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n >> 10} KiB"


# Run in this order; preflight reuses the same list.
HOST_CHECKS = (CorePatternCheck(), CpuGovernorCheck(), AslrCheck(), TransparentHugePagesCheck(), HugetlbCheck())


def run_host_checks(*, procfs_root: Path = Path("/proc"), sysfs_root: Path = Path("/sys")) -> list[Finding]:
    """Run every host check in order and return one finding per check."""
    return [check.run(procfs_root=Path(procfs_root), sysfs_root=Path(sysfs_root)) for check in HOST_CHECKS]


def worst_severity(findings: list[Finding]) -> str:
    """The most serious severity among ``findings`` ("ok" when there are none)."""
    return max((f.severity for f in findings), key=SEVERITIES.index, default="ok")


def thp_mode(text: str | None) -> str | None:
    """The selected mode of a sysfs choice file: 'always [madvise] never' -> 'madvise'."""
    if not text:
        return None
    for word in text.split():
        if word.startswith("[") and word.endswith("]"):
            return word[1:-1]
    return text.split()[0] if len(text.split()) == 1 else None


def hugetlb_pages(*, sysfs_root: Path) -> list[dict[str, int]]:
    """Reserved and free hugetlb pages per page size, from sysfs kernel/mm/hugepages/."""
    base = Path(sysfs_root) / "kernel/mm/hugepages"
    out = []
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not (name.startswith("hugepages-") and name.endswith("kB")):
            continue
        try:
            page_kib = int(name[len("hugepages-"):-2])
            reserved = int(_read(entry / "nr_hugepages") or "")
            free = int(_read(entry / "free_hugepages") or "")
        except ValueError:
            continue
        out.append({"page_bytes": page_kib * 1024, "reserved": reserved, "free": free})
    return sorted(out, key=lambda p: p["page_bytes"])
