"""The experiments as data: which variants run on which envs, model sizes and numbers of envs or agents, one function
per experiment (docs/method.md says why each is built so). A variant is (script, mode); every mode but the script's
default has a flag (MODE_FLAGS). To add an experiment: a function here, its name in EXPERIMENTS, and a section in the
report (docs/extending.md)."""
import itertools
from dataclasses import dataclass

# The 12 envs of the benchmark grid, in grid order, each with its observation size flattened (MinAtar 10 x 10 x
# channels): the one list the sweep and the report use; the size sets the memory estimate.
OBS_SIZES = {
    "CartPole-v1": 4,
    "Acrobot-v1": 6,
    "MountainCar-v0": 2,
    "DiscountingChain-bsuite": 2,
    "MemoryChain-bsuite": 3,
    "UmbrellaChain-bsuite": 3,
    "BernoulliBandit-misc": 4,
    "GaussianBandit-misc": 4,
    "Asterix-MinAtar": 400,
    "Breakout-MinAtar": 400,
    "Freeway-MinAtar": 700,
    "SpaceInvaders-MinAtar": 600,
}
GRID_ENVS = tuple(OBS_SIZES)
# envs that a module of the project ships (module:EnvId), beyond the grid's: exp9's Doors, its 15 x 15 grid
MODULE_OBS_SIZES = {"doors:Doors-v0": 225}


def obs_size(env: str) -> int:
    """An env's flattened observation size: the grid's, or a module env's."""
    return OBS_SIZES.get(env) or MODULE_OBS_SIZES[env]
SIZES = ("small", "medium", "large")
EXPERIMENTS = ("exp1", "exp2", "exp3", "exp4", "exp5", "exp6", "exp7", "exp8", "exp9")  # what --only accepts
GRIDS = ("study", "default", "gpu")

# The flag of every mode that is not its script's default.
MODE_FLAGS = {
    ("ppo_linen", "none"): ("--no-jit",), ("ppo_nnx", "none"): ("--no-jit",), ("ppo_equinox", "none"): ("--no-jit",),
    ("ppo_torch", "none"): ("--no-jit-env",),
    # the Gymnasium scripts on Gymnasium's NumPy-vectorised env
    ("ppo_torch_gymnasium", "eager-vector"): ("--vectorization", "vector"),
    ("ppo_linen_gymnasium", "jit-vector"): ("--vectorization", "vector"),
    ("ppo_torch_native", "compile"): ("--compile",),
    ("ppo_torch_gymnasium", "eager-async"): ("--vectorization", "async"),
    ("ppo_linen_gymnasium", "jit-async"): ("--vectorization", "async"),
    # CUDA graphs (GPU only)
    ("ppo_torch_compile", "compile+cudagraphs"): ("--cudagraphs",),
    ("dqn_torch_compile", "compile+cudagraphs"): ("--cudagraphs",),
}
# the scripts that run CartPole-v1, Acrobot-v1 and MountainCar-v0 only (BACKEND_ENVS): on Gymnasium, on envs in torch
CLASSIC_ONLY = ("ppo_torch_gymnasium", "ppo_linen_gymnasium", "ppo_torch_native")
EAGER_MODES = ("none",)  # JAX none (op by op) and torch none (the env op by op): the grid gives them fewer iterations

# The published study's variants, and those added since (the default grid).
STUDY_PAIRS = (("ppo_linen", "none"), ("ppo_linen", "jit"), ("ppo_nnx", "none"), ("ppo_nnx", "jit"),
               ("ppo_nnx_cached", "cached"), ("ppo_torch", "none"), ("ppo_torch", "env-jit"),
               ("ppo_torch_compile", "compile"))
STUDY_COMPILED = (("ppo_linen", "jit"), ("ppo_nnx_cached", "cached"), ("ppo_torch_compile", "compile"))
NEW_PAIRS = (("ppo_nnx_tree", "tree"), ("ppo_equinox", "none"), ("ppo_equinox", "jit"))
# exp1's fully compiled variants added since; the scan variant (the whole training one compiled call) in exp1 alone:
# it cannot time rollout and update apart (exp2), and its one agent per run is exp1's workload
NEW_COMPILED = (("ppo_nnx_tree", "tree"), ("ppo_equinox", "jit"), ("ppo_linen_scan", "scan"))

