#!/usr/bin/env bash
# Arm B's rule on expat (plan-2026-12-01-portfolio-study.md, amendment of 2026-12-03 19:10): the race over
# secondaries beside AFL++'s default main, judged by bugs, from the frozen worktree /work/study-expat (1cf5fff).
set -euo pipefail
OUT=$1
cd /work/study-expat
export PYTHONPATH=/work/study-expat COLUMNS=1000
export BUGLIB_SRC=$(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py source expat)
exec bash /work/main/.ci/aflpp-current.sh run /work/main/.venv-current/bin/autotune run \
  $(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py recipe expat) \
  --instances 2 --judge bugs --strategy list --seed 11 --out "$OUT"
