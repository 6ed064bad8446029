"""The probe campaign: run the seeds, then a small coverage-guided havoc loop, then the census.

``run_probe`` is the core function (the CLI only validates and displays). The campaign works in
a staging directory inside the output directory; the server writes its shared files there. At
the end it traces every kept input, dumps the census, analyses it and moves the results into
place, probe.json last (atomically): an interrupted or failed probe leaves a previous good
output untouched.
"""

from __future__ import annotations

import array
import hashlib
import os
import random
import shutil
import signal
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from autotune.errors import AutotuneError
from autotune.io import write_json_atomic
from autotune.probe import protocol as P
from autotune.probe.afl_engine import (AFL_SHARE, AFL_START_S, ENGINES, MIN_AFL_SECONDS, AflEngineRun, afl_fuzz_path,
                                       run_afl_engine)
from autotune.probe.census import analyse, percentiles
from autotune.probe.client import ProbeServer, status_of
from autotune.probe.mutator import Havoc
from autotune.probe.options import ProbeSettings
from autotune.probe.result import (FILE_NAME, CampaignStats, CorpusEntry, Curve, Finding, ProbeConfig,
                                   ProbeResult)
from autotune.probe.output import check_out_dir, dir_bytes, install
from autotune.probe.seeds import load_seeds
from autotune.vocabulary import METRICS

# A crash's detail is the signal number, or this base + the exit status when the harness exit()ed.
EXIT_DETAIL_BASE = 256
MAX_SAVED_FINDINGS = 500  # per kind; more are counted, not saved
MAX_CURVE_POINTS = 512
MIN_MUTANT_LEN_CAP = 1024
PROGRESS_INTERVAL_S = 0.25
TRACE_COST_FACTOR = 4.0  # a TRACE vs one loop execution before one was timed (demo: 276 vs 70 us)
ANALYSIS_S_PER_KEY = 8e-6  # analysis + probe.json per census key (lz4: 171k keys, ~1.2 s measured)
MAX_TRACE_BYTES = 64 << 20  # traces stop growing beyond this (N-gram key lists get big)
_TOTALS = struct.Struct(f"<{P.N_METRICS}I")
_NEW = struct.Struct(f"<{P.N_METRICS}I")


@dataclass
class Progress:
    """A snapshot for the live display."""

    phase: str
    elapsed_s: float
    time_budget_s: float
    execs: int
    max_execs: int | None
    execs_per_s: float
    crashes: int
    hangs: int
    kept: int
    total_keys: tuple[int, ...]


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def _sanitizer_line(log: str) -> str | None:
    for line in log.splitlines():
        if "ERROR: AddressSanitizer" in line or "runtime error:" in line or "ERROR: " in line and "Sanitizer" in line:
            return line.strip()[:300]
    return None


