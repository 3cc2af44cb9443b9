"""The experiments as objects, one definition each: its runs and constants, its workload, the fields its run names
carry, the seeds it needs, what the report's generic sections read of it and its report section (docs/method.md says
why each is built so). The variants are the registry's rows (sweep/variants.py). To add an experiment: a class here
(its runs, and what the report reads of it: sweep/view.py's fields), its object in ALL, its GPU runs in
sweep/grids.py's GPU_PARTS if any, and its section in the report (docs/extending.md)."""
import itertools
from dataclasses import dataclass

from sweep import variants as v
from sweep.view import ReportView

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
CLASSIC_ENVS = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0")  # the envs of the classic-only variants
# envs that a module of the project ships (module:EnvId), beyond the grid's: Doors, its 15 x 15 grid
MODULE_OBS_SIZES = {"doors:Doors-v0": 225}
# the continuous-action envs of exp12's runs in the grids: Brax's, and MuJoCo's Hopper-v5 (the Gymnasium pair's)
CONTINUOUS_OBS_SIZES = {"hopper": 11, "ant": 27, "Hopper-v5": 11}
# the Atari games of exp14's GPU runs: 4 stacked 84 x 84 grey frames
ATARI_OBS_SIZES = {"Breakout-v5": 4 * 84 * 84, "Pong-v5": 4 * 84 * 84}


def obs_size(env: str) -> int:
    """An env's flattened observation size: the grid's, a module env's, a continuous-action env's or an Atari game's."""
    return OBS_SIZES.get(env) or MODULE_OBS_SIZES.get(env) or CONTINUOUS_OBS_SIZES.get(env) or ATARI_OBS_SIZES[env]


SIZES = ("small", "medium", "large")


@dataclass(frozen=True)
class Config:
    """One configuration of the grid: a run of one variant (a group of `agents` agents in a grouped experiment)."""

    exp: str
    script: str
    mode: str
    env: str
    size: str
    num_envs: int
    timing: str  # "sync" (--sync-timing) or "async"
    agents: int = 1
    seed: int = 0  # a configuration of one seed only, this one, in the first repeat (0: every repeat's own seed)

    @property
    def variant(self) -> v.Variant:
        return v.variant(self.script, self.mode)

    @property
    def experiment(self) -> "Experiment":
        return BY_NAME[self.exp]

    @property
    def eager(self) -> bool:
        return self.variant.eager

    @property
    def dqn(self) -> bool:
        """A DQN run: its own workload (workload.DqnWorkload)."""
        return self.variant.algorithm == v.DQN

    @property
    def grouped(self) -> bool:
        """A group of agents, run into one group folder (runs/<exp>/<group>/agent__seed<s>/) with its group.json."""
        return self.experiment.grouped

    @property
    def processes(self) -> bool:
        """A group of one process per agent (the scan variant trains them all in one)."""
        return self.grouped and not self.variant.num_seeds


@dataclass(frozen=True)
class Choices:
    """What the grid depends on: the grid's name, --quick, and the numbers of envs and agents the workload gives."""

    grid: str
    quick: bool
    num_envs: int


def product(exp, envs, sizes, variants, num_envs, timing="async"):
    """Every env x size x variant, in that nesting."""
    return [Config(exp, variant.script, variant.mode, env, size, num_envs, timing)
            for env, size, variant in itertools.product(envs, sizes, variants)]


def dqn_minatar(env: str) -> bool:
    """Whether a DQN run on env has the MinAtar workload (workload.DQN_MINATAR_WORKLOAD) rather than the classic one."""
    return env.endswith("-MinAtar")


class Experiment(ReportView):
    """One experiment. The defaults are those of an experiment of the published study: async runs of the reference
    workload, once per repeat, named <exp>__<script>__<mode>__<env>__<size>__<seed>, read by every generic section
    (what the report reads of it: ReportView's fields, sweep/view.py)."""

    name = ""
    carries = ()  # what its run names carry after the size: "num_envs" (n<N>), "agents" (a<N>), "sync"
    timing = "async"  # its runs' timing: "async", "sync", or "both" (the synchronised ones carry "sync")
    grouped = False  # each run a group of agents (one folder, group.json)
    prepares = False  # prepares the machine: runs first, in every shard and whatever --only, never analysed
    prior_percent = 100  # its runs' built-in cost estimate scaled by this
    seed_stride = 1  # repeat r (0-based) runs seed 1 + seed_stride r
    # on a CPU a command set of its own (a tool, from the repository's root: OUT first, then its options, --dry-run
    # among them) runs it, not the sweep's grids (only --grid gpu may hold runs of it): benchmark.sh --only hands the
    # invocation over to it (sweep/handover.py)
    command_set = ""
    report_module = ""  # its command set's report: report/<module>.py, run as python -m report.<module> FOLDER

    def runs(self, choices: Choices) -> list:
        return []

    def min_seeds(self, config: Config, choices: Choices) -> int:
        """The seeds a configuration runs at least, whatever --repeats."""
        return 1

    def iterations(self, config: Config, workload) -> int:
        """A PPO run's iterations (a DQN run's follow from its DQN workload)."""
        return workload.eager_iterations if config.eager else workload.iterations

    def num_steps(self, config: Config, workload) -> int:
        """A PPO run's steps per env per iteration."""
        return workload.num_steps

    def update_of(self, config: Config, workload) -> tuple:
        """A PPO run's epochs and minibatches per update."""
        return workload.update_epochs, workload.num_minibatches

    def network_flags(self, config: Config) -> tuple:
        """The flags that choose a run's network beyond its --model-size (none: the script's own)."""
        return ()

    def timing_of(self, carried: list) -> str:
        """The timing of a run whose name carries these fields."""
        return "sync" if self.timing == "sync" or (self.timing == "both" and "sync" in carried) else "async"


