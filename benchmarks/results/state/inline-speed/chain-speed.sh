#!/usr/bin/env bash
# Runs the speed cells listed in ./cells (plan-2026-12-02-inline-speed.md and its amendments), in that
# order, each from the worktree /work/speed-cells-COMMIT frozen at its commit, each with --resume.
# Beside them a packer: whenever a cell's sensitive_metrics.json changes (after each trial and after its
# census) it packs the cell's output directory into state/inline-speed-NAME.tar.gz and commits it, so a
# session's end loses at most the trial it stopped. Started by resume-speed.sh; logs
# /work/runs/chain-speed.log, /work/runs/speed-NAME.log. `touch /work/runs/hold` stops it before the next cell.
set -uo pipefail
M=/work/main
mapfile -t CELLS < <(grep -v '^#' $M/benchmarks/results/state/inline-speed/cells)  # name target metrics out commit args
pack() {  # NAME OUT: pack and commit when sensitive_metrics.json is newer than the last pack
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
packer() { while sleep 30; do for c in "${CELLS[@]}"; do set -- $c; pack "$1" "$4"; done; done; }
packer & PK=$!
trap 'kill $PK 2>/dev/null' EXIT
for c in "${CELLS[@]}"; do
  set -- $c
  if [ -e /work/runs/hold ]; then echo "hold before $1 $(date -u +%T)"; break; fi
  name=$1 target=$2 metrics=$3 out=$4 commit=$5; shift 5
  echo "start $name: $target $metrics $* $(date -u +%T)"
  (cd /work/speed-cells-$commit && bash $M/.ci/aflpp-current.sh run $M/.venv-current/bin/python \
     benchmarks/sensitive_metrics.py --targets "$target" --metrics "$metrics" "$@" \
     --trials 5 --seconds 300 --jobs 2 --out "$out" --resume) > /work/runs/speed-$name.log 2>&1
  rc=$?; echo "$name rc $rc $(date -u +%T)"; pack "$name" "$out"
  [ $rc -eq 0 ] || break
done
echo "chain ends $(date -u +%T)"
