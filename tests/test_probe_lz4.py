"""End to end on a real third-party target: lz4 (Debian's source package, benchmarks/targets/libraries.py)."""

import shutil

import pytest

from autotune import vocabulary as equation1
from autotune.probe import load_probe, run_probe
from autotune.probe.options import ProbeSettings

from targets.libraries import LZ4, TargetUnavailable

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def lz4_corpus(tmp_path_factory):
    try:
        files = LZ4.sample_inputs()
    except TargetUnavailable as exc:
        pytest.skip(f"lz4 sources unavailable: {exc}")
    d = tmp_path_factory.mktemp("lz4-seeds")
    for p in files:
        shutil.copy(p, d / p.name)
    return d


def test_lz4_census(lz4_corpus, tmp_path):
    harness = LZ4.build_harness(cc_kind="autotune")
    r = run_probe(binary=harness, out_dir=tmp_path / "out", corpus_dir=lz4_corpus,
                  settings=ProbeSettings(max_execs=800, seed=1, timeout_ms=2000))
    c = r.campaign
    assert c.seeds_ok + c.seeds_crash + c.seeds_hang == c.seeds_total
    assert c.execs == 800 and c.execs_ok + c.crashes + c.hangs == 800
    edge = r.metric("edge")
    assert edge.keys > 300
    for m in ("ngram-4", "ngram-8", "ctx", "ctx-2"):
        assert r.metric(m).keys > edge.keys, m
    # lz4's match-copy loops run far more than 255 times in one execution
    assert edge.overflow[0].overflow_keys > 0 and edge.max_hits_max > 255
    assert edge.overflow[0].overflow_keys >= edge.overflow[1].overflow_keys >= edge.overflow[2].overflow_keys
    for row in edge.map_sizes:  # edge ids are uniform: Equation 1 within 4 sd
        tol = 4 * equation1.collision_rate_sd(H=row.map_bytes, n=edge.keys) + 1.0 / edge.keys
        assert abs(row.collision_rate - row.eq1_collision_rate) <= tol, row
    loaded = load_probe(tmp_path / "out")
    assert loaded.census_dict() == r.census_dict()
    traced = [c.trace_seq for c in r.corpus if c.trace_seq is not None]
    assert traced and sorted(loaded.traces("edge")) == traced  # bounded (64 MiB), notes say so
    assert len(traced) == len(r.corpus) or any("traced the first" in n for n in r.notes)


def test_lz4_plain_build_runs_under_the_probe(lz4_corpus, tmp_path):
    """The uninstrumented baseline (same driver, no coverage) runs the same campaign machinery."""
    harness = LZ4.build_harness(cc_kind="plain")
    r = run_probe(binary=harness, out_dir=tmp_path / "out", corpus_dir=lz4_corpus,
                  settings=ProbeSettings(max_execs=300, timeout_ms=2000))
    assert r.campaign.execs == 300 and all(m.keys == 0 for m in r.metrics)
