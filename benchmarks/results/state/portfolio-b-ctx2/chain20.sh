#!/usr/bin/env bash
# After chain19 (B9): A9 (and C9 after it, which the session's end may cut), packing as soon as A9's trial.json exists.
set -uo pipefail
M=/work/main
while pgrep -f chain19.sh >/dev/null; do sleep 10; done
if [ -e /work/runs/hold ]; then echo "hold before A9 $(date -u +%T)"; exit 0; fi
echo "start A9C9 $(date -u +%T)"
bash /work/runs/study-pf.sh libxml2 /work/runs/study-pf-libxml2 10 30 --resume > /work/runs/study-A9C9.log 2>&1 &
for f in default ctx2; do
  while [ ! -e /work/runs/study-pf-libxml2/trials/$f/trial-9/trial.json ]; do sleep 10; done
  echo "$f trial 9 done $(date -u +%T)"
  cd $M && .venv/bin/python benchmarks/keep_state.py pack /work/runs/study-pf-libxml2 benchmarks/results/state/portfolio-libxml2.tar.gz
  for i in 1 2 3 4 5; do git commit -q -m "portfolio study state, libxml2: packed after $f trial 9" -- benchmarks/results/state/portfolio-libxml2.tar.gz && break; sleep 5; done
  echo "packed after $f trial 9 $(date -u +%T)"
done
wait; echo "A9C9 rc $? $(date -u +%T)"
