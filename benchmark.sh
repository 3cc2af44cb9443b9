#!/usr/bin/env bash
# benchmark.sh: the benchmark sweep (docs/method.md). Every configuration of the grid runs in
# a fresh process of one ppo_*.py script, one run at a time, in a fixed order, all with the
# same environment variables; exp6's groups of N agents run N processes, as many at a time as
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
#   system.json, env_timing.json   the machine, and each env's step time (sweep_info.py)
#   workload.json                  the per-run workload every run of OUT has (resume refuses another)
#   runs/<exp>/<run_name>/         each run's TensorBoard event file (its --log-dir is runs/<exp>)
#   runs/exp6/<group>/             an exp6 group: agent__seed<s>/ per agent (the event file), and group.json
#                                  (written once every agent finished: variant, agents, processes, wall time)
#   logs/<exp>/<run_name>.log      each run's stdout and stderr (an exp6 group of one process too)
#   logs/exp6/<group>/agent__seed<s>.log   each process's of an exp6 group of one process per agent
#   finished.txt                   one run name per line: exit 0 and a time/total scalar
#   durations.txt                  "<run_name> <milliseconds>" per finished run: the ETA's observations
#   load.txt                       "<run_name> <1-minute load average>" read as each run ends (Linux)
#   sweeps.txt                     "<start> <end> <seconds> <runs attempted> <command>" per invocation that ran to its end
#   failed.txt                     one line per failed attempt: <run_name> <exit code|timeout|incomplete> <log, relative to OUT>
#   .lock                          held (flock) by the sweep writing into OUT, with its pid
# run_name is <exp>__<script>__<mode>__<env_id>__<size>__<seed>, exp one of warmup exp1 exp2 exp3 exp4;
# exp5's runs, which vary the number of envs N, are <exp>__<script>__<mode>__<env_id>__<size>__n<N>__<seed>,
# and <...>__n<N>__sync__<seed> for its --sync-timing runs; exp6's groups of N agents (seeds <seed> to
# <seed>+N-1) are exp6__<script>__<mode>__<env_id>__<size>__a<N>__<seed>, and the files above name a group
# where they name a run.

# bash >= 4.4 (namerefs, "${a[@]}" of empty arrays under set -u): checked in POSIX sh syntax, so
# that an older bash or another shell reaches this line and stops here.
case ${BASH_VERSION:-} in
  '' | [0-3].* | 4.[0-3].*)
    echo "benchmark.sh: needs bash >= 4.4, this is ${BASH_VERSION:-not bash}; run it as 'bash benchmark.sh' with a newer bash" >&2
    exit 2
    ;;
esac
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PYTHON=${PYTHON:-python}

SIZES=(small medium large)
# A variant is "<script> <compile mode>"; make_command maps each mode to its script's flag.
# The published study's variants:
STUDY_PAIRS=("ppo_linen none" "ppo_linen jit" "ppo_nnx none" "ppo_nnx jit" "ppo_nnx_cached cached"
  "ppo_torch none" "ppo_torch env-jit" "ppo_torch_compile compile")
STUDY_COMPILED=("ppo_linen jit" "ppo_nnx_cached cached" "ppo_torch_compile compile")
# Added since, each in the default grid once its script is in the repository:
NEW_PAIRS=("ppo_nnx_tree tree" "ppo_equinox none" "ppo_equinox jit")
# exp1's fully compiled variants; the scan variant (the whole training one compiled call) in exp1 alone: it cannot time
# rollout and update apart (exp2), and its one agent per run is exp1's workload
NEW_COMPILED=("ppo_nnx_tree tree" "ppo_equinox jit" "ppo_linen_scan scan")
# The env-backend experiment exp4 (when both Gymnasium scripts are in the repository): the
# gymnax and Gymnasium scripts of torch and Linen on the envs both backends have.
BACKEND_VARIANTS=("ppo_torch env-jit" "ppo_linen jit" "ppo_torch_gymnasium eager" "ppo_linen_gymnasium jit")
BACKEND_ENVS=(CartPole-v1 Acrobot-v1 MountainCar-v0)
BACKEND_SIZES=(small medium)
# The scaling experiment exp5: how the cost grows with the number of envs N, each run of the same per-env
# workload (num_steps, epochs and minibatches as everywhere, so the minibatch grows with the batch), small
# model. Every fully compiled variant and the Gymnasium scripts, Gymnasium's NumPy-vectorised CartPole
# (mode "-vector", --vectorization vector) too; CartPole-v1 for all, Breakout-MinAtar for the gymnax scripts.
EXP5_VARIANTS=("ppo_linen jit" "ppo_nnx_cached cached" "ppo_nnx_tree tree" "ppo_equinox jit" "ppo_torch env-jit"
  "ppo_torch_compile compile" "ppo_torch_gymnasium eager" "ppo_torch_gymnasium eager-vector"
  "ppo_linen_gymnasium jit" "ppo_linen_gymnasium jit-vector")
EXP5_ENVS=(CartPole-v1 Breakout-MinAtar)
EXP5_NUM_ENVS=(8 32 128 512 2048) # and --sync-timing runs at the first and the last, on EXP5_SYNC_ENVS
EXP5_SYNC_ENVS=(CartPole-v1)      # the env every variant has
# Gymnasium's Python loop over env copies (the modes without -vector) up to this N: at 2,048 envs the curve measures
# the NumPy-vectorised env (the -vector modes), not a Python loop over 2,048 envs (whose 12-iteration run took 3.5 min)
EXP5_LOOP_MAX_NUM_ENVS=512
# --sync-timing at the largest N too (all at the smallest) only for these, the reference of each framework: at 2,048
# envs the update was 96-97 % of the iteration of all four gymnax JAX variants (rollout 0.34-0.44 s of 10.6-11.7 s),
# torch.compile's rollout and update were within 10 % of torch's, and the Gymnasium scripts on the NumPy env spent
# 0.65-0.76 s in the rollout (results/cpu-2core-exp5): these two stand for the others, whose runs there (15 min) would
# take exp5 past 90 minutes
EXP5_SYNC_AT_LARGEST=("ppo_linen jit" "ppo_torch env-jit")
# N = 8192 ALSO, ONLY FOR THESE "<script> <mode> <env>": the runs that stay under about 3 minutes on a 2-core
# CPU. The cost model (PRIOR_* below) puts every variant's 8192-env run at 5 minutes or more (its batch, 2 M
# samples, is 256 x the reference batch), so none is listed until a measurement says otherwise.
EXP5_LARGEST_NUM_ENVS=8192
EXP5_LARGEST_RUNS=()
# 12 iterations: windows 0, 1-7 and 8-11, a steady state of 4 iterations; the whole exp5 took 112 min on a
# 2-core Intel Xeon (2026-11-23) in the grid it had then (100 runs), the runs of today's grid 81 of them;
# today's grid took 74.5 min on a 2-core AMD EPYC
DEFAULT_EXP5_ITERATIONS=12
QUICK_EXP5_VARIANTS=("ppo_linen jit" "ppo_torch env-jit" "ppo_torch_gymnasium eager" "ppo_linen_gymnasium jit-vector")
QUICK_EXP5_NUM_ENVS=(8 32 128)
# The many-agents experiment exp6 (once ppo_linen_scan.py is in the repository): the wall time to train N agents
# of the reference workload, small model, seeds s to s+N-1, by one process of the scan variant (--num-seeds N,
# the N agents vmapped in one compiled call) and by N fresh processes of each process variant, started as many at
# a time as this machine has usable cores. Each (variant, env, N, repeat) is one group; plot.py extrapolates the
# process variants beyond their largest N.
EXP6_SCAN_VARIANT="ppo_linen_scan scan"
EXP6_PROCESS_VARIANTS=("ppo_linen jit" "ppo_torch env-jit")
EXP6_ENVS=(CartPole-v1 Breakout-MinAtar)
EXP6_SCAN_AGENTS=(1 2 4 8 16 32) # an N whose estimated peak memory does not fit is refused (PEAK MEMORY below)
EXP6_PROCESS_AGENTS=(1 2 4 8)
QUICK_EXP6_ENVS=(CartPole-v1)
QUICK_EXP6_AGENTS=(1 2)
EXP6_SEED_STRIDE=1000 # repeat r (0-based) trains the agents of seeds 1 + 1000 r onwards: disjoint across repeats
# The model-size experiment exp7: the ranking at each model size on this machine, with run-to-run spread beside the
# env-to-env spread and the rollout/update split per size. Every fully compiled variant and torch env-jit beside them:
# small on EXP7_ENVS with EXP7_SMALL_SEEDS seeds (more with --repeats), medium on all 12 envs, large on EXP7_ENVS with
# fewer iterations (--exp7-large-iterations: a large iteration takes 30-45 s on a 2-core CPU); --sync-timing runs on
# EXP7_SYNC_ENVS at every size for every variant but scan (one call, no split), at large only EXP7_SYNC_AT_LARGE.
EXP7_VARIANTS=("ppo_linen jit" "ppo_nnx_cached cached" "ppo_nnx_tree tree" "ppo_equinox jit" "ppo_torch_compile compile"
  "ppo_linen_scan scan" "ppo_torch env-jit")
EXP7_ENVS=(CartPole-v1 Breakout-MinAtar Asterix-MinAtar)
EXP7_SMALL_SEEDS=3
EXP7_SYNC_ENVS=(CartPole-v1)
EXP7_SYNC_AT_LARGE=("ppo_linen jit" "ppo_torch env-jit")
# 12 iterations as exp5's (windows 0, 1-7 and 8-11): 21 large runs of 12 iterations take about 2.5 h on a 2-core CPU
DEFAULT_EXP7_LARGE_ITERATIONS=12
QUICK_EXP7_VARIANTS=("ppo_linen jit" "ppo_torch env-jit")
QUICK_EXP7_ENVS=(CartPole-v1)
QUICK_EXP7_SMALL_SEEDS=2
EXPERIMENTS=(exp1 exp2 exp3 exp4 exp5 exp6 exp7) # what --only accepts
# The per-run workload: the scripts' defaults, every one passed explicitly to every run.
DEFAULT_ITERATIONS=100
DEFAULT_EAGER_ITERATIONS=10 # eager modes (JAX none, torch none): about a minute per iteration on a 2-core CPU
REFERENCE_WORKLOAD=(32 256 10 8) # num_envs num_steps update_epochs num_minibatches
# --quick runs 10 iterations, enough to fill the windows that plot.py reads (0, 1-7, 8-99), of a
# smaller workload (batch 32 x 32, 2 epochs x 4 minibatches). Quick numbers are a smoke test, not results.
QUICK_ITERATIONS=10
QUICK_WORKLOAD=(32 32 2 4)
KILL_GRACE_SECONDS=10 # after a timeout or Ctrl-C, SIGKILL a run still alive this long after SIGTERM

