"""Where autotune's bundled files and its build cache live.

In a wheel, ``kernels/`` and ``profiles/`` are carried inside the package as
``autotune/_data/{kernels,profiles}``; in a source checkout (editable install) they stand
beside the package. Both are found at run time.
"""

from __future__ import annotations

import os
from pathlib import Path

from autotune.errors import AutotuneError

_PKG = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise AutotuneError(
        f"autotune's bundled '{name}' directory is missing from the installation",
        fix="reinstall autotune (pip install --force-reinstall autotune)",
    )


def kernels_dir() -> Path:
    """The C runtime sources (kernels/)."""
    return _data_dir("kernels")


def profiles_dir() -> Path:
    """The reference host profiles (profiles/)."""
    return _data_dir("profiles")


def cache_dir() -> Path:
    """The per-user build cache: $AUTOTUNE_CACHE_DIR, else $XDG_CACHE_HOME/autotune, else ~/.cache/autotune."""
    env = os.environ.get("AUTOTUNE_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "autotune"


# The variable that tells a build script where canary.h is (docs/BUGS.md, "Your own library"):
# autotune sets it for every build it runs, to kernels_dir() (canary.h's home), unless the caller set
# it. The benchmark's libraries find canary.h there too (benchmarks/bugs/canaried_tree.sh), so their
# canary builds are the same bytes whether autotune or a plain shell built them.
CANARY_INCLUDE_VAR = "AUTOTUNE_CANARY_INCLUDE"
