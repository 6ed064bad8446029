"""The artefacts `autotune cc` links into a target (and the pass plugin it loads), built once per source hash.

- the runtime archive ``autotune-rt.a``: every ``kernels/*.c`` except the ones that define
  ``main`` or belong to a separate program (``RUNTIME_EXCLUDE``). It is the one place that list is
  defined; a new kernels file joins the runtime without touching this module.
- the driver object ``autotune-driver.o`` (``kernels/driver.c``): ``main()`` for
  ``LLVMFuzzerTestOneInput`` harnesses, linked in place of libFuzzer for ``-fsanitize=fuzzer``.

- the pass plugin ``autotune-selects.so`` (``kernels/plugin/autotune_selects.cpp``, C++ against
  LLVM 14's headers from llvm-config): clang loads it with ``-fpass-plugin`` for every compile
  (``AUTOTUNE_CC_SELECTS=0`` turns it off), so scalar selects become branches SanitizerCoverage
  counts, as AFL++'s PCGUARD counts them.
- each build kind's own pass plugin (autotune.buildkinds ``BuildKind.plugin``, built by
  :func:`pass_plugin` under the name of its source), today two: ``autotune-edges.so``
  (``kernels/plugin/autotune_edges.cpp``), the edge and ngram kinds' instrumentation, edges or
  N-grams counted inline as AFL++'s CLASSIC / NGRAM-N count them, loaded after the select plugin,
  so it sees the split selects; and ``autotune-counters.so`` (``kernels/plugin/autotune_counters.cpp``): loaded for
  every compile of the guard build kind; it makes clang's inline 8-bit counters NeverZero (255 + 1 =
  1), as AFL++'s PCGUARD counts, right after clang's SanitizerCoverage pass created them.

The C ones are compiled without coverage instrumentation (the runtime must not trace itself) by
:func:`autotune.runtime.build.build_artifact`, so they live in the user cache under a digest of
their sources, headers, flags and compiler, and two wrapper processes building them at once are
serialised. This module stays light to import: the compiler wrapper imports it on every link.
"""

from __future__ import annotations

from pathlib import Path

from autotune.buildkinds import KINDS, plugin_name
from autotune.errors import AutotuneError, ToolMissingError
from autotune.llvm import find_clang, plugin_tools
from autotune.paths import kernels_dir
from autotune.runtime.build import Compiler, build_artifact, find_compiler

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


PLUGIN_SOURCE = "plugin/autotune_selects.cpp"
# the build kinds' own pass plugins (autotune.buildkinds BuildKind.plugin; pass_plugin builds any of them)
EDGE_PLUGIN_SOURCE = KINDS["edge"].plugin or ""
COUNTER_PLUGIN_SOURCE = KINDS["guard"].plugin or ""
# clang++ flags of the plugins (the LLVM's headers are added): warning-free under -Wall -Wextra
PLUGIN_CXXFLAGS: tuple[str, ...] = ("-std=c++17", "-O2", "-fPIC", "-fno-exceptions", "-fno-rtti", "-Wall", "-Wextra")


def pass_plugin(source_name: str, clang: str | None = None) -> Path:
    """Build (or reuse) the pass plugin of ``kernels/<source_name>`` (named after it:
    ``plugin/autotune_edges.cpp`` is ``autotune-edges``) for the LLVM of ``clang`` (default: the
    clang autotune cc runs), by that LLVM's clang++ and headers, and return its path."""
    import subprocess

    source = kernels_dir() / source_name
    if not source.is_file():
        raise AutotuneError(f"the pass plugin source {source} is missing",
                            fix="reinstall autotune (pip install --force-reinstall autotune)")
    cfg, cxx, major = plugin_tools(clang or find_clang())
    include = subprocess.run([cfg, "--includedir"], capture_output=True, text=True, timeout=30).stdout.strip()
    if not include or not Path(include, "llvm", "Passes", "PassPlugin.h").is_file():
        raise ToolMissingError("LLVM's headers (llvm/Passes/PassPlugin.h)", f"llvm-{major}-dev")
    flags = [*PLUGIN_CXXFLAGS, "-isystem", include, "-D__STDC_CONSTANT_MACROS", "-D__STDC_FORMAT_MACROS",
             "-D__STDC_LIMIT_MACROS"]
    return build_artifact(plugin_name(source_name), [source], kind="plugin", flags=flags,
                          compiler=find_compiler((cxx,)))


def select_plugin(clang: str | None = None) -> Path:
    """Build (or reuse) the select-splitting pass plugin for ``clang``'s LLVM and return its path."""
    return pass_plugin(PLUGIN_SOURCE, clang)


def edge_plugin(clang: str | None = None) -> Path:
    """Build (or reuse) the edge build kind's pass plugin for ``clang``'s LLVM and return its path."""
    return pass_plugin(EDGE_PLUGIN_SOURCE, clang)


def counter_plugin(clang: str | None = None) -> Path:
    """Build (or reuse) the guard build kind's NeverZero pass plugin for ``clang``'s LLVM and return its path."""
    return pass_plugin(COUNTER_PLUGIN_SOURCE, clang)
