"""How long runs take and how much memory they need: a prior per script family (rough costs on a 2-core CPU), refined
by the durations a sweep records; and a peak-memory model that refuses a run that would not fit."""
import re
from collections import Counter
from dataclasses import dataclass, field

from sweep.experiments import Config, dqn_minatar, obs_size

# THE PRIOR (docs/method.md, How long a sweep takes, has the measurements behind each figure): rough costs per cost
# family (sweep/variants.py) for the reference workload (32 envs x 256 steps, 10 epochs). They only order the runs
# until runs of this sweep are timed. A run costs FIXED + iterations x (LOOP + the rest of ITERATION x the batch over
# the reference batch): LOOP is what an iteration costs whatever the number of envs (Python and dispatch per step),
# the rest grows with the batch, for the small model twice as fast on a MinAtar env (observation 400 and more, not 2
# to 6).
PRIOR = {  # class: (FIXED s, LOOP ms, ITERATION ms at small, medium, large)
    "jax": (8, 10, (110, 900, 36000)),
    "jax-eager": (28, 50000, (60000, 70000, 100000)),
    "torch": (6, 200, (300, 2000, 40000)),
    "torch-eager": (9, 14000, (15000, 16000, 55000)),
    "compile": (22, 200, (300, 2000, 40000)),
    "gymnasium": (4, 50, (270, 4000, 40000)),
    "gymnasium-vector": (4, 50, (150, 2000, 40000)),
    "torch-native": (4, 80, (180, 1900, 40000)),
    "torch-native-compile": (20, 20, (90, 1600, 40000)),
    # the continuous-action scripts at their experiment's CPU workload (8 envs x 256 steps, 10 epochs of 32 minibatches) on its
    # expensive envs, from its CPU sitting (results/cpu-2core-exp12): the env sets an iteration's cost (LOOP, the same
    # figure at every size, so the batch term is nil); FIXED the start-up and a cold iteration 0. The JAX-env scripts
    # on Brax's hopper (0.53-0.64 s; the env's compilation about 20 s), torch on it eager and compiled (2.08, 1.67 s),
    # the Gymnasium pair on MuJoCo's Hopper-v5 (0.73, 1.31 s)
    "continuous-jax": (21, 570, (570, 570, 570)),
    "continuous-torch": (28, 1900, (1900, 1900, 1900)),
    "continuous-gymnasium": (5, 1000, (1000, 1000, 1000)),
}
# --grid gpu's prior, the same model for one GPU (an H100), from the one look at an H100; CUDA graphs and torch on
# envs in torch guesses. On a GPU an iteration is bound by launches and Python (LOOP) until the batch is large.
GPU_PRIOR = {
    "jax": (12, 22, (24, 60, 217)),
    "torch": (6, 618, (620, 660, 800)),
    "compile": (25, 483, (485, 520, 680)),
    "compile-cudagraphs": (30, 150, (160, 200, 380)),
    "torch-native": (5, 440, (450, 480, 600)),
    "torch-native-compile": (40, 150, (160, 200, 380)),
    "torch-native-compile-cudagraphs": (45, 40, (50, 90, 300)),  # a replay per step: launches gone, a guess
    # the continuous-action scripts on Brax (MJX) envs, guesses: compiling the env takes a minute on a CPU; a step
    # of 2,048 envs costs milliseconds, so the iteration grows with the batch; torch adds its launches per step and
    # per minibatch
    "continuous-jax": (90, 50, (60, 120, 400)),
    "continuous-torch": (90, 700, (80, 140, 420)),
    # the Atari scripts (one network, the Nature CNN: one ITERATION figure), guesses from the CNN sitting on a CPU
    # (results/cpu-2core-exp14): ale-py's 8 envs step on the host, about 1.5 ms a step; the agent's call per step adds
    # its launches (JAX one compiled call, eager torch a dozen kernels); the update of CleanRL's small batch is
    # milliseconds per minibatch. A run of MinAtar's CNN (--network cnn) takes its script's figures above: a guess
    "atari-jax": (25, 400, (740,)),
    "atari-torch": (8, 640, (2140,)),
    "atari-compile": (60, 510, (1200,)),
}
# --grid gpu's DQN runs: (FIXED s, ms per 10,000 transitions at one env); guesses from the PPO figures above: JAX's
# compiled loop about 0.1 ms per transition, torch's eager step about 1.5 ms
GPU_DQN_PRIOR = {
    "dqn-linen": (12, 1000), "dqn-nnx": (12, 1000), "dqn-equinox": (12, 1000), "dqn-torch": (6, 15000),
    "dqn-torch-compile": (30, 12000), "dqn-torch-compile-cudagraphs": (30, 4000),
}
# The DQN runs: (FIXED s, ms per 10,000 transitions at one env) per script, fitted to the whole-process durations of
# the DQN reference sitting on CartPole-v1 and Acrobot-v1: FIXED is start-up, iteration 0 and exit (torch.compile's
# compile, in iteration 1, included)
DQN_PRIOR = {
    "dqn-torch-gymnasium": (5, 1240),
    "dqn-linen-gymnasium": (5, 1130),
    "dqn-torch": (6, 2010),
    "dqn-linen": (5, 200),
    "dqn-nnx": (5, 210),
    "dqn-equinox": (5, 190),
    "dqn-torch-compile": (19, 1820),
    "dqn-torch-compile-cudagraphs": (19, 1820),  # CUDA graphs need a GPU: on a CPU the figure of compile
}
# On a MinAtar env a DQN run's transitions cost this percentage of the figure above (an observation of 400, not 4 to
# 6, in the Q-network's first layer and in each replay write and sample): the median over the gymnax scripts'
# Breakout-MinAtar runs in the same sitting
DQN_MINATAR_PERCENT = 220
SIZES = ("small", "medium", "large")
REFERENCE_BATCH = 32 * 256

