#!/usr/bin/env bash
# Builds everything (the agent too, when LibTorch is there) with ASan + UBSan into
# build-sanitize/ (or $BUILD_DIR) and runs the test suites there; any sanitizer report fails the
# test that caused it (issue 7 item 3):
#   1. unit suites, leaks checked;
#   2. integration suites without a cluster (real Open MPI ranks), leaks checked (all but the
#      LibTorch-heavy user_model_integration_test, see below); Open MPI's own
#      allocations at exit are suppressed by contrib/sanitizer/lsan.supp, nothing of ours;
#   3. cluster suites (label `cluster`): the ASan-built SPANK module runs inside Slurm's daemons
#      and clients, which are not instrumented, so the ASan runtime (and libstdc++, see below) is
#      preloaded into every process of the test (Slurm, MariaDB and munged included). Memory
#      errors abort whichever process hits them (the test then fails); leaks are not checked here
#      (Slurm's and MariaDB's would be reported), they are in 1 and 2.
#   Wait limits and ctest TIMEOUTs are 4x in this build (tests/common/time_scale.h).
#   [CLUSTER_JOBS=N] contrib/sanitize.sh [--no-cluster] [extra ctest arguments]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build-sanitize}
cluster=1
if [[ ${1:-} == --no-cluster ]]; then cluster=0; shift; fi
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DELASTIC_SANITIZE=ON >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}"

# halt_on_error/abort_on_error: the first report ends the process with a failure.
asan=halt_on_error=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$top/contrib/sanitizer/lsan.supp
ASAN_OPTIONS=$asan:detect_leaks=1 ctest --test-dir "$build" --output-on-failure -L unit "$@"
# fast_unwind_on_malloc=0: Open MPI is built without frame pointers; the slow unwinder gives leak
# stacks that name its modules, which is what the suppressions match (too slow for the unit
# suites: the simulator's property tests then take over 5 minutes).
# user_model_integration_test trains a ResNet-18 from TorchScript: under the slow unwinder every
# LibTorch allocation is unwound and it outruns its limit, so it runs with the fast one and without
# leak checks (the same agent code paths are leak-checked in agent_train_test and agent_data_test).
ASAN_OPTIONS=$asan:detect_leaks=1:fast_unwind_on_malloc=0 \
  ctest --test-dir "$build" --output-on-failure -L integration -LE cluster \
  -E user_model_integration_test "$@"
ASAN_OPTIONS=$asan:detect_leaks=0 \
  ctest --test-dir "$build" --output-on-failure -R user_model_integration_test "$@"
if ((cluster)); then
  runtime=$(gcc -print-file-name=libasan.so)
  # libstdc++ preloaded after the runtime: a process that loads it only later (python3 loading
  # LibTorch, as online_model_integration_test's artifacts do) otherwise aborts at its first C++
  # throw, ASan's __cxa_throw interceptor having found no real one at start-up.
  cxxlib=$(readlink -f "$(g++ -print-file-name=libstdc++.so)")
  LD_PRELOAD=$runtime:$cxxlib ASAN_OPTIONS=$asan:detect_leaks=0 \
    ctest --test-dir "$build" --output-on-failure -j "${CLUSTER_JOBS:-2}" -L cluster "$@"
fi
