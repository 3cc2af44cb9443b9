"""The types the report's stages pass on: a run's condition and series, the sweep, a group of agents, a pair of
measurements (the sweep's own Config and Run, in sweep/, are what it runs: these are what the report reads)."""

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from report.settings import METRIC_NAMES


class SkippedRun(Exception):
    """An event file that plot.py cannot use: unfinished, corrupt, truncated or without its metadata."""


class Condition(NamedTuple):
    """What two runs must share to be compared: everything but the variant, compile mode, seed and length."""

    exp: str
    env: str
    size: str
    timing: str
    work: tuple  # the WORK_FIELDS values, as logged ('?' where a run did not log one)
    group: str = ""  # a grouped experiment's group folder name (runs of different groups are never paired)


@dataclass
class RunSeries:
    """One finished run: its condition and the series the charts use."""

    path: Path
    condition: Condition
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

    rows: list  # one summary row (dict) per run; row["run"] is the RunSeries
    systems: list  # (folder, system.json) of each folder that has one
    env_relative: dict  # env -> step time relative to the fastest env (empty without env_timing.json)
    env_order: list  # envs by complexity when known, else in the grid's order
    workload_files: list = field(default_factory=list)  # (folder, workload.json) of each folder that has one
    names: dict = field(default_factory=lambda: dict(METRIC_NAMES))  # metric -> name, windows as the runs hold them
    # (folder, SweepConditions) of each folder with sweeps.txt, records.txt or load.txt
    conditions: list = field(default_factory=list)
    machines: dict = field(default_factory=dict)  # machine kind -> the folders that ran on it, in reading order
    machine: str = ""  # in a sweep of several machine kinds, the part of one kind: its name, e.g. 'machine 2: …'
    groups: list = field(default_factory=list)  # the Groups of the grouped experiments


@dataclass
class Group:
    """One group of a grouped experiment: N agents trained by one process or by N processes, and the wall time to
    train them all."""

    path: Path
    label: str
    condition: Condition  # its agents' (the same for all)
    num_iterations: int
    agents: int
    processes: int
    parallel: int  # how many processes ran at a time
    wall: float  # launch of the first process to the exit of the last
    rows: list  # its agents' summary rows


def group_cell_key(group):
    """The cell of a group: env, model size, and the agents' workload and length."""
    return group.condition.env, group.condition.size, (*group.condition.work, group.num_iterations)


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
    loads: list  # 1-minute load average at the end of each run (records.txt; load.txt in older sweeps)
    span: tuple = ("", "")  # the first invocation's start and the last one's end, as sweeps.txt has them
    commands: list = field(default_factory=list)  # each invocation's command line ("" where sweeps.txt has none)


@dataclass
class Pair:
    """Two matched measurements of one condition: A's and B's time for one seed."""

    condition: Condition
    time_a: float
    time_b: float

    @property
    def speedup(self):
        """Speedup of A over B."""
        return self.time_b / self.time_a
