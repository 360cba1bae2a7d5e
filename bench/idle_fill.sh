#!/usr/bin/env bash
# Background work in burst-parallel idle slots (issue 6; DeepPool §4-§5): one foreground
# Fashion-MNIST job under `train.plan = "burst"`, [2, 1, 1, 2] on 2 Open MPI ranks (rank 1 has
# nothing to run for blocks 1 and 2), trained side by side in one run without and with a
# background job (agent/multiplex/idle_filler.h). Per round: foreground throughput with / without
# (the slowdown the background job costs), rank 1's background throughput against the same job
# run alone, and the share of rank 1's waiting time that ran background pieces. Prints each
# round and the medians. No pass/fail: speed targets live here, not in tests.
#
#   bench/idle_fill.sh [--build DIR] [--rounds N] [--steps S] [--bg-batch B]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build rounds=5 steps=60 bg_batch=8
while (($#)); do
  case $1 in
    --build) build=$(realpath "${2:?}"); shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --steps) steps=${2:?}; shift 2 ;;
    --bg-batch) bg_batch=${2:?}; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--rounds N] [--steps S] [--bg-batch B]" >&2; exit 1 ;;
  esac
done
agent=$build/agent/elastic-agent
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fg() {  # $1: extra lines
  cat <<TOML
[model]
name = "fmnist_cnn"
[data]
path = "/usr/share/datasets/fashion-mnist"
[train]
ests = 6
global_batch = 192
lr = 0.05
momentum = 0.9
seed = 3
steps = $steps
threads = 1
log_every = $steps
plan = "burst"
burst_workers = [2, 1, 1, 2]
$1
TOML
}
fg "" >"$work/fg.toml"
fg "[background]
config = \"$work/bg.toml\"" >"$work/fg-bg.toml"
cat >"$work/bg.toml" <<TOML
[model]
name = "fmnist_cnn"
[data]
path = "/usr/share/datasets/fashion-mnist"
[train]
global_batch = $bg_batch
lr = 0.05
seed = 7
steps = 1000000
threads = 1
log_every = 0
TOML
sed "s/^seed = 7/seed = 8/; s/^log_every = 0/log_every = $((steps * 4))/; s/^steps = 1000000/steps = $((steps * 4))/" \
  "$work/bg.toml" >"$work/bg-solo.toml"

mpi() { mpirun --allow-run-as-root --oversubscribe -np 2 "$agent" train --config "$1" 2>&1; }
rate() { sed -n 's/^step=[0-9]* loss=[^ ]* samples_per_s=\([0-9.]*\).*/\1/p' | tail -1; }
field() { sed -n "s/.*background rank=1 .* $1=\([^ ]*\).*/\1/p"; }

printf '%-6s %10s %10s %8s %10s %10s %8s %8s\n' round fg_alone fg_with fg_ratio bg_in_idle \
  bg_solo bg_ratio filled
ratios=() bg_ratios=() fills=()
for round in $(seq 1 "$rounds"); do
  alone=$(mpi "$work/fg.toml" | rate)
  with_out=$(mpi "$work/fg-bg.toml")
  with=$(rate <<<"$with_out")
  bg_steps=$(field steps <<<"$with_out")
  waited=$(field waited_s <<<"$with_out")
  filled=$(field filled_s <<<"$with_out")
  # The background job's rate over the foreground run's wall time (its steps happen inside it).
  fg_seconds=$(awk -v s="$steps" -v r="$with" 'BEGIN { print s * 192 / r }')
  bg_in_idle=$(awk -v n="$bg_steps" -v b="$bg_batch" -v t="$fg_seconds" 'BEGIN { print n * b / t }')
  solo=$("$agent" train --config "$work/bg-solo.toml" 2>&1 | rate)
  ratio=$(awk -v a="$alone" -v w="$with" 'BEGIN { printf "%.3f", w / a }')
  bg_ratio=$(awk -v i="$bg_in_idle" -v s="$solo" 'BEGIN { printf "%.3f", i / s }')
  fill=$(awk -v f="$filled" -v w="$waited" 'BEGIN { printf "%.3f", (w > 0) ? f / w : 0 }')
  printf '%-6s %10.1f %10.1f %8s %10.1f %10.1f %8s %8s\n' "$round" "$alone" "$with" "$ratio" \
    "$bg_in_idle" "$solo" "$bg_ratio" "$fill"
  ratios+=("$ratio") bg_ratios+=("$bg_ratio") fills+=("$fill")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median fg throughput with/without background: $(median "${ratios[@]}")"
echo "median background throughput in idle slots / alone: $(median "${bg_ratios[@]}")"
echo "median share of rank 1's waiting that ran background pieces: $(median "${fills[@]}")"
echo "(samples/s; fg = foreground, global batch 192, E = 6, burst [2, 1, 1, 2] on 2 ranks;"
echo " bg = fmnist_cnn, batch $bg_batch, one piece per step; $steps foreground steps per run)"
