"""lz4 as a real third-party target, for the end-to-end tests of every stage.

The source comes from Debian's source package (``apt-get source lz4`` with a private, temporary
apt configuration: targets/debsrc.py), unpacked once into the autotune cache. The library is built by lz4's own
Makefile (``make -C lib liblz4.a``) with one of three compilers, and linked with our harness
(lz4/lz4_harness.c, an ``LLVMFuzzerTestOneInput``):

- ``autotune``: ``CC=autotune-cc``; the harness is linked with ``-fsanitize=fuzzer`` through the
  wrapper, so it carries autotune's runtime and driver (probe server, standalone runs).
- ``plain``: ``CC=clang``, no instrumentation; the harness is linked with the same driver and
  runtime, so it runs the same way and is the baseline for throughput comparisons.
- ``afl``: ``CC=afl-clang-fast`` (Debian's afl++) with the caller's AFL_* build variables
  (e.g. ``AFL_LLVM_INSTRUMENT=CLASSIC``); the harness gets libAFLDriver via ``-fsanitize=fuzzer``.

Each build lives in its own directory of the cache, named by a digest of everything that goes
into it, and is reused by later calls (and later tests of the same session); a lock file makes
concurrent builders wait for each other. ``build.json`` records the commands and wall times.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Literal, Mapping

if __name__ == "__main__":  # run as a script: the repository's root and tests/ on the path
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from autotune.io import file_lock  # noqa: E402
from autotune.paths import cache_dir  # noqa: E402

try:  # imported as targets.* (tests) or tests.targets.* (benchmarks)
    from .debsrc import SourceUnavailable, cached_source_tree
except ImportError:  # run as a script
    from targets.debsrc import SourceUnavailable, cached_source_tree  # noqa: E402

CcKind = Literal["autotune", "plain", "afl"]
CC_KINDS: tuple[str, ...] = ("autotune", "plain", "afl")

PACKAGE = "lz4"
HARNESS_SOURCE = Path(__file__).resolve().parent / "lz4" / "lz4_harness.c"
DEFAULT_CFLAGS = "-O2 -g"  # lz4's own default (Debian's patch 0002)
MAKE_TIMEOUT_S = 600


class TargetUnavailable(Exception):
    """The target's source cannot be fetched on this machine (no apt-get source)."""


@dataclass(frozen=True)
class Lz4Build:
    """One build of lz4 and the harness; paths are absolute."""

    cc_kind: str
    root: Path  # the build tree (a copy of the source tree)
    library: Path  # lib/liblz4.a
    harness: Path  # the linked harness binary
    cli: Path | None  # programs/lz4, lz4's command-line tool, once built (cli=True)
    library_build_s: float  # wall time of lz4's make for the library
    harness_build_s: float  # wall time of compiling and linking the harness
    cli_build_s: float | None  # wall time of lz4's make for the tool
    library_build_cpu_s: float  # CPU time (user + sys of the children) of the library's make
    commands: tuple[tuple[str, ...], ...]  # the commands run, in order

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("root", "library", "harness", "cli"):
            d[k] = None if d[k] is None else str(d[k])
        d["commands"] = [list(c) for c in self.commands]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Lz4Build":
        return cls(cc_kind=d["cc_kind"], root=Path(d["root"]), library=Path(d["library"]),
                   harness=Path(d["harness"]), cli=None if d["cli"] is None else Path(d["cli"]),
                   library_build_s=float(d["library_build_s"]), harness_build_s=float(d["harness_build_s"]),
                   cli_build_s=None if d["cli_build_s"] is None else float(d["cli_build_s"]),
                   library_build_cpu_s=float(d["library_build_cpu_s"]),
                   commands=tuple(tuple(c) for c in d["commands"]))


def targets_dir() -> Path:
    return cache_dir() / "targets"


def lz4_source_dir() -> Path:
    """The unpacked upstream lz4 tree (Debian's source package), fetched once per cache dir.

    Raises TargetUnavailable when apt-get source cannot fetch or unpack it.
    """
    try:
        return cached_source_tree(PACKAGE, cache=targets_dir(), proof="lib/lz4.h")
    except SourceUnavailable as exc:
        raise TargetUnavailable(str(exc)) from exc


