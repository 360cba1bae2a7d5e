#!/usr/bin/env bash
# The nice lift on the trace variants of ../cpu-2026-11-29-variants (arrivals x 0.7, 0.85, 1.2;
# each trace's second half), each at its rule size and a smaller one: elastic-live / Slurm alone
# without the lift (--nice-lift-after 0) and with the default, and the makespan with / without.
# usage: variants.sh SIM [TRACES_DIR]   (one line per variant and size)
set -euo pipefail
sim=$1 traces=${2:-../shared/data/traces}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$(dirname "$0")/../../trace_variants.sh" "$tmp" "$traces"
# Rule sizes (cpu-2026-11-29-variants/seed1.txt) and one smaller size each.
for case in philly_2017_dec_dev_x0.7:28x8 philly_2017_dec_dev_x0.7:20x8 \
            philly_2017_dec_dev_x0.85:24x8 philly_2017_dec_dev_x0.85:16x8 \
            philly_2017_dec_dev_x1.2:18x8 philly_2017_dec_dev_x1.2:12x8 \
            philly_2017_dec_dev_h2:8x8 philly_2017_dec_dev_h2:6x8 itp_2021_dev_x0.7:20x8 \
            itp_2021_dev_x0.7:14x8 itp_2021_dev_x0.85:16x8 itp_2021_dev_x0.85:12x8 \
            itp_2021_dev_x1.2:12x8 itp_2021_dev_x1.2:8x8 itp_2021_dev_h2:8x8; do
  trace=$tmp/${case%%:*}.csv size=${case##*:}
  "$sim" --trace "$trace" --cluster "$size" --policy elastic --live --rigid-fraction 1 \
    --json "$tmp/a.json" >/dev/null 2>&1
  for k in 0 6; do
    "$sim" --trace "$trace" --cluster "$size" --policy elastic --live --nice-lift-after "$k" \
      --json "$tmp/k$k.json" >/dev/null 2>&1
  done
  python3 -c "import json,sys
a,z,s=(json.load(open(p)) for p in sys.argv[2:])
print('%s %s: Slurm alone %d s, no lift %.2f, lift %.2f, makespan lift / no lift %.3f' % (
    sys.argv[1], '$size', a['avg_jct_s'], a['avg_jct_s'] / z['avg_jct_s'],
    a['avg_jct_s'] / s['avg_jct_s'], s['makespan_s'] / z['makespan_s']))" \
    "${case%%:*}" "$tmp/a.json" "$tmp/k0.json" "$tmp/k6.json"
done
