#!/usr/bin/env bash
# elastic-agent vs plain PyTorch and torchrun DDP on one TorchScript model: speed, accuracy per W.
# (issue 25; the accuracy table is EasyScale's Fig. 3)
#
# For W = 1, 2, 4 (--workers): elastic-agent (W=1 directly, W>1 under mpirun) and torchrun DDP
# at the same W, plus the plain PyTorch loop twice (one process each), all on the same scripted
# model, shards, global batch, steps and optimizer, 1 thread per process. The agent keeps
# train.ests = --ests E at every W (default: the largest W, as the agent's own default is for a
# job that may use at most that many ranks, max nodes x ranks per node): the point is that its
# result does not depend on W. Each step every EST does forward/backward on global_batch / E
# samples, the E ESTs time-sliced over the W ranks, so at W=1 the agent does E micro-batches per
# step, not one batch. Hence two plain rows: "plain" (one forward/backward of the whole global
# batch, the user's loop) and "plain-ga" (the same E consecutive micro-batches of
# global_batch / E with gradient accumulation, one optimizer step: the agent's work on one rank,
# in plain PyTorch). The global batch must be a multiple of E, and every W at most E.
#
# Throughput counts the steps after the first --warmup steps everywhere. The agent's number is
# its own: log_every = warmup, and its progress lines after the first (each the rate since the
# line before) are combined into samples over time (their harmonic mean). Only an agent that
# printed no progress lines is timed by wall clock around the whole run (start-up included;
# marked "*"). Baselines: bench/vs_pytorch.py.
#
# Then the per-class test accuracy after the same steps: `elastic-agent eval` of the final
# checkpoint (checkpoint.every_steps = steps) for the agent, vs_pytorch.py's eval for the rest,
# and whether the agent's rows (and torchrun's) are identical across W. No pass/fail on speed;
# exits 1 if a run failed. Last, one line per W for scripts:
#   vs_pytorch: W=<w> agent=<x> torchrun=<y> plain=<z> plain_ga=<v>   ("-" where a run failed)
# What is printed on stdout (the parameters, including nproc and the date, and the tables) is also
# written to OUT/summary.txt, next to each run's log and the agent's configs.
#
#   bench/vs_pytorch.sh [--build DIR] [--out DIR] [--steps N] [--warmup N] [--batch N]
#                       [--ests E] [--workers "1 2 4"] [--model PT --data DIR]
#   (default model: tests/python/make_test_artifacts.py into OUT/artifacts, resnet18.pt on
#   images/; PYTHON and TORCHRUN override the interpreters; RUN_TIMEOUT, default 1800 s, bounds
#   each run)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build out='' steps=40 warmup=10 batch=64 ests='' workers="1 2 4" model='' data=''
usage="usage: $0 [--build DIR] [--out DIR] [--steps N] [--warmup N] [--batch N] [--ests E]"
usage+=" [--workers \"1 2 4\"] [--model PT --data DIR]"
while (($#)); do
  case $1 in
    --build) build=$(realpath "${2:?}"); shift 2 ;;
    --out) out=$(realpath -m "${2:?}"); shift 2 ;;
    --steps) steps=${2:?}; shift 2 ;;
    --warmup) warmup=${2:?}; shift 2 ;;
    --batch) batch=${2:?}; shift 2 ;;
    --ests) ests=${2:?}; shift 2 ;;
    --workers) workers=${2:?}; shift 2 ;;
    --model) model=$(realpath "${2:?}"); shift 2 ;;
    --data) data=$(realpath "${2:?}"); shift 2 ;;
    *) echo "$usage" >&2; exit 1 ;;
  esac
done
python=${PYTHON:-/usr/bin/python3}
torchrun=${TORCHRUN:-torchrun}
agent=$build/agent/elastic-agent
baseline=$top/bench/vs_pytorch.py
die() { echo "vs_pytorch: $*" >&2; exit 1; }
[[ -x $agent ]] || die "$agent not built (build the elastic-agent target, e.g. contrib/build.sh)"
[[ -n $model && -n $data || -z $model && -z $data ]] || die "--model and --data go together"
isint() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
for opt in steps warmup batch ests; do
  [[ $opt == ests && -z $ests ]] || isint "${!opt}" ||
    die "--$opt ${!opt}: expected a positive integer"
done
((warmup < steps && steps % warmup == 0)) ||
  die "--steps $steps, --warmup $warmup: need 0 < warmup < steps, steps a multiple of warmup"
