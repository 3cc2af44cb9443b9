"""Summarise: one row per run, and summary.csv."""

import csv
import math

import numpy as np

from sweep.experiments import SIZES
from report.settings import COLUMNS, FINAL_RETURN_EPISODES, LABEL_COLORS, WINDOWS, WORK_FIELDS


def window_seconds(seconds, window):
    """The window's statistic (mean or median) over the iterations that exist in it; NaN when none do."""
    first, last, statistic = WINDOWS[window]
    values = seconds[first : last + 1]
    values = values[~np.isnan(values)]
    return float(statistic(values)) if values.size else math.nan


def summary_row(run, machine=""):
    """The run's summary.csv row (plus its label, machine kind and the RunSeries itself for the charts)."""
    return {
        "exp": run.condition.exp,
        "variant": run.variant,
        "compile_mode": run.compile_mode,
        "env": run.condition.env,
        "size": run.condition.size,
        "timing": run.condition.timing,
        "seed": run.seed,
        "num_iterations": run.num_iterations,
        **dict(zip(WORK_FIELDS, run.condition.work)),
        "startup_s": run.startup,
        "iter0_s": window_seconds(run.iteration_seconds, "iteration 0"),
        "iter1_7_mean_s": window_seconds(run.iteration_seconds, "iterations 1–7"),
        "iter8_99_median_s": window_seconds(run.iteration_seconds, "iterations 8–99"),
        "total_s": run.total,
        "rollout_8_99_median_s": window_seconds(run.rollout_seconds, "iterations 8–99"),
        "update_8_99_median_s": window_seconds(run.update_seconds, "iterations 8–99"),
        "final_return": float(np.mean(run.returns[-FINAL_RETURN_EPISODES:])) if run.returns.size else math.nan,
        "peak_memory_bytes": run.peak_memory,
        "peak_rss_bytes": run.peak_rss,
        "env_steps": run.env_steps,  # the run's env steps (a DQN run's: transitions), for its whole-run SPS
        "buffer_size": run.buffer_size,  # a DQN run's replay memory, for the header's workload line
        "agents": math.nan,  # an agent of a group: its group's number of agents, set with the groups
        "process_agents": 1,  # an agent of a group: the agents its process trained (a vmapped group's N)
        "path": str(run.path),
        "label": run.label,
        "machine": machine,
        "condition": run.condition,
        "run": run,
    }


def rank(reference):
    """Sort key placing values in the order of reference, unknown ones after it by name."""
    positions = {}
    for value in reference:
        positions.setdefault(value, len(positions))
    return lambda value: (positions.get(value, len(positions)), str(value))


def ordered(values, reference):
    """The distinct values in the order of reference, unknown ones after it by name."""
    return sorted(set(values), key=rank(reference))


def ordered_configs(rows, env_order):
    """The distinct (env, size) of the rows, envs by complexity, then sizes small to large."""
    env_rank, size_rank = rank(env_order), rank(SIZES)
    configs = {(row["env"], row["size"]) for row in rows}
    return sorted(configs, key=lambda config: (env_rank(config[0]), size_rank(config[1])))


def row_sort_key(row, env_order):
    """Rows by experiment, variant/mode, env complexity, size, number of envs, timing mode and seed (then path: the
    order never depends on the order the files were read in)."""
    label_rank, env_rank, size_rank = rank(LABEL_COLORS), rank(env_order), rank(SIZES)
    return (row["exp"], label_rank(row["label"]), env_rank(row["env"]), size_rank(row["size"]), num_envs(row) or 0,
            row["timing"], row["seed"], row["path"])


def csv_cell(value):
    """A CSV cell: empty for NaN."""
    return "" if isinstance(value, float) and math.isnan(value) else value


def write_summary_csv(rows, path):
    """Writes one row per run with the COLUMNS."""
    with path.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(COLUMNS)
        writer.writerows([csv_cell(row[column]) for column in COLUMNS] for row in rows)
    print(f"wrote {path}", flush=True)


def num_envs(row):
    """A row's number of envs as an int, None where its hyperparameters did not state one."""
    return int(row["num_envs"]) if str(row["num_envs"]).isdigit() else None


def num_steps(row):
    """A row's steps per env per rollout, NaN where its hyperparameters did not state them."""
    return float(row["num_steps"]) if str(row["num_steps"]).isdigit() else math.nan
