#!/usr/bin/env bash
# Runs arm D's compare (study-expat-d.sh) with --resume, packing and committing state/portfolio-expat-d.tar.gz
# as each trial's trial.json appears (markers in /work/runs/expat-d-packed).
set -uo pipefail
M=/work/main
if [ -e /work/runs/hold ]; then echo "hold before expat D $(date -u +%T)"; exit 0; fi
echo "start expat D $(date -u +%T)"
bash /work/runs/study-expat-d.sh /work/runs/study-expat-d 10 30 /work/runs/pfb-expat-env --resume > /work/runs/study-expat-d.log 2>&1 &
P=$!
for k in 0 1 2 3 4 5 6 7 8 9; do
  while [ ! -e /work/runs/study-expat-d/trials/late/trial-$k/trial.json ]; do
    kill -0 $P 2>/dev/null || { echo "study ended before D trial $k $(date -u +%T)"; wait $P; echo "rc $?"; exit 0; }
    sleep 10
  done
  [ -e /work/runs/expat-d-packed/late-$k ] && continue
  echo "D trial $k done $(date -u +%T)"
  cd $M && nice -n 19 .venv/bin/python benchmarks/keep_state.py pack /work/runs/study-expat-d benchmarks/results/state/portfolio-expat-d.tar.gz
  git add benchmarks/results/state/portfolio-expat-d.tar.gz; for i in 1 2 3 4 5; do git commit -q -m "portfolio study state, expat D: packed after trial $k" -- benchmarks/results/state/portfolio-expat-d.tar.gz && break; sleep 5; done
  mkdir -p /work/runs/expat-d-packed; touch /work/runs/expat-d-packed/late-$k
  echo "packed after D trial $k $(date -u +%T)"
done
wait $P; echo "expat D rc $? $(date -u +%T)"