# THE ETA'S PRIOR: rough costs on a 2-core CPU, for the reference workload (32 envs x 256 steps, 10 epochs);
# the small model's from the reference sweeps measured on an idle 2-core Xeon (2026-11-22, exp1 and exp4;
# gymnasium-vector a guess: the update's cost plus a NumPy step), the others from an earlier --quick sweep
# scaled to the reference workload. They only order the runs until runs of this sweep are timed.
# A run costs FIXED + iterations x (LOOP + the rest of ITERATION x the batch over the reference batch): LOOP
# is what an iteration costs whatever the number of envs (Python and dispatch per step), the rest grows with
# the batch, for the small model twice as fast on a MinAtar env (observation 400 and more, not 2 to 6).
declare -A PRIOR_FIXED_S=([jax]=8 [jax-eager]=28 [torch]=6 [torch-eager]=9 [compile]=22 [gymnasium]=4
  [gymnasium-vector]=4)
declare -A PRIOR_LOOP_MS=([jax]=10 [jax-eager]=50000 [torch]=200 [torch-eager]=14000 [compile]=200 [gymnasium]=50
  [gymnasium-vector]=50)
declare -A PRIOR_ITERATION_MS=(
  [jax small]=110 [jax medium]=900 [jax large]=36000
  [jax-eager small]=60000 [jax-eager medium]=70000 [jax-eager large]=100000
  [torch small]=300 [torch medium]=2000 [torch large]=40000
  [torch-eager small]=15000 [torch-eager medium]=16000 [torch-eager large]=55000
  [compile small]=300 [compile medium]=2000 [compile large]=40000
  [gymnasium small]=270 [gymnasium medium]=4000 [gymnasium large]=40000
  [gymnasium-vector small]=150 [gymnasium-vector medium]=2000 [gymnasium-vector large]=40000
)
# exp5's runs took 1.4-1.7x these figures at every N and in every class (1.54x in all) on a 2-core Intel Xeon
# (results/cpu-2core-exp5), and Linen's again on a 2-core AMD EPYC (results/cpu-2core-exp6: 1.4-1.65x), so their
# prior is scaled by this
PRIOR_EXP5_PERCENT=154
# THE PEAK MEMORY MODEL: a run's peak resident memory = BASE + samples x (SAMPLE + OBS x observation size)
# bytes, samples = num_envs x num_steps, per script family (jax: the gymnax JAX scripts; torch: ppo_torch and
# ppo_torch_compile). Fitted to the peak RSS (memory/peak_rss_bytes) of CPU runs of 2 iterations at 512 and
# 2048 envs x 256 steps on CartPole-v1 and Breakout-MinAtar (the Gymnasium scripts: CartPole-v1 only, so
# their observation is in SAMPLE) in 2026-11, each figure the smallest of its family, rounded down: only a run
# that surely does not fit is refused. Measured at 2048 envs on Breakout-MinAtar: jax 2.5-3.1 GiB, torch
# 8.3-8.4 GiB (the model: 2.3 and 7.6). The model size is left out (exp5's small model is a few kB).
# An exp6 group: the scan variant's one process as a jax run of N x 32 envs; the process variants' as many
# runs of 32 envs as run at once.
declare -A MEMORY_BASE_MB=([jax]=640 [torch]=700 [torch_gymnasium]=330 [linen_gymnasium]=550)
declare -A MEMORY_SAMPLE_BYTES=([jax]=256 [torch]=900 [torch_gymnasium]=1150 [linen_gymnasium]=420)
declare -A MEMORY_OBS_BYTES=([jax]=8 [torch]=33 [torch_gymnasium]=0 [linen_gymnasium]=0)

