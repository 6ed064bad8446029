"""coverage.png: yardstick edges (or branches) against time per configuration, the median over the trials as a
line, the min-max band light and the interquartile band darker."""

from __future__ import annotations

import io

from autotune.compare.result import CompareResult


def render_coverage_plot(result: CompareResult) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for i, o in enumerate(result.configs):
        if not o.curve:
            continue
        color = f"C{i % 10}"
        ts = [p.t_s for p in o.curve]
        ax.fill_between(ts, [p.low for p in o.curve], [p.high for p in o.curve], color=color, alpha=0.12, lw=0)
        ax.fill_between(ts, [p.q1 for p in o.curve], [p.q3 for p in o.curve], color=color, alpha=0.25, lw=0)
        ax.plot(ts, [p.median for p in o.curve], color=color, lw=2,
                label=f"{o.config.name} (median {o.coverage.median:.0f})")
    ax.set(xlabel="time (s)", ylabel=f"yardstick {result.yardstick.unit} ({result.yardstick.kind})",
           title=f"autotune compare: {result.trials} trials x {result.seconds} s; median, IQR and min-max bands")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()