# The published study's variants, and those added since (the default grid).
STUDY_PAIRS = (v.LINEN_NONE, v.LINEN, v.NNX_NONE, v.NNX, v.NNX_CACHED, v.TORCH_NONE, v.TORCH, v.TORCH_COMPILE)
STUDY_COMPILED = (v.LINEN, v.NNX_CACHED, v.TORCH_COMPILE)
NEW_PAIRS = (v.NNX_TREE, v.EQUINOX_NONE, v.EQUINOX)
# exp1's fully compiled variants added since; the scan variant (the whole training one compiled call) in exp1 alone:
# it cannot time rollout and update apart (exp2), and its one agent per run is exp1's workload
NEW_COMPILED = (v.NNX_TREE, v.EQUINOX, v.LINEN_SCAN)


def compiled_variants(choices):
    return STUDY_COMPILED + (NEW_COMPILED if choices.grid == "default" else ())


def pairs(choices):
    return STUDY_PAIRS + (NEW_PAIRS if choices.grid == "default" else ())


class Warmup(Experiment):
    """Three runs that prepare the machine (not analysed): CartPole-v1, small, the study's compiled variants."""

    name, prepares, shared_windows, learning, curves = "warmup", True, False, "own", ""

    def runs(self, choices):
        variants = (v.LINEN,) if choices.quick else STUDY_COMPILED
        return product(self.name, ("CartPole-v1",), ("small",), variants, choices.num_envs)


class Exp1(Experiment):
    """The fully compiled variants, async, on every env and size (--quick: 3 envs, small)."""

    name, topic, overhead, section = "exp1", "the fully compiled variants, async: the ranking", True, "ranking"
    answer_rank, headline_rank = 0, 0
    pairwise, curves = True, "size"

    def runs(self, choices):
        envs = ("CartPole-v1", "DiscountingChain-bsuite", "Breakout-MinAtar") if choices.quick else GRID_ENVS
        sizes = ("small",) if choices.quick else SIZES
        return product(self.name, envs, sizes, compiled_variants(choices), choices.num_envs)

    def reference_runs(self, choices):
        """--grid reference: the published study's comparison, its fully compiled variants (Linen, NNX, torch) on its
        12 envs at small, each run as long as the study's (time to a total, as it reported); at large the same
        variants are exp7's reference runs."""
        return product(self.name, GRID_ENVS, ("small",), STUDY_COMPILED, choices.num_envs)


class Exp2(Experiment):
    """Every variant/compile pair on every env, small, synchronised (--quick: CartPole-v1)."""

    name, topic, timing, sync_by = "exp2", "every compile mode per env, synchronised", "sync", "env"
    answer_rank, headline_rank = 3, 7
    section = "compile_modes"
    unfiled = {"sync": ("small",)}  # the synchronised runs outside runs/<exp>/ of the small model

    def runs(self, choices):
        envs = ("CartPole-v1",) if choices.quick else GRID_ENVS
        return product(self.name, envs, ("small",), pairs(choices), choices.num_envs, "sync")


class Exp3(Experiment):
    """Every pair on Acrobot-v1 at every size, synchronised (--quick: small, and medium without the eager pairs)."""

    name, topic, timing, sync_by = "exp3", "every compile mode per model size, synchronised", "sync", "size"
    answer_rank, headline_rank = 3, 7
    overhead, section = True, "compile_modes"
    unfiled = {"sync": None}  # every synchronised run outside runs/<exp>/

    def runs(self, choices):
        if not choices.quick:
            return product(self.name, ("Acrobot-v1",), SIZES, pairs(choices), choices.num_envs, "sync")
        compiled = [variant for variant in pairs(choices) if not variant.eager]
        return (product(self.name, ("Acrobot-v1",), ("small",), pairs(choices), choices.num_envs, "sync")
                + product(self.name, ("Acrobot-v1",), ("medium",), compiled, choices.num_envs, "sync"))


class Exp4(Experiment):
    """The env backend (default grid): the gymnax and Gymnasium scripts of torch and Linen on the envs both backends
    have, and torch on envs written in torch (eager, as torch on the other two)."""

    name, topic, section = "exp4", "the env backend against the framework", "env_backend"
    answer_rank, headline_rank = 2, 5
    VARIANTS = (v.TORCH, v.LINEN, v.TORCH_GYMNASIUM, v.LINEN_GYMNASIUM, v.TORCH_NATIVE)
    ENVS, SIZES = CLASSIC_ENVS, ("small", "medium")
    # (framework, env backend) -> variant: the 2 x 2 of EFFECT_CELLS gives each factor's effect, and torch on envs
    # written in torch a fifth cell (what the JAX env's hand-over costs torch)
    CELLS = {(variant.framework, variant.backend): variant for variant in VARIANTS}
    EFFECT_CELLS = (("torch", v.GYMNAX), ("linen", v.GYMNAX), ("torch", v.GYMNASIUM), ("linen", v.GYMNASIUM))

    def runs(self, choices):
        if choices.grid != "default":
            return []
        envs, sizes = (("CartPole-v1",), ("small",)) if choices.quick else (self.ENVS, self.SIZES)
        return product(self.name, envs, sizes, self.VARIANTS, choices.num_envs)


