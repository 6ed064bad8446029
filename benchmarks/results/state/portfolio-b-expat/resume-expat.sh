#!/usr/bin/env bash
# Resumes the expat study (arms A and B, 10 x 30 min each) on this machine or a fresh one, idempotently:
# the setup and AFL++ 5.02c's root, the frozen worktree at 1cf5fff, B's env files, the committed state
# archive unpacked (when /work/runs/study-expat is not there), every trial the archive holds marked as
# packed, then chain-expat.sh in the background (it packs and commits the archive after each trial).
# Run from /work/main: bash benchmarks/results/state/portfolio-b-expat/resume-expat.sh
set -euo pipefail
cd /work/main
S=benchmarks/results/state/portfolio-b-expat
# a running chain reads its script as it goes: never rewrite it under it
if pgrep -f chain-expat.sh >/dev/null; then echo "chain-expat.sh already runs"; exit 0; fi
if pgrep -f chain-speed.sh >/dev/null; then echo "the speed cells hold both cores: touch /work/runs/hold (stops after the cell) or pkill -f chain-speed.sh; pkill -f sensitive_metrics.py; pkill afl-fuzz"; exit 1; fi
[ -x .venv/bin/python ] || bash .ci/setup.sh --tests
[ -x .venv-current/bin/python ] || bash .ci/aflpp-current.sh --venv .venv-current
[ -d /work/study-expat ] || git worktree add --detach /work/study-expat 1cf5fff
mkdir -p /work/runs/pfb-expat-env /work/runs/expat-packed
cp $S/autotune-build.env $S/autotune-run.env /work/runs/pfb-expat-env/
cp $S/study-expat.sh $S/chain-expat.sh $S/expat_rows.sh /work/runs/
if [ ! -d /work/runs/study-expat ]; then
  mkdir -p /work/runs/study-expat
  .venv/bin/python benchmarks/keep_state.py unpack benchmarks/results/state/portfolio-expat.tar.gz /work/runs/study-expat
fi
for f in default ours; do
  for t in /work/runs/study-expat/trials/$f/trial-*/trial.json; do
    [ -e "$t" ] || continue
    k=$(basename "$(dirname "$t")"); touch "/work/runs/expat-packed/$f-${k#trial-}"
  done
done
cd /work/runs && nohup bash /work/runs/chain-expat.sh > /work/runs/chain-expat.log 2>&1 &
echo "chain-expat.sh started $(date -u +%T): /work/runs/chain-expat.log, /work/runs/study-expat.log"
