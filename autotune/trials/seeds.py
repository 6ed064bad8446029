"""The seeds an afl-fuzz trial starts from: the corpus's files afl-fuzz accepts, copied into one directory
every trial of a compare or a race reads."""

from __future__ import annotations

import shutil
from pathlib import Path

from autotune.errors import AutotuneError

MAX_SEED_BYTES = 1 << 20  # afl-fuzz refuses seeds over 1 MiB (MAX_FILE)


def seed_files(corpus: Path) -> list[Path]:
    return [p for p in sorted(corpus.iterdir()) if p.is_file() and 0 < p.stat().st_size <= MAX_SEED_BYTES]


def stage_seeds(*, corpus: Path, dest: Path, keep: bool = False) -> int:
    """Copy the corpus's files (non-empty, at most 1 MiB) into ``dest``; how many. With ``keep`` (a
    resumed compare) a ``dest`` already staged is kept, and must hold exactly what the corpus would give."""
    if not corpus.is_dir():
        raise AutotuneError(f"the corpus {corpus} is not a directory", fix="pass --corpus DIR with the seed inputs")
    files = seed_files(corpus)
    if not files:
        raise AutotuneError(f"the corpus {corpus} has no file of 1 byte to 1 MiB",
                            fix="put at least one seed input in it")
    if keep and dest.is_dir():
        staged = sorted(dest.iterdir())
        if [p.name for p in staged] != [p.name for p in files] or any(
                a.read_bytes() != b.read_bytes() for a, b in zip(staged, files)):
            raise AutotuneError(f"the corpus {corpus} is not the one the stopped compare staged in {dest}",
                                fix="resume with the same --corpus, or start afresh: a new --out, or drop --resume")
        return len(files)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for p in files:
        shutil.copyfile(p, dest / p.name)
    return len(files)
