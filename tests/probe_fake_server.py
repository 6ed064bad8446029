"""A fake probe server for the probe's unit tests: it speaks docs/RUNTIME.md's probe protocol
(AUTOTUNE_PROBE_CTL_FD etc.) over the real fds and files, with a toy target model in Python.

Toy target: the input's first 24 bytes make a block sequence; every metric's exact keys are
derived from it (edge = pairs, ngram-N = N-tuples, context metrics = pairs with a context
taken from the input's first byte), so the census has the real shape. Inputs starting with
b"CRASH" crash (SIGABRT, with a sanitizer-style line on stderr), b"HANG" hang, b"DIE" kill the
server itself, b"SEGV" crash with SIGSEGV.
"""

import hashlib
import mmap
import os
import struct
import sys
import time

from autotune.vocabulary import METRIC_SPECS  # run by the venv's python (tests/test_probe_campaign.py)

METRICS = list(METRIC_SPECS)  # census order, as the runtime's
N = len(METRICS)
REPLY = struct.Struct(f"<IIQ{N}I{N}I")


def h64(*parts) -> int:
    return int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=8).digest(), "little")


def keys_of(data: bytes):
    blocks = [1 + (i % 6) * 16 + (b % 16) for i, b in enumerate(data[:24])]
    if not blocks:
        blocks = [0]
    ctx = data[0] % 4 if data else 0
    out = []
    for m in METRICS:
        seq = []
        spec = METRIC_SPECS[m]
        if not spec.hashed:  # a slot per block (guard)
            seq = [(m, (b,)) for b in blocks]
        elif not spec.call_context:  # windows of n blocks (edge: 2, ngram-N: N)
            n = int(m.split("-")[1]) if m.startswith("ngram-") else 2
            for i in range(len(blocks)):
                seq.append((m, tuple(blocks[max(0, i - n + 1):i + 1])))
        else:
            k = {"ctx": 3, "caller": 1, "ctx-2": 2, "ctx-4": 4, "ctx-8": 5}.get(m, 1)
            for i in range(len(blocks)):
                seq.append((m, tuple(blocks[max(0, i - 1):i + 1]), ctx % (k + 1)))
        counts = {}
        for s in seq:
            key = h64(*s) if m != "edge" else h64(s[1])
            counts[key] = counts.get(key, 0) + 1
        # a hot loop: the key of the last block is hit 300 times when the input ends in b"LOOP"
        if data.endswith(b"LOOP"):
            last = list(counts)[-1]
            counts[last] += 300
        out.append(counts)
    return out


def main() -> None:
    ctl = int(os.environ["AUTOTUNE_PROBE_CTL_FD"])
    st = int(os.environ["AUTOTUNE_PROBE_ST_FD"])
    d = os.environ["AUTOTUNE_PROBE_DIR"]
    max_input = int(os.environ.get("AUTOTUNE_PROBE_MAX_INPUT", 1 << 20))
    cap = int(os.environ.get("AUTOTUNE_PROBE_CAPACITY", 1 << 18))
    tmo = int(os.environ.get("AUTOTUNE_PROBE_TIMEOUT_MS", 1000))
    sel = os.environ.get("AUTOTUNE_PROBE_METRICS", "all")
    on = set(range(N)) if sel == "all" else {METRICS.index(m) for m in sel.split(",")}
    with open(os.path.join(d, "input.buf"), "wb") as fh:
        fh.truncate(8 + max_input)
    fd = os.open(os.path.join(d, "input.buf"), os.O_RDWR)
    mm = mmap.mmap(fd, 8 + max_input)
    census = [dict() for _ in METRICS]  # key -> [hk32, n_inputs, max_hits, total_hits, first_exec]
    dropped = [0] * N
    execs = 0
    while True:
        cmd = os.read(ctl, 8)
        if len(cmd) < 8:
            return
        op, arg = struct.unpack("<II", cmd)
        new = [0] * N
        if op == 4:
            os.write(st, REPLY.pack(0, 0, 0, *new, *[len(c) for c in census]))
            return
        if op == 3:
            os.makedirs(os.path.join(d, "census"), exist_ok=True)
            for mid, m in enumerate(METRICS):
                if mid not in on:
                    continue
                recs = b"".join(struct.pack("<QIIQQQ", k, v[0], v[1], v[2], v[3], v[4])
                                for k, v in census[mid].items())
                p = os.path.join(d, "census", m + ".bin")
                with open(p + ".tmp", "wb") as fh:
                    fh.write(struct.pack("<8sIIQQ", b"ATCENS01", mid, 0, len(census[mid]), dropped[mid]) + recs)
                os.replace(p + ".tmp", p)
            os.write(st, REPLY.pack(0, 0, 0, *new, *[len(c) for c in census]))
            continue
        n = struct.unpack_from("<I", mm, 0)[0]
        data = bytes(mm[8:8 + n])
        t = time.perf_counter_ns()
        if data.startswith(b"DIE"):
            os._exit(3)
        if data.startswith(b"CRASH") or data.startswith(b"SEGV"):
            sig = 6 if data.startswith(b"CRASH") else 11
            sys.stderr.write("==42==ERROR: AddressSanitizer: fake-overflow on address 0x0\n")
            sys.stderr.flush()
            os.write(st, REPLY.pack(1, sig, 0, *new, *[len(c) for c in census]))
            continue
        if data.startswith(b"HANG"):
            os.write(st, REPLY.pack(2, tmo, 0, *new, *[len(c) for c in census]))
            continue
        per = keys_of(data)
        status = detail = 0
        if op == 2:
            os.makedirs(os.path.join(d, "traces"), exist_ok=True)
            for mid, m in enumerate(METRICS):
                if mid not in on:
                    continue
                recs = b"".join(struct.pack("<QII", k, h64("hk", k) & 0xFFFFFFFF, min(c, 0xFFFFFFFF))
                                for k, c in per[mid].items())
                with open(os.path.join(d, "traces", m + ".bin"), "ab") as fh:
                    fh.write(struct.pack("<II", arg, len(per[mid])) + recs)
        else:
            execs += 1
            for mid in sorted(on):
                c = census[mid]
                for k, hits in per[mid].items():
                    e = c.get(k)
                    if e is None:
                        if len(c) >= cap:
                            dropped[mid] += 1
                            status, detail = 3, mid
                            continue
                        c[k] = [h64("hk", k) & 0xFFFFFFFF, 1, hits, hits, execs]
                        new[mid] += 1
                    else:
                        e[1] += 1
                        e[2] = max(e[2], hits)
                        e[3] += hits
        ns = time.perf_counter_ns() - t
        os.write(st, REPLY.pack(status, detail, ns, *new, *[len(c) for c in census]))


if __name__ == "__main__":
    main()