# THE PEAK MEMORY MODEL (docs/method.md, Peak memory, has the measurements): a run's peak resident memory = BASE +
# samples x (SAMPLE + OBS x observation size) bytes, samples = num_envs x num_steps, per memory family
# (sweep/variants.py), each figure the smallest of its family, rounded down: only a run that surely does not fit is
# refused. The model size is left out. A group of agents: the vmapped script's one process as one run of N x 32 envs;
# a group of processes as the runs of 32 envs that run at once. A DQN run: BASE + its replay memory
# (replay_memory_bytes).
MEMORY = {  # family: (BASE MB, SAMPLE bytes, OBS bytes)
    "jax": (640, 256, 8),
    "torch": (700, 900, 33),
    "torch_gymnasium": (330, 1150, 0),
    "linen_gymnasium": (550, 420, 0),
    "torch_native": (290, 1100, 0),  # the classic envs only: their observation in SAMPLE
    "continuous-jax": (640, 256, 8),  # the continuous-action scripts: as their discrete siblings
    "continuous-torch": (700, 900, 33),
    # the Atari scripts: the peak of the CNN sitting (results/cpu-2core-exp14) at its one workload (8 envs x 128
    # steps), no slope measured
    "atari-jax": (1000, 0, 0),
    "atari-torch": (700, 0, 0),
    # the DQN runs: the process's base, plus the replay memory (replay_memory_bytes)
    "dqn-jax": (350, 0, 0),
    "dqn-torch": (650, 0, 0),
    "dqn-torch-gymnasium": (300, 0, 0),
}


