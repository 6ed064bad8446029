"""The build record beside every binary autotune.target builds: ``<binary>.build.json``.

It holds the compiler kind and path, the build variables (AFL_* for afl-clang-fast,
AUTOTUNE_CC_INSTRUMENT for autotune cc), the recipe, the command and the binary's SHA-256.
Preflight reads it to check that a binary was built the way ``afl-build.env`` says (a binary does
not carry its afl-cc settings in a form one can read back reliably; the record plus the hash does).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Mapping, Sequence

from autotune.io import read_json, write_json_atomic
from autotune.target.recipe import TargetSpec

RECORD_SUFFIX = ".build.json"
SCHEMA_VERSION = 1


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_record(*, binary: Path, cc_kind: str, compiler: str, build_vars: Mapping[str, str], spec: TargetSpec,
                 argv: Sequence[str]) -> Path:
    rec = {"schema_version": SCHEMA_VERSION, "binary": str(binary), "sha256": sha256_file(binary),
           "cc_kind": cc_kind, "compiler": compiler, "build_vars": dict(sorted(build_vars.items())),
           "recipe": spec.to_dict(), "argv": list(argv)}
    return write_json_atomic(Path(str(binary) + RECORD_SUFFIX), rec)


def read_record(binary: Path) -> dict | None:
    p = Path(str(binary) + RECORD_SUFFIX)
    if not p.is_file():
        return None
    doc = read_json(p)
    return doc if isinstance(doc, dict) else None


def build_vars_of(values: Mapping[str, str]) -> dict[str, str]:
    """The compile-time subset of an env file (AFL_* variables afl-cc reads)."""
    return {k: v for k, v in values.items() if k.startswith("AFL_")}
