"""What the probe's isolation costs: the same inputs run through the probe server (a forked,
re-forkable child behind two pipes, census merge after each input) and in-process by the
driver's replay mode (AUTOTUNE_REPLAY_ROUNDS: no fork, no protocol, one metric's map work).

    python -m autotune.probe.overhead BINARY CORPUS_DIR [--rounds N]   # prints JSON

Run it on an instrumented and on a plain build of the same harness to separate the cost of the
instrumentation from the cost of the isolation. Timing figures are for reports, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from autotune.errors import AutotuneError
from autotune.probe import protocol as P
from autotune.probe.client import ProbeServer
from autotune.vocabulary import METRIC_VAR


@dataclass(frozen=True)
class IsolationCost:
    binary: str
    inputs: int
    rounds: int
    probe_ns_per_exec: float  # wall time per RUN seen from Python (no mutation)
    target_ns_per_exec: float  # mean exec_ns the server measured around the harness call
    inprocess_ns_per_exec: float  # driver replay mode: in-process, no isolation, no protocol
    isolation_ns_per_exec: float  # probe - in-process: fork isolation + protocol + census merge

    @property
    def probe_execs_per_s(self) -> float:
        return 1e9 / self.probe_ns_per_exec if self.probe_ns_per_exec else 0.0

    @property
    def inprocess_execs_per_s(self) -> float:
        return 1e9 / self.inprocess_ns_per_exec if self.inprocess_ns_per_exec else 0.0

    def to_dict(self) -> dict:
        return {**self.__dict__, "probe_execs_per_s": self.probe_execs_per_s,
                "inprocess_execs_per_s": self.inprocess_execs_per_s}


def _inputs(corpus_dir: Path) -> list[bytes]:
    files = sorted(p for p in Path(corpus_dir).iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise AutotuneError(f"no inputs in {corpus_dir}", fix="pass a directory of inputs (e.g. a probe's corpus/)")
    return [p.read_bytes() for p in files]


def measure_isolation(*, binary: Path, corpus_dir: Path, rounds: int = 20, metric: str = "edge") -> IsolationCost:
    data = _inputs(corpus_dir)
    with tempfile.TemporaryDirectory(prefix="autotune-iso-") as tmp:
        with ProbeServer(binary=binary, probe_dir=Path(tmp), max_input_bytes=max(1 << 20, max(map(len, data)))) as s:
            for d in data:  # warm-up round, untimed
                s.run(d)
            exec_ns = 0
            n = 0
            t0 = time.perf_counter()
            for _ in range(rounds):
                for d in data:
                    raw = s.run(d)
                    st, _detail, ns = P.REPLY.unpack_from(raw)[:3]
                    if st in (P.ST_OK, P.ST_FULL):
                        exec_ns += ns
                        n += 1
            probe_ns = (time.perf_counter() - t0) * 1e9 / (rounds * len(data))
    env = {**os.environ, "AUTOTUNE_REPLAY_ROUNDS": str(rounds), METRIC_VAR: metric}
    proc = subprocess.run([str(binary), str(corpus_dir)], env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise AutotuneError(f"replay of {corpus_dir} with {binary} failed (exit {proc.returncode}): "
                            f"{proc.stderr.strip()[-500:]}", fix="check that every input runs without crashing")
    rep = json.loads(proc.stdout.strip().splitlines()[-1])
    inproc_ns = 1e9 / rep["execs_per_s"] if rep["execs_per_s"] else 0.0
    return IsolationCost(binary=str(binary), inputs=len(data), rounds=rounds, probe_ns_per_exec=probe_ns,
                         target_ns_per_exec=exec_ns / n if n else 0.0, inprocess_ns_per_exec=inproc_ns,
                         isolation_ns_per_exec=probe_ns - inproc_ns)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m autotune.probe.overhead", description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", type=Path)
    ap.add_argument("corpus_dir", type=Path)
    ap.add_argument("--rounds", type=int, default=20)
    a = ap.parse_args(argv)
    try:
        r = measure_isolation(binary=a.binary, corpus_dir=a.corpus_dir, rounds=a.rounds)
    except AutotuneError as exc:
        sys.stderr.write(f"error: {exc.message}\n  fix: {exc.fix}\n")
        return 1
    print(json.dumps(r.to_dict(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