class _Campaign:
    def __init__(self, *, server: ProbeServer, staging: Path, rng: random.Random, mutant_cap: int,
                 deadline: float, t0: float, on_progress, settings: ProbeSettings):
        self.server = server
        self.staging = staging
        self.rng = rng
        self.havoc = Havoc(rng=rng, max_len=mutant_cap)
        self.max_execs = settings.max_execs
        self.deadline = deadline
        self.t0 = t0
        self.on_progress = on_progress
        self.time_budget_s = settings.time_s
        self.max_trace = settings.max_trace_inputs
        self.traced = 0  # corpus entries [0, traced) have been traced (or tried)
        self.trace_s_each: float | None = None  # measured cost of one TRACE
        self.execs = self.execs_ok = 0
        self.exec_ns = array.array("Q")
        self.queue: list[bytes] = []
        self.ok_seeds: list[bytes] = []
        self.corpus: list[CorpusEntry] = []
        self.crashes: list[Finding] = []
        self.hangs: list[Finding] = []
        self.n_crashes = self.n_hangs = 0
        self.seen_findings: set[str] = set()
        self.totals: tuple[int, ...] = (0,) * P.N_METRICS
        self.curve: list[tuple[int, float, tuple[int, ...]]] = []
        self.census_full_metrics: set[int] = set()
        self.phase = "seeds"
        self.next_progress = 0.0
        for d in ("corpus", "crashes", "hangs"):
            (staging / d).mkdir(exist_ok=True)

    # --- one execution -------------------------------------------------------------------------
    def execute(self, data: bytes, origin: str) -> int:
        return self.account(data, origin, self.server.run(data))

    def account(self, data: bytes, origin: str, raw: bytes) -> int:
        """Book the reply ``raw`` of running ``data``: census counts, keep, crash or hang."""
        self.execs += 1
        status, detail, exec_ns = status_of(raw)
        if status == P.ST_OK or status == P.ST_FULL:
            self.execs_ok += 1
            self.exec_ns.append(exec_ns)
            if status == P.ST_FULL:
                self.census_full_metrics.add(detail)
            if raw[P.NEW_KEYS_SLICE] != P.NO_NEW_KEYS:
                self._keep(data, origin, raw)
        elif status == P.ST_CRASH:
            self._finding("crash", data, origin, detail)
        elif status == P.ST_HANG:
            self._finding("hang", data, origin, detail)
        else:
            raise AutotuneError(f"the probe server reported an error (status {status}, errno {detail}: "
                                f"{os.strerror(detail) if detail else '?'}) running an input of {len(data)} bytes",
                                fix="run again with --debug; if it persists, report it with the harness")
        if self.execs & 0xFFF == 0:
            self.server.trim_log()
        return status

    def _keep(self, data: bytes, origin: str, raw: bytes) -> None:
        self.queue.append(data)
        idx = len(self.corpus) + 1
        name = f"corpus/id-{idx:06d}"
        (self.staging / name).write_bytes(data)
        new = sum(_NEW.unpack_from(raw, 16))
        self.totals = _TOTALS.unpack_from(raw, 16 + 4 * P.N_METRICS)
        self.curve.append((self.execs, time.monotonic() - self.t0, self.totals))
        self.corpus.append(CorpusEntry(file=name, size_bytes=len(data), origin=origin, exec_index=self.execs,
                                       new_keys=new, trace_seq=None))

    def _finding(self, kind: str, data: bytes, origin: str, detail: int) -> None:
        if kind == "crash":
            self.n_crashes += 1
            n, found = self.n_crashes, self.crashes
            reason = (f"exited with status {detail - EXIT_DETAIL_BASE} inside the harness" if detail >= EXIT_DETAIL_BASE
                      else f"signal {detail} ({_signal_name(detail)})")
        else:
            self.n_hangs += 1
            n, found = self.n_hangs, self.hangs
            reason = f"hang: no result within {detail} ms (killed)"
        log = self.server.log_tail(max_bytes=4096, since_last=True)
        sha1 = hashlib.sha1(data).hexdigest()
        if sha1 in self.seen_findings or len(found) >= MAX_SAVED_FINDINGS:
            return
        self.seen_findings.add(sha1)
        san = _sanitizer_line(log) if kind == "crash" else None
        if san:
            reason = f"{reason}: {san}"
        dir_name = "crashes" if kind == "crash" else "hangs"
        suffix = ("" if kind != "crash" else f"-exit{detail - EXIT_DETAIL_BASE}" if detail >= EXIT_DETAIL_BASE
                  else f"-sig{detail:02d}")
        name = f"{dir_name}/{kind}-{n:06d}{suffix}"
        (self.staging / name).write_bytes(data)
        text = (f"{reason}\norigin: {origin}\nexecution: {self.execs}\nsize_bytes: {len(data)}\nsha1: {sha1}\n")
        if log.strip():
            text += f"\n--- the harness's stderr before it ---\n{log}\n"
        (self.staging / f"{name}.txt").write_text(text, encoding="utf-8")
        found.append(Finding(kind=kind, file=name, reason=reason, detail=detail, origin=origin,
                             size_bytes=len(data), sha1=sha1, exec_index=self.execs))

    # --- phases --------------------------------------------------------------------------------
    def done(self, now: float) -> str | None:
        if self.max_execs is not None and self.execs >= self.max_execs:
            return "execs"
        # leave time to trace the kept inputs not traced yet, and to analyse, within the budget
        if self.trace_s_each is not None:
            per_trace = self.trace_s_each
        else:
            per_trace = TRACE_COST_FACTOR * (now - self.t0) / self.execs if self.execs else 0.0
        untraced = max(min(len(self.corpus), self.max_trace) - self.traced, 0)
        if now + per_trace * untraced + self.finish_estimate_s() >= self.deadline:
            return "time"
        return None

    def trace_kept(self, *, deadline: float | None, notes: list[str] | None) -> None:
        """TRACE the kept inputs not traced yet (their trace_seq is their corpus index), timing it."""
        start, t0 = self.traced, time.monotonic()
        for i in range(self.traced, len(self.corpus)):
            why = ("--max-trace-inputs" if i >= self.max_trace
                   else "the time budget" if deadline is not None and time.monotonic() >= deadline
                   else f"{MAX_TRACE_BYTES >> 20} MiB of traces"
                   if i % 16 == 0 and dir_bytes(self.staging / "traces") > MAX_TRACE_BYTES else None)
            if why:
                if notes is not None:
                    notes.append(f"traced the first {i} of {len(self.corpus)} kept inputs (limit: {why})")
                break
            entry = self.corpus[i]
            rep = self.server.trace(self.queue[i], seq=i)
            self.traced = i + 1
            if rep.status in (P.ST_OK, P.ST_FULL):
                self.corpus[i] = CorpusEntry(**{**entry.to_dict(), "trace_seq": i})
            elif notes is not None:
                notes.append(f"{entry.file} did not replay ({P.STATUS_NAMES.get(rep.status, rep.status)}): "
                             f"the target is not deterministic")
        if self.traced > start:
            self.trace_s_each = (time.monotonic() - t0) / (self.traced - start)

    def finish_estimate_s(self) -> float:
        """Time to dump, analyse and write the census after tracing (grows with the keys)."""
        return ANALYSIS_S_PER_KEY * sum(self.totals)

    def progress(self, now: float, force: bool = False) -> None:
        if self.on_progress is None or (not force and now < self.next_progress):
            return
        self.next_progress = now + PROGRESS_INTERVAL_S
        el = now - self.t0
        self.on_progress(Progress(phase=self.phase, elapsed_s=el, time_budget_s=self.time_budget_s,
                                  execs=self.execs, max_execs=self.max_execs,
                                  execs_per_s=self.execs / el if el > 0 else 0.0, crashes=self.n_crashes,
                                  hangs=self.n_hangs, kept=len(self.corpus), total_keys=self.totals))

    def run_seeds(self, seeds: list[tuple[str, bytes]], counts: dict, origin: str = "seed:") -> tuple[str | None, dict]:
        for i, (name, data) in enumerate(seeds):
            now = time.monotonic()
            stop = self.done(now)
            if stop:
                counts["not_run"] = len(seeds) - i
                return stop, counts
            st = self.execute(data, f"{origin}{name}")
            if st in (P.ST_OK, P.ST_FULL):
                self.ok_seeds.append(data)
            counts["ok" if st in (P.ST_OK, P.ST_FULL) else "crash" if st == P.ST_CRASH else "hang"] += 1
            self.progress(now)
        return None, counts

    def run_havoc(self) -> str:
        """Mutate until the budget ends. The next input is built while the target runs the current
        one (it cannot see whether the current one is kept: deterministic all the same)."""
        self.phase = "havoc"
        r = self.rng.random
        mutate = self.havoc.mutate
        # without feedback (nothing kept: e.g. an uninstrumented baseline) mutate the seeds that ran
        fallback = list(self.ok_seeds) or [b""]
        server = self.server
        monotonic = time.monotonic

        def next_child() -> bytes:
            q = self.queue or fallback
            n = len(q)
            # half the time one of the 16 newest entries (fresh coverage), else any entry
            i = n - 1 - int(r() * min(n, 16)) if r() < 0.5 else int(r() * n)
            return mutate(q[i], other=q[int(r() * n)])

        child = next_child()
        while True:
            now = monotonic()
            stop = self.done(now)
            if stop:
                return stop
            self.progress(now)
            server.send(child)
            following = next_child()
            self.account(child, "havoc", server.recv())
            child = following


