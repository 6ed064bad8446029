"""Build a recipe with one compiler kind, cached, with a build record beside the binary.

Compiler kinds (``CC_KINDS``):
- ``autotune``: `autotune cc` / `autotune c++` (our runtime and driver; the build kind comes from
  ``AUTOTUNE_CC_INSTRUMENT`` in ``build_vars``, default full);
- ``afl``: AFL++'s afl-clang-fast / afl-clang-fast++ under the AFL_* ``build_vars`` (none: AFL++'s
  default, PCGUARD); ``-fsanitize=fuzzer`` links libAFLDriver;
- ``plain``: clang without coverage instrumentation, linked with our driver and runtime as the
  wrapper links them: the same program without its instrumentation, the baseline of throughput
  comparisons (it runs under the probe server too, with an empty census).

Builds live in the cache, ``<cache>/builds/<digest>/``, the digest taken over everything that goes
into them (recipe and its files, compiler kind, compilers and their version, build variables; for
``autotune`` the wrapper's source and the runtime, driver and pass plugins it uses, whose paths
carry their source hashes; for ``plain`` the runtime and driver), so every stage and test that
asks for the same build gets the one binary. A lock file makes concurrent builders wait.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Sequence

import autotune.cc
from autotune.afl import find_tool
from autotune.cc import LINK_LIBS
from autotune.errors import AutotuneError
from autotune.io import file_lock
from autotune.llvm import find_toolchain
from autotune.paths import CANARY_INCLUDE_VAR, cache_dir, kernels_dir
from autotune.runtime import artifacts
from autotune.target.record import read_record, sha256_file, write_record
from autotune.target.recipe import TargetSpec

CC_KINDS = ("autotune", "afl", "plain")
BUILD_TIMEOUT_S = 900
CACHE_SUBDIR = "builds"
FUZZING_ENGINE = "-fsanitize=fuzzer"  # LIB_FUZZING_ENGINE of the autotune and afl kinds


def binary_name(spec: TargetSpec) -> str:
    """The built binary's file name: a script writes $OUT/fuzzer; the demo keeps its own name."""
    return "demo-harness" if spec.kind == "demo" else "fuzzer"


def build(*, spec: TargetSpec, cc_kind: str, build_vars: Mapping[str, str], env: Mapping[str, str]) -> Path:
    """Build the harness of ``spec`` with ``cc_kind``; its path (reused when built before).

    ``build_vars`` are the compile-time variables (AFL_* for afl, AUTOTUNE_CC_INSTRUMENT for
    autotune); ``env`` the rest (usually ``autotune.afl.base_env()``). The build record is written
    beside the binary.
    """
    if cc_kind not in CC_KINDS:
        raise AutotuneError(f"unknown compiler kind {cc_kind!r}", fix=f"use one of {', '.join(CC_KINDS)}")
    run_env = {**env, **build_vars, "AFL_QUIET": "1"}
    if not run_env.get(CANARY_INCLUDE_VAR):  # where a build script finds canary.h (docs/BUGS.md)
        run_env[CANARY_INCLUDE_VAR] = str(kernels_dir())
    cc, cxx = _compilers(cc_kind, run_env)
    engine = _engine(cc_kind)
    key = _build_key(spec=spec, cc_kind=cc_kind, build_vars=build_vars, compilers=(cc, cxx), engine=engine,
                     env=run_env)
    cached = cache_dir() / CACHE_SUBDIR / key / binary_name(spec)
    with file_lock(cached.parent / ".lock"):
        if cached.is_file() and (rec := read_record(cached)) and rec.get("sha256") == sha256_file(cached):
            return cached
        return _build(spec=spec, cc_kind=cc_kind, build_vars=build_vars, run_env=run_env, cc=cc, cxx=cxx,
                      engine=engine, binary=cached)


def _compilers(cc_kind: str, env: Mapping[str, str]) -> tuple[str, str]:
    if cc_kind == "afl":
        return find_tool("afl-clang-fast", env=env), find_tool("afl-clang-fast++", env=env)
    if cc_kind == "plain":
        return find_toolchain(cxx=False, env=env).path, find_toolchain(cxx=True, env=env).path
    here = Path(sys.executable).parent
    cc = here / "autotune-cc"
    cxx = here / "autotune-c++"
    return (str(cc) if cc.is_file() else shutil.which("autotune-cc") or "autotune-cc",
            str(cxx) if cxx.is_file() else shutil.which("autotune-c++") or "autotune-c++")


