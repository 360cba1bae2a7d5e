#!/usr/bin/env bash
# elastic with and without its growth placement floor (--no-compact-growth), and easyscale and
# rubick, on both development traces at the sizes docs/evaluation.md uses: ratio = backfill's avg
# JCT / the policy's (same seed), and elastic's makespan / backfill's.
# usage: run.sh SIM [seed]   (one markdown row per trace and size)
set -euo pipefail
sim=$1 seed=${2:-1}
T=${TRACES:-../shared/data/traces}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for case in philly_2017_dec_dev:8x8 philly_2017_dec_dev:12x8 philly_2017_dec_dev:16x8 \
            philly_2017_dec_dev:20x8 philly_2017_dec_dev:22x8 itp_2021_dev:8x8 \
            itp_2021_dev:10x8 itp_2021_dev:12x8 itp_2021_dev:14x8; do
  trace=$T/${case%%:*}.csv size=${case##*:}
  run() { "$sim" --trace "$trace" --cluster "$size" --seed "$seed" --json "$tmp/$1.json" \
            "${@:2}" >/dev/null 2>&1; }
  run bf --policy backfill
  run es --policy easyscale
  run ru --policy rubick
  run old --policy elastic --no-compact-growth
  run new --policy elastic
  python3 - "$tmp" "${case%%_*}" "$size" <<'PY'
import json, sys
d, trace, size = sys.argv[1:]
j = {k: json.load(open(f"{d}/{k}.json")) for k in ("bf", "es", "ru", "old", "new")}
r = lambda k: j["bf"]["avg_jct_s"] / j[k]["avg_jct_s"]
print(f"| {trace} | {size} | {r('es'):.2f} | {r('ru'):.2f} | {r('old'):.2f} | **{r('new'):.2f}** |"
      f" {j['new']['avg_jct_s']:,.0f} | {j['new']['makespan_s'] / j['bf']['makespan_s']:.3f} |")
PY
done