def _downsample(points: list, limit: int) -> list:
    if len(points) <= limit:
        return points
    idx = np.unique(np.linspace(0, len(points) - 1, limit).round().astype(int))
    return [points[i] for i in idx]


def _validate(*, time_s: float, max_execs: int | None, timeout_ms: int, max_input_bytes: int, capacity: int) -> None:
    if time_s <= 0:
        raise AutotuneError(f"time budget {time_s} s is not positive", fix="pass --time with a positive number")
    if max_execs is not None and max_execs < 1:
        raise AutotuneError(f"--max-execs {max_execs} is not positive", fix="pass --max-execs 1 or more")
    if timeout_ms < 1:
        raise AutotuneError(f"--timeout-ms {timeout_ms} is not positive", fix="pass --timeout-ms 1 or more")
    if max_input_bytes < 1 or capacity < 1 or capacity & (capacity - 1):
        raise AutotuneError("max_input_bytes must be >= 1 and capacity a power of two",
                            fix="pass --max-input-bytes >= 1 and --capacity as a power of two")


def _select_metrics(metrics: Sequence[str] | None) -> tuple[str, ...] | None:
    """None for every metric, else the chosen ones in census order (an unknown name is an error)."""
    if not metrics or list(metrics) == ["all"]:
        return None
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise AutotuneError(f"unknown metric(s) {', '.join(unknown)}", fix=f"choose from: all, {', '.join(METRICS)}")
    return tuple(m for m in METRICS if m in metrics)


