#!/usr/bin/env bash
# tools/local_slurm.sh: a one-node SLURM cluster on this machine, to test `benchmark.sh --slurm`
# (tests/test_slurm.py) where no real cluster is at hand. Debian or Ubuntu, as root, no systemd needed.
#
#   tools/local_slurm.sh install  install slurm-wlm and munge if missing (apt-get; .ci/run does this,
#                                 the tests never install anything)
#   tools/local_slurm.sh start    write a munge key and /etc/slurm/slurm.conf for node "localhost" with
#                                 this machine's cores and memory, start munged, slurmctld and slurmd,
#                                 and wait until the node accepts jobs; what already runs is left running
#   tools/local_slurm.sh stop     cancel the cluster's jobs and stop the daemons that start started
#   tools/local_slurm.sh status   one line: whether the cluster accepts jobs (exit 0) or not (exit 1)
#
# Each command prints one line; one that cannot do what it was asked says why on stderr and exits 1
# (2: a wrong command). Container-friendly settings: no cgroups (proctrack/linuxproc, task/none),
# no accounting database, SlurmUser root, state in /var/spool/slurmctld and /var/spool/slurmd, logs in
# /var/log/slurm. An /etc/slurm/slurm.conf that this script did not write (a real cluster's) is never
# touched.
set -euo pipefail

CONF=/etc/slurm/slurm.conf
MARKER="# written by benchback's tools/local_slurm.sh"
MUNGE_KEY=/etc/munge/munge.key
MUNGE_PID=/run/munge/munged.pid
MUNGE_LOG=/var/log/munge/munged.log
CTLD_PID=/run/slurmctld.pid
SLURMD_PID=/run/slurmd.pid
LOG_DIR=/var/log/slurm
NODE=localhost
PARTITION=local
READY_SECONDS=60

fail() { # one line on stderr, exit 1
  echo "local_slurm.sh: $*" >&2
  exit 1
}

running() { # running PIDFILE NAME: the pid file names a live process (not a zombie) called NAME
  local pid stat
  [[ -r $1 ]] || return 1
  pid=$(<"$1")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/stat ]] || return 1
  stat=$(</proc/"$pid"/stat)
  [[ $stat == "$pid ($2) "[^ZX]* ]]
}

installed() { # the daemons and sbatch are on the PATH
  local program
  for program in munged slurmctld slurmd sbatch; do
    command -v "$program" >/dev/null || return 1
  done
}

cmd_install() { # slurm-wlm and munge, from the distribution, when a daemon or sbatch is missing
  local log=/tmp/local_slurm-apt.log
  if ! installed; then
    ((EUID == 0)) || fail "install needs root: it runs apt-get install slurm-wlm munge"
    command -v apt-get >/dev/null || fail "slurm-wlm and munge are not installed and there is no apt-get here"
    # the packages' service start-up is not wanted (and needs systemd): start starts the daemons itself
    { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm munge; } >"$log" 2>&1 ||
      fail "apt-get install slurm-wlm munge failed; see $log"
  fi
  echo "slurm-wlm and munge installed: tools/local_slurm.sh start starts the cluster"
}

node_line() { # the NodeName line: this machine's CPUs, sockets, cores, threads and memory, as slurmd sees them
  local fields
  fields=$(slurmd -C | head -n 1) || fail "slurmd -C could not read this machine's cores and memory"
  [[ $fields == NodeName=* ]] || fail "slurmd -C printed no NodeName line"
  echo "NodeName=$NODE NodeAddr=127.0.0.1 ${fields#NodeName=* } State=UNKNOWN"
}

write_conf() { # /etc/slurm/slurm.conf for one node, localhost; refuses to replace a config it did not write
  if [[ -f $CONF ]] && ! grep -qxF "$MARKER" "$CONF"; then
    fail "$CONF exists and was not written by this script; a real cluster's config is left alone"
  fi
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd "$LOG_DIR"
  cat >"$CONF" <<EOF
$MARKER
ClusterName=benchback-local
SlurmctldHost=$NODE
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
KillWait=10
MinJobAge=600
$(node_line)
PartitionName=$PARTITION Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  if running "$MUNGE_PID" munged; then return 0; fi
  if [[ ! -s $MUNGE_KEY ]]; then
    mungekey --create --keyfile "$MUNGE_KEY" || fail "could not create the munge key $MUNGE_KEY"
    chown munge:munge "$MUNGE_KEY"
    chmod 0400 "$MUNGE_KEY"
  fi
  mkdir -p /run/munge "${MUNGE_LOG%/*}"
  # munged refuses a log it does not own, and the redirection below opens it as root: the log is munge's before
  touch "$MUNGE_LOG"
  chown munge:munge /run/munge "${MUNGE_LOG%/*}" "$MUNGE_LOG"
  runuser -u munge -- munged --pid-file "$MUNGE_PID" 2>>"$MUNGE_LOG" || fail "munged did not start; see $MUNGE_LOG"
}

