"""`autotune status OUT`: a running or finished portfolio at a glance, like afl-whatsup, with the
yardstick: per instance afl-fuzz's own figures (execs/s, queue, crashes, last find, alive or not),
and, given the target's recipe, the union of everything every instance kept replayed through one
yardstick (coverage over time, who found what first)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autotune.afl_output import instances_of, kept_inputs, read_fuzzer_stats
from autotune.errors import AutotuneError
from autotune.portfolio.launch import INDEX_DIR
from autotune.runtime.afl_index import campaign_index
from autotune.trials.yardstick import measure
from autotune.vocabulary import INDEX_FILE_VAR

# an instance whose fuzzer_stats has not been rewritten for this long is reported as stale
# (afl-fuzz rewrites it every minute or so while it runs)
STALE_S = 180


@dataclass(frozen=True)
class InstanceStatus:
    name: str
    alive: bool
    execs_per_s: float
    execs_done: int
    queue: int
    crashes: int
    hangs: int
    edges_found: int  # afl-fuzz's own map: comparable only between instances of one configuration
    run_time_s: int
    last_find_s: int | None  # seconds since its last find (None: none yet)
    start_time: int
    stability: str | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _int(stats: dict, key: str) -> int:
    try:
        return int(float(stats.get(key, "0") or 0))
    except ValueError:
        return 0


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def instance_status(out_dir: Path, name: str, *, now: float | None = None) -> InstanceStatus:
    st = read_fuzzer_stats(out_dir / name / "fuzzer_stats")
    now = time.time() if now is None else now
    last_update = _int(st, "last_update")
    last_find = _int(st, "last_find")
    alive = _alive(_int(st, "fuzzer_pid")) and now - last_update < STALE_S
    return InstanceStatus(name=name, alive=alive, execs_per_s=float(st.get("execs_per_sec", "0") or 0),
                          execs_done=_int(st, "execs_done"), queue=_int(st, "corpus_count"),
                          crashes=_int(st, "saved_crashes"), hangs=_int(st, "saved_hangs"),
                          edges_found=_int(st, "edges_found"), run_time_s=_int(st, "run_time"),
                          last_find_s=int(now - last_find) if last_find else None, start_time=_int(st, "start_time"),
                          stability=st.get("stability"))


def portfolio_status(out_dirs: Path | list[Path], *, yardstick=None, work: Path | None = None) -> dict[str, Any]:
    """Every instance's figures (of one output directory, or of several machines' roots: the copies
    the cross-machine sync made hold no fuzzer_stats and are not counted twice); with ``yardstick``,
    the union's coverage and each instance's part."""
    dirs = [Path(d) for d in (out_dirs if isinstance(out_dirs, list) else [out_dirs])]
    where: dict[str, Path] = {}
    for d in dirs:
        names = instances_of(d)
        if not names:
            raise AutotuneError(f"{d} holds no afl-fuzz instance (no */fuzzer_stats)",
                                fix="give the output directory afl-fuzz -o wrote (a portfolio host's root), after "
                                    "its instances have started")
        for n in names:
            if n in where:
                raise AutotuneError(f"instance {n} is in both {where[n]} and {d}",
                                    fix="give each machine's output directory once")
            where[n] = d
    insts = [instance_status(where[n], n) for n in where]
    indexes = {n: campaign_index({INDEX_FILE_VAR: str(where[n] / INDEX_DIR / f"{n}.index.bin")})
               for n in where}  # our runtime's instances: the live counters of their dense maps
    doc: dict[str, Any] = {"out_dir": ", ".join(str(d) for d in dirs),
                           "instances": [{**i.to_dict(), **({"index": indexes[i.name]} if indexes[i.name] else {})}
                                         for i in insts],
                           "warnings": [f"{n}: {idx['advice']}" for n, idx in indexes.items()
                                        if idx and idx.get("advice")],
                           "total": {"execs_per_s": round(sum(i.execs_per_s for i in insts if i.alive), 1),
                                     "execs_done": sum(i.execs_done for i in insts),
                                     "crashes": sum(i.crashes for i in insts),
                                     "alive": sum(1 for i in insts if i.alive)}}
    if yardstick is not None:
        start = min(i.start_time for i in insts)
        inputs = [k for i in insts for k in kept_inputs(where[i.name], instance=i.name,
                                                        offset_ms=1000 * max(0, i.start_time - start))]
        seconds = max(1, max(i.start_time + i.run_time_s for i in insts) - start)
        import shutil
        import tempfile

        scratch = Path(tempfile.mkdtemp(prefix="autotune-status-")) if work is None else Path(work)
        scratch.mkdir(parents=True, exist_ok=True)
        try:  # the campaign's directories are only read
            cov = measure(yardstick=yardstick, inputs=inputs, seconds=seconds, work=scratch)
        finally:
            if work is None:
                shutil.rmtree(scratch, ignore_errors=True)
        doc["yardstick"] = {"kind": yardstick.kind, "binary": str(yardstick.binary)}
        doc["union"] = cov.to_dict()
    return doc
