"""`autotune profile` through typer's CliRunner, and the real command on the real host."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autotune.cli.main import app
from autotune.profile import detect_host, list_reference_profiles, load_profile, reference_profile

FIXTURES = Path(__file__).parent / "fixtures" / "sysfs"
AUTOTUNE = Path(sys.executable).parent / "autotune"


@pytest.fixture(autouse=True)
def _wide_console(monkeypatch):
    """Tables as on a 120-column terminal, whatever COLUMNS the caller has."""
    from autotune.cli import common

    monkeypatch.setattr(common.out, "width", 120)


def invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.stderr
    return result


def roots(name: str) -> list[str]:
    return ["--sysfs-root", str(FIXTURES / name / "sys"), "--procfs-root", str(FIXTURES / name / "proc")]


@pytest.mark.parametrize("name", ["thishost", "two-socket", "amd-ccx", "no-l3", "hybrid"])
def test_json_is_the_api_object(name):
    result = invoke("profile", "--json", *roots(name))
    assert result.exit_code == 0, result.stderr
    api = detect_host(sysfs_root=FIXTURES / name / "sys", procfs_root=FIXTURES / name / "proc")
    assert json.loads(result.stdout) == api.to_dict()


def test_table_shows_one_instance_sizes_and_checks():
    result = invoke("profile", *roots("two-socket"))
    assert result.exit_code == 0
    out = result.stdout
    assert "16 MiB" in out and "32 MiB" not in out  # one L3 instance, not the sum
    assert "0-3 (4)" in out and "package" in out
    assert "error" in out and "echo core | sudo tee /proc/sys/kernel/core_pattern" in out
    assert "verdict: 2 error(s)" in out


def test_save_writes_the_same_profile(tmp_path):
    path = tmp_path / "host.toml"
    result = invoke("profile", "--save", str(path), "--json", *roots("amd-ccx"))
    assert result.exit_code == 0
    assert load_profile(path).to_dict() == json.loads(result.stdout)
    shown = invoke("profile", "--show", str(path), "--json")
    assert json.loads(shown.stdout) == json.loads(result.stdout)


def test_list_and_show():
    result = invoke("profile", "--list", "--json")
    assert result.exit_code == 0
    names = json.loads(result.stdout)
    assert names == list_reference_profiles() and len(names) == 13
    table = invoke("profile", "--list")
    assert table.exit_code == 0 and "13 reference profiles" in table.stdout
    for name in names:
        assert name in table.stdout
    shown = invoke("profile", "--show", "xeon", "--json")
    assert json.loads(shown.stdout) == reference_profile("xeon").to_dict()
    assert "48 MiB" in invoke("profile", "--show", "xeon").stdout


def test_bad_options_are_clear_errors(tmp_path):
    result = invoke("profile", "--sysfs-root", str(tmp_path / "absent"))
    assert result.exit_code == 1 and "is not a directory" in result.stderr
    result = invoke("profile", "--show", "no-such-host")
    assert result.exit_code == 1 and "no reference profile named 'no-such-host'" in result.stderr
    assert "fix: choose one of" in result.stderr
    result = invoke("profile", "--list", "--show", "xeon")
    assert result.exit_code == 1


def _lscpu() -> dict[tuple[int, str], dict]:
    proc = subprocess.run(["lscpu", "-C", "-B", "-J"], capture_output=True, text=True, check=True)
    return {(int(r["level"]), r["type"].lower()): r for r in json.loads(proc.stdout)["caches"]}


@pytest.mark.skipif(not Path("/sys/devices/system/cpu/cpu0/cache").is_dir(), reason="no sysfs cache info")
def test_real_command_on_the_real_host():
    """The installed console script on this host; its figures agree with lscpu -C (another reader)."""
    proc = subprocess.run([str(AUTOTUNE), "profile", "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    profile = load_profile_dict(doc)
    assert profile.origin == "detected" and profile.caches
    if shutil.which("lscpu"):
        lscpu = _lscpu()
        for cache in profile.caches:
            row = lscpu[(cache.level, cache.kind)]
            assert cache.size_bytes == int(row["one-size"])  # one instance
            assert cache.total_bytes == int(row["all-size"])
            assert cache.ways == row["ways"] and cache.sets == row["sets"]
            assert cache.line_bytes == row["coherency-size"]
    assert profile.l1d_bytes and profile.llc_bytes and profile.line_bytes
    assert profile.llc_sharing_cpus <= profile.threads
    table = subprocess.run([str(AUTOTUNE), "profile"], capture_output=True, text=True, timeout=60)
    assert table.returncode == 0 and "host checks" in table.stdout and "L1d" in table.stdout


def load_profile_dict(doc):
    from autotune.profile import HostProfile

    return HostProfile.from_dict(doc, path="<autotune profile --json>")


def test_py_cpuinfo_fallback_without_sysfs():
    """The first fallback, for real: py-cpuinfo's cache figures are totals, so one instance stays unknown."""
    p = detect_host(sysfs_root=FIXTURES / "no-sysfs/sys", procfs_root=FIXTURES / "no-sysfs/proc",
                    use_cpuinfo=True, use_lscpu=False)
    from autotune.profile.fallback import cpuinfo_dict

    info = cpuinfo_dict()
    if not info.get("l2_cache_size"):
        pytest.skip("py-cpuinfo reports no cache sizes on this machine")
    l2 = p.cache(2)
    assert l2.total_bytes and l2.sources == {"total_bytes": "py-cpuinfo"}
    assert l2.size_bytes is None and l2.line_bytes is None and l2.ways is None  # its L2 line/ways are not trusted
    assert p.brand == "Intel(R) Xeon(R) Processor" and p.sources["brand"] == "procfs"  # procfs first


def test_fallbacks_merge_figure_by_figure():
    """py-cpuinfo's totals, then lscpu's per-instance figures, each figure citing its source (live host)."""
    if not shutil.which("lscpu"):
        pytest.skip("lscpu not installed")
    from autotune.profile.detect import _merge
    from autotune.profile.fallback import cpuinfo_caches, cpuinfo_dict, lscpu_caches

    found, problem = lscpu_caches(sysfs_root=Path("/sys"))
    if problem or not found:
        pytest.skip(f"lscpu -C gives nothing here: {problem}")
    merged = _merge(cpuinfo_caches(cpuinfo_dict()), found)
    l2 = next(c for c in merged if c.level == 2)
    assert l2.kind == "unified" and l2.size_bytes and l2.sources["size_bytes"] == "lscpu"
    if cpuinfo_dict().get("l2_cache_size"):
        assert l2.sources["total_bytes"] == "py-cpuinfo"


def test_save_to_an_unwritable_place_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = invoke("profile", "--save", str(blocker / "host.toml"), *roots("thishost"))
    assert result.exit_code == 1 and result.stderr.startswith("error: cannot")


GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("args,golden", [
    (["profile", "--sysfs-root", "fixtures/sysfs/two-socket/sys", "--procfs-root", "fixtures/sysfs/two-socket/proc"],
     "profile_two_socket.txt"),
    (["profile", "--list"], "profile_list.txt"),
])
def test_tables_match_golden_files(monkeypatch, args, golden):
    """What users read. Update deliberately: AUTOTUNE_UPDATE_GOLDEN=1 pytest tests/test_profile_cli.py"""
    monkeypatch.chdir(Path(__file__).parent)  # relative tree paths, so the host name is stable
    result = invoke(*args)
    assert result.exit_code == 0
    path = GOLDEN / golden
    if os.environ.get("AUTOTUNE_UPDATE_GOLDEN") == "1":
        path.write_text(result.stdout)
    assert result.stdout == path.read_text()
