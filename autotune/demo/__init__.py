"""autotune's bundled demo target: an "ATLV" chunked-format parser (harness.c), its seed corpus
(seeds/) and its documented crashing and hanging inputs (inputs/), all package data.

``autotune probe --demo`` builds the harness with the compiler wrapper (once per source and
runtime digest, into the cache) and probes it with ``seed_dir()``. The bugs are documented at
the top of harness.c and in :func:`autotune.demo.inputs.bad_inputs`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
HARNESS_NAME = "harness.c"
DEMO_CFLAGS: tuple[str, ...] = ("-O2", "-g")


def harness_source() -> Path:
    return HERE / HARNESS_NAME


def seed_dir() -> Path:
    """The demo's seed corpus (valid inputs exercising every chunk type)."""
    return HERE / "seeds"


def bad_inputs_dir() -> Path:
    """Inputs that crash (crash-*) or hang (hang-*) the demo target."""
    return HERE / "inputs"


def build_demo(*, cflags: tuple[str, ...] = DEMO_CFLAGS, instrument: bool = True) -> Path:
    """Build (or reuse) the demo harness with `autotune cc -fsanitize=fuzzer`; its path.

    ``instrument=False`` builds the same harness with plain clang (no coverage instrumentation)
    linked with the same driver and runtime: the baseline for throughput comparisons (it runs
    under the probe server too, with an empty census).

    The binary lives in the cache under a digest of the source, the flags and the runtime and
    driver artefacts (whose paths carry their own source digests).
    """
    from autotune.cc import build_harness
    from autotune.paths import cache_dir
    from autotune.runtime import artifacts

    runtime = artifacts.runtime_archive()
    driver = artifacts.driver_object()
    h = hashlib.sha256(harness_source().read_bytes())
    for part in (*cflags, str(runtime), str(driver), "instrumented" if instrument else "plain"):
        h.update(b"\0" + part.encode())
    out = cache_dir() / "demo" / h.hexdigest()[:16] / ("demo-harness" if instrument else "demo-harness-plain")
    if out.is_file():
        return out
    if instrument:
        return build_harness(sources=[harness_source()], output=out, extra_cflags=cflags)
    return _build_plain(out=out, cflags=cflags, runtime=runtime, driver=driver)


def _build_plain(*, out: Path, cflags: tuple[str, ...], runtime: Path, driver: Path) -> Path:
    import os
    import subprocess
    import tempfile

    from autotune.cc import LINK_LIBS, find_toolchain
    from autotune.errors import AutotuneError

    tc = find_toolchain(cxx=False, env=os.environ)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    os.close(fd)
    argv = [tc.path, *cflags, str(harness_source()), str(driver), "-Wl,--whole-archive", str(runtime),
            "-Wl,--no-whole-archive", *LINK_LIBS, "-o", tmp]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise AutotuneError(f"building the plain demo harness failed:\n{' '.join(argv)}\n{proc.stderr.strip()}",
                                fix="check that clang is installed (apt-get install -y clang)")
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return out
