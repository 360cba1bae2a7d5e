#!/usr/bin/env bash
# Checks what the elasticd binary can call: no libc call that runs a command, and from libslurm
# only reads plus slurm_update_job (AdminComment) and background placement's two writes
# (slurm_update_partition of the background partition, slurm_requeue of background jobs; their
# call sites: check_elasticd_call_sites.sh): nothing that cancels, signals, suspends, submits or
# allocates a job.
set -euo pipefail
bin=$1
imports=$(nm -D --undefined-only "$bin" | awk '{print $2}' | sed 's/@.*//' | sort -u)
# The list was read (a wrong file or tool would make every check below pass).
for sym in slurm_load_jobs slurm_update_job munge_decode unlinkat; do
  grep -qx "$sym" <<<"$imports" || { echo "expected import missing: $sym"; exit 1; }
done
commands=$(grep -xE '(execve|execveat|execv|execvp|execvpe|execl|execlp|execle|fexecve|system|popen|posix_spawn|posix_spawnp|dlopen)' <<<"$imports" || true)
if [[ -n $commands ]]; then
  echo "imports that run a command:"; echo "$commands"; exit 1
fi
allowed='slurm_(init|load_[a-z_]+|free_[a-z_]+|hostlist_[a-z]+|strerror|get_errno|job_reason_string|get_select_nodeinfo|populate_node_partitions|init_job_desc_msg|update_job|init_part_desc_msg|update_partition|requeue)'
slurm_calls=$(grep -E '^slurm_' <<<"$imports" | grep -vxE "$allowed" || true)
if [[ -n $slurm_calls ]]; then
  echo "libslurm calls beyond reads, slurm_update_job and background placement's:"; echo "$slurm_calls"; exit 1
fi
echo "imports ok: $(grep -cE '^slurm_' <<<"$imports") libslurm calls, all reads, slurm_update_job or background placement's; no command"
