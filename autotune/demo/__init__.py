"""autotune's bundled demo target: an "ATLV" chunked-format parser (harness.c), its seed corpus
(seeds/) and its documented crashing and hanging inputs (inputs/), all package data.

``autotune probe --demo`` builds the harness with the compiler wrapper
(``autotune.target.demo_harness``: the recipe ``autotune.target.demo_spec``, cached) and probes it
with ``seed_dir()``. The bugs are documented at
the top of harness.c and in :func:`autotune.demo.inputs.bad_inputs`.
"""

from __future__ import annotations

from pathlib import Path

from autotune.paths import kernels_dir

HERE = Path(__file__).resolve().parent
HARNESS_NAME = "harness.c"
# -I: harness.c includes kernels/canary.h (its planted bug DEMO001), wherever autotune is installed
DEMO_CFLAGS: tuple[str, ...] = ("-O2", "-g", f"-I{kernels_dir()}")


def harness_source() -> Path:
    return HERE / HARNESS_NAME


def seed_dir() -> Path:
    """The demo's seed corpus (valid inputs exercising every chunk type)."""
    return HERE / "seeds"


def bad_inputs_dir() -> Path:
    """Inputs that crash (crash-*) or hang (hang-*) the demo target, or trigger its planted known bug
    (canary-*: a crash only with fatal canaries, AUTOTUNE_CANARY_FATAL=1)."""
    return HERE / "inputs"
