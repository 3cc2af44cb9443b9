#!/usr/bin/env bash
# benchmark.sh: the benchmark sweep (docs/method.md). Every configuration of the grid runs in
# a fresh process of one ppo_*.py or dqn_*.py script, one run at a time, in a fixed order, all
# with the same environment variables; exp6's groups of N agents run N processes, as many at a time as
# there are cores (sharing them: OMP_NUM_THREADS = cores / processes at a time, when more than
# one), or one process training N agents.
#
#   ./benchmark.sh               the default grid (the study's 231 runs plus the variants added since)
#   ./benchmark.sh --grid study  exactly the published study's 231 runs
#   ./benchmark.sh --quick       a small grid that touches every variant, mode and chart
#   ./benchmark.sh --dry-run     print the runs and run nothing
#   ./benchmark.sh --slurm 8 --out DIR [-- sbatch options]   submit the grid to SLURM, 8 shards
#   ./benchmark.sh --help        every option
#
# To resume, rerun the same command: runs listed in OUT/finished.txt are skipped.
# Layout of OUT (plot.py reads it):
#   system.json, env_timing.json   the machine, and each env's step time (sweep/records.py)
#   workload.json                  the per-run workload every run of OUT has (resume refuses another)
#   runs/<exp>/<run_name>/         each run's TensorBoard event file (its --log-dir is runs/<exp>)
#   runs/exp6/<group>/             an exp6 group: agent__seed<s>/ per agent (the event file), and group.json
#                                  (written once every agent finished: variant, agents, processes, wall time)
#   logs/<exp>/<run_name>.log      each run's stdout and stderr (an exp6 group of one process too)
#   logs/exp6/<group>/agent__seed<s>.log   each process's of an exp6 group of one process per agent
#   finished.txt                   one run name per line: exit 0 and a time/total scalar
#   durations.txt                  "<run_name> <milliseconds>" per finished run: the ETA's observations
#   load.txt                       "<run_name> <1-minute load average>" read as each run ends (Linux)
#   sweeps.txt                     "<start> <end> <seconds> <runs attempted> <command>" per invocation that started a
#                                  run, interrupted ones included
#   failed.txt                     one line per failed attempt: <run_name> <exit code|timeout|incomplete> <log, relative to OUT>
#   .lock                          held (flock) by the sweep writing into OUT, with its pid
# run_name is <exp>__<script>__<mode>__<env_id>__<size>__<seed>, exp one of warmup exp1 ... exp9;
# the runs of exp5, exp8 and exp9, which name their number of envs N, are
# <exp>__<script>__<mode>__<env_id>__<size>__n<N>__<seed>; the --sync-timing runs of exp5 and exp7 end in __sync__<seed>
# (<...>__n<N>__sync__<seed>, <...>__<size>__sync__<seed>); exp6's groups of N agents (seeds <seed> to <seed>+N-1) are
# exp6__<script>__<mode>__<env_id>__<size>__a<N>__<seed>, and the files above name a group where they name a run.
#
# The plan (the grid, the selection, each run's name and command, the estimates, the memory check, the records and
# the SLURM array) is the sweep/ package's (python -m sweep, its docstring lists the commands); this file is the loop:
# it runs each planned run in a fresh process, one at a time, holds the lock, keeps OUT's record files, resumes, and
# stops cleanly on Ctrl-C or SIGTERM.

# bash >= 4.4 ("${a[@]}" of empty arrays under set -u): checked in POSIX sh syntax, so that an older bash or another
# shell reaches this line and stops here.
case ${BASH_VERSION:-} in
  '' | [0-3].* | 4.[0-3].*)
    echo "benchmark.sh: needs bash >= 4.4, this is ${BASH_VERSION:-not bash}; run it as 'bash benchmark.sh' with a newer bash" >&2
    exit 2
    ;;
esac
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PYTHON=${PYTHON:-python}
PLAN=        # the plan file of this invocation (a temporary file)
OUT=         # the sweep folder, as the plan says
CHILD=       # pid of the running child (a run's timeout, an exp6 group's runner, the machine's record)
CURRENT_RUN= # name of the running run
FAILED=()    # "<name> <reason> <log>" of each run that failed in this invocation

planner() { # planner COMMAND ARGS...: the sweep package's command, run in the repository (python -m takes the package
  # from its folder), replacing the subshell so that a signal reaches it
  (cd "$ROOT" && exec "$PYTHON" -m sweep "$@")
}

run_child() { # run_child COMMAND...: run it in the background and wait for it, so that a signal reaches on_signal at
  # once; returns its exit status
  local status=0
  "$@" &
  CHILD=$!
  wait "$CHILD" || status=$?
  CHILD=
  return "$status"
}

