"""A real third-party target built by an OSS-Fuzz-style build script beside its harness.

Its source comes from Debian's source package (targets/debsrc.py: ``apt-get source`` with a
private, temporary apt configuration), unpacked once into the autotune cache; the script reads the
tree's path from one variable (``LZ4_SRC``, ``LIBYAML_SRC``). The recipe is exactly what
``--build-script DIR/build.sh --source DIR/<harness>.c --cflags CFLAGS`` gives validate, compare,
race and run, and it builds through ``autotune.target.build`` with any compiler kind:

- ``autotune``: ``autotune-cc`` (``instrument``: its ``AUTOTUNE_CC_INSTRUMENT``, default full;
  ``cc_vars``: its other compile-time variables, e.g. ``AUTOTUNE_CC_SELECTS``);
- ``plain``: clang without instrumentation, linked with our driver and runtime (the baseline);
- ``afl``: afl-clang-fast under the caller's AFL_* build variables (none: AFL++'s default).

Builds are cached by autotune.target under a digest of the recipe, compiler and variables, so
every test of a run that asks for one variant shares one build (the tests' cache is one per
session: tests/conftest.py), validate's, the race's and the yardstick's included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from autotune.paths import cache_dir

try:  # imported as targets.* (tests) or tests.targets.* (benchmarks)
    from .debsrc import SourceUnavailable, cached_source_tree
except ImportError:  # run as a script
    from targets.debsrc import SourceUnavailable, cached_source_tree  # noqa: E402


_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.MULTILINE)


def local_includes(source: Path) -> list[Path]:
    """The files ``source`` includes by a quoted path found from its own folder (and those they
    include, in turn), first seen first: a build's key must hash them with the harness."""
    found: list[Path] = []
    todo = [source.resolve()]
    while todo:
        src = todo.pop(0)
        for name in _LOCAL_INCLUDE.findall(src.read_text(errors="replace")):
            p = (src.parent / name).resolve()
            if p.is_file() and p != source.resolve() and p not in found:
                found.append(p)
                todo.append(p)
    return found


class TargetUnavailable(Exception):
    """The target's source cannot be fetched on this machine (no apt-get source)."""


@dataclass(frozen=True)
class ScriptTarget:
    package: str  # the Debian source package
    folder: Path  # build.sh and the harness
    harness: str  # the harness's file name in ``folder``
    proof: str  # a file the unpacked tree must hold
    source_var: str  # the variable build.sh reads the tree's path from
    cflags: str  # the tests' CFLAGS
    samples: tuple[str, ...] = ()  # the sample inputs the tree ships: globs under it, in order
    max_seed_bytes: int | None = None  # a larger sample is left out
    # inputs made from the tree when it ships too few: derive(tree) -> {file name: bytes}, deterministic
    derive: Callable[[Path], dict[str, bytes]] | None = None

    @property
    def build_script(self) -> Path:
        return self.folder / "build.sh"

    @property
    def harness_source(self) -> Path:
        return self.folder / self.harness

    def source_dir(self) -> Path:
        """The unpacked upstream tree, fetched once per cache dir (TargetUnavailable if it cannot be)."""
        try:
            return cached_source_tree(self.package, cache=cache_dir() / "targets", proof=self.proof)
        except SourceUnavailable as exc:
            raise TargetUnavailable(str(exc)) from exc

    def derived_inputs(self) -> list[Path]:
        """``derive``'s inputs, written (once per content) beside the tree in the cache, sorted."""
        if self.derive is None:
            return []
        from autotune.io import file_lock

        made = self.derive(self.source_dir())
        dest = cache_dir() / "targets" / self.package / "derived"
        dest.mkdir(parents=True, exist_ok=True)
        with file_lock(dest.parent / "derived.lock"):
            for name, data in made.items():
                p = dest / name
                if not p.is_file() or p.read_bytes() != data:
                    tmp = p.with_name(f".{name}.tmp")
                    tmp.write_bytes(data)
                    tmp.replace(p)
        return [dest / name for name in sorted(made)]

    def sample_inputs(self) -> list[Path]:
        """The sample inputs the tree ships: each of ``samples``' matches, sorted, pattern by pattern,
        then ``derive``'s (files only, of at most ``max_seed_bytes``)."""
        src = self.source_dir()
        files = [p for pattern in self.samples for p in sorted(src.glob(pattern))] + self.derived_inputs()
        return [p for p in files
                if p.is_file() and (self.max_seed_bytes is None or p.stat().st_size <= self.max_seed_bytes)]

    def spec(self, cflags: str | None = None):
        from autotune.target import make_spec

        return make_spec(script=self.build_script, sources=[self.harness_source, *local_includes(self.harness_source)],
                         cflags=cflags or self.cflags)

    def env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment the build script needs: ``autotune.afl.base_env`` of the caller's, plus the tree."""
        from autotune.afl import base_env

        return {**base_env(env), self.source_var: str(self.source_dir())}

    def build_harness(self, *, cc_kind: str = "autotune", afl_env: Mapping[str, str] | None = None,
                      instrument: str = "full", cc_vars: Mapping[str, str] | None = None,
                      cflags: str | None = None) -> Path:
        """The harness built by build.sh with ``cc_kind`` (built on first use, then cached).
        ``instrument`` and ``cc_vars`` (other compile-time variables of the wrapper, e.g.
        ``AUTOTUNE_CC_SELECTS``) apply to autotune builds, ``afl_env`` to afl builds."""
        from autotune.target import build

        if afl_env and cc_kind != "afl":
            raise ValueError("afl_env applies to cc_kind='afl' only")
        if (instrument != "full" or cc_vars) and cc_kind != "autotune":
            raise ValueError("instrument and cc_vars apply to cc_kind='autotune' only")
        build_vars = {"AUTOTUNE_CC_INSTRUMENT": instrument} if cc_kind == "autotune" and instrument != "full" else {}
        build_vars.update(cc_vars or {})
        build_vars.update(afl_env or {})
        return build(spec=self.spec(cflags), cc_kind=cc_kind, build_vars=build_vars, env=self.env())
