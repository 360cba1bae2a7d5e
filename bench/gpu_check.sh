#!/usr/bin/env bash
# The GPU checks of issue 8 on a CUDA machine, with an elastic-agent built against a CUDA
# LibTorch: (1) which plans give the same params_sha256 as the dp/EST baseline on the GPU, across
# W = 1, 2 ranks (sharing the node's GPUs) and across a checkpoint that switches plan; (2) the
# gpt model on the GPU; (3) the performance-model fit and prediction (bench/perf_fit.sh with
# bench/perf_fit_gpu.toml). Prints a line per check; exits 1 if a bitwise check fails.
#
#   bench/gpu_check.sh [--build DIR] [--out DIR] [--no-profile]
#   (DEVICE=cpu runs the same checks on the CPU: the script's own dry run)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build out=$(mktemp -d) profile=1
while (($#)); do
  case $1 in
    --build) build=$(realpath "${2:?}"); shift 2 ;;
    --out) out=$(realpath -m "${2:?}"); shift 2 ;;
    --no-profile) profile=0; shift ;;
    *) echo "usage: $0 [--build DIR] [--out DIR] [--no-profile]" >&2; exit 1 ;;
  esac
done
agent=$build/agent/elastic-agent
[[ -x $agent ]] || { echo "gpu_check: $agent not built" >&2; exit 1; }
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
data=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
failed=0

# job NAME MODEL DATA PLAN STEPS [extra train keys...]: writes $out/NAME.toml
job() {
  local name=$1 model=$2 path=$3 plan=$4 steps=$5
  shift 5
  {
    printf '[model]\nname = "%s"\n[data]\npath = "%s"\n' "$model" "$path"
    printf '[train]\ndevice = "%s"\nests = 4\nglobal_batch = %s\nlr = 0.05\n' "${DEVICE:-cuda}" "${BATCH:-512}"
    printf 'momentum = 0.9\n'
    printf 'seed = 1\nsteps = %s\nthreads = 2\nplan = "%s"\nlog_every = 0\n' "$steps" "$plan"
    for kv in "$@"; do printf '%s\n' "$kv"; done
  } >"$out/$name.toml"
}
# train NAME RANKS [--until-step S]: the final line's params_sha256 (empty on failure)
train() {
  local name=$1 ranks=$2
  shift 2
  local log=$out/$name.log
  if ((ranks == 1)); then
    "$agent" train --config "$out/$name.toml" "$@" >"$log" 2>&1
  else
    mpirun --oversubscribe --bind-to none -np "$ranks" "$agent" train --config "$out/$name.toml" \
      "$@" >"$log" 2>&1
  fi || { echo "gpu_check: $name failed:" >&2; tail -5 "$log" >&2; }
  grep -o 'params_sha256=[0-9a-f]*' "$log" | tail -1 | cut -d= -f2
}
# expect LABEL A B: a bitwise check
expect() {
  if [[ -n $2 && $2 == "$3" ]]; then
    echo "gpu_check: same bits   $1"
  else
    echo "gpu_check: DIFFERENT   $1 (${2:-failed} vs ${3:-failed})"
    failed=1
  fi
}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
job base fmnist_cnn "$data" dp 4
base=$(train base 1)
echo "gpu_check: fmnist_cnn dp W=1 4 steps: $base"
job again fmnist_cnn "$data" dp 4
expect "dp W=1, run twice" "$base" "$(train again 1)"
# plan, ranks, zero-offload's host threads c
for p in "gc 1 1" "ga 1 1" "zero-dp 1 1" "zero-offload 1 2" "dp 2 1" "zero-dp 2 1" \
         "zero-offload 2 2" "gc 2 1"; do
  read -r plan ranks c <<<"$p"
  name=${plan}-w$ranks
  job "$name" fmnist_cnn "$data" "$plan" 4 "cpu_threads = $c"
  expect "$plan W=$ranks c=$c" "$base" "$(train "$name" "$ranks")"
done
# A checkpoint written by dp on one rank, resumed by zero-offload on two.
job resume fmnist_cnn "$data" dp 4 'cpu_threads = 2' '[checkpoint]' "dir = \"$out/ckpt\""
train resume 1 --until-step 2 >/dev/null
sed -i 's/^plan = "dp"/plan = "zero-offload"/' "$out/resume.toml"
expect "dp W=1 to step 2, then zero-offload W=2 from its checkpoint" "$base" "$(train resume 2)"
if ((profile)); then
  "$top/bench/perf_fit.sh" --build "$build" --out "$out/profile" --profile "$top/bench/perf_fit_gpu.toml"
fi
# gpt on the fortune corpus: runs, and twice gives the same bits.
export BATCH=64
job gpt gpt "${FORTUNES:-/usr/share/games/fortunes}" dp 3
gpt=$(train gpt 1)
grep -o 'loss=[0-9.]*' "$out/gpt.log" | tail -1 | sed 's/^/gpu_check: gpt dp W=1 3 steps /'
job gpt2 gpt "${FORTUNES:-/usr/share/games/fortunes}" dp 3
expect "gpt dp W=1, run twice" "$gpt" "$(train gpt2 1)"
job gpt-w2 gpt "${FORTUNES:-/usr/share/games/fortunes}" zero-offload 3
expect "gpt zero-offload W=2" "$gpt" "$(train gpt-w2 2)"

exit $failed
