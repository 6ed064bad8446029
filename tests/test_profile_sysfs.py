"""Host detection on fake sysfs/procfs trees (tests/fixtures/sysfs/<host>/{sys,proc}).

The trees are written by tests/fixtures/make_sysfs_fixtures.py: this machine's shape, two
sockets with a per-socket L3, an AMD-style L3 shared by a 4-core CCX, a host without L3, a
host without sysfs, and a hybrid (P+E core) host. py-cpuinfo is never called here (it
describes the running machine, not a fake tree); its real fallback is in test_profile_cli.py.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autotune.profile import detect_host
from autotune.profile.cpulist import format_cpu_list, parse_cpu_list, parse_cpu_mask
from autotune.profile.sysfs import parse_size

FIXTURES = Path(__file__).parent / "fixtures" / "sysfs"
KiB, MiB = 1 << 10, 1 << 20


def fake(name: str, **kw):
    root = FIXTURES / name
    return detect_host(sysfs_root=root / "sys", procfs_root=root / "proc", use_cpuinfo=False, **kw)


def by_name(profile):
    return {c.name: c for c in profile.caches}


def test_this_machines_shape():
    p = fake("thishost")
    c = by_name(p)
    assert list(c) == ["L1d", "L1i", "L2", "L3"]
    assert (c["L1d"].size_bytes, c["L1d"].ways, c["L1d"].line_bytes, c["L1d"].sets) == (48 * KiB, 12, 64, 64)
    assert (c["L1i"].size_bytes, c["L1i"].ways) == (32 * KiB, 8)
    # L2: size of ONE instance, two instances, never the sum
    assert (c["L2"].size_bytes, c["L2"].instances, c["L2"].total_bytes) == (2 * MiB, 2, 4 * MiB)
    assert (c["L2"].shared_cpu_list, c["L2"].sharing_cpus, c["L2"].scope) == ("0", 1, "core")
    assert c["L3"].size_bytes == 107520 * KiB == 105 * MiB
    assert (c["L3"].instances, c["L3"].shared_cpu_list, c["L3"].sharing_cpus) == (1, "0-1", 2)
    assert (c["L3"].ways, c["L3"].sets, c["L3"].scope) == (15, 114688, "package")
    assert all(src == "sysfs" for cache in p.caches for k, src in cache.sources.items() if k != "total_bytes")
    assert (p.packages, p.cores, p.threads, p.threads_per_core, p.online_cpus) == (1, 2, 2, 1, "0-1")
    assert (p.brand, p.vendor, p.arch) == ("Intel(R) Xeon(R) Processor", "GenuineIntel", "x86_64")
    assert p.sources["brand"] == "procfs" and "avx2" in p.flags
    assert (p.l1d_bytes, p.l2_bytes, p.llc_bytes, p.llc_sharing_cpus, p.line_bytes) == (
        48 * KiB, 2 * MiB, 105 * MiB, 2, 64)
    assert p.thp_enabled == "madvise" and p.memory_bytes == 24684084 * KiB
    assert p.hugepages == ({"page_bytes": 2 * MiB, "reserved": 0, "free": 0},
                           {"page_bytes": 1 << 30, "reserved": 0, "free": 0})
    assert p.notes == ()


def test_two_sockets_have_one_l3_per_socket():
    p = fake("two-socket")
    c = by_name(p)
    assert (p.packages, p.cores, p.threads, p.threads_per_core, p.smt) == (2, 4, 8, 2, "on")
    assert (c["L1d"].size_bytes, c["L1d"].instances, c["L1d"].shared_cpu_list, c["L1d"].scope) == (
        32 * KiB, 4, "0-1", "core")
    l3 = c["L3"]
    assert (l3.size_bytes, l3.instances, l3.total_bytes) == (16 * MiB, 2, 32 * MiB)
    assert (l3.shared_cpu_list, l3.sharing_cpus, l3.cpus, l3.scope) == ("0-3", 4, "0-7", "package")
    assert p.llc_sharing_cpus == 4 and p.llc_bytes == 16 * MiB


def test_amd_l3_shared_by_a_subset_of_cores():
    p = fake("amd-ccx")
    c = by_name(p)
    assert (p.cores, p.threads, p.threads_per_core) == (8, 16, 2)
    assert (c["L2"].size_bytes, c["L2"].instances, c["L2"].shared_cpu_list) == (512 * KiB, 8, "0,8")
    l3 = c["L3"]
    assert (l3.size_bytes, l3.instances, l3.shared_cpu_list, l3.sharing_cpus) == (16 * MiB, 2, "0-3,8-11", 8)
    assert l3.scope == "cluster"  # a subset of the package's CPUs
    assert p.brand.startswith("AMD Ryzen")


def test_no_l3():
    p = fake("no-l3")
    c = by_name(p)
    assert list(c) == ["L1d", "L1i", "L2"]
    assert p.llc is c["L2"] and p.llc_bytes == 512 * KiB
    assert c["L1i"].ways is None and "ways" not in c["L1i"].sources  # not reported: unknown, not guessed
    # shared_cpu_list absent: the hex mask shared_cpu_map is read instead
    assert (c["L2"].shared_cpu_list, c["L2"].instances, c["L2"].scope) == ("0-3", 1, "package")
    assert p.arch == "aarch64" and p.brand is None and p.vendor == "0x41"
    assert "asimd" in p.flags and p.smt is None and p.hugepages is None


def test_sysfs_absent_leaves_caches_unknown_and_says_why():
    p = fake("no-sysfs", use_lscpu=True)
    assert p.caches == ()
    assert (p.l1d_bytes, p.l2_bytes, p.llc_bytes, p.line_bytes) == (None, None, None, None)
    assert any("no cache information in sysfs" in n for n in p.notes)
    assert any("lscpu" in n for n in p.notes)  # the second fallback was tried and said why it failed
    # procfs still gives the CPU
    assert (p.threads, p.cores, p.packages, p.sources["cores"]) == (2, 2, 1, "procfs")
    assert p.thp_enabled is None


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(FIXTURES / name, dst)
    return dst


def test_unreadable_cache_directories(tmp_path):
    """A cache directory that cannot be listed (here: not a directory, which also holds for root)."""
    root = _copy(tmp_path, "thishost")
    for cpu in (0, 1):
        cache = root / f"sys/devices/system/cpu/cpu{cpu}/cache"
        shutil.rmtree(cache)
        cache.write_text("")
    p = detect_host(sysfs_root=root / "sys", procfs_root=root / "proc", use_cpuinfo=False, use_lscpu=False)
    assert p.caches == ()
    assert any("cannot read" in n and "cpu0/cache" in n for n in p.notes)


def test_unreadable_figure_is_unknown(tmp_path):
    root = _copy(tmp_path, "thishost")
    for cpu in (0, 1):
        size = root / f"sys/devices/system/cpu/cpu{cpu}/cache/index3/size"
        size.unlink()
        size.mkdir()  # reading it fails with IsADirectoryError
    c = by_name(detect_host(sysfs_root=root / "sys", procfs_root=root / "proc", use_cpuinfo=False))
    assert c["L3"].size_bytes is None and c["L3"].total_bytes is None
    assert c["L3"].ways == 15 and c["L3"].instances == 1
    assert c["L2"].size_bytes == 2 * MiB


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() == 0,
                    reason="root reads files whatever their mode")
def test_permission_denied(tmp_path):
    root = _copy(tmp_path, "thishost")
    cpu_dir = root / "sys/devices/system/cpu"
    for cpu in (0, 1):
        (cpu_dir / f"cpu{cpu}/cache").chmod(0)
    try:
        p = detect_host(sysfs_root=root / "sys", procfs_root=root / "proc", use_cpuinfo=False, use_lscpu=False)
    finally:
        for cpu in (0, 1):
            (cpu_dir / f"cpu{cpu}/cache").chmod(0o755)
    assert p.caches == ()
    assert any("Permission denied" in n for n in p.notes)


def test_lscpu_fallback_reads_the_same_tree(tmp_path):
    """The second fallback: the real lscpu reads a fake tree through --sysroot and agrees with sysfs."""
    if not shutil.which("lscpu"):
        pytest.skip("lscpu not installed")
    from autotune.profile.fallback import lscpu_caches

    caches, problem = lscpu_caches(sysfs_root=FIXTURES / "two-socket" / "sys")
    if problem:
        pytest.skip(f"this lscpu cannot read a fake tree: {problem}")
    c = {x.name: x for x in caches}
    assert c["L3"].size_bytes == 16 * MiB and c["L3"].total_bytes == 32 * MiB and c["L3"].instances == 2
    assert c["L1d"].line_bytes == 64 and c["L1d"].sources["size_bytes"] == "lscpu"


@pytest.mark.parametrize("text,expected", [("0", {0}), ("0-3,8", {0, 1, 2, 3, 8}), ("0,2-3", {0, 2, 3}), ("", set())])
def test_cpu_lists(text, expected):
    assert parse_cpu_list(text) == expected
    assert format_cpu_list(expected) == text


def test_cpu_mask_and_bad_lists():
    assert parse_cpu_mask("00000f00,00000003") == {0, 1} | {32 + 8, 32 + 9, 32 + 10, 32 + 11}
    for bad in ("a", "3-1", "-1"):
        with pytest.raises(ValueError):
            parse_cpu_list(bad)


@pytest.mark.parametrize("text,expected", [("48K", 48 * KiB), ("107520K", 105 * MiB), ("1M", MiB), ("512", 512),
                                           ("junk", None), ("", None)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_hybrid_cpu_has_several_shapes_per_level():
    """P-cores with SMT and a private L2, E-cores sharing one L2: one entry per shape, CPU 0's first."""
    p = fake("hybrid")
    l2s = p.caches_at(2)
    assert [(c.size_bytes, c.instances, c.shared_cpu_list, c.cpus, c.scope) for c in l2s] == [
        (1280 * KiB, 2, "0-1", "0-3", "core"), (2 * MiB, 1, "4-7", "4-7", "cluster")]
    assert p.cache(2) is l2s[0] and p.l2_bytes == 1280 * KiB
    assert [c.size_bytes for c in p.caches_at(1, "data")] == [48 * KiB, 32 * KiB] and p.l1d_bytes == 48 * KiB
    assert (p.cores, p.threads, p.threads_per_core) == (6, 8, 2)
    assert p.llc_bytes == 12 * MiB and p.llc_sharing_cpus == 8
