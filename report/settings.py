"""What is compared and how, and the types the report's stages pass on."""

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np


# What each experiment answers, for the line that names the experiments a sweep does not hold.
EXPERIMENT_TOPICS = {
    "exp1": "the fully compiled variants, async: the ranking", "exp2": "every compile mode per env, synchronised",
    "exp3": "every compile mode per model size, synchronised", "exp4": "the env backend against the framework",
    "exp5": "how the cost grows with the number of envs", "exp6": "many agents in one process against many processes",
    "exp7": "the ranking at each model size, with seeds",
    "exp8": "DQN across frameworks and env backends: does the framework matter more than for PPO",
    "exp9": "training on Doors, an env written in NumPy and in JAX: NumPy or JAX for my own env",
}


# Variant/compile-mode labels in display order, with colours: one hue per framework, darker = more compiled.
LABEL_COLORS = {
    "linen (none)": "#9ecae1", "linen (jit)": "#2171b5",
    "nnx (none)": "#a1d99b", "nnx (jit)": "#41ab5d", "nnx_cached (cached)": "#00441b", "nnx_tree (tree)": "#1b9e77",
    "equinox (none)": "#fbb4b9", "equinox (jit)": "#c51b8a",
    "torch (none)": "#fdae6b", "torch (env-jit)": "#e6550d",
    "torch_compile (compile)": "#7f2704", "torch_compile (compile+cudagraphs)": "#756bb1",
    "linen_gymnasium (jit)": "#17becf", "linen_gymnasium (jit-vector)": "#0b6e7a",
    "torch_gymnasium (eager)": "#8c6d31", "torch_gymnasium (eager-vector)": "#d6a847",
    "torch_gymnasium (eager-async)": "#bf812d", "linen_gymnasium (jit-async)": "#5ab4ac", "linen_scan (scan)": "#08306b",
    "torch_native (eager)": "#f16913", "torch_native (compile)": "#a63603",
    # DQN's three torch designs in three hues (olive-brown, light orange, dark red: ΔE2000 > 25 between any two)
    "dqn_torch_gymnasium (eager)": "#7a5c1e", "dqn_linen_gymnasium (jit)": "#35978f", "dqn_torch (env-jit)": "#fd8d3c",
    "dqn_linen (jit)": "#4292c6", "dqn_torch_compile (compile)": "#a50f15",
    "dqn_torch_compile (compile+cudagraphs)": "#9e9ac8", "dqn_nnx (tree)": "#238b45", "dqn_equinox (jit)": "#ae017e",
}


OTHER_COLORS = ("#6a3d9a", "#e7298a", "#bcbd22", "#7f7f7f", "#cab2d6", "#b15928")  # hues no variant label uses


FULLY_COMPILED = ("linen (jit)", "nnx_cached (cached)", "torch_compile (compile)", "nnx_tree (tree)", "equinox (jit)",
                  "torch_compile (compile+cudagraphs)")


# exp7 ranks at each model size the fully compiled variants, the scan script's and torch env-jit beside them.
SIZE_LABELS = FULLY_COMPILED + ("linen_scan (scan)", "torch (env-jit)")


# The baseline each compiled mode is measured against in the compile-mode charts: the same framework one step
# less compiled, with the env stepped the same way (torch_compile jits the env, as torch env-jit does).
COMPILE_BASELINES = {
    "linen (jit)": "linen (none)", "nnx (jit)": "nnx (none)", "nnx_cached (cached)": "nnx (none)",
    "nnx_tree (tree)": "nnx (none)", "equinox (jit)": "equinox (none)", "torch (env-jit)": "torch (none)",
    "torch_compile (compile)": "torch (env-jit)", "torch_compile (compile+cudagraphs)": "torch_compile (compile)",
    "torch_native (compile)": "torch_native (eager)",
}


# Modes that run without compilation: the grid gives them fewer iterations (eager iterations).
EAGER_MODES = ("none",)


