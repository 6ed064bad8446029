"""End to end: the real demo target built with the real wrapper and driver, probed for real."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from autotune import demo
from autotune.cli.main import app
from autotune.vocabulary import METRICS
from autotune.probe import load_probe, run_probe
from autotune.probe.options import ProbeSettings
from autotune import vocabulary as equation1
from autotune.target import demo_harness

pytestmark = pytest.mark.slow

CONTEXT = ("ctx", "caller", "ctx-2", "ctx-4", "ctx-8")
NGRAMS_ABOVE_EDGE = ("ngram-3", "ngram-4", "ngram-5", "ngram-6", "ngram-7", "ngram-8")


@pytest.fixture(scope="module")
def demo_bin():
    return demo_harness()


def test_demo_probe_within_budget_and_richer_metrics(tmp_path):
    budget = 6.0
    res = CliRunner().invoke(app, ["probe", "--demo", "--probe-time", str(budget), "-o", str(tmp_path / "out"),
                                   "--json", "--timeout-ms", "200"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    r = load_probe(tmp_path / "out")
    assert doc == r.to_dict()
    c = r.campaign
    assert c.stop_reason == "time" and c.seeds_ok == len(list(demo.seed_dir().iterdir()))
    # The loop starts no execution past its deadline (the budget less a 10 % reserve), and one
    # execution ends within --timeout-ms: a bound by construction, not by this host's speed. How
    # many executions or keys 6 s buy depends on the host: those are asserted on a fixed number of
    # executions below (test_same_seed_and_execs_same_census).
    assert c.loop_s <= budget
    edge = r.metric("edge").keys
    assert edge > 0
    for m in NGRAMS_ABOVE_EDGE + CONTEXT:
        assert r.metric(m).keys > edge, m
    assert r.metric("ngram-2").keys == edge  # the same (prev, cur) pairs
    assert c.kept == len(r.corpus) and c.execs >= c.seeds_ok


def test_crashing_and_hanging_inputs_in_the_corpus(demo_bin, tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(demo.seed_dir(), corpus)
    for p in demo.bad_inputs_dir().iterdir():
        if p.name.startswith(("crash-", "hang-")):  # canary-*: a known bug that only counts (not fatal here)
            shutil.copy(p, corpus / p.name)
    n_seeds = len(list(demo.seed_dir().iterdir()))
    r = run_probe(binary=demo_bin, out_dir=tmp_path / "out", corpus_dir=corpus,
                  settings=ProbeSettings(max_execs=n_seeds + 3, timeout_ms=300))
    c = r.campaign
    assert (c.seeds_total, c.seeds_ok, c.seeds_crash, c.seeds_hang) == (n_seeds + 3, n_seeds, 2, 1)
    reasons = {f.origin: f.reason for f in r.crashes + r.hangs}
    assert reasons["seed:crash-abort"].startswith("signal 6 (SIGABRT)")
    assert reasons["seed:crash-null"].startswith("signal 11 (SIGSEGV)")
    assert reasons["seed:hang-loop"].startswith("hang: no result within 300 ms")
    assert c.execs_ok == n_seeds and r.exec_time.count == n_seeds
    assert all(m.keys > 0 for m in r.metrics)
    for f in r.crashes + r.hangs:
        assert (tmp_path / "out" / f.file).read_bytes() == (demo.bad_inputs_dir() / f.origin[5:]).read_bytes()
        assert (tmp_path / "out" / f"{f.file}.txt").is_file()


def test_same_seed_and_execs_same_census(demo_bin, tmp_path):
    runs = [run_probe(binary=demo_bin, out_dir=tmp_path / f"o{i}", corpus_dir=demo.seed_dir(),
                      settings=ProbeSettings(time_s=120, max_execs=3000, seed=11, timeout_ms=300)) for i in range(2)]
    assert runs[0].campaign.stop_reason == runs[1].campaign.stop_reason == "execs"
    assert runs[0].metric("edge").keys >= 200  # 3,000 executions find a few hundred edges
    assert runs[0].census_dict() == runs[1].census_dict()
    for m in METRICS:
        a = runs[0].census_table(m).records
        b = runs[1].census_table(m).records
        assert np.array_equal(np.sort(a, order="key"), np.sort(b, order="key")), m


def test_hashed_collisions_agree_with_equation1(demo_bin, tmp_path):
    """Census collisions vs Equation 1, tolerance 4 sd of the occupied-slot count (+1 key).

    Edge and context ids are XORs of independent random block/function ids: they follow
    Equation 1. AFL++'s N-gram hash XORs the previous ids, so some distinct N-grams share the
    same 32-bit id (a block repeated inside the window cancels out): those collide at every
    map size, and the rest follow Equation 1 with n = distinct 32-bit ids.
    """
    r = run_probe(binary=demo_bin, out_dir=tmp_path / "o", corpus_dir=demo.seed_dir(),
                  settings=ProbeSettings(max_execs=5000, timeout_ms=300))
    for m in r.metrics:
        structural = m.keys - m.hk32_distinct
        if m.metric in ("edge", *CONTEXT):
            assert structural == 0, m.metric
        n = m.hk32_distinct
        for row in m.map_sizes:
            rate = 1 - row.slots_used / n
            want = equation1.collision_rate(H=row.map_bytes, n=n)
            tol = 4 * equation1.collision_rate_sd(H=row.map_bytes, n=n) + 1.0 / n
            assert abs(rate - want) <= tol, (m.metric, row.map_bytes, rate, want, tol)
    assert r.metric("ngram-8").keys > r.metric("ngram-8").hk32_distinct  # the structural part is real


def test_traces_replay_the_kept_corpus(demo_bin, tmp_path):
    r = run_probe(binary=demo_bin, out_dir=tmp_path / "o", corpus_dir=demo.seed_dir(),
                  settings=ProbeSettings(max_execs=500))
    loaded = load_probe(tmp_path / "o")
    for m in ("edge", "ctx", "ngram-4"):
        census = loaded.census_table(m).records
        tr = loaded.traces(m)
        assert sorted(tr) == [c.trace_seq for c in r.corpus]
        keys = set().union(*(set(v["key"].tolist()) for v in tr.values()))
        # the kept corpus reaches every key the campaign found (a key is found by a kept input)
        assert keys == set(census["key"].tolist()), m
        # per key, the largest count over the traced inputs is at most the census's max_hits
        mh = dict(zip(census["key"].tolist(), census["max_hits"].tolist()))
        assert all(int(c) <= mh[int(k)] for v in tr.values() for k, c in zip(v["key"], v["count"]))


def test_sanitizer_build_from_sources_reports_the_sanitizer(tmp_path):
    """`--source` builds the harness itself; an ASan+UBSan report becomes the crash's reason."""
    corpus = tmp_path / "corpus"
    shutil.copytree(demo.seed_dir(), corpus)
    for p in demo.bad_inputs_dir().iterdir():
        shutil.copy(p, corpus / p.name)
    n = len(list(corpus.iterdir()))
    san = "-fsanitize=address,undefined"
    res = CliRunner().invoke(app, ["probe", "--source", str(demo.harness_source()), "--cflags", f"-O1 -g {san}",
                                   # the time limit covers the sanitizer's report (symbolised): not too tight
                                   "--ldflags", san, "-c", str(corpus), "--max-execs", str(n), "--timeout-ms", "2000",
                                   "-o", str(tmp_path / "out"), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    reasons = {f["origin"]: f["reason"] for f in doc["crashes"]}
    assert "runtime error: store to null pointer" in reasons["seed:crash-null"]
    assert reasons["seed:crash-abort"].startswith("signal 6")
    assert [h["origin"] for h in doc["hangs"]] == ["seed:hang-loop"]
    null = next(f for f in doc["crashes"] if f["origin"] == "seed:crash-null")
    assert "parse_kv" in Path(f"{tmp_path / 'out' / null['file']}.txt").read_text()  # the report's stack


def test_metric_subset_and_rejected_settings(demo_bin, tmp_path):
    from autotune.probe.client import ServerError

    r = run_probe(binary=demo_bin, out_dir=tmp_path / "o", corpus_dir=demo.seed_dir(),
                  settings=ProbeSettings(max_execs=300, metrics=["edge", "ngram-4", "caller"]))
    assert [m.metric for m in r.metrics] == ["edge", "ngram-4", "caller"]
    assert r.metric("ngram-4").keys > r.metric("edge").keys > 0
    with pytest.raises(ServerError, match="rejected its settings") as e:
        run_probe(binary=demo_bin, out_dir=tmp_path / "o2", corpus_dir=demo.seed_dir(),
                  settings=ProbeSettings(max_execs=5, capacity=1 << 27))
    assert "AUTOTUNE_PROBE_CAPACITY" in e.value.message


@pytest.mark.xfail(strict=True, reason=(
    "a finding, not a fix: the demo's 'S' step machine (DEMO001, a tight loop of one-block steps) makes the exact "
    "ngram index key (exact ^ exact >> 32, no mix64) collide structurally for N = 5, 6: with 20,000 execs ngram-6 "
    "had 5-6 collisions at 2^22 slots where Equation 1 expects 1.2, and 2-3 at 2^24 (0.3); the demo without that "
    "machine had 0 and 0. For the runtime's owners (kernels/cov_keys.h); strict, so a fix turns this red"))
def test_exact_key_hash_has_no_structural_collisions(demo_bin, tmp_path):
    """The runtime's AUTOTUNE_KEY_HASH=exact index (mix64 of the exact key, ngram-N: its fold)
    follows Equation 1 for every metric, N-grams included (n = all keys)."""
    r = run_probe(binary=demo_bin, out_dir=tmp_path / "o", corpus_dir=demo.seed_dir(),
                  settings=ProbeSettings(max_execs=3000))
    for m in r.metrics:
        assert len(m.map_sizes_exact_hash) == len(m.map_sizes)
        for row in m.map_sizes_exact_hash:
            assert abs(row.collision_rate - row.eq1_collision_rate) <= 4 * row.eq1_sd + 1.0 / m.keys, (m.metric, row)
