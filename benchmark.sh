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
# To resume, rerun the same command: the runs that OUT/records.txt says finished are skipped.
# Layout of OUT (plot.py reads it):
#   system.json, env_timing.json   the machine (sweep/machine.py), and each env's step time (sweep/records.py)
#   workload.json                  the per-run workload every run of OUT has (resume refuses another)
#   runs/<exp>/<run_name>/         each run's TensorBoard event file (its --log-dir is runs/<exp>)
#   runs/exp6/<group>/             an exp6 group: agent__seed<s>/ per agent (the event file), and group.json
#                                  (written once every agent finished: variant, agents, processes, wall time)
#   logs/<exp>/<run_name>.log      each run's stdout and stderr (an exp6 group of one process too)
#   logs/exp6/<group>/agent__seed<s>.log   each process's of an exp6 group of one process per agent
#   records.txt                    one line per run that ended (an exp6 group: one), appended here as it ends:
#                                  "<run_name> <verdict> <exit status> <milliseconds> <1-minute load average> <log>",
#                                  the log relative to OUT, the load "-" where unknown (no /proc/loadavg); the verdict,
#                                  "-" as appended, is the planner's once the loop has ended (after an interruption: at
#                                  the next start): finished (exit 0 and a time/total scalar; a group: every agent's),
#                                  incomplete (exit 0 without), timeout, or failed (another exit status)
#   finished.txt, durations.txt, load.txt, failed.txt   an earlier version's records: read (resume, estimates, report),
#                                  never written
#   sweeps.txt                     "<start> <end> <seconds> <runs attempted> <command>" per invocation that started a
#                                  run, interrupted ones included
#   .lock                          held (flock) by the sweep writing into OUT, with its pid
# run_name is <exp>__<script>__<mode>__<env_id>__<size>__<seed>, exp one of warmup exp1 ... exp9;
# the runs of exp5, exp8 and exp9, which name their number of envs N, are
# <exp>__<script>__<mode>__<env_id>__<size>__n<N>__<seed>; the --sync-timing runs of exp5 and exp7 end in __sync__<seed>
# (<...>__n<N>__sync__<seed>, <...>__<size>__sync__<seed>); exp6's groups of N agents (seeds <seed> to <seed>+N-1) are
# exp6__<script>__<mode>__<env_id>__<size>__a<N>__<seed>, and the files above name a group where they name a run.
#
# The plan (the grid, the selection, each run's name and command, the estimates, the memory check, the verdicts and
# the SLURM array) is the sweep/ package's (python -m sweep, its docstring lists the commands). It runs once before the
# loop (plan, start, record), handing the loop what it needs of each run in the plan folder, and once after it (done),
# never between runs. This file is the loop: it runs each planned run in a fresh process, one at a time, under GNU
# timeout, appends its record, shows the progress and the ETA, stops before a run that --max-minutes would cut, holds
# the lock, and stops cleanly on Ctrl-C or SIGTERM.

# bash >= 4.4 ("${a[@]}" of empty arrays under set -u, mapfile -d ''): checked in POSIX sh syntax, so that an older
# bash or another shell reaches this line and stops here.
case ${BASH_VERSION:-} in
  '' | [0-3].* | 4.[0-3].*)
    echo "benchmark.sh: needs bash >= 4.4, this is ${BASH_VERSION:-not bash}; run it as 'bash benchmark.sh' with a newer bash" >&2
    exit 2
    ;;