class Exp5(Experiment):
    """The number of envs N (default grid): each run of the same per-env workload (num_steps, epochs and minibatches
    as everywhere, so the minibatch grows with the batch), small model. Every fully compiled variant, the Gymnasium
    scripts (on Gymnasium's NumPy-vectorised CartPole, "-vector", too) and torch on envs in torch, eager and compiled;
    CartPole-v1 for all, Breakout-MinAtar for the gymnax ones. Every variant at every N it has on each env, async; then
    synchronised on SYNC_ENVS at the smallest N each variant has, and at its largest for SYNC_AT_LARGEST."""

    name, topic = "exp5", "how the cost grows with the number of envs"
    answer_rank, headline_rank = 4, 6
    carries, timing, shared_windows, learning = ("num_envs", "sync"), "both", False, "async"
    split, section, varies_num_envs, curves = ("num_envs", "N envs"), "scaling", True, ""
    # its runs took 1.4-1.7x the built-in estimate at every N and in every cost family (docs/method.md)
    prior_percent = 154
    VARIANTS = (v.LINEN, v.NNX_CACHED, v.NNX_TREE, v.EQUINOX, v.TORCH, v.TORCH_COMPILE, v.TORCH_GYMNASIUM,
                v.TORCH_GYMNASIUM_VECTOR, v.LINEN_GYMNASIUM, v.LINEN_GYMNASIUM_VECTOR, v.TORCH_NATIVE,
                v.TORCH_NATIVE_COMPILE)
    ENVS = ("CartPole-v1", "Breakout-MinAtar")
    NUM_ENVS = (8, 32, 128, 512, 2048)  # and --sync-timing runs at the first and the last, on SYNC_ENVS
    SYNC_ENVS = ("CartPole-v1",)  # the env every variant has
    # Gymnasium's Python loop over env copies (the modes without -vector) up to this N: beyond, the curve measures the
    # NumPy-vectorised env (the -vector modes), not a Python loop over thousands of envs
    LOOP_MAX_NUM_ENVS = 512
    # --sync-timing at the largest N too (all at the smallest) only for these, the reference of each framework, which
    # stand for the others (docs/method.md)
    SYNC_AT_LARGEST = (v.LINEN, v.TORCH)
    # N = 8192 also, only for these (variant, env): the runs that stay under about 3 minutes on a 2-core CPU; the cost
    # model puts every variant's 8192-env run at 5 minutes or more, so none is listed until a measurement says otherwise
    LARGEST_NUM_ENVS = 8192
    LARGEST_RUNS = ()
    ITERATIONS = 12  # windows 0, 1-7 and 8-11: a steady state of 4 iterations
    QUICK_VARIANTS = (v.LINEN, v.TORCH, v.TORCH_GYMNASIUM, v.LINEN_GYMNASIUM_VECTOR, v.TORCH_NATIVE_COMPILE)
    QUICK_NUM_ENVS = (8, 32, 128)
    # --grid gpu: up to where the GPU saturates, Linen and torch at its GPU best (on envs in torch, CUDA graphs)
    GPU_VARIANTS = (v.LINEN, v.TORCH_NATIVE_COMPILE_CUDAGRAPHS)
    GPU_ENVS = ("CartPole-v1",)
    GPU_NUM_ENVS = (8, 128, 2048, 16384, 65536)

    def has(self, variant, env, n):
        """Whether exp5 runs this variant on env with n envs."""
        if variant.classic_only and env not in CLASSIC_ENVS:
            return False
        if variant.backend == v.GYMNASIUM and not variant.mode.endswith("-vector") and n > self.LOOP_MAX_NUM_ENVS:
            return False
        return n != self.LARGEST_NUM_ENVS or (variant, env) in self.LARGEST_RUNS

    def counts(self, choices):
        return self.QUICK_NUM_ENVS if choices.quick else self.NUM_ENVS

    def runs(self, choices):
        if choices.grid != "default":
            return []
        variants = self.QUICK_VARIANTS if choices.quick else self.VARIANTS
        envs = ("CartPole-v1",) if choices.quick else self.ENVS
        counts = self.counts(choices)
        grid = [Config(self.name, variant.script, variant.mode, env, "small", n, "async")
                for env, n, variant in itertools.product(envs, counts + (() if choices.quick else (
                    self.LARGEST_NUM_ENVS,)), variants) if self.has(variant, env, n)]
        for env, end, variant in itertools.product(self.SYNC_ENVS, ("smallest", "largest"), variants):
            has = [n for n in counts if self.has(variant, env, n)]
            if has and (end == "smallest" or variant in self.SYNC_AT_LARGEST):
                grid.append(Config(self.name, variant.script, variant.mode, env, "small",
                                   has[0] if end == "smallest" else has[-1], "sync"))
        return grid

    def reference_runs(self, choices):
        """--grid reference: every variant at the smallest and the largest N it has on each env, async."""
        return [Config(self.name, variant.script, variant.mode, env, "small", n, "async")
                for env, n, variant in itertools.product(self.ENVS, (self.NUM_ENVS[0], self.NUM_ENVS[-1]),
                                                         self.VARIANTS) if self.has(variant, env, n)]

    def gpu_runs(self, choices):
        counts = self.QUICK_NUM_ENVS[:2] if choices.quick else self.GPU_NUM_ENVS
        return [Config(self.name, variant.script, variant.mode, env, "small", n, "async") for env, variant, n
                in itertools.product(self.GPU_ENVS, self.GPU_VARIANTS, counts)]

    def iterations(self, config, workload):
        return workload.exp5_iterations


