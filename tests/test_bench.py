"""autotune bench: trace files, the bench.c harness (correctness, not timings), the command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from autotune.cli.main import app
from autotune.errors import AutotuneError, DocumentError
from autotune.measure import native
from autotune.measure.bench import BenchCase, BenchResult, BenchSettings, run_bench
from autotune.measure.markdown import render_bench_md
from autotune.measure.trace import KeyTrace, read_trace_file, synthetic_trace, write_trace_file
from autotune.metrics import index_key
from autotune.paths import kernels_dir


def _trace(keys_per_exec: list[list[tuple[int, int]]]) -> KeyTrace:
    offsets = np.cumsum([0] + [len(e) for e in keys_per_exec]).astype(np.uint64)
    keys = np.array([k for e in keys_per_exec for k, _ in e], dtype=np.uint32)
    counts = np.array([c for e in keys_per_exec for _, c in e], dtype=np.uint32)
    return KeyTrace(source="test", offsets=offsets, keys=keys, counts=counts)


def test_trace_file_round_trip(tmp_path):
    tr = synthetic_trace(n_keys=300, seed=3, n_execs=5)
    p = write_trace_file(tmp_path / "traces" / "edge.bin", tr)
    back = read_trace_file(p, key_hash="afl")
    assert np.array_equal(back.offsets, tr.offsets)
    assert np.array_equal(back.keys, tr.keys) and np.array_equal(back.counts, tr.counts)
    exact = read_trace_file(p)  # the runtime's default index key of the file's metric (edge: mix64)
    assert np.array_equal(exact.keys, (index_key(tr.keys.astype(np.uint64), metric="edge")
                                       & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    with pytest.raises(AutotuneError, match="key hash"):
        read_trace_file(p, key_hash="nope")


def test_truncated_trace_file_is_a_clear_error(tmp_path):
    tr = synthetic_trace(n_keys=50, seed=1, n_execs=2)
    p = write_trace_file(tmp_path / "t.bin", tr)
    p.write_bytes(p.read_bytes()[:-5])
    with pytest.raises(DocumentError, match="truncated"):
        read_trace_file(p, metric="edge")
    with pytest.raises(AutotuneError, match="cannot tell the metric"):  # t.bin: no metric in the name
        read_trace_file(p)


def test_synthetic_trace_is_seeded():
    a, b = synthetic_trace(n_keys=1000, seed=9), synthetic_trace(n_keys=1000, seed=9)
    c = synthetic_trace(n_keys=1000, seed=10)
    assert np.array_equal(a.keys, b.keys) and np.array_equal(a.counts, b.counts)
    assert not np.array_equal(a.keys, c.keys)
    assert a.distinct_keys == 1000


def test_twolevel_assigns_one_slot_per_distinct_key():
    tr = _trace([[(5, 1), (7, 300), (9, 2)], [(5, 4), (11, 1)]])
    raw = native.run_case(trace=tr, layout="twolevel", width_bits=8, map_slots=1 << 12,
                          timing=native.Timing(rounds=2, round_s=0.0))
    assert raw.used_key == 4 and raw.overflow_keys == 0
    rounds = raw.rounds
    assert rounds.shape == (2, len(native.FIELDS))
    execs = rounds[:, 5]
    # each round runs whole executions of the trace, cyclically: hits follow from the execs
    assert np.all(execs >= 3)
    assert np.all(np.isfinite(rounds[:, :5]))


def test_flat_covers_every_slot_and_dense_overflow_is_counted():
    tr = synthetic_trace(n_keys=100, seed=2, n_execs=3)
    flat = native.run_case(trace=tr, layout="flat", width_bits=16, map_slots=1 << 13,
                           timing=native.Timing(rounds=1, round_s=0.0))
    assert flat.used_key == 1 << 13
    small = native.run_case(trace=tr, layout="twolevel", width_bits=32, map_slots=1 << 16, capacity=16,
                            timing=native.Timing(rounds=1, round_s=0.0))
    assert small.used_key == 16
    assert small.overflow_keys == tr.distinct_keys - 16


def test_hits_replayed_match_the_trace():
    tr = _trace([[(1, 10), (2, 20)], [(3, 5)]])
    raw = native.run_case(trace=tr, layout="flat", width_bits=64, map_slots=1 << 13,
                          timing=native.Timing(rounds=1, round_s=0.0, min_execs=2, max_execs=2))
    assert raw.rounds[0, 5] == 2 and raw.rounds[0, 6] == 35  # both executions: 10 + 20 + 5 hits


def test_bad_configuration_is_an_autotune_error():
    tr = synthetic_trace(n_keys=10, seed=0, n_execs=1)
    with pytest.raises(AutotuneError):
        native.run_case(trace=tr, layout="flat", width_bits=12, map_slots=1 << 13)
    with pytest.raises(AutotuneError):
        native.run_case(trace=tr, layout="flat", width_bits=8, map_slots=3000)  # not a power of two


def _case(layout, w, s, total):
    return BenchCase(layout=layout, width_bits=w, map_slots=s, reset_ns=total / 4, update_ns=total / 4,
                     classify_compare_ns=total / 4, hash_ns=total / 4, total_ns=total, total_ns_min=total,
                     total_ns_mad=0.0, update_ns_per_hit=1.0, hits_per_exec=10.0, execs=10, used_key=5,
                     overflow_keys=0, hugepage_bytes=None)


def test_ratios_interpolation_and_round_trip():
    sizes = (1 << 16, 1 << 18, 1 << 21)
    cases = []
    for s in sizes:
        cases += [_case("flat", 8, s, s / 100), _case("twolevel", 8, s, 100.0)]
    res = BenchResult(settings=BenchSettings(map_slots=sizes, widths=(8,)), trace={"source": "x"},
                      cases=tuple(cases), host=None, variant="scalar", timer_overhead_ns=20.0, elapsed_s=1.0,
                      target_exec_ns=1000.0)
    rows = {r["map_slots"]: r for r in res.ratios()}
    assert rows[1 << 16]["map_work_ratio"] == pytest.approx(6.554, abs=1e-3)
    assert rows[1 << 16]["paper_throughput_ratio"] == 0.98
    assert rows[1 << 21]["throughput_ratio"] == pytest.approx((1000 + (1 << 21) / 100) / 1100, rel=1e-3)
    assert res.cost_ns("flat", 8, 1 << 17) == pytest.approx((1 << 17) / 100, rel=1e-6)  # log-log exact for a power law
    assert res.shape()["twolevel"]["growth"] == 1.0
    assert BenchResult.from_dict(json.loads(json.dumps(res.to_dict()))).to_dict() == res.to_dict()
    md = render_bench_md(res)
    assert "| 64 KiB |" in md and "0.98x" in md and "33.1" not in md  # 8 MiB was not measured


def test_run_bench_small_sweep_has_every_case():
    tr = synthetic_trace(n_keys=200, seed=1, n_execs=4)
    st = BenchSettings(map_slots=(1 << 13, 1 << 14), widths=(8, 64), rounds=2, round_s=0.0, min_execs=1)
    res = run_bench(trace=tr, settings=st)
    assert len(res.cases) == 2 * 2 * 2
    for c in res.cases:
        assert c.execs >= 2 and c.hits_per_exec > 0
        distinct_slots = np.unique(tr.keys & np.uint32(c.map_slots - 1)).size  # index collisions share a slot
        assert c.used_key == (c.map_slots if c.layout == "flat" else distinct_slots)


def test_bench_command_writes_json_markdown_and_profile(tmp_path):
    out = tmp_path / "b"
    r = CliRunner().invoke(app, ["bench", "--synthetic-keys", "300", "--seed", "4", "--min-map-bytes", "8192",
                                 "--max-map-bytes", "65536", "--widths", "8", "--rounds", "2", "--round-ms", "1",
                                 "--out", str(out), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc == json.loads((out / "bench.json").read_text())
    assert doc["trace"]["source"] == "synthetic:keys=300,execs=64,seed=4"
    assert [row["map_slots"] for row in doc["ratios"]] == [8192, 16384, 32768, 65536]
    assert "BigMap" in (out / "bench.md").read_text()
    assert (out / "host-profile.json").is_file()


@pytest.mark.parametrize("args, msg", [
    (["--synthetic-keys", "10", "--max-map-bytes", "1000"], "power of two"),
    (["--widths", "8,12", "--synthetic-keys", "10"], "widths"),
    ([], "exactly one trace source"),
])
def test_bench_command_bad_input(tmp_path, args, msg):
    r = CliRunner().invoke(app, ["bench", "--out", str(tmp_path / "o"), *args])
    assert r.exit_code == 1
    assert msg in r.output and "fix:" in r.output
    assert not (tmp_path / "o" / "bench.json").exists()


C_MAIN = r"""
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
typedef struct { int32_t layout; uint32_t width_bits; int32_t policy; uint32_t flags;
  uint64_t index_slots, capacity; uint32_t warmup_rounds, rounds; uint64_t round_ns, min_execs, max_execs; } spec;
