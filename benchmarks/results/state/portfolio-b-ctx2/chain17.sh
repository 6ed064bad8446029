#!/usr/bin/env bash
# Session 45: instead of B7 (which might not end within the session), expat's race (B's rule on expat) after B6.
set -uo pipefail
M=/work/main
until grep -q "start B6" /work/runs/chain16.log; do sleep 20; done
touch /work/runs/hold; echo "hold set $(date -u +%T)"
while pgrep -f chain16.sh >/dev/null; do sleep 20; done
rm -f /work/runs/hold
grep -q "packed after B6" /work/runs/chain16.log || { echo "B6 not packed; stop"; exit 0; }
now=$(date -u +%H%M); if [ "$now" -gt 1235 ]; then echo "no time for the expat race ($now)"; exit 0; fi
echo "start expat race $(date -u +%T)"
bash /work/runs/expat-race.sh /work/runs/expat-race > /work/runs/expat-race.log 2>&1; echo "rc $? $(date -u +%T)"
cd $M && .venv/bin/python benchmarks/keep_state.py pack /work/runs/expat-race benchmarks/results/state/portfolio-b-expat/race.tar.gz \
  && git add benchmarks/results/state/portfolio-b-expat/race.tar.gz \
  && for i in 1 2 3 4 5; do git commit -q -m "portfolio study, expat: B's rule's race state, packed" -- benchmarks/results/state/portfolio-b-expat/race.tar.gz && break; sleep 7; done
echo "packed expat race $(date -u +%T)"
