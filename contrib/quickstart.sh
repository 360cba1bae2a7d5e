#!/usr/bin/env bash
# The README's demo: install deps, build, start a 4-node local Slurm cluster with the plugin,
# run an elastic Fashion-MNIST training job that shrinks and grows, show the result, tear down.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
say() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

say "installing dependencies"
"$top/contrib/install-deps.sh"
say "building"
"$top/contrib/build.sh"

say "starting a local Slurm cluster (4 nodes, slurmdbd, the elastic SPANK plugin)"
exports=$("$top/contrib/local-cluster.sh" up --nodes 4 --plugin "$build/spank/spank_elastic.so")
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
global_batch = 256
lr = 0.05
momentum = 0.9
seed = 1
steps = 150
threads = 1
log_every = 25
[checkpoint]
dir = "$work/ckpt"
TOML

say "submitting: sbatch -N 2-4 --elastic --elastic-est=8"
# Until elasticd drives resizes (its own issue), the batch script resizes its own allocation the
# way elasticd's supervisor will (design.md §3): checkpoint at a step boundary (--until-step),
# shrink with scontrol, grow with an expansion job, relaunch from the checkpoint.
job=$(sbatch --parsable -N 2-4 --exclusive --elastic --elastic-est=8 --chdir "$work" -o "$work/job.out" --wrap "
  set -e
  train() { n=\$1; shift; srun --mpi=pmix -N \$n -n \$n $build/agent/elastic-agent train --config $work/train.toml \"\$@\"; }
  refresh() { . ./slurm_job_\${SLURM_JOB_ID}_resize.sh; export SLURM_TASKS_PER_NODE=\$SLURM_JOB_CPUS_PER_NODE; }
  echo \"== generation 1: \$SLURM_JOB_NUM_NODES nodes (\$SLURM_JOB_NODELIST)\"
  train \$SLURM_JOB_NUM_NODES --until-step 50 | tail -n 1
  scontrol update JobId=\$SLURM_JOB_ID NumNodes=1
  refresh
  echo \"== generation 2, shrunk: \$SLURM_JOB_NUM_NODES node (\$SLURM_JOB_NODELIST)\"
  train 1 --until-step 100 | tail -n 1
  sleep 1   # a node shrunk away must not be launched on within the same second (credential)
  # salloc has no --parsable in 22.05: take the id from its message. --exclude keeps the
  # expansion off the node the job still holds (it would otherwise share it, CR_Core).
  exp=\$(salloc --no-shell -N 2 --exclusive --exclude=\$SLURM_JOB_NODELIST \\
        --dependency=expand:\$SLURM_JOB_ID 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
  scontrol update JobId=\$exp NumNodes=0
  scancel \$exp
  scontrol update JobId=\$SLURM_JOB_ID NumNodes=ALL
  refresh
  echo \"== generation 3, grown: \$SLURM_JOB_NUM_NODES nodes (\$SLURM_JOB_NODELIST)\"
  train \$SLURM_JOB_NUM_NODES | tail -n 1
")
echo "job $job submitted" >&2
while squeue -h -j "$job" 2>/dev/null | grep -q .; do sleep 1; done
say "job output"
cat "$work/job.out"
# A resized job has one accounting record per size; the last one holds the final state.
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
