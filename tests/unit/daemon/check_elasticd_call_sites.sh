#!/usr/bin/env bash
# Where elasticd forks and writes to Slurm (docs/security.md U10), from the built binary and its
# debug line table: its one `fork` call is DetachAfterStartup's (daemonising) and there is no
# vfork/clone/daemon; its one `slurm_update_job` call is UpdateJob's, called only by
# SetAdminComment (whose descriptor sets nothing but job_id and admin_comment),
# StartRequeuedJob (job_id, min_nodes, max_nodes and begin_time), RestoreNodeRange (job_id,
# min_nodes and max_nodes) and SetNice (job_id and nice); its one `slurm_update_partition`
# call is SetPartitionNodes' (name and nodes only) and its one `slurm_requeue` call RequeueJob's
# (background placement, preemption and grows by requeue, scheduler/slurm/background_calls.cc).
# Usage: check_elasticd_call_sites.sh ELASTICD SOURCE_DIR.
# Exit 77 (skipped) when the binary has no line table (a build without -g).
set -euo pipefail
bin=$1 src=$2
fail() { echo "FAIL: $*"; exit 1; }
command -v objdump >/dev/null && command -v addr2line >/dev/null || { echo "no binutils"; exit 77; }
if nm -D --undefined-only "$bin" | awk '{print $2}' | sed 's/@.*//' |
    grep -qxE '(vfork|clone|clone3|daemon|_Fork)'; then
  fail "imports a process-creating call other than fork"
fi
# The source lines each call may come from: the one line in the named function's body.
line_in() {  # FILE FUNCTION-START-REGEX CALL-REGEX
  awk -v s="$2" -v c="$3" '$0 ~ s {inside=1} inside && $0 ~ c {print NR} inside && /^}/ {inside=0}' "$1"
}
check_calls() {  # SYMBOL FILE FUNCTION-REGEX
  local symbol=$1 file=$2 function=$3 expected sites site where
  expected=$(line_in "$src/$file" "$function" "[^\"a-z_]$symbol[(]")
  [[ $(wc -w <<<"$expected") -eq 1 ]] || fail "$file: expected one $symbol( call in $function, found: $expected"
  sites=$(objdump -d --no-show-raw-insn "$bin" | sed -n "s/^ *\([0-9a-f]*\):.*call.*<$symbol@plt>.*/\1/p")
  [[ -n $sites ]] || fail "no call to $symbol in $bin"
  [[ $(wc -w <<<"$sites") -eq 1 ]] || fail "$symbol is called from $(wc -w <<<"$sites") places: $sites"
  for site in $sites; do
    # The innermost frame (inlining included) of the call: file and line.
    where=$(addr2line -i -e "$bin" "0x$site" | head -n1)
    [[ $where != "??:"* ]] || { echo "no line table in $bin"; exit 77; }
    [[ ${where%% *} == */$file:$expected ]] ||
      fail "$symbol called at $where, not at $file:$expected ($function)"
    echo "$symbol: one call, at $where"
  done
}
check_calls fork scheduler/daemon/daemon.cc '^int DetachAfterStartup'
check_calls slurm_update_job scheduler/slurm/slurm_client.cc '^std::string UpdateJob'
# The descriptor's fields each caller sets (initialised by Slurm first); UpdateJob sets none.
desc_fields() {  # FUNCTION-REGEX
  awk -v s="$1" '$0 ~ s {inside=1} inside {print} inside && /^}/ {inside=0}' \
    "$src/scheduler/slurm/slurm_client.cc" | grep -oE '\bdesc\.[a-z_]+' | sort -u | tr '\n' ' '
}
fields=$(desc_fields '^std::string SetAdminComment')
[[ $fields == "desc.admin_comment desc.job_id " ]] || fail "SetAdminComment sets: $fields"
echo "SetAdminComment's descriptor sets only: $fields"
fields=$(desc_fields '^std::string StartRequeuedJob')
[[ $fields == "desc.begin_time desc.job_id desc.max_nodes desc.min_nodes " ]] ||
  fail "StartRequeuedJob sets: $fields"
echo "StartRequeuedJob's descriptor sets only: $fields"
fields=$(desc_fields '^std::string RestoreNodeRange')
[[ $fields == "desc.job_id desc.max_nodes desc.min_nodes " ]] || fail "RestoreNodeRange sets: $fields"
echo "RestoreNodeRange's descriptor sets only: $fields"
fields=$(desc_fields '^std::string SetNice')
[[ $fields == "desc.job_id desc.nice " ]] || fail "SetNice sets: $fields"
echo "SetNice's descriptor sets only: $fields"
fields=$(desc_fields '^std::string UpdateJob')
[[ $fields == "desc.job_id " ]] || fail "UpdateJob touches: $fields"
callers=$(grep -c '[^a-zA-Z_]UpdateJob(desc' "$src/scheduler/slurm/slurm_client.cc")
[[ $callers -eq 4 ]] || fail "UpdateJob is called $callers times, expected 4"
[[ $(grep -c 'slurm_init_job_desc_msg(&desc)' "$src/scheduler/slurm/slurm_client.cc") -eq 4 ]] ||
  fail "a descriptor is not initialised with slurm_init_job_desc_msg"
check_calls slurm_update_partition scheduler/slurm/background_calls.cc '^std::string SetPartitionNodes'
check_calls slurm_requeue scheduler/slurm/background_calls.cc '^std::string RequeueJob'
# SetPartitionNodes' message: initialised by Slurm, then only the name and node list set.
fields=$(awk '/^std::string SetPartitionNodes/ {inside=1} inside {print} inside && /^}/ {inside=0}' \
  "$src/scheduler/slurm/background_calls.cc" | grep -oE '\bmsg\.[a-z_]+' | sort -u | tr '\n' ' ')
[[ $fields == "msg.name msg.nodes " ]] || fail "SetPartitionNodes sets: $fields"
echo "slurm_update_partition's message sets only: $fields"
