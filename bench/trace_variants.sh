#!/usr/bin/env bash
# Writes the eight trace variants the policies were not tuned on into OUT_DIR, from the two
# development traces: arrivals compressed or stretched (submit times x 0.7, 0.85, 1.2:
# <name>_x<f>.csv) and the second half of each trace alone, re-based to t = 0 (<name>_h2.csv).
# usage: trace_variants.sh OUT_DIR [TRACES_DIR]
set -euo pipefail
out=$1 traces=${2:-../shared/data/traces}
for name in philly_2017_dec_dev itp_2021_dev; do
  src=$traces/$name.csv
  for f in 0.7 0.85 1.2; do
    awk -F, -v OFS=, -v f="$f" 'NR == 1 {print; next} {$2 = int($2 * f); print}' "$src" \
      >"$out/${name}_x$f.csv"
  done
  awk -F, -v OFS=, 'NR == 1 {print; next} {rows[NR] = $0} END {
      first = int((NR - 1) / 2) + 2; split(rows[first], r, ","); t0 = r[2];
      for (i = first; i <= NR; i++) {split(rows[i], r, ","); r[2] -= t0; line = r[1];
        for (k = 2; k <= length(r); k++) line = line "," r[k]; print line}}' "$src" \
    >"$out/${name}_h2.csv"
done
