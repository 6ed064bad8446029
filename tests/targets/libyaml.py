"""libyaml as a real third-party target with many small functions (benchmarks of the build kinds).

The source comes from Debian's source package (``apt-get source libyaml``; .ci/setup.sh adds the
deb-src entry), unpacked once into the autotune cache. The library is built by its own CMake
build (``libyaml.a``) with ``autotune-cc`` (any ``AUTOTUNE_CC_INSTRUMENT``) or ``afl-clang-fast``
(the caller's AFL_* build variables), and linked with our harness (libyaml/libyaml_harness.c)
through ``-fsanitize=fuzzer``. Builds are cached by a digest of what goes into them, as lz4's
(tests/targets/lz4.py, whose helpers this module reuses).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Mapping

from autotune.io import file_lock
from tests.targets.lz4 import TargetUnavailable, _run, _tool, targets_dir

PACKAGE = "libyaml"
HARNESS_SOURCE = Path(__file__).resolve().parent / "libyaml" / "libyaml_harness.c"
DEFAULT_CFLAGS = "-O2 -g"


def libyaml_source_dir() -> Path:
    """The unpacked upstream libyaml tree, fetched once per cache dir (TargetUnavailable if not)."""
    base = targets_dir() / PACKAGE
    marker = base / "src.json"
    with file_lock(base / "src.lock"):
        if marker.is_file():
            src = Path(json.loads(marker.read_text())["source_dir"])
            if (src / "include" / "yaml.h").is_file():
                return src
        apt = shutil.which("apt-get")
        if apt is None:
            raise TargetUnavailable("apt-get is not available on this machine")
        dl = base / "src"
        shutil.rmtree(dl, ignore_errors=True)
        dl.mkdir(parents=True)
        proc = subprocess.run([apt, "source", "-qq", PACKAGE], cwd=dl, capture_output=True, text=True, timeout=300)
        trees = sorted(p.parent.parent for p in dl.glob("libyaml-*/include/yaml.h"))
        if proc.returncode != 0 or not trees:
            raise TargetUnavailable(f"apt-get source {PACKAGE} failed (exit {proc.returncode}): "
                                    f"{proc.stderr.strip()[-500:]} (needs a deb-src entry and dpkg-dev)")
        marker.write_text(json.dumps({"source_dir": str(trees[-1])}))
        return trees[-1]


def libyaml_sample_inputs() -> list[Path]:
    """The YAML files libyaml's tree ships (examples/, regression-inputs/)."""
    src = libyaml_source_dir()
    files = sorted((src / "examples").glob("*.yaml")) + sorted((src / "regression-inputs").glob("*"))
    return [p for p in files if p.is_file()]


def build_libyaml_harness(*, cc_kind: str = "autotune", afl_env: Mapping[str, str] | None = None,
                          instrument: str = "full", cflags: str = DEFAULT_CFLAGS) -> Path:
    """The harness linked with libyaml.a built by its CMake build with ``cc_kind`` (autotune: the
    wrapper with ``AUTOTUNE_CC_INSTRUMENT=instrument``; afl: afl-clang-fast with ``afl_env``)."""
    import hashlib

    src = libyaml_source_dir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AFL_", "AUTOTUNE_CC_INSTRUMENT"))
           and k not in ("MAKEFLAGS", "MFLAGS", "CFLAGS", "CC")}
    ident = [cc_kind, cflags, str(src), HARNESS_SOURCE.read_text()]
    if cc_kind == "autotune":
        import autotune.cc
        from autotune.runtime import artifacts

        cc = _tool("autotune-cc")
        env["AUTOTUNE_CC_INSTRUMENT"] = instrument
        ident += [instrument, Path(autotune.cc.__file__).read_text(), str(artifacts.runtime_archive()),
                  str(artifacts.driver_object())]
    elif cc_kind == "afl":
        cc = shutil.which("afl-clang-fast") or "afl-clang-fast"
        env.update(afl_env or {})
        env.setdefault("AFL_QUIET", "1")
        ident += [json.dumps(sorted((afl_env or {}).items())),
                  subprocess.run([cc, "--version"], capture_output=True, text=True, env=env).stdout]
    else:
        raise ValueError(f"cc_kind must be autotune or afl, not {cc_kind!r}")
    key = hashlib.sha256("\0".join(ident).encode()).hexdigest()[:16]
    root = targets_dir() / PACKAGE / f"build-{cc_kind}-{key}"
    harness = root / "libyaml_harness"
    with file_lock(root.with_name(root.name + ".lock")):
        if harness.is_file():
            return harness
        shutil.rmtree(root, ignore_errors=True)
        build = root / "build"
        build.mkdir(parents=True)
        _run(["cmake", "-S", str(src), "-B", str(build), f"-DCMAKE_C_COMPILER={cc}", "-DCMAKE_BUILD_TYPE=None",
              f"-DCMAKE_C_FLAGS={cflags}", "-DBUILD_SHARED_LIBS=OFF", "-DBUILD_TESTING=OFF"], cwd=root, env=env)
        _run(["cmake", "--build", str(build), "--target", "yaml", "-j", "2"], cwd=root, env=env)
        lib = build / "libyaml.a"
        _run([cc, *cflags.split(), "-fsanitize=fuzzer", "-I", str(src / "include"), "-I", str(build / "include"),
              str(HARNESS_SOURCE), str(lib), "-o", str(harness) + ".tmp"], cwd=root, env=env)
        os.replace(str(harness) + ".tmp", harness)
        return harness
