"""The one recommendation document (autotune.recommendation): its round trip, what tune and the race write,
the same Recommendation derived from a directory written before recommendation.json existed (only
race.json or report.json), and the errors, each naming its fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autotune.errors import DocumentError
from autotune.emit.write import from_tune
from autotune.filenames import RECOMMENDATION_JSON
from autotune.preflight.tuned import derive_recommendation, load_recommendation
from autotune.recommendation import SCHEMA_VERSION, RecordedExecs, Recommendation
from autotune.mappoint import MapPoint
from race_replay import replay
from test_emit_golden import CASES, _result


def _tune_dir(tmp_path: Path, case: str = "rebuild") -> Path:
    from autotune.emit.write import emit_all

    d = tmp_path / "tune"
    emit_all(result=_result(**CASES[case]), out_dir=d, plot=False)
    return d


def test_a_recommendation_round_trips_through_its_dict():
    from autotune.configuration import Configuration
    from autotune.profile import detect_host

    rec = Recommendation(stage="race", configuration=Configuration.of(
        name="edge-flat17-w8", cc_kind="autotune", build_vars={"AUTOTUNE_CC_INSTRUMENT": "blocks"},
        run_vars={"AUTOTUNE_METRIC": "edge", "AUTOTUNE_MAP_SIZE": "131072"},
        files=("afl-build.env", "autotune-run.env"), description="edge, flat"),
        is_default=False, reason="covers more", env_files=("afl-build.env", "autotune-run.env"), evidence="race.json",
        probe_dir="/x/probe", tune_dir="/x/tune", max_collision_rate=0.01,
        recorded_execs=(RecordedExecs(MapPoint("edge", "flat", 17, 8), 1234.5),), host=detect_host(),
        compilers={"afl-clang-fast": "clang 14"})
    doc = json.loads(json.dumps(rec.to_dict()))
    assert doc["schema_version"] == SCHEMA_VERSION and doc["kind"] == "recommendation" and doc["stage"] == "race"
    assert Recommendation.from_dict(doc) == rec
    assert rec.recorded_execs_per_s(MapPoint("edge", "flat", 17, 8)) == 1234.5
    assert rec.recorded_execs_per_s(MapPoint("edge", "flat", 16, 8)) is None


def test_tune_writes_the_recommendation_and_an_old_tune_dir_derives_the_same(tmp_path):
    from autotune.envfile import read_env_file

    res = _result(**CASES["rebuild"])
    d = _tune_dir(tmp_path)
    rec = load_recommendation(d)
    assert rec.stage == "tune" and rec.evidence == "report.json" and not rec.is_default and rec.reason
    assert rec.env_files == ("afl-build.env", "afl-run.env", "autotune-run.env", "afl-build-rebuilt.env")
    assert rec.configuration.name == res.best_config.key() and rec.configuration.cc_kind == "autotune"
    assert rec.configuration.run_vars == read_env_file(d / "autotune-run.env").values
    assert rec.max_collision_rate == res.settings.max_collision_rate
    for ev in (res.best, res.no_rebuild_best, *(t.evaluation for t in res.trials)):  # as TuneResult answers
        assert rec.recorded_execs_per_s(ev.config) == res.recorded_execs_per_s(ev.config)
    assert json.loads((d / RECOMMENDATION_JSON).read_text()) == rec.to_dict()
    (d / RECOMMENDATION_JSON).unlink()  # a tune directory of before: report.json and the env files
    assert derive_recommendation(d) == load_recommendation(d) == rec


def test_the_race_writes_the_recommendation_and_an_old_race_dir_derives_the_same(tmp_path):
    replay("demo-list-4", tmp_path)
    d = tmp_path / "demo-list-4"
    race = json.loads((d / "race.json").read_text())
    rec = load_recommendation(d)
    decision = race["race"]["decision"]
    assert rec.stage == "race" and rec.evidence == "race.json" and rec.reason == decision["reason"]
    assert rec.configuration.name == decision["recommended"] and rec.is_default == decision["is_default"]
    assert set(rec.env_files) == {"afl-build.env", "afl-run.env", "autotune-build.env", "autotune-run.env"}
    assert rec.max_collision_rate == race["max_collision_rate"] and rec.recorded_execs == ()
    assert str(d / RECOMMENDATION_JSON) not in race["written"]  # race.json stays as it was
    (d / RECOMMENDATION_JSON).unlink()  # a race directory of before: race.json and the env files
    assert derive_recommendation(d) == load_recommendation(d) == rec


def test_an_old_race_dir_takes_execs_and_host_from_the_tune_report_it_names(tmp_path):
    from autotune.preflight.tuned import load_tuned

    tune = _tune_dir(tmp_path)
    replay("demo-list", tmp_path)
    d = tmp_path / "demo-list"
    doc = json.loads((d / "race.json").read_text())
    doc["tune_dir"] = str(tune)
    (d / "race.json").write_text(json.dumps(doc))
    (d / RECOMMENDATION_JSON).unlink()
    res = _result(**CASES["rebuild"])
    rec = load_recommendation(d)
    assert rec.recorded_execs_per_s(res.best_config) == res.best.execs_per_s
    t = load_tuned(d)
    assert t.kind == "race" and t.recommendation == rec and t.autotune_env is None


def test_preflight_reads_a_new_tune_dir_as_an_old_one(tmp_path):
    from autotune.preflight.tuned import load_tuned

    d = _tune_dir(tmp_path)
    new = load_tuned(d)
    (d / RECOMMENDATION_JSON).unlink()
    old = load_tuned(d)
    assert new == old and new.kind == "tune" and new.runtime is not None


@pytest.mark.parametrize("breakage", ["missing", "corrupt", "other-schema", "not-a-recommendation", "malformed",
                                      "not-a-dir"])
def test_a_bad_recommendation_is_a_document_error_naming_the_fix(tmp_path, breakage):
    d = _tune_dir(tmp_path)
    file = d / RECOMMENDATION_JSON
    doc = json.loads(file.read_text())
    if breakage == "missing":  # nothing to derive it from either
        for name in (RECOMMENDATION_JSON, "report.json"):
            (d / name).unlink()
    elif breakage == "corrupt":
        file.write_text('{"schema_version": 1, "kind": "recommen')
    elif breakage == "other-schema":
        file.write_text(json.dumps({**doc, "schema_version": 99}))
    elif breakage == "not-a-recommendation":
        file.write_text(json.dumps([1, 2]))
    elif breakage == "malformed":
        file.write_text(json.dumps({**doc, "stage": "bench"}))
    else:
        d = file
    with pytest.raises(DocumentError) as e:
        load_recommendation(d)
    assert e.value.exit_code == 1 and e.value.fix, e.value
    want = {"missing": "autotune tune", "other-schema": "this autotune", "not-a-recommendation": "autotune run",
            "malformed": "autotune race", "not-a-dir": "autotune tune", "corrupt": "re-create"}[breakage]
    assert want in e.value.fix
    if breakage == "other-schema":
        assert e.value.field == "schema_version" and "99" in e.value.message


def test_from_tune_names_what_it_was_given():
    res = _result(**CASES["norebuild"])
    rec = from_tune(res, run_vars={"AUTOTUNE_METRIC": res.best_config.metric}, env_files=("afl-build.env",))
    assert rec.configuration.files == rec.env_files == ("afl-build.env",)
    assert rec.configuration.run_vars == {"AUTOTUNE_METRIC": res.best_config.metric}


def test_run_json_carries_the_recommendation_document(tmp_path):
    """`autotune run --json` keeps its keys and adds the recommendation directory's recommendation.json."""
    from typer.testing import CliRunner

    from autotune.cli.main import app

    out = tmp_path / "o"
    res = CliRunner().invoke(app, ["run", "--demo", "--no-race", "--probe-time", "2", "--calls", "4", "--out", str(out),
                                   "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert {"best", "tune_best", "env_files", "recommendation_dir", "race"} <= set(doc) and doc["best"]["source"] == "tune"
    assert doc["recommendation"] == load_recommendation(out / "tune").to_dict()
    assert doc["recommendation"]["stage"] == "tune" and doc["recommendation"]["configuration"]["name"] == doc["best"]["name"]


RECORDED_RACES = sorted(p for p in (Path(__file__).resolve().parent.parent / "benchmarks" / "results").glob("race-*.json")
                        if isinstance(json.loads(p.read_text()).get("race"), dict))


@pytest.mark.parametrize("recorded", RECORDED_RACES, ids=lambda p: p.stem)
def test_every_committed_race_document_reads_as_a_recommendation(tmp_path, recorded):
    """The race documents committed under benchmarks/results, each as the race.json of a directory of before."""
    import shutil

    shutil.copyfile(recorded, tmp_path / "race.json")
    rec = load_recommendation(tmp_path)
    decision = json.loads(recorded.read_text())["race"]["decision"]
    assert rec.stage == "race" and rec.is_default == decision["is_default"] and rec.reason == decision["reason"]
    assert Recommendation.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec
