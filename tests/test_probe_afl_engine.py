"""The probe's afl-fuzz engine (issue 12): the runtime's union map under the real afl-showmap, and
the probe run with the real afl-fuzz as its engine on the demo; the fallback without AFL++."""

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from autotune import demo
from autotune.errors import AutotuneError
from autotune.probe import run_probe
from autotune.probe.options import ProbeSettings
from autotune.probe.afl_engine import union_env
from autotune.target import demo_harness

pytestmark = pytest.mark.slow

AFL_FUZZ, AFL_SHOWMAP = shutil.which("afl-fuzz"), shutil.which("afl-showmap")
needs_afl = pytest.mark.skipif(not (AFL_FUZZ and AFL_SHOWMAP), reason="afl++ is not installed")
SLOTS = 1 << 20  # few collisions among one seed's keys: the multisets below compare exactly


@pytest.fixture(scope="module")
def demo_bin() -> Path:
    return demo_harness()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AFL_", "AUTOTUNE_", "__AFL"))}
    return {**env, "AFL_QUIET": "1", **extra}


def _counts(binary: Path, seeds: Path, out: Path, env: dict[str, str]) -> dict[str, Counter]:
    """{seed file: multiset of the raw counts afl-showmap saw} (slot positions differ by design)."""
    proc = subprocess.run([AFL_SHOWMAP, "-r", "-i", str(seeds), "-o", str(out), "--", str(binary)], env=env,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return {f.name: Counter(int(ln.split(":")[1]) for ln in f.read_text().split()) for f in sorted(out.iterdir())}


@needs_afl
def test_union_map_of_one_metric_holds_that_metrics_keys_and_counts(demo_bin, tmp_path):
    """AUTOTUNE_AFL_UNION=edge gives afl the same keys with the same hit counts as the edge
    metric's own flat map (saturating at 255 both): only the slots differ."""
    union = _counts(demo_bin, demo.seed_dir(), tmp_path / "u",
                    _env(**union_env(["edge"], slots=SLOTS)))
    edge = _counts(demo_bin, demo.seed_dir(), tmp_path / "e",
                   _env(AUTOTUNE_METRIC="edge", AUTOTUNE_LAYOUT="flat", AUTOTUNE_MAP_SIZE=str(SLOTS),
                        AUTOTUNE_KEY_HASH="exact", AUTOTUNE_OVERFLOW="saturate"))
    assert union.keys() == edge.keys() and len(union) >= 3
    for name in union:
        assert union[name] == edge[name], name
        assert sum(union[name].values()) > 0


@needs_afl
def test_union_map_of_two_metrics_is_both_maps(demo_bin, tmp_path):
    one = {m: _counts(demo_bin, demo.seed_dir(), tmp_path / m, _env(**union_env([m], slots=SLOTS)))
           for m in ("ngram-4", "ctx")}
    both = _counts(demo_bin, demo.seed_dir(), tmp_path / "both", _env(**union_env(["ngram-4", "ctx"], slots=SLOTS)))
    every = _counts(demo_bin, demo.seed_dir(), tmp_path / "all", _env(**union_env(None, slots=SLOTS)))
    for name in both:
        assert both[name] == one["ngram-4"][name] + one["ctx"][name], name
        assert sum(every[name].values()) > sum(both[name].values())  # 14 metrics hold more keys than 2


@needs_afl
def test_union_map_refuses_a_bad_metric_list(demo_bin, tmp_path):
    proc = subprocess.run([AFL_SHOWMAP, "-o", str(tmp_path / "o"), "--", str(demo_bin)], input=b"x",
                          env=_env(AUTOTUNE_AFL_UNION="edge,bogus", AUTOTUNE_LAYOUT="flat"),
                          capture_output=True, timeout=60)
    text = (proc.stdout + proc.stderr).decode(errors="replace")
    assert proc.returncode != 0
    assert "bad AUTOTUNE_AFL_UNION=edge,bogus: unknown metric 'bogus'" in text
    assert "fix: set AUTOTUNE_AFL_UNION to 1" in text


@needs_afl
def test_probe_with_the_afl_fuzz_engine(demo_bin, tmp_path):
    r = run_probe(binary=demo_bin, out_dir=tmp_path / "out", corpus_dir=demo.seed_dir(),
                  settings=ProbeSettings(time_s=8.0, seed=3, timeout_ms=300, engine="afl"))
    assert r.config.engine == "afl" and r.afl is not None
    assert r.afl.afl_version and r.afl.queue >= len(list(demo.seed_dir().iterdir()))
    assert any(n.startswith("engine: afl-fuzz") for n in r.notes)
    c = r.campaign
    assert c.seeds_ok == len(list(demo.seed_dir().iterdir()))
    # every seed ran before afl-fuzz; what afl-fuzz kept was replayed into the census after
    assert any(e.origin.startswith("afl-queue:") for e in r.corpus)
    assert r.metric("edge").keys > 0 and r.metric("ngram-8").keys > r.metric("edge").keys
    assert not (tmp_path / "out" / "afl").exists()  # afl-fuzz's directory stays in the staging area


def test_auto_engine_without_afl_fuzz_falls_back_and_says_so(demo_bin, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no afl-fuzz there
    r = run_probe(binary=demo_bin, out_dir=tmp_path / "out", corpus_dir=demo.seed_dir(),
                  settings=ProbeSettings(time_s=4.0, timeout_ms=300, engine="auto"))
    assert r.config.engine == "havoc" and r.afl is None
    assert any("afl-fuzz was not found" in n for n in r.notes)
    with pytest.raises(AutotuneError, match="afl-fuzz was not found"):
        run_probe(binary=demo_bin, out_dir=tmp_path / "out2", corpus_dir=demo.seed_dir(),
                  settings=ProbeSettings(time_s=4.0, engine="afl"))


def test_engine_arguments_are_checked(demo_bin, tmp_path):
    with pytest.raises(AutotuneError, match="unknown probe engine 'fast'"):
        run_probe(binary=demo_bin, out_dir=tmp_path / "o1", corpus_dir=None, settings=ProbeSettings(engine="fast"))
    with pytest.raises(AutotuneError, match="--max-execs and the afl-fuzz engine"):
        run_probe(binary=demo_bin, out_dir=tmp_path / "o2", corpus_dir=demo.seed_dir(),
                  settings=ProbeSettings(max_execs=100, engine="afl"))
