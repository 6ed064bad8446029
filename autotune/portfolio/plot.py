"""The union's coverage over time (autotune status --plot)."""

from __future__ import annotations

import io


def render_union_plot(doc: dict) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    u = doc["union"]
    xs = [t / 60 for t, _ in u["curve"]]
    ys = [e for _, e in u["curve"]]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(xs, ys, marker="o", label=f"union of {len(doc['instances'])} instances")
    ax.set_xlabel("minutes since the first instance started")
    ax.set_ylabel(f"{u['unit']} ({u['kind']} yardstick)")
    ax.set_title(doc["out_dir"])
    ax.grid(alpha=0.3)
    ax.legend()
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()
