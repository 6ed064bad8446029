"""Preflight findings: ok / warning / error, each warning and error naming its fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

LEVELS = ("ok", "warning", "error")


@dataclass(frozen=True)
class PreflightFinding:
    check: str
    severity: str  # ok, warning, error
    message: str
    fix: str = ""
    file: str | None = None  # the file to annotate (GitHub), e.g. the env file holding the variable
    line: int | None = None

    def __post_init__(self) -> None:
        if self.severity not in LEVELS:
            raise ValueError(f"severity must be one of {LEVELS}, not {self.severity!r}")
        if self.severity != "ok" and not self.fix:
            raise ValueError(f"a {self.severity} must name its fix ({self.check}: {self.message})")

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "severity": self.severity, "message": self.message, "fix": self.fix,
                "file": self.file, "line": self.line}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "PreflightFinding":
        return cls(check=d["check"], severity=d["severity"], message=d["message"], fix=d.get("fix", ""),
                   file=d.get("file"), line=d.get("line"))
