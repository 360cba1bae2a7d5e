#!/usr/bin/env bash
# Configures and builds slurm-elastic into ./build (or $BUILD_DIR); shared by quickstart and tests.
# ELASTIC_TARGETS="a b" builds only those targets (the demo builds what it runs); arguments go
# to the configure step.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
jobs=${JOBS:-$(nproc)}
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
targets=()
for t in ${ELASTIC_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
