#!/usr/bin/env bash
# exp10.sh: the cost of a hyperparameter search per DQN design, on Doors: tune.py's studies, then their report.
#
#   tools/exp10.sh OUT [--trials N] [--total-timesteps T] [--study-seeds 1,2,3] [--population P] [--parts a,b,p]
#                      [--dry-run] [--tiny]
#
# Per study seed S (the samplers' seed; the repeats), in an order of designs that turns from seed to seed:
# (a) the same search in every design: N configurations (a random sampler seeded per trial number, no pruner),
#     in dqn_torch_gymnasium.py (PyTorch + NumPy), dqn_linen_gymnasium.py (Flax + NumPy), dqn_torch.py (PyTorch on
#     the JAX env), dqn_torch_compile.py (torch.compile on the JAX env), dqn_linen.py (Flax + JAX env), dqn_nnx.py
#     (Flax NNX), dqn_equinox.py (Equinox) and dqn_linen.py at 16 envs; and the last again with --workers 2;
# (b) our source's study: TPE + Hyperband, N trials, on part (a)'s fastest design of seed S and on PyTorch + NumPy,
#     the best configuration rerun on 5 fresh seeds;
# (p) the population: N configurations of the DQN space's float fields (learning_rate, gamma, exploration_fraction,
#     end_e; the integer fields stay at the script's defaults) as dqn_linen_vmap.py populations of P agents
#     (default 8), two processes side by side, a random sampler, no pruner.
# Each study is a folder OUT/<part>-<design>-s<S> (a tune.py study: rerunning this command resumes every one of
# them); OUT/exp10.json says what ran where, and every invocation (from its start) with its date, commit, load and
# CPU; `python -m report.search OUT` writes OUT/REPORT.md. --parts runs some parts only (a sitting in windows; (b) needs seed S's (a)).
# The estimate comes first (--dry-run stops there). Defaults: N = 40, T = 30,000 transitions a trial (a multiple of
# the scripts' --iteration-steps, 10,000; a study seed is about 2 hours on the 2-core Zen 4 VM: one window), seeds
# 1,2,3.
# --tiny: trials of 2 iterations (3 trials unless --trials), populations of 2, 1 re-evaluation seed, seed 1 unless
# --study-seeds (a test of the command set, no result).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}
USAGE="usage: tools/exp10.sh OUT [--trials N] [--total-timesteps T] [--study-seeds 1,2,3] [--population P] \
[--parts a,b,p] [--dry-run] [--tiny]"

die() {
  echo "exp10.sh: $*" >&2
  exit 2
}

(($# >= 1)) && [[ $1 != -* ]] || die "$USAGE"
TARGET=$1
ARGV=("$@")
shift
TRIALS="" TIMESTEPS=30000 ITERATION_STEPS=10000 EVAL_SEEDS=5 WORKLOAD=() SEEDS="" POPULATION=8 PARTS=a,b,p DRY=0
while (($#)); do
  case $1 in
  --trials) TRIALS=${2:-} && shift 2 ;;
  --total-timesteps) TIMESTEPS=${2:-} && shift 2 ;;
  --study-seeds) SEEDS=${2:-} && shift 2 ;;
  --population) POPULATION=${2:-} && shift 2 ;;
  --parts) PARTS=${2:-} && shift 2 ;;
  --dry-run) DRY=1 && shift ;;
  --tiny) TIMESTEPS=1024 ITERATION_STEPS=512 EVAL_SEEDS=1 POPULATION=2 WORKLOAD=(--iteration-steps 512
    --learning-starts 200) && shift ;;
  *) die "unknown option $1" ;;
  esac
