#!/bin/bash
# The decision check of issue 28 item 6: elastic-sim over 92 runs (both development traces; every
# policy at 4x8 ... 32x8 and the mixed cluster; CPUs, rigid jobs, plans and the ablations), JSON,
# summary and stderr per run. Run it with the binary before and after a change, then
# `diff -r -x '*.err' BEFORE AFTER`. Usage (repository root): sim_outputs.sh SIM OUTDIR
SIM=$1; OUT=$2; mkdir -p $OUT
P=../shared/data/traces/philly_2017_dec_dev.csv
I=../shared/data/traces/itp_2021_dev.csv
run() { # name trace cluster policy extra...
  local n=$1 t=$2 c=$3 p=$4; shift 4
  $SIM --trace $t --cluster "$c" --policy $p --json $OUT/$n.json "$@" > $OUT/$n.txt 2> >(grep -v "replay took" > $OUT/$n.err) || echo "FAIL $n"
}
for tn in philly itp; do
  T=$P; [ $tn = itp ] && T=$I
  for c in 4x8 8x8 12x8 16x8 32x8 16x8:a100,32x4:v100; do
    for p in backfill easyscale rubick elastic; do run $tn-$c-$p $T $c $p; done
  done
  for c in 12x8 16x8:a100:cpus=128,32x4:v100; do for p in backfill easyscale rubick elastic; do
    run $tn-$c-$p-cpu $T $c $p --cpu-need-min 1 --cpu-need-max 12; done; done
  for p in backfill easyscale rubick elastic; do run $tn-16x8-$p-rigid $T 16x8 $p --rigid-fraction 0.3; done
  for p in rubick-n rubick-e rubick-r rubick elastic; do run $tn-16x8-$p-plans $T 16x8 $p --memory-need-max 2; done
  for p in rubick elastic; do run $tn-16x8-$p-plans-cpu $T 16x8 $p --memory-need-max 2 --cpu-need-min 1 --cpu-need-max 12; done
  run $tn-mixed-elastic-nopre $T 16x8:a100,32x4:v100 elastic --no-preemption
  run $tn-mixed-elastic-nomixed $T 16x8:a100,32x4:v100 elastic --no-mixed-types
  run $tn-16x8-elastic-nosrpt $T 16x8 elastic --no-shortest-work-first
done
