"""The LLVM that autotune's builds use: which clang (``find_toolchain``: the compiler the wrapper
runs), its major version, and the llvm-config and clang++ of the same version for the pass plugins (a plugin must be built against the LLVM of the
clang that loads it).

autotune runs with the LLVM of the AFL++ in use: Debian 12's AFL++ 4.04c has LLVM 14, Debian 13's
4.21c LLVM 19, sid's 5.02c LLVM 21 (REFERENCE.md). ``LLVM_VERSIONS`` is the range the build kinds
and plugins are tested with (CI: 14 on the host, 21 in the sid root of .ci/aflpp-current.sh).
"""

from __future__ import annotations

import functools
import os
from typing import Mapping, NamedTuple

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


def clang_version(path: str) -> str | None:
    """The full version of the clang at ``path`` ("21.1.8"), None if it is not clang. A wrapper that
    passes --version through (afl-clang-fast, autotune-cc) answers with its clang's."""
    import re

    m = re.search(r"clang version (\d+(?:\.\d+)*)", _version_text(os.path.realpath(path)))
    return None if m is None else m.group(1)


def compilers(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The clang behind each compiler a campaign's builds use, as every campaign figure names it:
    {"afl-clang-fast": "clang 21.1.8", "autotune cc": "clang 21.1.8"}; a compiler not found is left out."""
    import shutil

    env = dict(os.environ if env is None else env)
    out = {}
    afl = shutil.which("afl-clang-fast", path=env.get("PATH", os.defpath))
    theirs = clang_version(afl) if afl else None
    if theirs:
        out["afl-clang-fast"] = f"clang {theirs}"
    try:
        ours = clang_version(find_toolchain(cxx=False, env=env).path)
    except AutotuneError:
        ours = None
    if ours:
        out["autotune cc"] = f"clang {ours}"
    return out


def compilers_text(d: Mapping[str, str] | None) -> str:
    """"clang 21.1.8 (afl-clang-fast and autotune cc)", or each compiler's when they differ."""
    if not d:
        return "compilers not recorded"
    versions = set(d.values())
    if len(versions) == 1:
        return f"{next(iter(versions))} ({' and '.join(d)})"
    return ", ".join(f"{k}: {v}" for k, v in d.items())


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


# The order of a function's entry hook and its entry block's guard (kernels/cov.h "Ordering"):
# clang 14 emits the guard first; clang 21, whose post-inlining entry/exit hooks are placed in
# code generation, the hook first. Measured per clang (not assumed per version) by compiling a
# two-line function as the full build kind does, and cached beside the build artefacts.
GUARD_FIRST, ENTER_FIRST = "guard-first", "enter-first"
_ORDER_PROBE = "int autotune_order_g(int);\nint autotune_order_f(int x) { return autotune_order_g(x) + 1; }\n"
ORDER_FLAGS = ("-O0", "-fsanitize-coverage=trace-pc-guard", "-finstrument-functions-after-inlining")


def hook_order(clang: str) -> str:
    """GUARD_FIRST or ENTER_FIRST for ``clang`` (cached per clang binary and version)."""
    import hashlib
    import subprocess

    from autotune.io import write_text_atomic  # autotune-cc loads llvm: its start-up (cc.py)
    from autotune.paths import cache_dir  # autotune-cc loads llvm: its start-up (cc.py)

    real = os.path.realpath(clang)
    key = hashlib.sha256(f"{real}\0{_version_text(real)}".encode()).hexdigest()[:16]
    cached = cache_dir() / "llvm" / f"hook-order-{key}"
    try:
        value = cached.read_text().strip()
        if value in (GUARD_FIRST, ENTER_FIRST):
            return value
    except OSError:
        pass
    proc = subprocess.run([real, *ORDER_FLAGS, "-S", "-o", "-", "-x", "c", "-"], input=_ORDER_PROBE,
                          capture_output=True, text=True, timeout=60)
    body = proc.stdout.partition("autotune_order_f:")[2]
    guard, enter = body.find("__sanitizer_cov_trace_pc_guard"), body.find("__cyg_profile_func_enter")
    if proc.returncode != 0 or guard < 0 or enter < 0:
        raise AutotuneError(f"{clang} did not compile the entry-hook order probe with {' '.join(ORDER_FLAGS)}: "
                            + (proc.stderr.strip().splitlines() or ["no guard or entry hook in its output"])[-1],
                            fix="use a clang from 14 to 21 (AUTOTUNE_CC=clang-N)")
    value = ENTER_FIRST if enter < guard else GUARD_FIRST
    cached.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(cached, value + "\n")
    return value


# ---- the compiler the wrapper runs (autotune.cc) --------------------------------------------------

CANDIDATES: dict[bool, tuple[str, ...]] = {False: CLANG_NAMES, True: CLANGXX_NAMES}  # clang, clang-21 .. clang-14
MISSING_PACKAGE = "clang"

class Toolchain(NamedTuple):
    """The real compiler the wrapper runs."""

    path: str
    cxx: bool


def _is_exe(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _which(name: str, env: Mapping[str, str]) -> str | None:
    """shutil.which without importing shutil."""
    if os.sep in name:
        return name if _is_exe(name) else None
    for d in env.get("PATH", os.defpath).split(os.pathsep):
        cand = os.path.join(d or ".", name)
        if _is_exe(cand):
            return cand
    return None


def _is_clang(path: str) -> bool:
    base = os.path.basename(os.path.realpath(path))
    if "clang" in base:
        return True
    if "gcc" in base or "g++" in base:
        return False
    import subprocess

    try:
        ver = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        ver = ""
    return "clang" in ver


def find_toolchain(*, cxx: bool, env: Mapping[str, str]) -> Toolchain:
    """The compiler to run: $AUTOTUNE_CXX / $AUTOTUNE_CC, else the first clang on PATH."""
    var = "AUTOTUNE_CXX" if cxx else "AUTOTUNE_CC"
    override = env.get(var)
    if override:
        path = _which(override, env)
        if path is None:
            raise AutotuneError(f"{var}={override} is not an executable on PATH",
                                fix=f"set {var} to a C{'++' if cxx else ''} compiler, or unset it")
        if os.path.basename(os.path.realpath(path)).startswith("autotune"):
            raise AutotuneError(f"{var}={override} is the autotune wrapper itself",
                                fix=f"set {var} to the real compiler (e.g. clang{'++' if cxx else ''})")
        if not _is_clang(path):
            raise AutotuneError(
                f"{var}={override} is not clang: the runtime needs clang's SanitizerCoverage "
                "trace-pc-guard (gcc has only trace-pc)",
                fix=f"set {var} to clang{'++' if cxx else ''} (apt-get install -y {MISSING_PACKAGE})")
        return Toolchain(path=path, cxx=cxx)
    for name in CANDIDATES[cxx]:
        path = _which(name, env)
        if path:
            return Toolchain(path=path, cxx=cxx)
    names = ", ".join(CANDIDATES[cxx][:2])
    raise AutotuneError(f"no clang compiler found on PATH (looked for {names}, ...)",
                        fix=f"apt-get install -y {MISSING_PACKAGE}")