# exp4, the env backend: the gymnax and Gymnasium scripts of torch and Linen on the envs both backends have, and torch
# on envs written in torch (eager, as torch on the other two).
BACKEND_VARIANTS = (("ppo_torch", "env-jit"), ("ppo_linen", "jit"), ("ppo_torch_gymnasium", "eager"),
                    ("ppo_linen_gymnasium", "jit"), ("ppo_torch_native", "eager"))
BACKEND_ENVS = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0")
BACKEND_SIZES = ("small", "medium")

# exp5, the number of envs N: each run of the same per-env workload (num_steps, epochs and minibatches as everywhere,
# so the minibatch grows with the batch), small model. Every fully compiled variant, the Gymnasium scripts (on
# Gymnasium's NumPy-vectorised CartPole, "-vector", too) and torch on envs in torch, eager and compiled; CartPole-v1
# for all, Breakout-MinAtar for the gymnax ones.
EXP5_VARIANTS = (("ppo_linen", "jit"), ("ppo_nnx_cached", "cached"), ("ppo_nnx_tree", "tree"), ("ppo_equinox", "jit"),
                 ("ppo_torch", "env-jit"), ("ppo_torch_compile", "compile"), ("ppo_torch_gymnasium", "eager"),
                 ("ppo_torch_gymnasium", "eager-vector"), ("ppo_linen_gymnasium", "jit"),
                 ("ppo_linen_gymnasium", "jit-vector"), ("ppo_torch_native", "eager"), ("ppo_torch_native", "compile"))
EXP5_ENVS = ("CartPole-v1", "Breakout-MinAtar")
EXP5_NUM_ENVS = (8, 32, 128, 512, 2048)  # and --sync-timing runs at the first and the last, on EXP5_SYNC_ENVS
EXP5_SYNC_ENVS = ("CartPole-v1",)  # the env every variant has
# Gymnasium's Python loop over env copies (the modes without -vector) up to this N: at 2,048 envs the curve measures
# the NumPy-vectorised env (the -vector modes), not a Python loop over 2,048 envs (whose 12-iteration run took 3.5 min)
EXP5_LOOP_MAX_NUM_ENVS = 512
# --sync-timing at the largest N too (all at the smallest) only for these, the reference of each framework: at 2,048
# envs the update was 96-97 % of the iteration of all four gymnax JAX variants (rollout 0.34-0.44 s of 10.6-11.7 s),
# torch.compile's rollout and update were within 10 % of torch's, and the Gymnasium scripts on the NumPy env spent
# 0.65-0.76 s in the rollout (results/cpu-2core-exp5): these two stand for the others, whose runs there (15 min) would
# take exp5 past 90 minutes
EXP5_SYNC_AT_LARGEST = (("ppo_linen", "jit"), ("ppo_torch", "env-jit"))
# N = 8192 also, only for these (script, mode, env): the runs that stay under about 3 minutes on a 2-core CPU. The
# cost model puts every variant's 8192-env run at 5 minutes or more (its batch, 2 M samples, is 256 x the reference
# batch), so none is listed until a measurement says otherwise.
EXP5_LARGEST_NUM_ENVS = 8192
EXP5_LARGEST_RUNS = ()
# 12 iterations: windows 0, 1-7 and 8-11, a steady state of 4 iterations; the whole exp5 took 112 min on a 2-core
# Intel Xeon (2026-11-23) in the grid it had then (100 runs), the runs of today's grid 81 of them; today's grid took
# 74.5 min on a 2-core AMD EPYC
DEFAULT_EXP5_ITERATIONS = 12
QUICK_EXP5_VARIANTS = (("ppo_linen", "jit"), ("ppo_torch", "env-jit"), ("ppo_torch_gymnasium", "eager"),
                       ("ppo_linen_gymnasium", "jit-vector"), ("ppo_torch_native", "compile"))
