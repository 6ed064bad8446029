"""Atomic file output and versioned JSON/TOML documents.

Nothing autotune writes is ever left half-written: data goes to a temporary file in the
destination directory, is flushed and fsynced, then renamed over the target. A failure
(full disk, permission) leaves the previous good file in place and raises AutotuneError.
"""

from __future__ import annotations

import errno
import fcntl
import gzip
import json
import os
import stat
import tempfile
import tomllib
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, TypeVar

from autotune.errors import AutotuneError, DocumentError


@contextmanager
def file_lock(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive flock on ``path`` (created, with its directory) for the ``with`` body."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def _umask() -> int:
    """The process's umask, read without changing it (/proc/self/status, Linux 4.7+); else by the
    set-and-restore of os.umask."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    """The mode a written file gets: the mode of the file it replaces, else what open() would give a
    new file (0666 less the umask). mkstemp's 0600 would leave reports and env files unreadable to
    the other users of a shared fuzzing host or CI runner."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temp file + fsync + rename), with the mode of the file
    it replaces or, for a new file, the umask's."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _os_error(path, exc) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), _mode_for(path))
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise _os_error(path, exc) from exc
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | os.PathLike, obj: Any) -> Path:
    return write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def write_toml_atomic(path: str | os.PathLike, obj: dict) -> Path:
    import tomli_w

    return write_text_atomic(path, tomli_w.dumps(obj))


def write_json_and_markdown(stem: str | os.PathLike, doc: Any, markdown: str) -> str:
    """A document and its Markdown beside it, STEM.json and STEM.md, each written atomically (a
    benchmark's figures after each step); returns the Markdown."""
    write_json_atomic(f"{os.fspath(stem)}.json", doc)
    write_text_atomic(f"{os.fspath(stem)}.md", markdown)
    return markdown


GZIP_MAGIC = b"\x1f\x8b"


def read_json(path: str | os.PathLike) -> Any:
    """A JSON document, plain or gzipped (the results keep long runs as ``*.json.gz``: read by their
    magic bytes, whatever the name)."""
    return _read_document(path, json.loads, syntax="JSON", syntax_error=json.JSONDecodeError)


def read_toml(path: str | os.PathLike) -> dict:
    return _read_document(path, tomllib.loads, syntax="TOML", syntax_error=tomllib.TOMLDecodeError)


def _read_document(path: str | os.PathLike, parse: Callable[[str], Any], *, syntax: str,
                   syntax_error: type[Exception]) -> Any:
    """``parse`` of a UTF-8 file's text; DocumentError when it is missing, unreadable or not valid ``syntax``."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        return parse((gzip.decompress(raw) if raw[:2] == GZIP_MAGIC else raw).decode("utf-8"))
    except FileNotFoundError as exc:
        raise DocumentError(path, "file not found") from exc
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile, syntax_error) as exc:
        raise DocumentError(path, f"not valid {syntax} ({exc})", fix="re-create the file") from exc
    except OSError as exc:
        raise _os_error(path, exc) from exc


def check_schema(path, doc: Any, *, kind: str, version: int) -> dict:
    """Check that ``doc`` is a mapping of the given kind and schema version."""
    if not isinstance(doc, dict):
        raise DocumentError(path, f"expected a {kind} document (a table/object at top level)")
    got = doc.get("schema_version")
    if got is None:
        raise DocumentError(path, "missing", field="schema_version")
    if got != version:
        raise DocumentError(
            path,
            f"schema_version {got!r} is not supported (this autotune reads version {version})",
            field="schema_version",
            fix=f"re-create the {kind} with this version of autotune",
        )
    return doc


_SCALARS: dict[str, Callable[[Any], Any]] = {"int": int, "float": float, "str": str, "bool": bool}
T = TypeVar("T")


def scalars_from_dict(cls: type[T], d: Mapping, **given: Any) -> T:
    """The dataclass ``cls`` read back from its ``to_dict``: each field annotated ``int``, ``float``,
    ``str`` or ``bool`` is ``d[name]`` converted to that type; every other field comes in ``given``
    (already read, e.g. a nested record's own ``from_dict``)."""
    values = dict(given)
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name in values:
            continue
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        if kind not in _SCALARS:
            raise TypeError(f"{cls.__name__}.{f.name} is a {kind or f.type!r}: pass it in given")
        values[f.name] = _SCALARS[kind](d[f.name])
    return cls(**values)


def _os_error(path: Path, exc: OSError) -> AutotuneError:
    if exc.errno == errno.ENOSPC:
        return AutotuneError(f"no space left on the device while writing {path}",
                             fix="free disk space or choose another output directory")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return AutotuneError(f"cannot write {path}: {exc.strerror}",
                             fix="choose a writable output directory")
    return AutotuneError(f"cannot access {path}: {exc.strerror or exc}")
