"""The llvm-cov yardstick's binary: the compared target's recipe (demo, harness sources, or the
OSS-Fuzz style build script, :class:`~autotune.target.TargetSpec`) built by plain clang
with source-based coverage, as FuzzBench's coverage builds are:

- ``CFLAGS``/``CXXFLAGS`` = the recipe's flags + ``-fprofile-instr-generate -fcoverage-mapping``
  + ``-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION=1`` (every fuzzing build defines it: afl-clang-fast
  and `autotune cc` add it, and targets such as lz4 skip checksum checks under it, so without it
  the coverage build would be another program than the fuzzed one);
- ``LIB_FUZZING_ENGINE`` = our replay main (replay_main.c, compiled without instrumentation) and
  ``-fprofile-instr-generate`` (so the profile runtime is linked even by a script that links
  without $CFLAGS). No AFL++ and no autotune runtime is in the binary.

Source-based coverage counts regions of the source (the mapping is made before optimisation), so
what it reports does not depend on any fuzzer's instrumentation: a measure no contestant's own
feedback map is. Builds are cached in ``<cache>/llvmcov-builds/<digest>/`` (digest over the
recipe and its files, the compilers and their version, the flags and the replay main's source),
with the build record beside the binary (``cc_kind`` ``llvm-cov``).
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
from pathlib import Path
from typing import Mapping

from autotune.errors import AutotuneError
from autotune.io import file_lock
from autotune.paths import cache_dir
from autotune.target import TargetSpec, read_record, sha256_file
from autotune.target.build import recipe_command
from autotune.target.record import write_record
from autotune.trials.llvmcov.tools import LlvmTools

CC_KIND = "llvm-cov"
CACHE_SUBDIR = "llvmcov-builds"
COVERAGE_FLAGS = ("-fprofile-instr-generate", "-fcoverage-mapping", "-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION=1")
MAIN_FLAGS = ("-O2", "-std=c11", "-Wall", "-Wextra")
BUILD_TIMEOUT_S = 900
REPLAY_MAIN = Path(__file__).resolve().parent / "replay_main.c"


def coverage_cflags(spec: TargetSpec) -> str:
    return " ".join([spec.cflags, *COVERAGE_FLAGS]).strip()


def build_coverage(*, spec: TargetSpec, tools: LlvmTools, env: Mapping[str, str]) -> Path:
    """The coverage build of ``spec`` (reused when built before); its path."""
    key = _build_key(spec=spec, tools=tools, env=env)
    binary = cache_dir() / CACHE_SUBDIR / key / "fuzzer"
    with file_lock(binary.parent / ".lock"):
        if binary.is_file() and (rec := read_record(binary)) and rec.get("sha256") == sha256_file(binary):
            return binary
        return _build(spec=spec, tools=tools, env=env, binary=binary)


def _build_key(*, spec: TargetSpec, tools: LlvmTools, env: Mapping[str, str]) -> str:
    h = hashlib.sha256(json.dumps([spec.to_dict(), CC_KIND, COVERAGE_FLAGS, MAIN_FLAGS, tools.clang,
                                   tools.clangxx]).encode())
    for f in [*spec.sources, *([spec.script] if spec.script else [])]:
        h.update(Path(f).read_bytes())
    h.update(REPLAY_MAIN.read_bytes())
    ver = subprocess.run([tools.clang, "--version"], capture_output=True, env=dict(env), timeout=60)
    h.update(ver.stdout)
    return h.hexdigest()[:20]


def _run(argv: list[str], *, cwd: Path, env: Mapping[str, str], what: str) -> None:
    try:
        proc = subprocess.run(argv, cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise AutotuneError(f"{what} took over {BUILD_TIMEOUT_S} s", fix="check the build") from exc
    if proc.returncode != 0:
        raise AutotuneError(f"{what} failed (exit {proc.returncode}):\n{shlex.join(argv)}\n"
                            f"{(proc.stdout + proc.stderr).strip()[-3000:]}", fix="fix the build errors above")


def _build(*, spec: TargetSpec, tools: LlvmTools, env: Mapping[str, str], binary: Path) -> Path:
    out_dir = binary.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    binary.unlink(missing_ok=True)
    main_obj = out_dir / "replay_main.o"
    _run([tools.clang, *MAIN_FLAGS, "-c", str(REPLAY_MAIN), "-o", str(main_obj)], cwd=out_dir, env=env,
         what="compiling the llvm-cov replay main")
    engine = [str(main_obj), "-fprofile-instr-generate"]
    cflags = coverage_cflags(spec)
    run_env = {k: v for k, v in env.items() if not k.startswith("AFL_")}
    argv, cwd = recipe_command(spec=spec, cc=tools.clang, cxx=tools.clangxx, cflags=cflags, engine=engine,
                               binary=binary, run_env=run_env)
    _run(argv, cwd=cwd, env=run_env, what=f"the coverage build of the target with {Path(tools.clang).name}")
    if not binary.is_file():
        raise AutotuneError(f"the coverage build wrote no {binary}",
                            fix="the build script must write $OUT/fuzzer" if spec.kind == "script" else
                            "check the build")
    write_record(binary=binary, cc_kind=CC_KIND, compiler=tools.clang, build_vars={}, spec=spec, argv=argv)
    return binary