QUICK_EXP5_NUM_ENVS = (8, 32, 128)

# exp6, many agents: the wall time to train N agents of the reference workload, small model, seeds s to s+N-1, by
# one process of the scan variant (--num-seeds N, the N agents vmapped in one compiled call) and by N fresh processes
# of each process variant, started as many at a time as this machine has usable cores. Each (variant, env, N,
# repeat) is one group; the report extrapolates the process variants beyond their largest N.
EXP6_SCAN_VARIANT = ("ppo_linen_scan", "scan")
EXP6_PROCESS_VARIANTS = (("ppo_linen", "jit"), ("ppo_torch", "env-jit"))
EXP6_ENVS = ("CartPole-v1", "Breakout-MinAtar")
EXP6_SCAN_AGENTS = (1, 2, 4, 8, 16, 32)  # an N whose estimated peak memory does not fit is refused (estimate.py)
EXP6_PROCESS_AGENTS = (1, 2, 4, 8)
QUICK_EXP6_ENVS = ("CartPole-v1",)
QUICK_EXP6_AGENTS = (1, 2)
EXP6_SEED_STRIDE = 1000  # repeat r (0-based) trains the agents of seeds 1 + 1000 r onwards: disjoint across repeats

# exp7, model sizes: the ranking at each size on this machine, with run-to-run spread beside the env-to-env spread and
# the rollout/update split per size. Every fully compiled variant and torch env-jit beside them: small on EXP7_ENVS
# with EXP7_SMALL_SEEDS seeds (more with --repeats), medium on all 12 envs, large on EXP7_ENVS with fewer iterations
# (--exp7-large-iterations: a large iteration takes 30-45 s on a 2-core CPU); --sync-timing runs on EXP7_SYNC_ENVS at
# every size for every variant but scan (one call, no split), at large only EXP7_SYNC_AT_LARGE.
EXP7_VARIANTS = (("ppo_linen", "jit"), ("ppo_nnx_cached", "cached"), ("ppo_nnx_tree", "tree"), ("ppo_equinox", "jit"),
                 ("ppo_torch_compile", "compile"), ("ppo_linen_scan", "scan"), ("ppo_torch", "env-jit"))
EXP7_ENVS = ("CartPole-v1", "Breakout-MinAtar", "Asterix-MinAtar")
EXP7_SMALL_SEEDS = 3
EXP7_SYNC_ENVS = ("CartPole-v1",)
EXP7_SYNC_AT_LARGE = (("ppo_linen", "jit"), ("ppo_torch", "env-jit"))
# 12 iterations as exp5's (windows 0, 1-7 and 8-11): 21 large runs of 12 iterations take about 2.5 h on a 2-core CPU
DEFAULT_EXP7_LARGE_ITERATIONS = 12
QUICK_EXP7_VARIANTS = (("ppo_linen", "jit"), ("ppo_torch", "env-jit"))
QUICK_EXP7_ENVS = ("CartPole-v1",)
QUICK_EXP7_SMALL_SEEDS = 2

# exp8, DQN: does the framework matter more for DQN than for PPO? The DQN scripts (CleanRL's CartPole-v1 DQN in seven
# designs: first exp4's four, torch and Linen on Gymnasium's NumPy env and on gymnax, then torch.compile, NNX tree mode
# and Equinox on gymnax) on two envs with EXP8_SEEDS seeds (more with --repeats), one env each; and dqn_linen.py at
# EXP8_WIDE_NUM_ENVS envs (as many transitions and gradient steps, 16 x fewer steps of its compiled loop). Then
# Breakout-MinAtar (EXP8_MINATAR_ENVS) for the variants on gymnax only, at one env: the Gymnasium scripts run only envs
# with a Gymnasium counterpart, which MinAtar has not. The scripts' own workload (DQN_WORKLOAD), not PPO's.
EXP8_VARIANTS = (("dqn_torch_gymnasium", "eager"), ("dqn_linen_gymnasium", "jit"), ("dqn_torch", "env-jit"),
                 ("dqn_linen", "jit"), ("dqn_torch_compile", "compile"), ("dqn_nnx", "tree"), ("dqn_equinox", "jit"))