on_signal() { # Ctrl-C or SIGTERM: stop the running run (not recorded), keep the finished ones and the invocation's
  # line in sweeps.txt (main's locals: bash scopes them dynamically)
  trap - INT TERM
  if [[ -n $CHILD ]]; then # timeout passes SIGTERM on to its run's process group; a group runner to its processes
    kill -TERM "$CHILD" 2>/dev/null || true
    wait "$CHILD" 2>/dev/null || true
  fi
  if [[ -n ${started:-} ]]; then
    echo "$started $(date -Iseconds) $((SECONDS - start)) $number ${command_line% }" >>"$OUT/sweeps.txt"
  fi
  # to fd 3, the sweep's stderr: this runs inside run_child, whose output may go to a run's log
  echo >&3
  echo "benchmark.sh: interrupted${CURRENT_RUN:+ during $CURRENT_RUN (not recorded)}; rerun the same command to resume" >&3
  exit 130
}

now_ms() {
  local t=${EPOCHREALTIME/[.,]/}
  echo $((10#$t / 1000))
}

lock_out() { # one sweep at a time into OUT: the lock lives as long as this shell (its runs get no copy of fd 9)
  local holder
  mkdir -p "$OUT"
  exec 9>>"$OUT/.lock"
  if ! flock -n 9; then
    holder=$(cat "$OUT/.lock" 2>/dev/null || true)
    echo "benchmark.sh: another sweep${holder:+ (pid $holder)} is writing into $OUT; wait for it to end or use another --out" >&2
    exit 2
  fi
  echo "$$" >"$OUT/.lock"
}

record_load() { # the 1-minute load average as the run ends: the report shows what ran beside the sweep
  local load1 rest
  [[ -r /proc/loadavg ]] || return 0
  read -r load1 rest </proc/loadavg
  echo "$1 $load1" >>"$OUT/load.txt"
}

run_one() { # run_one NUMBER LINE: run one planned run (an exp6 group: all its processes) and record how it ended
  local number=$1 name run_dir log command status=0 start elapsed_ms verdict reason failed_log message
  IFS=$'\t' read -r name run_dir log command <<<"$2"
  eval "local argv=($command)" # the planner's shell-quoted words
  rm -rf "$run_dir" # what an interrupted or failed earlier attempt left
  mkdir -p "$OUT/${log%/*}"
  CURRENT_RUN=$name
  start=$(now_ms)
  run_child "${argv[@]}" >"$OUT/$log" 2>&1 9>&- || status=$?
  elapsed_ms=$(($(now_ms) - start))
  CURRENT_RUN=
  record_load "$name"
  { read -r verdict reason failed_log && read -r message; } < <(planner ended "$PLAN" "$number" "$status" "$elapsed_ms")
  if [[ $verdict == finished ]]; then
    echo "$name" >>"$OUT/finished.txt"
    echo "$name $elapsed_ms" >>"$OUT/durations.txt"
  else
    echo "$name $reason $failed_log" >>"$OUT/failed.txt"
    FAILED+=("$name $reason $OUT/$failed_log")
  fi
  echo "$message"
}

main() {
  local status=0 todo=() number start=$SECONDS started command_line
  printf -v command_line '%q ' "$0" "$@"
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null || {
    echo "benchmark.sh: PYTHON='$PYTHON' cannot run the sweep's planner; set PYTHON to a Python (>= 3.10) with requirements.txt installed" >&2
    exit 2
  }
  PLAN=$(mktemp "${TMPDIR:-/tmp}/benchback-plan.XXXXXX")
  trap 'rm -f "$PLAN" "$PLAN.todo"' EXIT
  # --help, --dry-run and --slurm are answered there; a bad option stops there, one line, exit 2
  planner plan "$PLAN" "$PWD" "${command_line% }" -- "$@" || status=$?
  [[ $status == 0 && -s $PLAN ]] || return "$status"
  OUT=$("$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))["out"])' "$PLAN")
  cd "$ROOT"
  lock_out
  planner start "$PLAN"
  mapfile -t todo <"$PLAN.todo"
  touch "$OUT/finished.txt"
  if ((${#todo[@]} == 0)); then
    planner done "$PLAN" 0 0
    return
  fi
  # The same environment for every run; nothing here favours one framework.
  export XLA_PYTHON_CLIENT_PREALLOCATE=false # JAX shares the GPU with torch; peak memory is meaningful
  export PYTHONUNBUFFERED=1                  # logs stay complete up to an interruption
  exec 3>&2                                  # the sweep's own stderr, for on_signal
  trap on_signal INT TERM
  run_child planner record "$PLAN" || { echo "benchmark.sh: recording the machine failed, no run started" >&2; exit 1; }
  started=$(date -Iseconds)
  for ((number = 1; number <= ${#todo[@]}; number++)); do
    # the progress line; or, under --max-minutes, the line that says this run would end too late: the end here
    planner progress "$PLAN" "$number" $((SECONDS - start)) || break
    run_one "$number" "${todo[number - 1]}"
  done
  echo "$started $(date -Iseconds) $((SECONDS - start)) $((number - 1)) ${command_line% }" >>"$OUT/sweeps.txt"
  planner done "$PLAN" $((SECONDS - start)) $((number - 1)) "${FAILED[@]}"
}

# On one line: bash must not read this file again after a sweep of hours, during which it may have changed.
main "$@"; exit