class Exp6(Experiment):
    """Many agents (default grid): the wall time to train N agents of the reference workload, small model, seeds s to
    s+N-1, by one process of the scan variant (--num-seeds N, the N agents vmapped in one compiled call) and by N fresh
    processes of each process variant, started as many at a time as this machine has usable cores. Each (variant, env,
    N, repeat) is one group; the report extrapolates the process variants beyond their largest N."""

    name, topic = "exp6", "many agents in one process against many processes"
    answer_rank, headline_rank = 5, 4
    carries, grouped, shared_windows, learning = ("agents",), True, False, "groups"
    split, section = ("agents", "N agents"), "agents"
    predicted_by = "exp5"  # the experiment whose cost model its section's prediction reads
    PREDICTION_VARIANT = v.LINEN  # the variant of that cost model (its processes are the prediction's)
    SCAN_VARIANT = v.LINEN_SCAN
    PROCESS_VARIANTS = (v.LINEN, v.TORCH)
    ENVS = ("CartPole-v1", "Breakout-MinAtar")
    SCAN_AGENTS = (1, 2, 4, 8, 16, 32)  # an N whose estimated peak memory does not fit is refused (estimate.py)
    PROCESS_AGENTS = (1, 2, 4, 8)
    QUICK_ENVS = ("CartPole-v1",)
    QUICK_AGENTS = (1, 2)
    seed_stride = 1000  # repeat r (0-based) trains the agents of seeds 1 + 1000 r onwards: disjoint across repeats
    # --grid gpu: one scan process against N processes of Linen side by side on the one GPU; up to 256 agents, exp11's
    # populations (agents with their own --hparams values run the same compiled program: the cost is the same)
    GPU_ENVS = ("CartPole-v1",)
    GPU_SCAN_AGENTS = (1, 16, 64, 256)
    GPU_PROCESS_VARIANTS = (v.LINEN,)
    GPU_PROCESS_AGENTS = (1, 2, 4, 8)

    def counts(self, choices):
        """The numbers of agents of the scan variant and of the process variants (a subset of those)."""
        return (self.QUICK_AGENTS, self.QUICK_AGENTS) if choices.quick else (self.SCAN_AGENTS, self.PROCESS_AGENTS)

    def runs(self, choices):
        """Per env and N, the scan process, and the process variants at the N they have."""
        if choices.grid != "default":
            return []
        envs = self.QUICK_ENVS if choices.quick else self.ENVS
        scan_counts, process_counts = self.counts(choices)
        return [Config(self.name, variant.script, variant.mode, env, "small", choices.num_envs, "async", n)
                for env, n, variant in itertools.product(envs, scan_counts, (self.SCAN_VARIANT,
                                                                           *self.PROCESS_VARIANTS))
                if variant is self.SCAN_VARIANT or n in process_counts]

    def gpu_runs(self, choices):
        scan_counts, process_counts = (self.QUICK_AGENTS, self.QUICK_AGENTS) if choices.quick else (
            self.GPU_SCAN_AGENTS, self.GPU_PROCESS_AGENTS)
        return [Config(self.name, variant.script, variant.mode, env, "small", choices.num_envs, "async", n)
                for env in self.GPU_ENVS
                for variant, counts in ((self.SCAN_VARIANT, scan_counts),
                                        *((variant, process_counts) for variant in self.GPU_PROCESS_VARIANTS))
                for n in counts]


