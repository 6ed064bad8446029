"""What validate builds: the target's recipe, built by afl-clang-fast or by `autotune cc`.

A recipe is one of
- ``demo``: the bundled demo harness (what ``autotune probe --demo`` probed);
- ``sources``: harness source files plus compiler and linker flags (as ``autotune probe --source``);
- ``script``: a build script in OSS-Fuzz's convention, run with ``bash`` and the variables
  ``CC``, ``CXX``, ``CFLAGS``, ``CXXFLAGS``, ``LIB_FUZZING_ENGINE`` (``-fsanitize=fuzzer``),
  ``OUT`` and ``WORK``; it must leave the harness at ``$OUT/fuzzer``. That is how a library with
  its own build system (lz4's Makefile) is built by each compiler in turn.

Every build writes a *build record* beside the binary, ``<binary>.build.json``: the compiler,
the AFL_* build variables it ran under, the recipe and the binary's SHA-256. Preflight reads it
to check that a binary was built the way ``afl-build.env`` says (a binary does not carry its
afl-cc settings in a form one can read back reliably; the record plus the hash does).
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from autotune.errors import AutotuneError
from autotune.io import file_lock, read_json, write_json_atomic
from autotune.paths import cache_dir

RECORD_SUFFIX = ".build.json"
BUILD_TIMEOUT_S = 900


@dataclass(frozen=True)
class TargetSpec:
    kind: str  # demo, sources, script
    sources: tuple[str, ...] = ()
    cflags: str = "-O2 -g"
    ldflags: str = ""
    cxx: bool = False
    script: str | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "sources": list(self.sources), "cflags": self.cflags, "ldflags": self.ldflags,
                "cxx": self.cxx, "script": self.script}

    @classmethod
    def from_dict(cls, d: Mapping) -> "TargetSpec":
        return cls(kind=str(d["kind"]), sources=tuple(d.get("sources") or ()), cflags=str(d.get("cflags", "-O2 -g")),
                   ldflags=str(d.get("ldflags", "")), cxx=bool(d.get("cxx", False)), script=d.get("script"))


def demo_spec() -> TargetSpec:
    from autotune import demo

    return TargetSpec(kind="demo", sources=(str(demo.harness_source()),), cflags=" ".join(demo.DEMO_CFLAGS))


def make_spec(*, demo: bool, sources: list[Path], cflags: str, ldflags: str, cxx: bool,
              script: Path | None) -> TargetSpec | None:
    given = sum([demo, bool(sources), script is not None])
    if given > 1:
        raise AutotuneError("give one target recipe: --demo, --source files, or --build-script",
                            fix="drop the others")
    if demo:
        return demo_spec()
    if sources:
        for s in sources:
            if not s.is_file():
                raise AutotuneError(f"harness source {s} does not exist", fix="pass existing files with --source")
        return TargetSpec(kind="sources", sources=tuple(str(s.resolve()) for s in sources), cflags=cflags,
                          ldflags=ldflags, cxx=cxx)
    if script is not None:
        if not script.is_file():
            raise AutotuneError(f"build script {script} does not exist", fix="pass an existing script")
        return TargetSpec(kind="script", script=str(script.resolve()), cflags=cflags, ldflags=ldflags, cxx=cxx)
    return None


def _compilers(cc_kind: str, env: Mapping[str, str]) -> tuple[str, str]:
    if cc_kind == "afl":
        from autotune.afl import find_tool

        return find_tool("afl-clang-fast", env=env), find_tool("afl-clang-fast++", env=env)
    here = Path(sys.executable).parent
    cc = here / "autotune-cc"
    cxx = here / "autotune-c++"
    return (str(cc) if cc.is_file() else shutil.which("autotune-cc") or "autotune-cc",
            str(cxx) if cxx.is_file() else shutil.which("autotune-c++") or "autotune-c++")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build(*, spec: TargetSpec, cc_kind: str, build_vars: Mapping[str, str], env: Mapping[str, str]) -> Path:
    """Build the harness with ``cc_kind`` (afl: afl-clang-fast; autotune: autotune cc); its path.

    ``build_vars`` are the AFL_* compile-time variables (afl-build.env); ``env`` the rest. Builds
    live in autotune's cache under a digest of everything that goes into them (recipe and its
    files, compiler and its version, variables, our runtime), so validate reuses them. The build record is written beside the binary.
    """
    run_env = {**env, **build_vars, "AFL_QUIET": "1"}
    cc, cxx = _compilers(cc_kind, run_env)
    key = _build_key(spec=spec, cc_kind=cc_kind, build_vars=build_vars, compilers=(cc, cxx), env=run_env)
    cached = cache_dir() / "validate-builds" / key / "fuzzer"
    with file_lock(cached.parent / ".lock"):
        if cached.is_file() and (rec := read_record(cached)) and rec.get("sha256") == sha256_file(cached):
            return cached
        return _build(spec=spec, cc_kind=cc_kind, build_vars=build_vars, run_env=run_env, cc=cc, cxx=cxx,
                      out_dir=cached.parent)


def _build_key(*, spec: TargetSpec, cc_kind: str, build_vars: Mapping[str, str], compilers: tuple[str, str],
               env: Mapping[str, str]) -> str:
    """Digest of everything that goes into a build: recipe, its files, compiler (and version), variables."""
    h = hashlib.sha256(json.dumps([spec.to_dict(), cc_kind, sorted(build_vars.items()), compilers]).encode())
    for f in [*spec.sources, *([spec.script] if spec.script else [])]:
        h.update(Path(f).read_bytes())
    ver = subprocess.run([compilers[0], "--version"], capture_output=True, env=dict(env), timeout=60)
    h.update(ver.stdout)
    if cc_kind == "autotune":
        import autotune.cc
        from autotune.runtime import artifacts

        # the wrapper's flags, the runtime it links and the pass plugin it loads (paths carry their hashes)
        h.update(f"{artifacts.runtime_archive()}{artifacts.driver_object()}{artifacts.select_plugin()}".encode())
        h.update(Path(autotune.cc.__file__).read_bytes())
    return h.hexdigest()[:20]


def _build(*, spec: TargetSpec, cc_kind: str, build_vars: Mapping[str, str], run_env: dict, cc: str, cxx: str,
           out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    binary = out_dir / "fuzzer"
    binary.unlink(missing_ok=True)
    if spec.kind in ("demo", "sources"):
        argv = [cxx if spec.cxx else cc, *shlex.split(spec.cflags), "-fsanitize=fuzzer", *spec.sources,
                "-o", str(binary), *shlex.split(spec.ldflags)]
        cwd = out_dir
    else:
        work = out_dir / "work"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        run_env.update(CC=cc, CXX=cxx, CFLAGS=spec.cflags, CXXFLAGS=spec.cflags,
                       LIB_FUZZING_ENGINE="-fsanitize=fuzzer", OUT=str(out_dir), WORK=str(work))
        argv = ["bash", "-eu", str(spec.script)]
        cwd = work
    try:
        proc = subprocess.run(argv, cwd=cwd, env=run_env, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise AutotuneError(f"building the target with {cc_kind} took over {BUILD_TIMEOUT_S} s",
                            fix="check the build") from exc
    if proc.returncode != 0 or not binary.is_file():
        raise AutotuneError(f"building the target with {Path(cc).name} failed (exit {proc.returncode}):\n"
                            f"{' '.join(argv)}\n{(proc.stdout + proc.stderr).strip()[-3000:]}",
                            fix="fix the build errors above" + ("; the script must write $OUT/fuzzer"
                                                              if spec.kind == "script" else ""))
    write_record(binary=binary, cc_kind=cc_kind, compiler=cc, build_vars=build_vars, spec=spec, argv=argv)
    return binary


def write_record(*, binary: Path, cc_kind: str, compiler: str, build_vars: Mapping[str, str], spec: TargetSpec,
                 argv: list[str]) -> Path:
    rec = {"schema_version": 1, "binary": str(binary), "sha256": sha256_file(binary), "cc_kind": cc_kind,
           "compiler": compiler, "build_vars": dict(sorted(build_vars.items())), "recipe": spec.to_dict(),
           "argv": argv}
    return write_json_atomic(Path(str(binary) + RECORD_SUFFIX), rec)


def read_record(binary: Path) -> dict | None:
    p = Path(str(binary) + RECORD_SUFFIX)
    if not p.is_file():
        return None
    doc = read_json(p)
    return doc if isinstance(doc, dict) else None


def build_vars_of(values: Mapping[str, str]) -> dict[str, str]:
    """The compile-time subset of an env file (AFL_* variables afl-cc reads)."""
    return {k: v for k, v in values.items() if k.startswith("AFL_")}


def record_summary(rec: dict) -> str:
    return json.dumps(rec.get("build_vars", {}), sort_keys=True)
