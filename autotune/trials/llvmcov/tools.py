"""The LLVM toolchain of the llvm-cov yardstick: clang, and the llvm-profdata and llvm-cov of the
same LLVM release (a raw profile's format and the coverage mapping's version change between
releases, so tools of another release may refuse them or misread them).

clang is the one `autotune cc` uses (``$AUTOTUNE_CC`` / ``$AUTOTUNE_CXX``, else the first clang
on PATH, :func:`autotune.llvm.find_toolchain`). Its major version is read from ``clang --version``;
each tool is then looked for

1. beside the real clang binary (Debian: /usr/bin/clang-14 -> /usr/lib/llvm-14/bin/clang, whose
   directory holds llvm-profdata and llvm-cov),
2. as ``<tool>-<major>`` on PATH (Debian's versioned names),
3. as ``<tool>`` on PATH when its ``--version`` names the same major version.

Missing: an :class:`AutotuneError` naming the Debian package (``llvm-<major>``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Mapping

from autotune.errors import AutotuneError
from autotune.llvm import find_toolchain

TOOLS = ("llvm-profdata", "llvm-cov")
_VERSION = re.compile(r"(?:clang|LLVM) version (\d+)\.")
# llvm-profdata 14 has no top-level --version ("Unknown command!"); its subcommands have
_VERSION_ARGS = {"llvm-profdata": ("merge", "--version"), "llvm-cov": ("--version",)}


@dataclass(frozen=True)
class LlvmTools:
    clang: str
    clangxx: str
    major: int  # clang's major version, which the tools match
    profdata: str
    cov: str

    def to_dict(self) -> dict:
        return {"clang": self.clang, "clang++": self.clangxx, "llvm_major": self.major,
                "llvm-profdata": self.profdata, "llvm-cov": self.cov}


def _version_of(argv: list[str], env: Mapping[str, str]) -> int | None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=dict(env), timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    m = _VERSION.search(proc.stdout + proc.stderr)
    return int(m.group(1)) if m else None


def clang_major(clang: str, env: Mapping[str, str]) -> int:
    major = _version_of([clang, "--version"], env)
    if major is None:
        raise AutotuneError(f"cannot read the version of {clang} (clang --version)",
                            fix="set AUTOTUNE_CC to a working clang (apt-get install -y clang)")
    return major


def find_llvm_tool(name: str, *, major: int, clang: str, env: Mapping[str, str]) -> str:
    """``name`` (llvm-profdata or llvm-cov) of LLVM ``major``; see the module's search order."""
    path = env.get("PATH", os.defpath)
    beside = os.path.join(os.path.dirname(os.path.realpath(clang)), name)
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    versioned = shutil.which(f"{name}-{major}", path=path)
    if versioned:
        return versioned
    plain = shutil.which(name, path=path)
    if plain and _version_of([plain, *_VERSION_ARGS[name]], env) == major:
        return plain
    raise AutotuneError(
        f"'{name}' of LLVM {major} (the release of {clang}) was not found: looked beside "
        f"{os.path.realpath(clang)}, for {name}-{major} on PATH and for a {name} of version {major} on PATH",
        fix=f"install it: apt-get install -y llvm-{major}")


def find_llvm_tools(env: Mapping[str, str]) -> LlvmTools:
    """clang, clang++ and the llvm-profdata and llvm-cov of clang's release."""
    clang = find_toolchain(cxx=False, env=env).path
    clangxx = find_toolchain(cxx=True, env=env).path
    major = clang_major(clang, env)
    profdata, cov = (find_llvm_tool(t, major=major, clang=clang, env=env) for t in TOOLS)
    return LlvmTools(clang=clang, clangxx=clangxx, major=major, profdata=profdata, cov=cov)
