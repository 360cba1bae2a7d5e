#!/usr/bin/env bash
# Configures and builds slurm-elastic into ./build (or $BUILD_DIR); shared by quickstart and tests.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
jobs=${JOBS:-$(nproc)}
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j "$jobs"
