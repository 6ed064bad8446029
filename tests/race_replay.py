"""Races replayed on recorded afl-fuzz trial figures (benchmarks/results/race-*.json): the list race and the
search run again with the trial backend answering from the recording, and everything they say written
down: the trials asked for (contestant, rung, repeat, length, afl-fuzz -s), the callbacks in order, race.json
and race.md (and recommendation.json, whose goldens were added later, beside the others). tests/test_race_replay.py compares the lot with tests/golden/race_replay/, written by this
module (``python tests/race_replay.py``) before the race's loops were merged into one scheduler.

A trial the recording lacks (a longer budget proposes points that never ran, the deciding rung runs more
repeats than an older race did) is the default's recorded trial of the same rung and repeat (modulo what
was recorded), its coverage and speed moved by a fixed amount per contestant name: deterministic, so the
replay is the same every time and only the code under test can change it.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
GOLDEN = Path(__file__).resolve().parent / "golden" / "race_replay"


def _shift(name: str) -> tuple[float, float]:
    h = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
    return 1 + ((h % 41) - 20) / 400, 1 + (((h >> 8) % 61) - 30) / 100


class Recorded:
    """``run_trials`` answering from a recorded race.json; every call is logged."""

    def __init__(self, race: dict, *, bugs: bool = False):
        from autotune.race.core import TrialFigures

        self.by_key = {}
        self.default = next(c["name"] for c in race["contestants"] if c["is_default"])
        for rung in race["rungs"]:
            for t in rung["trials"]:
                f = TrialFigures.from_dict(t)
                self.by_key[(f.contestant, f.rung, f.repeat)] = f
        self.rungs = len(race["rungs"])
        self.calls: list[list[list[Any]]] = []
        self.bugs = bugs

    def _base(self, rung: int, repeat: int):
        r = min(rung, self.rungs - 1)
        reps = sorted(k[2] for k in self.by_key if k[0] == self.default and k[1] == r)
        return self.by_key[(self.default, r, reps[repeat % len(reps)])]

    def __call__(self, specs):
        from autotune.race.core import TrialFigures

        self.calls.append([[s.contestant, s.rung, s.repeat, s.seconds, s.fuzz_seed] for s in specs])
        out = []
        for s in specs:
            got = self.by_key.get((s.contestant, s.rung, s.repeat))
            if got is None:
                base = self._base(s.rung, s.repeat)
                cov, eps = _shift(s.contestant) if s.contestant != self.default else (1.0, 1.0)
                got = TrialFigures(contestant=s.contestant, rung=s.rung, repeat=s.repeat, seconds=s.seconds,
                                   coverage=int(base.coverage * cov), execs_per_s=round(base.execs_per_s * eps, 3),
                                   queue=base.queue, stability=base.stability, afl_version=base.afl_version)
            bugs = None
            if self.bugs:  # bug X triggered at a time set by the coverage, within the trial when it is high enough
                at = s.seconds * 300.0 / max(1, got.coverage) + s.repeat
                bugs = {"X": at if at <= s.seconds else None, "Y": None}
            out.append(TrialFigures(**{**got.__dict__, "seconds": s.seconds, "bugs": bugs}))
        return out


def _facts(d: dict):
    from autotune.race.search import SpaceFacts

    return SpaceFacts(keys=dict(d["keys"]), overflow={m: {int(w): s for w, s in v.items()} for m, v in d["overflow"].items()},
                      l2_bytes=d["l2_bytes"], max_collision_rate=d["max_collision_rate"],
                      max_counter_overflow=d["max_counter_overflow"], inline=d["inline"], llc_bytes=d["llc_bytes"],
                      instances=d["instances"])


# name: (recorded race, strategy, overrides); a longer budget than recorded makes the model propose
CASES: dict[str, tuple[str, str, dict]] = {
    "demo-search": ("race-2026-11-26-demo-search.json", "search", {}),
    "demo-search-2400": ("race-2026-11-26-demo-search.json", "search", {"budget_s": 2400.0}),
    "libtiff-search-1800-blocks-fail": ("race-2026-11-26-libtiff-search.json", "search",
                                        {"budget_s": 1800.0, "fail_kind": "blocks"}),
    "libjpeg-turbo-instances2-1800": ("race-2026-11-26-libjpeg-turbo-instances2.json", "search",
                                      {"budget_s": 1800.0, "instances": 2}),
    "demo-list": ("race-2026-11-25-demo.json", "list", {}),
    "demo-list-4": ("race-2026-11-25-demo.json", "list", {"budget_s": 1400.0, "extra": ("ngram-4", "caller")}),
    "demo-list-bugs": ("race-2026-11-25-demo.json", "list", {"budget_s": 900.0, "objective": "bugs"}),
}


def replay(name: str, tmp: Path) -> dict[str, Any]:
    """The replayed race ``name`` of CASES: {"calls", "events", "race_json", "race_md"}."""
    from autotune.race import Contestant, RaceBudget, RaceProgress, RaceSettings, run_race
    from autotune.race.core import portfolio_of
    from autotune.race.search import Space, enumerate_space, run_search
    from autotune.race.stage import RaceOutcome, write_outputs
    from autotune.vocabulary import METRICS

    file, strategy, kw = CASES[name]
    doc = json.loads((RESULTS / file).read_text())
    race = doc["race"]
    backend = Recorded(race, bugs=kw.get("objective") == "bugs")
    events: list[Any] = []
    budget = kw.get("budget_s", race["budget_s"])
    settings = RaceSettings(seed=race["seed"], judge=kw.get("objective", "edges"),
                            budget=RaceBudget(budget_s=budget, jobs=race["jobs"]))
    on_rung = lambda r: events.append(["rung", r.to_dict()])  # noqa: E731
    if strategy == "list":
        contestants = [Contestant.from_dict(c) for c in race["contestants"]]
        for m in kw.get("extra", ()):
            contestants.append(Contestant(name=m, settings=(("AUTOTUNE_METRIC", m),), description=m))
        result = run_race(contestants=contestants, run_trials=backend, settings=settings,
                          progress=RaceProgress(on_rung=on_rung))
    else:
        search = race["search"]
        facts = _facts(search["facts"])
        space, ruled = enumerate_space(metrics=METRICS, facts=facts)
        by_name = {p["name"]: p for p in search["proposals"]}
        from autotune.mappoint import MapPoint

        seeds = [(MapPoint.from_dict(p["point"]), p["origin"]) for p in by_name.values()
                 if p["origin"].startswith("prior")]
        default = Contestant.from_dict(race["contestants"][0])
        wrap = None
        if kw.get("instances"):
            single = Contestant.from_dict(race["contestants"][0]["members"][0])
            wrap = lambda c: portfolio_of(default=single, secondary=c, instances=kw["instances"])  # noqa: E731

        def prepare(cands):
            events.append(["prepare", [c.name for c in cands]])
            bad = kw.get("fail_kind")
            return {c.name: f"{bad} build failed: recorded" for c in cands
                    if bad and c.tuned.build_vars.get("AUTOTUNE_CC_INSTRUMENT") == bad}

        result = run_search(default=default, space=Space(points=tuple(space), facts=facts, seeds=tuple(seeds),
                                                         ruled_out=ruled),
                            prepare=prepare, run_trials=backend, settings=settings, wrap=wrap,
                            progress=RaceProgress(on_rung=on_rung, on_batch=lambda b: events.append(["batch", dict(b)]),
                                                  notice=lambda m: events.append(["notice", m])))
    result = type(result)(**{**result.__dict__, "elapsed_s": 0.0})
    out = tmp / name
    out.mkdir(parents=True)
    outcome = RaceOutcome(race=result, yardstick=doc["yardstick"], binaries={}, target=doc["target"],
                          dropped=tuple(d["name"] for d in (result.search or {}).get("dropped", ())), written=(),
                          probe_dir=None, tune_dir=None, max_collision_rate=doc.get("max_collision_rate", 0.02),
                          host=doc.get("host"))
    write_outputs(outcome=outcome, out_dir=out)
    race_json = json.loads((out / "race.json").read_text())
    race_json.pop("written")
    return {"calls": backend.calls, "events": events, "race_json": race_json,
            "race_md": (out / "race.md").read_text().replace(str(out), "<out>"),
            "recommendation": json.loads((out / "recommendation.json").read_text())}


def main() -> int:
    import tempfile

    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in (sys.argv[1:] or CASES):
            got = replay(name, Path(tmp))
            md = got.pop("race_md")
            rec = got.pop("recommendation")
            (GOLDEN / f"{name}.json").write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
            (GOLDEN / f"{name}.md").write_text(md)
            (GOLDEN / f"{name}.recommendation.json").write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
            print(name, len(got["calls"]), "calls", got["race_json"]["race"]["decision"]["recommended"])
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
