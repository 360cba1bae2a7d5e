#!/usr/bin/env bash
# Trace variants the policies were not tuned on, made from the two development traces: arrivals
# compressed or stretched (submit times x 0.7, 0.85, 1.2) and the second half of each trace
# alone (re-based to t = 0). For each, the rule size (the largest NODESx8 at which backfill is
# >= 80 % busy while jobs arrive) and two smaller sizes where backfill can run: ratio = backfill's
# avg JCT / the policy's, and the policy's makespan / backfill's.
# usage: run.sh SIM [TRACES_DIR]   (prints one line per variant and size)
set -euo pipefail
sim=$1 traces=${2:-../shared/data/traces}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys;print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
"$(dirname "$0")/../../trace_variants.sh" "$tmp" "$traces"
for trace in "$tmp"/*.csv; do
  rule=0
  for n in $(seq 4 2 48); do
    "$sim" --trace "$trace" --cluster "${n}x8" --policy backfill --json "$tmp/r.json" \
      >/dev/null 2>&1 || continue
    awk -v u="$(field "$tmp/r.json" gpu_utilization_submission)" 'BEGIN {exit !(u >= 0.8)}' &&
      rule=$n
  done
  for n in $rule $((rule - 2)) $((rule - 4)); do
    line="$(basename "$trace" .csv) ${n}x8 (rule ${rule}x8)"
    if ! "$sim" --trace "$trace" --cluster "${n}x8" --policy backfill --json "$tmp/b.json" \
      >/dev/null 2>&1; then
      echo "$line: backfill cannot run (a job larger than the cluster)"
      continue
    fi
    for p in easyscale rubick elastic; do
      "$sim" --trace "$trace" --cluster "${n}x8" --policy "$p" --json "$tmp/q.json" >/dev/null 2>&1
      line+=" $p=$(python3 -c "import json,sys;b,q=(json.load(open(a)) for a in sys.argv[1:])
jct, span = b['avg_jct_s'] / q['avg_jct_s'], q['makespan_s'] / b['makespan_s']
print('%.2fx (makespan %.2f)' % (jct, span))" "$tmp/b.json" "$tmp/q.json")"
    done
    echo "$line"
  done
done
