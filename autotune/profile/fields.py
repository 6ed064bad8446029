"""Typed, validated access to one table of a document; every failure names the file and the field."""

from __future__ import annotations

from typing import Any

from autotune.errors import DocumentError
from autotune.profile.cpulist import parse_cpu_list

UNKNOWN = "unknown"  # a figure the source does not give


class FieldReader:
    """Typed access to one table of a document; every failure names the file and the field."""

    def __init__(self, d: Any, *, path, where: str):
        self.path, self.where = path, where
        if not isinstance(d, dict):
            raise DocumentError(path, "must be a table", field=where or None,
                                fix="re-create the profile (autotune profile --save PATH)")
        self.d = d

    def field_name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def fail(self, msg: str, *, key: str):
        raise DocumentError(self.path, msg, field=self.field_name(key),
                            fix="correct the field, or re-create the profile (autotune profile --save PATH)")

    def get(self, key: str) -> Any:
        if key not in self.d:
            self.fail("missing", key=key)
        return self.d[key]

    def sub(self, key: str) -> "FieldReader":
        value = self.get(key)
        if not isinstance(value, dict):
            self.fail("must be a table", key=key)
        return FieldReader(value, path=self.path, where=self.field_name(key))

    def int_(self, key: str, *, minimum: int | None = None, maximum: int | None = None,
             unknown_ok: bool = True) -> int | None:
        value = self.get(key)
        if unknown_ok and value == UNKNOWN:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            alt = ' or "unknown"' if unknown_ok else ""
            self.fail(f"must be an integer{alt}, not {value!r}", key=key)
        if minimum is not None and value < minimum:
            self.fail(f"must be at least {minimum}, not {value}", key=key)
        if maximum is not None and value > maximum:
            self.fail(f"must be at most {maximum}, not {value}", key=key)
        return value

    def str_(self, key: str, *, unknown_ok: bool = True, empty_ok: bool = False) -> str | None:
        value = self.get(key)
        if not isinstance(value, str):
            self.fail(f"must be a string, not {value!r}", key=key)
        if unknown_ok and value == UNKNOWN:
            return None
        if not value and not empty_ok:
            self.fail("must not be empty", key=key)
        return value

    def choice(self, key: str, choices: tuple[str, ...]) -> str:
        value = self.get(key)
        if value not in choices:
            self.fail(f"must be one of {', '.join(choices)}, not {value!r}", key=key)
        return value

    def cpulist(self, key: str) -> str | None:
        value = self.str_(key)
        if value is not None:
            try:
                parse_cpu_list(value)
            except ValueError:
                self.fail(f"must be a CPU list such as '0-3,8', not {value!r}", key=key)
        return value

    def str_list(self, key: str) -> tuple[str, ...] | None:
        value = self.get(key)
        if value == UNKNOWN:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail("must be a list of strings or \"unknown\"", key=key)
        return tuple(value)

    def str_table(self, key: str, *, allowed: tuple[str, ...] | None = None) -> dict[str, str]:
        value = self.get(key)
        if not isinstance(value, dict) or not all(isinstance(v, str) and v for v in value.values()):
            self.fail("must be a table of non-empty strings", key=key)
        if allowed is not None:
            extra = sorted(set(value) - set(allowed))
            if extra:
                self.fail(f"unknown figure '{extra[0]}' (expected one of {', '.join(allowed)})", key=key)
        return dict(value)