EXP8_ENVS = ("CartPole-v1", "Acrobot-v1")
EXP8_WIDE = ("dqn_linen", "jit")
EXP8_WIDE_NUM_ENVS = 16
EXP8_MINATAR_ENVS = ("Breakout-MinAtar",)
EXP8_MINATAR_VARIANTS = tuple((script, mode) for script, mode in EXP8_VARIANTS if not script.endswith("_gymnasium"))
EXP8_SEEDS = 3
QUICK_EXP8_ENVS = ("CartPole-v1",)  # no MinAtar run in --quick
QUICK_EXP8_SEEDS = 1
# a DQN run's transitions, transitions per iteration, transitions before the first gradient step and replay memory
# (--buffer-size) in transitions; every other hyperparameter the scripts' defaults. CleanRL's CartPole-v1 workload:
# 500,000 in 50 iterations of 10,000 (windows 0, 1-7 and 8-49; iteration 0 all learning-starts), a replay memory of
# 10,000; --quick 10 iterations of 2,000. On a MinAtar env (dqn_minatar) 200,000 in 20 iterations of 10,000 (windows
# 0, 1-7 and 8-19) and a replay memory of 100,000 (of observations 100 x CartPole's: 320 MB, see estimate.MEMORY)
DQN_WORKLOAD = (500000, 10000, 10000, 10000)
DQN_MINATAR_WORKLOAD = (200000, 10000, 10000, 100000)
QUICK_DQN_WORKLOAD = (20000, 2000, 2000, 10000)


def dqn(config) -> bool:
    """Whether a configuration runs a DQN script (exp8's, exp9's and the GPU grid's): its own workload."""
    return config.script.startswith("dqn_")


def dqn_minatar(env: str) -> bool:
    """Whether exp8 runs env at DQN_MINATAR_WORKLOAD (a MinAtar env) rather than DQN_WORKLOAD."""
    return env.endswith("-MinAtar")


# exp9, NumPy or JAX for my own env? Training on Doors (doors.py: a gridworld written in NumPy and in JAX, one MDP),
# as the published study's second source compared it: torch and Linen on the NumPy env (a Python loop over env copies
# and the NumPy-vectorised env), Linen on the JAX env, and the JAX env with 16 x the envs (EXP9_WIDE_FACTOR: PPO
# keeps its batch, 16 x fewer steps per env; DQN its transitions and gradient steps), plus torch on the JAX env and
# the fully compiled JAX variants; EXP9_SEEDS seeds. PPO at the reference workload, DQN at DQN_WORKLOAD.
EXP9_ENVS = ("doors:Doors-v0",)
EXP9_PPO_VARIANTS = (("ppo_torch_gymnasium", "eager"), ("ppo_torch_gymnasium", "eager-vector"),
                     ("ppo_linen_gymnasium", "jit"), ("ppo_linen_gymnasium", "jit-vector"), ("ppo_torch", "env-jit"),
                     ("ppo_linen", "jit"), ("ppo_nnx_tree", "tree"), ("ppo_equinox", "jit"), ("ppo_linen_scan", "scan"))
EXP9_DQN_VARIANTS = (("dqn_torch_gymnasium", "eager"), ("dqn_linen_gymnasium", "jit"), ("dqn_torch", "env-jit"),
                     ("dqn_linen", "jit"), ("dqn_nnx", "tree"), ("dqn_equinox", "jit"))
EXP9_WIDE = (("ppo_linen", "jit"), ("dqn_linen", "jit"))
EXP9_WIDE_FACTOR = 16
EXP9_SEEDS = 3
QUICK_EXP9_PPO_VARIANTS = (("ppo_torch_gymnasium", "eager-vector"), ("ppo_linen", "jit"))
QUICK_EXP9_DQN_VARIANTS = (("dqn_torch_gymnasium", "eager"), ("dqn_linen", "jit"))
QUICK_EXP9_SEEDS = 1


