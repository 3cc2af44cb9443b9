#!/usr/bin/env bash
# benchmark.sh: the sweep of SPEC §7. Every configuration of the grid runs in a fresh
# process of one ppo_*.py script, one run at a time, in a fixed order, all with the same
# environment variables.
#
#   ./benchmark.sh               the reference grid (231 runs) into results/<date>-<host>
#   ./benchmark.sh --quick       a small grid that touches every variant, mode and chart
#   ./benchmark.sh --dry-run     print the runs and run nothing
#   ./benchmark.sh --help        every option
#
# To resume, rerun the same command: runs listed in OUT/finished.txt are skipped.
# Layout of OUT (plot.py reads it):
#   system.json, env_timing.json   the machine, and each env's step time (sweep_info.py)
#   runs/<exp>/<run_name>/         each run's TensorBoard event file (its --log-dir is runs/<exp>)
#   logs/<exp>/<run_name>.log      each run's stdout and stderr
#   finished.txt                   one run name per line: exit 0 and a time/total scalar
#   failed.txt                     one line per failed attempt: <run_name> <exit code|timeout|incomplete> <log, relative to OUT>
# run_name is <exp>__<script>__<mode>__<env_id>__<size>__<seed>, exp one of warmup exp1 exp2 exp3.
# Needs bash >= 4.4 and GNU coreutils (timeout).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYTHON=${PYTHON:-python}

ENVS=(CartPole-v1 Acrobot-v1 MountainCar-v0 DiscountingChain-bsuite MemoryChain-bsuite
  UmbrellaChain-bsuite BernoulliBandit-misc GaussianBandit-misc Asterix-MinAtar Breakout-MinAtar
  Freeway-MinAtar SpaceInvaders-MinAtar)
SIZES=(small medium large)
# A variant is "<script> <compile mode>"; make_command maps each mode to its script's flag.
PAIRS=("ppo_linen none" "ppo_linen jit" "ppo_nnx none" "ppo_nnx jit" "ppo_nnx_cached cached"
  "ppo_torch none" "ppo_torch env-jit" "ppo_torch_compile compile")
COMPILED=("ppo_linen jit" "ppo_nnx_cached cached" "ppo_torch_compile compile")
# --quick runs 10 iterations, enough to fill the windows that plot.py reads (0, 1-7, 8-99), of a
# smaller workload (batch 32 x 32, 2 epochs x 4 minibatches): eager (op by op) JAX takes close to a
# minute per reference iteration on a 2-core CPU. Quick numbers are a smoke test, not results.
QUICK_ITERATIONS=10
QUICK_WORKLOAD=(--num-steps 32 --update-epochs 2 --num-minibatches 4)
NOT_EAGER=("ppo_linen jit" "ppo_nnx jit" "ppo_nnx_cached cached" "ppo_torch env-jit" "ppo_torch_compile compile")
KILL_GRACE_SECONDS=10 # after a timeout or Ctrl-C, SIGKILL a run still alive this long after SIGTERM

usage() {
  cat <<'EOF'
Usage: ./benchmark.sh [options]

Runs the benchmark grid (SPEC §7): one fresh `python ppo_*.py ...` process per run, one at a time.
  warmup    3 runs  CartPole-v1, small: linen jit, nnx cached, torch compile (not analysed)
  exp1    108 runs  12 envs x 3 fully compiled variants (linen jit, nnx cached, torch compile) x 3 sizes
  exp2     96 runs  12 envs x 8 variant/compile pairs x small, --sync-timing
  exp3     24 runs  Acrobot-v1 x 8 pairs x 3 sizes, --sync-timing
  pairs: linen none/jit, nnx none/jit/cached, torch none/env-jit/compile; sizes: small medium large
Repeat r (0-based) runs with --seed 1+r.

Options:
  --out DIR          sweep folder (default: results/<YYYY-MM-DD>-<hostname> in the repository)
  --quick            a reduced grid, touching every variant, compile mode and chart:
                       warmup  CartPole-v1 small linen jit
                       exp1    CartPole-v1, DiscountingChain-bsuite, Breakout-MinAtar x 3 compiled x small
                       exp2    CartPole-v1 x 8 pairs x small
                       exp3    Acrobot-v1 x 8 pairs x small, and the 5 non-eager pairs x medium
                     with 10 iterations, the fewest that fill plot.py's windows (0, 1-7, 8-99),
                     of a smaller workload: --num-steps 32 --update-epochs 2 --num-minibatches 4;
                     31 runs, a smoke test of the whole pipeline, not results
  --repeats N        run the grid N times, with seeds 1..N (default 1)
  --only EXP         keep only EXP (exp1, exp2 or exp3) and the 3 warm-up runs, which prepare the
                     machine for any experiment; to drop them too, add --filter ' EXP '
  --filter REGEX     keep the runs whose --dry-run line matches REGEX (POSIX extended regex)
  --shard K/N        keep every N-th of the selected runs, starting at the K-th (1 <= K <= N):
                     shards 1/N .. N/N split the selection into N interleaved parts
  --iterations N     pass --num-iterations N to every run (default: the scripts' own, 100;
                     with --quick: 10)
  --timeout SECONDS  stop a run after SECONDS and record it as "timeout" (default: no limit)
  --dry-run          print "<index> <exp> <command>" for each selected run, run nothing
  -h, --help         show this help

The index is the run's position in the whole grid (repeats included); --only, --filter and
--shard apply in that order. Before the runs, OUT/system.json and OUT/env_timing.json record
the machine and the step time of the selected runs' envs.
Resume: rerun with the same options and --out; finished runs are skipped, failed and
interrupted ones run again (their partial run folder is deleted first).
Environment: PYTHON (default: python) runs the scripts and sweep_info.py.
Exit status: 0 every selected run finished, 1 some run failed (see OUT/failed.txt) or the
machine could not be recorded, 2 bad options, 130 interrupted (Ctrl-C or SIGTERM: the running
run is stopped and not recorded).
EOF
}

