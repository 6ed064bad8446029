"""bugs.png: Kaplan-Meier curves of time-to-trigger, one panel per bug any trial triggered (else
reached), one step line per configuration: the fraction of trials that had not triggered the bug by
time t."""

from __future__ import annotations

import io
import math

from autotune.bugs.survival import BugReport

MAX_PANELS = 12  # past this the panels get too small to read; the table has every bug


def render_km_plot(rep: BugReport) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    triggered = [b for b in rep.bugs if any(rep.cell(c, b).events for c in rep.configs)]
    event = "trigger" if triggered else "reach"
    bugs = (triggered or list(rep.bugs))[:MAX_PANELS]
    cols = min(3, max(1, len(bugs)))
    rows = max(1, math.ceil(len(bugs) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax in axes.flat[len(bugs):]:
        ax.axis("off")
    for ax, b in zip(axes.flat, bugs):
        for i, c in enumerate(rep.configs):
            cell = rep.cell(c, b, event)
            ts = list(cell.km.times) + [rep.horizon_s]
            ss = list(cell.km.survival) + [cell.km.survival[-1]]
            ax.step(ts, ss, where="post", color=f"C{i % 10}", lw=2,
                    label=f"{c} ({cell.events}/{cell.trials}, RMST {cell.rmst_s:,.0f} s)")
        ax.set(title=b, xlabel="time (s)", ylabel=f"not yet {'triggered' if event == 'trigger' else 'reached'}",
               ylim=(-0.03, 1.03), xlim=(0, rep.horizon_s))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle(f"time to {event}: Kaplan-Meier over the trials (censored at {rep.horizon_s:g} s)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()
