"""autotune's bundled demo target: an "ATLV" chunked-format parser (harness.c), its seed corpus
(seeds/) and its documented crashing and hanging inputs (inputs/), all package data.

``autotune probe --demo`` builds the harness with the compiler wrapper
(``autotune.target.demo_harness``: the recipe ``autotune.target.demo_spec``, cached) and probes it
with ``seed_dir()``. The bugs are documented at
the top of harness.c and in :func:`autotune.demo.inputs.bad_inputs`.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESS_NAME = "harness.c"
DEMO_CFLAGS: tuple[str, ...] = ("-O2", "-g")


def harness_source() -> Path:
    return HERE / HARNESS_NAME


def seed_dir() -> Path:
    """The demo's seed corpus (valid inputs exercising every chunk type)."""
    return HERE / "seeds"


def bad_inputs_dir() -> Path:
    """Inputs that crash (crash-*) or hang (hang-*) the demo target."""
    return HERE / "inputs"
