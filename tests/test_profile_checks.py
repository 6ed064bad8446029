"""Host checks on fake procfs/sysfs trees: each finding's severity and fix."""

from __future__ import annotations

from pathlib import Path

from autotune.profile.checks import HOST_CHECKS, Finding, run_host_checks, worst_severity

FIXTURES = Path(__file__).parent / "fixtures" / "sysfs"


def findings(name: str) -> dict[str, Finding]:
    root = FIXTURES / name
    found = run_host_checks(procfs_root=root / "proc", sysfs_root=root / "sys")
    assert [f.check for f in found] == [c.name for c in HOST_CHECKS]  # one per check, in order
    return {f.check: f for f in found}


def test_this_machines_shape():
    f = findings("thishost")
    assert f["core_pattern"].severity == "ok"
    assert f["cpu_governor"].severity == "ok" and "no cpufreq" in f["cpu_governor"].message
    assert f["aslr"].severity == "advice" and "randomize_va_space" in f["aslr"].fix
    assert f["transparent_hugepages"].severity == "ok"
    assert f["hugetlb_pages"].severity == "ok" and "none reserved" in f["hugetlb_pages"].message
    assert worst_severity(list(f.values())) == "advice"


def test_piped_core_pattern_and_scaling_governor_are_errors_with_fixes():
    f = findings("two-socket")
    assert f["core_pattern"].severity == "error"
    assert f["core_pattern"].fix == "echo core | sudo tee /proc/sys/kernel/core_pattern"
    assert "apport" in f["core_pattern"].message
    gov = f["cpu_governor"]
    assert gov.severity == "error" and "powersave" in gov.message
    assert "scaling_governor" in gov.fix and "AFL_SKIP_CPUFREQ=1" in gov.fix
    assert f["hugetlb_pages"].message == "reserved: 512 x 2 MiB"
    assert worst_severity(list(f.values())) == "error"


def test_performance_governor_ok_and_thp_never_advice():
    f = findings("no-l3")
    assert f["aslr"].severity == "ok"
    assert f["transparent_hugepages"].severity == "advice"
    assert "transparent_hugepage/enabled" in f["transparent_hugepages"].fix
    assert findings("amd-ccx")["cpu_governor"].message == "CPU governor is 'performance'"


def test_fixed_clock_is_ok_even_with_a_scaling_governor(tmp_path):
    """afl-fuzz accepts a non-performance governor when scaling_min_freq == scaling_max_freq."""
    cpufreq = tmp_path / "sys/devices/system/cpu/cpu0/cpufreq"
    cpufreq.mkdir(parents=True)
    (cpufreq / "scaling_governor").write_text("schedutil\n")
    (cpufreq / "scaling_min_freq").write_text("2000000\n")
    (cpufreq / "scaling_max_freq").write_text("2000000\n")
    f = {x.check: x for x in run_host_checks(procfs_root=tmp_path / "proc", sysfs_root=tmp_path / "sys")}
    assert f["cpu_governor"].severity == "ok" and "fixed at 2000 MHz" in f["cpu_governor"].message


def test_missing_procfs_is_a_warning_not_a_crash(tmp_path):
    f = {x.check: x for x in run_host_checks(procfs_root=tmp_path / "none", sysfs_root=tmp_path / "none")}
    assert f["core_pattern"].severity == "warning" and f["aslr"].severity == "warning"
    assert f["core_pattern"].fix


def test_findings_round_trip():
    for finding in run_host_checks(procfs_root=FIXTURES / "two-socket/proc", sysfs_root=FIXTURES / "two-socket/sys"):
        assert Finding.from_dict(finding.to_dict()) == finding