usage() {
  cat <<'EOF'
Usage: ./benchmark.sh [options] [-- sbatch options, with --slurm]

Runs the benchmark grid: one fresh `python ppo_*.py ...` process per run, one at a time (exp6:
a group of N agents at a time, in one process or in N processes run side by side).
The method (grid, compile modes, timing rules, windows, workload) is in docs/method.md.

--grid study, the published study's 231 runs:
  warmup    3 runs  CartPole-v1, small: linen jit, nnx cached, torch compile (not analysed)
  exp1    108 runs  12 envs x 3 fully compiled variants (linen jit, nnx cached, torch compile) x 3 sizes
  exp2     96 runs  12 envs x 8 variant/compile pairs x small, --sync-timing
  exp3     24 runs  Acrobot-v1 x 8 pairs x 3 sizes, --sync-timing
  pairs: linen none/jit, nnx none/jit/cached, torch none/env-jit/compile; sizes: small medium large
--grid default (the default), the study grid plus the variants added since, each once its script
is in the repository (a missing script is simply not in the grid):
  ppo_nnx_tree.py (tree) and ppo_equinox.py (jit) join exp1; nnx_tree tree, equinox none and
  jit join the pairs of exp2 and exp3 (up to 348 runs);
  exp4     24 runs  env backends: torch env-jit, linen jit, torch_gymnasium eager, linen_gymnasium
                    jit x CartPole-v1, Acrobot-v1, MountainCar-v0 x small, medium (async), once
                    ppo_torch_gymnasium.py and ppo_linen_gymnasium.py are both there
  exp5     90 runs  how the cost grows with the number of envs N: linen jit, nnx_cached cached,
                    nnx_tree tree, equinox jit, torch env-jit, torch_compile compile,
                    torch_gymnasium eager and eager-vector, linen_gymnasium jit and jit-vector
                    (-vector: on Gymnasium's NumPy-vectorised CartPole, --vectorization vector)
                    x N = 8, 32, 128, 512, 2048 x small, async, on CartPole-v1 (all 10; the
                    Python loop over Gymnasium's envs, eager and jit, up to 512) and
                    Breakout-MinAtar (the 6 gymnax ones): 78 runs; plus --sync-timing runs on
                    CartPole-v1 for the rollout/update split, at N = 8 (all 10) and 2048 (linen
                    jit, torch env-jit): 12 runs. Each of 12 iterations (--exp5-iterations;
                    windows 0, 1-7 and 8-11) of the same per-env workload as the others (the
                    minibatch grows with the batch). N = 8192 only for the runs listed in
                    EXP5_LARGEST_RUNS in this file: none yet, as each would take 5 minutes or
                    more on a 2-core CPU. About 82 minutes on a 2-core CPU by the estimate; 74.5
                    measured on a 2-core AMD EPYC (these runs took 81 in the 112-minute
                    sweep of the earlier, 100-run grid on an Intel Xeon)
  exp6  28 groups   many agents, once ppo_linen_scan.py is there: the wall time to train N
                    agents (seeds s..s+N-1), from the launch of the first process to the exit
                    of the last, by one `ppo_linen_scan.py --num-seeds N` process (mode scan)
                    at N = 1, 2, 4, 8, 16, 32, and by N fresh processes of linen jit and of
                    torch env-jit, as many at a time as there are usable cores, sharing them
                    (OMP_NUM_THREADS = cores / processes at a time, if > 1), at N = 1, 2, 4, 8
                    (plot.py extrapolates them beyond) x CartPole-v1, Breakout-MinAtar x
                    small, async. A group at an N whose estimated peak memory does not fit is
                    refused (see Memory). About 50 minutes on a 2-core CPU (an estimate)
  exp7    182 runs  model sizes on this machine: linen jit, nnx_cached cached, nnx_tree tree,
                    equinox jit, torch_compile compile, linen_scan scan and torch env-jit (async)
                    x small on CartPole-v1, Breakout-MinAtar, Asterix-MinAtar with seeds 1-3
                    (or 1..--repeats, if more), medium on all 12 envs, large on those 3 envs in
                    runs of 12 iterations (--exp7-large-iterations; windows 0, 1-7 and 8-11: a
                    large iteration takes 30-45 s on a 2-core CPU): 168 runs; plus --sync-timing
                    runs on CartPole-v1 for the rollout/update split per size, every variant
                    but scan (one compiled call) at small and medium, linen jit and torch
                    env-jit at large: 14 runs. About 7 hours on a 2-core CPU by the estimate;
                    7.5 measured on a 2-core AMD EPYC (7.2 h of them in the runs)
Every run of exp1 to exp4, exp6 and exp7 (but its large runs) does 100 iterations, eager modes
(JAX none, torch none) 10 (--eager-iterations), all of the same per-iteration workload:
--num-envs 32 --num-steps 256 --update-epochs 10 --num-minibatches 8. Repeat r (0-based) runs
with --seed 1+r; exp6's groups train the agents of seeds 1+1000r onwards.
Run names: <exp>__<script>__<mode>__<env_id>__<size>__<seed>; exp5's carry N before the seed,
exp5__<script>__<mode>__<env_id>__small__n<N>__<seed>, and its synchronised runs "sync" after
it, exp5__<script>__<mode>__<env_id>__small__n<N>__sync__<seed>, as exp7's,
exp7__<script>__<mode>__<env_id>__<size>__sync__<seed>; an exp6 group's name carries
its number of agents N and its first seed, exp6__<script>__<mode>__<env_id>__small__a<N>__<seed>,
and its folder runs/exp6/<group>/ holds agent__seed<s>/ per agent and group.json (its wall time;
written once every agent finished). The selection options and the files of OUT use these names,
a group's where they name a run.

How long. Measured on an otherwise idle 2-core Intel Xeon CPU VM (2026-11-22): --quick took 11
minutes for the 45 runs it had before exp4's 4 and exp5's joined it (70 now, exp6's 6 groups aside); exp1 at small
(63 runs with the warm-up) 34 minutes. ESTIMATES, not measured: on a 2-core CPU, from the
built-in cost model (--dry-run prints its figure for any selection; a sweep refines it from its
own runs), --grid study about 2 days, the default grid with every variant about 4.5 days (the
large model size dominates), exp5 about 82 minutes, exp6 about 50 (81 measured on a 2-core AMD EPYC),
exp7 about 7 hours (7.5 measured on a 2-core AMD EPYC). On one GPU, a guess: about 7 hours for the reference grid (mostly
the eager runs), 10 to 15 minutes for --quick.

Options:
  --out DIR          sweep folder (default: results/<YYYY-MM-DD>-<hostname> in the repository)
  --grid NAME        study or default (see above)
  --quick            a reduced grid of the chosen grid, touching every variant, compile mode and chart:
                       warmup  CartPole-v1 small linen jit
                       exp1    CartPole-v1, DiscountingChain-bsuite, Breakout-MinAtar x compiled x small
                       exp2    CartPole-v1 x pairs x small
                       exp3    Acrobot-v1 x pairs x small, and the non-eager pairs x medium
                       exp4    CartPole-v1 x the 4 backend variants x small (when in the grid)
                       exp5    CartPole-v1 x linen jit, torch env-jit, torch_gymnasium eager,
                               linen_gymnasium jit-vector x N = 8, 32, 128, and --sync-timing
                               at N = 8, linen and torch at 128 too (those whose script is there)
                       exp6    CartPole-v1 x scan, linen jit, torch env-jit x N = 1, 2 agents
                       exp7    CartPole-v1 x linen jit, torch env-jit x the 3 sizes (small: seeds
                               1, 2), and --sync-timing at each size
                     every run 10 iterations (exp5: 12), the fewest that fill plot.py's
                     windows (0, 1-7, 8-99), of a smaller workload: --num-steps 32
                     --update-epochs 2 --num-minibatches 4; 31 runs with --grid study; a
                     smoke test, not results
  --repeats N        run the grid N times, with seeds 1..N (default 1; exp7's small runs: at least 3)
  --only EXP         keep only EXP (exp1 .. exp7) and the warm-up runs, which prepare the
                     machine for any experiment; to drop them too, add --filter '^EXP__'
  --filter REGEX     keep the runs whose name (see above) matches REGEX (POSIX extended regex),
                     e.g. 'ppo_torch.*MinAtar', '__large__', '__n2048__', '__sync__' (exp5's and
                     exp7's synchronised runs), '__n[0-9]+__[0-9]+$' (exp5's others), '__a8__'
                     (exp6's groups of 8 agents)
  --shard K/N        split the selected runs into N interleaved parts and keep the K-th
                     (1 <= K <= N); the selected warm-up runs go to every shard
  --iterations N     iterations of every non-eager run (default 100; with --quick 10)
  --eager-iterations N  iterations of the eager runs (default 10, or --iterations if smaller)
  --exp5-iterations N   iterations of every exp5 run (default 12, with --quick too)
  --exp7-large-iterations N  iterations of exp7's large runs (default 12, or --iterations if smaller)
  --timeout SECONDS  stop a run (an exp6 group: each of its processes) after SECONDS and record
                     it as "timeout" (default: no limit)
  --dry-run          print "<index> <exp> <command>" for each selected run, run nothing; an exp6
                     group of N processes "<index> exp6 N x <command>, P at a time", its --seed
                     and --run-name the range of its agents' (e.g. --seed 1..8)
  --slurm N          run nothing here: submit the selection to SLURM as a job array of N tasks,
                     task K running --shard K/N into OUT/shard-K, each on a node of its own
                     (sbatch --exclusive); needs --out and sbatch. Words after -- go to sbatch
                     (e.g. -- --partition=gpu --account=me --gres=gpu:1 --time=12:00:00). Writes
                     the array script OUT/sweep.sbatch (from slurm/sweep.sbatch) and submits it;
                     resubmit it (sbatch OUT/sweep.sbatch, or this command again) to resume.
                     With --dry-run, print the array script and submit nothing.
  -h, --help         show this help

The index is the run's position in the whole grid (repeats included); --only, --filter and
--shard apply in that order. Before the runs, OUT/system.json records the machine and
OUT/env_timing.json the step time of every env of the grid.
Resume: rerun with the same options and --out; finished runs are skipped, failed and
interrupted ones run again (their partial run folder is deleted first). OUT/workload.json
records the workload of the first invocation, exp5's iterations and list of N and exp7's large
iterations included; a different workload (--quick, --iterations, --eager-iterations,
--exp5-iterations, --exp7-large-iterations) into the same OUT is refused. A run's N is in its
name: a resume never takes one N for another. An exp6 group resumes whole: finished once every
agent wrote time/total and group.json is written, else its folder is deleted and all its agents
run again; a failing process fails its group (the others are stopped, none more is started; no
group.json). One sweep at a time writes into an OUT.
Memory: a run whose estimated peak memory (a model per script of the batch and the observation
size, docs/method.md; an exp6 group: the scan process's batch of N agents, or the processes
that run at once) exceeds the memory available (MemAvailable of /proc/meminfo; the variable
BENCHMARK_MEM_AVAILABLE_KB overrides it; no check elsewhere) is refused before any run starts:
one line each on stderr (--dry-run too), not run, listed again in the summary. With --slurm,
each task checks the memory of its own node.
Needs bash >= 4.4, GNU timeout and flock; PYTHON (default: python) runs the scripts and
sweep_info.py and must import every package the selected scripts import (checked first).
With --slurm every option but --out, --shard and --dry-run carries over to every task; a
resubmission into OUT with other options (task count, selection, workload, --timeout) is
refused, as the shards would no longer match. Details, what to set for a cluster: docs/running.md.
Exit status: 0 every selected run finished (--slurm: the job array was submitted), 1 some run
failed (see OUT/failed.txt) or was refused for memory, or the machine could not be recorded, 2
nothing was run (bad options, a missing prerequisite, another workload in OUT, another sweep
running into OUT, a job that sbatch refused, every selected run refused for memory), 130
interrupted (Ctrl-C or SIGTERM: the running run, or every process of the running group, is
stopped and not recorded).
EOF
}

die() { # nothing was run: one line on stderr, exit 2
  echo "benchmark.sh: $*" >&2
  exit 2
}

is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

# OPTIONS
DRY_RUN=0
QUICK=0
GRID_NAME=default
OUT=
REPEATS=1
ONLY=
FILTER=
SHARD_K=1
SHARD_N=1
ITERATIONS=
EAGER_ITERATIONS=
EXP5_ITERATIONS=$DEFAULT_EXP5_ITERATIONS
EXP7_LARGE_ITERATIONS=
TIMEOUT=0
SLURM_TASKS=
SBATCH_OPTIONS=()

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
      --) # the rest is for sbatch (--slurm)
        SBATCH_OPTIONS=("${@:2}")
        break
        ;;
      --out | --grid | --repeats | --only | --filter | --shard | --iterations | --eager-iterations | --exp5-iterations | \
        --exp7-large-iterations | --timeout | --slurm)
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
    --grid)
      [[ $value == study || $value == default ]] || die "--grid needs study or default, not '$value'"
      GRID_NAME=$value
      ;;
    --repeats)
      is_count "$value" || die "--repeats needs a positive integer, not '$value'"
      REPEATS=$value
      ;;
    --only)
      [[ " ${EXPERIMENTS[*]} " == *" $value "* ]] || die "--only needs one of ${EXPERIMENTS[*]}, not '$value'"
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
    --iterations | --eager-iterations | --exp5-iterations | --exp7-large-iterations)
      is_count "$value" || die "$option needs a positive integer, not '$value'"
      case $option in
        --iterations) ITERATIONS=$value ;;
        --eager-iterations) EAGER_ITERATIONS=$value ;;
        --exp5-iterations) EXP5_ITERATIONS=$value ;;
        --exp7-large-iterations) EXP7_LARGE_ITERATIONS=$value ;;
      esac
      ;;
    --timeout)
      is_count "$value" || die "--timeout needs a positive number of seconds, not '$value'"
      TIMEOUT=$value
      ;;
    --slurm)
      is_count "$value" || die "--slurm needs a positive number of tasks, not '$value'"
      SLURM_TASKS=$value
      ;;
  esac
}

# THE WORKLOAD: the same per-iteration work for every run; eager runs do fewer iterations; exp5 varies the
# number of envs (EXP5_N) over runs of EXP5_ITERATIONS iterations; exp7's large runs do EXP7_LARGE_ITERATIONS.
NUM_ENVS= NUM_STEPS= UPDATE_EPOCHS= NUM_MINIBATCHES= WORKLOAD_JSON= WORKLOAD_JSON_BEFORE_EXP5= WORKLOAD_JSON_BEFORE_EXP7=
EXP7_SEEDS=$EXP7_SMALL_SEEDS
EXP5_N=()
EXP6_N_SCAN=()      # exp6's numbers of agents: of the scan variant, and of the process variants (a subset of those)
EXP6_N_PROCESSES=()

set_workload() {
  local workload=("${REFERENCE_WORKLOAD[@]}") exp5_n
  EXP5_N=("${EXP5_NUM_ENVS[@]}")
  EXP6_N_SCAN=("${EXP6_SCAN_AGENTS[@]}")
  EXP6_N_PROCESSES=("${EXP6_PROCESS_AGENTS[@]}")
  if ((QUICK)); then
    workload=("${QUICK_WORKLOAD[@]}")
    ITERATIONS=${ITERATIONS:-$QUICK_ITERATIONS}
    EXP5_N=("${QUICK_EXP5_NUM_ENVS[@]}")
    EXP6_N_SCAN=("${QUICK_EXP6_AGENTS[@]}")
    EXP6_N_PROCESSES=("${QUICK_EXP6_AGENTS[@]}")
    EXP7_SEEDS=$QUICK_EXP7_SMALL_SEEDS
  fi
  ITERATIONS=${ITERATIONS:-$DEFAULT_ITERATIONS}
  if [[ -z $EAGER_ITERATIONS ]]; then
    EAGER_ITERATIONS=$((ITERATIONS < DEFAULT_EAGER_ITERATIONS ? ITERATIONS : DEFAULT_EAGER_ITERATIONS))
  fi
  if [[ -z $EXP7_LARGE_ITERATIONS ]]; then
    EXP7_LARGE_ITERATIONS=$((ITERATIONS < DEFAULT_EXP7_LARGE_ITERATIONS ? ITERATIONS : DEFAULT_EXP7_LARGE_ITERATIONS))
  fi
  read -r NUM_ENVS NUM_STEPS UPDATE_EPOCHS NUM_MINIBATCHES <<<"${workload[*]}"
  printf -v WORKLOAD_JSON_BEFORE_EXP5 '{"iterations": %d, "eager_iterations": %d, "num_envs": %d, "num_steps": %d, "update_epochs": %d, "num_minibatches": %d}' \
    "$ITERATIONS" "$EAGER_ITERATIONS" "$NUM_ENVS" "$NUM_STEPS" "$UPDATE_EPOCHS" "$NUM_MINIBATCHES"
  printf -v exp5_n '%s, ' "${EXP5_N[@]}"
  WORKLOAD_JSON_BEFORE_EXP7="${WORKLOAD_JSON_BEFORE_EXP5%\}}, \"exp5_iterations\": $EXP5_ITERATIONS, \"exp5_num_envs\": [${exp5_n%, }]}"
  WORKLOAD_JSON="${WORKLOAD_JSON_BEFORE_EXP7%\}}, \"exp7_large_iterations\": $EXP7_LARGE_ITERATIONS}"
}

