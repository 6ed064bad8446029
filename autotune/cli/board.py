"""The race's trials as they finish: a live table on a terminal, one line per trial in a log or a pipe.

The table has a row per configuration at the longest trial length it has reached (its rung): trials
run, median yardstick edges and execs/s, and the difference from AFL++'s default's median at the same
trial length, the figure the decision is made on; under it the last rung's and the search's news."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Mapping

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from autotune.race.contestants import DEFAULT_NAME
from autotune.race.options import RaceProgress

if TYPE_CHECKING:
    from autotune.trials import TrialResult


class TrialBoard:
    """Give ``trial``, ``rung``, ``batch`` and ``notice`` to race_target (:meth:`race_progress`); use as a
    context manager."""

    def __init__(self, console: Console, *, live: bool | None = None):
        self.console = console
        self.live_mode = console.is_terminal if live is None else live
        # (configuration, trial seconds) -> [(edges, execs/s)]
        self.figures: dict[tuple[str, int], list[tuple[int | None, float]]] = defaultdict(list)
        self.news: list[str] = []
        self._live: Live | None = None

    def __enter__(self) -> "TrialBoard":
        if self.live_mode:
            self._live = Live(self.render(), console=self.console, refresh_per_second=2, transient=False)
            self._live.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.update(self.render())
            self._live.stop()
            self._live = None

    def race_progress(self) -> RaceProgress:
        """This board's callbacks as the race takes them."""
        return RaceProgress(on_rung=self.rung, on_trial=self.trial, on_batch=self.batch, notice=self.notice)

    # the race's callbacks
    def trial(self, t) -> None:
        edges = t.yardstick.edges if t.yardstick else None
        self.figures[(t.spec.config, int(t.spec.seconds))].append((edges, t.execs_per_s))
        self._say(trial_line(t), table_only=True)

    def rung(self, r) -> None:
        self._say(rung_line(r))

    def batch(self, b: Mapping[str, Any]) -> None:
        self._say(batch_line(b))

    def notice(self, message: str) -> None:
        self.console.print(message, highlight=False, soft_wrap=True)

    def _say(self, line: str, *, table_only: bool = False) -> None:
        if self._live is None:
            self.console.print(f"[dim]{line}[/]", highlight=False, soft_wrap=True)
            return
        if not table_only:
            self.news = (self.news + [line])[-2:]
        self._live.update(self.render())

    # the table
    def rows(self) -> list[dict[str, Any]]:
        """Each configuration at its longest trial length: trials, medians, and the default's median there."""
        longest: dict[str, int] = {}
        for name, seconds in self.figures:
            longest[name] = max(seconds, longest.get(name, 0))
        defaults = {s: [e for e, _ in self.figures[(n, s)] if e is not None]
                    for (n, s) in self.figures if _is_default(n)}
        rows = []
        for name, seconds in longest.items():
            figs = self.figures[(name, seconds)]
            edges = [e for e, _ in figs if e is not None]
            med = statistics.median(edges) if edges else None
            dflt = defaults.get(seconds)
            diff = None if med is None or not dflt or _is_default(name) else med - statistics.median(dflt)
            rows.append({"name": name, "seconds": seconds, "trials": len(figs), "edges": med,
                         "execs_per_s": statistics.median(x for _, x in figs), "vs_default": diff})
        rows.sort(key=lambda r: (-r["seconds"], -(r["edges"] or 0), r["name"]))
        return rows

    def render(self):
        table = Table(title="the race in afl-fuzz: trials so far", title_justify="left", expand=False)
        for col, j in (("configuration", "left"), ("trial s", "right"), ("trials", "right"),
                       ("median edges", "right"), ("vs default", "right"), ("median execs/s", "right")):
            table.add_column(col, justify=j)
        for r in self.rows():
            diff = r["vs_default"]
            diff_s = "" if diff is None else Text(f"{diff:+g}", style="green" if diff > 0 else "red" if diff < 0 else "")
            table.add_row(r["name"], str(r["seconds"]), str(r["trials"]),
                          "?" if r["edges"] is None else f"{r['edges']:g}", diff_s, f"{r['execs_per_s']:,.0f}")
        return Group(table, *(Text(n, style="dim") for n in self.news))


def _is_default(name: str) -> bool:
    return name == DEFAULT_NAME or name.startswith(DEFAULT_NAME + "-x")


def rung_line(rung) -> str:
    meds = ", ".join(f"{n} {statistics.median(rung.coverage(n)):g}" for n in rung.ranking)
    return f"rung {rung.index} ({rung.seconds} s trials) done: median edges {meds}; on: {', '.join(rung.kept)}"


def batch_line(b: Mapping[str, Any]) -> str:
    return (f"search: {b['tried']} configuration{'s' if b['tried'] != 1 else ''} tried, "
            f"{b['afl_seconds']:,.0f} afl-fuzz seconds; best so far "
            f"{b['best']} (model: {b['best_objective']:+.3f} vs the default)")


def trial_line(t: "TrialResult") -> str:
    """One finished trial; judged by bugs, also what it triggered and when."""
    cov = t.yardstick.edges if t.yardstick else "?"
    line = (f"  {t.spec.config} trial {t.spec.index} ({t.spec.seconds} s): {cov} edges, "
            f"{t.execs_per_s:,.0f} execs/s, queue {t.kept.get('queue', 0)}")
    if t.bugs is None:
        return line
    hit = sorted((b.trigger_s, name) for name, b in t.bugs.bugs.items() if b.trigger_s is not None)
    return line + (", triggered " + ", ".join(f"{name} at {s:.1f} s" for s, name in hit) if hit
                   else ", no known bug triggered")
