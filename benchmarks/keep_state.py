#!/usr/bin/env python3
"""Keep a long study's resumable state across machines: the small documents a stopped `autotune
compare` / `autotune run` / benchmark needs to resume (`--resume`), packed into one archive that can be
committed, and unpacked into the same output directory on a fresh machine.

A session may end on a machine that does not survive it. A compare resumes from each finished
trial's ``trial.json`` (autotune.compare.compare.finished_trial checks that the trial was run as the
resumed compare asks: binary, variables, seeds, seconds, seed); a recommend_compare job resumes from
its finished run's ``run/race/race.json`` and ``autotune-run.env``; sensitive_metrics.py from its
``sensitive_metrics.json``. Those documents are kilobytes;
the campaigns' queues (afl-out/) are not, and are not needed to resume. So the archive holds:

- every file named in KEEP_NAMES, every ``*.env`` and ``*.md``, wherever it is under OUT;
- the ``seeds/`` directories (the corpus as afl-fuzz got it), and sensitive_metrics.py's census inputs
  (``collisions/union/``: a cell whose trials finished runs its census from them on another machine);
- nothing under a directory named in SKIP_DIRS (afl-fuzz's output, builds), nothing over
  MAX_FILE_BYTES.

  .venv/bin/python benchmarks/keep_state.py pack /work/runs/rc502c benchmarks/results/state/rc502c.tar.gz
  .venv/bin/python benchmarks/keep_state.py unpack benchmarks/results/state/rc502c.tar.gz /work/runs/rc502c
  .venv/bin/python benchmarks/keep_state.py list benchmarks/results/state/rc502c.tar.gz

The archive is reproducible (sorted members, mtime 0, no owners), paths are relative to OUT, and
unpack refuses members that would land outside OUT and files that exist with other content.
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys
import tarfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

KEEP_NAMES = frozenset({"trial.json", "compare.json", "race.json", "summary.json", "report.json",
                        "run.json", "tune.json", "probe.json", "census.json", "result.json",
                        "sensitive_metrics.json"})  # benchmarks/sensitive_metrics.py --resume
KEEP_SUFFIXES = (".env", ".md")
SKIP_DIRS = frozenset({"afl-out", "build", "builds", "queue", "crashes", "hangs", ".state"})
MAX_FILE_BYTES = 4 << 20


class StateError(Exception):
    """A bad argument or archive, said with what to do."""


def wanted(rel: PurePosixPath) -> bool:
    """Whether the file at ``rel`` (relative to OUT) belongs in the archive."""
    if any(part in SKIP_DIRS for part in rel.parts[:-1]):
        return False
    return (rel.name in KEEP_NAMES or rel.name.endswith(KEEP_SUFFIXES) or "seeds" in rel.parts[:-1]
            or rel.parts[-3:-1] == ("collisions", "union"))  # sensitive_metrics.py's census inputs


def state_files(out: Path) -> list[tuple[str, Path]]:
    """(archive name, path) of the files to keep under ``out``, sorted by name."""
    found = []
    for p in out.rglob("*"):
        if p.is_symlink() or not p.is_file():
            continue
        rel = PurePosixPath(p.relative_to(out).as_posix())
        if wanted(rel) and p.stat().st_size <= MAX_FILE_BYTES:
            found.append((str(rel), p))
    return sorted(found)


def pack(out: Path, archive: Path) -> int:
    """Write the archive of ``out``'s state (atomically); the number of files in it."""
    from autotune.io import write_bytes_atomic

    if not out.is_dir():
        raise StateError(f"{out} is not a directory: give the output directory of the stopped job")
    files = state_files(out)
    if not files:
        raise StateError(f"{out} holds nothing to keep (no trial.json, race.json, summary.json, ...): "
                         "is it the job's --out?")
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, path in files:
            data = path.read_bytes()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    archive.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(archive, gzip.compress(raw.getvalue(), compresslevel=9, mtime=0))
    return len(files)


def members(archive: Path) -> list[tuple[str, bytes]]:
    """(relative name, content) of every file in ``archive``, checked to stay inside the output."""
    if not archive.is_file():
        raise StateError(f"{archive} does not exist: give an archive that `keep_state.py pack` wrote")
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            got = []
            for m in tar.getmembers():
                rel = PurePosixPath(m.name)
                if not m.isfile() or rel.is_absolute() or ".." in rel.parts:
                    raise StateError(f"{archive}: member {m.name!r} is not a relative file path; "
                                     "it was not written by `keep_state.py pack`")
                f = tar.extractfile(m)
                got.append((m.name, f.read() if f else b""))
            return got
    except (tarfile.TarError, OSError, EOFError) as e:
        raise StateError(f"{archive} cannot be read as a gzip'd tar ({e})") from e


def unpack(archive: Path, out: Path, *, force: bool = False) -> tuple[int, int]:
    """Write the archive's files under ``out``; (written, already there with the same content). A file
    there with other content is an error unless ``force`` (then it is replaced)."""
    from autotune.io import write_bytes_atomic

    got = members(archive)
    clash = [n for n, data in got if (out / n).is_file() and (out / n).read_bytes() != data]
    if clash and not force:
        raise StateError(f"{len(clash)} file(s) under {out} differ from the archive's (first: {clash[0]}): "
                         "unpack into a fresh directory, or pass --force to replace them")
    written = same = 0
    for name, data in got:
        dest = out / name
        if dest.is_file() and dest.read_bytes() == data:
            same += 1
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(dest, data)
        written += 1
    return written, same


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack", help="archive OUT's resumable state")
    p.add_argument("out", type=Path)
    p.add_argument("archive", type=Path)
    u = sub.add_parser("unpack", help="write an archive's files under OUT")
    u.add_argument("archive", type=Path)
    u.add_argument("out", type=Path)
    u.add_argument("--force", action="store_true", help="replace files that differ from the archive's")
    ls = sub.add_parser("list", help="the archive's files")
    ls.add_argument("archive", type=Path)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "pack":
            n = pack(args.out, args.archive)
            print(f"{args.archive}: {n} files of {args.out}")
        elif args.cmd == "unpack":
            written, same = unpack(args.archive, args.out, force=args.force)
            print(f"{args.out}: {written} files written, {same} already there")
        else:
            for name, data in members(args.archive):
                print(f"{len(data):>9}  {name}")
    except StateError as e:
        print(f"keep_state: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
