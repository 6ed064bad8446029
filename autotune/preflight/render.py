"""The rich table of preflight's findings (results on stdout; progress on stderr)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from autotune.preflight.preflight import PreflightResult

_STYLE = {"ok": "green", "warning": "yellow", "error": "bold red"}


def preflight_table(res: PreflightResult) -> Table:
    t = Table(title=f"autotune preflight: {res.tuned_dir}", title_justify="left")
    t.add_column("status")
    t.add_column("check")
    t.add_column("finding", overflow="fold")
    t.add_column("fix", overflow="fold")
    for f in res.sorted_findings():
        t.add_row(Text(f.severity, style=_STYLE[f.severity]), f.check, f.message, f.fix)
    return t