start_slurm() {
  if ! running "$CTLD_PID" slurmctld; then
    slurmctld 2>>"$LOG_DIR/slurmctld.log" || fail "slurmctld did not start; see $LOG_DIR/slurmctld.log"
  fi
  if ! running "$SLURMD_PID" slurmd; then
    slurmd -N "$NODE" 2>>"$LOG_DIR/slurmd.log" || fail "slurmd did not start; see $LOG_DIR/slurmd.log"
  fi
}

node_state() { # the node's state as sinfo prints it (idle, alloc, down*, drain, ...), empty if unknown
  sinfo -h -n "$NODE" -o %t 2>/dev/null | head -n 1
}

wait_ready() { # until the node takes jobs; a node left down or drained by an earlier run is resumed
  local deadline=$((SECONDS + READY_SECONDS)) state
  while ((SECONDS < deadline)); do
    state=$(node_state)
    case $state in
      idle | mix | alloc | comp) return 0 ;;
      drain* | down | fail*) scontrol update NodeName="$NODE" State=RESUME 2>/dev/null || true ;;
    esac
    sleep 1
  done
  fail "node $NODE is '${state:-unknown}' after ${READY_SECONDS} s, not idle;" \
    "see $LOG_DIR/slurmctld.log and $LOG_DIR/slurmd.log"
}

describe() { # "node localhost (2 CPUs, 24105 MB), partition local"
  local cpus memory
  read -r cpus memory < <(sinfo -h -n "$NODE" -o '%c %m' | head -n 1)
  echo "node $NODE ($cpus CPUs, $memory MB), partition $PARTITION"
}

cmd_start() {
  ((EUID == 0)) || fail "start needs root: it writes /etc/slurm and /etc/munge and starts the daemons as root"
  installed || fail "slurm-wlm and munge are not installed: tools/local_slurm.sh install (as root) installs them"
  write_conf
  start_munge
  start_slurm
  wait_ready
  echo "local SLURM cluster running: $(describe); stop it with tools/local_slurm.sh stop"
}

stop_daemon() { # stop_daemon PIDFILE NAME: SIGTERM the daemon the pid file names, wait for it to end
  local pid deadline=$((SECONDS + 20))
  running "$1" "$2" || return 0
  pid=$(<"$1")
  kill -TERM "$pid"
  while running "$1" "$2" && ((SECONDS < deadline)); do
    sleep 0.2
  done
  ! running "$1" "$2" || fail "$2 (pid $pid) did not stop within 20 s"
}

cmd_stop() {
  ((EUID == 0)) || fail "stop needs root: the daemons run as root and munge"
  if running "$CTLD_PID" slurmctld && [[ -f $CONF ]] && grep -qxF "$MARKER" "$CONF"; then
    scancel --partition="$PARTITION" 2>/dev/null || true
  fi
  stop_daemon "$SLURMD_PID" slurmd
  stop_daemon "$CTLD_PID" slurmctld
  stop_daemon "$MUNGE_PID" munged
  echo "local SLURM cluster stopped"
}

cmd_status() {
  local daemon state missing=()
  running "$MUNGE_PID" munged || missing+=(munged)
  running "$CTLD_PID" slurmctld || missing+=(slurmctld)
  running "$SLURMD_PID" slurmd || missing+=(slurmd)
  if ((${#missing[@]})); then
    daemon=${missing[*]}
    echo "local SLURM cluster not running: ${daemon// /, } not started (tools/local_slurm.sh start)"
    return 1
  fi
  state=$(node_state)
  case $state in
    idle | mix | alloc | comp) echo "local SLURM cluster running: $(describe)" ;;
    *)
      echo "local SLURM cluster not ready: node $NODE is '${state:-unknown}'"
      return 1
      ;;
  esac
}

case ${1:-} in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *)
    echo "usage: tools/local_slurm.sh install|start|stop|status" >&2
    exit 2
    ;;
esac