class Exp7(Experiment):
    """Model sizes (default grid): the ranking at each size on this machine, with run-to-run spread beside the
    env-to-env spread and the rollout/update split per size. Every fully compiled variant and torch env-jit beside
    them: small on ENVS with SMALL_SEEDS seeds (more with --repeats), medium on all 12 envs, large on ENVS with fewer
    iterations (--exp7-large-iterations); --sync-timing runs on SYNC_ENVS at every size for every variant but scan (one
    call, no split), at large only SYNC_AT_LARGE's."""

    name, topic = "exp7", "the ranking at each model size, with seeds"
    answer_rank, headline_rank = 1, 1
    carries, timing, shared_windows, learning, section, curves = ("sync",), "both", False, "async", "sizes", ""
    VARIANTS = (v.LINEN, v.NNX_CACHED, v.NNX_TREE, v.EQUINOX, v.TORCH_COMPILE, v.LINEN_SCAN, v.TORCH, v.NNX)
    # the labels its section ranks, in the ranking's order: the fully compiled variants, then its others as listed
    ranked = tuple(variant.label for variant in v.FULLY_COMPILED
                   + tuple(variant for variant in VARIANTS if variant not in v.FULLY_COMPILED))
    ENVS = ("CartPole-v1", "Breakout-MinAtar", "Asterix-MinAtar")
    SMALL_SEEDS = 3
    SYNC_ENVS = ("CartPole-v1",)
    SYNC_AT_LARGE = (v.LINEN, v.TORCH)
    LARGE_ITERATIONS = 12  # as exp5's (windows 0, 1-7 and 8-11): a large iteration takes 30-45 s on a 2-core CPU
    QUICK_VARIANTS = (v.LINEN, v.TORCH)
    QUICK_ENVS = ("CartPole-v1",)
    QUICK_SMALL_SEEDS = 2
    # --grid gpu: (a) torch at its GPU best first, torch on envs in torch compiled with CUDA graphs beside Linen and
    # torch.compile with graphs (GPU_GRAPH_VARIANTS) on GPU_GRAPH_BLOCKS; (b) seeds GPU_SEEDS of CartPole-v1 small for
    # GPU_SEED_VARIANTS, so that the GPU answer has intervals; last, (f) the rest of GPU_VARIANTS in GPU_SIZE_ORDER:
    # every fully compiled variant, torch env-jit, torch.compile with and without CUDA graphs, torch on envs in torch
    # eager, compiled and with graphs (CartPole-v1 only), one seed
    GPU_VARIANTS = (v.LINEN, v.NNX_CACHED, v.NNX_TREE, v.EQUINOX, v.LINEN_SCAN, v.TORCH, v.TORCH_COMPILE,
                    v.TORCH_COMPILE_CUDAGRAPHS, v.TORCH_NATIVE, v.TORCH_NATIVE_COMPILE, v.TORCH_NATIVE_COMPILE_CUDAGRAPHS)
    GPU_SIZE_ORDER = (("CartPole-v1", "small"), ("CartPole-v1", "large"), ("Breakout-MinAtar", "small"),
                      ("Breakout-MinAtar", "large"), ("CartPole-v1", "medium"))
    GPU_GRAPH_VARIANTS = (v.LINEN, v.TORCH_COMPILE_CUDAGRAPHS, v.TORCH_NATIVE_COMPILE_CUDAGRAPHS)
    GPU_GRAPH_BLOCKS = (("CartPole-v1", "small"), ("CartPole-v1", "large"), ("Acrobot-v1", "small"))
    GPU_SEED_VARIANTS = (v.LINEN, v.EQUINOX, v.LINEN_SCAN, v.TORCH, v.TORCH_COMPILE, v.TORCH_COMPILE_CUDAGRAPHS,
                         v.TORCH_NATIVE_COMPILE, v.TORCH_NATIVE_COMPILE_CUDAGRAPHS)
    GPU_SEEDS = (2, 3)
    QUICK_GPU_SEED_VARIANTS = (v.LINEN, v.TORCH)

    def runs(self, choices):
        """Each variant at small and large on ENVS, at medium on all 12 envs (--quick: CartPole-v1); then the
        synchronised runs on SYNC_ENVS at each size, no scan, at large SYNC_AT_LARGE's."""
        if choices.grid != "default":
            return []
        variants = self.QUICK_VARIANTS if choices.quick else self.VARIANTS
        envs = self.QUICK_ENVS if choices.quick else self.ENVS
        medium_envs = self.QUICK_ENVS if choices.quick else GRID_ENVS
        grid = [config for size in SIZES
                for config in product(self.name, medium_envs if size == "medium" else envs, (size,), variants,
                                      choices.num_envs)]
        return grid + [Config(self.name, variant.script, variant.mode, env, size, choices.num_envs, "sync")
                       for size, env, variant in itertools.product(SIZES, self.SYNC_ENVS, variants)
                       if variant is not v.LINEN_SCAN and (size != "large" or variant in self.SYNC_AT_LARGE)]

    def reference_runs(self, choices, size):
        """--grid reference: every variant at one size on ENVS, async."""
        return product(self.name, self.ENVS, (size,), self.VARIANTS, choices.num_envs)

    def gpu_graph_runs(self, choices):
        """(a) the CUDA-graph designs beside Linen, on GPU_GRAPH_BLOCKS (--quick: the first)."""
        blocks = self.GPU_GRAPH_BLOCKS[:1] if choices.quick else self.GPU_GRAPH_BLOCKS
        return [Config(self.name, variant.script, variant.mode, env, size, choices.num_envs, "async")
                for env, size in blocks for variant in self.GPU_GRAPH_VARIANTS]

    def gpu_seed_runs(self, choices):
        """(b) seeds GPU_SEEDS of CartPole-v1 small, each a configuration of its seed (--quick: seed 2 of two)."""
        variants, seeds = (self.QUICK_GPU_SEED_VARIANTS, self.GPU_SEEDS[:1]) if choices.quick else (
            self.GPU_SEED_VARIANTS, self.GPU_SEEDS)
        return [Config(self.name, variant.script, variant.mode, "CartPole-v1", "small", choices.num_envs, "async",
                       seed=seed) for seed in seeds for variant in variants]

    def gpu_runs(self, choices):
        """(f) every GPU variant in GPU_SIZE_ORDER but the runs of (a) (--quick: the first block)."""
        order = self.GPU_SIZE_ORDER[:1] if choices.quick else self.GPU_SIZE_ORDER
        first = set(self.gpu_graph_runs(choices))
        return [config for env, size in order for variant in self.GPU_VARIANTS
                if (not variant.classic_only or env in CLASSIC_ENVS) and (config := Config(
                    self.name, variant.script, variant.mode, env, size, choices.num_envs, "async")) not in first]

    def min_seeds(self, config, choices):
        """The small async runs give their answer over seeds."""
        if config.size == "small" and config.timing == "async":
            return self.QUICK_SMALL_SEEDS if choices.quick else self.SMALL_SEEDS
        return 1

    def iterations(self, config, workload):
        return workload.exp7_large_iterations if config.size == "large" else super().iterations(config, workload)


