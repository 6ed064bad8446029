"""A wheel built from the repository carries kernels/ and profiles/ and finds them at run time."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_carries_kernels_and_profiles(tmp_path):
    out = tmp_path / "wheel"
    # hatchling is in the test extra, so the build needs no network (no build isolation).
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out), str(REPO)], check=True, timeout=300)
    (wheel,) = out.glob("autotune-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    kernels = [n for n in names if n.startswith("autotune/_data/kernels/")]
    profiles = sorted(n for n in names if n.startswith("autotune/_data/profiles/") and n.endswith(".toml"))
    assert any(n.endswith(".c") for n in kernels) and any(n.endswith(".h") for n in kernels)
    assert [Path(n).stem for n in profiles] == sorted(p.stem for p in (REPO / "profiles").glob("*.toml"))
    assert len(profiles) == 13

    # Installed from the wheel (not the source tree), autotune finds its bundled files.
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, timeout=300)
    code = ("import autotune, autotune.paths as p; from autotune.profile import list_reference_profiles as l;"
            "print(autotune.__file__); print(p.kernels_dir()); print(p.profiles_dir()); print(len(l()))")
    env = {**os.environ, "PYTHONPATH": str(target)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=60, check=True)
    pkg, kdir, pdir, count = proc.stdout.split("\n")[:4]
    assert pkg.startswith(str(target))
    assert kdir == str(target / "autotune/_data/kernels") and pdir == str(target / "autotune/_data/profiles")
    assert count == "13"
