#!/usr/bin/env bash
# The portfolio study's arm D on expat (plan-2026-12-01-portfolio-study.md, D's plan of 2026-12-04 20:45):
# AFL++'s default -M, and a -S on AFL++'s default for 900 s that then moves to B's ngram-4 build (B's env
# files, unchanged), 10 x 30 min, --seed 11, from the worktree /work/study-expat-d frozen at 0976030 (nothing
# D runs changed after it). Usage: study-expat-d.sh OUT TRIALS MIN ENVDIR [--resume]
set -euo pipefail
OUT=$1 TRIALS=$2 MIN=$3 ENVDIR=$4; shift 4
cd /work/study-expat-d
export PYTHONPATH=/work/study-expat-d COLUMNS=1000
export BUGLIB_SRC=$(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py source expat)
exec bash /work/main/.ci/aflpp-current.sh run /work/main/.venv-current/bin/autotune compare \
  $(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py recipe expat) --yardstick bugs \
  --portfolio "late=default,default@900s>$ENVDIR/autotune-build.env+$ENVDIR/autotune-run.env" \
  --trials "$TRIALS" --minutes "$MIN" --seed 11 --out "$OUT" "$@"