typedef struct { double o; uint64_t u, ov; int64_t hp; uint64_t sink; char v[16]; } info;
typedef struct { uint64_t n; const uint64_t *off; const uint32_t *k; const uint32_t *c; } trace;
int at_bench_run(const spec *, const trace *, double *, info *);
int main(void) {
  uint64_t off[4] = {0, 3, 5, 9};
  uint32_t k[9] = {1, 2, 3, 1, 4000000000u, 7, 8, 9, 10}, c[9] = {1, 300, 70000, 2, 1, 1, 1, 1, 5};
  trace t = {3, off, k, c};
  double out[3 * 7];
  for (int layout = 0; layout < 3; layout++) /* flat, twolevel, exact */
    for (uint32_t w = 8; w <= 64; w *= 2)
      for (int pol = 0; pol < 3; pol++) {
        spec s = {layout, w, pol, 1, 1u << 13, layout ? 4 : 0, 1, 3, 0, 2, 0};
        info i;
        int rc = at_bench_run(&s, &t, out, &i);
        if (rc != 0) { printf("rc %d\n", rc); return 1; }
        if (layout && i.ov != 10 - 1 - 4 + 0 && i.u != 4) { printf("bad used %llu\n", (unsigned long long)i.u); return 1; }
      }
  spec bad = {3, 8, 0, 1, 1u << 13, 4, 1, 3, 0, 2, 0};
  info bi;
  if (at_bench_run(&bad, &t, out, &bi) == 0) { puts("layout 3 accepted"); return 1; }
  puts("ok");
  return 0;
}
"""


@pytest.mark.slow
def test_bench_c_under_asan_ubsan(tmp_path):
    """bench.c with the bigmap sources, every layout/width/policy, under ASan+UBSan (clang)."""
    kd = kernels_dir()
    (tmp_path / "main.c").write_text(C_MAIN)
    srcs = [str(p) for p in native.bench_sources()]
    exe = tmp_path / "bench-asan"
    cc = subprocess.run(["clang", "-std=c11", "-g", "-O1", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
                         "-fno-sanitize-recover=all", f"-I{kd}", "-o", str(exe), str(tmp_path / "main.c"), *srcs,
                         "-lpthread"], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "ok"


def test_bench_c_is_warning_free():
    kd = kernels_dir()
    for cc in ("clang", "gcc"):
        r = subprocess.run([cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", f"-I{kd}",
                            str(Path(kd) / "bench.c")], capture_output=True, text=True)
        assert r.returncode == 0, f"{cc}: {r.stderr}"
