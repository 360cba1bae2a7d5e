#!/usr/bin/env bash
# Starts and stops a real, private, throwaway Slurm cluster with accounting on this one machine.
#
#   eval "$(contrib/local-cluster.sh up [--nodes N] [--dir D] [--cpus-per-node C] [--user NAME]
#                                       [--plugin PATH] [--plugin-args "k=v ..."]
#                                       [--scheduler-parameters P] [--elasticd PATH]
#                                       [--resize-interval DURATION]
#                                       [--background-partition NAME] [--gpus-per-node G])"
#   contrib/local-cluster.sh status [--dir D]      # D defaults to $ELASTIC_CLUSTER_DIR
#   contrib/local-cluster.sh down   [--dir D]
#
# `up` starts munged, MariaDB, slurmdbd, slurmctld and N slurmd (nodes n1..nN), all private to D,
# and with --elasticd an elasticd for this cluster (socket D/run/elasticd.sock, handed to the
# plugin; etc/job_submit.lua records elastic jobs' -N bounds);
# it prints only `export …` lines on stdout (the rest goes to stderr) and returns once every node
# is idle and the scheduler has made its first pass. `down` kills only what `up` started (PIDs in D)
# plus this cluster's job steps and clients, then removes D.
# Exit status: 0 ok, 1 runtime or usage failure, 2 prerequisites missing (not root, binary missing),
# so tests can skip with a reason.
# --background-partition NAME adds a partition for --elastic-class=background jobs over the same
# nodes (lower PriorityTier, PreemptMode=REQUEUE, starting empty: elasticd fills it with the
# nodes of foreground elastic jobs) and names it to the plugin and elasticd (docs/admin.md).
# Why the settings: docs/design.md §5, slurm-on-one-machine.md.
# --gpus-per-node G gives every node G stand-in GPUs (gres on character devices like /dev/null:
# Slurm allocates and accounts them, nothing computes on them), for tests of elasticd's GPU rules.
set -euo pipefail

