#!/usr/bin/env bash
# Arm B's rule (plan-2026-12-01-portfolio-study.md, amendment of 2026-12-02 15:10): the race over
# secondaries beside AFL++'s default main, judged by bugs, from the frozen worktree /work/study-pfb.
set -euo pipefail
LIB=$1 OUT=$2
cd /work/study-pfb
export PYTHONPATH=/work/study-pfb COLUMNS=1000
export BUGLIB_SRC=$(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py source "$LIB")
exec bash /work/main/.ci/aflpp-current.sh run /work/main/.venv-current/bin/autotune run \
  $(/work/main/.venv/bin/python benchmarks/bugs/buglibs.py recipe "$LIB") \
  --instances 2 --judge bugs --strategy list --seed 11 --out "$OUT"
