"""Errors a user can act on.

Every failure that a user can cause (bad input, missing tool, corrupt file, full disk) is an
:class:`AutotuneError` carrying what is wrong and how to fix it. The CLI prints it as one or two
lines on stderr and exits with ``exit_code``; a traceback is shown only with ``--debug``.
"""

from __future__ import annotations


class AutotuneError(Exception):
    """A failure with a message for the user and, where known, the fix."""

    exit_code: int = 1

    def __init__(self, message: str, *, fix: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.fix = fix
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message if not self.fix else f"{self.message} (fix: {self.fix})"


class DocumentError(AutotuneError):
    """A file autotune reads (profile, probe, report, env file) is missing, corrupt or incomplete."""

    def __init__(self, path, message: str, *, field: str | None = None, fix: str | None = None):
        where = f"{path}" + (f": field '{field}'" if field else "")
        super().__init__(f"{where}: {message}", fix=fix)
        self.path = path
        self.field = field


class ToolMissingError(AutotuneError):
    """An external program (clang, afl-fuzz, ...) is not installed."""

    def __init__(self, tool: str, package: str):
        super().__init__(
            f"'{tool}' was not found on PATH",
            fix=f"install it: apt-get install -y {package}",
        )
        self.tool = tool
        self.package = package