def _afl_phase(*, settings: ProbeSettings, binary: Path, seeds: list[tuple[str, bytes]], staging: Path,
               seconds: float, metrics: Sequence[str] | None,
               notes: list[str]) -> tuple[AflEngineRun | None, list[tuple[str, bytes]]]:
    """afl-fuzz's part of the probe (``seconds`` of the time left after the seeds), when the engine
    is afl, or auto and afl-fuzz is installed; the census of ``metrics`` (None: all)."""
    engine, max_execs, seed = settings.engine, settings.max_execs, settings.seed
    if engine == "havoc":
        return None, []
    if max_execs is not None:  # an execution budget asks for a reproducible census: afl-fuzz's time-box is not
        if engine == "afl":
            raise AutotuneError("--max-execs and the afl-fuzz engine do not go together (afl-fuzz runs for a "
                                "time, not a number of executions)", fix="pass --engine havoc, or drop --max-execs")
        return None, []
    if afl_fuzz_path() is None:
        if engine == "afl":
            raise AutotuneError("afl-fuzz was not found on PATH", fix="install AFL++ (afl++), or pass --engine havoc")
        notes.append("afl-fuzz was not found: the probe mutated with its own havoc loop (install AFL++ so that "
                     "the census counts the keys afl-fuzz's mutations reach)")
        return None, []
    secs = int(seconds - AFL_START_S)
    if secs < MIN_AFL_SECONDS:
        if engine == "afl":
            raise AutotuneError(f"the probe's time left too little for afl-fuzz ({secs} s after the seeds, "
                                f"at least {MIN_AFL_SECONDS} s needed)", fix="pass a longer --probe-time")
        notes.append("the time left after the seeds was too short for afl-fuzz: the probe used its own havoc loop")
        return None, []
    try:
        run, inputs = run_afl_engine(binary=binary, seeds=seeds, work=staging / "afl", seconds=secs, seed=seed,
                                     metrics=metrics)
    except AutotuneError as exc:
        if engine == "afl":
            raise
        lines = exc.message.splitlines()
        why = next((ln.strip() for ln in reversed(lines) if ln.lstrip().startswith(("[-]", "[autotune]"))), "")
        notes.append(f"afl-fuzz could not run the harness ({lines[0].rstrip(':')}{': ' + why if why else ''}): "
                     f"the probe used its own havoc loop")
        return None, []
    finally:
        shutil.rmtree(staging / "afl" / "in", ignore_errors=True)
    notes.append(run.note())
    return run, inputs


