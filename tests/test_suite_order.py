"""The suite's order (tests/suite_order.py): modules kept whole, the recorded seconds spread over
xdist's first shares, each share's slowest first; a missing or broken record changes nothing but order."""

from __future__ import annotations

import json

from suite_order import balanced_order, load_durations, store_durations, xdist_shares


def items_of(counts: dict[str, int]) -> list[str]:
    return [f"{m}::t{i}" for m, n in counts.items() for i in range(n)]


def module_of(item: str) -> str:
    return item.split("::")[0]


def test_the_recorded_seconds_are_spread_over_the_shares_xdist_hands_out():
    counts = {"a.py": 3, "b.py": 40, "c.py": 2, "d.py": 1, "e.py": 30, "f.py": 4, "g.py": 20}
    seconds = {"a.py": 160.0, "c.py": 90.0, "d.py": 80.0, "f.py": 70.0, "g.py": 0.4}
    items = items_of(counts)
    out = balanced_order(items, module_of, seconds, workers=2)
    assert sorted(out) == sorted(items)
    # each module whole and in its own order
    for m, n in counts.items():
        where = [i for i, it in enumerate(out) if module_of(it) == m]
        assert where == list(range(where[0], where[0] + n)) and [out[i] for i in where] == items_of({m: n})
    first, second = xdist_shares(len(out), 2)
    share = [out[:first], out[first:]]
    load = [sum(seconds.get(m, 0.0) for m in {module_of(it) for it in s} if seconds.get(m, 0.0) >= 1) for s in share]
    assert abs(load[0] - load[1]) <= 160.0 - 80.0  # 160 + 70 against 90 + 80, not 160 + 90 + 80 + 70 on one
    assert max(load) == 230.0
    # each share runs its heavy modules slowest first, and no heavy module straddles a boundary
    for s in share:
        mods = list(dict.fromkeys(module_of(it) for it in s))
        heavy = [seconds[m] for m in mods if seconds.get(m, 0.0) >= 1]
        assert heavy == sorted(heavy, reverse=True)
    crossing = {module_of(it) for it in share[0]} & {module_of(it) for it in share[1]}
    assert all(seconds.get(m, 0.0) < 1 for m in crossing)


def test_one_worker_runs_the_slowest_first_and_no_record_keeps_the_order(tmp_path):
    items = items_of({"a.py": 2, "b.py": 2, "c.py": 1})
    assert balanced_order(items, module_of, {"c.py": 9.0}, workers=1) == ["c.py::t0", "a.py::t0", "a.py::t1",
                                                                           "b.py::t0", "b.py::t1"]
    assert balanced_order(items, module_of, {}, workers=1) == items
    assert xdist_shares(7, 2) == [3, 4] and xdist_shares(8, 3) == [2, 3, 3]
    assert load_durations(tmp_path / "none.json") == {}
    (tmp_path / "bad.json").write_text("{not json")
    assert load_durations(tmp_path / "bad.json") == {}
    store_durations({"x.py": 1.234}, tmp_path / "d.json", source="a test")
    assert load_durations(tmp_path / "d.json") == {"x.py": 1.23}
    assert json.loads((tmp_path / "d.json").read_text())["source"] == "a test"


def test_the_committed_record_names_modules_that_exist():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    recorded = load_durations()
    assert recorded, "tests/durations.json is missing or unreadable"
    assert all((root / m).is_file() for m in recorded), [m for m in recorded if not (root / m).is_file()]