class Exp8(Experiment):
    """DQN (default grid): does the framework matter more for DQN than for PPO? CleanRL's CartPole-v1 DQN in seven
    designs (first exp4's four, torch and Linen on Gymnasium's NumPy env and on gymnax, then torch.compile, NNX tree
    mode and Equinox on gymnax) on two envs with SEEDS seeds (more with --repeats), one env each; and Linen's (WIDE)
    at WIDE_NUM_ENVS envs (as many transitions and gradient steps, 16 x fewer steps of its compiled loop). Then
    Breakout-MinAtar (MINATAR_ENVS) for the variants on gymnax only, at one env: the Gymnasium scripts run only envs
    with a Gymnasium counterpart, which MinAtar has not. The DQN workload (workload.DQN_WORKLOAD), not PPO's."""

    name, topic = "exp8", "DQN across frameworks and env backends: does the framework matter more than for PPO"
    answer_rank, headline_rank = 6, 2
    carries, shared_windows, learning, section = ("num_envs",), False, "own", "dqn"
    ppo_beside = "exp4"  # the PPO experiment whose designs its section sets beside its own (their analogues)
    curves = ""  # its section draws its own
    VARIANTS = (v.DQN_TORCH_GYMNASIUM, v.DQN_LINEN_GYMNASIUM, v.DQN_TORCH, v.DQN_LINEN, v.DQN_TORCH_COMPILE, v.DQN_NNX,
                v.DQN_EQUINOX)
    ENVS = ("CartPole-v1", "Acrobot-v1")
    WIDE = v.DQN_LINEN
    WIDE_NUM_ENVS = 16
    MINATAR_ENVS = ("Breakout-MinAtar",)
    MINATAR_VARIANTS = tuple(variant for variant in VARIANTS if variant.backend == v.GYMNAX)
    SEEDS = 3
    QUICK_ENVS = ("CartPole-v1",)  # no MinAtar run in --quick
    QUICK_SEEDS = 1
    # --grid gpu: the DQN scripts on gymnax (the Gymnasium ones step a CPU env), CartPole-v1, at GPU_DQN_WORKLOAD
    GPU_VARIANTS = (v.DQN_LINEN, v.DQN_NNX, v.DQN_EQUINOX, v.DQN_TORCH, v.DQN_TORCH_COMPILE,
                    v.DQN_TORCH_COMPILE_CUDAGRAPHS)
    GPU_ENVS = ("CartPole-v1",)

    def runs(self, choices):
        """Per env of ENVS the DQN scripts at 1 env, then the wide run; then the gymnax ones at 1 env on MINATAR_ENVS
        (--quick: CartPole-v1 alone)."""
        if choices.grid != "default":
            return []
        envs = self.QUICK_ENVS if choices.quick else self.ENVS
        runs = [(env, variant, num_envs) for env in envs
                for variant, num_envs in [*((variant, 1) for variant in self.VARIANTS),
                                          (self.WIDE, self.WIDE_NUM_ENVS)]]
        if not choices.quick:
            runs += [(env, variant, 1) for env in self.MINATAR_ENVS for variant in self.MINATAR_VARIANTS]
        return [Config(self.name, variant.script, variant.mode, env, "small", num_envs, "async")
                for env, variant, num_envs in runs]

    def reference_runs(self, choices):
        """--grid reference: the seven designs at 1 env on the first of ENVS, CleanRL's CartPole-v1."""
        return [Config(self.name, variant.script, variant.mode, self.ENVS[0], "small", 1, "async")
                for variant in self.VARIANTS]

    def gpu_runs(self, choices):
        return [Config(self.name, variant.script, variant.mode, env, "small", 1, "async") for env in self.GPU_ENVS
                for variant in self.GPU_VARIANTS]

    def min_seeds(self, config, choices):
        return self.QUICK_SEEDS if choices.quick else self.SEEDS


