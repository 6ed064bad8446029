"""`autotune validate`: the tuned configuration against the real AFL++ (Debian's afl-cc, afl-showmap,
afl-fuzz), side by side with AFL++'s default (PCGUARD) run the same way.

Three variants, each built, replayed over the probe's kept corpus with afl-showmap and fuzzed
for a time-box with afl-fuzz (HOST_ENV only: nothing on the host is changed):

- ``aflpp-default``: afl-clang-fast with no AFL_LLVM_* variable (PCGUARD), afl-fuzz with HOST_ENV;
- ``aflpp-tuned``: afl-clang-fast under afl-build.env, afl-fuzz under afl-run.env;
- ``autotune``: `autotune cc` build, afl-fuzz under autotune-run.env (issue 7's runtime), with
  AUTOTUNE_INDEX_FILE pointed into validate's own work directory.

Predicted occupancy comes from the probe's traces (autotune.validate.predict), predicted execs/s
from the recommendation (what tune's replay measured: autotune.recommendation). Each row says where and why the prediction misses.
validate.json (schema_version 1) is written atomically into the tuned directory.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from autotune import afl
from autotune.buildkinds import DEFAULT_KIND, KIND_VAR
from autotune.configuration import compiler_name
from autotune.errors import AutotuneError
from autotune.io import write_json_atomic
from autotune.mappoint import MapPoint
from autotune.preflight.tuned import AFL_HASHED_MAP_SLOTS, load_tuned
from autotune.probe.result import ProbeResult, load_probe
from autotune.runtime.afl_index import read_index_stats
from autotune.target import TargetSpec, build, build_vars_of, demo_spec
from autotune.recommendation import Recommendation
from autotune.validate import afl_runs, predict
from autotune.vocabulary import INDEX_FILE_VAR

SCHEMA_VERSION = 1
FILE_NAME = "validate.json"
DEFAULT_FUZZ_S = 10
MAX_SEED_BYTES = 1 << 20


@dataclass
class VariantResult:
    name: str
    description: str
    binary: str
    build_vars: dict[str, str]
    run_vars: dict[str, str]
    metric: str | None
    predicted: predict.Occupancy | None
    showmap: afl_runs.ShowmapResult
    fuzz: afl_runs.FuzzResult
    index_stats: dict | None = None  # two-level runtime: used_key/overflow_keys after afl-showmap
    predicted_execs_per_s: float | None = None
    execs_vs_default: float | None = None  # measured execs/s / aflpp-default's
    notes: list[str] = field(default_factory=list)

    @property
    def measured_slots(self) -> int:
        return self.showmap.tuples

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "binary": self.binary,
                "build_vars": self.build_vars, "run_vars": self.run_vars, "metric": self.metric,
                "predicted_occupancy": self.predicted.to_dict() if self.predicted else None,
                "measured_slots": self.measured_slots, "showmap": self.showmap.to_dict(),
                "index_stats": self.index_stats, "fuzz": self.fuzz.to_dict(),
                "predicted_execs_per_s": self.predicted_execs_per_s,
                "measured_execs_per_s": self.fuzz.execs_per_s,
                "execs_vs_default": self.execs_vs_default, "notes": list(self.notes)}


@dataclass
class ValidateResult:
    tuned_dir: str
    probe_dir: str
    target: dict
    fuzz_s: int
    corpus_inputs: int
    variants: list[VariantResult]
    predicted_speedup: float | None  # tune: tuned runtime config / AFL-default point of the metric
    measured_speedup: float | None  # afl-fuzz: autotune / aflpp-tuned
    notes: list[str] = field(default_factory=list)
    schema_version: int = SCHEMA_VERSION

    def variant(self, name: str) -> VariantResult:
        return next(v for v in self.variants if v.name == name)

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "tuned_dir": self.tuned_dir, "probe_dir": self.probe_dir,
                "target": self.target, "fuzz_s": self.fuzz_s, "corpus_inputs": self.corpus_inputs,
                "variants": [v.to_dict() for v in self.variants], "predicted_speedup": self.predicted_speedup,
                "measured_speedup": self.measured_speedup, "notes": list(self.notes)}


def _report_execs(rec: Recommendation, *, metric: str | None, layout: str, map_slots: int,
                  width: int) -> float | None:
    """execs_per_s tune recorded for a configuration (Recommendation.recorded_execs_per_s); None without tune."""
    point = MapPoint.of_slots(metric=str(metric), layout=layout, map_slots=map_slots, width_bits=width)
    return rec.recorded_execs_per_s(point)


def _seed_dir(corpus: Path, work: Path) -> Path:
    seeds = work / "seeds"
    shutil.rmtree(seeds, ignore_errors=True)
    seeds.mkdir(parents=True)
    n = 0
    for p in sorted(corpus.iterdir()) if corpus.is_dir() else []:
        if p.is_file() and 0 < p.stat().st_size <= MAX_SEED_BYTES:
            shutil.copyfile(p, seeds / p.name)
            n += 1
    if n == 0:
        (seeds / "empty-seed").write_bytes(b"\n")
    return seeds


def _target_spec(probe: ProbeResult, spec: TargetSpec | None) -> TargetSpec:
    if spec is not None:
        return spec
    if probe.config.demo:
        return demo_spec()
    raise AutotuneError("the probe was of a harness binary, and validate must rebuild it with afl-cc",
                        fix="pass the harness sources (--source FILE, --cflags, --ldflags) or an OSS-Fuzz style "
                            "--build-script that writes $OUT/fuzzer")


def run_validate(*, tuned_dir: Path, spec: TargetSpec | None = None, fuzz_s: int = DEFAULT_FUZZ_S,
                 probe_dir: Path | None = None, env: dict[str, str] | None = None,
                 progress: Callable[[str], None] | None = None) -> ValidateResult:
    """Build, replay and fuzz the three variants; write DIR/validate.json; return the result."""
    say = progress or (lambda _m: None)
    tuned = load_tuned(tuned_dir)
    pdir = probe_dir or tuned.probe_dir
    if pdir is None:
        raise AutotuneError(f"{tuned.path}/{tuned.recommendation.evidence} does not name the probe directory",
                            fix="pass --probe DIR")
    probe = load_probe(Path(pdir).resolve())
    spec = _target_spec(probe, spec)
    benv = afl.base_env(env)
    for tool in ("afl-fuzz", "afl-showmap", "afl-clang-fast"):
        afl.find_tool(tool, env=benv)
    work = tuned.path / "validate"
    work.mkdir(parents=True, exist_ok=True)
    corpus = probe.out_dir / "corpus"
    seeds = _seed_dir(corpus, work)
    results: list[VariantResult] = []
    rt = tuned.runtime

    plans = [("aflpp-default", "AFL++ default: afl-clang-fast (PCGUARD), 8-bit counters", "afl", {}, {}),
             ("aflpp-tuned", "AFL++ under afl-build.env + afl-run.env", "afl",
              build_vars_of(tuned.build_env.values), dict(tuned.run_env.values))]
    if tuned.autotune_env is not None:
        idx = work / "autotune" / "index.bin"
        run_vars = {**tuned.autotune_env.values, INDEX_FILE_VAR: str(idx)}
        bvars = tuned.autotune_build_vars  # the race's build kind (autotune-build.env); tune's: the full kind
        what = f"autotune cc build ({bvars.get(KIND_VAR, DEFAULT_KIND)} kind)"
        plans.append(("autotune", f"{what}, stock afl-fuzz under autotune-run.env", "autotune", bvars, run_vars))

    for name, desc, cc_kind, bvars, rvars in plans:
        vdir = work / name
        shutil.rmtree(vdir, ignore_errors=True)
        vdir.mkdir(parents=True)
        say(f"{name}: building with {compiler_name(cc_kind)}")
        binary = build(spec=spec, cc_kind=cc_kind, build_vars=bvars, env=benv)
        run_env = {**benv, **rvars, **afl.HOST_ENV}
        idx_path = rvars.get(INDEX_FILE_VAR)
        if idx_path:
            Path(idx_path).unlink(missing_ok=True)
        say(f"{name}: afl-showmap over {corpus}")
        sm = afl_runs.showmap(binary=binary, corpus=corpus, env=run_env, work=vdir)
        index_stats = None
        if idx_path and Path(idx_path).is_file():
            s = read_index_stats(path=idx_path)
            index_stats = {"used_key": s.used_key, "overflow_keys": s.overflow_keys, "keys": s.keys}
            Path(idx_path).unlink()
        say(f"{name}: afl-fuzz for {fuzz_s} s")
        fz = afl_runs.fuzz(binary=binary, seeds=seeds, env=run_env, work=vdir, seconds=fuzz_s)
        if name == "autotune" and rt is not None:
            metric = rt.metric
            pred = predict.predict_runtime(probe=probe, metric=metric, layout=rt.layout, map_slots=rt.map_slots,
                                           index_slots=rt.index_slots, key_hash=rt.key_hash)
            pe = _report_execs(tuned.recommendation, metric=metric, layout=rt.layout, map_slots=rt.hash_slots,
                               width=rt.counter_bits)
        else:
            metric = tuned.afl_metric if name == "aflpp-tuned" else None
            pred = predict.predict_afl(probe=probe, metric=metric, map_slots=AFL_HASHED_MAP_SLOTS) if metric else None
            pe = (_report_execs(tuned.recommendation, metric=metric, layout="flat", map_slots=AFL_HASHED_MAP_SLOTS, width=8)
                  if metric else None)
        results.append(VariantResult(name=name, description=desc, binary=str(binary), build_vars=bvars,
                                     run_vars=rvars, metric=metric, predicted=pred, showmap=sm, fuzz=fz,
                                     index_stats=index_stats, predicted_execs_per_s=pe))
    base = results[0].fuzz.execs_per_s
    for r in results:
        r.execs_vs_default = round(r.fuzz.execs_per_s / base, 3) if base > 0 else None
        r.notes = _explain(r, rt_seed=rt.seed if rt else None, probe=probe)
    by = {r.name: r for r in results}
    pred_speed = meas_speed = None
    if "autotune" in by and by["autotune"].predicted_execs_per_s and by["aflpp-tuned"].predicted_execs_per_s:
        pred_speed = round(by["autotune"].predicted_execs_per_s / by["aflpp-tuned"].predicted_execs_per_s, 3)
    if "autotune" in by and by["aflpp-tuned"].fuzz.execs_per_s > 0:
        meas_speed = round(by["autotune"].fuzz.execs_per_s / by["aflpp-tuned"].fuzz.execs_per_s, 3)
    notes = [f"afl-fuzz time-box {fuzz_s} s per variant, one run each, on a shared host: execs/s are single "
             "samples, compare ratios, not absolute figures"]
    if any(r.predicted_execs_per_s for r in results):
        notes.append("predicted execs/s are tune's replay measurements (our driver runs the kept corpus in one process: "
                     "no fork server, mutation or afl-fuzz bookkeeping, but every large input), so absolute rates differ "
                     "from afl-fuzz's; the ratio autotune / aflpp-tuned is the comparable figure")
    res = ValidateResult(tuned_dir=str(tuned.path), probe_dir=str(probe.out_dir), target=spec.to_dict(), fuzz_s=fuzz_s,
                         corpus_inputs=sm.inputs, variants=results, predicted_speedup=pred_speed,
                         measured_speedup=meas_speed, notes=notes)
    write_json_atomic(tuned.path / FILE_NAME, res.to_dict())
    return res


def _explain(r: VariantResult, *, rt_seed: int | None, probe: ProbeResult) -> list[str]:
    """Where and why the prediction misses, for one row."""
    notes = []
    if r.predicted is None:
        notes.append("no occupancy prediction: PCGUARD numbers guards one by one (collision-free, map = guard count), "
                     "a key set the census does not model")
    else:
        p, m = r.predicted.used_slots, r.measured_slots
        miss = (m - p) / p if p else 0.0
        if r.name == "aflpp-tuned":
            notes.append(f"occupancy {m} vs {p} predicted ({miss:+.1%}): AFL++'s CLASSIC pass instruments other blocks "
                         "than SanitizerCoverage's guards and draws its own block ids, so its tuples count another "
                         "key set; the census predicts the collision structure, not the exact count")
        elif r.index_stats is not None and r.index_stats["used_key"] == p:
            holes = r.index_stats["used_key"] - m
            notes.append(f"used keys {p} exactly as predicted (the same guards, ids and hash as the probe)"
                         + (f"; afl-showmap shows {holes} fewer tuples: slots whose only key came from an "
                            "input afl-showmap skipped (crash/timeout) or lost a slot race (a hole)" if holes else ""))
        elif m == p:
            notes.append("occupancy exactly as predicted: the same guards, ids (seed) and hash as the probe")
        else:
            why = []
            if rt_seed is not None and rt_seed != probe.config.seed:
                why.append(f"AUTOTUNE_SEED {rt_seed} differs from the probe's seed {probe.config.seed}")
            why.append("afl-showmap skips inputs that crash or time out, and a slot race leaves holes")
            notes.append(f"occupancy {m} vs {p} predicted ({miss:+.1%}): " + "; ".join(why))
        if r.index_stats and r.predicted.overflow_keys != r.index_stats["overflow_keys"]:
            notes.append(f"overflow keys {r.index_stats['overflow_keys']} vs {r.predicted.overflow_keys} predicted")
    if r.predicted_execs_per_s:
        ratio = r.fuzz.execs_per_s / r.predicted_execs_per_s
        why = ("afl-fuzz adds its fork server, mutation and per-exec bookkeeping" if ratio < 1 else
               "tune replays every kept corpus input (the large ones too), while afl-fuzz spends most executions "
               "on small mutants and trims: another input mix, so a cheaper average execution")
        notes.append(f"execs/s {r.fuzz.execs_per_s:.0f} measured = {ratio:.2f}x tune's {r.predicted_execs_per_s:.0f}: {why}")
    return notes
