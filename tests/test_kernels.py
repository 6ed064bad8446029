"""The C tests of the BigMap kernels (kernels/tests), built and run by make, plain and under ASan+UBSan."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from autotune.paths import kernels_dir


def _make(target: str, build_dir, extra: tuple[str, ...] = ()) -> str:
    if not shutil.which("make") or not shutil.which("clang"):
        pytest.fail("make and clang are required (apt-get install -y make clang)")
    proc = subprocess.run(["make", "-C", str(kernels_dir()), target, f"BUILD={build_dir}", *extra],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    m = re.search(r"^(\d+) passed, (\d+) failed$", proc.stdout, re.M)
    assert m, out[-2000:]
    assert int(m.group(1)) > 1000 and m.group(2) == "0", out[-2000:]
    return proc.stdout


def test_c_tests(tmp_path):
    out = _make("test", tmp_path)
    assert "differential:" in out
    # the build went to BUILD=..., nothing was written into the repository
    assert (tmp_path / "plain" / "test_bigmap").is_file()
    status = subprocess.run(["git", "status", "--porcelain", "--ignored", "."], capture_output=True,
                            text=True, cwd=kernels_dir()).stdout
    assert "test_bigmap" not in status and ".o\n" not in status


def test_c_tests_sanitized(tmp_path):
    _make("test-sanitize", tmp_path)


def test_c_tests_forced_scalar_build(tmp_path):
    out = _make("test-scalar", tmp_path)
    assert "active kernel variant scalar" in out


@pytest.mark.slow
def test_c_tests_gcc(tmp_path):
    if not shutil.which("gcc"):
        pytest.skip("gcc not installed")
    _make("test", tmp_path, ("CC=gcc",))