# THE GPU GRID (--grid gpu): the runs that answer most per GPU minute, in priority order, so that a sitting cut short
# (benchmark.sh --max-minutes, one chunk per device command) still answers the first question. Existing experiments'
# names and run names, so that the report reads a GPU sweep as a CPU one and --compare pairs them:
# (a) exp7, the ranking per model size: every fully compiled variant, torch env-jit, torch.compile with and without
#     CUDA graphs, torch on envs in torch eager and compiled (CartPole-v1 only), one seed; in GPU_SIZE_ORDER: the
#     small and large model on CartPole-v1 first, then on Breakout-MinAtar, then medium on CartPole-v1;
# (b) exp5, the number of envs up to where the GPU saturates, Linen and torch, CartPole-v1;
# (c) exp6, one ppo_linen_scan.py --num-seeds N process against N processes of Linen side by side on the one GPU;
# (d) exp8, the DQN scripts on gymnax (the Gymnasium ones step a CPU env), CartPole-v1, at GPU_DQN_WORKLOAD.
# Every PPO run GPU_ITERATIONS iterations (large and exp5: 12, as on the CPU): a GPU iteration takes milliseconds
# (JAX) to a second (torch), and the fixed costs (start-up, compilation) dominate a run.
GPU_SIZE_VARIANTS = (("ppo_linen", "jit"), ("ppo_nnx_cached", "cached"), ("ppo_nnx_tree", "tree"),
                     ("ppo_equinox", "jit"), ("ppo_linen_scan", "scan"), ("ppo_torch", "env-jit"),
                     ("ppo_torch_compile", "compile"), ("ppo_torch_compile", "compile+cudagraphs"),
                     ("ppo_torch_native", "eager"), ("ppo_torch_native", "compile"))
GPU_SIZE_ORDER = (("CartPole-v1", "small"), ("CartPole-v1", "large"), ("Breakout-MinAtar", "small"),
                  ("Breakout-MinAtar", "large"), ("CartPole-v1", "medium"))
GPU_WARMUP = (("ppo_torch", "env-jit"),)  # imports JAX and torch, initialises CUDA under both: primes the machine
GPU_EXP5_VARIANTS = (("ppo_linen", "jit"), ("ppo_torch", "env-jit"))
GPU_EXP5_ENVS = ("CartPole-v1",)
GPU_EXP5_NUM_ENVS = (8, 128, 2048, 16384, 65536)
GPU_EXP6_ENVS = ("CartPole-v1",)
GPU_EXP6_SCAN_AGENTS = (1, 4, 16, 64)
GPU_EXP6_PROCESS_VARIANTS = (("ppo_linen", "jit"),)
GPU_EXP6_PROCESS_AGENTS = (1, 2, 4, 8)
GPU_EXP8_VARIANTS = (("dqn_linen", "jit"), ("dqn_nnx", "tree"), ("dqn_equinox", "jit"), ("dqn_torch", "env-jit"),
                     ("dqn_torch_compile", "compile"), ("dqn_torch_compile", "compile+cudagraphs"))
GPU_EXP8_ENVS = ("CartPole-v1",)
GPU_ITERATIONS = 16
# 30,000 transitions in 10 iterations of 3,000 (iteration 0 the learning starts; windows 0, 1-7, 8-9): torch's
# step on a GPU is bound by launches, about a millisecond per transition
GPU_DQN_WORKLOAD = (30000, 3000, 3000, 10000)
# --quick --grid gpu: CartPole-v1 small of (a), N = 8 and 64 of (b), 1 and 2 agents of (c), (d) at QUICK_DQN_WORKLOAD


