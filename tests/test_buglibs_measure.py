"""benchmarks/bugs/measure.py's pure parts: the per-bug summary over trials (counts, medians over the
trials that saw the bug), its Markdown table, the campaign's environment, and the resume guard."""

from __future__ import annotations

import json

import pytest

import buglibs_support  # noqa: F401  (benchmarks/bugs on the path)
import measure
from buglibs_support import LIBRARIES


def trial(bugs: dict[str, tuple[float | None, float | None]]) -> dict:
    return {"bugs": {n: {"reach_s": r, "trigger_s": t} for n, (r, t) in bugs.items()}}


def test_summary_counts_trials_and_takes_medians_over_those_that_saw_the_bug():
    lib = LIBRARIES["libpng"]
    trials = [trial({"PNG001": (0.5, None), "PNG004": (1.0, 8.0)}),
              trial({"PNG001": (1.5, 30.0), "PNG004": (2.0, 12.0)}),
              trial({"PNG004": (3.0, None)})]
    s = measure.summarise(lib=lib, trials=trials, seconds=300, plan={"library": "libpng", "trials": 3})
    rows = {r["bug"]: r for r in s["bugs"]}
    assert [r["bug"] for r in s["bugs"]] == [b.id for b in lib.bugs]  # every bug of the manifest, in order
    assert rows["PNG001"] == {"bug": "PNG001", "cve": "CVE-2025-65018", "trials": 3, "reached": 2,
                              "median_reach_s": 1.0, "triggered": 1, "median_trigger_s": 30.0}
    assert (rows["PNG004"]["reached"], rows["PNG004"]["median_reach_s"]) == (3, 2.0)
    assert (rows["PNG004"]["triggered"], rows["PNG004"]["median_trigger_s"]) == (2, 10.0)
    assert (rows["PNG005"]["reached"], rows["PNG005"]["median_reach_s"], rows["PNG005"]["triggered"]) == (0, None, 0)
    assert s["trials_done"] == 3


def test_markdown_table_names_the_tools():
    lib = LIBRARIES["libpng"]
    s = measure.summarise(lib=lib, trials=[trial({"PNG004": (1.0, 8.25)})], seconds=300,
                          plan={"library": "libpng", "upstream": "1.6.39", "trials": 2,
                                "tools": {"afl-fuzz": "AFL++ 4.04c", "clang": "Debian clang version 14.0.6"}})
    md = measure.markdown(s)
    assert "1 of 2 trials x 5 min, AFL++ 4.04c" in md and "clang version 14.0.6" in md
    assert "| PNG004 | CVE-2025-64505 | 1/1 | 1.0 | 1/1 | 8.2 |" in md
    assert "| PNG005 | CVE-2026-25646 | 0/1 | - | 0/1 | - |" in md


def test_campaign_env_makes_canaries_fatal_and_drops_the_callers_afl_settings():
    env = measure.campaign_env({"PATH": "/usr/bin", "AFL_MAP_SIZE": "99", "AUTOTUNE_CANARY_FATAL": "0"})
    assert env["AUTOTUNE_CANARY_FATAL"] == "1"
    assert env["AFL_NO_AFFINITY"] == "1" and env["AFL_NO_UI"] == "1"
    assert "AFL_MAP_SIZE" not in env and env["PATH"] == "/usr/bin"


def test_a_run_folder_of_another_plan_is_not_resumed(tmp_path):
    (tmp_path / "plan.json").write_text(json.dumps({"library": "libpng", "trials": 9, "seconds": 60}))
    with pytest.raises(SystemExit, match="holds another plan"):
        measure.measure(name="libpng", trials=2, minutes=5, out=tmp_path)