die() { # a usage error: one line on stderr, exit 2
  echo "benchmark.sh: $*" >&2
  exit 2
}

is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

# OPTIONS
DRY_RUN=0
QUICK=0
OUT=
REPEATS=1
ONLY=
FILTER=
SHARD_K=1
SHARD_N=1
ITERATIONS=
TIMEOUT=0

parse_options() {
  while (($#)); do
    case $1 in
      --*=*) # --option=value is --option value
        set -- "${1%%=*}" "${1#*=}" "${@:2}"
        continue
        ;;
      -h | --help)
        usage
        exit 0
        ;;
      --dry-run) DRY_RUN=1 ;;
      --quick) QUICK=1 ;;
      --out | --repeats | --only | --filter | --shard | --iterations | --timeout)
        [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"
        set_option "$1" "$2"
        shift
        ;;
      *) die "unknown option '$1' (see --help)" ;;
    esac
    shift
  done
}

set_option() { # set_option OPTION VALUE: check VALUE and store it
  local option=$1 value=$2 regex_status=0
  case $option in
    --out) OUT=$value ;;
    --repeats)
      is_count "$value" || die "--repeats needs a positive integer, not '$value'"
      REPEATS=$value
      ;;
    --only)
      [[ $value =~ ^exp[123]$ ]] || die "--only needs exp1, exp2 or exp3, not '$value'"
      ONLY=$value
      ;;
    --filter)
      [[ "" =~ $value ]] || regex_status=$?
      ((regex_status != 2)) || die "--filter: invalid regular expression '$value'"
      FILTER=$value
      ;;
    --shard)
      [[ $value =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] && ((BASH_REMATCH[1] <= BASH_REMATCH[2])) ||
        die "--shard needs K/N with 1 <= K <= N, not '$value'"
      SHARD_K=${BASH_REMATCH[1]}
      SHARD_N=${BASH_REMATCH[2]}
      ;;
    --iterations)
      is_count "$value" || die "--iterations needs a positive integer, not '$value'"
      ITERATIONS=$value
      ;;
    --timeout)
      is_count "$value" || die "--timeout needs a positive number of seconds, not '$value'"
      TIMEOUT=$value
      ;;
  esac
}

# THE GRID: one "exp script mode env size" entry per configuration, in run order
GRID=()

add_configs() { # add_configs EXP ENVS SIZES VARIANTS (array names): every env x size x variant
  local exp=$1 env size variant
  local -n envs_=$2 sizes_=$3 variants_=$4
  for env in "${envs_[@]}"; do
    for size in "${sizes_[@]}"; do
      for variant in "${variants_[@]}"; do
        GRID+=("$exp $variant $env $size")
      done
    done
  done
}

build_grid() {
  local cartpole=(CartPole-v1) acrobot=(Acrobot-v1) small=(small)
  local warmup_variants=("${COMPILED[@]}") exp1_envs=("${ENVS[@]}") exp1_sizes=("${SIZES[@]}")
  local exp2_envs=("${ENVS[@]}") exp3_sizes=("${SIZES[@]}") medium=(medium)
  if ((QUICK)); then
    warmup_variants=("ppo_linen jit")
    exp1_envs=(CartPole-v1 DiscountingChain-bsuite Breakout-MinAtar)
    exp1_sizes=(small)
    exp2_envs=(CartPole-v1)
    exp3_sizes=(small)
  fi
  add_configs warmup cartpole small warmup_variants
  add_configs exp1 exp1_envs exp1_sizes COMPILED
  add_configs exp2 exp2_envs small PAIRS
  add_configs exp3 acrobot exp3_sizes PAIRS
  if ((QUICK)); then # the medium model size without the slowest, eager, pairs
    add_configs exp3 acrobot medium NOT_EAGER
  fi
}

