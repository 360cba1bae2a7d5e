#!/usr/bin/env bash
# The live path's replays (elastic-sim --live) with and without etc/job_submit.lua's nice for
# elastic jobs (--no-elastic-nice), against Slurm alone on the same model (--rigid-fraction 1).
# usage: run.sh SIM [seed]   (one markdown row per trace and size; avg JCT in s)
set -euo pipefail
sim=$1 seed=${2:-1}
T=${TRACES:-../shared/data/traces}
jct() { python3 -c "import json,sys;print(round(json.load(open(sys.argv[1]))['avg_jct_s']))" "$1"; }
ratio() {
  python3 -c "import sys;print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"
}
tmp=$(mktemp -d)
for case in philly_2017_dec_dev:8x8 philly_2017_dec_dev:12x8 philly_2017_dec_dev:16x8 \
            philly_2017_dec_dev:20x8 philly_2017_dec_dev:22x8 itp_2021_dev:8x8 \
            itp_2021_dev:12x8 itp_2021_dev:14x8; do
  trace=$T/${case%%:*}.csv size=${case##*:}
  run() { "$sim" --trace "$trace" --cluster "$size" --seed "$seed" --json "$tmp/$1.json" \
            "${@:2}" >/dev/null 2>&1; jct "$tmp/$1.json"; }
  bf=$(run bf --policy backfill)
  alone=$(run alone --policy elastic --live --rigid-fraction 1)
  fifo=$(run fifo --policy elastic --live --no-elastic-nice)
  nice=$(run nice --policy elastic --live)
  echo "| ${case%%_*} | $size | $alone | $fifo ($(ratio "$alone" "$fifo")) |" \
       "$nice ($(ratio "$alone" "$nice")) | $(ratio "$bf" "$alone") | $(ratio "$bf" "$nice") |"
done
rm -rf "$tmp"
