#!/usr/bin/env bash
# The portfolio study's arm B (plan amendment 2026-12-02 21:20): from the frozen worktree /work/study-pfb (b6e45a2).
set -euo pipefail
LIB=$1 OUT=$2 TRIALS=$3 MIN=$4 ENVDIR=$5; shift 5
cd /work/study-pfb
export PYTHONPATH=/work/study-pfb COLUMNS=1000
export BUGLIB_SRC=$(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py source "$LIB")
exec bash /work/main/.ci/aflpp-current.sh run /work/main/.venv-current/bin/autotune compare \
  $(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py recipe "$LIB") --yardstick bugs \
  --portfolio "ours=default,ours=$ENVDIR/autotune-build.env+$ENVDIR/autotune-run.env" \
  --trials "$TRIALS" --minutes "$MIN" --seed 11 --out "$OUT" "$@"
