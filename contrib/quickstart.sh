#!/usr/bin/env bash
# The README's demo: install deps, build, start a 4-node local Slurm cluster with the plugin,
# run an elastic Fashion-MNIST training job that shrinks and grows, show the result, tear down.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# Its own build directory, with the tests' optimisation (-O2) but no debug information: the demo
# needs no debugger, and LibTorch's headers compile about a fifth faster without -g
# (contrib/run-tests.sh builds build/, RelWithDebInfo, with the tests; the demo installs and
# configures without them).
build=${BUILD_DIR:-$top/build-demo}
say() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

say "installing dependencies"
"$top/contrib/install-deps.sh" --demo
# The demo trains on CPUs: no CUDA/NCCL sources even where a toolkit is installed.
say "building the plugin, elasticd and elastic-agent (contrib/run-tests.sh builds the rest)"
BUILD_DIR=$build ELASTIC_TARGETS="spank_elastic elasticd elastic-agent" \
  "$top/contrib/build.sh" -DELASTIC_TESTS=OFF -DELASTIC_BENCH=OFF -DELASTIC_CUDA_TOOLKIT=OFF \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG"

say "starting a local Slurm cluster (4 nodes, slurmdbd, the elastic SPANK plugin, elasticd)"
exports=$("$top/contrib/local-cluster.sh" up --nodes 4 --plugin "$build/spank/spank_elastic.so" \
          --elasticd "$build/scheduler/daemon/elasticd")
eval "$exports"
trap '"$top/contrib/local-cluster.sh" down --dir "$ELASTIC_CLUSTER_DIR" >&2' EXIT
sinfo >&2

work=$(mktemp -d)
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
steps = 1500
threads = 1
log_every = 500
[checkpoint]
dir = "$work/ckpt"
TOML

summary() { scontrol show job "$1" | grep -o 'AdminComment=[^ ]*' || true; }
wait_nodes() {  # job, node count: until elasticd's summary shows it
  for _ in $(seq 180); do summary "$1" | grep -q "nodes=$2/" && return 0; sleep 0.5; done
  return 1
}

say "a rigid job holds 3 nodes for 10 s; the elastic job (-N 1-4) starts on the 4th"
sbatch -N 3 --exclusive -o /dev/null --wrap 'sleep 10' >/dev/null
job=$(sbatch --parsable -N 1-4 --exclusive --elastic --elastic-est=8 -o "$work/job.out" \
      --wrap "$build/agent/elastic-agent run --config $work/train.toml")
sleep 2; squeue >&2; summary "$job"
say "the rigid job ends: elasticd grows the elastic job into the idle nodes"
wait_nodes "$job" 4; squeue >&2; summary "$job"
say "a rigid -N 3 job arrives: elasticd shrinks the elastic job so it can start"
rigid=$(sbatch --parsable -N 3 --exclusive -o /dev/null --wrap 'sleep 8')
wait_nodes "$job" 1; sleep 1; squeue >&2; summary "$job"
say "the rigid job ends: the elastic job grows back"
wait_nodes "$job" 4; squeue >&2; summary "$job"
while squeue -h -j "$job" 2>/dev/null | grep -q .; do sleep 1; done
say "job output (supervisor notes and training)"
grep -v 'samples_per_s' "$work/job.out" | grep -v UCX | grep -v ucp_
say "elasticd's decisions"
cat "$ELASTIC_CLUSTER_DIR/log/elasticd.log"
state=$(sacct -n -X -P -j "$job" -o State | tail -n1)
say "job $job: $state"
[[ $state == COMPLETED ]]

say "reference: the same config trained without interruption in one process"
sed -i "s|$work/ckpt|$work/ckpt-reference|" "$work/train.toml"
reference=$("$build/agent/elastic-agent" train --config "$work/train.toml" | tail -n 1)
echo "$reference"
elastic=$(grep 'params_sha256' "$work/job.out" | tail -n 1)
if [[ ${elastic##*params_sha256=} == "${reference##*params_sha256=}" ]]; then
  say "identical parameters: the job that shrank and grew, and the uninterrupted run"
else
  say "parameters differ between the elastic and the uninterrupted run"
  exit 1
fi