def gpu_grid(choices):
    """--grid gpu, in priority order: the warm-up run, (a) exp7 by GPU_SIZE_ORDER, (b) exp5, (c) exp6, (d) exp8."""
    order = GPU_SIZE_ORDER[:1] if choices.quick else GPU_SIZE_ORDER
    grid = product("warmup", ("CartPole-v1",), ("small",), GPU_WARMUP, choices.num_envs)
    grid += [Config("exp7", script, mode, env, size, choices.num_envs, "async") for env, size in order
             for script, mode in GPU_SIZE_VARIANTS if script not in CLASSIC_ONLY or env in BACKEND_ENVS]
    counts = QUICK_EXP5_NUM_ENVS[:2] if choices.quick else GPU_EXP5_NUM_ENVS
    grid += [Config("exp5", script, mode, env, "small", n, "async") for env, (script, mode), n
             in itertools.product(GPU_EXP5_ENVS, GPU_EXP5_VARIANTS, counts)]
    scan_counts, process_counts = (QUICK_EXP6_AGENTS, QUICK_EXP6_AGENTS) if choices.quick else (
        GPU_EXP6_SCAN_AGENTS, GPU_EXP6_PROCESS_AGENTS)
    grid += [Config("exp6", script, mode, env, "small", choices.num_envs, "async", n) for env in GPU_EXP6_ENVS
             for (script, mode), counts in ((EXP6_SCAN_VARIANT, scan_counts),
                                            *((variant, process_counts) for variant in GPU_EXP6_PROCESS_VARIANTS))
             for n in counts]
    return grid + [Config("exp8", script, mode, env, "small", 1, "async") for env in GPU_EXP8_ENVS
                   for script, mode in GPU_EXP8_VARIANTS]


# The per-run workload: the scripts' defaults, every one passed explicitly to every run. --quick runs 10 iterations,
# enough to fill the windows that plot.py reads (0, 1-7, 8-99), of a smaller workload (batch 32 x 32, 2 epochs x 4
# minibatches): quick numbers are a smoke test, not results.
DEFAULT_ITERATIONS = 100
DEFAULT_EAGER_ITERATIONS = 10  # eager modes (JAX none, torch none): about a minute per iteration on a 2-core CPU
REFERENCE_WORKLOAD = (32, 256, 10, 8)  # num_envs num_steps update_epochs num_minibatches
QUICK_ITERATIONS = 10
QUICK_WORKLOAD = (32, 32, 2, 4)


@dataclass(frozen=True)
class Config:
    """One configuration of the grid: a run of one variant (exp6: a group of `agents` agents)."""

    exp: str
    script: str
    mode: str
    env: str
    size: str
    num_envs: int
    timing: str  # "sync" (--sync-timing) or "async"
    agents: int = 1

    @property
    def eager(self) -> bool:
        return self.mode in EAGER_MODES

    @property
    def processes(self) -> bool:
        """An exp6 group of one process per agent (the scan variant trains them all in one)."""
        return self.exp == "exp6" and self.mode != "scan"


@dataclass(frozen=True)
class Choices:
    """What the grid depends on: the grid's name, --quick, and the numbers of envs and agents the workload gives."""

    grid: str
    quick: bool
    num_envs: int


def product(exp, envs, sizes, variants, num_envs, timing="async"):
    """Every env x size x variant, in that nesting."""
    return [Config(exp, script, mode, env, size, num_envs, timing)
            for env, size, (script, mode) in itertools.product(envs, sizes, variants)]


def warmup(choices):
    """Three runs that prepare the machine (not analysed): CartPole-v1, small, the study's compiled variants."""
    variants = (("ppo_linen", "jit"),) if choices.quick else STUDY_COMPILED
    return product("warmup", ("CartPole-v1",), ("small",), variants, choices.num_envs)


def compiled_variants(choices):
    return STUDY_COMPILED + (NEW_COMPILED if choices.grid == "default" else ())


def pairs(choices):
    return STUDY_PAIRS + (NEW_PAIRS if choices.grid == "default" else ())


def exp1(choices):
    """The fully compiled variants, async, on every env and size (--quick: 3 envs, small)."""
    envs = ("CartPole-v1", "DiscountingChain-bsuite", "Breakout-MinAtar") if choices.quick else GRID_ENVS
    sizes = ("small",) if choices.quick else SIZES
    return product("exp1", envs, sizes, compiled_variants(choices), choices.num_envs)


def exp2(choices):
    """Every variant/compile pair on every env, small, synchronised (--quick: CartPole-v1)."""
    envs = ("CartPole-v1",) if choices.quick else GRID_ENVS
    return product("exp2", envs, ("small",), pairs(choices), choices.num_envs, "sync")