readonly MARKER=.slurm-elastic-local-cluster   # only directories holding this file are ever removed
readonly LOCK=/tmp/.slurm-elastic-local-cluster.lock
readonly MARIADB_SYSTEM_TABLES=/usr/share/mysql/mysql_system_tables.sql
PROG=local-cluster.sh
log() { echo "$PROG: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Prerequisites: exit 2 with the missing binaries and the Debian packages providing them.
preflight() {
  local -A pkg=([slurmctld]=slurmctld [slurmd]=slurmd [slurmstepd]=slurmd [slurmdbd]=slurmdbd
    [mariadbd]=mariadb-server [munged]=munge [mungekey]=munge [sacctmgr]=slurm-client
    [sinfo]=slurm-client [scontrol]=slurm-client [ss]=iproute2 [flock]=util-linux [setsid]=util-linux)
  local missing=() b
  for b in "${!pkg[@]}"; do
    command -v "$b" >/dev/null 2>&1 || [[ -x /usr/sbin/$b ]] || missing+=("$b (Debian package ${pkg[$b]})")
  done
  # slurmdbd talks to MariaDB through this plugin, packaged separately.
  compgen -G '/usr/lib/*/slurm-wlm/accounting_storage_mysql.so' >/dev/null ||
    missing+=("accounting_storage_mysql.so (Debian package slurm-wlm-mysql-plugin)")
  [[ -r $MARIADB_SYSTEM_TABLES ]] || missing+=("$MARIADB_SYSTEM_TABLES (Debian package mariadb-server-core)")
  if [[ $(id -u) -ne 0 ]]; then
    log "must run as root (the daemons run as root with SlurmUser=root); try sudo"
    ((${#missing[@]} == 0)) || log "also missing: ${missing[*]}"
    exit 2
  fi
  if ((${#missing[@]})); then
    log "missing prerequisites: ${missing[*]}; install them with contrib/install-deps.sh"
    exit 2
  fi
}

# A random block of $1 consecutive TCP ports that no socket on this host uses (any state),
# below the ephemeral range so outgoing connections cannot grab them meanwhile.
pick_ports() {
  local count=$1 used base i
  used=" $(ss -Htan | awk '{n=split($4,a,":"); print a[n]}' | sort -u | tr '\n' ' ') "
  for _ in $(seq 200); do
    base=$((20000 + (RANDOM * 32768 + RANDOM) % (12000 - count)))
    for ((i = 0; i < count; i++)); do [[ $used == *" $((base + i)) "* ]] && continue 2; done
    echo "$base"; return 0
  done
  die "no free block of $count TCP ports found in 20000-32000"
}

# --- daemon bookkeeping: $D/pids has lines "name pid comm", written when each daemon starts -----

# Starts "$@" in the foreground mode of the daemon, detached from our session and stdout (so
# `eval "$(up)"` returns), and records its PID. fd 9 (the port lock) must not leak into daemons.
start_daemon() {
  local name=$1 comm=$2; shift 2
  setsid "$@" </dev/null >>"$D/log/$name.out" 2>&1 9>&- &
  local pid=$! deadline=$((SECONDS + 5))
  echo "$name $pid $comm" >>"$D/pids"
  disown "$pid"   # no "Killed" job notices from this shell at teardown
  # Until it has exec'd, the child is still "bash"/"setsid": wait so that `alive` is exact.
  while [[ $(cat "/proc/$pid/comm" 2>/dev/null) != "${comm:0:15}" ]]; do
    if ! alive "$pid" "$(cat "/proc/$pid/comm" 2>/dev/null)" || ((SECONDS >= deadline)); then break; fi
    sleep 0.01
  done
}

# Alive = exists, not a zombie (re-parented daemons linger as Z here), and still the same program.
alive() {
  local pid=$1 comm=$2 stat
  read -r stat 2>/dev/null <"/proc/$pid/stat" || return 1
  [[ ${stat#*\(} == "${comm:0:15}"\)* ]] || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# Polls "$@" every 50 ms for up to $2 s on behalf of daemon $1; fails early when any daemon
# started so far has died (its logs are then the ones shown).
wait_for() {
  local daemon=$1 timeout=$2 name pid comm; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    while read -r name pid comm; do
      alive "$pid" "$comm" || { FAILED=$name; die "$name (pid $pid) exited during start-up"; }
    done <"$D/pids"
    ((SECONDS < deadline)) || { FAILED=$daemon; die "$daemon not ready after ${timeout}s (waited for: $*)"; }
    sleep 0.05
  done
}

# Listening check without connecting (a probe connection makes the daemons log errors).
listening() { [[ -n $(ss -Hltn "sport = :$1") ]]; }

all_idle() { [[ $(sinfo -h -N -o '%N %t' | awk '$2 == "idle"' | sort -u | wc -l) -eq $NODES ]]; }

# --- configuration ---------------------------------------------------------------------------

write_configs() {
  local host=$1 mem_mb i
  mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / NODES))
  cat >"$D/etc/slurm.conf" <<EOF
# Generated by contrib/local-cluster.sh for a throwaway cluster in $D
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
StateSaveLocation=$D/state
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmctldLogFile=$D/log/slurmctld.log
# info: up waits for the first scheduler pass by its log line.
SlurmctldDebug=info
SlurmdDebug=info
# Per-node paths (%n = node name): several slurmd share this host.
SlurmdSpoolDir=$D/spool/%n
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmdLogFile=$D/log/slurmd-%n.log
# Per-node TmpFS: PMIx directories of pseudo-nodes would collide otherwise.
TmpFS=$D/tmp/%n
PlugStackConfig=$D/etc/plugstack.conf
TaskProlog=$D/etc/task-prolog.sh
# No Prolog/Epilog: an epilog + shrink leaves phantom allocations (design.md §5).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Grow needs permit_job_expansion; batch_sched_delay=0 starts batch jobs without delay.
SchedulerParameters=$SCHED_PARAMS
ReturnToService=2
MpiDefault=none
# A task dying (e.g. an MPI rank crashing in MPI_Init) ends its step instead of leaving the other
# ranks spinning forever; srun --kill-on-bad-exit=0 overrides it per step.
KillOnBadExit=1
# Lets each pseudo-node advertise the CPUs configured here rather than the host's.
SlurmdParameters=config_overrides
MailProg=/bin/true
# Accounting through slurmdbd: without it a job can be resized only once (design.md §5).
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$D/munge/munge.socket
JobCompType=jobcomp/none
EOF
  local gres=""
  if ((GPUS > 0)); then
    gres=" Gres=gpu:$GPUS"
    echo "GresTypes=gpu" >>"$D/etc/slurm.conf"
    # Slurm counts a GPU only with a device file: character devices like /dev/null stand in.
    mkdir -p "$D/dev"
    for ((i = 0; i < GPUS; i++)); do mknod "$D/dev/gpu$i" c 1 3; done
    printf 'AutoDetect=off\nName=gpu File=%s/dev/gpu[0-%d]\n' "$D" $((GPUS - 1)) >"$D/etc/gres.conf"
  fi
  for ((i = 1; i <= NODES; i++)); do
    echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((SLURMD_PORT0 + i - 1)) CPUs=$CPUS RealMemory=$mem_mb$gres State=UNKNOWN"
  done >>"$D/etc/slurm.conf"
  if [[ -z $BG_PARTITION ]]; then
    echo "PartitionName=main Nodes=n[1-$NODES] Default=YES MaxTime=INFINITE OverSubscribe=NO State=UP" >>"$D/etc/slurm.conf"
  else
    # Background jobs give way to any main-partition job that needs their nodes (Slurm requeues
    # them); elasticd keeps the background partition's Nodes= on foreground elastic jobs' nodes.
    cat >>"$D/etc/slurm.conf" <<EOF
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
PartitionName=main Nodes=n[1-$NODES] Default=YES MaxTime=INFINITE OverSubscribe=NO PriorityTier=10 State=UP
PartitionName=$BG_PARTITION MaxTime=INFINITE OverSubscribe=NO PriorityTier=1 PreemptMode=REQUEUE State=UP
EOF
    PLUGIN_ARGS="$PLUGIN_ARGS background_partition=$BG_PARTITION"
  fi

  # slurmdbd finds this file next to $SLURM_CONF; it holds DB settings, so 0600 (slurmdbd insists).
  (umask 077; cat >"$D/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
DbdHost=$host
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
PidFile=$D/run/slurmdbd.pid
LogFile=$D/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=root
StorageLoc=slurm_acct_db
EOF
  )

  if [[ -n $ELASTICD ]]; then
    PLUGIN_ARGS="$PLUGIN_ARGS elasticd_socket=$D/run/elasticd.sock"
    # Slurm forgets a running job's -N MIN-MAX; job_submit.lua keeps them for elasticd.
    cp "$TOP/etc/job_submit.lua" "$D/etc/job_submit.lua"
    echo "JobSubmitPlugins=lua" >>"$D/etc/slurm.conf"
    write_elasticd_config
  fi
  if [[ -n $PLUGIN ]]; then echo "required $PLUGIN $PLUGIN_ARGS" >"$D/etc/plugstack.conf"
  else : >"$D/etc/plugstack.conf"; fi

  # Pseudo-nodes share /tmp and /dev/shm, but Open MPI names its session directories and vader
  # segments after the host name, the same for all nodes, so ranks of different nodes collided.
  # Each node gets its own TMPDIR (every step, batch included) and vader directory (not in the
  # batch step: mpirun would forward n1's value to all nodes). Open MPI 4.1.4's default TCP
  # transport crashed in MPI_Init in ~10% of 16-rank srun launches here (NULL callback in
  # mca_btl_tcp); UCX had no failure in 60, so it is the default unless the job chose a PML.
  cat >"$D/etc/task-prolog.sh" <<EOF
#!/bin/sh
# TaskProlog of the local cluster in $D: "export" lines printed here reach the task.
echo "export TMPDIR=$D/tmp/\$SLURMD_NODENAME"
if [ -z "\${OMPI_MCA_pml:-}" ]; then
  printf 'export %s\n' OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any
fi
case "\${SLURM_STEP_ID:-batch}" in batch|4294967291|4294967290) exit 0 ;; esac
echo "export OMPI_MCA_btl_vader_backing_directory=$D/tmp/\$SLURMD_NODENAME"
EOF
  chmod 0755 "$D/etc/task-prolog.sh"
}

# --- commands --------------------------------------------------------------------------------

cmd_up() {
  local t0=$EPOCHREALTIME host i ports
  host=$(hostname -s)
  if [[ -z $D ]]; then D=$(mktemp -d /tmp/slurm-elastic.XXXXXX)
  else
    mkdir -p "$D"; D=$(cd "$D" && pwd)
    [[ -z $(ls -A "$D") ]] || die "--dir $D is not empty"
  fi
  [[ $D != *[[:space:]]* ]] || die "--dir must not contain white space (slurm.conf, export lines)"
  touch "$D/$MARKER"
  UP_OK=0 FAILED=""
  trap 'up_failed' EXIT
  trap 'exit 1' INT TERM HUP

  # Ordinary users must reach the conf, the munge socket (dir 0755, every parent o+x, else munged
  # refuses) and the per-node tmp dirs.
  chmod 0755 "$D"
  mkdir -p "$D"/{etc,munge,run,log,state,tmp}
  # The database on tmpfs where there is one: its many fsyncs cost ~5 s on disk, ~0.5 s here.
  # $D/db is then a link to it, which is how teardown finds it.
  if [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]]; then
    ln -s "$(mktemp -d /dev/shm/slurm-elastic-db.XXXXXX)" "$D/db"
  else
    mkdir "$D/db"
  fi
  mkdir -m 0700 "$D/private"
  for ((i = 1; i <= NODES; i++)); do
    mkdir -p "$D/spool/n$i"; mkdir -m 1777 "$D/tmp/n$i"; chmod 1777 "$D/tmp/n$i"
  done

  # Hold a host-wide lock from choosing ports until every daemon has bound them, so two
  # concurrent `up` calls cannot pick the same block.
  exec 9>"$LOCK"
  flock -w 120 9 || die "could not lock $LOCK"
  ports=$(pick_ports $((3 + NODES)))
  CTLD_PORT=$ports DBD_PORT=$((ports + 1)) DB_PORT=$((ports + 2)) SLURMD_PORT0=$((ports + 3))
  CLUSTER=elastic$ports
  echo "$CLUSTER $ports" >"$D/ports"
  write_configs "$host"
  export SLURM_CONF=$D/etc/slurm.conf
  log "cluster $CLUSTER in $D, ports $ports-$((ports + 2 + NODES))"

  FAILED=munged
  mungekey --create --keyfile="$D/private/munge.key" 2>>"$D/log/munged.out"
  FAILED=""
  start_daemon munged munged munged -F --socket="$D/munge/munge.socket" \
    --key-file="$D/private/munge.key" --pid-file="$D/run/munged.pid" \
    --log-file="$D/log/munged.log" --seed-file="$D/private/munged.seed"
  # Throwaway DB without users (--skip-grant-tables), small InnoDB for a quick start. It still
  # needs the system tables: slurmdbd's stored procedures live in mysql.proc, and without them
  # every user association silently goes missing. --init-file creates them (0.1 s; 4 s with
  # mariadb-install-db). One statement per line: that is how --init-file is read.
  printf 'CREATE DATABASE IF NOT EXISTS mysql;\nUSE mysql;\n' | cat - "$MARIADB_SYSTEM_TABLES" >"$D/etc/mariadb-init.sql"
  start_daemon mariadbd mariadbd mariadbd --no-defaults --user=root --datadir="$D/db" \
    --socket="$D/run/mysqld.sock" --port="$DB_PORT" --bind-address=127.0.0.1 \
    --skip-grant-tables --skip-log-bin --init-file="$D/etc/mariadb-init.sql" --pid-file="$D/run/mysqld.pid" \
    --log-error="$D/log/mariadbd.log" --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
    --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0
  wait_for munged 10 test -S "$D/munge/munge.socket"
  # The socket appears before the init file has run; this line comes after it.
  wait_for mariadbd 30 grep -q 'ready for connections' "$D/log/mariadbd.log"
  [[ -e $D/db/mysql/proc.frm ]] || { FAILED=mariadbd; die "MariaDB system tables were not created"; }

  start_daemon slurmdbd slurmdbd slurmdbd -D
  wait_for slurmdbd 30 listening "$DBD_PORT"
  # Associations must exist before slurmctld registers the cluster.
  FAILED=sacctmgr
  {
    sacctmgr -i add cluster "$CLUSTER"
    sacctmgr -i add account elastic Cluster="$CLUSTER" Description=local-cluster Organization=local
    # One call for both (each costs ~0.5 s); root keeps its default account, a new user gets elastic.
    sacctmgr -i add user "root${USER_NAME:+,$USER_NAME}" Account=elastic
  } >>"$D/log/sacctmgr.log" 2>&1
  FAILED=""

  start_daemon slurmctld slurmctld slurmctld -D -f "$SLURM_CONF"
  wait_for slurmctld 30 listening "$CTLD_PORT"
  for ((i = 1; i <= NODES; i++)); do
    start_daemon "slurmd-n$i" slurmd slurmd -D -f "$SLURM_CONF" -N "n$i"
  done
  wait_for slurmctld 30 all_idle
  exec 9>&-
  # slurmctld applies batch_sched_delay=0 only in its first scheduling pass, which comes 3 s
  # after start (the built-in delay): wait for it, so that jobs submitted next start at once.
  wait_for slurmctld 15 grep -q 'SchedulerParameters=' "$D/log/slurmctld.log"

  if [[ -n $ELASTICD ]]; then
    start_daemon elasticd elasticd "$ELASTICD" --foreground --config "$D/etc/elasticd.toml"
    wait_for elasticd 10 test -S "$D/run/elasticd.sock"
  fi

  UP_OK=1
  log "all $NODES nodes idle, scheduler running, after $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}') s"
  sinfo >&2
  cat <<EOF
export SLURM_CONF=$SLURM_CONF
export ELASTIC_CLUSTER_DIR=$D
export ELASTIC_CLUSTER_NAME=$CLUSTER
export ELASTIC_MUNGE_SOCKET=$D/munge/munge.socket
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EOF
}

# On a failed `up`: show what the failed daemon said (or every log, if unknown), then undo all.
up_failed() {
  local rc=$? f
  ((UP_OK)) && return 0
  exec 9>&-
  log "up failed (exit $rc); log tails:"
  for f in "$D"/log/${FAILED:-*}.out; do   # foo.log if there is one, else foo.out (stderr)
    [[ -s ${f%.out}.log ]] && f=${f%.out}.log
    [[ -s $f ]] || continue
    echo "----- $f" >&2; tail -n "$([[ -n $FAILED ]] && echo 20 || echo 6)" "$f" >&2
  done
  teardown || true
  exit 1
}

# PIDs of this cluster's slurmstepd (they daemonize away from slurmd; recognised by open files
# or cwd under $D), of its client commands (srun/salloc/sattach/sbcast started with our
# SLURM_CONF: useless once the cluster is gone, and srun would wait forever) and of all their
# descendants (the jobs' tasks). Builtins only: this scans every process.
job_pids() {
  local p stat comm f grew=1
  local -A parent=() mine=()
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    read -r stat 2>/dev/null <"/proc/$p/stat" || continue
    comm=${stat#*\(}; comm=${comm%)*}
    stat=${stat##*) }; stat=${stat#* }; parent[$p]=${stat%% *}
    case $comm in
      slurmstepd)
        for f in "/proc/$p/cwd" "/proc/$p"/fd/*; do
          [[ $(readlink "$f" 2>/dev/null) == "$D"/* ]] && { mine[$p]=1; break; }
        done ;;
      srun | salloc | sattach | sbcast)
        grep -qzxF "SLURM_CONF=$D/etc/slurm.conf" "/proc/$p/environ" 2>/dev/null && mine[$p]=1 ;;
    esac
  done
  while ((grew)); do
    grew=0
    for p in "${!parent[@]}"; do
      [[ -z ${mine[$p]-} && -n ${mine[${parent[$p]}]-} ]] && { mine[$p]=1; grew=1; }
    done
  done
  echo "${!mine[@]}"
}

# Stops only what this cluster started, then removes $D. Safe to repeat and on half-started ones.
teardown() {
  [[ -d $D ]] || { log "$D already gone"; return 0; }
  [[ -e $D/$MARKER ]] || die "$D is not a local-cluster directory (no $MARKER); not touching it"
  local t0=$EPOCHREALTIME pids name pid comm deadline
  # Jobs and clients first: freeze, re-collect (frozen ones cannot fork meanwhile), kill.
  read -ra pids <<<"$(job_pids)"
  if ((${#pids[@]})); then
    kill -STOP "${pids[@]}" 2>/dev/null || true
    read -ra pids <<<"$(job_pids)"
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
  # Daemons: nothing here is kept, so SIGKILL (slurmctld takes ~2 s to save state on TERM).
  if [[ -f $D/pids ]]; then
    while read -r name pid comm; do
      if alive "$pid" "$comm"; then kill -KILL "$pid" 2>/dev/null || true; fi
    done <"$D/pids"
    deadline=$((SECONDS + 5))
    while read -r name pid comm; do
      while alive "$pid" "$comm"; do
        ((SECONDS < deadline)) || { log "$name ($pid) survived SIGKILL"; break; }
        sleep 0.02
      done
    done <"$D/pids"
  fi
  local db
  db=$(readlink "$D/db" 2>/dev/null) && [[ $db == /dev/shm/slurm-elastic-db.* ]] && rm -rf "$db"
  rm -rf "$D"
  log "down: $D removed in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}') s"
}

cmd_status() {
  [[ -e $D/$MARKER ]] || { log "no cluster in '$D'"; return 1; }
  local name pid comm rc=0
  export SLURM_CONF=$D/etc/slurm.conf
  [[ -f $D/pids ]] || { echo "no daemon started yet"; return 1; }
  while read -r name pid comm; do
    if alive "$pid" "$comm"; then echo "$name pid $pid: up"; else echo "$name pid $pid: DOWN"; rc=1; fi
  done <"$D/pids"
  sinfo || rc=1
  return "$rc"
}

# elasticd for this cluster: short cycles and a small resize cost so that a demo or a test sees
# growth within seconds (production defaults: etc/elasticd.toml).
write_elasticd_config() {
  local base="" a
  for a in $PLUGIN_ARGS; do [[ $a == checkpoint_base=* ]] && base=${a#checkpoint_base=}; done
  cat >"$D/etc/elasticd.toml" <<EOF
[daemon]
socket = "$D/run/elasticd.sock"
state_dir = "$D/elasticd"
log_file = "$D/log/elasticd.log"
munge_socket = "$D/munge/munge.socket"
[scheduler]
policy = "elastic"
cycle_interval = "1s"
min_resize_interval = "$RESIZE_INTERVAL"
reconfig_penalty = 0.97
resize_cost = "200ms"
[cleanup]
checkpoint_base = "${base:-/var/spool/slurm-elastic}"
retention = "never"
EOF
  if [[ -n $BG_PARTITION ]]; then
    printf '[background]\npartition = "%s"\nmax_per_node = 1\n' "$BG_PARTITION" >>"$D/etc/elasticd.toml"
  fi
}

usage() {
  sed -n '4,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 1
}

main() {
  local cmd=${1:-}; (($#)) && shift
  NODES=4 CPUS=4 GPUS=0 D="" PLUGIN="" PLUGIN_ARGS="" USER_NAME="" ELASTICD="" BG_PARTITION=""
  # elasticd's minimum time between two resizes of one job; a benchmark that orders resizes by
  # hand (elasticd resize) passes e.g. 1h so that elasticd's own grows stay out of its way.
  RESIZE_INTERVAL=5s
  TOP=$(cd "$(dirname "$0")/.." && pwd)
  # Tests of clusters that cannot resize pass e.g. --scheduler-parameters batch_sched_delay=0.
  SCHED_PARAMS=permit_job_expansion,batch_sched_delay=0
  while (($#)); do
    case $1 in
      --nodes) NODES=${2:?}; shift 2 ;;
      --dir) D=${2:?}; shift 2 ;;
      --plugin) PLUGIN=${2:?}; shift 2 ;;
      --plugin-args) PLUGIN_ARGS=${2-}; shift 2 ;;
      --cpus-per-node) CPUS=${2:?}; shift 2 ;;
      --user) USER_NAME=${2:?}; shift 2 ;;
      --scheduler-parameters) SCHED_PARAMS=${2?}; shift 2 ;;
      --elasticd) ELASTICD=$(realpath "${2:?}"); shift 2 ;;
      --resize-interval) RESIZE_INTERVAL=${2:?}; shift 2 ;;
      --background-partition) BG_PARTITION=${2:?}; shift 2 ;;
      --gpus-per-node) GPUS=${2:?}; shift 2 ;;
      *) log "unknown argument: $1"; usage ;;
    esac
  done
  [[ $NODES =~ ^[1-9][0-9]*$ && $CPUS =~ ^[1-9][0-9]*$ ]] || die "--nodes and --cpus-per-node take positive integers"
  [[ $GPUS =~ ^[0-9]+$ ]] || die "--gpus-per-node $GPUS: expected a count >= 0"
  [[ -z $BG_PARTITION || $BG_PARTITION =~ ^[A-Za-z0-9_.-]+$ ]] || die "--background-partition takes a partition name"
  case $cmd in
    up)
      preflight
      if [[ -n $PLUGIN ]]; then   # slurmd would look a relative path up in its plugin dir
        [[ -r $PLUGIN ]] || die "--plugin $PLUGIN: no such file"
        PLUGIN=$(realpath "$PLUGIN")
      fi
      [[ -z $USER_NAME ]] || id "$USER_NAME" >/dev/null 2>&1 || die "--user $USER_NAME: no such user"
      cmd_up ;;
    down | status)
      D=${D:-${ELASTIC_CLUSTER_DIR:-}}
      [[ -n $D ]] || die "$cmd: give --dir or set ELASTIC_CLUSTER_DIR"
      D=$(realpath -m "$D")
      if [[ $cmd == down ]]; then teardown; else cmd_status; fi ;;
    *) usage ;;
  esac
}

main "$@"
