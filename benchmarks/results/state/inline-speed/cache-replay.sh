#!/bin/bash
# plan-2026-12-02-inline-speed.md, addendum of 2026-12-05 18:50: the index cache's replay from a filled
# index file per configuration (replay_cost.py --warm-index). Usage: cache-replay.sh LIB IN16_BIN IX16_BIN  (both cores idle)
set -e
lib=$1; in16=$2; ix16=$3; R=/work/runs/cache-replay
base=AUTOTUNE_METRIC=ctx-2,AUTOTUNE_MAP_SIZE=65536,AUTOTUNE_KEY_HASH=afl
ix=$base,AUTOTUNE_LAYOUT=twolevel,AUTOTUNE_INDEX_SIZE=4194304,AUTOTUNE_INDEX_FILE=index.bin
cd /work/main
bash .ci/aflpp-current.sh run .venv-current/bin/python benchmarks/replay_cost.py \
  --binary "in16=$in16:$base,AUTOTUNE_LAYOUT=flat" \
  --binary "ix16-cache=$ix16:$ix,AUTOTUNE_INDEX_CACHE=1" \
  --binary "ix16-nocache=$ix16:$ix,AUTOTUNE_INDEX_CACHE=0" \
  --queue "$lib-a=$R/q-$lib-a" --queue "$lib-b=$R/q-$lib-b" --reference in16 \
  --warm-index --rounds 5 --repeat 4 --out $R/out-$lib