def _engine(cc_kind: str) -> tuple[str, ...]:
    """What links the harness's main(): -fsanitize=fuzzer (our driver through the wrapper, or
    libAFLDriver), or for plain our driver and runtime, linked as the wrapper links them."""
    if cc_kind != "plain":
        return (FUZZING_ENGINE,)
    return (str(artifacts.driver_object()), "-Wl,--whole-archive", str(artifacts.runtime_archive()),
            "-Wl,--no-whole-archive", *LINK_LIBS)


def _build_key(*, spec: TargetSpec, cc_kind: str, build_vars: Mapping[str, str], compilers: tuple[str, str],
               engine: tuple[str, ...], env: Mapping[str, str]) -> str:
    """Digest of everything that goes into a build: recipe, its files, compiler (and version), variables."""
    h = hashlib.sha256(json.dumps([spec.to_dict(), cc_kind, sorted(build_vars.items()), compilers,
                                   engine]).encode())
    for f in spec.files():
        h.update(f.read_bytes())
    canary = Path(env.get(CANARY_INCLUDE_VAR, "")) / "canary.h"
    if env.get(CANARY_INCLUDE_VAR) and canary.is_file():  # the header a build script's canaries compile against
        h.update(canary.read_bytes())
    ver = subprocess.run([compilers[0], "--version"], capture_output=True, env=dict(env), timeout=60)
    h.update(ver.stdout)
    if cc_kind == "autotune":
        # the wrapper's flags, the runtime it links and the pass plugins it loads (paths carry their hashes)
        h.update(f"{artifacts.runtime_archive()}{artifacts.driver_object()}{artifacts.select_plugin()}".encode())
        kind = autotune.cc.build_kind(env)
        if kind in autotune.cc.KIND_PLUGINS:  # the build kind's own pass plugin
            h.update(str(artifacts.pass_plugin(autotune.cc.KIND_PLUGINS[kind])).encode())
        h.update(Path(autotune.cc.__file__).read_bytes())
    return h.hexdigest()[:20]


def recipe_command(*, spec: TargetSpec, cc: str, cxx: str, cflags: str, engine: Sequence[str], binary: Path,
                   run_env: dict) -> tuple[list[str], Path]:
    """The command that builds ``spec`` into ``binary`` with these compilers, flags and fuzzing engine
    (argv, cwd): the compiler on the sources, or the build script in OSS-Fuzz's convention (``run_env``
    gains CC, CXX, CFLAGS, CXXFLAGS, LIB_FUZZING_ENGINE, OUT and WORK; WORK is made afresh; it has
    AUTOTUNE_CANARY_INCLUDE, the directory of canary.h, from :func:`build`)."""
    out_dir = binary.parent
    if spec.kind in ("demo", "sources"):
        return ([cxx if spec.cxx else cc, *shlex.split(cflags), *spec.sources, *engine, "-o", str(binary),
                 *shlex.split(spec.ldflags)], out_dir)
    work = out_dir / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    run_env.update(CC=cc, CXX=cxx, CFLAGS=cflags, CXXFLAGS=cflags, LIB_FUZZING_ENGINE=shlex.join(engine),
                   OUT=str(out_dir), WORK=str(work))
    return ["bash", "-eu", str(spec.script)], work


def _build(*, spec: TargetSpec, cc_kind: str, build_vars: Mapping[str, str], run_env: dict, cc: str, cxx: str,
           engine: tuple[str, ...], binary: Path) -> Path:
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.unlink(missing_ok=True)
    argv, cwd = recipe_command(spec=spec, cc=cc, cxx=cxx, cflags=spec.cflags, engine=engine, binary=binary,
                               run_env=run_env)
    try:
        proc = subprocess.run(argv, cwd=cwd, env=run_env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise AutotuneError(f"building the target with {cc_kind} took over {BUILD_TIMEOUT_S} s",
                            fix="check the build") from exc
    if proc.returncode != 0 or not binary.is_file():
        said = (proc.stdout + proc.stderr).strip()[-3000:]
        if not said and spec.kind == "script":  # a script that sends its tools' output to files
            said = f"(the script printed nothing; its work directory, WORK={cwd}, holds what it wrote)"
        raise AutotuneError(f"building the target with {Path(cc).name} failed (exit {proc.returncode}):\n"
                            f"{' '.join(argv)}\n{said}",
                            fix="fix the build errors above" + ("; the script must write $OUT/fuzzer"
                                                              if spec.kind == "script" else ""))
    write_record(binary=binary, cc_kind=cc_kind, compiler=cc, build_vars=build_vars, spec=spec, argv=argv)
    return binary
