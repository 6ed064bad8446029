"""The PNG plot (matplotlib, Agg): collision rate vs map size per metric, measured cost vs map
size per layout, the chosen point, and the optimiser's convergence."""

from __future__ import annotations

import io

from autotune.tune.result import TuneResult

FLOOR_PCT = 1e-3  # collision rates below this are drawn at it (log axis)


def render_plot(result: TuneResult) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bc = result.best_config
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(16, 4.8))
    for metric, rates in result.curves.get("collision_rate", {}).items():
        xs = [int(k) for k in rates]
        a1.plot(xs, [max(100 * float(v), FLOOR_PCT) for v in rates.values()], label=metric,
                lw=2.5 if metric == bc.metric else 1.0)
    a1.axhline(100 * result.settings.max_collision_rate, color="k", ls=":", lw=1, label="limit")
    a1.axvline(bc.map_slots, color="r", ls="--", lw=1)
    a1.set(xscale="log", yscale="log", ylim=(FLOOR_PCT, 100), xlabel="map size (slots)", ylabel="collision rate (%)",
           title="Equation 1 at each metric's estimated keys")
    a1.legend(fontsize=6, ncol=2)

    exec_ns = result.inputs.target_exec_ns or 0.0
    for layout, marker in (("flat", "o"), ("twolevel", "s")):
        pts = [m for m in result.curves.get("measured", []) if m["layout"] == layout]
        if pts:
            a2.scatter([p["map_slots"] for p in pts], [1e9 / max(p["execs_per_s"], 1e-9) for p in pts],
                       marker=marker, label=layout, alpha=0.7)
    a2.scatter([bc.map_slots], [1e9 / max(result.best.execs_per_s, 1e-9)], marker="*", s=250,
               color="r", label="chosen", zorder=5)
    if exec_ns:
        a2.axhline(exec_ns, color="k", ls=":", lw=1, label="target alone (probe)")
    a2.set(xscale="log", yscale="log", xlabel="map size (slots)", ylabel="ns per execution (measured)",
           title="cost per layout (every configuration tried)")
    a2.legend(fontsize=7)

    conv = result.convergence()
    a3.plot(range(1, len(conv) + 1), conv, drawstyle="steps-post", label="best so far")
    a3.scatter([t.call for t in result.trials], [t.evaluation.score_bits for t in result.trials], s=8, alpha=0.5,
               label="trial")
    lo = min(conv) - 2 if conv else 0
    a3.set(xlabel="call", ylabel="score (bits)", title="convergence", ylim=(lo, max(conv) + 0.5 if conv else 1))
    a3.legend(fontsize=7)
    fig.suptitle(f"autotune tune: {result.target}: {bc.metric}, {bc.layout}, {bc.map_slots} slots, "
                 f"{bc.width_bits}-bit")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()