# exp4, the env-backend experiment: (framework, env backend) -> variant label; the 2 x 2 of EFFECT_CELLS gives each
# factor's effect, and torch on envs written in torch a fifth cell (what the JAX env's hand-over costs torch)
BACKEND_CELLS = {
    ("torch", "gymnax"): "torch (env-jit)", ("linen", "gymnax"): "linen (jit)",
    ("torch", "Gymnasium"): "torch_gymnasium (eager)", ("linen", "Gymnasium"): "linen_gymnasium (jit)",
    ("torch", "torch"): "torch_native (eager)",
}
EFFECT_CELLS = (("torch", "gymnax"), ("linen", "gymnax"), ("torch", "Gymnasium"), ("linen", "Gymnasium"))


# exp8: the DQN designs that have a PPO analogue in exp4 (the same framework on the same env backend), dqn -> PPO label:
# the four whose spread the DQN section sets beside PPO's
PPO_ANALOGUES = {
    "dqn_torch_gymnasium (eager)": "torch_gymnasium (eager)", "dqn_linen_gymnasium (jit)": "linen_gymnasium (jit)",
    "dqn_torch (env-jit)": "torch (env-jit)", "dqn_linen (jit)": "linen (jit)",
}


# Hyperparameters that set the work of one iteration; runs that differ in any of them are never compared.
WORK_FIELDS = ("num_envs", "num_steps", "update_epochs", "num_minibatches", "bootstrap_truncated")


# Iteration windows: label -> (first iteration, last iteration, statistic over the window).
WINDOWS = {
    "iteration 0": (0, 0, np.mean),
    "iterations 1–7": (1, 7, np.mean),
    "iterations 8–99": (8, 99, np.median),
}


# summary.csv columns; the timing ones are also the metrics the charts and tables use.
COLUMNS = (
    "exp", "variant", "compile_mode", "env", "size", "timing", "seed", "num_iterations", *WORK_FIELDS,
    "agents", "startup_s", "iter0_s", "iter1_7_mean_s", "iter8_99_median_s", "total_s",
    "rollout_8_99_median_s", "update_8_99_median_s", "final_return", "peak_memory_bytes", "peak_rss_bytes", "path",
)


METRIC_NAMES = {
    "total_s": "total duration",
    "startup_s": "start-up",
    "iter0_s": "iteration 0",
    "iter1_7_mean_s": "iterations 1–7",
    "iter8_99_median_s": "iterations 8–99",
    "rollout_8_99_median_s": "rollout, iterations 8–99",
    "update_8_99_median_s": "update, iterations 8–99",
}


# The window each windowed metric is taken over.
METRIC_WINDOWS = {
    "iter0_s": "iteration 0", "iter1_7_mean_s": "iterations 1–7", "iter8_99_median_s": "iterations 8–99",
    "rollout_8_99_median_s": "iterations 8–99", "update_8_99_median_s": "iterations 8–99",
}


# Metrics that grow with the number of iterations: compared only between runs of equal length.
LENGTH_METRICS = ("total_s",)


OVERHEAD_METRICS = ("startup_s", "iter0_s", "iter1_7_mean_s", "iter8_99_median_s")


SYNC_METRICS = ("rollout_8_99_median_s", "update_8_99_median_s")


COMPILE_METRICS = ("total_s", "iter0_s", "iter8_99_median_s", "rollout_8_99_median_s", "update_8_99_median_s")


FINAL_RETURN_EPISODES = 5


# The column that splits each env's final returns besides the variant: the model size, or what exp5 and exp6 vary.
FINAL_RETURN_SPLITS = {"exp5": ("num_envs", "N envs"), "exp6": ("agents", "N agents")}


# exp5: a variant is "within" the fastest at the numbers of envs where its time is at most this factor of the fastest's.
WITHIN_FASTEST = 1.25


KEEPS_UP = 1.10  # exp7: within this of the fastest at every size, a variant keeps up (seeds alone move it ~10 %)


FIT_LEVEL = 0.95  # the coverage of the intervals of the cost model's a and b


# exp6: the variant whose exp5 cost model predicts the vmapped process's gain, and the fields plot.py reads from a
# group's group.json (a variant whose every group ran one process for several agents is the vmapped one).
PREDICTION_LABEL = "linen (jit)"


GROUP_FIELDS = ("script", "mode", "env_id", "agents", "processes", "parallel", "wall_seconds")


CI_LEVEL = 0.95  # the coverage of the confidence intervals over envs


# Fewer envs than this: an interval is the min–max range over envs, labelled so (docs/method.md, Statistics, says why).
MIN_ENVS_FOR_CI = 8


