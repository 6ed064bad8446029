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


def build_demo(*, cflags: tuple[str, ...] = DEMO_CFLAGS) -> Path:
    """Build (or reuse) the demo harness with `autotune cc -fsanitize=fuzzer`; its path.

    The binary lives in the cache under a digest of the source, the flags and the runtime and
    driver artefacts (whose paths carry their own source digests).
    """
    from autotune.cc import build_harness
    from autotune.paths import cache_dir
    from autotune.runtime import artifacts

    runtime = artifacts.runtime_archive()
    driver = artifacts.driver_object()
    h = hashlib.sha256(harness_source().read_bytes())
    for part in (*cflags, str(runtime), str(driver)):
        h.update(b"\0" + part.encode())
    out = cache_dir() / "demo" / h.hexdigest()[:16] / "demo-harness"
    if out.is_file():
        return out
    return build_harness(sources=[harness_source()], output=out, extra_cflags=cflags)
