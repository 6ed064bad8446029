#!/usr/bin/env bash
# The portfolio study's arms A and C (state/README.md, portfolio-libxml2): from the frozen worktree /work/study-pf (1fc8ac2).
set -euo pipefail
LIB=$1 OUT=$2 TRIALS=$3 MIN=$4; shift 4
cd /work/study-pf
export PYTHONPATH=/work/study-pf COLUMNS=1000
export BUGLIB_SRC=$(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py source "$LIB")
exec bash /work/main/.ci/aflpp-current.sh run /work/main/.venv-current/bin/autotune compare \
  $(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py recipe "$LIB") --yardstick bugs \
  --config default --instances 2 --portfolio ctx2=default,ctx2=/work/runs/ctx2.env \
  --trials "$TRIALS" --minutes "$MIN" --seed 11 --out "$OUT" "$@"
