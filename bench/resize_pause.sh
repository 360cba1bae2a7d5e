#!/usr/bin/env bash
# Resize-pause benchmark (issue 4): on a real 4-node local cluster with elasticd, one elastic
# Fashion-MNIST job is ordered (`elasticd resize`, admin) to shrink 4 -> 2 and grow 2 -> 4, N times
# each; the supervisor measures each pause from order received to the first training step done on
# the new node set. Prints every pause with its phases (checkpoint, allocation change, relaunch)
# and the median/min/max per kind (target: median <= 3 s).
#
#   bench/resize_pause.sh [--build DIR] [--rounds N]     (root; N defaults to 5)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build rounds=5
while (($#)); do
  case $1 in
    --build) build=$(realpath "${2:?}"); shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--rounds N]" >&2; exit 1 ;;
  esac
done

# A long resize interval keeps elasticd's own grows out of the way: only the orders below happen.
exports=$("$top/contrib/local-cluster.sh" up --nodes 4 --plugin "$build/spank/spank_elastic.so" \
          --elasticd "$build/scheduler/daemon/elasticd" --resize-interval 1h)
eval "$exports"
work=$(mktemp -d)
trap '"$top/contrib/local-cluster.sh" down --dir "$ELASTIC_CLUSTER_DIR" >&2; rm -rf "$work"' EXIT

cat >"$work/train.toml" <<TOML
[model]
name = "fmnist_cnn"
[data]
path = "/usr/share/datasets/fashion-mnist"
[train]
ests = 8
global_batch = 64
lr = 0.05
momentum = 0.9
seed = 1
steps = 1000000
threads = 1
log_every = 1000000
[checkpoint]
dir = "$work/ckpt"
TOML

elasticd_cli() { "$build/scheduler/daemon/elasticd" --config "$ELASTIC_CLUSTER_DIR/etc/elasticd.toml" "$@"; }
summary() { scontrol show job "$job" | grep -o 'AdminComment=[^ ]*' || true; }
pauses() { grep -c 'resize pause' "$work/job.out" 2>/dev/null || true; }
# Orders the job to $1 nodes and waits for the supervisor's pause line for that order.
order() {
  local before; before=$(pauses)
  for _ in $(seq 60); do elasticd_cli resize --job "$job" --nodes "$1" >/dev/null 2>&1 && break; sleep 0.5; done
  for _ in $(seq 240); do (($(pauses) > before)) && return 0; sleep 0.25; done
  echo "no pause reported for the order to $1 nodes" >&2; tail -n 20 "$work/job.out" >&2; exit 1
}

job=$(sbatch --parsable -N 2-4 --exclusive --elastic --elastic-est=8 -o "$work/job.out" \
      --wrap "$build/agent/elastic-agent run --config $work/train.toml")
for _ in $(seq 120); do summary | grep -q 'nodes=4/2-4' && break; sleep 0.5; done
summary | grep -q 'nodes=4/2-4' || { echo "job $job did not start on 4 nodes: $(summary)" >&2; exit 1; }
for _ in $(seq 120); do grep -q 'first step done' "$work/job.out" 2>/dev/null && break; sleep 0.5; done

for ((i = 1; i <= rounds; i++)); do
  order 2
  order 4
done
scancel "$job"

# "resize pause 1.94 s (shrink 4 -> 2: checkpoint 0.31 s, allocation 0.05 s, relaunch 1.58 s;"
grep -o 'resize pause [0-9.]* s ([a-z]* [0-9]* -> [0-9]*: [^;]*' "$work/job.out" |
  awk '{kind = substr($5, 2); v = $3; print "  " substr($0, 14) ")"; all[kind] = all[kind] " " v}
       END {
         for (k in all) {
           n = split(substr(all[k], 2), a, " ");
           for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
           med = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2;
           printf "%s: n=%d median %.2f s  min %.2f s  max %.2f s  (target median <= 3 s)\n", k, n, med, a[1], a[n]
         }
       }'