def exp3(choices):
    """Every pair on Acrobot-v1 at every size, synchronised (--quick: small, and medium without the eager pairs)."""
    if not choices.quick:
        return product("exp3", ("Acrobot-v1",), SIZES, pairs(choices), choices.num_envs, "sync")
    compiled = [(script, mode) for script, mode in pairs(choices) if mode not in EAGER_MODES]
    return (product("exp3", ("Acrobot-v1",), ("small",), pairs(choices), choices.num_envs, "sync")
            + product("exp3", ("Acrobot-v1",), ("medium",), compiled, choices.num_envs, "sync"))


def exp4(choices):
    """The env backend: torch and Linen on gymnax and on Gymnasium (default grid)."""
    if choices.grid != "default":
        return []
    envs, sizes = (("CartPole-v1",), ("small",)) if choices.quick else (BACKEND_ENVS, BACKEND_SIZES)
    return product("exp4", envs, sizes, BACKEND_VARIANTS, choices.num_envs)


def exp5_has(script, mode, env, n):
    """Whether exp5 runs this variant on env with n envs."""
    if script in CLASSIC_ONLY and env not in BACKEND_ENVS:
        return False
    if script.endswith("_gymnasium") and not mode.endswith("-vector") and n > EXP5_LOOP_MAX_NUM_ENVS:
        return False
    return n != EXP5_LARGEST_NUM_ENVS or (script, mode, env) in EXP5_LARGEST_RUNS


def exp5(choices):
    """The number of envs N (default grid): every variant at every N it has on each env, async; then synchronised on
    EXP5_SYNC_ENVS at the smallest N each variant has, and at its largest for EXP5_SYNC_AT_LARGEST."""
    if choices.grid != "default":
        return []
    variants = QUICK_EXP5_VARIANTS if choices.quick else EXP5_VARIANTS
    envs = ("CartPole-v1",) if choices.quick else EXP5_ENVS
    counts = exp5_counts(choices)
    grid = [Config("exp5", script, mode, env, "small", n, "async")
            for env, n, (script, mode) in itertools.product(envs, counts + (() if choices.quick else (
                EXP5_LARGEST_NUM_ENVS,)), variants) if exp5_has(script, mode, env, n)]
    for env, end, (script, mode) in itertools.product(EXP5_SYNC_ENVS, ("smallest", "largest"), variants):
        has = [n for n in counts if exp5_has(script, mode, env, n)]
        if has and (end == "smallest" or (script, mode) in EXP5_SYNC_AT_LARGEST):
            grid.append(Config("exp5", script, mode, env, "small", has[0] if end == "smallest" else has[-1], "sync"))
    return grid


def exp5_counts(choices):
    return QUICK_EXP5_NUM_ENVS if choices.quick else EXP5_NUM_ENVS


def exp6(choices):
    """Many agents (default grid): per env and N, the scan process, and the process variants at the N they have."""
    if choices.grid != "default":
        return []
    envs = QUICK_EXP6_ENVS if choices.quick else EXP6_ENVS
    scan_counts, process_counts = exp6_counts(choices)
    return [Config("exp6", script, mode, env, "small", choices.num_envs, "async", n)
            for env, n, (script, mode) in itertools.product(envs, scan_counts, (EXP6_SCAN_VARIANT,
                                                                                *EXP6_PROCESS_VARIANTS))
            if (script, mode) == EXP6_SCAN_VARIANT or n in process_counts]


def exp6_counts(choices):
    """The numbers of agents of the scan variant and of the process variants (a subset of those)."""
    return (QUICK_EXP6_AGENTS, QUICK_EXP6_AGENTS) if choices.quick else (EXP6_SCAN_AGENTS, EXP6_PROCESS_AGENTS)


