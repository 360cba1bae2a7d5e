#!/usr/bin/env bash
# The floor check of docs/architecture.md: the tree passes, and the check itself fails on an
# include that goes up a floor, one that crosses wings, and a folder the table does not list.
set -euo pipefail
src=${1:?usage: $0 SOURCE_DIR}
check=$src/contrib/check-architecture.py
"$check" "$src"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/docs" "$work/common" "$work/agent/plan" "$work/agent/est" "$work/scheduler/policy"
cp "$src/docs/architecture.md" "$work/docs/"
echo '// ground' >"$work/common/a.h"
echo '// est' >"$work/agent/est/e.h"
echo '// plan' >"$work/agent/plan/p.h"
echo '// policy' >"$work/scheduler/policy/q.h"
printf '#include "common/a.h"\n#include "agent/est/e.h"\n' >"$work/agent/plan/ok.cc"
"$check" "$work" >/dev/null || { echo "FAIL: a downward include was refused"; exit 1; }

expect_failure() {  # NAME FILE CONTENT PATTERN
  printf '%s\n' "$3" >"$work/$2"
  if out=$("$check" "$work"); then echo "FAIL: $1 passed the check"; exit 1; fi
  grep -q "$4" <<<"$out" || { echo "FAIL: $1: no '$4' in: $out"; exit 1; }
  rm "$work/$2"
  echo "ok: $1 refused"
}
expect_failure "an include up a floor" agent/est/up.cc '#include "agent/plan/p.h"' 'is not below'
expect_failure "an include across wings" agent/plan/x.cc '#include "scheduler/policy/q.h"' "only 'shared' crosses wings"
mkdir -p "$work/agent/newfolder"
expect_failure "an unlisted folder" agent/newfolder/n.cc '// new' 'not in docs/architecture.md'
