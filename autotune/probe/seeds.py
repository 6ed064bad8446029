"""Reading the seed corpus, bounded.

- A missing path, or a path that is not a directory, is an error.
- Files are read in sorted order (reproducible), hidden files and sub-directories are skipped.
- Files larger than ``max_input_bytes`` are skipped and counted (AFL++ refuses them too).
- At most ``max_files`` files are read and at most ``max_total_bytes`` in all; the rest are
  counted, with a note.
- An empty corpus (no usable file) starts the campaign from a single empty input, with a note:
  the mutator builds inputs from it, as ``afl-fuzz`` cannot but libFuzzer does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from autotune.errors import AutotuneError

MAX_SEED_FILES = 10_000
MAX_TOTAL_BYTES = 256 << 20


@dataclass
class Seeds:
    inputs: list[tuple[str, bytes]]  # (file name, content)
    too_big: list[str] = field(default_factory=list)
    not_read: int = 0  # over the file/byte limits
    empty_corpus: bool = False
    notes: list[str] = field(default_factory=list)


def load_seeds(*, corpus_dir: Path | None, max_input_bytes: int, max_files: int = MAX_SEED_FILES,
               max_total_bytes: int = MAX_TOTAL_BYTES) -> Seeds:
    if corpus_dir is None:
        s = Seeds(inputs=[("empty", b"")], empty_corpus=True)
        s.notes.append("no seed corpus given: starting from a single empty input")
        return s
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.exists():
        raise AutotuneError(f"seed corpus {corpus_dir} does not exist",
                            fix="pass an existing directory of seed inputs with --corpus")
    if not corpus_dir.is_dir():
        raise AutotuneError(f"seed corpus {corpus_dir} is not a directory",
                            fix="put the seed inputs in a directory and pass that with --corpus")
    try:
        names = sorted(e.name for e in os.scandir(corpus_dir)
                       if not e.name.startswith(".") and e.is_file(follow_symlinks=True))
    except OSError as exc:
        raise AutotuneError(f"cannot read the seed corpus {corpus_dir}: {exc.strerror}",
                            fix="check the directory's permissions") from exc
    out = Seeds(inputs=[])
    total = 0
    for i, name in enumerate(names):
        path = corpus_dir / name
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if size > max_input_bytes:
            out.too_big.append(name)
            continue
        if len(out.inputs) >= max_files or total + size > max_total_bytes:
            out.not_read = len(names) - i
            break
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise AutotuneError(f"cannot read seed {path}: {exc.strerror}", fix="check its permissions") from exc
        out.inputs.append((name, data[:max_input_bytes]))
        total += len(data)
    if out.too_big:
        out.notes.append(f"{len(out.too_big)} seed file(s) over {max_input_bytes} bytes skipped "
                         f"(e.g. {out.too_big[0]}); raise --max-input-bytes to use them")
    if out.not_read:
        out.notes.append(f"seed corpus bounded: {out.not_read} more file(s) not read "
                         f"(limits: {max_files} files, {max_total_bytes >> 20} MiB); minimise the corpus first "
                         f"(afl-cmin) to probe all of it")
    if not out.inputs:
        if out.too_big:
            raise AutotuneError(f"every seed in {corpus_dir} is larger than {max_input_bytes} bytes",
                                fix="raise --max-input-bytes or use smaller seeds")
        out.inputs.append(("empty", b""))
        out.empty_corpus = True
        out.notes.append(f"seed corpus {corpus_dir} is empty: starting from a single empty input")
    return out
