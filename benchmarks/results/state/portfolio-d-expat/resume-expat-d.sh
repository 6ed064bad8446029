#!/usr/bin/env bash
# Starts or resumes arm D on expat, idempotently (a fresh machine or this one): the setup and AFL++ 5.02c's
# root, the worktree /work/study-expat-d at 0976030, B's env files, the committed state archive unpacked
# (when /work/runs/study-expat-d is not there and the archive is), its trials marked packed, then
# chain-expat-d.sh in the background. D runs only where the late-phase screen passed (the plan); this
# script refuses to start it unless benchmarks/results/portfolio-study-2026-12-04-expat-screen.json says so.
# Run from /work/main: bash benchmarks/results/state/portfolio-d-expat/resume-expat-d.sh
set -euo pipefail
cd /work/main
S=benchmarks/results/state/portfolio-d-expat
SCREEN=benchmarks/results/portfolio-study-2026-12-04-expat-screen.json
if pgrep -f chain-expat-d.sh >/dev/null; then echo "chain-expat-d.sh already runs"; exit 0; fi
if pgrep -f chain-expat.sh >/dev/null; then echo "expat's A/B chain still runs: D starts after it"; exit 1; fi
[ -e "$SCREEN" ] || { echo "no $SCREEN: run late_screen.py on expat's 20 trials first (state/README.md)"; exit 1; }
python3 -c "import json,sys; d=json.load(open('$SCREEN')); sys.exit(0 if d['planned']==10 and all(s['n']==10 and s['n_baseline']==10 for s in d['screens']) and any(s['passed'] for s in d['screens']) else 1)" \
  || { echo "the late-phase screen did not pass on expat's 10 + 10 trials: D does not run (the plan)"; exit 1; }
[ -x .venv/bin/python ] || bash .ci/setup.sh --tests
[ -x .venv-current/bin/python ] || bash .ci/aflpp-current.sh --venv .venv-current
[ -d /work/study-expat-d ] || git worktree add --detach /work/study-expat-d 0976030
mkdir -p /work/runs/pfb-expat-env /work/runs/expat-d-packed
cp benchmarks/results/state/portfolio-b-expat/autotune-build.env benchmarks/results/state/portfolio-b-expat/autotune-run.env /work/runs/pfb-expat-env/
cp $S/study-expat-d.sh $S/chain-expat-d.sh /work/runs/
if [ ! -d /work/runs/study-expat-d ] && [ -e benchmarks/results/state/portfolio-expat-d.tar.gz ]; then
  mkdir -p /work/runs/study-expat-d
  .venv/bin/python benchmarks/keep_state.py unpack benchmarks/results/state/portfolio-expat-d.tar.gz /work/runs/study-expat-d
fi
for t in /work/runs/study-expat-d/trials/late/trial-*/trial.json; do
  [ -e "$t" ] || continue
  k=$(basename "$(dirname "$t")"); touch "/work/runs/expat-d-packed/late-${k#trial-}"
done
cd /work/runs && nohup bash /work/runs/chain-expat-d.sh > /work/runs/chain-expat-d.log 2>&1 &
echo "chain-expat-d.sh started $(date -u +%T): /work/runs/chain-expat-d.log, /work/runs/study-expat-d.log"
