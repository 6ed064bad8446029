"""The race's live table of trials (autotune.cli.board): the figures it shows, and plain lines when
the output is a log or a pipe."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from autotune.cli.board import TrialBoard


def _trial(config: str, index: int, seconds: int, edges: int | None, execs: float):
    return SimpleNamespace(spec=SimpleNamespace(config=config, index=index, seconds=seconds), bugs=None,
                           yardstick=SimpleNamespace(edges=edges) if edges is not None else None,
                           stats={"execs_per_sec": execs}, execs_per_s=execs, kept={"queue": 10})


def _feed(board: TrialBoard) -> None:
    for i, (d, g, e) in enumerate([(100, 104, 90), (102, 110, 95), (98, 101, 99)]):
        board.trial(_trial("aflpp-default", i, 28, d, 1000.0 + i))
        board.trial(_trial("guard", i, 28, g, 2000.0 + i))
        board.trial(_trial("edge-flat17-w8", i, 28, e, 800.0))
    board.trial(_trial("aflpp-default", 0, 56, 150, 1000.0))
    board.trial(_trial("guard", 0, 56, 149, 2100.0))


def test_rows_show_each_configuration_at_its_longest_trials_against_the_default_there():
    board = TrialBoard(Console(file=io.StringIO()), live=False)
    _feed(board)
    rows = {r["name"]: r for r in board.rows()}
    assert rows["guard"]["seconds"] == 56 and rows["guard"]["trials"] == 1
    assert rows["guard"]["edges"] == 149 and rows["guard"]["vs_default"] == -1  # the default's 56 s median: 150
    assert rows["edge-flat17-w8"]["seconds"] == 28 and rows["edge-flat17-w8"]["edges"] == 95
    assert rows["edge-flat17-w8"]["vs_default"] == 95 - 100
    assert rows["aflpp-default"]["vs_default"] is None
    assert [r["name"] for r in board.rows()][:2] == ["aflpp-default", "guard"]  # longest rung first, then edges


def test_a_portfolio_default_is_the_default_and_a_missing_yardstick_is_unknown():
    board = TrialBoard(Console(file=io.StringIO()), live=False)
    board.trial(_trial("aflpp-default-x2", 0, 28, 200, 500.0))
    board.trial(_trial("x2-guard", 0, 28, None, 700.0))
    board.trial(_trial("x2-guard", 1, 28, 210, 700.0))
    rows = {r["name"]: r for r in board.rows()}
    assert rows["x2-guard"]["trials"] == 2 and rows["x2-guard"]["edges"] == 210 and rows["x2-guard"]["vs_default"] == 10


def test_a_log_or_pipe_gets_one_line_per_trial_and_no_table():
    buf = io.StringIO()
    with TrialBoard(Console(file=buf, force_terminal=False, width=80), live=None) as board:
        board.trial(_trial("guard", 0, 28, 104, 2000.0))
        board.notice("a notice with /a/very/long/path/" + "x" * 120)
    text = buf.getvalue()
    assert "guard trial 0 (28 s): 104 edges, 2,000 execs/s, queue 10" in text
    assert "/a/very/long/path/" + "x" * 120 in text  # never broken across lines
    assert "median edges" not in text


def test_a_terminal_gets_the_table_with_the_race_news():
    buf = io.StringIO()
    with TrialBoard(Console(file=buf, force_terminal=True, width=120), live=None) as board:
        _feed(board)
        board.batch({"tried": 2, "afl_seconds": 336.0, "best": "guard", "best_objective": 0.01})
    text = buf.getvalue()
    assert "median edges" in text and "vs default" in text
    assert "edge-flat17-w8" in text and "-5" in text
    assert "search: 2 configurations tried" in text