def waves(config: Config, parallel: int) -> int:
    """How many waves of processes a group of processes runs (1 for any other run)."""
    return -(-config.agents // parallel) if config.processes else 1


def prior_ms(config: Config, iterations: int, num_steps: int, update_epochs: int, parallel: int,
             gpu: bool = False) -> int:
    """The built-in rough cost of a run in ms (gpu: GPU_PRIOR's); of a group of agents: the vmapped script's one
    process of an N times wider batch, or N runs, `parallel` at a time (integer arithmetic, as the sweep has always
    estimated); scaled by its experiment's prior_percent on a CPU."""
    fixed_s, loop_ms, iteration_ms = (GPU_PRIOR if gpu else PRIOR)[config.variant.cost]
    envs = config.num_envs * config.agents if config.variant.num_seeds else config.num_envs
    env_percent = 200 if config.env.endswith("-MinAtar") and config.size == "small" else 100
    at_size = iteration_ms[0] if len(iteration_ms) == 1 else iteration_ms[SIZES.index(config.size)]
    batch_ms = ((at_size - loop_ms) * env_percent * envs * num_steps
                * (10 + update_epochs) // (100 * REFERENCE_BATCH * 20))
    prior = waves(config, parallel) * (fixed_s * 1000 + iterations * (loop_ms * num_steps // 256 + batch_ms))
    return prior if gpu else prior * config.experiment.prior_percent // 100


def dqn_prior_ms(config: Config, iterations: int, iteration_steps: int, gpu: bool = False) -> int:
    """The built-in rough cost of a DQN run in ms (gpu: GPU_DQN_PRIOR's): its per-transition cost does not fall
    with more envs (on a 2-core CPU the wider step costs about what the steps it replaces cost); on a MinAtar env
    DQN_MINATAR_PERCENT of it."""
    fixed_s, ms_per_10k = (GPU_DQN_PRIOR if gpu else DQN_PRIOR)[config.variant.cost]
    env_percent = DQN_MINATAR_PERCENT if dqn_minatar(config.env) else 100
    return fixed_s * 1000 + iterations * ms_per_10k * env_percent * iteration_steps // (100 * 10000)


def cost_group(config: Config) -> tuple:
    """Runs of one cost group cost about the same: same script, mode, size, number of envs and agents."""
    return config.script, config.mode, config.size, config.num_envs, config.agents


@dataclass
class Estimator:
    """The prior of each run, and the durations observed so far: a run of an observed cost group costs its group's
    mean; another its prior, scaled by what the observed runs took against their prior."""

    prior: callable  # Config -> ms
    observed_ms: Counter = field(default_factory=Counter)
    observed_count: Counter = field(default_factory=Counter)
    observed_total_ms: int = 0
    observed_prior_ms: int = 0

    def observe(self, config: Config, ms: int):
        group = cost_group(config)
        self.observed_ms[group] += ms
        self.observed_count[group] += 1
        self.observed_total_ms += ms
        self.observed_prior_ms += self.prior(config)

    def ms(self, config: Config) -> int:
        group = cost_group(config)
        if self.observed_count[group]:
            return self.observed_ms[group] // self.observed_count[group]
        prior = self.prior(config)
        return prior * self.observed_total_ms // self.observed_prior_ms if self.observed_prior_ms else prior

    def total_ms(self, configs) -> int:
        """The estimated duration of these runs (configurations that differ only by seed count once each)."""
        return sum(count * self.ms(config) for config, count in Counter(configs).items())

    def left(self, configs) -> str:
        return f"about {duration_text(self.total_ms(configs) // 1000)}"


def duration_text(seconds: int) -> str:
    """'42 s', '7 min', '3 h 05 min', '4 days 8 h'."""
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{(seconds + 30) // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 86400} days {seconds % 86400 // 3600} h"


def peak_memory_kb(config: Config, num_steps: int, parallel: int, buffer_size: int = 0) -> int:
    """A run's estimated peak RSS in KiB; a group's of agents: the vmapped script's one process of an N times wider
    batch, or the processes that run at once; a DQN run's: its base and its replay memory of buffer_size
    transitions."""
    base_mb, sample_bytes, obs_bytes = MEMORY[config.variant.memory]
    if config.dqn:
        return base_mb * 1024 + replay_memory_bytes(config.env, buffer_size) // 1024
    samples = config.num_envs * num_steps * (config.agents if config.variant.num_seeds else 1)
    copies = min(config.agents, parallel) if config.processes else 1
    return copies * (base_mb * 1024 + samples * (sample_bytes + obs_bytes * obs_size(config.env)) // 1024)


def replay_memory_bytes(env: str, buffer_size: int) -> int:
    """A DQN run's replay memory: per transition its observation and next observation (float32, obs_size(env)
    entries each) and 16 bytes of action, reward and flags; Breakout-MinAtar's 100,000 transitions about 320 MB."""
    return buffer_size * (2 * 4 * obs_size(env) + 16)


def available_memory_kb(environ) -> int | None:
    """BENCHMARK_MEM_AVAILABLE_KB, else MemAvailable of /proc/meminfo; None where neither is known (no check).
    ValueError for an override that is no positive number."""
    override = environ.get("BENCHMARK_MEM_AVAILABLE_KB")
    if override is not None:
        if not re.fullmatch(r"[1-9][0-9]*", override):
            raise ValueError(f"BENCHMARK_MEM_AVAILABLE_KB needs a positive number of KiB, not '{override}'")
        return int(override)
    try:
        with open("/proc/meminfo") as meminfo:
            return next((int(line.split()[1]) for line in meminfo if line.startswith("MemAvailable:")), None)
    except OSError:
        return None
