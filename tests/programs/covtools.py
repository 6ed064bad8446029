"""Helpers for the cov/driver/probe-server tests: build instrumented programs, read census and
trace files, and a minimal probe client at the fd boundary (docs/RUNTIME.md "The probe protocol")."""

from __future__ import annotations

import mmap
import os
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from autotune.probe.protocol import REPLY, Reply
from autotune.runtime.artifacts import runtime_sources
from autotune.vocabulary import METRIC_TABLE

PROGRAMS = Path(__file__).resolve().parent
KERNELS = PROGRAMS.parent.parent / "kernels"
METRICS = tuple(m.name for m in METRIC_TABLE)  # census order (kernels/cov_keys.h COV_METRICS)
METRIC_ID = {name: i for i, name in enumerate(METRICS)}  # a census file's metric id
INSTRUMENT = ["-fsanitize-coverage=trace-pc-guard", "-finstrument-functions-after-inlining"]
RUNTIME = [p.name for p in runtime_sources(kdir=KERNELS)]  # the runtime archive's sources
C_FLAGS = ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", f"-I{KERNELS}"]
M64 = (1 << 64) - 1


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, cmd))} failed:\n{proc.stderr}")
    return proc


SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]


def runtime_objects(*, opt: str = "-O2", san: Sequence[str] = (), driver: bool = True) -> list[str]:
    """The runtime archive's sources (and the driver) compiled by clang with ``opt`` and ``san``,
    uninstrumented: once per flavour and test run, in the run's cache (keyed by the flags and the
    sources and headers), so every test of that flavour links the same objects."""
    import hashlib
    from concurrent.futures import ThreadPoolExecutor

    from autotune.io import file_lock
    from autotune.paths import cache_dir, kernels_dir
    from autotune.runtime.artifacts import DRIVER_SOURCE, runtime_sources

    kdir = kernels_dir()
    sources = [*runtime_sources(), *([kdir / DRIVER_SOURCE] if driver else [])]
    flags = [*C_FLAGS, opt, "-g", *san]
    h = hashlib.sha256("\0".join(flags).encode())
    for f in [*sources, *sorted(kdir.glob("*.h"))]:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    objdir = cache_dir() / "test-runtime" / h.hexdigest()[:16]
    objs = [objdir / f"{src.stem}.o" for src in sources]
    with file_lock(objdir / ".lock"):
        todo = [(src, o) for src, o in zip(sources, objs) if not o.exists()]

        def compile_one(job: tuple[Path, Path]) -> None:
            src, o = job
            tmp = o.with_suffix(".tmp.o")
            run(["clang", *flags, "-c", str(src), "-o", str(tmp)])
            tmp.replace(o)

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            list(pool.map(compile_one, todo))
    return [str(o) for o in objs]


def build_direct(out: Path, sources: list[Path], *, opt: str = "-O0", san: Sequence[str] = (),
                 extra: Sequence[str] = (), driver: bool = True, runtime_opt: str = "-O2",
                 instrument: bool = True) -> Path:
    """Build with clang directly: instrumented sources, uninstrumented runtime (+ driver)."""
    objs = runtime_objects(opt=runtime_opt, san=san, driver=driver)
    run(["clang", opt, "-g", *(INSTRUMENT if instrument else []), *san, *extra, *map(str, sources), *objs, "-o", str(out),
         "-lpthread", "-ldl"])
    return out


NGRAM_P = 0x9E3779B97F4A7C15  # kernels/cov.h COV_NGRAM_P


def mix64(x: int) -> int:
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def splitmix64(x: int) -> int:
    return mix64((x + 0x9E3779B97F4A7C15) & M64)


def block_id(seed: int, g: int) -> int:
    return 0 if g == 0 else splitmix64(seed ^ g) & 0xFFFFFFFF


@dataclass(frozen=True)
class CensusEntry:
    key: int
    hk32: int
    n_inputs: int
    max_hits: int
    total_hits: int
    first_exec: int


def read_census(path: Path) -> tuple[int, int, list[CensusEntry]]:
    """(metric id, dropped, entries) of a census/<metric>.bin file."""
    data = path.read_bytes()
    magic, metric, _res, n, dropped = struct.unpack_from("<8sIIQQ", data, 0)
    assert magic == b"ATCENS01", magic
    assert len(data) == 32 + 40 * n
    entries = [CensusEntry(*struct.unpack_from("<QIIQQQ", data, 32 + 40 * i)) for i in range(n)]
    return metric, dropped, entries


