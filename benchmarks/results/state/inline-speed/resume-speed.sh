#!/usr/bin/env bash
# Starts or resumes the speed cells (plan-2026-12-02-inline-speed.md) in one step, idempotently, on this
# machine or a fresh one: the setup and AFL++ 5.02c's root, its 2^18 and 2^24 maps, each cell's worktree
# /work/speed-cells-COMMIT (./cells), each cell's committed state unpacked where its output directory
# is missing, then chain-speed.sh in the background. The cells need both cores: it refuses while a
# study chain runs. Run from /work/main: bash benchmarks/results/state/inline-speed/resume-speed.sh
set -euo pipefail
cd /work/main
S=benchmarks/results/state/inline-speed
if pgrep -f chain-speed.sh >/dev/null; then echo "chain-speed.sh already runs"; exit 0; fi
if pgrep -f "chain-expat" >/dev/null; then echo "a study chain runs: the speed cells start after it (both cores)"; exit 1; fi
[ -x .venv/bin/python ] || bash .ci/setup.sh --tests
[ -x .venv-current/bin/python ] || bash .ci/aflpp-current.sh --venv .venv-current
for p in 18 24; do bash benchmarks/aflpp_bigmap.sh $p >/dev/null; done
for t in $(grep -v '^#' $S/cells | cut -d" " -f2 | sort -u); do .venv/bin/python benchmarks/bugs/buglibs.py source $t >/dev/null; done  # sources fetched on the host
for c in $(grep -v '^#' $S/cells | cut -d" " -f5 | sort -u); do
  [ -d /work/speed-cells-$c ] || git worktree add --detach /work/speed-cells-$c $c
done
grep -v '^#' $S/cells | while read -r t _ _ out _; do
  a=benchmarks/results/state/inline-speed-$t.tar.gz
  if [ ! -d "$out" ] && [ -e "$a" ]; then
    mkdir -p "$out" && .venv/bin/python benchmarks/keep_state.py unpack "$a" "$out"
    touch -d '1 minute ago' "$out/sensitive_metrics.json"; touch "/work/runs/speed-packed-$t"  # as packed
  fi
done
cp $S/chain-speed.sh /work/runs/
rm -f /work/runs/hold  # a hold asked of the last chain
cd /work/runs && nohup bash /work/runs/chain-speed.sh > /work/runs/chain-speed.log 2>&1 &
echo "chain-speed.sh started $(date -u +%T): /work/runs/chain-speed.log, /work/runs/speed-NAME.log"
