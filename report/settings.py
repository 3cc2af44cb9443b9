"""What is compared and how: the report's constants (the types its stages pass on are in types.py). The variants'
labels and baselines are the registry's (sweep/variants.py); their display order and colours are the palette's."""

import numpy as np

from report.palette import LABEL_COLORS, OTHER_COLORS  # noqa: F401 (the labels' display order, read from here)
from sweep import variants


# The variants whose whole iteration is compiled, in the ranking's order.
FULLY_COMPILED = tuple(row.label for row in variants.FULLY_COMPILED)


# The baseline each compiled mode is measured against in the compile-mode charts: the same framework one step
# less compiled, with the env stepped the same way (torch_compile jits the env, as torch env-jit does).
COMPILE_BASELINES = {row.label: row.baseline for row in variants.VARIANTS if row.baseline}


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


# A variant is "within" the fastest at the numbers of envs where its time is at most this factor of the fastest's.
WITHIN_FASTEST = 1.25


KEEPS_UP = 1.10  # within this of the fastest at every model size, a variant keeps up (seeds alone move it ~10 %)


FIT_LEVEL = 0.95  # the coverage of the intervals of the cost model's a and b


# The fields plot.py reads from a group's group.json (a variant whose every group ran one process for several agents
# is the vmapped one).
GROUP_FIELDS = ("script", "mode", "env_id", "agents", "processes", "parallel", "wall_seconds")


CI_LEVEL = 0.95  # the coverage of the confidence intervals over envs


# Fewer envs than this: an interval is the min–max range over envs, labelled so (docs/method.md, Statistics, says why).
MIN_ENVS_FOR_CI = 8


DPI = 110


# Reading and drawing run in this many processes by default (--workers): enough to use the 2 cores the full grid
# must plot on in under 10 s, few enough not to crowd a shared machine.
WORKERS = 2