def _build_result(*, camp: _Campaign, config: ProbeConfig, seeds, seed_counts: dict, stop: str,
                  loop_s: float, notes: list[str], afl_run: AflEngineRun | None = None) -> ProbeResult:
    """Read the census files the server wrote (in the campaign's staging directory), analyse them, and
    assemble the ProbeResult."""
    staging = camp.staging
    names = [m for m in METRICS if config.metrics is None or m in config.metrics]
    for m in names:
        tp = P.trace_path(staging, m)
        if not tp.exists():
            tp.parent.mkdir(exist_ok=True)
            tp.write_bytes(b"")
    tables = [P.read_census(P.census_path(staging, m), metric=m) for m in names]
    if camp.census_full_metrics:
        names = ", ".join(METRICS[i] for i in sorted(camp.census_full_metrics) if i < len(METRICS))
        notes.append(f"census table full for {names}: raise --capacity (now {config.capacity}) for an exact census")
    metrics = [analyse(table=t, executions=camp.execs_ok) for t in tables]
    for t in tables:
        if t.dropped:
            notes.append(f"{t.metric}: {t.dropped} key occurrence(s) found the census table full")
    ex = np.frombuffer(camp.exec_ns, dtype=np.uint64) if camp.exec_ns else np.zeros(0, dtype=np.uint64)
    mean_exec_ns = float(ex.mean()) if ex.size else 0.0
    pts = _downsample(camp.curve + [(camp.execs, loop_s, camp.totals)], MAX_CURVE_POINTS)
    curve = Curve(execs=[p[0] for p in pts], time_s=[round(p[1], 6) for p in pts],
                  keys={m: [p[2][j] for p in pts] for j, m in enumerate(METRICS) if m in names})
    stats = CampaignStats(
        execs=camp.execs, execs_ok=camp.execs_ok, crashes=camp.n_crashes, hangs=camp.n_hangs,
        kept=len(camp.corpus), seeds_total=len(seeds.inputs) + len(seeds.too_big) + seeds.not_read,
        seeds_ok=seed_counts["ok"], seeds_crash=seed_counts["crash"], seeds_hang=seed_counts["hang"],
        seeds_skipped=len(seeds.too_big) + seeds.not_read + seed_counts["not_run"],
        census_full=bool(camp.census_full_metrics or any(t.dropped for t in tables)), stop_reason=stop,
        elapsed_s=0.0, loop_s=loop_s, execs_per_s=camp.execs / loop_s if loop_s > 0 else 0.0,
        server_ns_per_exec=mean_exec_ns,
        overhead_ns_per_exec=max(loop_s * 1e9 / camp.execs - mean_exec_ns, 0.0) if camp.execs else 0.0)
    return ProbeResult(config=config, campaign=stats, exec_time=percentiles(values_ns=ex), metrics=metrics,
                       curve=curve, corpus=camp.corpus, crashes=camp.crashes, hangs=camp.hangs, notes=notes,
                       afl=afl_run)


