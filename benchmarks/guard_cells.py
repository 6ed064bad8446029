"""The figures of plan-2026-12-03-guard-per-library.md from one `autotune compare --config default
--config guard=...` directory: per pair (trial k of both, run at once) the execs/s ratio guard /
default, each trial's own-map edges (afl-fuzz's edges_found) against its yardstick edges, the median
paired ratio with the Wilcoxon signed-rank test, yardstick edges by Mann-Whitney U, and each build's
static points (afl-fuzz's total_edges: the map size the target reported, PCGUARD's guards or our
counters).

    .venv/bin/python benchmarks/guard_cells.py OUT      # OUT: the compare's --out
"""
import json, sys, glob, statistics
from scipy.stats import wilcoxon, mannwhitneyu
root = sys.argv[1] if len(sys.argv) == 2 else sys.exit("usage: guard_cells.py OUT (an autotune compare --out with configurations default and guard)")
rows = {}
for cfg in ("default", "guard"):
    for p in sorted(glob.glob(f"{root}/trials/{cfg}/trial-*/trial.json")):
        d = json.load(open(p)); k = int(p.split("trial-")[-1].split("/")[0])
        st = d["stats"]; y = d["yardstick"]
        rows.setdefault(k, {})[cfg] = (float(st.get("execs_per_sec", 0)), int(st.get("edges_found", 0)), y.get("edges", y.get("covered")), int(st.get("corpus_count", 0)), int(st.get("total_edges", 0)))
print("| pair | default execs/s | guard execs/s | ratio | default own-map / yardstick edges | guard own-map / yardstick edges |")
print("|---|---|---|---|---|---|")
ratios = []; dy = []; gy = []; dr = []; gr = []
for k in sorted(rows):
    if len(rows[k]) < 2: continue
    d, g = rows[k]["default"], rows[k]["guard"]
    r = g[0] / d[0]; ratios.append(r); dy.append(d[2]); gy.append(g[2]); dr.append(d[1] / d[2]); gr.append(g[1] / g[2])
    print(f"| {k} | {d[0]:,.0f} | {g[0]:,.0f} | {r:.3f} | {d[1]:,} / {d[2]:,} ({d[1]/d[2]:.3f}) | {g[1]:,} / {g[2]:,} ({g[1]/g[2]:.3f}) |")
print(f"median paired ratio {statistics.median(ratios):.3f}; Wilcoxon signed-rank on execs/s p = {wilcoxon([rows[k]['guard'][0] for k in sorted(rows)], [rows[k]['default'][0] for k in sorted(rows)]).pvalue:.3f}")
print(f"own/yardstick median: default {statistics.median(dr):.3f}, guard {statistics.median(gr):.3f}")
print(f"static points (total_edges): default {sorted({rows[k]['default'][4] for k in rows})}, guard {sorted({rows[k]['guard'][4] for k in rows})}")
print(f"yardstick edges median: default {statistics.median(dy):,}, guard {statistics.median(gy):,}; Mann-Whitney p = {mannwhitneyu(dy, gy).pvalue:.3f}")
