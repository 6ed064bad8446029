"""The real AFL++ tools (Debian's afl++) as every stage that runs them sees them: where they are
(``find_tool``), which version (``aflpp_version``), which variables they know
(``known_variables``), and the environment a run gets (``base_env`` + ``HOST_ENV``). Every run gets
an explicit ``env`` dict; ``os.environ`` is never changed, and nothing on the host is changed:
only the variables this host needs to let afl-fuzz start without root (HOST_ENV) are set for the run.

Used by validate, preflight, the trials of compare and race, and the target builds
(autotune.target, afl-clang-fast).
"""

from __future__ import annotations

import mmap
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Mapping

from autotune.errors import ToolMissingError
from autotune.paths import CANARY_INCLUDE_VAR

# afl-fuzz aborts on a piped core_pattern and on a scaling CPU governor unless told otherwise, and
# pins itself to a free core; these let it run on a shared host without changing the host.
HOST_ENV = {"AFL_SKIP_CPUFREQ": "1", "AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES": "1", "AFL_NO_UI": "1",
            "AFL_NO_AFFINITY": "1"}
# afl-fuzz's variables for a target built with autotune's runtime, beside its AUTOTUNE_* settings, and
# why. AFL_KILL_SIGNAL: afl-fuzz ends a timed-out child with SIGKILL unless told otherwise, and a
# guard build's inline counters reach the map only when an execution ends; with SIGTERM the
# runtime adds a hang's coverage before the child dies (kernels/cov_sink.c), so afl-fuzz keeps
# distinct hangs apart as it does for AFL++'s own build (whose counters are in its map already).
# AFL++'s own build keeps afl-fuzz's default. Every run of ours gets them: trials (trial_env) and
# the env files a user runs (emit, the race's report, portfolio launch scripts).
RUNTIME_AFL_VARS: dict[str, tuple[str, str]] = {
    "AFL_KILL_SIGNAL": ("15", "afl-fuzz ends a hung child with SIGTERM (not SIGKILL): the runtime adds the hang's\n"
                              "coverage to the map first, so distinct hangs are kept as AFL++'s build keeps them"),
}
# A string every binary with autotune's runtime carries (the handshake variable kernels/aflfs.c reads).
RUNTIME_MARKER = b"AUTOTUNE_AFL_HANDSHAKE"

# AFL++'s VERSION ("++4.04c", "++4.22a"): every afl tool prints it in its banner ("afl-fuzz++4.22a
# based on afl by ...") and so carries it in its executable. The runtime (kernels/aflfs.c) reads
# the same string from its parent afl tool to choose the fork-server handshake.
_AFLPP_VERSION = re.compile(rb"\+\+(\d{1,4})\.(\d{1,4})([a-z])")
VERSIONED_HANDSHAKE_SINCE = (4, 20)  # the first AFL++ whose tools read the versioned handshake
CHECKED_UP_TO = (5, 2)  # the newest AFL++ the runtime's fork server runs against in CI (5.02c, .ci/run)


@dataclass(frozen=True, order=True)
class AflppVersion:
    major: int
    minor: int
    suffix: str  # c = release, a = development

    def __str__(self) -> str:
        return f"{self.major}.{self.minor:02d}{self.suffix}"

    @property
    def handshake(self) -> str:
        """The fork-server handshake the runtime speaks to this AFL++ (AUTOTUNE_AFL_HANDSHAKE=auto)."""
        return "versioned" if (self.major, self.minor) >= VERSIONED_HANDSHAKE_SINCE else "old"


def parse_aflpp_version(text: bytes | str) -> AflppVersion | None:
    """The first AFL++ version string in ``text`` (a binary's bytes or a tool's output)."""
    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    m = _AFLPP_VERSION.search(data)
    return None if m is None else AflppVersion(int(m.group(1)), int(m.group(2)), m.group(3).decode())


def aflpp_version(tool: str, *, env: Mapping[str, str] | None = None) -> AflppVersion | None:
    """The AFL++ version of an afl tool: from its executable's bytes (what the runtime reads), else
    from the banner of ``tool -h`` (a wrapper script carries no version string itself)."""
    try:
        with open(tool, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            v = parse_aflpp_version(mm)  # type: ignore[arg-type]
    except (OSError, ValueError):
        v = None
    if v is not None:
        return v
    try:
        proc = subprocess.run([tool, "-h"], env=dict(env) if env is not None else None, capture_output=True,
                              timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_aflpp_version(proc.stdout + proc.stderr)


def fuzz_version(env: Mapping[str, str]) -> AflppVersion | None:
    """The version of the afl-fuzz that ``env`` finds (how the campaigns' options are spelt for it)."""
    return aflpp_version(find_tool("afl-fuzz", env=env), env=env)


def has_runtime(binary: str) -> bool:
    """Whether ``binary`` was built with autotune's runtime (autotune cc), not AFL++'s."""
    try:
        with open(binary, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return mm.find(RUNTIME_MARKER) >= 0
    except (OSError, ValueError):
        return False


def runtime_afl_env(binary: str, config_env: Mapping[str, str]) -> dict[str, str]:
    """The variables of RUNTIME_AFL_VARS a run of ``binary`` needs and its configuration does not set."""
    if not has_runtime(binary):
        return {}
    return {k: v for k, (v, _) in RUNTIME_AFL_VARS.items() if k not in config_env}


def base_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without AFL/AUTOTUNE variables (so only the files' settings apply),
    but for where the cache, the compilers and a user's canary.h are (AUTOTUNE_CANARY_INCLUDE)."""
    src = os.environ if env is None else env
    keep = {k: v for k, v in src.items() if not k.startswith(("AFL_", "AUTOTUNE_", "__AFL"))}
    for k in ("AUTOTUNE_CACHE_DIR", "AUTOTUNE_CC", "AUTOTUNE_CXX", CANARY_INCLUDE_VAR):
        if k in src:
            keep[k] = src[k]
    return keep


def find_tool(name: str, *, env: Mapping[str, str]) -> str:
    path = shutil.which(name, path=env.get("PATH", os.defpath))
    if path is None:
        raise ToolMissingError(name, "afl++")
    return path


def known_variables(*, tools: list[str]) -> set[str]:
    """AFL_* names the given binaries contain (afl-fuzz and afl-cc carry AFL++'s whole list)."""
    names: set[str] = set()
    for t in tools:
        try:
            with open(t, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                names.update(m.decode() for m in re.findall(rb"AFL_[A-Z0-9_]+", mm))
        except (OSError, ValueError):
            continue
    return names


def pin_prefix(core: int | None, *, env: Mapping[str, str]) -> list[str]:
    """``taskset -c N`` when a core is asked for and taskset exists (util-linux), else nothing."""
    if core is None:
        return []
    ts = shutil.which("taskset", path=env.get("PATH", os.defpath))
    return [ts, "-c", str(core)] if ts else []
