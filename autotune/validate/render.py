"""validate's side-by-side table and notes (results on stdout; progress on stderr)."""

from __future__ import annotations

from rich.table import Table

from autotune.validate.validate import ValidateResult


def _n(x: float | int | None, fmt: str = "{:,.0f}") -> str:
    return "-" if x is None else fmt.format(x)


def validate_table(res: ValidateResult) -> Table:
    t = Table(title=f"autotune validate: {res.tuned_dir} (afl-fuzz {res.fuzz_s} s per variant, "
                    f"{res.corpus_inputs} corpus inputs)", title_justify="left")
    for col in ("variant", "metric", "map slots", "occupancy pred.", "occupancy meas.", "execs/s pred.",
                "execs/s meas.", "vs PCGUARD", "stability"):
        t.add_column(col, justify="left" if col in ("variant", "metric") else "right")
    for v in res.variants:
        p = v.predicted
        meas = f"{v.measured_slots:,}"
        if v.index_stats:
            meas += f" (used_key {v.index_stats['used_key']:,}, ovf {v.index_stats['overflow_keys']:,})"
        pred = "-" if p is None else f"{p.used_slots:,}" + (f" (ovf {p.overflow_keys:,})" if p.overflow_keys else "")
        t.add_row(v.name, v.metric or "pcguard", _n(v.showmap.map_bytes), pred, meas, _n(v.predicted_execs_per_s),
                  _n(v.fuzz.execs_per_s), _n(v.execs_vs_default, "{:.2f}x"), v.fuzz.stability)
    return t


def validate_notes(res: ValidateResult) -> list[str]:
    lines = [f"{v.name}: {n}" for v in res.variants for n in v.notes]
    if res.measured_speedup is not None:
        lines.append(f"autotune / aflpp-tuned execs/s: measured {res.measured_speedup:.2f}x"
                     + (f", tune predicted {res.predicted_speedup:.2f}x" if res.predicted_speedup else ""))
    return lines + list(res.notes)