def exp7(choices):
    """Model sizes (default grid): each variant at small and large on EXP7_ENVS, at medium on all 12 envs (--quick:
    CartPole-v1); then the synchronised runs on EXP7_SYNC_ENVS at each size, no scan, at large EXP7_SYNC_AT_LARGE's."""
    if choices.grid != "default":
        return []
    variants = QUICK_EXP7_VARIANTS if choices.quick else EXP7_VARIANTS
    envs = QUICK_EXP7_ENVS if choices.quick else EXP7_ENVS
    medium_envs = QUICK_EXP7_ENVS if choices.quick else GRID_ENVS
    grid = [config for size in SIZES
            for config in product("exp7", medium_envs if size == "medium" else envs, (size,), variants,
                                  choices.num_envs)]
    return grid + [Config("exp7", script, mode, env, size, choices.num_envs, "sync")
                   for size, env, (script, mode) in itertools.product(SIZES, EXP7_SYNC_ENVS, variants)
                   if mode != "scan" and (size != "large" or (script, mode) in EXP7_SYNC_AT_LARGE)]


def exp7_seeds(choices):
    """How many seeds exp7's small async runs have at least (--repeats adds more)."""
    return QUICK_EXP7_SMALL_SEEDS if choices.quick else EXP7_SMALL_SEEDS


def exp8(choices):
    """DQN (default grid): per env of EXP8_ENVS the DQN scripts at 1 env, then the wide dqn_linen run; then the gymnax
    ones at 1 env on EXP8_MINATAR_ENVS (--quick: CartPole-v1 alone)."""
    if choices.grid != "default":
        return []
    envs = QUICK_EXP8_ENVS if choices.quick else EXP8_ENVS
    runs = [(env, variant, num_envs) for env in envs
            for variant, num_envs in [*((variant, 1) for variant in EXP8_VARIANTS), (EXP8_WIDE, EXP8_WIDE_NUM_ENVS)]]
    if not choices.quick:
        runs += [(env, variant, 1) for env in EXP8_MINATAR_ENVS for variant in EXP8_MINATAR_VARIANTS]
    return [Config("exp8", script, mode, env, "small", num_envs, "async") for env, (script, mode), num_envs in runs]


def exp9(choices):
    """Training on Doors (default grid): per env of EXP9_ENVS, PPO's variants at the reference number of envs, then
    the wide one; DQN's at one env, then the wide one (--quick: two of each, no wide run)."""
    if choices.grid != "default":
        return []
    ppo = QUICK_EXP9_PPO_VARIANTS if choices.quick else EXP9_PPO_VARIANTS
    dqn = QUICK_EXP9_DQN_VARIANTS if choices.quick else EXP9_DQN_VARIANTS
    runs = [(env, variant, choices.num_envs) for env in EXP9_ENVS for variant in ppo]
    runs += [] if choices.quick else [(env, EXP9_WIDE[0], choices.num_envs * EXP9_WIDE_FACTOR) for env in EXP9_ENVS]
    runs += [(env, variant, 1) for env in EXP9_ENVS for variant in dqn]
    runs += [] if choices.quick else [(env, EXP9_WIDE[1], EXP9_WIDE_FACTOR) for env in EXP9_ENVS]
    return [Config("exp9", script, mode, env, "small", num_envs, "async") for env, (script, mode), num_envs in runs]


def min_seeds(config, choices):
    """The seeds a configuration runs at least, whatever --repeats: exp7's small async runs and exp8's runs give their
    answer over seeds; every other run once per repeat (--grid gpu: every run, one seed per GPU minute)."""
    if choices.grid == "gpu":
        return 1
    if config.exp == "exp7" and config.size == "small" and config.timing == "async":
        return exp7_seeds(choices)
    if config.exp == "exp8":
        return QUICK_EXP8_SEEDS if choices.quick else EXP8_SEEDS
    if config.exp == "exp9":
        return QUICK_EXP9_SEEDS if choices.quick else EXP9_SEEDS
    return 1


def build_grid(choices):
    """Every configuration of the grid, in run order: the warm-up runs, then exp1 to exp9 (--grid gpu: gpu_grid's
    priority order)."""
    if choices.grid == "gpu":
        return gpu_grid(choices)
    return [config for experiment in (warmup, exp1, exp2, exp3, exp4, exp5, exp6, exp7, exp8, exp9)
            for config in experiment(choices)]