def lz4_sample_inputs() -> list[Path]:
    """The sample inputs lz4's source tree ships: its golden frame samples and its documents."""
    src = lz4_source_dir()
    files = sorted((src / "tests" / "goldenSamples").glob("*"))
    files += [src / "README.md", src / "NEWS", src / "LICENSE"]
    files += sorted((src / "doc").glob("*.md"))
    return [p for p in files if p.is_file()]


def _tool(name: str) -> str:
    """A console script of this venv (tests may run without the venv on PATH), else from PATH."""
    here = Path(sys.executable).parent / name
    if here.is_file():
        return str(here)
    found = shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} is not installed")
    return found


def _digest(cc_kind: str, afl_env: Mapping[str, str], cflags: str, extra: list[str]) -> str:
    h = hashlib.sha256()
    for part in (cc_kind, cflags, json.dumps(sorted(afl_env.items())), *extra):
        h.update(part.encode() + b"\0")
    h.update(HARNESS_SOURCE.read_bytes())
    return h.hexdigest()[:16]


def _run(cmd: list[str], *, cwd: Path, env: Mapping[str, str]) -> tuple[float, float]:
    """Run a build command; (wall seconds, CPU seconds of the children)."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=dict(env), capture_output=True, text=True,
                          timeout=MAKE_TIMEOUT_S)
    wall = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed in {cwd} (exit {proc.returncode}):\n"
                           f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    return wall, cpu


def build_lz4(*, cc_kind: CcKind = "autotune", afl_env: Mapping[str, str] | None = None,
              cflags: str = DEFAULT_CFLAGS, cli: bool = False, instrument: str = "full",
              cc_vars: Mapping[str, str] | None = None) -> Lz4Build:
    """Build lz4's library with its own Makefile and link the harness; reuse a cached build.

    cli: also build lz4's command-line tool (programs/lz4, a whole program linked by lz4's
    Makefile with the same compiler). instrument: ``AUTOTUNE_CC_INSTRUMENT`` of an autotune build
    (full, blocks, guard, edge); cc_vars: other compile-time variables of the wrapper
    (``AUTOTUNE_CC_SELECTS``), part of the build's cache key.
    """
    if cc_kind not in CC_KINDS:
        raise ValueError(f"cc_kind must be one of {CC_KINDS}, not {cc_kind!r}")
    afl_env = dict(afl_env or {})
    if afl_env and cc_kind != "afl":
        raise ValueError("afl_env applies to cc_kind='afl' only")
    if (instrument != "full" or cc_vars) and cc_kind != "autotune":
        raise ValueError("instrument and cc_vars apply to cc_kind='autotune' only")
    src = lz4_source_dir()
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "CFLAGS", "CC")}
    env["CFLAGS"] = cflags  # via the environment, so lz4's Makefile still appends its warnings
    flags = cflags.split()
    link_extra: list[str] = []
    extra_ident: list[str] = [str(src)]
    if cc_kind == "autotune":
        import autotune.cc
        from autotune.runtime import artifacts

        cc = _tool("autotune-cc")
        # the wrapper's flags and the runtime it links are part of what is built
        extra_ident += [Path(autotune.cc.__file__).read_text(),
                        str(artifacts.runtime_archive()), str(artifacts.driver_object())]
        harness_cmd = [cc, *flags, "-fsanitize=fuzzer"]
        env["AUTOTUNE_CC_INSTRUMENT"] = instrument
        if instrument != "full":  # (full builds keep the cache key they had before build kinds)
            extra_ident.append(f"AUTOTUNE_CC_INSTRUMENT={instrument}")
        if instrument in autotune.cc.INLINE_KINDS:  # its instrumentation is our pass plugins
            extra_ident += [str(artifacts.select_plugin()), str(artifacts.edge_plugin())]
        for k, v in sorted((cc_vars or {}).items()):
            env[k] = v
            extra_ident.append(f"{k}={v}")
    elif cc_kind == "plain":
        from autotune.cc import LINK_LIBS
        from autotune.runtime import artifacts

        # no instrumentation, but the same driver and runtime, linked as the wrapper links them
        cc = shutil.which("clang") or "clang"
        rt, drv = artifacts.runtime_archive(), artifacts.driver_object()
        extra_ident += [str(rt), str(drv)]
        harness_cmd = [cc, *flags, str(drv)]
        link_extra = ["-Wl,--whole-archive", str(rt), "-Wl,--no-whole-archive", *LINK_LIBS]
    else:
        cc = shutil.which("afl-clang-fast") or "afl-clang-fast"
        env.update(afl_env)
        env.setdefault("AFL_QUIET", "1")
        ver = subprocess.run([cc, "--version"], capture_output=True, text=True, env=env).stdout
        extra_ident.append(ver)
        harness_cmd = [cc, *flags, "-fsanitize=fuzzer"]
    key = _digest(cc_kind, afl_env, cflags, extra_ident)
    root = targets_dir() / PACKAGE / f"build-{cc_kind}-{key}"
    record = root / "build.json"
    with file_lock(root.with_name(root.name + ".lock")):
        build = Lz4Build.from_dict(json.loads(record.read_text())) if record.is_file() else None
        if build is None:
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(src, root, symlinks=True)
            make_cmd = ["make", "-C", "lib", "liblz4.a", f"CC={cc}"]
            lib_s, lib_cpu_s = _run(make_cmd, cwd=root, env=env)
            harness = root / "lz4_harness"
            harness_cmd += ["-I", "lib", str(HARNESS_SOURCE), "lib/liblz4.a", "-o", str(harness), *link_extra]
            harness_s, _ = _run(harness_cmd, cwd=root, env=env)
            build = Lz4Build(cc_kind=cc_kind, root=root, library=root / "lib" / "liblz4.a", harness=harness,
                             cli=None, library_build_s=round(lib_s, 3), harness_build_s=round(harness_s, 3),
                             cli_build_s=None, library_build_cpu_s=round(lib_cpu_s, 3),
                             commands=(tuple(make_cmd), tuple(harness_cmd)))
            _write_record(record, build)
        if cli and build.cli is None:  # the tool is built on demand in the same tree
            cli_cmd = ["make", "-j2", "-C", "programs", "lz4", f"CC={cc}"]
            cli_s, _ = _run(cli_cmd, cwd=root, env=env)
            build = replace(build, cli=root / "programs" / "lz4", cli_build_s=round(cli_s, 3),
                            commands=(*build.commands, tuple(cli_cmd)))
            _write_record(record, build)
        return build


def _write_record(record: Path, build: Lz4Build) -> None:
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps(build.to_dict(), indent=2))
    os.replace(tmp, record)


def build_lz4_harness(*, cc_kind: CcKind = "autotune", afl_env: Mapping[str, str] | None = None,
                      cflags: str = DEFAULT_CFLAGS, instrument: str = "full",
                      cc_vars: Mapping[str, str] | None = None) -> Path:
    """The path of the lz4 harness built with ``cc_kind`` (built on first use, then cached)."""
    return build_lz4(cc_kind=cc_kind, afl_env=afl_env, cflags=cflags, instrument=instrument, cc_vars=cc_vars).harness


def main(argv: list[str] | None = None) -> int:
    """Build lz4 with each given compiler kind and print the build records (timings) as JSON.

    python tests/targets/lz4.py [autotune] [plain] [afl]   (AUTOTUNE_CACHE_DIR picks the cache;
    a fresh cache directory measures fresh builds)
    python tests/targets/lz4.py --source                   (print the unpacked source tree)
    """
    kinds = (argv if argv is not None else sys.argv[1:]) or ["autotune", "plain"]
    if kinds == ["--source"]:  # the unpacked tree, for tests/targets/lz4/build.sh's LZ4_SRC
        print(lz4_source_dir())
        return 0
    records = []
    for k in kinds:
        b = build_lz4(cc_kind=k, cli=True)  # type: ignore[arg-type]
        records.append({"cc_kind": k, "library_build_s": b.library_build_s,
                        "library_build_cpu_s": b.library_build_cpu_s, "cli_build_s": b.cli_build_s,
                        "harness_build_s": b.harness_build_s, "harness": str(b.harness),
                        "load_avg_1min": round(os.getloadavg()[0], 2)})
    print(json.dumps(records, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