def run_probe(*, binary: Path, out_dir: Path, corpus_dir: Path | None, settings: ProbeSettings = ProbeSettings(),
              demo: bool = False, on_progress: Callable[[Progress], None] | None = None) -> ProbeResult:
    """Run the probe campaign on ``binary`` as ``settings`` say and write the results to ``out_dir``
    (``demo``: the binary is the bundled demo's, as probe.json records).

    ``settings.engine``: ``havoc`` (default) mutates with the probe's own loop; ``afl`` runs afl-fuzz on
    the union map of every metric for most of the time and takes the census by replaying what it kept
    (afl_engine); ``auto`` is afl when afl-fuzz is installed, else havoc (and says so in the notes).
    havoc is the default because it reached more keys of every metric in 60 s on the demo and on
    libyaml (benchmarks/probe_engines.py, results in benchmarks/results/probe-engines-*).
    """
    engine, time_s, max_execs, seed = settings.engine, settings.time_s, settings.max_execs, settings.seed
    timeout_ms, max_input_bytes, capacity = settings.timeout_ms, settings.max_input_bytes, settings.capacity
    if engine not in ENGINES:
        raise AutotuneError(f"unknown probe engine {engine!r}", fix=f"choose one of: {', '.join(ENGINES)}")
    _validate(time_s=time_s, max_execs=max_execs, timeout_ms=timeout_ms, max_input_bytes=max_input_bytes,
              capacity=capacity)
    selected = _select_metrics(settings.metrics)
    t_start = time.monotonic()
    out_dir = Path(out_dir)
    check_out_dir(out_dir, corpus_dir)
    seeds = load_seeds(corpus_dir=corpus_dir, max_input_bytes=max_input_bytes)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        staging = out_dir / f".staging-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
    except OSError as exc:
        raise AutotuneError(f"cannot create the output directory {out_dir}: {exc.strerror}",
                            fix="choose a writable --out") from exc
    notes = list(seeds.notes)
    try:
        afl_run, afl_wall_s = None, 0.0
        server = ProbeServer(binary=binary, probe_dir=staging, seed=seed, max_input_bytes=max_input_bytes,
                             capacity=capacity, timeout_ms=timeout_ms, metrics=selected)
        with server:
            t0 = time.monotonic()
            # keep a reserve for tracing, dumping and analysing within the budget
            reserve = min(0.1 * time_s, 2.0)
            longest = max((len(d) for _, d in seeds.inputs), default=0)
            camp = _Campaign(server=server, staging=staging, rng=random.Random(seed),
                             mutant_cap=min(max_input_bytes, max(MIN_MUTANT_LEN_CAP, 2 * longest)),
                             deadline=t_start + time_s - reserve, t0=t0, on_progress=on_progress, settings=settings)
            seed_counts = {"ok": 0, "crash": 0, "hang": 0, "not_run": 0}
            try:
                stop, seed_counts = camp.run_seeds(seeds.inputs, seed_counts)
                # trace the kept seeds now: it measures what a TRACE costs, for the time budget
                camp.trace_kept(deadline=camp.deadline, notes=None)
                afl_inputs: list[tuple[str, bytes]] = []
                if stop is None:
                    camp.phase = "afl-fuzz"
                    camp.progress(time.monotonic(), force=True)
                    t_afl = time.monotonic()
                    afl_run, afl_inputs = _afl_phase(
                        settings=settings, binary=binary, seeds=seeds.inputs, staging=staging,
                        seconds=AFL_SHARE * (camp.deadline - t_afl), metrics=selected, notes=notes)
                    afl_wall_s = time.monotonic() - t_afl
                if stop is None and afl_inputs:
                    camp.phase = "replay"
                    afl_counts = {"ok": 0, "crash": 0, "hang": 0, "not_run": 0}
                    stop, afl_counts = camp.run_seeds(afl_inputs, afl_counts, origin="")
                    if afl_counts["not_run"]:
                        notes.append(f"replayed {len(afl_inputs) - afl_counts['not_run']} of the {len(afl_inputs)} "
                                     f"inputs afl-fuzz kept (limit: the time budget)")
                if stop is None:
                    if not camp.queue:
                        notes.append("no seed reached a coverage key: mutating the seeds that ran"
                                     if camp.ok_seeds else "no seed ran to completion: mutating from an empty input")
                    stop = camp.run_havoc()
            except KeyboardInterrupt:
                stop = "interrupt"
                server.drain()
                notes.append("interrupted: the census covers the executions done so far")
            loop_s = time.monotonic() - t0 - afl_wall_s  # the probe's own executions (afl-fuzz's are its own)
            camp.phase = "trace"
            camp.progress(time.monotonic(), force=True)
            camp.trace_kept(deadline=t_start + time_s - reserve - camp.finish_estimate_s(), notes=notes)
            rep = server.dump()
            if rep.status not in (P.ST_OK, P.ST_FULL):
                raise AutotuneError(f"the probe server could not write the census (status {rep.status}, "
                                    f"errno {rep.detail})", fix=f"check free space in {out_dir}")
        # the server has quit: its files are complete
        config = ProbeConfig(binary=str(Path(binary).resolve()), demo=demo,
                             corpus_dir=str(Path(corpus_dir).resolve()) if corpus_dir else None, seed=seed,
                             time_budget_s=time_s, max_execs=max_execs, timeout_ms=timeout_ms,
                             max_input_bytes=max_input_bytes, capacity=capacity,
                             metrics=list(selected) if selected else None,
                             engine="afl" if afl_run is not None else "havoc")
        result = _build_result(camp=camp, config=config, seeds=seeds, seed_counts=seed_counts,
                               stop=stop, loop_s=loop_s, notes=notes, afl_run=afl_run)
        result.out_dir = out_dir
        for name in (P.INPUT_BUF_NAME, "target.log"):
            (staging / name).unlink(missing_ok=True)
        result.campaign = CampaignStats(**{**result.campaign.to_dict(), "elapsed_s": time.monotonic() - t_start})
        write_json_atomic(staging / FILE_NAME, result.to_dict())
        install(staging, out_dir)
        return result
    finally:
        shutil.rmtree(staging, ignore_errors=True)

