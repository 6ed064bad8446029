"""autotune.io's atomic writes: the mode a written file gets, and a failed write leaves nothing."""

from __future__ import annotations

import os
import stat

import pytest

from autotune import io
from autotune.errors import AutotuneError


@pytest.fixture
def umask():
    def set_mask(mask: int) -> None:
        os.umask(mask)

    old = os.umask(0o022)
    yield set_mask
    os.umask(old)


def _mode(p) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077, 0o002])
def test_a_new_file_gets_the_umasks_mode_not_mkstemps_0600(tmp_path, umask, mask):
    umask(mask)
    assert io._umask() == mask
    p = io.write_text_atomic(tmp_path / "report.md", "x\n")
    assert _mode(p) == 0o666 & ~mask and p.read_text() == "x\n"


def test_a_replaced_file_keeps_its_mode(tmp_path, umask):
    umask(0o022)
    p = tmp_path / "afl-run.env"
    p.write_text("old\n")
    p.chmod(0o640)
    io.write_text_atomic(p, "new\n")
    assert _mode(p) == 0o640 and p.read_text() == "new\n"


def test_a_failed_write_raises_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "keep").write_text("k")  # a non-empty directory cannot be replaced by a file
    with pytest.raises(AutotuneError):
        io.write_text_atomic(target, "data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (target / "keep").read_text() == "k"
