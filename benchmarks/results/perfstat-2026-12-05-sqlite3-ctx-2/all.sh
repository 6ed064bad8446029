#!/bin/bash
R=/work/runs/perfstat
$R/pair.sh 1 in16 ix16-nocache; $R/pair.sh 2 ix16-cache in16; $R/pair.sh 3 ix16-nocache ix16-cache
echo done $(date -u +%T)