is_eager() { [[ $2 == none ]]; } # is_eager SCRIPT MODE: JAX none (op by op) and torch none (env op by op)

run_iterations() { # run_iterations VAR EXP SCRIPT MODE [SIZE]: VAR = the run's --num-iterations
  local -n iterations_=$1
  if [[ $2 == exp5 ]]; then
    iterations_=$EXP5_ITERATIONS
  elif [[ $2 == exp7 && ${5:-} == large ]]; then
    iterations_=$EXP7_LARGE_ITERATIONS
  elif is_eager "$3" "$4"; then
    iterations_=$EAGER_ITERATIONS
  else
    iterations_=$ITERATIONS
  fi
}

# THE GRID: one "exp script mode env size num_envs timing agents" entry per configuration, in run order;
# timing is sync (--sync-timing) or async; agents is 1 but in exp6, whose entries are groups of that many agents
GRID=()
GRID_ENVS=()        # the 12 envs, from sweep_info.py, the one list of them
declare -A OBS_SIZE # each env's observation size (flattened), from sweep_info.py too
PARALLEL=           # exp6: how many of a group's processes run at a time, the cores usable here (sweep_info.py)
CPU_COUNT=          # exp6: the machine's cores, for group.json

exp_timing() { # exp_timing EXP: the timing of the experiment's runs (exp5 and exp7: both, see their add_* functions)
  if [[ $1 == exp2 || $1 == exp3 ]]; then echo sync; else echo async; fi
}

add_configs() { # add_configs EXP ENVS SIZES VARIANTS (array names): every env x size x variant
  local exp=$1 env size variant timing
  local -n envs_=$2 sizes_=$3 variants_=$4
  timing=$(exp_timing "$exp")
  for env in "${envs_[@]}"; do
    for size in "${sizes_[@]}"; do
      for variant in "${variants_[@]}"; do
        GRID+=("$exp $variant $env $size $NUM_ENVS $timing 1")
      done
    done
  done
}

exp5_has() { # exp5_has SCRIPT MODE ENV N: whether exp5 runs this variant on ENV with N envs
  [[ $1 != *_gymnasium || " ${BACKEND_ENVS[*]} " == *" $3 "* ]] || return 1 # the Gymnasium scripts' envs
  [[ $1 != *_gymnasium || $2 == *-vector || $4 -le $EXP5_LOOP_MAX_NUM_ENVS ]] || return 1
  [[ $4 != "$EXP5_LARGEST_NUM_ENVS" ]] || [[ " ${EXP5_LARGEST_RUNS[*]/%/,} " == *" $1 $2 $3, "* ]]
}

add_exp5_configs() { # add_exp5_configs ENVS COUNTS VARIANTS TIMING (array names, then sync|async): env x N x variant
  local env n variant
  local -n envs_=$1 counts_=$2 variants_=$3
  for env in "${envs_[@]}"; do
    for n in "${counts_[@]}"; do
      for variant in "${variants_[@]}"; do
        if exp5_has $variant "$env" "$n"; then GRID+=("exp5 $variant $env small $n $4 1"); fi
      done
    done
  done
}

add_exp5_sync_configs() { # add_exp5_sync_configs VARIANTS (an array name): the --sync-timing runs on EXP5_SYNC_ENVS, at
  # the smallest N, then at the largest N each EXP5_SYNC_AT_LARGEST variant has
  local env end variant sync_n
  local -n variants_=$1
  for env in "${EXP5_SYNC_ENVS[@]}"; do
    for end in smallest largest; do
      for variant in "${variants_[@]}"; do
        if exp5_sync_n sync_n $variant "$env" $end; then GRID+=("exp5 $variant $env small $sync_n sync 1"); fi
      done
    done
  done
}

exp5_sync_n() { # exp5_sync_n VAR SCRIPT MODE ENV smallest|largest: VAR = the N of the variant's sync run at that end of
  # EXP5_N; false where it has none there
  local -n n_=$1
  local n
  n_=
  if [[ $5 == largest && " ${EXP5_SYNC_AT_LARGEST[*]/%/,} " != *" $2 $3, "* ]]; then return 1; fi
  for n in "${EXP5_N[@]}"; do
    if exp5_has $2 $3 $4 $n; then
      n_=$n
      if [[ $5 == smallest ]]; then break; fi
    fi
  done
  [[ -n $n_ ]]
}

add_exp7_configs() { # add_exp7_configs ENVS MEDIUM_ENVS VARIANTS (array names): each variant at small and large on ENVS,
  # at medium on MEDIUM_ENVS; then the --sync-timing runs on EXP7_SYNC_ENVS at each size (large: EXP7_SYNC_AT_LARGE's)
  local size env variant size_envs
  local -n envs_=$1 medium_envs_=$2 variants_=$3
  for size in "${SIZES[@]}"; do
    size_envs=("${envs_[@]}")
    if [[ $size == medium ]]; then size_envs=("${medium_envs_[@]}"); fi
    for env in "${size_envs[@]}"; do
      for variant in "${variants_[@]}"; do GRID+=("exp7 $variant $env $size $NUM_ENVS async 1"); done
    done
  done
  for size in "${SIZES[@]}"; do
    for env in "${EXP7_SYNC_ENVS[@]}"; do
      for variant in "${variants_[@]}"; do
        [[ $variant != *" scan" ]] || continue # one compiled call: no rollout/update split
        [[ $size != large || " ${EXP7_SYNC_AT_LARGE[*]/%/,} " == *" $variant, "* ]] || continue
        GRID+=("exp7 $variant $env $size $NUM_ENVS sync 1")
      done
    done
  done
}

exp6_has() { # exp6_has SCRIPT MODE N: whether exp6 trains N agents with this variant
  [[ "$1 $2" == "$EXP6_SCAN_VARIANT" || " ${EXP6_N_PROCESSES[*]} " == *" $3 "* ]]
}

add_exp6_configs() { # add_exp6_configs ENVS VARIANTS (array names): env x N x variant, one group each
  local env n variant
  local -n envs_=$1 variants_=$2
  for env in "${envs_[@]}"; do
    for n in "${EXP6_N_SCAN[@]}"; do
      for variant in "${variants_[@]}"; do
        if exp6_has $variant "$n"; then GRID+=("exp6 $variant $env small $NUM_ENVS async $n"); fi
      done
    done
  done
}

runs_processes() { [[ $1 == exp6 && $2 != scan ]]; } # runs_processes EXP MODE: a group of one process per agent

have_script() { [[ -f $ROOT/$1.py ]]; }

add_present() { # add_present ARRAY VARIANT...: append the variants whose script is in the repository
  local -n array_=$1
  local variant
  for variant in "${@:2}"; do
    if have_script "${variant%% *}"; then array_+=("$variant"); fi
  done
}

