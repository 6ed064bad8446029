#!/usr/bin/env bash
# plan-2026-12-02-inline-speed.md, amendment of 2026-12-03 19:35: arm B's ctx-2 secondary alone, its dense map
# 131,072 (a power of two) against 86,016 slots (4 KiB pages), nothing else changed; from the worktree /work/dense-cell.
set -euo pipefail
OUT=$1 TRIALS=$2 SECONDS_=$3; shift 3
D=/work/runs/dense
cd /work/dense-cell
export PYTHONPATH=/work/dense-cell COLUMNS=1000
export BUGLIB_SRC=$(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py source libxml2)
exec bash /work/main/.ci/aflpp-current.sh run /work/main/.venv-current/bin/autotune compare \
  $(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py recipe libxml2) --yardstick pcguard \
  --config "pow2=$D/B.build.env+$D/B131072.run.env" --config "pages=$D/B.build.env+$D/B86016.run.env" \
  --trials "$TRIALS" --fuzz-time "$SECONDS_" --jobs 2 --seed 11 --out "$OUT" "$@"
