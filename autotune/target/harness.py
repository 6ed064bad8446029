"""The instrumented harness a probe runs, and the in-process wrapper build tests use.

- ``probe_harness``: a given binary (checked for autotune's probe server), or the recipe built
  with `autotune cc` (the ``full`` build kind: every metric and the census);
- ``demo_harness``: the bundled demo built so (``autotune probe --demo``);
- ``build_harness``: compile and link sources with the wrapper's flags in this process, into a
  path the caller names (no cache, no record): the tests' programs.
"""

from __future__ import annotations

import mmap
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from autotune.afl import base_env
from autotune.cc import KIND_VAR, plan
from autotune.errors import AutotuneError
from autotune.target.build import build
from autotune.target.recipe import TargetSpec, demo_spec


def has_probe_server(binary: Path) -> bool:
    """Whether ``binary`` contains autotune's driver (it names the probe's variables)."""
    try:
        with open(binary, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return mm.find(b"AUTOTUNE_PROBE_CTL_FD") >= 0
    except (OSError, ValueError):
        return False


def probe_harness(*, harness: Path | None, spec: TargetSpec | None, env: Mapping[str, str] | None = None) -> Path:
    """The binary to probe: ``harness`` as given, or ``spec`` built by `autotune cc` (cached)."""
    if (harness is None) == (spec is None):
        raise AutotuneError("give exactly one target: a harness binary, --source files, --build-script or --demo",
                            fix="e.g. `autotune probe ./fuzz_target -c corpus/` or `autotune probe --demo`")
    if spec is not None:
        return build(spec=spec, cc_kind="autotune", build_vars={}, env=base_env(env))
    assert harness is not None
    if not harness.is_file():
        raise AutotuneError(f"harness {harness} does not exist", fix="pass the path of the built harness binary")
    if not has_probe_server(harness):
        raise AutotuneError(f"{harness} has no autotune probe server (not built with autotune's driver)",
                            fix="link it with `autotune cc -fsanitize=fuzzer ...`, or pass its sources with --source")
    return harness


def demo_harness(*, cc_kind: str = "autotune") -> Path:
    """The bundled demo harness built with ``cc_kind`` (autotune: the full build kind; plain:
    no instrumentation, the same driver and runtime), cached."""
    return build(spec=demo_spec(), cc_kind=cc_kind, build_vars={}, env=base_env())


def build_harness(
    *,
    sources: Sequence[Path],
    output: Path,
    extra_cflags: Sequence[str] = (),
    extra_ldflags: Sequence[str] = (),
    cxx: bool = False,
    kind: str | None = None,
    cc_vars: Mapping[str, str] | None = None,
) -> Path:
    """Compile and link an ``LLVMFuzzerTestOneInput`` harness with the runtime and the driver.

    ``kind``: the build kind (``autotune.cc.KINDS``); None: ``AUTOTUNE_CC_INSTRUMENT`` or full.
    ``cc_vars``: other compile-time variables of the wrapper (``AUTOTUNE_CC_NGRAM``, ``AUTOTUNE_CC_SELECTS``).
    The binary appears at ``output`` only when the build succeeded (atomic rename).
    Raises AutotuneError carrying the compiler's message when it fails.
    """
    output = Path(output)
    for s in sources:
        if not Path(s).is_file():
            raise AutotuneError(f"harness source {s} does not exist", fix="pass an existing source file")
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    args = [*extra_cflags, "-fsanitize=fuzzer", *map(str, sources), "-o", str(tmp), *extra_ldflags]
    try:
        env = {**os.environ, **({} if kind is None else {KIND_VAR: kind}), **(cc_vars or {})}
        argv, cc_env = plan(args, cxx=cxx, env=env)
        try:  # the compiler gets the wrapper's environment: the pass plugins read the kind, N and stage from it
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=cc_env)
        except subprocess.TimeoutExpired as exc:
            raise AutotuneError(f"building the harness {output} took over 600 s",
                                fix="check the sources and flags") from exc
        if proc.returncode != 0:
            raise AutotuneError(
                f"building the harness {output} failed (exit {proc.returncode}):\n"
                f"{' '.join(argv)}\n{proc.stderr.strip()}",
                fix="fix the errors the compiler reports above",
            )
        os.replace(tmp, output)
    finally:
        tmp.unlink(missing_ok=True)
    return output