is_sync() { [[ $1 == exp2 || $1 == exp3 ]]; }

make_command() { # make_command EXP SCRIPT MODE ENV SIZE SEED: sets RUN_NAME and CMD
  local exp=$1 script=$2 mode=$3 env=$4 size=$5 seed=$6
  RUN_NAME="${exp}__${script}__${mode}__${env}__${size}__${seed}"
  CMD=("$PYTHON" "$script.py")
  case "$script $mode" in
    "ppo_linen none" | "ppo_nnx none") CMD+=(--no-jit) ;;
    "ppo_torch none") CMD+=(--no-jit-env) ;;
  esac # every other mode is its script's default
  CMD+=(--env-id "$env" --model-size "$size" --seed "$seed")
  if is_sync "$exp"; then
    CMD+=(--sync-timing)
  fi
  if [[ -n $ITERATIONS ]]; then
    CMD+=(--num-iterations "$ITERATIONS")
  fi
  if ((QUICK)); then
    CMD+=("${QUICK_WORKLOAD[@]}")
  fi
  CMD+=(--log-dir "$OUT/runs/$exp" --run-name "$RUN_NAME")
}

# SELECTED: "exp script mode env size seed" of each run this invocation is about;
# SELECTED_LINES: their --dry-run lines.
SELECTED=()
SELECTED_LINES=()

select_runs() {
  local repeat config exp script mode env size seed quoted line index=0 position=0
  for ((repeat = 0; repeat < REPEATS; repeat++)); do
    seed=$((repeat + 1))
    for config in "${GRID[@]}"; do
      index=$((index + 1))
      read -r exp script mode env size <<<"$config"
      [[ -z $ONLY || $exp == "$ONLY" || $exp == warmup ]] || continue
      make_command "$exp" "$script" "$mode" "$env" "$size" "$seed"
      printf -v quoted '%q ' "${CMD[@]}"
      line="$index $exp ${quoted% }"
      [[ -z $FILTER || $line =~ $FILTER ]] || continue
      position=$((position + 1))
      (((position - 1) % SHARD_N == SHARD_K - 1)) || continue
      SELECTED+=("$config $seed")
      SELECTED_LINES+=("$line")
    done
  done
}

# THE SWEEP
CHILD=       # pid of the running child process (a run's `timeout`, or sweep_info.py)
CURRENT_RUN= # name of the running run
DONE_COUNT=0 # runs done in this invocation, and their total duration
DONE_SECONDS=0
FAILED=()

format_duration() { # format_duration SECONDS
  local s=$1
  if ((s < 60)); then
    echo "$s s"
  elif ((s < 3600)); then
    echo "$(((s + 30) / 60)) min"
  else
    printf '%d h %02d min\n' $((s / 3600)) $((s % 3600 / 60))
  fi
}

time_left() { # time_left RUNS_LEFT: from the mean duration of this invocation's runs so far
  if ((DONE_COUNT == 0)); then
    echo "first run, no estimate yet"
  else
    echo "$(format_duration $((DONE_SECONDS * $1 / DONE_COUNT))) left"
  fi
}

run_child() { # run_child COMMAND...: run it in the background and wait for it, so that a
  # signal reaches on_signal at once; returns its exit status
  local status=0
  "$@" &
  CHILD=$!
  wait "$CHILD" || status=$?
  CHILD=
  return "$status"
}

on_signal() { # Ctrl-C or SIGTERM: stop the running run (not recorded), keep the finished ones
  trap - INT TERM
  if [[ -n $CHILD ]]; then
    kill -TERM "$CHILD" 2>/dev/null || true # timeout passes it on to the run's process group
    wait "$CHILD" 2>/dev/null || true
  fi
  # to fd 3, the sweep's stderr: this runs inside run_child, whose output may go to a run's log
  echo >&3
  echo "benchmark.sh: interrupted${CURRENT_RUN:+ during $CURRENT_RUN (not recorded)}; rerun the same command to resume" >&3
  exit 130
}

record_machine() { # write OUT/system.json and OUT/env_timing.json for the envs of the selected runs
  local config exp script mode env size seed envs=()
  local -A seen=()
  for config in "${SELECTED[@]}"; do
    read -r exp script mode env size seed <<<"$config"
    if [[ -z ${seen[$env]:-} ]]; then
      seen[$env]=1
      envs+=("$env")
    fi
  done
  echo "recording the machine and the env step times in $OUT"
  run_child "$PYTHON" sweep_info.py "$OUT" --envs "${envs[@]}" --command "$COMMAND_LINE" ||
    { echo "benchmark.sh: sweep_info.py failed, no run started" >&2; exit 1; }
}

