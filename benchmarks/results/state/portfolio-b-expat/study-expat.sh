#!/usr/bin/env bash
# The portfolio study on expat, arms A and B as one compare (plan amendments of 2026-12-03 and 2026-12-04 12:30):
# from the frozen worktree /work/study-expat (1cf5fff). Usage: study-expat.sh OUT TRIALS MIN ENVDIR [--resume]
set -euo pipefail
OUT=$1 TRIALS=$2 MIN=$3 ENVDIR=$4; shift 4
cd /work/study-expat
export PYTHONPATH=/work/study-expat COLUMNS=1000
export BUGLIB_SRC=$(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py source expat)
exec bash /work/main/.ci/aflpp-current.sh run /work/main/.venv-current/bin/autotune compare \
  $(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py recipe expat) --yardstick bugs \
  --config default --instances 2 --portfolio "ours=default,ours=$ENVDIR/autotune-build.env+$ENVDIR/autotune-run.env" \
  --trials "$TRIALS" --minutes "$MIN" --seed 11 --out "$OUT" "$@"