def read_trace(path: Path) -> list[tuple[int, list[tuple[int, int, int]]]]:
    """[(seq, [(key, hk32, count), ...]), ...] of a traces/<metric>.bin file."""
    data = path.read_bytes()
    out, off = [], 0
    while off < len(data):
        seq, n = struct.unpack_from("<II", data, off)
        off += 8
        recs = [struct.unpack_from("<QII", data, off + 16 * i) for i in range(n)]
        off += 16 * n
        out.append((seq, recs))
    return out


class ProbeClient:
    """The Python side of the probe protocol, raw: pipes, the shared input buffer, replies."""

    def __init__(self, binary: Path, workdir: Path, *, env: dict | None = None, max_input: int = 4096,
                 timeout_ms: int = 1000, capacity: int | None = None, metrics: str | None = None,
                 seed: int = 0):
        self.dir = workdir
        ctl_r, self._ctl_w = os.pipe()
        self._st_r, st_w = os.pipe()
        e = dict(os.environ if env is None else env)
        e.update(AUTOTUNE_PROBE_CTL_FD=str(ctl_r), AUTOTUNE_PROBE_ST_FD=str(st_w),
                 AUTOTUNE_PROBE_DIR=str(workdir), AUTOTUNE_PROBE_MAX_INPUT=str(max_input),
                 AUTOTUNE_PROBE_TIMEOUT_MS=str(timeout_ms), AUTOTUNE_SEED=str(seed))
        if capacity:
            e["AUTOTUNE_PROBE_CAPACITY"] = str(capacity)
        if metrics:
            e["AUTOTUNE_PROBE_METRICS"] = metrics
        self.proc = subprocess.Popen([str(binary)], pass_fds=(ctl_r, st_w), env=e,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(ctl_r)
        os.close(st_w)
        self.max_input = max_input
        self._buf = None

    def _buffer(self) -> mmap.mmap:
        if self._buf is None:
            # the server creates input.buf before it reads the first command; the first reply
            # proves it exists, so a command is sent first only when the file is there
            path = self.dir / "input.buf"
            for _ in range(500):
                if path.exists() and path.stat().st_size == 8 + self.max_input:
                    break
                if self.proc.poll() is not None:
                    raise AssertionError(f"server exited: {self.proc.stderr.read().decode()}")
                import time
                time.sleep(0.01)
            with open(path, "r+b") as f:
                self._buf = mmap.mmap(f.fileno(), 8 + self.max_input)
        return self._buf

    def command(self, op: int, arg: int = 0) -> Reply:
        os.write(self._ctl_w, struct.pack("<II", op, arg))
        data = b""
        while len(data) < REPLY.size:
            chunk = os.read(self._st_r, REPLY.size - len(data))
            if not chunk:
                raise AssertionError(f"server closed the status pipe: {self.proc.stderr.read().decode()}")
            data += chunk
        return Reply.unpack(data)

    def put(self, data: bytes) -> None:
        buf = self._buffer()
        buf[0:8] = struct.pack("<II", len(data), 0)
        buf[8:8 + len(data)] = data

    def run(self, data: bytes) -> Reply:
        self.put(data)
        return self.command(1)

    def trace(self, data: bytes, seq: int) -> Reply:
        self.put(data)
        return self.command(2, seq)

    def dump(self) -> Reply:
        return self.command(3)

    def quit(self) -> Reply:
        r = self.command(4)
        self.proc.wait(timeout=30)
        self.close()
        return r

    def close(self) -> None:
        if self._buf is not None:
            self._buf.close()
            self._buf = None
        for fd in (self._ctl_w, self._st_r):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()


def census_of(binary: Path, workdir: Path, inputs: Iterable[bytes], **client: Any) -> Path:
    """Run ``inputs`` through a probe server (``client``: ProbeClient's options), each to a clean
    exit, then dump and quit: the directory of the census files (census/METRIC.bin)."""
    workdir.mkdir(parents=True, exist_ok=True)
    c = ProbeClient(binary, workdir, **client)
    try:
        for data in inputs:
            r = c.run(data)
            assert r.status == 0, r
        assert c.dump().status == 0
        c.quit()
    finally:
        c.close()
    return workdir / "census"


# ---- building with the real wrapper (autotune cc) ------------------------------------------------

def build_cc(out: Path, sources: list[Path], *, opt: str = "-O0", cflags: list[str] = (),
             ldflags: list[str] = ()) -> Path:
    """An LLVMFuzzerTestOneInput harness linked by `autotune cc` (runtime + driver)."""
    from autotune.target import build_harness

    return build_harness(sources=list(sources), output=out, extra_cflags=[opt, *cflags],
                         extra_ldflags=list(ldflags))


def build_programs(d: Path, names: Iterable[str], *, cflags: dict[str, list[str]] | None = None) -> dict[str, Path]:
    """tests/programs/NAME.c for each of ``names``, each built by build_cc into d/NAME (``cflags``:
    a program's own flags)."""
    return {n: build_cc(d / n, [PROGRAMS / f"{n}.c"], cflags=(cflags or {}).get(n, [])) for n in names}


def build_cc_shared(out: Path, sources: list[Path], *, opt: str = "-O0") -> Path:
    """An instrumented shared object built through the wrapper (`autotune cc -shared`)."""
    from autotune.cc import plan

    argv, env = plan([opt, "-fPIC", "-shared", *map(str, sources), "-o", str(out)], cxx=False, env=os.environ)
    run(argv, env=env)
    return out


# ---- a model of the keys (docs/DESIGN.md "Keys, ids and metrics") ----------------------------------

def function_offsets(binary: Path) -> dict[str, int]:
    """Symbol -> offset in its module (nm), the input of the function ids."""
    out = run(["nm", "--defined-only", str(binary)]).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            syms[parts[2]] = int(parts[0], 16)
    return syms


def function_id(seed: int, offset: int) -> int:
    return splitmix64(seed ^ offset)


def c_metrics() -> list[tuple[str, str, str, int, int]]:
    """kernels/cov_keys.h's COV_METRICS lines, in census order: (ID, name, key function, WIN, CX)."""
    import re

    src = (KERNELS / "cov_keys.h").read_text()
    block = src[src.index("#define COV_METRICS(X)"):]
    block = block[:block.index("\n\n")]
    return [(i, n, k, int(w), int(c))
            for i, n, k, w, c in re.findall(r'X\((\w+), "([a-z0-9-]+)", (\w+), (\d+), (-?\d+)\)', block)]


def c_key_funcs() -> dict[str, tuple[bool, str]]:
    """kernels/cov_keys.h's COV_KEY_FUNCS lines: key function -> (hashed, the shape of its fast hook)."""
    import re

    src = (KERNELS / "cov_keys.h").read_text()
    block = src[src.index("#define COV_KEY_FUNCS(Y)"):]
    block = block[:block.index("\n\n")]
    return {k: (h == "1", f) for k, h, f in re.findall(r"Y\((\w+), ([01]), (\w+)\)", block)}


# The index key (autotune/vocabulary.py Metric.index_key) of each key function of
# kernels/cov_keys.h (a COV_METRICS line's KEY) under AUTOTUNE_KEY_HASH=exact: docs/DESIGN.md
# "The map sink's index key". tests/test_metrics.py checks every metric's against its registry entry.
KEY_INDEX = {"xedge": "mix64", "xctx": "mix64", "xngram": "fold", "guard": "slot"}


def model_keys(hits: list[tuple[int, list[int]]], *, seed: int) -> list[dict[int, list[int]]]:
    """Per metric: exact key -> [hk32, hits] of one execution.

    hits: (guard index, function ids of the callers, nearest first) of every block hit, in order.
    """
    out: list[dict[int, list[int]]] = [dict() for _ in METRICS]
    seq: list[int] = []
    for g, callers in hits:
        seq.insert(0, g)
        w = (seq + [0] * 8)[:8]
        r = [block_id(seed, x) for x in w]
        edge_hk = (r[1] >> 1) ^ r[0]
        edge_ex = (w[1] << 32) | w[0]
        keys = [(edge_ex, edge_hk)]
        x, acc = 0, mix64(w[0])
        for i in range(1, 8):  # ngram-(i+1): sum_{j<=i} mix64(w_j) * P^j mod 2^64
            x ^= r[i] >> 1
            acc = (acc + mix64(w[i]) * pow(NGRAM_P, i, 1 << 64)) & M64
            keys.append((acc, r[0] ^ x))
        full = 0
        for f in callers:
            full ^= f
        def xor_first(k: int) -> int:
            v = 0
            for f in callers[:k]:
                v ^= f
            return v
        e = mix64(edge_ex)
        for cx in (full, xor_first(1), xor_first(2), xor_first(4), xor_first(8)):
            keys.append((mix64(e ^ cx), edge_hk ^ (cx & 0xFFFFFFFF)))
        keys.append((w[0], w[0]))  # guard: the guard itself, at slot g
        assert len(keys) == len(METRICS), "model_keys: a metric without a model"
        for mid, (ex, hk) in enumerate(keys):
            rec = out[mid].setdefault(ex, [hk, 0])
            rec[1] += 1
    return out