class Exp9(Experiment):
    """NumPy or JAX for my own env? Training on Doors (doors.py: a gridworld written in NumPy and in JAX, one MDP), as
    the published study's second source compared it: torch and Linen on the NumPy env (a Python loop over env copies
    and the NumPy-vectorised env), Linen on the JAX env, and the JAX env with WIDE_FACTOR x the envs (PPO keeps its
    batch, 16 x fewer steps per env; DQN its transitions and gradient steps), plus torch on the JAX env and the fully
    compiled JAX variants; SEEDS seeds. PPO at the reference workload, DQN at the DQN workload."""

    name, topic = "exp9", "training on Doors, an env written in NumPy and in JAX: NumPy or JAX for my own env"
    answer_rank, headline_rank = 7, 3
    carries, shared_windows, learning, section, curves = ("num_envs",), False, "own", "doors", ""
    ENVS = ("doors:Doors-v0",)
    PPO_VARIANTS = (v.TORCH_GYMNASIUM, v.TORCH_GYMNASIUM_VECTOR, v.LINEN_GYMNASIUM, v.LINEN_GYMNASIUM_VECTOR, v.TORCH,
                    v.LINEN, v.NNX_TREE, v.EQUINOX, v.LINEN_SCAN)
    DQN_VARIANTS = (v.DQN_TORCH_GYMNASIUM, v.DQN_LINEN_GYMNASIUM, v.DQN_TORCH, v.DQN_LINEN, v.DQN_NNX, v.DQN_EQUINOX)
    WIDE = (v.LINEN, v.DQN_LINEN)
    WIDE_FACTOR = 16
    SEEDS = 3
    QUICK_PPO_VARIANTS = (v.TORCH_GYMNASIUM_VECTOR, v.LINEN)
    QUICK_DQN_VARIANTS = (v.DQN_TORCH_GYMNASIUM, v.DQN_LINEN)
    QUICK_SEEDS = 1

    def runs(self, choices):
        """Per env of ENVS, PPO's variants at the reference number of envs, then the wide one; DQN's at one env, then
        the wide one (--quick: two of each, no wide run)."""
        if choices.grid != "default":
            return []
        ppo = self.QUICK_PPO_VARIANTS if choices.quick else self.PPO_VARIANTS
        dqn = self.QUICK_DQN_VARIANTS if choices.quick else self.DQN_VARIANTS
        runs = [(env, variant, choices.num_envs) for env in self.ENVS for variant in ppo]
        runs += [] if choices.quick else [(env, self.WIDE[0], choices.num_envs * self.WIDE_FACTOR) for env in self.ENVS]
        runs += [(env, variant, 1) for env in self.ENVS for variant in dqn]
        runs += [] if choices.quick else [(env, self.WIDE[1], self.WIDE_FACTOR) for env in self.ENVS]
        return [Config(self.name, variant.script, variant.mode, env, "small", num_envs, "async")
                for env, variant, num_envs in runs]

    def min_seeds(self, config, choices):
        return self.QUICK_SEEDS if choices.quick else self.SEEDS

    def num_steps(self, config, workload):
        """Its PPO runs keep the reference batch at any number of envs."""
        return workload.num_envs * workload.num_steps // config.num_envs


class Exp12(Experiment):
    """Continuous control on expensive envs: does the framework matter less when the env is expensive? On a CPU its
    sitting is tools/exp12.py (its report report/continuous.py), which runs JAX_ENV_VARIANTS and GYMNASIUM_VARIANTS at
    CPU_WORKLOAD. --grid gpu runs the continuous-action scripts on Brax's envs, where those are meant to run:
    GPU_NUM_ENVS envs x GPU_NUM_STEPS steps, the workload's epochs and minibatches, the small model. --grid reference
    runs the CPU sitting's designs at its workload on hopper (Brax) and Hopper-v5 (MuJoCo's C engine, the Gymnasium
    pair's): a run's number of envs, which its name carries, tells the two workloads apart."""

    name, topic = "exp12", "continuous control on expensive envs: does the framework matter less"
    command_set = "tools/exp12.py"
    report_module = "continuous"
    answer_rank, headline_rank = 8, 8
    carries, shared_windows, learning, curves, section = ("num_envs",), False, "own", "", "continuous"
    JAX_ENV_VARIANTS = (v.CONTINUOUS_LINEN, v.CONTINUOUS_NNX, v.CONTINUOUS_EQUINOX, v.CONTINUOUS_TORCH,
                        v.CONTINUOUS_TORCH_COMPILE)
    GYMNASIUM_VARIANTS = (v.CONTINUOUS_TORCH_GYMNASIUM, v.CONTINUOUS_LINEN_GYMNASIUM)
    CPU_WORKLOAD = (8, 256, 10, 32)  # CleanRL's: num_envs num_steps update_epochs num_minibatches
    REFERENCE_ENVS = (("hopper", JAX_ENV_VARIANTS), ("Hopper-v5", GYMNASIUM_VARIANTS))
    GPU_VARIANTS = JAX_ENV_VARIANTS
    GPU_ENVS = ("hopper", "ant")
    GPU_NUM_ENVS, GPU_NUM_STEPS = 2048, 64  # a batch of 131,072 steps, Brax's own PPO's order
    QUICK_VARIANTS, QUICK_NUM_ENVS = (v.CONTINUOUS_LINEN, v.CONTINUOUS_TORCH), 128

    def reference_runs(self, choices):
        """--grid reference: the CPU sitting's designs on REFERENCE_ENVS at CPU_WORKLOAD."""
        return [Config(self.name, variant.script, variant.mode, env, "small", self.CPU_WORKLOAD[0], "async")
                for env, variants in self.REFERENCE_ENVS for variant in variants]

    def gpu_runs(self, choices):
        envs, variants = (self.GPU_ENVS[:1], self.QUICK_VARIANTS) if choices.quick else (self.GPU_ENVS,
                                                                                        self.GPU_VARIANTS)
        num_envs = self.QUICK_NUM_ENVS if choices.quick else self.GPU_NUM_ENVS
        return [Config(self.name, variant.script, variant.mode, env, "small", num_envs, "async")
                for env in envs for variant in variants]

    def cpu_workload(self, config: Config) -> bool:
        return config.num_envs == self.CPU_WORKLOAD[0]

    def iterations(self, config, workload):
        return workload.exp12_iterations

    def num_steps(self, config, workload):
        return self.CPU_WORKLOAD[1] if self.cpu_workload(config) else self.GPU_NUM_STEPS

    def update_of(self, config, workload):
        return self.CPU_WORKLOAD[2:] if self.cpu_workload(config) else super().update_of(config, workload)


