"""The two artefacts `autotune cc` links into a target, built once per source hash.

- the runtime archive ``autotune-rt.a``: every ``kernels/*.c`` except the ones that define
  ``main`` or belong to a separate program (``RUNTIME_EXCLUDE``). It is the one place that list is
  defined; a new kernels file joins the runtime without touching this module.
- the driver object ``autotune-driver.o`` (``kernels/driver.c``): ``main()`` for
  ``LLVMFuzzerTestOneInput`` harnesses, linked in place of libFuzzer for ``-fsanitize=fuzzer``.

Both are compiled without coverage instrumentation (the runtime must not trace itself) by
:func:`autotune.runtime.build.build_artifact`, so they live in the user cache under a digest of
their sources, headers, flags and compiler, and two wrapper processes building them at once are
serialised. This module stays light to import: the compiler wrapper imports it on every link.
"""

from __future__ import annotations

from pathlib import Path

from autotune.errors import AutotuneError
from autotune.paths import kernels_dir
from autotune.runtime.build import Compiler, build_artifact

# kernels/*.c files that are not part of the runtime archive:
# driver.c has main() (linked only for -fsanitize=fuzzer), bench.c is the benchmark program.
RUNTIME_EXCLUDE: frozenset[str] = frozenset({"driver.c", "bench.c"})
DRIVER_SOURCE = "driver.c"
# Optimised (the per-exec kernels are the hot path) and with debug info for backtraces.
RUNTIME_CFLAGS: tuple[str, ...] = ("-O2", "-g")

RUNTIME_NAME = "autotune-rt"
DRIVER_NAME = "autotune-driver"


def runtime_sources(*, kdir: Path | None = None) -> list[Path]:
    """The C sources of the runtime archive, sorted by name."""
    kdir = kdir or kernels_dir()
    return sorted(p for p in kdir.glob("*.c") if p.name not in RUNTIME_EXCLUDE)


def runtime_archive(*, compiler: Compiler | None = None) -> Path:
    """Build (or reuse) the runtime archive and return its path."""
    sources = runtime_sources()
    if not sources:
        raise AutotuneError(
            f"the C runtime sources are missing from {kernels_dir()}",
            fix="reinstall autotune (pip install --force-reinstall autotune)",
        )
    return build_artifact(RUNTIME_NAME, sources, kind="archive", flags=RUNTIME_CFLAGS, compiler=compiler)


def driver_object(*, compiler: Compiler | None = None) -> Path:
    """Build (or reuse) the driver object (main() for LLVMFuzzerTestOneInput) and return its path."""
    source = kernels_dir() / DRIVER_SOURCE
    if not source.is_file():
        raise AutotuneError(
            f"the harness driver {source} is missing",
            fix="reinstall autotune (pip install --force-reinstall autotune)",
        )
    return build_artifact(DRIVER_NAME, [source], kind="object", flags=RUNTIME_CFLAGS, compiler=compiler)
