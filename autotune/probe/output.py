"""The probe's output directory: guards before a campaign, and the final move into place.

The campaign works in ``<out>/.staging-<pid>``; :func:`install` moves its entries into ``<out>``
and writes ``probe.json`` last, so a failed or interrupted probe leaves a previous good output
intact, and a reader never sees a probe.json beside files of another run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from autotune.errors import AutotuneError
from autotune.probe.result import FILE_NAME

OUTPUT_ENTRIES = ("census", "traces", "corpus", "crashes", "hangs")


def dir_bytes(d: Path) -> int:
    try:
        return sum(e.stat().st_size for e in os.scandir(d) if e.is_file())
    except OSError:
        return 0


def check_out_dir(out_dir: Path, corpus_dir: Path | None) -> None:
    """Refuse to replace directories that are not a previous probe's output (e.g. the user's corpus)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise AutotuneError(f"output {out_dir} exists and is not a directory", fix="choose another --out")
    if corpus_dir is not None:
        for name in OUTPUT_ENTRIES:
            if (out_dir / name).resolve() == Path(corpus_dir).resolve():
                raise AutotuneError(f"the seed corpus {corpus_dir} is the output's {name}/ directory, which the "
                                    f"probe replaces", fix="choose another --out (or copy the seeds elsewhere)")
    if (out_dir / FILE_NAME).is_file():
        return  # a previous probe's output: its entries are replaced
    for name in OUTPUT_ENTRIES:
        d = out_dir / name
        if d.exists() and (not d.is_dir() or any(d.iterdir())):
            raise AutotuneError(f"{out_dir} already holds a {name}/ that is not from a probe (no probe.json)",
                                fix="choose an empty or new directory with --out")


def install(staging: Path, out_dir: Path) -> None:
    """Move the finished results from staging into out_dir, probe.json last."""
    old = out_dir / f".old-{os.getpid()}"
    if (out_dir / FILE_NAME).exists():
        old.mkdir(exist_ok=True)
        os.replace(out_dir / FILE_NAME, old / FILE_NAME)  # no stale probe.json beside new files
    for name in OUTPUT_ENTRIES:
        dst = out_dir / name
        if dst.exists():
            old.mkdir(exist_ok=True)
            os.replace(dst, old / name)
        src = staging / name
        if src.exists():
            os.replace(src, dst)
        else:
            dst.mkdir()
    os.replace(staging / FILE_NAME, out_dir / FILE_NAME)
    shutil.rmtree(old, ignore_errors=True)