run_one() { # run_one NUMBER TOTAL CONFIG: run one configuration and record it finished or failed
  local number=$1 total=$2 exp script mode env size seed
  read -r exp script mode env size seed <<<"$3"
  make_command "$exp" "$script" "$mode" "$env" "$size" "$seed"
  local run_dir="$OUT/runs/$exp/$RUN_NAME" log="logs/$exp/$RUN_NAME.log"
  local start=$SECONDS status=0 elapsed reason
  CURRENT_RUN=$RUN_NAME

  printf '[%d/%d] %s %s %s %s %s seed %s · %s ... ' "$number" "$total" "$exp" "$script" "$mode" "$env" \
    "$size" "$seed" "$(time_left $((total - number + 1)))"
  rm -rf "$run_dir" # what an interrupted or failed earlier attempt left
  mkdir -p "$OUT/logs/$exp"
  # timeout runs the script in its own process group and passes signals on to all of it
  run_child timeout --kill-after="$KILL_GRACE_SECONDS" "$TIMEOUT" "${CMD[@]}" >"$OUT/$log" 2>&1 || status=$?
  CURRENT_RUN=
  elapsed=$((SECONDS - start))
  DONE_COUNT=$((DONE_COUNT + 1))
  DONE_SECONDS=$((DONE_SECONDS + elapsed))

  if ((status == 0)) && "$PYTHON" sweep_info.py --finished "$run_dir"; then
    echo "$RUN_NAME" >>"$OUT/finished.txt"
    echo "ok, $(format_duration "$elapsed")"
    return
  fi
  reason=$status
  if ((TIMEOUT > 0 && elapsed >= TIMEOUT && (status == 124 || status == 137))); then
    reason=timeout
  elif ((status == 0)); then
    reason=incomplete
    echo "benchmark.sh: exit status 0 but no time/total scalar in $run_dir" >>"$OUT/$log"
  fi
  echo "$RUN_NAME $reason $log" >>"$OUT/failed.txt"
  FAILED+=("$RUN_NAME $reason $OUT/$log")
  echo "FAILED ($reason) after $(format_duration "$elapsed"), log: $OUT/$log"
}

run_sweep() {
  local config todo=() name number=0 start=$SECONDS
  local -A finished=()
  mkdir -p "$OUT"
  touch "$OUT/finished.txt"
  while read -r name; do
    [[ -z $name ]] || finished[$name]=1
  done <"$OUT/finished.txt"
  for config in "${SELECTED[@]}"; do
    [[ -n ${finished[${config// /__}]:-} ]] || todo+=("$config")
  done
  echo "${#SELECTED[@]} runs selected, $((${#SELECTED[@]} - ${#todo[@]})) already finished, ${#todo[@]} to run; output in $OUT"
  if ((${#todo[@]} == 0)); then
    return 0
  fi

  # The same environment for every run; nothing here favours one framework.
  export XLA_PYTHON_CLIENT_PREALLOCATE=false # JAX shares the GPU with torch; peak memory is meaningful
  export PYTHONUNBUFFERED=1                  # logs stay complete up to an interruption
  exec 3>&2 # the sweep's own stderr, for on_signal
  trap on_signal INT TERM
  record_machine
  for config in "${todo[@]}"; do
    number=$((number + 1))
    run_one "$number" "${#todo[@]}" "$config"
  done

  echo "done in $(format_duration $((SECONDS - start))): $((${#todo[@]} - ${#FAILED[@]})) runs finished, ${#FAILED[@]} failed"
  if ((${#FAILED[@]})); then
    echo "failed runs (also listed in $OUT/failed.txt):"
    printf '  %s\n' "${FAILED[@]}"
    return 1
  fi
}

main() {
  printf -v COMMAND_LINE '%q ' "$0" "$@"
  COMMAND_LINE=${COMMAND_LINE% }
  parse_options "$@"
  if ((QUICK)) && [[ -z $ITERATIONS ]]; then
    ITERATIONS=$QUICK_ITERATIONS
  fi
  OUT=${OUT:-$ROOT/results/$(date +%F)-$HOSTNAME}
  [[ $OUT == /* ]] || OUT=$PWD/$OUT
  cd "$ROOT"
  build_grid
  select_runs
  ((${#SELECTED[@]})) || die "no run of the grid matches the selection (--only, --filter, --shard)"
  if ((DRY_RUN)); then
    printf '%s\n' "${SELECTED_LINES[@]}"
    return 0
  fi
  run_sweep
}

# On one line: bash must not read this file again after a sweep of hours, during which it may have changed.
main "$@"; exit
