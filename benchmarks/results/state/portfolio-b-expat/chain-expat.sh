#!/usr/bin/env bash
# Resumes the expat study (A and B, 10 x 30 min each, interleaved) on a fresh machine, packing and committing
# state/portfolio-expat.tar.gz as each trial's trial.json appears (markers in /work/runs/expat-packed).
set -uo pipefail
M=/work/main
if [ -e /work/runs/hold ]; then echo "hold before expat $(date -u +%T)"; exit 0; fi
echo "start expat $(date -u +%T)"
bash /work/runs/study-expat.sh /work/runs/study-expat 10 30 /work/runs/pfb-expat-env --resume > /work/runs/study-expat.log 2>&1 &
P=$!
for k in 0 1 2 3 4 5 6 7 8 9; do
  for f in default ours; do
    while [ ! -e /work/runs/study-expat/trials/$f/trial-$k/trial.json ]; do
      kill -0 $P 2>/dev/null || { echo "study ended before $f trial $k $(date -u +%T)"; wait $P; echo "rc $?"; exit 0; }
      sleep 10
    done
    [ -e /work/runs/expat-packed/$f-$k ] && continue
    echo "$f trial $k done $(date -u +%T)"
    cd $M && nice -n 19 .venv/bin/python benchmarks/keep_state.py pack /work/runs/study-expat benchmarks/results/state/portfolio-expat.tar.gz
    git add benchmarks/results/state/portfolio-expat.tar.gz; for i in 1 2 3 4 5; do git commit -q -m "portfolio study state, expat: packed after $f trial $k" -- benchmarks/results/state/portfolio-expat.tar.gz && break; sleep 5; done
    mkdir -p /work/runs/expat-packed; touch /work/runs/expat-packed/$f-$k
    echo "packed after $f trial $k $(date -u +%T)"
  done
done
wait $P; echo "expat rc $? $(date -u +%T)"