[[ -n ${workers// /} ]] || die "--workers: empty"
max_w=0
for w in $workers; do
  isint "$w" || die "--workers \"$workers\": $w is not a positive integer"
  ((batch % w == 0)) || die "--batch $batch does not split over W=$w (torchrun's worker batch)"
  ((w > max_w)) && max_w=$w
done
ests=${ests:-$max_w}
((batch % ests == 0)) || die "--batch $batch is not a multiple of --ests $ests"
((max_w <= ests)) || die "W=$max_w > --ests $ests: the agent needs an EST per rank"
for tool in mpirun "$torchrun" "$python"; do
  command -v "$tool" >/dev/null || die "$tool not found"
done
out=${out:-$(mktemp -d)}
mkdir -p "$out"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [[ -z $model ]]; then
  "$python" "$top/tests/python/make_test_artifacts.py" "$out/artifacts" >/dev/null ||
    die "tests/python/make_test_artifacts.py failed"
  model=$out/artifacts/resnet18.pt data=$out/artifacts/images
fi
rm -f "$out/failed"  # the names of failed runs: they fail inside $(...), so a file, not a variable

# agent_job W: writes $out/agent-wW.toml (its checkpoint dir emptied: a run must not resume)
agent_job() {
  rm -rf "$out/agent-w$1-ckpt"
  cat >"$out/agent-w$1.toml" <<TOML
[model]
torchscript = "$model"
[data]
format = "tensors"
path = "$data"
[train]
ests = $ests
global_batch = $batch
lr = 0.05
momentum = 0.9
seed = 1
steps = $steps
threads = 1
log_every = $warmup
[checkpoint]
dir = "$out/agent-w$1-ckpt"
every_steps = $steps
TOML
}

# run_logged NAME COMMAND...: runs it into $out/NAME.log, at most RUN_TIMEOUT seconds (a hung
# run must not stall the table); reports a failure
run_logged() {
  local name=$1
  shift
  timeout --kill-after=10 "${RUN_TIMEOUT:-1800}" "$@" >"$out/$name.log" 2>&1 && return 0
  echo "vs_pytorch: $name failed (exit $?); the end of $out/$name.log:" >&2
  tail -5 "$out/$name.log" >&2
  echo "$name" >>"$out/failed"
  return 1
}

# agent_rate W SECONDS: the agent's samples/s after warm-up (see the header), or wall-clock
# based, starred, when it printed no progress lines
agent_rate() {
  local rates
  rates=$(sed -n 's/.*\bstep=[0-9]* loss=[^ ]* samples_per_s=\([0-9.eE+-]*\).*/\1/p' \
    "$out/agent-w$1.log" | tail -n +2)
  if [[ -n $rates ]]; then
    awk '$1 > 0 { n++; t += 1 / $1 } END { if (n) printf "%.1f", n / t }' <<<"$rates"
  else
    awk -v s="$steps" -v b="$batch" -v t="$2" 'BEGIN { if (t > 0) printf "%.1f*", s * b / t }'
  fi
}

run_agent() {  # W: train then eval; prints the rate
  local w=$1 start end
  agent_job "$w"
  local launch=("$agent")
  ((w > 1)) && launch=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$w" "$agent")
  start=$(date +%s.%N)
  run_logged "agent-w$w" "${launch[@]}" train --config "$out/agent-w$w.toml" || return
  end=$(date +%s.%N)
  run_logged "agent-w$w-eval" "$agent" eval --config "$out/agent-w$w.toml"
  agent_rate "$w" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
}

baseline_args() {
  printf '%s\n' --model "$model" --data "$data" --global-batch "$batch" --steps "$steps" \
    --warmup "$warmup" --lr 0.05 --momentum 0.9 --seed 1 --threads 1
}

run_torchrun() {  # W: prints the rate
  local w=$1 args
  mapfile -t args < <(baseline_args)
  # --redirects/--tee: torch 1.13's torchrun under Python 3.11 fails on their default "0"
  # (Std.from_str returns None); "2" (stderr) parses and leaves stdout alone.
  run_logged "torchrun-w$w" "$torchrun" --standalone --redirects 2 --tee 2 \
    --nproc_per_node="$w" "$baseline" ddp "${args[@]}" || return
  sed -n 's/^vs_pytorch: mode=ddp .*samples_per_s=\([0-9.]*\).*/\1/p' "$out/torchrun-w$w.log"
}

run_plain() {  # NAME M: the plain loop with M micro-batches per step; prints the rate
  local args
  mapfile -t args < <(baseline_args)
  run_logged "$1" "$python" "$baseline" plain "${args[@]}" --micro-batches "$2" || return
  sed -n 's/^vs_pytorch: mode=plain .*samples_per_s=\([0-9.]*\).*/\1/p' "$out/$1.log"
}

# classes LOG: "overall c0 c1 ..." accuracies from an eval's lines (agent or vs_pytorch.py)
classes() {
  local overall
  overall=$(sed -n 's/^\(elastic-agent\|vs_pytorch\): eval .*\baccuracy=\([^ ]*\).*/\2/p' "$1")
  local per_class
  per_class=$(sed -n 's/^class=[0-9]* .*\baccuracy=\([^ ]*\).*/\1/p' "$1" | paste -sd' ')
  echo "${overall:--}${per_class:+ $per_class}"
}

ratio() {  # A B: A / B to 2 decimals, "-" when either is missing (A may carry the "*")
  awk -v a="${1%\*}" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'
}

summary=$out/summary.txt
{
  echo "vs_pytorch: model=$model data=$data global_batch=$batch ests=$ests steps=$steps" \
    "warmup=$warmup threads=1 workers=\"$workers\" lr=0.05 momentum=0.9 seed=1"
  # nproc without the OMP_NUM_THREADS=1 above, which it would report instead of the CPUs
  echo "vs_pytorch: nproc=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" \
    "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) host=$(hostname)" \
    "torch=$("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo '?')" \
    "rev=$(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')" \
    "agent=$agent out=$out"
} | tee "$summary"
plain=$(run_plain plain 1)
plain_ga=$(run_plain plain-ga "$ests")
declare -A agent_rates torch_rates
for w in $workers; do
  agent_rates[$w]=$(run_agent "$w")
  torch_rates[$w]=$(run_torchrun "$w")
done

# rows[WHO-W]: the accuracy row of each agent and torchrun run
declare -A rows
for w in $workers; do
  rows[agent-$w]=$(classes "$out/agent-w$w-eval.log" 2>/dev/null)
  rows[torchrun-$w]=$(classes "$out/torchrun-w$w.log" 2>/dev/null)
done

# same WHO: whether WHO's rows are one and the same, and none missing
same() {
  local first=${rows[$1-${workers%% *}]} w
  for w in $workers; do
    local row=${rows[$1-$w]}
    [[ -n $row && $row != -* && $row == "$first" ]] || { echo no; return; }
  done
  echo yes
}

report() {
  echo
  echo "samples/s after $warmup warm-up steps (plain, plain-ga: one process; plain-ga:" \
    "$ests micro-batches of $((batch / ests)) per step, as the agent's $ests ESTs on one rank;" \
    "* = agent wall clock)"
  local fmt='%-3s %10s %10s %10s %10s %15s %12s %15s\n' w a t
  # shellcheck disable=SC2059
  printf "$fmt" W agent torchrun plain plain-ga agent/torchrun agent/plain agent/plain-ga
  for w in $workers; do
    a=${agent_rates[$w]:-} t=${torch_rates[$w]:-}
    # shellcheck disable=SC2059
    printf "$fmt" "$w" "${a:--}" "${t:--}" "${plain:--}" "${plain_ga:--}" \
      "$(ratio "$a" "$t")" "$(ratio "$a" "$plain")" "$(ratio "$a" "$plain_ga")"
  done

  echo
  echo "per-class test accuracy after $steps steps (EasyScale Fig. 3):" \
    "overall, then class 0, 1, ..."
  local who
  for who in agent torchrun; do
    for w in $workers; do printf '%-14s %s\n' "$who W=$w" "${rows[$who-$w]}"; done
  done
  printf '%-14s %s\n' "plain" "$(classes "$out/plain.log" 2>/dev/null)"
  printf '%-14s %s\n' "plain-ga" "$(classes "$out/plain-ga.log" 2>/dev/null)"

  # the agent's final params_sha256 per W: one value across W is the bitwise claim itself
  local hashes runs found distinct hash_note
  hashes=$(for w in $workers; do
    grep -o 'params_sha256=[0-9a-f]*' "$out/agent-w$w.log" 2>/dev/null | tail -1 | cut -d= -f2
  done)
  runs=$(wc -w <<<"$workers") found=$(grep -c . <<<"$hashes")
  distinct=$(sort -u <<<"$hashes" | grep -c .)
  if ((found < runs)); then
    hash_note="params_sha256 missing from $((runs - found)) of $runs runs"
  else
    hash_note="params_sha256: $distinct distinct value(s) over $runs runs"
  fi
  echo
  echo "vs_pytorch: agent per-class accuracy identical across W: $(same agent) ($hash_note)"
  echo "vs_pytorch: torchrun per-class accuracy identical across W: $(same torchrun)"
  [[ ! -s $out/failed ]] || echo "vs_pytorch: failed runs: $(paste -sd' ' "$out/failed")"
  echo "vs_pytorch: logs and configs in $out, this summary in $summary"
  for w in $workers; do
    echo "vs_pytorch: W=$w agent=${agent_rates[$w]:--} torchrun=${torch_rates[$w]:--}" \
      "plain=${plain:--} plain_ga=${plain_ga:--}"
  done
}
report | tee -a "$summary"
[[ ! -s $out/failed ]] || die "failed: $(paste -sd' ' "$out/failed")"
