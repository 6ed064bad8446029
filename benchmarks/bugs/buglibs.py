"""autotune's known-bug benchmark: real libraries from Debian's archive with a canary of ours at
each known bug's fix site (kernels/canary.h, Magma's reached/triggered idea).

The manifest (bugs.toml) names per library the Debian source package, version and suite, the
harness and the folder with its build script, canary patch, seeds and crafted inputs; per bug its
id, CVE and fix (the Debian patch or upstream commit that fixes it), the canary's site, a
description and whether an input that triggers it is known (``inputs/<BUG>.trigger``).

A library's pristine upstream tree (``apt-get source`` with a private apt configuration and
``dpkg-source -x --skip-patches``: benchmarks/targets/debsrc.py) is fetched once into the autotune
cache; its build script copies it, applies canaries.diff and builds with whatever compiler
autotune.target gives it (``plain`` clang for the replay tests, ``afl`` for campaigns), cached
like every other target build.

    python benchmarks/bugs/buglibs.py list                  # the libraries and their bugs
    python benchmarks/bugs/buglibs.py table                 # the bug table (README.md's)
    python benchmarks/bugs/buglibs.py source libtiff        # fetch (once); print BUGLIB_SRC
    python benchmarks/bugs/buglibs.py build libtiff --cc afl  # build (cached); print the binary
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _p in (ROOT / "benchmarks", ROOT):  # the repository and benchmarks/ (targets.debsrc) on the path
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

MANIFEST = HERE / "bugs.toml"
CANARY_H = ROOT / "kernels" / "canary.h"
CANARIED_TREE = HERE / "canaried_tree.sh"  # every build script's start, which it sources
SCHEMA_VERSION = 1
SOURCE_VAR = "BUGLIB_SRC"  # the variable every build script reads the pristine tree's path from
DEFAULT_CFLAGS = "-O2 -g"


class LibraryUnavailable(Exception):
    """The library's source cannot be fetched here (no apt-get source, no mirror)."""


@dataclass(frozen=True)
class Bug:
    id: str  # PNG001, TIF003, ...: our own numbering
    library: str
    cve: str  # the CVE id, or "" for a fix without one
    fix: str  # the fix: Debian patch file (and version carrying it) or upstream commit title
    site: str  # file:function of the canary
    description: str
    trigger_known: bool  # an input that triggers it is in inputs/<id>.trigger
    added: str = ""  # YYYY-MM-DD it joined the benchmark ("" for the first 27): runs before it lack its canary


@dataclass(frozen=True)
class BugLibrary:
    name: str  # our folder name: libtiff, libxml2, libpng, sqlite3
    package: str  # Debian source package
    version: str  # Debian version fetched (upstream's pristine tree of it)
    suite: str  # the Debian release that serves it
    upstream: str  # upstream version
    harness: str  # the harness's file name in the folder
    harness_origin: str  # whose harness: ours, or the library's own
    proof: str  # a file the unpacked tree holds
    cxx: bool
    bugs: tuple[Bug, ...]

    @property
    def folder(self) -> Path:
        return HERE / self.name

    @property
    def build_script(self) -> Path:
        return self.folder / "build.sh"

    @property
    def patch(self) -> Path:
        return self.folder / "canaries.diff"

    @property
    def seeds_dir(self) -> Path:
        return self.folder / "seeds"

    @property
    def inputs_dir(self) -> Path:
        return self.folder / "inputs"

    def harness_files(self) -> list[Path]:
        """The files the build script compiles (the harness and what it includes by a quoted path),
        applies or sources beside itself (hashed into the build's key)."""
        from targets.script_target import local_includes

        harness = self.folder / self.harness
        own = [harness, *local_includes(harness)] if harness.is_file() else []
        return [*own, self.patch, CANARY_H, CANARIED_TREE]

    def write_inputs(self, *, seeds: Mapping[str, bytes], inputs: Mapping[str, bytes]) -> None:
        """Write the seeds and crafted inputs ``{file name: content}`` into seeds/ and inputs/ (the
        library's make_inputs.py)."""
        for folder, files in ((self.seeds_dir, seeds), (self.inputs_dir, inputs)):
            folder.mkdir(exist_ok=True)
            for name, data in files.items():
                (folder / name).write_bytes(data)

    def input_path(self, bug: str, kind: str) -> Path:
        """``inputs/<bug>.reach`` or ``inputs/<bug>.trigger``."""
        return self.inputs_dir / f"{bug}.{kind}"

    def source_dir(self) -> Path:
        """The pristine upstream tree, fetched once per cache dir."""
        from autotune.paths import cache_dir
        from targets.debsrc import SourceUnavailable, cached_source_tree

        try:
            return cached_source_tree(self.package, cache=cache_dir() / "bugs", proof=self.proof, suite=self.suite,
                                      version=self.version, skip_patches=True)
        except SourceUnavailable as exc:
            raise LibraryUnavailable(str(exc)) from exc

    def spec(self, cflags: str = DEFAULT_CFLAGS):
        from autotune.target import make_spec

        return make_spec(script=self.build_script, sources=self.harness_files(), cflags=cflags, cxx=self.cxx)

    def env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        from autotune.afl import base_env

        return {**base_env(env), SOURCE_VAR: str(self.source_dir())}

    def build(self, *, cc_kind: str = "plain", afl_env: Mapping[str, str] | None = None,
              cflags: str = DEFAULT_CFLAGS) -> Path:
        """The harness built by build.sh with ``cc_kind`` (autotune.target's cache: built once)."""
        from autotune.target import build

        if afl_env and cc_kind != "afl":
            raise ValueError("afl_env applies to cc_kind='afl' only")
        return build(spec=self.spec(cflags), cc_kind=cc_kind, build_vars=dict(afl_env or {}), env=self.env())