class Exp14(Experiment):
    """What a CNN changes: every framework's PPO with a convolutional network. On a CPU its sitting is tools/exp14.py
    (its report report/cnn.py), not the sweep's grids. --grid gpu runs its cases there at the CPU sitting's
    workloads: MinAtar's CNN (--network cnn) on Breakout-MinAtar, small (16 channels, 128 units) and medium (the wide
    one, 64 channels and 512 units), at the reference workload, in every gymnax framework; the Nature CNN on
    Breakout-v5 (ale-py's C++ env on the host, the agent on the GPU) at CleanRL's workload in every Atari script."""

    name, topic = "exp14", "what a CNN changes: convolutional agents"
    command_set = "tools/exp14.py"
    report_module = "cnn"
    answer_rank, headline_rank = 9, 9
    carries, shared_windows, learning, curves, section = ("num_envs",), False, "own", "", "cnn"
    MINATAR_VARIANTS = (v.LINEN, v.NNX_CACHED, v.NNX_TREE, v.EQUINOX, v.TORCH, v.TORCH_COMPILE)
    ATARI_VARIANTS = (v.ATARI_LINEN, v.ATARI_NNX, v.ATARI_EQUINOX, v.ATARI_TORCH, v.ATARI_TORCH_COMPILE)
    MINATAR_ENV, ATARI_ENV, ATARI_SIZE = "Breakout-MinAtar", "Breakout-v5", "nature"
    MINATAR_SIZES = ("small", "medium")
    ATARI_WORKLOAD = (8, 128, 4, 4)  # CleanRL's: num_envs num_steps update_epochs num_minibatches
    # the report's name of each case, (env, size): the CPU sitting's (tools/exp14.py)
    CASES = {(MINATAR_ENV, "small"): "MinAtar CNN, small", (MINATAR_ENV, "medium"): "MinAtar CNN, wide",
             (ATARI_ENV, ATARI_SIZE): "Nature CNN"}
    QUICK_MINATAR_VARIANTS, QUICK_ATARI_VARIANTS = (v.LINEN, v.TORCH), (v.ATARI_LINEN, v.ATARI_TORCH)

    def gpu_runs(self, choices):
        """MinAtar's CNN at each size, then the Nature CNN (--quick: small, and two scripts of each)."""
        minatar, atari = (self.QUICK_MINATAR_VARIANTS, self.QUICK_ATARI_VARIANTS) if choices.quick else (
            self.MINATAR_VARIANTS, self.ATARI_VARIANTS)
        sizes = self.MINATAR_SIZES[:1] if choices.quick else self.MINATAR_SIZES
        return ([Config(self.name, variant.script, variant.mode, self.MINATAR_ENV, size, choices.num_envs, "async")
                 for size in sizes for variant in minatar]
                + [Config(self.name, variant.script, variant.mode, self.ATARI_ENV, self.ATARI_SIZE,
                          self.ATARI_WORKLOAD[0], "async") for variant in atari])

    def atari(self, config: Config) -> bool:
        return config.variant.algorithm == v.PPO_ATARI

    def num_steps(self, config, workload):
        return self.ATARI_WORKLOAD[1] if self.atari(config) else workload.num_steps

    def update_of(self, config, workload):
        return self.ATARI_WORKLOAD[2:] if self.atari(config) else super().update_of(config, workload)

    def network_flags(self, config):
        return ("--network", "cnn") if config.variant.cnn else ()


class CommandSet(Experiment):
    """An experiment that only its command set runs, on any machine: tune.py's studies in one folder, which the command
    set resumes when rerun, and whose report its own report module writes (python -m report.<module> FOLDER); no run
    of any grid, no section of a sweep's report."""

    def __init__(self, name: str, topic: str, command_set: str, report_module: str):
        self.name, self.topic, self.command_set, self.report_module = name, topic, command_set, report_module


WARMUP, EXP1, EXP2, EXP3, EXP4 = Warmup(), Exp1(), Exp2(), Exp3(), Exp4()
EXP5, EXP6, EXP7, EXP8, EXP9, EXP12, EXP14 = Exp5(), Exp6(), Exp7(), Exp8(), Exp9(), Exp12(), Exp14()
ALL = (WARMUP, EXP1, EXP2, EXP3, EXP4, EXP5, EXP6, EXP7, EXP8, EXP9, EXP12, EXP14)  # in run order
COMMAND_SETS = (  # the experiments only their command sets run
    CommandSet("exp10", "a search's wall time per DQN design, on Doors", "tools/exp10.sh", "search"),
    CommandSet("exp11", "the same PPO search as trials in processes or as populations in one process", "tools/exp11.py",
               "population"),
    CommandSet("exp13", "the same wall-clock budget spent four ways", "tools/exp13.py", "budget"),
    CommandSet("exp15", "the search at the trial lengths users run", "tools/exp15.py", "lengths"),
)
BY_NAME = {experiment.name: experiment for experiment in ALL + COMMAND_SETS}
EXPERIMENTS = tuple(experiment.name for experiment in ALL if not experiment.prepares)  # the grids' experiments
ONLY = EXPERIMENTS + tuple(experiment.name for experiment in COMMAND_SETS)  # what --only accepts
# what a run found outside runs/<exp>/ is taken for: the ranking if async, the compile modes if synchronised
UNFILED = {"async": EXP1.name, "sync": "sync"}

