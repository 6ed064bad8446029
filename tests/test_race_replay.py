"""The list race and the search replayed on recorded afl-fuzz trial figures (tests/race_replay.py) ask for
the same trials, call back in the same order, and write the same race.json and race.md as the goldens in
tests/golden/race_replay/ (written before the two successive-halving loops became one scheduler), and the
same recommendation.json as its goldens there (NAME.recommendation.json)."""

from __future__ import annotations

import json

import pytest

from race_replay import CASES, GOLDEN, replay


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_replayed_race_proposes_and_decides_as_recorded(name, tmp_path):
    got = replay(name, tmp_path)
    assert got.pop("race_md") == (GOLDEN / f"{name}.md").read_text()
    assert got.pop("recommendation") == json.loads((GOLDEN / f"{name}.recommendation.json").read_text())
    want = json.loads((GOLDEN / f"{name}.json").read_text())
    for key in ("calls", "events", "race_json"):
        assert json.loads(json.dumps(got[key])) == want[key], key
