#!/usr/bin/env bash
# elasticd load benchmark (issue 7): starts a real 1-node local cluster with munged, slurmctld and
# the freshly built elasticd (contrib/local-cluster.sh), submits one job as root so that
# `register` meets a real job of another user, then runs bench/elasticd_load (C clients for S
# seconds: status, register, garbage, tampered, replayed and oversized requests, stalling
# connections) as an ordinary user, prints its table and elasticd's log counts, and tears the
# cluster down. Exit status: elasticd_load's (0 pass, 1 elasticd died, leaked fds or misanswered).
#
#   bench/elasticd_load.sh [--build DIR] [--clients N] [--seconds S] [--user NAME]
#                          [--slurmctld-stopped]
#
# Defaults: build/, 200 clients, 60 s, user nobody. --slurmctld-stopped freezes slurmctld
# (SIGSTOP) for the whole run: Slurm's RPCs then hang until MessageTimeout, and elasticd must
# still answer everything that does not need Slurm (a register waits for Slurm, or is refused
# as busy once 64 are waiting). Needs root (the cluster); the clients run as
# NAME, so this script counts elasticd's fds (/proc/PID/fd is root's) once a second meanwhile.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build clients=200 seconds=60 user=nobody stop_ctld=0
while (($#)); do
  case $1 in
    --build) build=$(realpath "${2:?}"); shift 2 ;;
    --clients) clients=${2:?}; shift 2 ;;
    --seconds) seconds=${2:?}; shift 2 ;;
    --user) user=${2:?}; shift 2 ;;
    --slurmctld-stopped) stop_ctld=1; shift ;;
    *) sed -n '9,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 1 ;;
  esac
done
load=$build/bench/elasticd_load
[[ -x $load && -x $build/scheduler/daemon/elasticd ]] ||
  { echo "$0: build elasticd and elasticd_load in $build first" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "$0: must run as root (the local cluster)" >&2; exit 1; }

exports=$("$top/contrib/local-cluster.sh" up --nodes 1 \
          --elasticd "$build/scheduler/daemon/elasticd")
eval "$exports"
ctld=$(awk '$1 == "slurmctld" {print $2}' "$ELASTIC_CLUSTER_DIR/pids")
elasticd=$(awk '$1 == "elasticd" {print $2}' "$ELASTIC_CLUSTER_DIR/pids")
trap 'kill -CONT "$ctld" 2>/dev/null || true
      "$top/contrib/local-cluster.sh" down --dir "$ELASTIC_CLUSTER_DIR" >&2' EXIT

job_args=()
if [[ $user != root ]]; then
  job=$(sbatch --parsable -N 1 -o /dev/null --wrap 'sleep 100000')
  for _ in $(seq 60); do [[ $(squeue -h -j "$job" -o %T) == RUNNING ]] && break; sleep 0.5; done
  job_args=(--job-id "$job")
  echo "root's job $job: $(squeue -h -j "$job" -o %T)"
fi
fds() { ls "/proc/$elasticd/fd" 2>/dev/null | wc -l; }  # 0 once elasticd is gone
before=$(fds)
echo "elasticd pid $elasticd: $before open fds before the load"
stopped_args=()
if ((stop_ctld)); then
  kill -STOP "$ctld"
  echo "slurmctld ($ctld) stopped for the run"
  stopped_args=(--slurm-stopped)
fi

run_as=()
[[ $user != root ]] && run_as=(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups --)
fd_log=$ELASTIC_CLUSTER_DIR/fds
rc=0
"${run_as[@]}" "$load" --socket "$ELASTIC_CLUSTER_DIR/run/elasticd.sock" \
  --munge-socket "$ELASTIC_MUNGE_SOCKET" --clients "$clients" --seconds "$seconds" \
  --pid "$elasticd" "${job_args[@]}" "${stopped_args[@]}" &
load_pid=$!
while kill -0 "$load_pid" 2>/dev/null; do fds >>"$fd_log" 2>/dev/null || true; sleep 1; done
wait "$load_pid" || rc=$?

kill -CONT "$ctld"
for _ in $(seq 70); do (($(fds) <= before)) && break; sleep 0.1; done  # its 5 s client timeout
if (($(fds) > before)); then echo "FAIL: elasticd holds $(($(fds) - before)) more fds" >&2; rc=1; fi
log=$ELASTIC_CLUSTER_DIR/log/elasticd.log
echo "elasticd pid $elasticd: open fds max $(sort -n "$fd_log" | tail -n 1) during the load," \
     "$(fds) after it;" \
     "log: $(wc -l <"$log") lines, $(stat -c %s "$log") bytes," \
     "$(grep -c ' error: ' "$log" || true) errors"
grep -v ' warn: \(rejected\|refused\) ' "$log" | tail -n 5
exit "$rc"