esac
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PYTHON=${PYTHON:-python}
PLAN=          # the plan folder of this invocation (a temporary folder): what the planner hands the loop
OUT=           # the sweep folder, as the plan says
MAX_MINUTES=0  # --max-minutes: start no run that its estimate ends after this many minutes (0: no limit)
CHILD=         # pid of the running child (a run's timeout, an exp6 group's runner, the machine's record)
CURRENT_RUN=   # name of the running run
# The runs to do, as the planner's PLAN/todo lists them, run N at index N - 1: name, estimated milliseconds, cost group
# (script/mode/size/envs/agents), run folder and log (relative to OUT), the progress line's words
NAMES=() ESTIMATES=() COST_GROUPS=() RUN_DIRS=() LOGS=() WORDS=()
# What this invocation's runs that exited 0 took: milliseconds and runs per cost group, milliseconds in all and the
# planner's estimate of those runs in all (the ETA's observations)
declare -A GROUP_MS=() GROUP_RUNS=()
OBSERVED_MS=0 OBSERVED_ESTIMATE_MS=0

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

duration_text() { # duration_text SECONDS: REPLY, as the planner writes a duration (sweep/estimate.py, duration_text)
  local s=$1
  if ((s < 60)); then
    REPLY="$s s"
  elif ((s < 3600)); then
    REPLY="$(((s + 30) / 60)) min"
  elif ((s < 172800)); then
    printf -v REPLY '%d h %02d min' $((s / 3600)) $((s % 3600 / 60))
  else
    REPLY="$((s / 86400)) days $((s % 86400 / 3600)) h"
  fi
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

read_todo() { # the runs to do: PLAN/todo, a tab-separated line per run
  local name ms group run_dir log words
  while IFS=$'\t' read -r name ms group run_dir log words; do
    NAMES+=("$name") ESTIMATES+=("$ms") COST_GROUPS+=("$group") RUN_DIRS+=("$run_dir") LOGS+=("$log") WORDS+=("$words")
  done <"$PLAN/todo"
}

estimate() { # estimate NUMBER: REPLY, run NUMBER's estimated milliseconds, refined as runs end, the rule of the
  # planner's Estimator (sweep/estimate.py), which made the estimates from the runs of earlier invocations: the mean of
  # this invocation's runs of its cost group; without one, its estimate scaled by what this invocation's runs took
  # against their estimates
  local i=$(($1 - 1)) group=${COST_GROUPS[$1 - 1]}
  if ((${GROUP_RUNS[$group]:-0})); then
    REPLY=$((${GROUP_MS[$group]} / ${GROUP_RUNS[$group]}))
  elif ((OBSERVED_ESTIMATE_MS)); then
    REPLY=$((ESTIMATES[i] * OBSERVED_MS / OBSERVED_ESTIMATE_MS))
  else
    REPLY=${ESTIMATES[i]}
  fi
}

observe() { # observe NUMBER MS: run NUMBER exited 0 after MS milliseconds
  local i=$(($1 - 1)) group=${COST_GROUPS[$1 - 1]}
  GROUP_MS[$group]=$((${GROUP_MS[$group]:-0} + $2))
  GROUP_RUNS[$group]=$((${GROUP_RUNS[$group]:-0} + 1))
  OBSERVED_MS=$((OBSERVED_MS + $2))
  OBSERVED_ESTIMATE_MS=$((OBSERVED_ESTIMATE_MS + ESTIMATES[i]))
}

fits() { # fits NUMBER SECONDS: whether --max-minutes lets run NUMBER start SECONDS into the invocation (its estimate
  # ends it within the limit); if not, the line that says why the invocation ends here
  local number=$1 seconds=$2 run_s gone longer=
  ((MAX_MINUTES)) || return 0
  estimate "$number"
  run_s=$((REPLY / 1000))
  ((seconds + run_s <= MAX_MINUTES * 60)) && return 0
  if ((run_s > MAX_MINUTES * 60)); then
    longer="; it alone is estimated longer than $MAX_MINUTES min: raise --max-minutes to run it"
  fi
  duration_text "$seconds"
  gone=$REPLY
  duration_text "$run_s"
  echo "--max-minutes $MAX_MINUTES: $gone gone, run $number/${#NAMES[@]} (${NAMES[number - 1]}) would end after" \
    "$MAX_MINUTES min by its estimate ($REPLY)$longer; $((${#NAMES[@]} - number + 1)) runs not started: rerun the" \
    "same command to go on"
  return 1
}

progress() { # progress NUMBER: the start of run NUMBER's progress line, with the estimated time of the runs left
  local number=$1 left_ms=0 n
  for ((n = number; n <= ${#NAMES[@]}; n++)); do
    estimate "$n"
    left_ms=$((left_ms + REPLY))
  done
  duration_text $((left_ms / 1000))
  printf '[%d/%d] %s · about %s left ... ' "$number" "${#NAMES[@]}" "${WORDS[number - 1]}" "$REPLY"
}

run_one() { # run_one NUMBER: run run NUMBER (an exp6 group: all its processes), append its record, say how it ended
  # ("ok" on exit status 0: whether it finished, the planner judges after the loop)
  local number=$1 i=$(($1 - 1)) argv=() status=0 start_ms ms load=- rest
  mapfile -d '' -t argv <"$PLAN/$number.argv" # the planner's words, NUL-separated
  rm -rf "${OUT:?}/${RUN_DIRS[i]}"            # what an interrupted or failed earlier attempt left
  mkdir -p "$OUT/${LOGS[i]%/*}"
  CURRENT_RUN=${NAMES[i]}
  start_ms=$(now_ms)
  run_child "${argv[@]}" >"$OUT/${LOGS[i]}" 2>&1 9>&- || status=$?
  ms=$(($(now_ms) - start_ms))
  CURRENT_RUN=
  if [[ -r /proc/loadavg ]]; then # the 1-minute load average as the run ends: the report shows what ran beside it
    read -r load rest </proc/loadavg
  fi
  echo "${NAMES[i]} - $status $ms $load ${LOGS[i]}" >>"$OUT/records.txt"
  duration_text $((ms / 1000))
  if ((status == 0)); then
    observe "$number" "$ms"
    echo "ok, $REPLY"
  else
    echo "FAILED (exit status $status) after $REPLY, log: $OUT/${LOGS[i]}"
  fi
}

main() {
  local status=0 number start=$SECONDS started command_line settings=()
  printf -v command_line '%q ' "$0" "$@"
  "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null || {
    echo "benchmark.sh: PYTHON='$PYTHON' cannot run the sweep's planner; set PYTHON to a Python (>= 3.10) with requirements.txt installed" >&2
    exit 2
  }
  PLAN=$(mktemp -d "${TMPDIR:-/tmp}/benchback-plan.XXXXXX")
  trap 'rm -rf "$PLAN"' EXIT
  # --help, --dry-run and --slurm are answered there; a bad option stops there, one line, exit 2
  planner plan "$PLAN" "$PWD" "${command_line% }" -- "$@" || status=$?
  [[ $status == 0 && -s $PLAN/sweep ]] || return "$status"
  mapfile -d '' -t settings <"$PLAN/sweep" # what the loop needs once: OUT and --max-minutes
  OUT=${settings[0]} MAX_MINUTES=${settings[1]}
  cd "$ROOT"
  lock_out
  planner start "$PLAN" # the runs to do: PLAN/todo, and each one's command in PLAN/<number>.argv
  read_todo
  if ((${#NAMES[@]} == 0)); then
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
  for ((number = 1; number <= ${#NAMES[@]}; number++)); do
    fits "$number" $((SECONDS - start)) || break # under --max-minutes, the end here
    progress "$number"
    run_one "$number"
  done
  echo "$started $(date -Iseconds) $((SECONDS - start)) $((number - 1)) ${command_line% }" >>"$OUT/sweeps.txt"
  # the verdicts, the summary and the failed runs; exit status 1 if a run failed
  planner done "$PLAN" $((SECONDS - start)) $((number - 1))
}

# On one line: bash must not read this file again after a sweep of hours, during which it may have changed.
main "$@"; exit
