"""Compile parts of the C runtime once per source hash into the user cache.

``build_artifact`` is the one place C code from ``kernels/`` is compiled for use by autotune:
the artefact's path encodes a hash of its sources, the headers beside them, the flags and the
compiler's identity, so a changed source builds a new artefact and an unchanged one is reused.
Two processes building the same artefact at once are serialised by an flock on a lock file, and
the artefact appears by atomic rename, never half-written. What the compiler said while building
it (its warnings) is kept beside it in ``build.log`` (:data:`BUILD_LOG`), written before the
artefact appears, so that a warning-free build can be checked on the build that was used.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Sequence

from autotune.errors import AutotuneError, ToolMissingError
from autotune.io import file_lock
from autotune.llvm import CLANG_NAMES
from autotune.paths import cache_dir, kernels_dir

Kind = Literal["shared", "object", "archive", "plugin"]

C_STD_FLAGS = ["-std=c11", "-Wall", "-Wextra", "-fPIC", "-D_GNU_SOURCE"]
# the compiler's output while building an artefact, beside it (empty: a warning-free build)
BUILD_LOG = "build.log"
# bumped when the cache's layout changes (2: build.log beside each artefact)
CACHE_FORMAT = b"2"


@dataclass(frozen=True)
class Compiler:
    path: str
    version: str


def find_compiler(preferred: Sequence[str] = (*CLANG_NAMES, "cc", "gcc")) -> Compiler:
    """The first C compiler found on PATH (clang preferred), with its version string."""
    for name in preferred:
        path = shutil.which(name)
        if path:
            try:
                ver = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
            except (OSError, subprocess.SubprocessError):
                continue
            return Compiler(path=path, version=ver.splitlines()[0] if ver else name)
    raise ToolMissingError("clang", "clang")


def _digest(sources: Sequence[Path], flags: Sequence[str], compiler: Compiler, kind: str) -> str:
    h = hashlib.sha256(CACHE_FORMAT)
    h.update(kind.encode())
    h.update(compiler.path.encode())
    h.update(compiler.version.encode())
    for f in flags:
        h.update(b"\0" + f.encode())
    # Headers can change what a source compiles to: hash every header in the source dirs.
    dirs = sorted({p.parent for p in sources})
    headers = sorted(q for d in dirs for q in d.glob("*.h"))
    for p in list(sources) + headers:
        h.update(b"\0" + p.name.encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build_artifact(
    name: str,
    sources: Sequence[str | Path],
    *,
    kind: Kind,
    flags: Sequence[str] = (),
    compiler: Compiler | None = None,
) -> Path:
    """Build (or reuse) ``name`` from ``sources`` (paths relative to kernels/ or absolute).

    kind: ``shared`` (.so for ctypes), ``object`` (one .o; exactly one source), ``archive`` (.a), or
    ``plugin`` (a C++ shared object for clang's -fpass-plugin: ``compiler`` is clang++, ``flags`` are
    all its flags, the C flags are not added).
    """
    compiler = compiler or find_compiler()
    kdir = kernels_dir()
    srcs = [Path(s) if Path(s).is_absolute() else kdir / s for s in sources]
    for s in srcs:
        if not s.is_file():
            raise AutotuneError(f"runtime source {s} is missing", fix="reinstall autotune")
    if kind == "object" and len(srcs) != 1:
        raise ValueError("an object artefact has exactly one source")
    all_flags = [*flags] if kind == "plugin" else [*C_STD_FLAGS, f"-I{kdir}", *flags]
    digest = _digest(srcs, all_flags, compiler, kind)
    suffix = {"shared": ".so", "object": ".o", "archive": ".a", "plugin": ".so"}[kind]
    out_dir = cache_dir() / "build" / f"{name}-{digest}"
    target = out_dir / f"{name}{suffix}"
    if target.is_file():
        return target
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AutotuneError(f"cannot create the build cache {out_dir}: {exc.strerror}",
                            fix="set AUTOTUNE_CACHE_DIR to a writable directory") from exc
    with file_lock(out_dir / ".lock"):
        if target.is_file():  # another process built it while we waited
            return target
        with tempfile.TemporaryDirectory(dir=out_dir, prefix=".tmp-") as tmp:
            tmp_path = Path(tmp)
            said: list[str] = []
            if kind in ("shared", "plugin"):
                tmp_target = tmp_path / target.name
                said.append(_run([compiler.path, *all_flags, "-shared", "-o", str(tmp_target), *map(str, srcs)], name))
            elif kind == "object":
                tmp_target = tmp_path / target.name
                said.append(_run([compiler.path, *all_flags, "-c", "-o", str(tmp_target), str(srcs[0])], name))
            else:
                objs = []
                for i, s in enumerate(srcs):
                    o = tmp_path / f"{i}-{s.stem}.o"
                    said.append(_run([compiler.path, *all_flags, "-c", "-o", str(o), str(s)], name))
                    objs.append(str(o))
                tmp_target = tmp_path / target.name
                ar = shutil.which("ar") or shutil.which("llvm-ar")
                if not ar:
                    raise ToolMissingError("ar", "binutils")
                said.append(_run([ar, "rcs", str(tmp_target), *objs], name))
            (tmp_path / BUILD_LOG).write_text("".join(said))
            os.replace(tmp_path / BUILD_LOG, out_dir / BUILD_LOG)
            os.replace(tmp_target, target)
    return target


def _run(cmd: list[str], name: str) -> str:
    """Run one step of a build; what it printed on stderr (its warnings), or an error naming it."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except FileNotFoundError as exc:
        raise ToolMissingError(cmd[0], "clang") from exc
    if proc.returncode != 0:
        raise AutotuneError(
            f"building the runtime part '{name}' failed:\n{' '.join(cmd)}\n{proc.stderr.strip()}",
            fix="check that clang is installed and working (apt-get install -y clang)",
        )
    return proc.stderr
