#!/usr/bin/env bash
# Runs the speed cells listed in ./cells (plan-2026-12-02-inline-speed.md), in that order, from the
# frozen worktree /work/speed-cells, each with --resume: libxml2 (the ctx cell's census, then ctx-2,
# ngram-4, ngram-8), sqlite3's ctx-2, expat's ngram-4. Beside them a packer: whenever a cell's
# sensitive_metrics.json changes (after each trial and after its census) it packs the cell's output
# directory into state/inline-speed-TARGET.tar.gz and commits it, so a session's end loses at most the
# trial it stopped. Started by resume-speed.sh; logs /work/runs/chain-speed.log, /work/runs/speed-TARGET.log.
set -uo pipefail
M=/work/main
W=/work/speed-cells
mapfile -t CELLS < <(grep -v '^#' $M/benchmarks/results/state/inline-speed/cells)  # target metrics out
pack() {  # TARGET OUT: pack and commit when sensitive_metrics.json is newer than the last pack
  local t=$1 out=$2 mark=/work/runs/speed-packed-$1
  [ -e "$out/sensitive_metrics.json" ] || return 0
  [ -e "$mark" ] && [ ! "$out/sensitive_metrics.json" -nt "$mark" ] && return 0
  touch "$mark"
  (cd $M && nice -n 19 .venv/bin/python benchmarks/keep_state.py pack "$out" benchmarks/results/state/inline-speed-$t.tar.gz \
     && git add benchmarks/results/state/inline-speed-$t.tar.gz \
     && for i in 1 2 3 4 5; do git commit -q -m "speed cells state: $t packed $(date -u +%H:%M)" -- \
          benchmarks/results/state/inline-speed-$t.tar.gz && break; sleep 5; done)
  echo "packed $t $(date -u +%T)"
}
packer() { while sleep 30; do for c in "${CELLS[@]}"; do set -- $c; pack "$1" "$3"; done; done; }
packer & PK=$!
trap 'kill $PK 2>/dev/null' EXIT
for c in "${CELLS[@]}"; do
  set -- $c
  if [ -e /work/runs/hold ]; then echo "hold before $1 $(date -u +%T)"; break; fi
  echo "start $1 ($2) $(date -u +%T)"
  (cd $W && bash $M/.ci/aflpp-current.sh run $M/.venv-current/bin/python benchmarks/sensitive_metrics.py \
     --targets "$1" --metrics "$2" --layouts inline,indexed --maps 16,18 --trials 5 --seconds 300 --jobs 2 \
     --out "$3" --resume) > /work/runs/speed-$1.log 2>&1
  rc=$?; echo "$1 rc $rc $(date -u +%T)"; pack "$1" "$3"
  [ $rc -eq 0 ] || break
done
echo "chain ends $(date -u +%T)"
