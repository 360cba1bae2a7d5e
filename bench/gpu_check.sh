#!/usr/bin/env bash
# The GPU checks of issue 8 on a CUDA machine, with an elastic-agent built against a CUDA
# LibTorch: (1) which plans give the same params_sha256 as the dp/EST baseline on the GPU, across
# W = 1, 2 ranks (sharing the node's GPUs) and across a checkpoint that switches plan; (2) the
# gpt model on the GPU; (3) the performance-model fit and prediction (bench/perf_fit.sh with
# bench/perf_fit_gpu.toml). Issue 26's CUDA/NCCL side first, from the same build directory when
# it was configured with the CUDA toolkit, tests and benchmarks: (0a) the gpu-labelled suites
# (the one-rank NCCL communicator, the slot fold kernel against the host fold's bits, the
# GradientStash device slots, the CUDA executor), where a skip counts as a failure on a GPU
# machine; (0b) W = 2 dp over NCCL against the baseline when the node has two GPUs (NCCL wants a
# GPU per rank; on one GPU the W = 2 runs keep the host exchange and say so); (0c)
# multiplex_cuda_bench, DeepPool Fig. 11 on CUDA (target: fg slowdown <= 1.10 at >= 1.5x combined
# throughput; reported, not a failure); (0d) a cuda job's plan memory budget from NVML
# (`elastic-plan memory`, issue 27). Prints a line per check; exits 1 if a check fails.
#
#   bench/gpu_check.sh [--build DIR] [--out DIR] [--no-profile] [--no-multiplex] [--cuda-only]
#   (DEVICE=cpu runs the same checks on the CPU: the script's own dry run)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build out=$(mktemp -d) profile=1 multiplex=1 cuda_only=0
while (($#)); do
  case $1 in
    --build) build=$(realpath "${2:?}"); shift 2 ;;
    --out) out=$(realpath -m "${2:?}"); shift 2 ;;
    --no-profile) profile=0; shift ;;
    --no-multiplex) multiplex=0; shift ;;
    --cuda-only) cuda_only=1; shift ;;
    *) echo "usage: $0 [--build DIR] [--out DIR] [--no-profile] [--no-multiplex] [--cuda-only]" >&2
       exit 1 ;;
  esac
done
agent=$build/agent/elastic-agent
[[ -x $agent ]] || ((cuda_only)) || { echo "gpu_check: $agent not built" >&2; exit 1; }
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
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)

# (0a) the gpu-labelled suites; on a machine with a GPU none may skip.
if [[ -f $build/CTestTestfile.cmake ]] && grep -rqs 'LABELS "gpu' "$build/tests"; then
  ctest --test-dir "$build" -L gpu --output-on-failure -V >"$out/ctest_gpu.log" 2>&1
  rc=$?
  skipped=$(grep -c '\[  SKIPPED \] [A-Za-z]' "$out/ctest_gpu.log")
  grep -E '^[0-9]+/[0-9]+ Test|tests passed|tests FAILED' "$out/ctest_gpu.log" \
    | sed 's/^/gpu_check: ctest /'
  if ((rc != 0)); then
    echo "gpu_check: FAILED     ctest -L gpu (exit $rc; $out/ctest_gpu.log)"; failed=1
  elif ((gpus > 0 && skipped > 0)); then
    echo "gpu_check: FAILED     ctest -L gpu: $skipped tests skipped on a machine with $gpus GPU(s)"
    failed=1
  else
    echo "gpu_check: passed     ctest -L gpu (NCCL one rank, slot fold bits, device slots," \
         "CUDA executor)"
  fi
else
  echo "gpu_check: no gpu-labelled suites in $build (configure with the CUDA toolkit and" \
       "ELASTIC_TESTS=ON)"
fi
# (0c) the multiplexing engine on CUDA.
if ((multiplex)) && [[ -x $build/bench/multiplex_cuda_bench ]]; then
  "$build/bench/multiplex_cuda_bench" --rounds "${MULTIPLEX_ROUNDS:-3}" >"$out/multiplex_cuda.txt" \
    2>"$out/multiplex_cuda.err" || { echo "gpu_check: FAILED     multiplex_cuda_bench"; failed=1; }
  sed 's/^/gpu_check: /' "$out/multiplex_cuda.txt"
fi
((cuda_only)) && exit $failed

job base fmnist_cnn "$data" dp 4
base=$(train base 1)
echo "gpu_check: fmnist_cnn dp W=1 4 steps: $base"
# (0d) issue 27: a cuda job's plan budget is its GPU's own memory, read through NVML.
if [[ ${DEVICE:-cuda} == cuda ]]; then
  budget=$("$build/tools/elastic-plan" memory --config "$out/base.toml" --ranks 1 2>&1 >/dev/null |
    grep -o 'memory budget: .*' || true)
  echo "gpu_check: elastic-plan memory, cuda job: ${budget:-no budget line}"
  [[ $budget == *NVML* ]] || { echo "gpu_check: FAILED     the cuda job's budget is not NVML's"; failed=1; }
fi
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
# (0b) W = 2 dp with the gradient exchange over NCCL: needs a GPU per rank.
if ((gpus >= 2)); then
  job nccl-w2 fmnist_cnn "$data" dp 4
  expect "dp W=2 over NCCL (device slots, slot fold kernel)" "$base" \
    "$(train nccl-w2 2)"
  grep -q 'gradient exchange over NCCL' "$out/nccl-w2.log" \
    || { echo "gpu_check: FAILED     dp W=2 did not use NCCL ($out/nccl-w2.log)"; failed=1; }
else
  echo "gpu_check: skipped    dp W=2 over NCCL ($gpus GPU: NCCL needs one per rank;" \
       "$(grep -ho 'gradient exchange over [^:]*: .*' "$out"/dp-w2.log | head -1))"
fi
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
