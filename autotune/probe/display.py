"""What the probe shows a person: the live status (stderr) and the summary table (at the end)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from autotune.probe.campaign import Progress
from autotune.probe.result import ProbeResult
from autotune.vocabulary import METRICS, has_map_size
from autotune.vocabulary import AFL_DEFAULT_MAP_SLOTS

SUMMARY_MAP_BYTES = AFL_DEFAULT_MAP_SLOTS  # AFL++'s default map: the collision column of the summary
MAX_LISTED = 10  # crashes / hangs listed by name; the rest are counted


def _si(x: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.1f}{unit}"
    return f"{x:.0f}"


def _ns(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} ms"
    if x >= 1e3:
        return f"{x / 1e3:.1f} us"
    return f"{x:.0f} ns"


def live_view(p: Progress) -> Group:
    budget = f"{p.elapsed_s:5.1f} / {p.time_budget_s:.0f} s"
    execs = f"{p.execs}" + (f" / {p.max_execs}" if p.max_execs else "")
    head = Text.assemble(("probe ", "bold"), (f"[{p.phase}]  ", "cyan"), f"elapsed {budget}   execs {execs}   ",
                         f"{p.execs_per_s:,.0f} execs/s   kept {p.kept}   ",
                         ("crashes ", ""), (str(p.crashes), "red" if p.crashes else ""), "   hangs ",
                         (str(p.hangs), "yellow" if p.hangs else ""))
    t = Table(box=None, padding=(0, 1), show_header=True, header_style="dim")
    for m in METRICS:
        t.add_column(m, justify="right")
    t.add_row(*(_si(k) for k in p.total_keys))
    return Group(head, t)


def summary_table(r: ProbeResult) -> Group:
    c = r.campaign
    head = Text(
        f"{c.execs} execs in {c.loop_s:.1f} s ({c.execs_per_s:,.0f} execs/s; target {_ns(c.server_ns_per_exec)}"
        f"/exec, probe overhead {_ns(c.overhead_ns_per_exec)}/exec), stopped by {c.stop_reason}; "
        f"kept {c.kept} inputs; {c.crashes} crashes, {c.hangs} hangs; "
        f"exec time p50 {_ns(r.exec_time.p50_ns)}, p99 {_ns(r.exec_time.p99_ns)}")
    t = Table(title="coverage census", title_justify="left", header_style="bold")
    t.add_column("metric", no_wrap=True)
    t.add_column("keys", justify="right")
    t.add_column("est.", justify="right")  # Chao estimate of the total
    t.add_column("coll@64K", justify="right")
    t.add_column("Eq.1", justify="right")
    t.add_column("map<1%", justify="right", no_wrap=True)
    t.add_column("ovf8", justify="right")
    t.add_column("ovf16", justify="right")
    t.add_column("wrap0/1", justify="right")
    for m in r.metrics:
        row = m.row(SUMMARY_MAP_BYTES)
        small = next((x.map_bytes for x in m.map_sizes if x.collision_rate < 0.01), None)
        o8, o16 = m.overflow[0], m.overflow[1]
        hashed = has_map_size(m.metric)  # guard: one slot per guard, no hash, its map the guard count
        t.add_row(m.metric, f"{m.keys:,}", f"{m.richness.estimate:,.0f}", f"{100 * row.collision_rate:.2f}%",
                  f"{100 * row.eq1_collision_rate:.2f}%" if hashed else "-",
                  (_bytes(small) if small else "-") if hashed else "guards",
                  f"{100 * o8.overflow_share:.2f}%", f"{100 * o16.overflow_share:.2f}%",
                  f"{o8.wrap_to_zero}/{o8.wrap_to_one}")
    parts: list = [head, t]
    for kind, found, total in (("crash", r.crashes, r.campaign.crashes), ("hang", r.hangs, r.campaign.hangs)):
        for f in found[:MAX_LISTED]:
            parts.append(Text(f"{f.kind}: {f.file}  {f.reason}  ({f.origin})", style="red" if kind == "crash" else "yellow"))
        if total > min(len(found), MAX_LISTED):
            plural = "crashes" if kind == "crash" else "hangs"
            parts.append(Text(f"... and {total - min(len(found), MAX_LISTED)} more {plural}: {len(found)} distinct "
                              f"inputs saved under {plural}/ and listed in probe.json", style="dim"))
    for n in r.notes:
        parts.append(Text(f"note: {n}", style="dim"))
    parts.append(Text("est. = Chao estimate of the total keys; coll@64K = hashed collision rate in a 64 KiB map "
                      "(Eq.1 = BigMap's prediction); map<1% = smallest map below 1% collisions (guard: its map is the "
                      "guard count, collision-free); ovf8/16 = keys "
                      "hit more often in one execution than 8/16-bit counters hold; wrap0/1 = of those, ending "
                      "at 0 (wrap) / 1 (NeverZero)", style="dim"))
    if r.out_dir is not None:
        parts.append(Text(f"results: {r.out_dir / 'probe.json'}"))
    return Group(*parts)


def _bytes(n: int) -> str:
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift:
            return f"{n >> shift} {unit}"
    return f"{n} B"