done
TRIALS=${TRIALS:-$(((${#WORKLOAD[@]})) && echo 3 || echo 40)}
SEEDS=${SEEDS:-$(((${#WORKLOAD[@]})) && echo 1 || echo 1,2,3)}
[[ $TRIALS =~ ^[1-9][0-9]*$ && $TIMESTEPS =~ ^[1-9][0-9]*$ && $POPULATION =~ ^[1-9][0-9]*$ ]] ||
  die "--trials, --total-timesteps and --population want positive integers"
[[ $SEEDS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--study-seeds wants positive integers separated by commas"
((TIMESTEPS % ITERATION_STEPS == 0)) ||
  die "--total-timesteps $TIMESTEPS: the DQN scripts want a multiple of their --iteration-steps, $ITERATION_STEPS"
[[ $PARTS =~ ^[abp](,[abp])*$ ]] || die "--parts wants some of a, b and p separated by commas"
IFS=, read -r -a SEED_LIST <<<"$SEEDS"

# design: folder key | label | script | its flags
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

"$PYTHON" - "$TRIALS" "$TIMESTEPS" "$POPULATION" "$PARTS" "${SEED_LIST[@]}" <<'PY'
import math, sys
# A trial's seconds at T transitions: start + (trial at 30,000 - start) * T / 30,000. The trials at 30,000: each study's
# wall time over its 40 trials in results/cpu-2core-exp10-repeats, study seed 1 (2-core AMD EPYC VM, Zen 4); the
# start: one 20,000-transition run of the script's defaults on the Zen 5 VM. Other T scale linearly (not measured).
COSTS = {"torch-gymnasium": (6.2, 17.98), "linen-gymnasium": (6.7, 15.20), "torch": (10.9, 27.88),
         "torch-compile": (21.7, 39.90), "linen": (6.4, 10.50), "nnx": (6.2, 10.25), "equinox": (6.6, 10.27),
         "linen-16envs": (6.5, 10.68)}
WORKERS2 = 289.8 / 427.3  # 2 workers against 1 at 16 envs, study wall time, the same sitting
PRUNED = 0.77  # a TPE + Hyperband study's trials against N (its 5 re-evaluations apart), the same sitting's two
POPULATION = 66.6 / 3  # a round of two population processes of 8 agents at 30,000, the same sitting
trials, steps, population, parts, seeds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
trial = {key: start + (measured - start) * steps / 30_000 for key, (start, measured) in COSTS.items()}
a = trials * (sum(trial.values()) + WORKERS2 * trial["linen-16envs"])
b = (PRUNED * trials + 5) * (trial["torch-gymnasium"] + min(trial.values()))  # and the best rerun on 5 seeds
# a population's cost assumed linear in its agents and steps
p = math.ceil(trials / population / 2) * POPULATION * population / 8 * steps / 30_000
seconds = len(seeds) * sum(cost for name, cost in zip("abp", (a, b, p)) if name in parts)
print(f"exp10: parts {parts} of study seeds {','.join(seeds)}, {trials} trials a study of {steps:,} transitions; about "
      f"{seconds / 60:.0f} min on a 2-core AMD EPYC VM (Zen 4), more on a slower machine", flush=True)
PY
((DRY)) && exit 0
mkdir -p "$TARGET"
OUT=$(cd "$TARGET" && pwd) # the studies run from the repository
STUDIES=()

study() { # study PART KEY SEED LABEL WORKERS SAMPLER PRUNER EVAL_SEEDS POPULATION SCRIPT [FLAGS...]: one study
  local part=$1 key=$2 seed=$3 label=$4 workers=$5 sampler=$6 pruner=$7 seeds=$8 population=$9
  shift 9
  local folder="$part-$key-s$seed" space=()
  ((population)) && space=(--space "$OUT/space.json")
  STUDIES+=("$part|$folder|$label|$workers|$seed|$population|$1|${*:2}")
  echo "exp10 $folder: $label, $TRIALS trials, workers $workers, load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$PYTHON" "$ROOT/tune.py" --trials "$TRIALS" --out "$OUT/$folder" --sampler "$sampler" --pruner "$pruner" \
    --seed "$seed" --workers "$workers" --eval-seeds "$seeds" --population "$population" "${space[@]}" "$1" \
    "${@:2}" --env-id doors:Doors-v0 --total-timesteps "$TIMESTEPS" "${WORKLOAD[@]}" | grep -v '^\[I ' || true
  [[ -f $OUT/$folder/trials.csv ]] || die "the study $folder did not run (see its output above)"
}

record() { # exp10.json: what ran where (the studies of every invocation), and this invocation
  "$PYTHON" - "$OUT" "$TRIALS" "$TIMESTEPS" "$LOAD" "$DATE" "$COMMIT" "${ARGV[*]}" "${STUDIES[@]}" <<'PY'
import json, os, sys
sys.path.insert(0, sys.path[0] or ".")
from sweep.machine import command_set_machine
out, trials, timesteps, load, date, commit, argv, *studies = sys.argv[1:]
path = f"{out}/exp10.json"
plan = json.load(open(path)) if os.path.exists(path) else {
    **command_set_machine(), "load": load, "date": date, "trials": int(trials), "total_timesteps": int(timesteps),
    "studies": [], "invocations": []}
fields = ("part", "folder", "label", "workers", "seed", "population", "script", "flags")
for study in studies:
    entry = dict(zip(fields, study.split("|")))
    entry.update(workers=int(entry["workers"]), seed=int(entry["seed"]), population=int(entry["population"]))
    plan["studies"] = [item for item in plan["studies"] if item["folder"] != entry["folder"]] + [entry]
invocation = {"argv": f"tools/exp10.sh {argv}", "date": date, "commit": commit, "load": load,
              **command_set_machine()}  # a sitting in windows may change machine
invocations = plan.setdefault("invocations", [])
if invocations and invocations[-1]["argv"] == invocation["argv"] and invocations[-1]["date"] == date:
    invocations.pop()  # this invocation's record from its start: it ended
invocations.append(invocation)
json.dump(plan, open(path + ".tmp", "w"), indent=1)
os.replace(path + ".tmp", path)
PY
}

fastest() { # fastest SEED: the part (a) design of seed SEED whose study took the least wall time
  "$PYTHON" - "$OUT" "$1" "${DESIGNS[@]%%|*}" <<'PY'
import sys
sys.path.insert(0, sys.path[0] or ".")
from report.study import wall_seconds
from search.storage import load
out, seed, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
times = {key: wall_seconds(load(f"{out}/a-{key}-s{seed}")[1].get_trials(deepcopy=False)) for key in keys}
print(min(times, key=times.get))
PY
}

LOAD=$(cut -d' ' -f1-3 /proc/loadavg) DATE=$(date -u +%FT%H:%MZ) # at the start
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo none)
cd "$ROOT"
"$PYTHON" -c "from sweep.machine import LEARNING_CHECK; print(LEARNING_CHECK)"
"$PYTHON" -c "import sys; sys.path.insert(0, 'tools'); from exp11 import write_float_space; \
write_float_space(sys.argv[1], 'dqn')" "$OUT"
record # the invocation, at its start: a window that ends it (SIGTERM) still leaves its date, load and CPU
for seed in "${SEED_LIST[@]}"; do
  turn=$(((seed - 1) % ${#DESIGNS[@]})) # the designs' order turns from seed to seed, whichever seeds run together
  order=("${DESIGNS[@]:turn}" "${DESIGNS[@]:0:turn}")
  if [[ $PARTS == *a* ]]; then
    for design in "${order[@]}"; do
      IFS='|' read -r key label script flags <<<"$design"
      # shellcheck disable=SC2086 # the design's flags, words
      study a "$key" "$seed" "$label" 1 random none 0 0 "$script" $flags
    done
    IFS='|' read -r key label script flags <<<"$SIXTEEN"
    # shellcheck disable=SC2086
    study a "$key-workers2" "$seed" "$label, 2 workers" 2 random none 0 0 "$script" $flags
  fi
  if [[ $PARTS == *p* ]]; then
    study p linen-vmap "$seed" "Flax + JAX env, populations of $POPULATION" 2 random none 0 "$POPULATION" \
      dqn_linen_vmap.py
  fi
  if [[ $PARTS == *b* ]]; then
    best=$(fastest "$seed" 2>/dev/null) || die "part (b) of seed $seed needs its part (a): run --parts a first"
    for design in "${DESIGNS[@]}"; do
      IFS='|' read -r key label script flags <<<"$design"
      if [[ $key == "$best" || $key == torch-gymnasium ]]; then
        # shellcheck disable=SC2086
        study b "$key" "$seed" "$label" 1 tpe hyperband "$EVAL_SEEDS" 0 "$script" $flags
      fi
    done
  fi
done
record
"$PYTHON" -m report.search "$OUT"