DPI = 110


# Reading and drawing run in this many processes by default (--workers): enough to use the 2 cores the full grid
# must plot on in under 10 s, few enough not to crowd a shared machine.
WORKERS = 2


class SkippedRun(Exception):
    """An event file that plot.py cannot use: unfinished, corrupt, truncated or without its metadata."""


class Config(NamedTuple):
    """What two runs must share to be compared: everything but the variant, compile mode, seed and length."""

    exp: str
    env: str
    size: str
    timing: str
    work: tuple  # the WORK_FIELDS values, as logged ('?' where a run did not log one)
    group: str = ""  # exp6: the group folder's name (runs of different groups are never paired)


@dataclass
class Run:
    """One finished run: its configuration and the series the charts use."""

    path: Path
    config: Config
    variant: str
    compile_mode: str
    seed: int
    num_iterations: int
    startup: float
    total: float
    iteration_seconds: np.ndarray  # time/iteration by iteration index, NaN where not logged
    rollout_seconds: np.ndarray  # time/rollout, all NaN without sync timing
    update_seconds: np.ndarray
    return_steps: np.ndarray  # global steps at which an episodic return was logged
    returns: np.ndarray
    return_seconds: np.ndarray  # cumulative time/iteration at the end of the iteration of each return
    peak_memory: float
    peak_rss: float = math.nan
    env_steps: float = math.nan  # the global step at the end of the last iteration (charts/SPS), NaN where not logged
    buffer_size: int | None = None  # a DQN run's replay memory in transitions (its hyperparameters); None for PPO

    @property
    def label(self):
        """Variant and compile mode, e.g. 'linen (jit)'."""
        return f"{self.variant.removeprefix('ppo_')} ({self.compile_mode})"


@dataclass
class Sweep:
    """Every finished run of the input folders, with the machine, workload and env timing files found beside them."""

    rows: list  # one summary row (dict) per run; row["run"] is the Run
    systems: list  # (folder, system.json) of each folder that has one
    env_relative: dict  # env -> step time relative to the fastest env (empty without env_timing.json)
    env_order: list  # envs by complexity when known, else in the grid's order
    workload_files: list = field(default_factory=list)  # (folder, workload.json) of each folder that has one
    names: dict = field(default_factory=lambda: dict(METRIC_NAMES))  # metric -> name, windows as the runs hold them
    conditions: list = field(default_factory=list)  # (folder, SweepConditions) of each folder with sweeps.txt or load.txt
    machines: dict = field(default_factory=dict)  # machine kind -> the folders that ran on it, in reading order
    machine: str = ""  # in a sweep of several machine kinds, the part of one kind: its name, e.g. 'machine 2: …'
    groups: list = field(default_factory=list)  # the exp6 Groups


@dataclass
class Group:
    """One exp6 group: N agents trained by one process or by N processes, and the wall time to train them all."""

    path: Path
    label: str
    config: Config  # its agents' (the same for all)
    num_iterations: int
    agents: int
    processes: int
    parallel: int  # how many processes ran at a time
    wall: float  # launch of the first process to the exit of the last
    rows: list  # its agents' summary rows


@dataclass(frozen=True)
class ChartFolder:
    """Where a section's charts go; for one machine kind of a sweep of several, the file suffix and the kind's name."""

    path: Path
    suffix: str = ""  # e.g. '_machine2': ranking_machine2.png
    machine: str = ""  # e.g. 'machine 2: Intel Xeon, NVIDIA H100 80GB HBM3', added under the chart's title


@dataclass
class SweepConditions:
    """What benchmark.sh recorded about the sweep itself: wall time per invocation, load average as each run ended."""

    wall_seconds: list  # one per invocation of benchmark.sh that ran to its end (sweeps.txt)
    loads: list  # 1-minute load average at the end of each run (load.txt)
    span: tuple = ("", "")  # the first invocation's start and the last one's end, as sweeps.txt has them
    commands: list = field(default_factory=list)  # each invocation's command line ("" where sweeps.txt has none)


@dataclass
class Pair:
    """Two matched measurements of one configuration: A's and B's time for one seed."""

    config: Config
    time_a: float
    time_b: float

    @property
    def speedup(self):
        """Speedup of A over B."""
        return self.time_b / self.time_a
