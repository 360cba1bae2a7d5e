#!/usr/bin/env bash
# elastic with and without its preemption of longer best-effort jobs for a waiting best-effort job
# (--no-preempt-longer), and easyscale and rubick: ratio = backfill's avg JCT / the policy's (same
# seed); then, elastic without -> with the rule: p99 JCT (s), makespan / backfill's, preemptions.
# usage: run.sh SIM [seed] [dev|variants|others]   (dev: both development traces at the sizes
# docs/evaluation.md uses; variants: the eight trace variants at their rule size and smaller ones;
# others: the development traces with a mixed cluster, CPUs, plans or rigid jobs)
set -euo pipefail
sim=$1 seed=${2:-1} set=${3:-dev}
T=${TRACES:-../shared/data/traces}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$set" = others ]; then
  dir=$T
  cases="philly_2017_dec_dev:16x8:a100,32x4:v100 philly_2017_dec_dev:12x8:--cpu-need-max=12
         philly_2017_dec_dev:16x8:--memory-need-max=2 philly_2017_dec_dev:16x8:--rigid-fraction=0.3
         itp_2021_dev:10x8:--cpu-need-max=12 itp_2021_dev:14x8:--memory-need-max=2
         itp_2021_dev:14x8:--rigid-fraction=0.3"
elif [ "$set" = dev ]; then
  dir=$T
  cases="philly_2017_dec_dev:8x8 philly_2017_dec_dev:12x8 philly_2017_dec_dev:16x8
         philly_2017_dec_dev:20x8 philly_2017_dec_dev:22x8 itp_2021_dev:8x8 itp_2021_dev:10x8
         itp_2021_dev:12x8 itp_2021_dev:14x8"
else
  dir=$tmp
  "$(dirname "$0")/../../trace_variants.sh" "$tmp" "$T"
  # Rule sizes first (../cpu-2026-11-29-variants/seed1.txt), then the smaller ones.
  cases="itp_2021_dev_x0.7:20x8 itp_2021_dev_x0.7:18x8 itp_2021_dev_x0.7:16x8
         itp_2021_dev_x0.85:16x8 itp_2021_dev_x0.85:14x8 itp_2021_dev_x0.85:12x8
         itp_2021_dev_x1.2:12x8 itp_2021_dev_x1.2:10x8 itp_2021_dev_x1.2:8x8 itp_2021_dev_h2:8x8
         philly_2017_dec_dev_x0.7:28x8 philly_2017_dec_dev_x0.7:26x8 philly_2017_dec_dev_x0.7:24x8
         philly_2017_dec_dev_x0.85:24x8 philly_2017_dec_dev_x0.85:22x8
         philly_2017_dec_dev_x0.85:20x8 philly_2017_dec_dev_x1.2:18x8 philly_2017_dec_dev_x1.2:16x8
         philly_2017_dec_dev_x1.2:14x8 philly_2017_dec_dev_h2:8x8 philly_2017_dec_dev_h2:6x8
         philly_2017_dec_dev_h2:4x8"
fi
for case in $cases; do
  # trace:size[:flag]; a mixed cluster's size has colons of its own, a flag starts with --.
  trace=$dir/${case%%:*}.csv rest=${case#*:} flag=
  case $rest in *:--*) flag=${rest##*:}; rest=${rest%:--*} ;; esac
  size=$rest
  run() { "$sim" --trace "$trace" --cluster "$size" --seed "$seed" --json "$tmp/$1.json" \
            ${flag:+"$flag"} "${@:2}" >/dev/null 2>&1; }
  run bf --policy backfill
  run es --policy easyscale
  run ru --policy rubick
  run old --policy elastic --no-preempt-longer
  run new --policy elastic
  python3 - "$tmp" "${case%%:*}" "$size${flag:+ $flag}" <<'PY'
import json, sys
d, trace, size = sys.argv[1:]
j = {k: json.load(open(f"{d}/{k}.json")) for k in ("bf", "es", "ru", "old", "new")}
r = lambda k: j["bf"]["avg_jct_s"] / j[k]["avg_jct_s"]
m = lambda k: j[k]["makespan_s"] / j["bf"]["makespan_s"]
o, n = j["old"], j["new"]
print(f"| {trace} | {size} | {r('es'):.2f} | {r('ru'):.2f} | {r('old'):.2f} | **{r('new'):.2f}** |"
      f" {o['p99_jct_s']:,.0f} -> {n['p99_jct_s']:,.0f} | {m('old'):.3f} -> {m('new'):.3f} |"
      f" {o['preemptions']} -> {n['preemptions']} |")
PY
done
