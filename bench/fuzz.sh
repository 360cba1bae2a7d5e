#!/usr/bin/env bash
# Fuzzing run (issue 7): configures a clang build directory with -DELASTIC_FUZZ=ON, builds the
# libFuzzer targets of tests/fuzz/ and runs each for N executions (default 1,000,000) on a scratch
# copy of its seed corpus (tests/fuzz/corpus/<target>/, left unchanged). Prints per target the
# executions, exec/s, coverage gained over the seeds (edges) and crashes (leaks, sanitizer reports,
# uncaught exceptions and timeouts count too); exits 1 if any target crashed, keeping the
# crashing input and the log. `--runs 20000` makes a quick CI smoke test.
#
#   bench/fuzz.sh [--runs N] [--jobs J] [BUILD_DIR] [TARGET...]   (BUILD_DIR: build-fuzz/)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build-fuzz runs=1000000 jobs=$(nproc) targets=()
usage() { echo "usage: $0 [--runs N] [--jobs J] [BUILD_DIR] [TARGET...]" >&2; exit 2; }
while (($#)); do
  case $1 in
    --runs) runs=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    -*) usage ;;
    *_fuzzer) targets+=("$1"); shift ;;
    *) build=$(realpath -m "$1"); shift ;;
  esac
done
[[ $runs =~ ^[0-9]+$ && $jobs =~ ^[1-9][0-9]*$ ]] || usage
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found: apt-get install clang" >&2
  exit 1
fi
((${#targets[@]})) || mapfile -t targets < <(ls "$top/tests/fuzz/corpus")

CC=clang CXX=clang++ cmake -S "$top" -B "$build" -DELASTIC_FUZZ=ON -DELASTIC_AGENT=OFF \
  -DELASTIC_TESTS=OFF -DELASTIC_BENCH=OFF >/dev/null
cmake --build "$build" --target "${targets[@]}" -j "$jobs"

work=$(mktemp -d "${TMPDIR:-/tmp}/elastic-fuzz.XXXXXX")
export UBSAN_OPTIONS=print_stacktrace=1
failed=0 table=()
for target in "${targets[@]}"; do
  dir=$work/$target
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$top/tests/fuzz/corpus/$target"/* "$dir/corpus/"
  echo "fuzz.sh: $target: $runs runs (log $dir/log)" >&2
  status=0 start=$(date +%s.%N)
  "$build/tests/fuzz/$target" -runs="$runs" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/" "$dir/corpus" >"$dir/log" 2>&1 || status=$?
  seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  final_stat() { sed -n "s/^stat::$1: *//p" "$dir/log" | tail -1; }
  execs=$(final_stat number_of_executed_units)
  # libFuzzer's own average counts whole seconds only (0 for a run under one second).
  speed=$(awk -v n="${execs:-0}" -v s="$seconds" 'BEGIN { printf "%d", (s > 0 ? n / s : 0) }')
  # Edges covered after the seeds (INITED) and at the end (the last status line).
  cov_seeds=$(grep -m1 -o 'INITED cov: [0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo 0)
  cov_end=$(grep -o ' cov: [0-9]*' "$dir/log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  crashes=$(find "$dir/artifacts" -type f | wc -l)
  if ((status != 0 || crashes > 0)); then
    failed=1 crashes=$((crashes > 0 ? crashes : 1))
    echo "fuzz.sh: $target FAILED (exit $status); input and log kept in $dir" >&2
    tail -n 40 "$dir/log" >&2
  else
    rm -rf "$dir"
  fi
  table+=("$(printf '%-26s %10s %9s %9s %8s' "$target" "${execs:-?}" "${speed:-?}" \
    "+$((cov_end - cov_seeds))" "$crashes")")
done
printf '%-26s %10s %9s %9s %8s\n' target executions exec/s new_cov crashes
printf '%s\n' "${table[@]}"
((failed)) || rmdir "$work"
exit "$failed"