def _bug(library: str, d: Mapping) -> Bug:
    return Bug(id=str(d["id"]), library=library, cve=str(d.get("cve", "")), fix=str(d["fix"]), site=str(d["site"]),
               description=str(d["description"]), trigger_known=bool(d["trigger_known"]),
               added=str(d.get("added", "")))


def load_manifest(path: Path = MANIFEST) -> dict[str, BugLibrary]:
    """The libraries of the manifest by name."""
    doc = tomllib.loads(path.read_text())
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version {doc.get('schema_version')!r}, expected {SCHEMA_VERSION}")
    libs = {}
    for name, d in doc["library"].items():
        libs[name] = BugLibrary(name=name, package=d["package"], version=d["version"], suite=d["suite"],
                                upstream=d["upstream"], harness=d["harness"], harness_origin=d["harness_origin"],
                                proof=d["proof"], cxx=bool(d.get("cxx", False)),
                                bugs=tuple(_bug(name, b) for b in d.get("bug", [])))
    return libs


def library(name: str) -> BugLibrary:
    libs = load_manifest()
    if name not in libs:
        raise SystemExit(f"error: no library {name!r} in {MANIFEST} (there are: {', '.join(libs)})")
    return libs[name]


def bug_table(libs: Mapping[str, BugLibrary]) -> str:
    """The Markdown table of the benchmark's bugs (README.md holds it; a test keeps them equal)."""
    lines = ["| library | version | bug | CVE | fix | canary site | inputs |", "|---|---|---|---|---|---|---|"]
    for lib in libs.values():
        for b in lib.bugs:
            inputs = "reach, trigger" if b.trigger_known else "reach"
            lines.append(f"| {lib.name} | {lib.upstream} ({lib.suite}) | {b.id} | {b.cve or '-'} | {b.fix} "
                         f"| `{b.site}` | {inputs} |")
    return "\n".join(lines) + "\n"


def recipe_args(lib: BugLibrary) -> list[str]:
    """autotune's arguments for the library's recipe: its build script, every file the script compiles,
    applies or sources (-s, so that a change to any of them rebuilds) and its seeds."""
    def shown(p: Path) -> str:  # relative to the working directory when below it
        try:
            return str(p.resolve().relative_to(Path.cwd().resolve()))
        except ValueError:
            return str(p)

    args = ["--build-script", shown(lib.build_script)]
    for f in lib.harness_files():
        args += ["-s", shown(f)]
    return args + ["--corpus", shown(lib.seeds_dir)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the libraries and their bugs")
    sub.add_parser("table", help="the bug table in Markdown (README.md's)")
    p = sub.add_parser("source", help="fetch a library's pristine tree (once) and print its path")
    p.add_argument("library")
    p = sub.add_parser("recipe", help="print the arguments that give autotune run / compare the library's recipe "
                                      "(--build-script, its -s files, --corpus): the tree is read from "
                                      f"${SOURCE_VAR} (`source`)")
    p.add_argument("library")
    p = sub.add_parser("build", help="build a library's harness with its canaries (cached) and print its path")
    p.add_argument("library")
    p.add_argument("--cc", default="plain", choices=("plain", "afl", "autotune"))
    args = ap.parse_args(argv)
    try:
        if args.cmd == "list":
            for lib in load_manifest().values():
                print(f"{lib.name} {lib.upstream} (Debian {lib.package} {lib.version}, {lib.suite}): "
                      f"{len(lib.bugs)} bugs, harness {lib.harness}")
                for b in lib.bugs:
                    print(f"  {b.id:7} {b.cve or '-':15} {b.site:55} {'trigger' if b.trigger_known else 'reach'}")
        elif args.cmd == "table":
            print(bug_table(load_manifest()), end="")
        elif args.cmd == "source":
            print(library(args.library).source_dir())
        elif args.cmd == "recipe":
            print(shlex.join(recipe_args(library(args.library))))
        else:
            print(library(args.library).build(cc_kind=args.cc))
    except LibraryUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
