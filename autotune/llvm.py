"""The LLVM that autotune's builds use: which clang, its major version, and the llvm-config and
clang++ of the same version for the pass plugins (a plugin must be built against the LLVM of the
clang that loads it).

autotune runs with the LLVM of the AFL++ in use: Debian 12's AFL++ 4.04c has LLVM 14, Debian 13's
4.21c LLVM 19, sid's 5.02c LLVM 21 (REFERENCE.md). ``LLVM_VERSIONS`` is the range the build kinds
and plugins are tested with (CI: 14 on the host, 21 in the sid root of .ci/aflpp-current.sh).
"""

from __future__ import annotations

import functools
import os
from typing import Mapping

from autotune.errors import AutotuneError, ToolMissingError

# The wrapper (autotune.cc) imports the names below on every compiler call: the module imports no
# more than it needs for them; the look-ups import what they use.

LLVM_NEWEST, LLVM_OLDEST = 21, 14
LLVM_VERSIONS = tuple(range(LLVM_NEWEST, LLVM_OLDEST - 1, -1))  # newest first: 21 .. 14
CLANG_NAMES = ("clang", *(f"clang-{v}" for v in LLVM_VERSIONS))
CLANGXX_NAMES = ("clang++", *(f"clang++-{v}" for v in LLVM_VERSIONS))
_CLANG_VERSION = r"clang version (\d+)\."


@functools.lru_cache(maxsize=32)
def _version_text(path: str) -> str:
    import subprocess

    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout


def clang_major(path: str) -> int | None:
    """The major version of the clang at ``path`` (from ``--version``), None if it is not clang."""
    import re

    m = re.search(_CLANG_VERSION, _version_text(os.path.realpath(path)))
    return None if m is None else int(m.group(1))


def find_clang(*, env: Mapping[str, str] | None = None, cxx: bool = False) -> str:
    """The first clang (clang++) on PATH: the unversioned name, else the newest clang-N."""
    import shutil

    path_var = (os.environ if env is None else env).get("PATH", os.defpath)
    for name in (CLANGXX_NAMES if cxx else CLANG_NAMES):
        found = shutil.which(name, path=path_var)
        if found:
            return found
    raise ToolMissingError("clang++" if cxx else "clang", "clang")


def _same_major(names: tuple[str, ...], major: int, what: str, package: str) -> str:
    """The first of ``names`` on PATH whose version is ``major`` (llvm-config --version, clang --version)."""
    import re
    import shutil

    for name in names:
        found = shutil.which(name)
        if not found:
            continue
        text = _version_text(found).strip()
        m = re.match(r"(\d+)\.", text) or re.search(_CLANG_VERSION, text)
        if m and int(m.group(1)) == major:
            return found
    raise ToolMissingError(f"{what} of LLVM {major}", package)


def plugin_tools(clang: str) -> tuple[str, str, int]:
    """(llvm-config, clang++, major) of the LLVM of ``clang``, for building a pass plugin it loads."""
    major = clang_major(clang)
    if major is None:
        raise AutotuneError(f"{clang} is not clang (its --version names no clang version)",
                            fix="set AUTOTUNE_CC to clang (apt-get install -y clang)")
    if not LLVM_OLDEST <= major <= LLVM_NEWEST:
        raise AutotuneError(f"{clang} is clang {major}; autotune's pass plugins are built and tested with "
                            f"LLVM {LLVM_OLDEST} to {LLVM_NEWEST}",
                            fix=f"use a clang from {LLVM_OLDEST} to {LLVM_NEWEST} (AUTOTUNE_CC=clang-N)")
    cfg = _same_major((f"llvm-config-{major}", "llvm-config"), major, "llvm-config", f"llvm-{major}-dev")
    cxx = _same_major((f"clang++-{major}", "clang++"), major, "clang++", f"clang-{major}")
    return cfg, cxx, major
