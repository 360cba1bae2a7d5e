#!/usr/bin/env bash
# elasticd's nice lift (scheduler/policy/nice_lift.h) in the live path's replay: elastic-live
# with [scheduler] nice_lift_after = 0 (never: the ablation), 4, 6 (the default) and 8, against
# Slurm alone on the same model (--live --rigid-fraction 1).
# usage: run.sh SIM [seed]   (one markdown row per trace and size: avg JCT of Slurm alone in s,
# then elastic-live / Slurm alone for each nice_lift_after, > 1 = elasticd helps; then the
# one-node elastic jobs' average queue time in s without and with the default lift)
set -euo pipefail
sim=$1 seed=${2:-1}
T=${TRACES:-../shared/data/traces}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jct() { python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['avg_jct_s'])" "$1"; }
ratio() { python3 -c "import sys;print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
# Average queue time of the elastic jobs of exactly one node (8 devices), from --json's jobs.
queued() {
  python3 -c "import json,sys
jobs=[j for j in json.load(open(sys.argv[1]))['jobs'] if not j['rigid'] and j['requested_devices']==8]
print(round(sum(j['queue_s'] for j in jobs)/max(len(jobs),1)))" "$1"
}
for case in philly_2017_dec_dev:8x8 philly_2017_dec_dev:12x8 philly_2017_dec_dev:16x8 \
            philly_2017_dec_dev:20x8 philly_2017_dec_dev:22x8 itp_2021_dev:8x8 \
            itp_2021_dev:12x8 itp_2021_dev:14x8; do
  trace=$T/${case%%:*}.csv size=${case##*:}
  run() { "$sim" --trace "$trace" --cluster "$size" --seed "$seed" --json "$tmp/$1.json" \
            "${@:2}" >/dev/null 2>&1; }
  run alone --policy elastic --live --rigid-fraction 1
  row="| ${case%%_*} | $size | $(printf '%.0f' "$(jct "$tmp/alone.json")") |"
  for k in 0 4 6 8; do
    run "k$k" --policy elastic --live --nice-lift-after "$k"
    row+=" $(ratio "$(jct "$tmp/alone.json")" "$(jct "$tmp/k$k.json")") |"
  done
  echo "$row $(queued "$tmp/k0.json") → $(queued "$tmp/k6.json") |"
done
