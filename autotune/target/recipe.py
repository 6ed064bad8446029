"""A target's recipe (``TargetSpec``): what to build, whichever compiler builds it.

- ``demo``: the bundled demo harness (autotune/demo/harness.c, ``DEMO_CFLAGS``);
- ``sources``: harness source files plus compiler and linker flags (``--source``, ``--cflags``,
  ``--ldflags``, ``--cxx``);
- ``script``: a build script in OSS-Fuzz's convention (``--build-script``), run with ``bash`` and
  ``CC``, ``CXX``, ``CFLAGS``, ``CXXFLAGS``, ``LIB_FUZZING_ENGINE``, ``OUT`` and ``WORK``; it must
  leave the harness at ``$OUT/fuzzer``. ``--source`` files given with it are the files the script
  compiles from beside it (hashed into the build's cache key, so a change rebuilds; the script
  itself always is). That is how a library with its own build system (lz4's Makefile) is built
  by each compiler in turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from autotune.errors import AutotuneError

DEFAULT_CFLAGS = "-O2 -g"  # --cflags of every command that builds a recipe
RECIPE_KINDS = ("demo", "sources", "script")


@dataclass(frozen=True)
class TargetSpec:
    kind: str  # demo, sources, script
    sources: tuple[str, ...] = ()
    cflags: str = DEFAULT_CFLAGS
    ldflags: str = ""
    cxx: bool = False
    script: str | None = None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "sources": list(self.sources), "cflags": self.cflags, "ldflags": self.ldflags,
                "cxx": self.cxx, "script": self.script}

    @classmethod
    def from_dict(cls, d: Mapping) -> "TargetSpec":
        return cls(kind=str(d["kind"]), sources=tuple(d.get("sources") or ()), cflags=str(d.get("cflags", DEFAULT_CFLAGS)),
                   ldflags=str(d.get("ldflags", "")), cxx=bool(d.get("cxx", False)), script=d.get("script"))

    def files(self) -> list[Path]:
        """The files whose contents go into a build (the sources, then the script)."""
        return [Path(f) for f in (*self.sources, *([self.script] if self.script else []))]


def demo_spec() -> TargetSpec:
    from autotune import demo  # it reads the kernels directory when imported: only a demo needs it

    return TargetSpec(kind="demo", sources=(str(demo.harness_source()),), cflags=" ".join(demo.DEMO_CFLAGS))


def make_spec(*, demo: bool = False, sources: Sequence[Path] = (), cflags: str = DEFAULT_CFLAGS, ldflags: str = "",
              cxx: bool = False, script: Path | None = None) -> TargetSpec | None:
    """The recipe the options name (None when they name none): ``--demo``, ``--source`` files, or
    a ``--build-script`` (with the ``--source`` files it compiles)."""
    if demo and (sources or script is not None):
        raise AutotuneError("give one target recipe: --demo, --source files, or --build-script",
                            fix="drop the others")
    if demo:
        return demo_spec()
    for s in sources:
        if not s.is_file():
            raise AutotuneError(f"harness source {s} does not exist", fix="pass existing files with --source")
    resolved = tuple(str(s.resolve()) for s in sources)
    if script is not None:
        if not script.is_file():
            raise AutotuneError(f"build script {script} does not exist", fix="pass an existing script")
        return TargetSpec(kind="script", script=str(script.resolve()), sources=resolved, cflags=cflags,
                          ldflags=ldflags, cxx=cxx)
    if sources:
        return TargetSpec(kind="sources", sources=resolved, cflags=cflags, ldflags=ldflags, cxx=cxx)
    return None