read_grid_envs() { # GRID_ENVS and OBS_SIZE from sweep_info.py
  local env size
  while read -r env size; do
    GRID_ENVS+=("$env")
    OBS_SIZE[$env]=$size
  done < <("$PYTHON" sweep_info.py --list-envs 2>/dev/null) || true
  ((${#GRID_ENVS[@]})) || die "PYTHON='$PYTHON' cannot run sweep_info.py; set PYTHON to a Python with requirements.txt installed"
}

read_cores() { # PARALLEL and CPU_COUNT from sweep_info.py
  PARALLEL= CPU_COUNT=
  read -r PARALLEL CPU_COUNT < <("$PYTHON" sweep_info.py --cores 2>/dev/null) || true
  if ! is_count "$PARALLEL" || ! is_count "$CPU_COUNT"; then die "PYTHON='$PYTHON' cannot run sweep_info.py --cores"; fi
}

build_grid() {
  local cartpole=(CartPole-v1) acrobot=(Acrobot-v1) small=(small) medium=(medium)
  local pairs=("${STUDY_PAIRS[@]}") compiled=("${STUDY_COMPILED[@]}") not_eager=() variant
  read_grid_envs
  local warmup_variants=("${STUDY_COMPILED[@]}") exp1_envs=("${GRID_ENVS[@]}") exp1_sizes=("${SIZES[@]}")
  local exp2_envs=("${GRID_ENVS[@]}") exp3_sizes=("${SIZES[@]}") exp4_envs=("${BACKEND_ENVS[@]}")
  local exp4_sizes=("${BACKEND_SIZES[@]}") exp4=0 exp5_variants=() exp5_envs=("${EXP5_ENVS[@]}")
  local exp5_counts=("${EXP5_N[@]}" "$EXP5_LARGEST_NUM_ENVS")
  local exp6_variants=() exp6_envs=("${EXP6_ENVS[@]}")
  local exp7_variants=() exp7_envs=("${EXP7_ENVS[@]}") exp7_medium_envs=("${GRID_ENVS[@]}")
  if [[ $GRID_NAME == default ]]; then
    add_present pairs "${NEW_PAIRS[@]}"
    add_present compiled "${NEW_COMPILED[@]}"
    if have_script ppo_torch_gymnasium && have_script ppo_linen_gymnasium; then exp4=1; fi
    add_present exp5_variants "${EXP5_VARIANTS[@]}"
    if have_script "${EXP6_SCAN_VARIANT%% *}"; then add_present exp6_variants "$EXP6_SCAN_VARIANT" "${EXP6_PROCESS_VARIANTS[@]}"; fi
    add_present exp7_variants "${EXP7_VARIANTS[@]}"
  fi
  for variant in "${pairs[@]}"; do
    is_eager $variant || not_eager+=("$variant")
  done
  if ((QUICK)); then
    warmup_variants=("ppo_linen jit")
    exp1_envs=(CartPole-v1 DiscountingChain-bsuite Breakout-MinAtar)
    exp1_sizes=(small)
    exp2_envs=(CartPole-v1)
    exp3_sizes=(small)
    exp4_envs=(CartPole-v1)
    exp4_sizes=(small)
    exp5_variants=()
    [[ $GRID_NAME != default ]] || add_present exp5_variants "${QUICK_EXP5_VARIANTS[@]}"
    exp5_envs=(CartPole-v1)
    exp5_counts=("${EXP5_N[@]}")
    exp6_envs=("${QUICK_EXP6_ENVS[@]}")
    exp7_variants=()
    [[ $GRID_NAME != default ]] || add_present exp7_variants "${QUICK_EXP7_VARIANTS[@]}"
    exp7_envs=("${QUICK_EXP7_ENVS[@]}")
    exp7_medium_envs=("${QUICK_EXP7_ENVS[@]}")
  fi
  add_configs warmup cartpole small warmup_variants
  add_configs exp1 exp1_envs exp1_sizes compiled
  add_configs exp2 exp2_envs small pairs
  add_configs exp3 acrobot exp3_sizes pairs
  if ((QUICK)); then # the medium model size without the slowest, eager, pairs
    add_configs exp3 acrobot medium not_eager
  fi
  if ((exp4)); then
    add_configs exp4 exp4_envs exp4_sizes BACKEND_VARIANTS
  fi
  add_exp5_configs exp5_envs exp5_counts exp5_variants async
  add_exp5_sync_configs exp5_variants
  if ((${#exp6_variants[@]})); then
    read_cores
    add_exp6_configs exp6_envs exp6_variants
  fi
  if ((${#exp7_variants[@]})); then add_exp7_configs exp7_envs exp7_medium_envs exp7_variants; fi
}

run_name() { # run_name EXP SCRIPT MODE ENV SIZE NUM_ENVS TIMING AGENTS SEED: sets RUN_NAME
  RUN_NAME="${1}__${2}__${3}__${4}__${5}__"
  if [[ $1 == exp5 ]]; then # exp5 varies the number of envs and has both timings
    RUN_NAME+="n${6}__"
    if [[ $7 == sync ]]; then RUN_NAME+="sync__"; fi
  fi
  if [[ $1 == exp6 ]]; then RUN_NAME+="a${8}__"; fi # exp6 varies the number of agents
  if [[ $1 == exp7 && $7 == sync ]]; then RUN_NAME+="sync__"; fi # exp7 has both timings
  RUN_NAME+=$9
}

config_of() { # config_of RUN_NAME VAR: VAR = the run's "exp script mode env size num_envs timing agents seed"
  local -n config_=$2
  local fields timing
  IFS=' ' read -r -a fields <<<"${1//__/ }"
  case ${fields[0]} in
    exp5)
      timing=async
      if ((${#fields[@]} == 8)); then timing=sync; fi
      config_="${fields[*]:0:5} ${fields[5]#n} $timing 1 ${fields[-1]}"
      ;;
    exp6) config_="${fields[*]:0:5} $NUM_ENVS async ${fields[5]#a} ${fields[6]}" ;;
    exp7)
      timing=async
      if ((${#fields[@]} == 7)); then timing=sync; fi
      config_="${fields[*]:0:5} $NUM_ENVS $timing 1 ${fields[-1]}"
      ;;
    *) config_="${fields[*]:0:5} $NUM_ENVS $(exp_timing "${fields[0]}") 1 ${fields[5]}" ;;
  esac
}

make_command() { # make_command EXP SCRIPT MODE ENV SIZE NUM_ENVS TIMING AGENTS SEED [AGENT]: sets RUN_NAME and CMD;
  # in an exp6 group of one process per agent, CMD is the process of agent AGENT (its seed; default the first)
  local exp=$1 script=$2 mode=$3 env=$4 size=$5 num_envs=$6 timing=$7 agents=$8 seed=$9 agent=${10:-$9} iterations
  local log_dir run
  run_name "${@:1:9}"
  run_iterations iterations "$exp" "$script" "$mode" "$size"
  CMD=("$PYTHON" "$script.py")
  case "$script $mode" in
    "ppo_linen none" | "ppo_nnx none" | "ppo_equinox none") CMD+=(--no-jit) ;;
    "ppo_torch none") CMD+=(--no-jit-env) ;;
    *-vector) CMD+=(--vectorization vector) ;; # the Gymnasium scripts on Gymnasium's NumPy-vectorised env
  esac # every other mode is its script's default
  CMD+=(--env-id "$env" --model-size "$size" --seed "$agent")
  if [[ $mode == scan ]]; then CMD+=(--num-seeds "$agents"); fi
  if [[ $timing == sync ]]; then
    CMD+=(--sync-timing)
  fi
  CMD+=(--num-iterations "$iterations" --num-envs "$num_envs" --num-steps "$NUM_STEPS"
    --update-epochs "$UPDATE_EPOCHS" --num-minibatches "$NUM_MINIBATCHES")
  log_dir=$OUT/runs/$exp run=$RUN_NAME
  if [[ $exp == exp6 ]]; then # the agents' run folders in the group's: agent__seed<s>
    log_dir+=/$RUN_NAME run=agent__seed$agent
    if [[ $mode == scan ]] && ((agents > 1)); then run=agent; fi # the scan script adds __seed<s> to each agent's
  fi
  CMD+=(--log-dir "$log_dir" --run-name "$run")
}

dry_run_line() { # dry_run_line VAR INDEX CONFIG: VAR = the --dry-run line of the run or group; a group of one process
  # per agent in one line, "<N> x <command with seed ranges>, <P> at a time"
  local -n line_=$1
  local quoted exp script mode env size num_envs timing agents seed seeds=
  read -r exp script mode env size num_envs timing agents seed <<<"$3"
  if runs_processes "$exp" "$mode"; then seeds=$seed; fi
  if runs_processes "$exp" "$mode" && ((agents > 1)); then seeds+="..$((seed + agents - 1))"; fi
  make_command $3 $seeds
  printf -v quoted '%q ' "${CMD[@]}"
  line_="$2 $exp ${quoted% }"
  if runs_processes "$exp" "$mode"; then
    line_="$2 $exp $agents x ${quoted% }, $((agents < PARALLEL ? agents : PARALLEL)) at a time"
  fi
}

# SELECTED: "exp script mode env size num_envs timing agents seed" of each run (exp6: group) this invocation is
# about; SELECTED_NAMES: their run names; SELECTED_LINES: their --dry-run lines.
SELECTED=()
SELECTED_NAMES=()
SELECTED_LINES=()

select_runs() {
  local repeat config exp seed line index=0 position=0 repeats=$((REPEATS > EXP7_SEEDS ? REPEATS : EXP7_SEEDS))
  for ((repeat = 0; repeat < repeats; repeat++)); do
    for config in "${GRID[@]}"; do
      exp=${config%% *}
      # exp7's small async runs have EXP7_SEEDS seeds at least, every other run --repeats
      [[ $repeat -lt $REPEATS || $config == "exp7 "*" small $NUM_ENVS async 1" ]] || continue
      index=$((index + 1))
      [[ -z $ONLY || $exp == "$ONLY" || $exp == warmup ]] || continue
      seed=$((repeat + 1))
      if [[ $exp == exp6 ]]; then seed=$((1 + repeat * EXP6_SEED_STRIDE)); fi
      run_name $config "$seed"
      [[ -z $FILTER || $RUN_NAME =~ $FILTER ]] || continue # the run's name, nothing else
      if [[ $exp != warmup ]]; then # every shard warms up with the selected warm-up runs
        position=$((position + 1))
        (((position - 1) % SHARD_N == SHARD_K - 1)) || continue
      fi
      dry_run_line line "$index" "$config $seed"
      SELECTED+=("$config $seed")
      SELECTED_NAMES+=("$RUN_NAME")
      SELECTED_LINES+=("$line")
    done
  done
}

# TIME AND THE ETA
format_duration() { # format_duration SECONDS
  local s=$1
  if ((s < 60)); then
    echo "$s s"
  elif ((s < 3600)); then
    echo "$(((s + 30) / 60)) min"
  elif ((s < 172800)); then
    printf '%d h %02d min\n' $((s / 3600)) $((s % 3600 / 60))
  else
    printf '%d days %d h\n' $((s / 86400)) $((s % 86400 / 3600))
  fi
}

now_ms() {
  if [[ -n ${EPOCHREALTIME:-} ]]; then # bash >= 5
    local t=${EPOCHREALTIME/[.,]/}
    echo $((10#$t / 1000))
  else
    echo $(($(date +%s%N) / 1000000))
  fi
}

prior_class() { # prior_class VAR SCRIPT MODE: VAR = the run's class in the prior's tables
  local -n class_=$1
  case "$2 $3" in
    *_gymnasium\ *-vector) class_=gymnasium-vector ;;
    *_gymnasium\ *) class_=gymnasium ;;
    "ppo_torch_compile "*) class_=compile ;;
    "ppo_torch none") class_=torch-eager ;;
    "ppo_torch "*) class_=torch ;;
    *" none") class_=jax-eager ;;
    *) class_=jax ;;
  esac
}

prior_ms() { # prior_ms VAR EXP SCRIPT MODE ENV SIZE NUM_ENVS TIMING AGENTS: VAR = the built-in rough cost of the
  # run, in ms; of an exp6 group: the scan variant's one process of an AGENTS times wider batch, or AGENTS runs,
  # PARALLEL at a time
  local -n prior_=$1
  local class iterations env_percent=100 batch_ms size_class envs=$7 waves=1
  if [[ $4 == scan ]]; then envs=$(($7 * $9)); fi
  if runs_processes "$2" "$4"; then waves=$((($9 + PARALLEL - 1) / PARALLEL)); fi
  prior_class class "$3" "$4"
  run_iterations iterations "$2" "$3" "$4" "$6"
  size_class="$class $6"
  if [[ $5 == *-MinAtar && $6 == small ]]; then env_percent=200; fi # larger: the hidden layers dominate
  # the part that grows with the batch: rollout and, for the other half, the update (with the epochs)
  batch_ms=$(((PRIOR_ITERATION_MS[$size_class] - PRIOR_LOOP_MS[$class]) * env_percent * envs * NUM_STEPS *
    (10 + UPDATE_EPOCHS) / (100 * 32 * 256 * 20)))
  prior_=$((waves * (PRIOR_FIXED_S[$class] * 1000 + iterations * (PRIOR_LOOP_MS[$class] * NUM_STEPS / 256 + batch_ms))))
  if [[ $2 == exp5 ]]; then prior_=$((prior_ * PRIOR_EXP5_PERCENT / 100)); fi
}

# Observed costs, by "script mode size num_envs agents": runs of the same group cost about the same.
declare -A OBSERVED_MS=() OBSERVED_COUNT=()
OBSERVED_TOTAL_MS=0 # all observed runs, and what the prior said they would cost
OBSERVED_PRIOR_MS=0

observe() { # observe MILLISECONDS EXP SCRIPT MODE ENV SIZE NUM_ENVS TIMING AGENTS ...
  local group="$3 $4 $6 $7 $9" prior
  OBSERVED_MS[$group]=$((${OBSERVED_MS[$group]:-0} + $1))
  OBSERVED_COUNT[$group]=$((${OBSERVED_COUNT[$group]:-0} + 1))
  prior_ms prior "${@:2:8}"
  OBSERVED_TOTAL_MS=$((OBSERVED_TOTAL_MS + $1))
  OBSERVED_PRIOR_MS=$((OBSERVED_PRIOR_MS + prior))
}

estimate_ms() { # estimate_ms VAR EXP SCRIPT MODE ENV SIZE NUM_ENVS TIMING AGENTS ...: VAR = the group's mean; else
  # the prior, scaled to this machine
  local -n estimate_=$1
  local group="$3 $4 $6 $7 $9" prior
  if ((${OBSERVED_COUNT[$group]:-0})); then
    estimate_=$((OBSERVED_MS[$group] / OBSERVED_COUNT[$group]))
    return
  fi
  prior_ms prior "${@:2:8}"
  if ((OBSERVED_PRIOR_MS)); then
    estimate_=$((prior * OBSERVED_TOTAL_MS / OBSERVED_PRIOR_MS))
  else
    estimate_=$prior
  fi
}

estimate_runs_ms() { # estimate_runs_ms CONFIG...: the estimated duration of these runs, in ms
  local config ms=0 estimate
  local -A count=()
  for config in "$@"; do # runs that differ only by seed cost the same
    count[${config% *}]=$((${count[${config% *}]:-0} + 1))
  done
  for config in "${!count[@]}"; do
    estimate_ms estimate $config
    ms=$((ms + count[$config] * estimate))
  done
  echo "$ms"
}

time_left() { # time_left CONFIG...: "about <duration>", the estimated duration of these runs
  echo "about $(format_duration $(($(estimate_runs_ms "$@") / 1000)))"
}

# PEAK MEMORY: a run whose estimated peak is above the memory available is refused up front
REFUSED=() # "<run_name>: <why>" of each selected run refused

memory_family() { # memory_family VAR SCRIPT: VAR = the script's row in the MEMORY_* tables
  local -n family_=$1
  case $2 in
    ppo_torch | ppo_torch_compile) family_=torch ;;
    ppo_torch_gymnasium | ppo_linen_gymnasium) family_=${2#ppo_} ;;
    *) family_=jax ;;
  esac
}

peak_memory_kb() { # peak_memory_kb VAR EXP SCRIPT MODE ENV SIZE NUM_ENVS TIMING AGENTS ...: VAR = the run's estimated
  # peak RSS; an exp6 group's: the scan variant's one process of an AGENTS times wider batch, or the processes that
  # run at once
  local -n peak_=$1
  local family samples=$(($7 * NUM_STEPS)) copies=1
  if [[ $4 == scan ]]; then samples=$((samples * $9)); fi
  if runs_processes "$2" "$4"; then copies=$(($9 < PARALLEL ? $9 : PARALLEL)); fi
  memory_family family "$3"
  peak_=$((copies * (MEMORY_BASE_MB[$family] * 1024 + samples * (MEMORY_SAMPLE_BYTES[$family] +
    MEMORY_OBS_BYTES[$family] * OBS_SIZE[$5]) / 1024)))
}

available_memory_kb() { # available_memory_kb VAR: VAR = BENCHMARK_MEM_AVAILABLE_KB, else MemAvailable; 1 if neither
  local -n available_=$1
  local key value unit
  if [[ -n ${BENCHMARK_MEM_AVAILABLE_KB:-} ]]; then
    is_count "$BENCHMARK_MEM_AVAILABLE_KB" ||
      die "BENCHMARK_MEM_AVAILABLE_KB needs a positive number of KiB, not '$BENCHMARK_MEM_AVAILABLE_KB'"
    available_=$BENCHMARK_MEM_AVAILABLE_KB
    return 0
  fi
  [[ -r /proc/meminfo ]] || return 1
  while read -r key value unit; do
    if [[ $key == MemAvailable: ]]; then
      available_=$value
      return 0
    fi
  done </proc/meminfo
  return 1
}

refuse_oversized() { # drop the selected runs that would not fit in memory: one line each on stderr, kept in REFUSED
  local i available peak
  available_memory_kb available || return 0 # not Linux: no check
  for i in "${!SELECTED[@]}"; do
    peak_memory_kb peak ${SELECTED[i]}
    ((peak > available)) || continue
    REFUSED+=("${SELECTED_NAMES[i]}: estimated peak memory $((peak / 1024)) MiB, $((available / 1024)) MiB available")
    echo "benchmark.sh: refusing ${REFUSED[-1]}" >&2
    unset 'SELECTED[i]' 'SELECTED_NAMES[i]' 'SELECTED_LINES[i]'
  done
  SELECTED=("${SELECTED[@]}")
  SELECTED_NAMES=("${SELECTED_NAMES[@]}")
  SELECTED_LINES=("${SELECTED_LINES[@]}")
}

# THE SWEEP
CHILDREN=()  # pids of the running child processes (a run's `timeout`, an exp6 group's, or sweep_info.py)
declare -A CHILD_LOGS=() # an exp6 group's running processes: pid -> log, relative to OUT
CURRENT_RUN= # name of the running run
FAILED=()

run_child() { # run_child COMMAND...: run it in the background and wait for it, so that a
  # signal reaches on_signal at once; returns its exit status
  local status=0
  "$@" &
  CHILDREN=("$!")
  wait "$!" || status=$?
  CHILDREN=()
  return "$status"
}

stop_children() { # SIGTERM to every running child; timeout passes it on to its run's process group
  local pid
  for pid in "${CHILDREN[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
}

on_signal() { # Ctrl-C or SIGTERM: stop the running run (not recorded), keep the finished ones
  local pid
  trap - INT TERM
  stop_children
  for pid in "${CHILDREN[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  # to fd 3, the sweep's stderr: this runs inside run_child, whose output may go to a run's log
  echo >&3
  echo "benchmark.sh: interrupted${CURRENT_RUN:+ during $CURRENT_RUN (not recorded)}; rerun the same command to resume" >&3
  exit 130
}

check_prerequisites() { # what a real sweep needs besides bash; one line and exit 2 for the first missing
  local scripts=() config exp script mode env rest error
  local -A seen=()
  timeout --version 2>/dev/null | grep -q GNU ||
    die "needs GNU timeout (coreutils) on the PATH to stop runs; install coreutils"
  command -v flock >/dev/null || die "needs flock (util-linux) on the PATH to lock OUT; install util-linux"
  for config in "${SELECTED[@]}"; do
    read -r exp script mode env rest <<<"$config"
    [[ -n ${seen[$script]:-} ]] || scripts+=("$script.py")
    seen[$script]=1
  done
  if ! error=$("$PYTHON" sweep_info.py --check-imports "${scripts[@]}" 2>&1 >/dev/null); then
    error=$(grep -m 1 '^error: ' <<<"$error" || tail -n 1 <<<"$error") # not the warnings of the imports
    die "PYTHON: ${error#error: }; install requirements.txt into it or set PYTHON"
  fi
}

lock_out() { # one sweep at a time into OUT: the lock lives as long as this shell (its runs get no copy of fd 9)
  local holder
  mkdir -p "$OUT"
  exec 9>>"$OUT/.lock"
  if ! flock -n 9; then
    holder=$(cat "$OUT/.lock" 2>/dev/null || true)
    die "another sweep${holder:+ (pid $holder)} is writing into $OUT; wait for it to end or use another --out"
  fi
  echo "$$" >"$OUT/.lock"
}

check_workload() { # a folder holds one workload: written by the first invocation, checked by the rest
  local recorded
  if [[ -f $OUT/workload.json ]]; then
    recorded=$(<"$OUT/workload.json")
    # a folder from before exp5 (or exp7), so without exp5 (exp7) runs: it gains their fields
    if [[ $recorded == "$WORKLOAD_JSON_BEFORE_EXP5" || $recorded == "$WORKLOAD_JSON_BEFORE_EXP7" ]]; then
      echo "$WORKLOAD_JSON" >"$OUT/workload.json"
      return
    fi
    [[ $recorded == "$WORKLOAD_JSON" ]] ||
      die "$OUT holds runs of another workload, $recorded, not $WORKLOAD_JSON; use another --out or that folder's options"
  elif [[ -s $OUT/finished.txt ]]; then
    die "$OUT holds finished runs but no workload.json, so their workload is unknown; use another --out"
  else
    echo "$WORKLOAD_JSON" >"$OUT/workload.json"
  fi
}

record_machine() { # write OUT/system.json and OUT/env_timing.json (every env of the grid)
  local config exp script mode env size envs=()
  local -A seen=()
  for config in "${GRID[@]}"; do
    read -r exp script mode env size <<<"$config"
    [[ -n ${seen[$env]:-} ]] || envs+=("$env")
    seen[$env]=1
  done
  echo "recording the machine and the env step times in $OUT"
  run_child "$PYTHON" sweep_info.py "$OUT" --envs "${envs[@]}" --command "$COMMAND_LINE" ||
    { echo "benchmark.sh: sweep_info.py failed, no run started" >&2; exit 1; }
}

read_durations() { # observe the finished runs of earlier invocations (same workload: workload.json)
  local name ms config
  local -n finished_=$1
  [[ -f $OUT/durations.txt ]] || return 0
  while read -r name ms; do
    [[ -n ${finished_[$name]:-} && $ms =~ ^[0-9]+$ ]] || continue
    config_of "$name" config
    observe "$ms" $config
  done <"$OUT/durations.txt"
}

record_load() { # append the 1-minute load average as the run ends: the report shows what ran beside the sweep
  local load1 rest
  [[ -r /proc/loadavg ]] || return 0
  read -r load1 rest </proc/loadavg
  echo "$RUN_NAME $load1" >>"$OUT/load.txt"
}

# An exp6 group of one process per agent: its processes, PARALLEL at a time, each into its own log
wait_for_a_child() { # wait_for_a_child STATUS_VAR LOG_VAR: wait until a child of CHILDREN ends and drop it; the first
  # to fail sets STATUS_VAR (its exit status) and LOG_VAR (its log) and stops the others
  local -n wait_status_=$1 wait_log_=$2
  local i pid ended_status
  while :; do
    for i in "${!CHILDREN[@]}"; do
      pid=${CHILDREN[i]}
      ! kill -0 "$pid" 2>/dev/null || continue # bash reaps its children as they end, and keeps their status
      ended_status=0
      wait "$pid" || ended_status=$?
      unset 'CHILDREN[i]'
      CHILDREN=("${CHILDREN[@]}")
      if ((ended_status != 0 && wait_status_ == 0)); then
        wait_status_=$ended_status wait_log_=${CHILD_LOGS[$pid]}
        stop_children
      fi
      return 0
    done
    read -r -t 0.05 -u 8 || true # a pause of 50 ms that a signal interrupts: nothing is ever written to fd 8
  done
}

process_threads() { # process_threads VAR AGENTS: VAR = the OMP_NUM_THREADS (torch's intra-op threads) of each of a
  # group's processes when several run at a time: the usable cores shared among them; empty for a process that runs
  # alone, which keeps the environment of every other run. Two ppo_torch.py side by side on a 2-core AMD EPYC, each
  # with torch's default of a thread per core, had not finished after 8.5 minutes what they finish in under a minute
  # with one thread each (docs/method.md has the measurement); XLA's CPU programs of the small model run on one
  # thread either way.
  local -n threads_=$1
  threads_=
  if (($2 > 1 && PARALLEL > 1)); then threads_=$((PARALLEL / ($2 < PARALLEL ? $2 : PARALLEL))); fi
}

run_processes() { # run_processes STATUS_VAR LOG_VAR CONFIG: the exp6 group's processes, one per agent, PARALLEL at
  # a time, each into logs/exp6/<group>/agent__seed<s>.log; a failure stops the others and starts no more.
  # STATUS_VAR: the exit status of the first to fail, else 0; LOG_VAR: its log
  local -n status_=$1 log_=$2
  local exp script mode env size num_envs timing agents seed agent process_log threads
  read -r exp script mode env size num_envs timing agents seed <<<"$3"
  process_threads threads "$agents"
  status_=0
  agent=$seed
  CHILD_LOGS=()
  exec 8<> <(:) # wait_for_a_child's pause: a pipe this shell also holds open for writing, so no read sees its end
  while ((agent < seed + agents || ${#CHILDREN[@]})); do
    if ((agent < seed + agents && ${#CHILDREN[@]} < PARALLEL)); then
      make_command $3 "$agent"
      process_log="logs/exp6/$RUN_NAME/agent__seed$agent.log"
      # timeout runs each process in its own process group and passes signals on to all of it
      env ${threads:+OMP_NUM_THREADS=$threads} timeout --kill-after="$KILL_GRACE_SECONDS" "$TIMEOUT" "${CMD[@]}" \
        >"$OUT/$process_log" 2>&1 8>&- 9>&- &
      CHILDREN+=("$!")
      CHILD_LOGS[$!]=$process_log
      agent=$((agent + 1))
      continue
    fi
    wait_for_a_child status_ log_
    if ((status_ != 0)); then agent=$((seed + agents)); fi # none starts after a failure
  done
  exec 8<&-
}

write_group_json() { # write_group_json MILLISECONDS CONFIG: the exp6 group's group.json, plot.py's record of it
  local exp script mode env size num_envs timing agents seed processes=1 parallel=1 threads=
  read -r exp script mode env size num_envs timing agents seed <<<"$2"
  if runs_processes "$exp" "$mode"; then processes=$agents parallel=$PARALLEL; process_threads threads "$agents"; fi
  printf '{"script": "%s", "mode": "%s", "env_id": "%s", "agents": %d, "processes": %d, "parallel": %d, "threads": %s, "wall_seconds": %d.%03d, "cores": %d}\n' \
    "$script" "$mode" "$env" "$agents" "$processes" "$parallel" "${threads:-null}" $(($1 / 1000)) $(($1 % 1000)) "$CPU_COUNT" \
    >"$OUT/runs/exp6/$RUN_NAME/group.json"
}

describe() { # describe VAR CONFIG: VAR = the progress line's words for the run or group, up to its iterations
  local -n what_=$1
  local exp script mode env size num_envs timing agents seed iterations processes
  read -r exp script mode env size num_envs timing agents seed <<<"$2"
  run_iterations iterations "$exp" "$script" "$mode" "$size"
  what_="$exp $script $mode $env $size"
  case $exp in
    exp5)
      what_+=" $num_envs envs"
      if [[ $timing == sync ]]; then what_+=" sync"; fi
      ;;
    exp7) if [[ $timing == sync ]]; then what_+=" sync"; fi ;;
    exp6)
      processes="1 process"
      if runs_processes "$exp" "$mode" && ((agents > 1)); then
        processes="$agents processes, $((agents < PARALLEL ? agents : PARALLEL)) at a time"
      fi
      if ((agents > 1)); then what_+=" $agents agents" seed+="..$((seed + agents - 1))"; else what_+=" 1 agent"; fi
      what_+=" ($processes)"
      ;;
  esac
  what_+=" seed $seed, $iterations iterations"
}

run_finished() { # run_finished UNFINISHED_VAR RUN_DIR CONFIG: whether the run (exp6: every agent of the group) wrote
  # its time/total; UNFINISHED_VAR: the first agent run folder that did not
  local -n unfinished_=$1
  local exp script mode env size num_envs timing agents seed agent dirs=("$2")
  read -r exp script mode env size num_envs timing agents seed <<<"$3"
  if [[ $exp == exp6 ]]; then
    dirs=()
    for ((agent = seed; agent < seed + agents; agent++)); do dirs+=("$2/agent__seed$agent"); done
  fi
  unfinished_=$("$PYTHON" sweep_info.py --finished "${dirs[@]}" | head -n 1) && return 0
  unfinished_=${unfinished_:-$2}
  return 1
}

run_one() { # run_one NUMBER TOTAL CONFIG LEFT...: run one configuration (exp6: one group) and record it finished or
  # failed
  local number=$1 total=$2 exp script mode env size num_envs timing agents seed what
  read -r exp script mode env size num_envs timing agents seed <<<"$3"
  make_command $3
  local run_dir="$OUT/runs/$exp/$RUN_NAME" log="logs/$exp/$RUN_NAME.log"
  local start status=0 elapsed_ms elapsed reason unfinished
  CURRENT_RUN=$RUN_NAME
  describe what "$3"

  printf '[%d/%d] %s · %s ... ' "$number" "$total" "$what" "$(time_left "${@:3}") left"
  rm -rf "$run_dir" # what an interrupted or failed earlier attempt left
  mkdir -p "$OUT/logs/$exp"
  if runs_processes "$exp" "$mode"; then
    rm -rf "$OUT/logs/exp6/$RUN_NAME"
    mkdir -p "$run_dir" "$OUT/logs/exp6/$RUN_NAME"
  fi
  start=$(now_ms)
  if runs_processes "$exp" "$mode"; then
    run_processes status log "$3"
  else # timeout runs the script in its own process group and passes signals on to all of it
    run_child timeout --kill-after="$KILL_GRACE_SECONDS" "$TIMEOUT" "${CMD[@]}" >"$OUT/$log" 2>&1 9>&- || status=$?
  fi
  CURRENT_RUN=
  elapsed_ms=$(($(now_ms) - start))
  record_load
  elapsed=$((elapsed_ms / 1000))

  if ((status == 0)) && run_finished unfinished "$run_dir" "$3"; then
    if [[ $exp == exp6 ]]; then write_group_json "$elapsed_ms" "$3"; fi
    echo "$RUN_NAME" >>"$OUT/finished.txt"
    echo "$RUN_NAME $elapsed_ms" >>"$OUT/durations.txt"
    observe "$elapsed_ms" $3
    echo "ok, $(format_duration "$elapsed")"
    return
  fi
  reason=$status
  if ((TIMEOUT > 0 && elapsed >= TIMEOUT && (status == 124 || status == 137))); then
    reason=timeout
  elif ((status == 0)); then
    reason=incomplete
    if runs_processes "$exp" "$mode"; then log="logs/exp6/$RUN_NAME/${unfinished##*/}.log"; fi
    echo "benchmark.sh: exit status 0 but no time/total scalar in $unfinished" >>"$OUT/$log"
  fi
  echo "$RUN_NAME $reason $log" >>"$OUT/failed.txt"
  FAILED+=("$RUN_NAME $reason $OUT/$log")
  echo "FAILED ($reason) after $(format_duration "$elapsed"), log: $OUT/$log"
}

run_sweep() {
  local todo=() name number=0 start=$SECONDS started i
  local -A finished=()
  check_prerequisites
  lock_out
  check_workload
  touch "$OUT/finished.txt"
  while read -r name; do
    [[ -z $name ]] || finished[$name]=1
  done <"$OUT/finished.txt"
  for i in "${!SELECTED[@]}"; do
    [[ -n ${finished[${SELECTED_NAMES[i]}]:-} ]] || todo+=("${SELECTED[i]}")
  done
  echo "${#SELECTED[@]} runs selected, $((${#SELECTED[@]} - ${#todo[@]})) already finished, ${#todo[@]} to run;" \
    "${REFUSED[0]:+${#REFUSED[@]} refused (memory, listed at the end); }output in $OUT"
  if ((${#todo[@]} == 0)); then
    list_refused || return 1
    return 0
  fi
  read_durations finished
  if ((OBSERVED_PRIOR_MS)); then
    echo "estimated time for the ${#todo[@]} runs: $(time_left "${todo[@]}"), from the runs already timed in $OUT"
  else
    echo "estimated time for the ${#todo[@]} runs: $(time_left "${todo[@]}") (rough: built-in figures for a 2-core CPU; refined as runs finish)"
  fi

  # The same environment for every run; nothing here favours one framework.
  export XLA_PYTHON_CLIENT_PREALLOCATE=false # JAX shares the GPU with torch; peak memory is meaningful
  export PYTHONUNBUFFERED=1                  # logs stay complete up to an interruption
  exec 3>&2 # the sweep's own stderr, for on_signal
  trap on_signal INT TERM
  record_machine
  started=$(date -Iseconds)
  for ((number = 1; number <= ${#todo[@]}; number++)); do
    run_one "$number" "${#todo[@]}" "${todo[@]:number-1}"
  done
  echo "$started $(date -Iseconds) $((SECONDS - start)) ${#todo[@]} $COMMAND_LINE" >>"$OUT/sweeps.txt"

  echo "done in $(format_duration $((SECONDS - start))): $((${#todo[@]} - ${#FAILED[@]})) runs finished," \
    "${#FAILED[@]} failed${REFUSED[0]:+, ${#REFUSED[@]} refused}"
  if ((${#FAILED[@]})); then
    echo "failed runs (also listed in $OUT/failed.txt):"
    printf '  %s\n' "${FAILED[@]}"
  fi
  list_refused || return 1
  ((${#FAILED[@]} == 0)) || return 1
}

list_refused() { # the summary's list of the runs refused up front; status 1 if any
  if ((${#REFUSED[@]} == 0)); then return 0; fi
  echo "refused runs, not run (the estimated peak memory exceeds what is available):"
  printf '  %s\n' "${REFUSED[@]}"
  return 1
}

# SLURM: the selection as a job array, task K running shard K/N (slurm/sweep.sbatch)
check_slurm_options() { # --slurm needs --out and makes the shards itself; sbatch words must fit a #SBATCH line
  local word
  if [[ -z $SLURM_TASKS ]]; then
    ((${#SBATCH_OPTIONS[@]} == 0)) || die "the words after -- go to sbatch and need --slurm N"
    return 0
  fi
  [[ -n $OUT ]] || die "--slurm needs --out DIR: the sweep folder, fixed so that resubmitting resumes"
  ((SHARD_N == 1)) || die "--slurm makes the shards itself (task K runs --shard K/N); drop --shard"
  for word in "${SBATCH_OPTIONS[@]}"; do
    [[ $word != *[\"\\$'\n']* ]] ||
      die "sbatch option '$word': no double quote, backslash or newline (it goes on a #SBATCH line)"
    [[ $word != -a* && $word != --array* ]] || die "sbatch option '$word': the array is set by --slurm N"
  done
}

carried_options() { # the selection and workload options of every task, in a fixed order: sets CARRIED
  CARRIED=(--grid "$GRID_NAME" --repeats "$REPEATS")
  if ((QUICK)); then CARRIED+=(--quick); fi
  if [[ -n $ONLY ]]; then CARRIED+=(--only "$ONLY"); fi
  if [[ -n $FILTER ]]; then CARRIED+=(--filter "$FILTER"); fi
  CARRIED+=(--iterations "$ITERATIONS" --eager-iterations "$EAGER_ITERATIONS" --exp5-iterations "$EXP5_ITERATIONS"
    --exp7-large-iterations "$EXP7_LARGE_ITERATIONS")
  if ((TIMEOUT > 0)); then CARRIED+=(--timeout "$TIMEOUT"); fi
}

slurm_script() { # the array script: slurm/sweep.sbatch with its fields filled in
  local script python sbatch_line root sweep options
  [[ -f $ROOT/slurm/sweep.sbatch ]] || die "--slurm needs the template slurm/sweep.sbatch of the repository"
  script=$(<"$ROOT/slurm/sweep.sbatch")
  # the interpreter itself (not a shim or a name on this PATH), so that every task and resubmission uses it
  python=$("$PYTHON" -c 'import sys; print(sys.executable)') || die "PYTHON='$PYTHON' cannot run"
  printf -v sbatch_line '"%s" ' "--array=1-$SLURM_TASKS" "--output=$OUT/slurm/%A_%a.out" "${SBATCH_OPTIONS[@]}"
  printf -v root %q "$ROOT"
  printf -v sweep %q "$OUT"
  printf -v python %q "$python"
  carried_options
  printf -v options '%q ' "${CARRIED[@]}"
  script=${script//@SBATCH_OPTIONS@/"${sbatch_line% }"}
  script=${script//@ROOT@/"$root"}
  script=${script//@PYTHON@/"$python"}
  script=${script//@TASKS@/"$SLURM_TASKS"}
  script=${script//@SWEEP@/"$sweep"}
  script=${script//@OPTIONS@/"${options% }"}
  echo "${script//@COMMAND@/"$COMMAND_LINE"}" # last: the user's words replace nothing
}

slurm_tasks() { # "N tasks of R runs each (...); the longest about T": each task's runs, as its shard selects them
  local k runs fewest=0 most=0 longest=0 ms tasks="$SLURM_TASKS tasks" each=" each"
  for ((k = 1; k <= SLURM_TASKS; k++)); do
    SHARD_K=$k SHARD_N=$SLURM_TASKS SELECTED=() SELECTED_LINES=()
    select_runs
    runs=${#SELECTED[@]}
    ((k > 1 && runs >= fewest)) || fewest=$runs
    ((runs <= most)) || most=$runs
    ms=$(estimate_runs_ms "${SELECTED[@]}")
    ((ms <= longest)) || longest=$ms
  done
  if ((SLURM_TASKS == 1)); then tasks="1 task" each=; fi
  ((fewest == most)) || runs="$fewest to $most"
  echo "$tasks of $runs runs$each (the warm-up runs in every task); the longest about" \
    "$(format_duration $((longest / 1000))) on a 2-core CPU (rough: built-in figures, see docs/method.md)"
}

slurm_submit() { # write OUT/sweep.sbatch and submit it; with --dry-run print it and submit nothing
  local script tasks config others=0 sweep_script=$OUT/sweep.sbatch previous= errors=$OUT/slurm/sbatch.err
  local job error quoted
  for config in "${SELECTED[@]}"; do
    [[ $config == warmup\ * ]] || others=$((others + 1))
  done
  ((others >= SLURM_TASKS)) ||
    die "--slurm $SLURM_TASKS: the selection holds $others runs besides the warm-up runs, fewer than the tasks"
  script=$(slurm_script)
  tasks=$(slurm_tasks)
  if ((DRY_RUN)); then
    echo "$script"
    echo "$tasks" >&2
    return 0
  fi
  command -v sbatch >/dev/null ||
    die "--slurm needs sbatch (SLURM) on the PATH; with --dry-run it prints the job array instead"
  if [[ -f $sweep_script ]] && ! grep -qxF "$(grep '^exec ' <<<"$script")" "$sweep_script"; then
    die "$OUT was submitted with another task count or selection (see $sweep_script):" \
      "resubmit that file with sbatch, or use another --out"
  fi
  mkdir -p "$OUT/slurm" # the tasks' output goes there: it must exist when they start
  if [[ -f $sweep_script ]]; then previous=$(<"$sweep_script"); fi
  echo "$script" >"$sweep_script"
  if ! job=$(sbatch --parsable "$sweep_script" 2>"$errors"); then
    error=$(tail -n 1 "$errors")
    rm -f "$errors"
    if [[ -n $previous ]]; then echo "$previous" >"$sweep_script"; else rm -f "$sweep_script"; fi
    die "sbatch refused the job array: ${error:-no message}"
  fi
  rm -f "$errors"
  job=${job%%;*} # --parsable prints "<job id>[;<cluster>]"
  printf -v quoted %q "$OUT"
  echo "submitted SLURM job $job: $tasks"
  echo "task K writes into $quoted/shard-K, its output into $quoted/slurm/${job}_K.out"
  echo "watch it:  squeue -j $job; tail -f $quoted/slurm/${job}_*.out"
  echo "resume:    sbatch $quoted/sweep.sbatch (once the job has ended; finished runs are skipped)"
  echo "report:    python plot.py $quoted/shard-*"
}

main() {
  printf -v COMMAND_LINE '%q ' "$0" "$@"
  COMMAND_LINE=${COMMAND_LINE% }
  parse_options "$@"
  check_slurm_options
  set_workload
  OUT=${OUT:-$ROOT/results/$(date +%F)-$HOSTNAME}
  [[ $OUT == /* ]] || OUT=$PWD/$OUT
  cd "$ROOT"
  build_grid
  select_runs
  ((${#SELECTED[@]})) || die "no run of the grid matches the selection (--only, --filter, --shard)"
  [[ -z $ONLY || " ${SELECTED[*]}" == *" $ONLY "* ]] ||
    die "--only $ONLY: no run of $ONLY in this grid and selection (see --help for what each grid holds)"
  ((SHARD_N == 1)) || [[ " ${SELECTED[*]}" == *" exp"[0-9]* ]] ||
    die "--shard $SHARD_K/$SHARD_N: this shard holds no run besides the warm-up runs"
  if [[ -n $SLURM_TASKS ]]; then # each task checks the memory of its node
    slurm_submit
    return 0
  fi
  refuse_oversized
  ((${#SELECTED[@]})) || die "no selected run fits in the memory available (see the lines above)"
  if ((DRY_RUN)); then
    printf '%s\n' "${SELECTED_LINES[@]}"
    echo "${#SELECTED[@]} runs${REFUSED[0]:+ (${#REFUSED[@]} refused: memory)}; estimated time on a 2-core CPU:" \
      "$(time_left "${SELECTED[@]}") (rough: built-in figures, see docs/method.md)" >&2
    return 0
  fi
  run_sweep
}

# On one line: bash must not read this file again after a sweep of hours, during which it may have changed.
main "$@"; exit
