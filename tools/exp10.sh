#!/usr/bin/env bash
# exp10.sh: the cost of a hyperparameter search per DQN design, on Doors: tune.py's studies, then their report.
#
#   tools/exp10.sh OUT [--trials N] [--total-timesteps T] [--tiny]
#
# (a) the same search in every design: N configurations (a random sampler seeded per trial number, no pruner),
#     in dqn_torch_gymnasium.py (PyTorch + NumPy), dqn_linen_gymnasium.py (Flax + NumPy), dqn_torch.py (PyTorch on
#     the JAX env), dqn_torch_compile.py (torch.compile on the JAX env), dqn_linen.py (Flax + JAX env), dqn_nnx.py
#     (Flax NNX), dqn_equinox.py (Equinox) and dqn_linen.py at 16 envs; and the last again with --workers 2;
# (b) our source's study: TPE + Hyperband, N trials, on part (a)'s fastest design and on PyTorch + NumPy, the best
#     configuration rerun on 5 fresh seeds.
# Each study is a folder OUT/<part>-<design> (a tune.py study: rerunning this command resumes every one of them),
# OUT/exp10.json says what ran where, and `python -m report.search OUT` writes OUT/REPORT.md. Defaults: N = 40,
# T = 65,000 transitions a trial: PyTorch's part (a) about 45 minutes on a 2-core AMD EPYC VM, as measured in
# results/cpu-2core-exp10 (docs/results.md); torch.compile's, not measured there, adds its compilation to every
# trial. --tiny: trials of 2 iterations (3 trials unless --trials), 1 re-evaluation seed (a test of the command set,
# no result).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}

die() {
  echo "exp10.sh: $*" >&2
  exit 2
}

(($# >= 1)) && [[ $1 != -* ]] || die "usage: tools/exp10.sh OUT [--trials N] [--total-timesteps T] [--tiny]"
mkdir -p "$1"
OUT=$(cd "$1" && pwd) # the studies run from the repository
shift
TRIALS="" TIMESTEPS=65000 EVAL_SEEDS=5 WORKLOAD=()
while (($#)); do
  case $1 in
  --trials) TRIALS=${2:-} && shift 2 ;;
  --total-timesteps) TIMESTEPS=${2:-} && shift 2 ;;
  --tiny) TIMESTEPS=1024 EVAL_SEEDS=1 WORKLOAD=(--iteration-steps 512 --learning-starts 200) && shift ;;
  *) die "unknown option $1" ;;
  esac
done
TRIALS=${TRIALS:-$(((${#WORKLOAD[@]})) && echo 3 || echo 40)}
[[ $TRIALS =~ ^[1-9][0-9]*$ && $TIMESTEPS =~ ^[1-9][0-9]*$ ]] || die "--trials and --total-timesteps want positive integers"

# design: folder suffix | label | script | its flags
DESIGNS=(
  "torch-gymnasium|PyTorch + NumPy|dqn_torch_gymnasium.py|"
  "linen-gymnasium|Flax + NumPy|dqn_linen_gymnasium.py|"
  "torch|PyTorch + JAX env|dqn_torch.py|"
  "torch-compile|torch.compile + JAX env|dqn_torch_compile.py|"
  "linen|Flax + JAX env|dqn_linen.py|"
  "nnx|Flax NNX + JAX env|dqn_nnx.py|"
  "equinox|Equinox + JAX env|dqn_equinox.py|"
  "linen-16envs|Flax + JAX env, 16 envs|dqn_linen.py|--num-envs 16"
)
SIXTEEN=${DESIGNS[-1]} # the design that runs again with --workers 2
STUDIES=()

study() { # study PART KEY LABEL WORKERS SAMPLER PRUNER EVAL_SEEDS SCRIPT [FLAGS...]: one tune.py study, resumed
  local part=$1 key=$2 label=$3 workers=$4 sampler=$5 pruner=$6 seeds=$7
  shift 7
  local folder="$part-$key"
  STUDIES+=("$part|$folder|$label|$workers|$1|${*:2}")
  echo "exp10 $folder: $label, $TRIALS trials, workers $workers, load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$PYTHON" "$ROOT/tune.py" --trials "$TRIALS" --out "$OUT/$folder" --sampler "$sampler" --pruner "$pruner" \
    --seed 1 --workers "$workers" --eval-seeds "$seeds" "$1" "${@:2}" --env-id doors:Doors-v0 \
    --total-timesteps "$TIMESTEPS" "${WORKLOAD[@]}" | grep -v '^\[I ' || true
  [[ -f $OUT/$folder/trials.csv ]] || die "the study $folder did not run (see its output above)"
}

record() { # exp10.json: what ran, where
  "$PYTHON" - "$OUT" "$TRIALS" "$TIMESTEPS" "$LOAD" "$DATE" "${STUDIES[@]}" <<'PY'
import json, sys
sys.path.insert(0, sys.path[0] or ".")
from sweep.records import command_set_machine
out, trials, timesteps, load, date, *studies = sys.argv[1:]
entries = [dict(zip(("part", "folder", "label", "workers", "script", "flags"), study.split("|"))) for study in studies]
for entry in entries:
    entry["workers"] = int(entry["workers"])
json.dump({**command_set_machine(), "load": load, "date": date, "trials": int(trials),
           "total_timesteps": int(timesteps), "studies": entries}, open(f"{out}/exp10.json", "w"), indent=1)
PY
}

fastest() { # the part (a) design whose study took the least wall time (the trials' union of intervals)
  "$PYTHON" - "$OUT" "${DESIGNS[@]%%|*}" <<'PY'
import sys
sys.path.insert(0, sys.path[0] or ".")
from report.study import wall_seconds
from search.study import load
times = {}
for key in sys.argv[2:]:
    times[key] = wall_seconds(load(f"{sys.argv[1]}/a-{key}")[1].get_trials(deepcopy=False))
print(min(times, key=times.get))
PY
}

LOAD=$(cut -d' ' -f1-3 /proc/loadavg) DATE=$(date -u +%F) # at the start
cd "$ROOT"
"$PYTHON" -c "from sweep.records import LEARNING_CHECK; print(LEARNING_CHECK)"
for design in "${DESIGNS[@]}"; do
  IFS='|' read -r key label script flags <<<"$design"
  # shellcheck disable=SC2086 # the design's flags, words
  study a "$key" "$label" 1 random none 0 "$script" $flags
done
IFS='|' read -r key label script flags <<<"$SIXTEEN"
# shellcheck disable=SC2086
study a "$key-workers2" "$label, 2 workers" 2 random none 0 "$script" $flags
best=$(fastest)
for design in "${DESIGNS[@]}"; do
  IFS='|' read -r key label script flags <<<"$design"
  if [[ $key == "$best" || $key == torch-gymnasium ]]; then
    # shellcheck disable=SC2086
    study b "$key" "$label" 1 tpe hyperband "$EVAL_SEEDS" "$script" $flags
  fi
done
record
"$PYTHON" -m report.search "$OUT"
