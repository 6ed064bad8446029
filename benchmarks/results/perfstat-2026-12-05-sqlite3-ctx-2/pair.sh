#!/bin/bash
# perfstat/pair.sh ROUND NAME1 NAME2: two 120-s campaigns at once under perf stat (the plan's amendment of 19:18)
R=/work/runs/perfstat; B=/work/runs/cache-branch/builds
base="AUTOTUNE_METRIC=ctx-2 AUTOTUNE_MAP_SIZE=65536 AUTOTUNE_KEY_HASH=afl"
ix="$base AUTOTUNE_LAYOUT=twolevel AUTOTUNE_INDEX_SIZE=4194304"
declare -A BIN=([in16]=$B/eeea53158cbba13bf080/fuzzer [ix16-nocache]=$B/2c50140cf7b308bbd0fe/fuzzer [ix16-cache]=$B/2c50140cf7b308bbd0fe/fuzzer)
declare -A ENV=([in16]="$base AUTOTUNE_LAYOUT=flat" [ix16-nocache]="$ix AUTOTUNE_INDEX_CACHE=0" [ix16-cache]="$ix AUTOTUNE_INDEX_CACHE=1")
cd /work/main
for n in $2 $3; do
  o=$R/r$1-$n
  perf stat -e task-clock,page-faults,minor-faults,major-faults,context-switches -o $R/r$1-$n.perf -- \
    bash .ci/aflpp-current.sh run .venv-current/bin/python $R/one.py $n ${BIN[$n]} 120 $o ${ENV[$n]} > $R/r$1-$n.log 2>&1 &
done
wait
