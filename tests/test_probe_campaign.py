"""The probe campaign against a fake server at the process boundary (tests/probe_fake_server.py).

The fake speaks the real protocol over real fds and files; the real driver is exercised by
tests/test_probe_demo.py and tests/test_probe_lz4.py.
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from autotune.cli.main import app
from autotune.errors import AutotuneError
from autotune.vocabulary import METRICS
from autotune.probe import load_probe, run_probe
from autotune.probe.options import ProbeSettings
from autotune.probe import protocol as P
from autotune.probe.client import ProbeServer, ServerError

FAKE = Path(__file__).resolve().parent / "probe_fake_server.py"


@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "fake-harness"
    # the marker string makes has_probe_server() accept it, as it does autotune's driver
    script.write_text(f"#!/bin/sh\n# AUTOTUNE_PROBE_CTL_FD\nexec {sys.executable} {FAKE} \"$@\"\n")
    script.chmod(0o755)
    return script


def _corpus(tmp_path, files):
    d = tmp_path / "seeds"
    d.mkdir(exist_ok=True)
    for name, data in files.items():
        (d / name).write_bytes(data)
    return d


def test_client_commands(fake, tmp_path):
    with ProbeServer(binary=fake, probe_dir=tmp_path / "srv", max_input_bytes=4096) as s:
        r = P.Reply.unpack(s.run(b"hello"))
        assert r.status == P.ST_OK and r.new_keys[0] > 0 and r.total_keys == r.new_keys
        r2 = P.Reply.unpack(s.run(b"hello"))
        assert r2.new_keys == (0,) * P.N_METRICS and r2.total_keys == r.total_keys
        assert P.Reply.unpack(s.run(b"CRASH")).status == P.ST_CRASH
        assert s.trace(b"hello", seq=7).status == P.ST_OK
        assert s.dump().status == P.ST_OK
        with pytest.raises(ValueError):
            s.put_input(b"x" * 5000)
    t = P.read_census(P.census_path(tmp_path / "srv", "edge"))
    assert t.records.size == r.total_keys[0] and set(t.records["n_inputs"].tolist()) == {2}
    tr = P.read_traces(P.trace_path(tmp_path / "srv", "edge"))
    assert list(tr) == [7] and set(tr[7]["key"].tolist()) == set(t.records["key"].tolist())


def test_crashing_and_hanging_seeds_are_listed_and_the_rest_counted(fake, tmp_path):
    corpus = _corpus(tmp_path, {"a": b"good one", "b": b"CRASH here", "c": b"HANG there",
                                "d": b"another good", "e": b"SEGV too", "f": b"zLOOP"})
    r = run_probe(binary=fake, out_dir=tmp_path / "out", corpus_dir=corpus,
                  settings=ProbeSettings(max_execs=300, seed=1))
    c = r.campaign
    assert (c.seeds_total, c.seeds_ok, c.seeds_crash, c.seeds_hang) == (6, 3, 2, 1)
    assert c.execs == 300 and c.stop_reason == "execs"
    by_origin = {f.origin: f for f in r.crashes + r.hangs}
    assert by_origin["seed:b"].reason.startswith("signal 6 (SIGABRT)")
    assert "AddressSanitizer" in by_origin["seed:b"].reason
    assert by_origin["seed:e"].reason.startswith("signal 11 (SIGSEGV)")
    assert by_origin["seed:c"].kind == "hang" and "1000 ms" in by_origin["seed:c"].reason
    for f in r.crashes + r.hangs:
        saved = tmp_path / "out" / f.file
        assert saved.read_bytes()[:4] in (b"CRAS", b"SEGV", b"HANG")
        assert Path(f"{saved}.txt").read_text().startswith(f.reason)
    # every other execution is counted: ok + crash + hang = all
    assert c.execs_ok + c.crashes + c.hangs == c.execs
    assert r.exec_time.count == c.execs_ok
    # the hot-loop seed overflows an 8-bit counter
    assert r.metric("edge").overflow[0].overflow_keys >= 1


def test_same_seed_same_census(fake, tmp_path):
    corpus = _corpus(tmp_path, {"a": b"abcdef", "b": b"0123456789"})
    runs = [run_probe(binary=fake, out_dir=tmp_path / f"o{i}", corpus_dir=corpus,
                      settings=ProbeSettings(max_execs=400, seed=s))
            for i, s in enumerate((3, 3, 4))]
    assert runs[0].census_dict() == runs[1].census_dict()
    assert runs[0].census_dict() != runs[2].census_dict()
    for m in METRICS:
        a = (tmp_path / "o0" / "census" / f"{m}.bin").read_bytes()
        assert a == (tmp_path / "o1" / "census" / f"{m}.bin").read_bytes()
    assert [p.read_bytes() for p in sorted((tmp_path / "o0" / "corpus").iterdir())] == \
        [p.read_bytes() for p in sorted((tmp_path / "o1" / "corpus").iterdir())]


def test_result_document_roundtrip_and_files(fake, tmp_path):
    corpus = _corpus(tmp_path, {"a": b"abcdef"})
    r = run_probe(binary=fake, out_dir=tmp_path / "out", corpus_dir=corpus, settings=ProbeSettings(max_execs=200))
    loaded = load_probe(tmp_path / "out")
    assert loaded.to_dict() == json.loads((tmp_path / "out" / "probe.json").read_text())
    assert loaded.census_dict() == r.census_dict()
    assert load_probe(tmp_path / "out" / "probe.json").to_dict() == loaded.to_dict()
    assert loaded.schema_version == 1
    edge = loaded.census_table("edge")
    assert edge.records.size == loaded.metric("edge").keys
    tr = loaded.traces("edge")
    assert sorted(tr) == [c.trace_seq for c in loaded.corpus]
    census_keys = set(edge.records["key"].tolist())
    assert all(set(v["key"].tolist()) <= census_keys for v in tr.values())
    assert loaded.corpus_inputs()[0] == b"abcdef"
    # the discovery curve is monotone and ends at the census totals
    for m in METRICS:
        keys = loaded.curve.keys[m]
        assert keys == sorted(keys) and keys[-1] == loaded.metric(m).keys
    assert not list((tmp_path / "out").glob(".staging-*"))
    assert not (tmp_path / "out" / "input.buf").exists()


def test_load_probe_errors(tmp_path):
    from autotune.errors import DocumentError

    with pytest.raises(DocumentError, match="not found"):
        load_probe(tmp_path)
    (tmp_path / "probe.json").write_text(json.dumps({"schema_version": 99}))
    with pytest.raises(DocumentError, match="schema_version"):
        load_probe(tmp_path)
    (tmp_path / "probe.json").write_text(json.dumps({"schema_version": 1, "config": {}}))
    with pytest.raises(DocumentError, match="malformed"):
        load_probe(tmp_path)


def test_server_death_keeps_previous_output(fake, tmp_path):
    out = tmp_path / "out"
    good = run_probe(binary=fake, out_dir=out, corpus_dir=_corpus(tmp_path, {"a": b"fine"}),
                     settings=ProbeSettings(max_execs=50))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x").write_bytes(b"DIE now")
    with pytest.raises(ServerError, match="died"):
        run_probe(binary=fake, out_dir=out, corpus_dir=bad, settings=ProbeSettings(max_execs=50))
    assert load_probe(out).census_dict() == good.census_dict()
    assert not list(out.glob(".staging-*"))


def test_not_a_probe_server(tmp_path):
    with pytest.raises(AutotuneError, match="without starting the probe server") as e:
        run_probe(binary=Path("/bin/true"), out_dir=tmp_path / "o", corpus_dir=None,
                  settings=ProbeSettings(max_execs=5))
    assert "autotune cc" in e.value.fix
    res = CliRunner().invoke(app, ["probe", "/bin/true", "-o", str(tmp_path / "o2")])
    assert res.exit_code == 1 and "no autotune probe server" in res.output and "Traceback" not in res.output


def test_corpus_edge_cases(fake, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run_probe(binary=fake, out_dir=tmp_path / "o1", corpus_dir=empty, settings=ProbeSettings(max_execs=50))
    assert any("empty" in n for n in r.notes) and r.campaign.seeds_ok == 1
    big = _corpus(tmp_path, {"big": b"x" * 5000, "small": b"tiny"})
    r = run_probe(binary=fake, out_dir=tmp_path / "o2", corpus_dir=big,
                  settings=ProbeSettings(max_execs=50, max_input_bytes=4096))
    assert r.campaign.seeds_skipped == 1 and any("over 4096 bytes" in n for n in r.notes)
    assert all(c.size_bytes <= 4096 for c in r.corpus)
    only_big = tmp_path / "only_big"
    only_big.mkdir()
    (only_big / "b").write_bytes(b"y" * 5000)
    with pytest.raises(AutotuneError, match="larger than 4096"):
        run_probe(binary=fake, out_dir=tmp_path / "o3", corpus_dir=only_big,
                  settings=ProbeSettings(max_input_bytes=4096))
    with pytest.raises(AutotuneError, match="does not exist"):
        run_probe(binary=fake, out_dir=tmp_path / "o4", corpus_dir=tmp_path / "nope")
    with pytest.raises(AutotuneError, match="not positive"):
        run_probe(binary=fake, out_dir=tmp_path / "o5", corpus_dir=None, settings=ProbeSettings(time_s=0))


def test_seed_corpus_bounded(tmp_path):
    from autotune.probe.seeds import load_seeds

    d = _corpus(tmp_path, {f"s{i:03d}": bytes([i]) * 10 for i in range(30)})
    s = load_seeds(corpus_dir=d, max_input_bytes=100, max_files=12)
    assert len(s.inputs) == 12 and s.not_read == 18 and any("bounded" in n for n in s.notes)
    s = load_seeds(corpus_dir=d, max_input_bytes=100, max_total_bytes=55)
    assert len(s.inputs) == 5


def test_census_full_is_reported(fake, tmp_path):
    r = run_probe(binary=fake, out_dir=tmp_path / "o", corpus_dir=_corpus(tmp_path, {"a": b"abcdefghij"}),
                  settings=ProbeSettings(max_execs=100, capacity=16))
    assert r.campaign.census_full
    assert any("census table full" in n for n in r.notes)
    assert all(m.keys <= 16 for m in r.metrics) and r.metric("ngram-8").dropped_keys > 0


def test_time_budget(fake, tmp_path):
    r = run_probe(binary=fake, out_dir=tmp_path / "o", corpus_dir=_corpus(tmp_path, {"a": b"abc"}),
                  settings=ProbeSettings(time_s=2.0, engine="havoc"))
    assert r.campaign.stop_reason == "time" and r.campaign.execs > 10
    assert r.campaign.loop_s < 3.0  # stops before the deadline, give or take one execution


def test_cli_json_equals_the_written_document(fake, tmp_path):
    corpus = _corpus(tmp_path, {"a": b"abcdef", "b": b"CRASH"})
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["probe", str(fake), "-c", str(corpus), "--max-execs", "150", "--seed", "2",
                                   "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc == load_probe(out).to_dict()
    assert doc["config"]["seed"] == 2 and doc["campaign"]["execs"] == 150


def test_cli_summary_table(fake, tmp_path):
    corpus = _corpus(tmp_path, {"a": b"abcdef", "b": b"CRASH", "c": b"HANG"})
    res = CliRunner().invoke(app, ["probe", str(fake), "-c", str(corpus), "--max-execs", "100",
                                   "-o", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    for word in ("coverage census", "ngram-8", "ctx-8", "crash: crashes/crash-000001-sig06", "hang: hangs/"):
        assert word in res.output


def test_cli_target_choice_errors(tmp_path):
    res = CliRunner().invoke(app, ["probe", "-o", str(tmp_path / "o")])
    assert res.exit_code == 1 and "exactly one target" in res.output
    res = CliRunner().invoke(app, ["probe", str(tmp_path / "missing"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 1 and "does not exist" in res.output


def test_analysis_agrees_with_equation1_on_fake_keys(fake, tmp_path):
    """The fake's ids are uniform: every metric's collisions sit within 4 sd of Equation 1."""
    r = run_probe(binary=fake, out_dir=tmp_path / "o", corpus_dir=_corpus(tmp_path, {"a": b"abcdefgh" * 3}),
                  settings=ProbeSettings(max_execs=600, seed=5))
    for m in r.metrics:
        for row in m.map_sizes:
            assert abs(row.collision_rate - row.eq1_collision_rate) <= 4 * row.eq1_sd + 1.0 / m.keys, (m.metric, row)
    assert np.isfinite(r.metric("ctx").richness.estimate)


def test_interrupt_finishes_with_a_partial_census(fake, tmp_path):
    """Ctrl-C (KeyboardInterrupt, here raised from the progress callback) ends the loop, not the probe."""
    calls = []

    def on_progress(p):
        calls.append(p)
        if p.phase == "havoc" and p.execs > 50:
            raise KeyboardInterrupt

    r = run_probe(binary=fake, out_dir=tmp_path / "o", corpus_dir=_corpus(tmp_path, {"a": b"abcdef"}),
                  on_progress=on_progress, settings=ProbeSettings(time_s=30, engine="havoc"))
    assert r.campaign.stop_reason == "interrupt" and any("interrupted" in n for n in r.notes)
    assert load_probe(tmp_path / "o").census_dict() == r.census_dict()
    assert calls[0].phase == "seeds" and calls[-1].phase == "trace"


def test_live_view_and_summary_render(fake, tmp_path):
    from rich.console import Console

    from autotune.probe.campaign import Progress
    from autotune.probe.display import live_view, summary_table

    con = Console(width=120, record=True, file=open(os.devnull, "w"))
    con.print(live_view(Progress(phase="havoc", elapsed_s=3.2, time_budget_s=60, execs=12345, max_execs=None,
                                 execs_per_s=3858.0, crashes=2, hangs=1, kept=40, total_keys=tuple(range(14)))))
    text = con.export_text()
    assert "elapsed   3.2 / 60 s" in text and "3,858 execs/s" in text and "crashes 2" in text
    assert "ngram-8" in text and "ctx-8" in text
    r = run_probe(binary=fake, out_dir=tmp_path / "o", corpus_dir=_corpus(tmp_path, {"a": b"abcdef"}),
                  settings=ProbeSettings(max_execs=60))
    con.print(summary_table(r))
    assert "coverage census" in con.export_text()


def test_trace_limit(fake, tmp_path):
    r = run_probe(binary=fake, out_dir=tmp_path / "o", corpus_dir=_corpus(tmp_path, {"a": b"abcdefgh"}),
                  settings=ProbeSettings(max_execs=100, max_trace_inputs=3))
    assert [c.trace_seq for c in r.corpus[:4]] == [0, 1, 2, None]
    assert any("traced the first 3 of" in n and "--max-trace-inputs" in n for n in r.notes)
    assert sorted(load_probe(tmp_path / "o").traces("edge")) == [0, 1, 2]


def test_output_dir_guards(fake, tmp_path):
    corpus = _corpus(tmp_path, {"a": b"abc"})
    # the seeds inside the output directory, where corpus/ would be replaced
    own = tmp_path / "proj"
    (own / "corpus").mkdir(parents=True)
    (own / "corpus" / "seed").write_bytes(b"precious")
    with pytest.raises(AutotuneError, match="not from a probe"):
        run_probe(binary=fake, out_dir=own, corpus_dir=corpus, settings=ProbeSettings(max_execs=10))
    with pytest.raises(AutotuneError, match="replaces"):
        run_probe(binary=fake, out_dir=own, corpus_dir=own / "corpus", settings=ProbeSettings(max_execs=10))
    assert (own / "corpus" / "seed").read_bytes() == b"precious"
    (tmp_path / "file").write_text("x")
    with pytest.raises(AutotuneError, match="not a directory"):
        run_probe(binary=fake, out_dir=tmp_path / "file", corpus_dir=corpus, settings=ProbeSettings(max_execs=10))
    # a previous probe's output is replaced, other files beside it are kept
    out = tmp_path / "out"
    run_probe(binary=fake, out_dir=out, corpus_dir=corpus, settings=ProbeSettings(max_execs=10))
    (out / "notes.txt").write_text("mine")
    run_probe(binary=fake, out_dir=out, corpus_dir=corpus, settings=ProbeSettings(max_execs=20))
    assert load_probe(out).campaign.execs == 20 and (out / "notes.txt").read_text() == "mine"
    assert not list(out.glob(".old-*"))


def test_summary_lists_ten_findings_and_counts_the_rest(fake, tmp_path):
    from rich.console import Console

    from autotune.probe.display import summary_table

    corpus = _corpus(tmp_path, {f"c{i:02d}": b"CRASH" + bytes([i]) for i in range(12)} | {"a": b"ok input"})
    r = run_probe(binary=fake, out_dir=tmp_path / "o", corpus_dir=corpus, settings=ProbeSettings(max_execs=13))
    assert r.campaign.crashes == 12 and len(r.crashes) == 12
    con = Console(width=200, record=True, file=open(os.devnull, "w"))
    con.print(summary_table(r))
    text = con.export_text()
    assert text.count("crash: crashes/") == 10 and "... and 2 more crashes: 12 distinct inputs" in text


def test_metric_subset(fake, tmp_path):
    r = run_probe(binary=fake, out_dir=tmp_path / "o", corpus_dir=_corpus(tmp_path, {"a": b"abcdef"}),
                  settings=ProbeSettings(max_execs=50, metrics=["ctx", "edge"]))
    assert [m.metric for m in r.metrics] == ["edge", "ctx"] and r.config.metrics == ["edge", "ctx"]
    assert sorted(r.curve.keys) == ["ctx", "edge"]
    loaded = load_probe(tmp_path / "o")
    assert loaded.to_dict()["files"]["census"] == ["census/edge.bin", "census/ctx.bin"]
    assert not (tmp_path / "o" / "census" / "ngram-8.bin").exists()
    with pytest.raises(AutotuneError, match="unknown metric"):
        run_probe(binary=fake, out_dir=tmp_path / "o2", corpus_dir=None,
                  settings=ProbeSettings(max_execs=5, metrics=["edges"]))


def test_relative_paths(fake, tmp_path, monkeypatch):
    """`autotune probe ./harness -c seeds -o out` from the harness's directory (the server runs elsewhere)."""
    _corpus(tmp_path, {"a": b"abcdef"})
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["probe", f"./{fake.name}", "-c", "seeds", "--max-execs", "30", "-o", "out"])
    assert res.exit_code == 0, res.output
    assert load_probe(tmp_path / "out").campaign.execs == 30
