#!/usr/bin/env bash
# The live path's replays (elastic-sim --live) with and without preemption for rigid jobs
# (--no-preempt-for-rigid), against Slurm alone on the same model (--rigid-fraction 1).
# usage: run.sh SIM [seed]   (one markdown row per trace and size; avg JCT in s, in brackets
# elastic-live / Slurm alone, > 1 = elasticd helps; then the preemptions with the rule)
set -euo pipefail
sim=$1 seed=${2:-1}
T=${TRACES:-../shared/data/traces}
field() { python3 -c "import json,sys;print(round(json.load(open(sys.argv[1]))[sys.argv[2]]))" "$1" "$2"; }
ratio() {
  python3 -c "import sys;print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for case in philly_2017_dec_dev:8x8 philly_2017_dec_dev:12x8 philly_2017_dec_dev:16x8 \
            philly_2017_dec_dev:20x8 philly_2017_dec_dev:22x8 itp_2021_dev:8x8 \
            itp_2021_dev:12x8 itp_2021_dev:14x8; do
  trace=$T/${case%%:*}.csv size=${case##*:}
  run() { "$sim" --trace "$trace" --cluster "$size" --seed "$seed" --json "$tmp/$1.json" \
            "${@:2}" >/dev/null 2>&1; field "$tmp/$1.json" avg_jct_s; }
  alone=$(run alone --policy elastic --live --rigid-fraction 1)
  without=$(run without --policy elastic --live --no-preempt-for-rigid)
  with=$(run with --policy elastic --live)
  echo "| ${case%%_*} | $size | $alone | $without ($(ratio "$alone" "$without")) |" \
       "$with ($(ratio "$alone" "$with")) | $(field "$tmp/with.json" preemptions) |"
done
