#!/usr/bin/env bash
# The README's test command: install dependencies, build, run every CTest suite (unit and
# integration; integration tests start real Slurm clusters, so this runs as root).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
"$top/contrib/install-deps.sh"
"$top/contrib/build.sh"
cd "$build"
# Two clusters side by side at most: CI has 2 cores, and every cluster runs ~7 daemons.
ctest --output-on-failure -j "${CTEST_JOBS:-2}" "$@"
