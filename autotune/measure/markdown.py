"""The bench figures as Markdown: per-size table (8-bit counters), ratios beside BigMap's, widths."""

from __future__ import annotations

from autotune.measure.bench import PAPER_CITATION, BenchResult
from autotune.measure.stats import human_bytes


def _us(ns: float) -> str:
    return f"{ns / 1000:.2f}"


def render_bench_md(res: BenchResult) -> str:
    L = ["# autotune bench: per-execution cost of the map work", ""]
    t = res.trace
    L += [f"Trace: `{t.get('source')}`: {t.get('n_execs')} executions, {t.get('distinct_keys')} distinct keys, "
          f"{t.get('records_per_exec')} keys and {t.get('hits_per_exec')} hits per execution. Kernel variant "
          f"`{res.variant}`; timer overhead {res.timer_overhead_ns:.0f} ns subtracted per phase; "
          f"{res.settings.rounds} timed rounds of at least {res.settings.round_s * 1000:.0f} ms after "
          f"{res.settings.warmup_rounds} warm-up round(s); medians. Counter policy `{res.settings.policy}`.", ""]
    host = res.host or {}
    if host:
        caches = ", ".join(f"L{c['level']}{'d' if c.get('kind') == 'data' else ''} "
                           f"{human_bytes(int(c['size_bytes']))}" for c in host.get("caches", [])
                           if isinstance(c.get("size_bytes"), int) and c.get("kind") != "instruction")
        L += [f"Host: {host.get('brand') or host.get('name')}; caches: {caches}.", ""]
    widths = res.settings.widths
    w0 = 8 if 8 in widths else widths[0]
    L += [f"## {w0}-bit counters, microseconds per execution", "",
          "| map size | flat reset | flat classify+compare | flat hash | flat update | flat total | "
          "two-level reset | two-level classify+compare | two-level hash | two-level update | two-level total | "
          "flat / two-level |",
          "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in res.settings.map_slots:
        f, tw = res.case("flat", w0, s), res.case("twolevel", w0, s)
        if not f or not tw:
            continue
        L += [f"| {human_bytes(s)} | {_us(f.reset_ns)} | {_us(f.classify_compare_ns)} | {_us(f.hash_ns)} | "
              f"{_us(f.update_ns)} | {_us(f.total_ns)} | {_us(tw.reset_ns)} | {_us(tw.classify_compare_ns)} | "
              f"{_us(tw.hash_ns)} | {_us(tw.update_ns)} | {_us(tw.total_ns)} | {f.total_ns / max(tw.total_ns, 1e-9):.2f}x |"]
    L += ["", "## Ratios beside BigMap's Figure 6", ""]
    has_tp = res.target_exec_ns is not None
    L += ["| map size | flat / two-level, map work | " + ("modelled fuzzer throughput ratio | " if has_tp else "")
          + "BigMap's throughput ratio |", "|---:|---:|" + ("---:|" if has_tp else "") + "---:|"]
    for r in res.ratios(width_bits=w0):
        if "paper_throughput_ratio" not in r:
            continue
        L += [f"| {human_bytes(r['map_slots'])} | {r['map_work_ratio']:.2f}x | "
              + (f"{r['throughput_ratio']:.2f}x | " if has_tp else "") + f"{r['paper_throughput_ratio']}x |"]
    L += ["", f"BigMap's figures: {PAPER_CITATION}. Theirs are whole-fuzzer throughput ratios (target execution, "
          "fork server, mutation and AFL's map work on a Xeon E5645 with 256 KiB L2 and 12 MiB L3); ours time the "
          "map work alone (reset, update, classify+compare, hash) on this host"
          + (f", and the modelled ratio adds the probed target's own {res.target_exec_ns / 1000:.2f} us per "
             "execution to both sides" if has_tp else "")
          + ". The map-work ratio is an upper bound on the throughput ratio; where the target's own time dominates "
          "(small maps) the throughput ratio tends to 1.", ""]
    shape = res.shape(width_bits=w0)
    if shape:
        L += ["Shape (Figure 6): cost at the largest over the smallest map: "
              + ", ".join(f"{k} {v['growth']:.1f}x ({human_bytes(v['smallest_map_slots'])} -> "
                          f"{human_bytes(v['largest_map_slots'])})" for k, v in shape.items()) + ".", ""]
    if len(widths) > 1:
        L += ["## Total per execution by counter width (microseconds)", "",
              "| map size | " + " | ".join(f"flat {w}-bit" for w in widths) + " | "
              + " | ".join(f"two-level {w}-bit" for w in widths) + " |",
              "|---:|" + "---:|" * (2 * len(widths))]
        for s in res.settings.map_slots:
            row = [human_bytes(s)]
            for lay in ("flat", "twolevel"):
                for w in widths:
                    c = res.case(lay, w, s)
                    row.append(_us(c.total_ns) if c else "")
            L += ["| " + " | ".join(row) + " |"]
        L += [""]
    L += ["## Update cost per hit (ns)", "", "| map size | " + " | ".join(f"flat {w}-bit" for w in widths) + " | "
          + " | ".join(f"two-level {w}-bit" for w in widths) + " |", "|---:|" + "---:|" * (2 * len(widths))]
    for s in res.settings.map_slots:
        row = [human_bytes(s)]
        for lay in ("flat", "twolevel"):
            for w in widths:
                c = res.case(lay, w, s)
                row.append(f"{c.update_ns_per_hit:.2f}" if c else "")
        L += ["| " + " | ".join(row) + " |"]
    L += ["", "The hits of one key are replayed back to back (a trace keeps no interleaving), so the update figure "
          "is a lower bound for flat maps larger than the caches.", ""]
    return "\n".join(L)
