"""Which harness binary and corpus a probe runs: a given binary, sources to build, or the demo."""

from __future__ import annotations

import hashlib
import shlex
from pathlib import Path

from autotune.errors import AutotuneError


def _build_from_sources(sources: list[Path], cflags: str, ldflags: str, cxx: bool) -> Path:
    from autotune.cc import build_harness
    from autotune.paths import cache_dir
    from autotune.runtime import artifacts

    h = hashlib.sha256()
    for s in sources:
        if not s.is_file():
            raise AutotuneError(f"harness source {s} does not exist", fix="pass existing files with --source")
        h.update(str(s.resolve()).encode() + b"\0" + s.read_bytes())
    h.update(f"\0{cflags}\0{ldflags}\0{cxx}".encode())
    # the runtime's artefact paths carry its source hash: a changed runtime builds a new harness
    h.update(f"\0{artifacts.runtime_archive()}\0{artifacts.driver_object()}".encode())
    out_path = cache_dir() / "probe-harness" / h.hexdigest()[:16] / "harness"
    if out_path.is_file():
        return out_path
    return build_harness(sources=sources, output=out_path, extra_cflags=shlex.split(cflags),
                         extra_ldflags=shlex.split(ldflags), cxx=cxx)


def resolve_target(*, harness: Path | None, sources: list[Path], cflags: str, ldflags: str, cxx: bool,
                   demo: bool, corpus: Path | None) -> tuple[Path, Path | None]:
    """(harness binary, seed corpus) from the command's options."""
    from autotune.probe.client import has_probe_server

    given = sum([harness is not None, bool(sources), demo])
    if given != 1:
        raise AutotuneError("give exactly one target: a harness binary, --source files, or --demo",
                            fix="e.g. `autotune probe ./fuzz_target -c corpus/` or `autotune probe --demo`")
    if demo:
        from autotune import demo as demo_pkg

        return demo_pkg.build_demo(), corpus if corpus is not None else demo_pkg.seed_dir()
    if sources:
        return _build_from_sources(sources, cflags, ldflags, cxx), corpus
    assert harness is not None
    if not harness.is_file():
        raise AutotuneError(f"harness {harness} does not exist", fix="pass the path of the built harness binary")
    if not has_probe_server(harness):
        raise AutotuneError(f"{harness} has no autotune probe server (not built with autotune's driver)",
                            fix="link it with `autotune cc -fsanitize=fuzzer ...`, or pass its sources with --source")
    return harness, corpus
