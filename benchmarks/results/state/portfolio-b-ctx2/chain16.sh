#!/usr/bin/env bash
# Session 45: A7C7, B6, then B7 if it can end in time; pack and commit both archives after each step.
set -uo pipefail
M=/work/main
pack_commit() {
  cd $M
  .venv/bin/python benchmarks/keep_state.py pack /work/runs/study-pf-libxml2 benchmarks/results/state/portfolio-libxml2.tar.gz
  .venv/bin/python benchmarks/keep_state.py pack /work/runs/study-pfb-libxml2 benchmarks/results/state/portfolio-b-libxml2.tar.gz
  for i in 1 2 3 4 5; do
    git commit -q -m "portfolio study state, libxml2: packed after $1" -- benchmarks/results/state/portfolio-libxml2.tar.gz benchmarks/results/state/portfolio-b-libxml2.tar.gz && break
    sleep 7
  done
  echo "packed after $1 $(date -u +%T)"
}
step() { [ -e /work/runs/hold ] && { echo "hold: stop before $1"; exit 0; }; echo "start $1 $(date -u +%T)"; }
step A7C7; bash /work/runs/study-pf.sh libxml2 /work/runs/study-pf-libxml2 8 30 --resume > /work/runs/study-pf-A7.log 2>&1; echo "rc $? $(date -u +%T)"; pack_commit "A7, C7"
step B6; bash /work/runs/study-pfb.sh libxml2 /work/runs/study-pfb-libxml2 7 30 /work/runs/pfb-env --resume > /work/runs/study-pfb-B6.log 2>&1; echo "rc $? $(date -u +%T)"; pack_commit "B6"
now=$(date -u +%H%M); if [ "$now" -gt 1228 ]; then echo "no time for B7 ($now)"; exit 0; fi
step B7; bash /work/runs/study-pfb.sh libxml2 /work/runs/study-pfb-libxml2 8 30 /work/runs/pfb-env --resume > /work/runs/study-pfb-B7.log 2>&1; echo "rc $? $(date -u +%T)"; pack_commit "B7"
