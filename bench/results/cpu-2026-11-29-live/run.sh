#!/usr/bin/env bash
# The live path's replays (elastic-sim --live) before and after sub-node jobs share nodes:
# ratio = backfill's avg JCT (device-granular, without --live) / the replay's.
# usage: run.sh NEW_SIM OLD_SIM [seed]   (prints one markdown row per trace and size)
set -euo pipefail
new=$1 old=$2 seed=${3:-1}
T=${TRACES:-../shared/data/traces}
jct() { python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['avg_jct_s'])" "$1"; }
ratio() {
  python3 -c "import sys;print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"
}
tmp=$(mktemp -d)
for case in philly_2017_dec_dev:8x8 philly_2017_dec_dev:12x8 philly_2017_dec_dev:16x8 \
            philly_2017_dec_dev:20x8 itp_2021_dev:8x8 itp_2021_dev:12x8 itp_2021_dev:14x8; do
  trace=$T/${case%%:*}.csv size=${case##*:}
  sim() { "$1" --trace "$trace" --cluster "$size" --seed "$seed" --json "$tmp/$2.json" "${@:3}" \
            >/dev/null 2>&1; jct "$tmp/$2.json"; }
  bf=$(sim "$new" bf --policy backfill)
  row="| ${case%%_*} | $size |"
  for p in easyscale rubick elastic; do
    before=$(ratio "$bf" "$(sim "$old" o-$p --policy $p --live)")
    row+=" $before → $(ratio "$bf" "$(sim "$new" n-$p --policy $p --live)") |"
  done
  row+=" $(ratio "$bf" "$(sim "$new" rigid --policy elastic --live --rigid-fraction 1)") |"
  echo "$row"
done
rm -rf "$tmp"
