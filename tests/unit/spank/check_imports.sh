#!/usr/bin/env bash
# Checks what spank_elastic.so can reach: no job prolog/epilog callback, and no libc call that
# starts a process or opens a socket (it runs no command and never contacts elasticd; its only
# traffic is libslurm's slurm_load_ctl_conf to slurmctld).
set -euo pipefail
so=$1
exports=$(nm -D --defined-only "$so" | awk '{print $3}')
imports=$(nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' | sort -u)
# The list was read (a wrong file or tool would make every check below pass).
for sym in openat fchown spank_setenv slurm_load_ctl_conf; do
  grep -qx "$sym" <<<"$imports" || { echo "expected import missing: $sym"; exit 1; }
done
for sym in slurm_spank_job_prolog slurm_spank_job_epilog; do
  if grep -qx "$sym" <<<"$exports"; then echo "exports $sym"; exit 1; fi
done
forbidden=$(grep -xE '(fork|vfork|_Fork|clone|clone3|execve|execveat|execv|execvp|execvpe|execl|execlp|execle|fexecve|system|popen|posix_spawn|posix_spawnp|dlopen|socket|socketpair|connect|munge_encode|munge_decode)' <<<"$imports" || true)
if [[ -n $forbidden ]]; then
  echo "imports that start processes or open sockets:"; echo "$forbidden"; exit 1
fi
echo "imports ok: $(wc -l <<<"$imports") symbols, none starts a process or opens a socket"
