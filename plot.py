"""Reads the TensorBoard event files of benchmark sweeps and writes summary.csv, charts (PNG) and REPORT.md.

    python plot.py DIR [DIR ...] [--out OUT]
    python plot.py --compare DIR_A [DIR_A ...] --vs DIR_B [DIR_B ...] [--out OUT]

DIR is a sweep folder written by benchmark.sh (system.json, env_timing.json, optionally workload.json,
runs/<exp>/<run>/events.*; exp6: runs/exp6/<group>/group.json and one run folder per agent) or any folder
holding run folders; several DIRs (e.g. the shards of one sweep) are read as one sweep. A run's
configuration and workload come from its `hyperparameters` and `system` text summaries, never from its
folder name. Runs under runs/warmup/ are ignored. Runs found outside runs/<exp1|...|exp7>/ count as exp1
when async; sync ones are labelled "sync" and count as exp2 (those of model size small) and as exp3.

Speedup of A over B = time_B / time_A for matched configurations (same experiment, env, model size,
timing mode and per-iteration workload; for totals also the same number of iterations), paired by seed.
"""

import argparse
import csv
import itertools
import json
import math
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np
from google.protobuf.message import DecodeError
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
from scipy.stats import binom as binomial
from scipy.stats import t as student_t
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader

from sweep.experiments import GRID_ENVS


# --------------------------------------- settings: what is compared and how, and the types the stages pass on


EXPERIMENTS = ("exp1", "exp2", "exp3", "exp4", "exp5", "exp6", "exp7")
SIZES = ("small", "medium", "large")
# What each experiment answers, for the line that names the experiments a sweep does not hold.
EXPERIMENT_TOPICS = {
    "exp1": "the fully compiled variants, async: the ranking", "exp2": "every compile mode per env, synchronised",
    "exp3": "every compile mode per model size, synchronised", "exp4": "the env backend against the framework",
    "exp5": "how the cost grows with the number of envs", "exp6": "many agents in one process against many processes",
    "exp7": "the ranking at each model size, with seeds",
}
# Variant/compile-mode labels in display order, with colours: one hue per framework, darker = more compiled.
LABEL_COLORS = {
    "linen (none)": "#9ecae1", "linen (jit)": "#2171b5",
    "nnx (none)": "#a1d99b", "nnx (jit)": "#41ab5d", "nnx_cached (cached)": "#00441b", "nnx_tree (tree)": "#1b9e77",
    "equinox (none)": "#fbb4b9", "equinox (jit)": "#c51b8a",
    "torch (none)": "#fdae6b", "torch (env-jit)": "#e6550d",
    "torch_compile (compile)": "#7f2704", "torch_compile (compile+cudagraphs)": "#756bb1",
    "linen_gymnasium (jit)": "#17becf", "linen_gymnasium (jit-vector)": "#0b6e7a",
    "torch_gymnasium (eager)": "#8c6d31", "torch_gymnasium (eager-vector)": "#d6a847", "linen_scan (scan)": "#08306b",
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
}
# Modes that run without compilation: the grid gives them fewer iterations (eager iterations).
EAGER_MODES = ("none",)
# exp4, the env-backend experiment: (framework, env backend) -> variant label.
BACKEND_CELLS = {
    ("torch", "gymnax"): "torch (env-jit)", ("linen", "gymnax"): "linen (jit)",
    ("torch", "Gymnasium"): "torch_gymnasium (eager)", ("linen", "Gymnasium"): "linen_gymnasium (jit)",
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


# ------------------------------------------------------ load: event files and the sweep's own files into Runs


def warn(message):
    """Prints one warning line on stderr."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


def fail(message):
    """Stops with one error line on stderr and exit status 1."""
    sys.exit(f"plot.py: error: {message}")


class InProcess(Executor):
    """An executor that runs each call at once in this process (--workers 0)."""

    def submit(self, fn, /, *args, **kwargs):
        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as error:  # kept in the future, raised by .result() as a worker's would be
            future.set_exception(error)
        return future


def in_parallel(pool, calls):
    """Results of (function, *arguments) calls in call order, run in the pool."""
    return [future.result() for future in [pool.submit(*call) for call in calls]]


def parse_markdown_table(markdown):
    """Turns a two-column markdown table (|key|value| rows after a header and a |-|-| line) into a dict."""
    cells = (line.strip().strip("|").split("|", 1) for line in markdown.splitlines()[2:])
    return {cell[0].strip(): cell[1].strip() for cell in cells if len(cell) == 2}


def read_event_file(path):
    """Returns the scalars {tag: [(step, value), ...]} and the text tables {tag: {key: value}} of an event file.

    tensorboard's own loader stops at a truncated or corrupt record (it checks lengths and CRCs), so a
    damaged file reads as one whose last records are missing: without `time/total`, it is skipped.
    """
    scalars, tables = defaultdict(list), {}
    try:
        for event in LegacyEventFileLoader(str(path)).Load():
            for value in event.summary.value:
                add_summary_value(value, event.step, scalars, tables)
    except (DecodeError, UnicodeDecodeError, IndexError):
        raise SkippedRun("corrupt: a record is not a readable Event") from None
    return scalars, tables


def add_summary_value(value, step, scalars, tables):
    """Adds one summary value to the scalars (simple values) or the text tables (text-plugin tensors); others pass."""
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        scalars[value.tag].append((step, value.simple_value))
    elif kind == "tensor" and value.metadata.plugin_data.plugin_name == "text":
        tables[value.tag] = parse_markdown_table(value.tensor.string_val[0].decode())


def by_iteration(pairs, num_iterations):
    """Values of (iteration, value) pairs in an array indexed by iteration, NaN where missing."""
    values = np.full(num_iterations, np.nan)
    for step, value in pairs:
        if 0 <= step < num_iterations:
            values[step] = value
    return values


def group_folder(path):
    """The exp6 group folder of an agent's event file (runs/exp6/<group>/<agent>/events.*), else None."""
    return path.parents[1] if len(path.parents) > 2 and path.parents[2].name == "exp6" else None


def scalar_at_end(scalars, tag):
    """The last value logged under tag, NaN where it was not logged."""
    return scalars[tag][-1][1] if scalars[tag] else math.nan


def load_run(path):
    """Reads one event file into a Run; raises SkippedRun when it cannot be used."""
    scalars, tables = read_event_file(path)
    if "time/total" not in scalars:
        raise SkippedRun("unfinished, or cut or corrupt before its end (no time/total)")
    try:
        hyperparameters, system = tables["hyperparameters"], tables["system"]
        timing = "sync" if hyperparameters["sync_timing"].lower() == "true" else "async"
        group = group_folder(path)
        exp = "exp6" if group else path.parent.parent.name
        if exp not in EXPERIMENTS:
            exp = "sync" if timing == "sync" else "exp1"
        work = tuple(hyperparameters.get(name, "?") for name in WORK_FIELDS)
        config = Config(exp, hyperparameters["env_id"], hyperparameters["model_size"], timing, work,
                        group.name if group else "")
        variant, compile_mode = Path(system["script"]).stem, system["compile_mode"]
        seed = int(hyperparameters["seed"])
    except (KeyError, ValueError) as error:
        raise SkippedRun(f"incomplete hyperparameters/system text summaries ({error!r})") from None
    total_step, total = scalars["time/total"][-1]
    if total_step < 1:
        raise SkippedRun("time/total logged at step 0: no iterations")
    iteration_seconds = by_iteration(scalars["time/iteration"], total_step)
    returns = np.array(scalars["charts/episodic_return"]).reshape(-1, 2)
    # Iteration i ends at the global step of its i-th charts/SPS point; NaN times if SPS was not logged.
    iteration_end_steps = np.sort([step for step, _ in scalars["charts/SPS"]])
    cumulative_seconds = np.nancumsum(iteration_seconds) if iteration_end_steps.size else np.full(total_step, np.nan)
    return_iterations = np.searchsorted(iteration_end_steps, returns[:, 0]).clip(0, total_step - 1)
    return Run(
        path=path,
        config=config,
        variant=variant,
        compile_mode=compile_mode,
        seed=seed,
        num_iterations=int(total_step),
        startup=scalars["time/startup"][0][1] if scalars["time/startup"] else math.nan,
        total=total,
        iteration_seconds=iteration_seconds,
        rollout_seconds=by_iteration(scalars["time/rollout"], total_step),
        update_seconds=by_iteration(scalars["time/update"], total_step),
        return_steps=returns[:, 0],
        returns=returns[:, 1],
        return_seconds=cumulative_seconds[return_iterations],
        peak_memory=scalar_at_end(scalars, "memory/peak_bytes"),
        peak_rss=scalar_at_end(scalars, "memory/peak_rss_bytes"),
    )


def load_runs(paths):
    """The Run of each path, or the reason it was skipped as a string."""
    results = []
    for path in paths:
        try:
            results.append(load_run(path))
        except (SkippedRun, OSError) as reason:
            results.append(str(reason))
        except Exception as error:  # an event file no check foresaw: skipped like the others, never a traceback
            results.append(f"unreadable ({type(error).__name__}: {error})")
    return results


def read_json(path, consequence=None):
    """The JSON object in path, or None: with a warning that states the consequence, when one is given."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        if consequence:
            warn(f"{path} not found: {consequence}")
    except (OSError, ValueError) as error:
        warn(f"{path} unreadable ({error}): {consequence or 'ignored'}")
    return None


def read_conditions(folder):
    """The folder's SweepConditions, or None when benchmark.sh recorded neither file (older sweeps, other machines)."""
    sweeps, loads = folder / "sweeps.txt", folder / "load.txt"
    if not sweeps.is_file() and not loads.is_file():
        return None
    try:
        invocations = [line.split() for line in sweeps.read_text().splitlines() if line.strip()] \
            if sweeps.is_file() else []
        wall = [float(fields[2]) for fields in invocations]
        commands = [" ".join(fields[4:]) for fields in invocations]
        load = [float(line.split()[1]) for line in loads.read_text().splitlines() if line.strip()] \
            if loads.is_file() else []
    except (IndexError, ValueError, OSError) as error:
        warn(f"ignoring the sweep's wall time and load records in {folder}: {error}")
        return None
    span = (invocations[0][0], invocations[-1][1]) if invocations else ("", "")
    return SweepConditions(wall_seconds=wall, loads=load, span=span, commands=commands)


def drop_duplicate_runs(runs, machine_of):
    """Keeps the newest file of runs that repeat the same variant, mode, config, length and seed on one machine kind."""
    newest = {}
    for run in sorted(runs, key=lambda run: run.path.stat().st_mtime):
        key = (run.label, run.config, run.num_iterations, run.seed, machine_of[run.path])
        if key in newest:
            warn(f"{run.path} repeats {newest[key].path}: using the newer file")
        newest[key] = run
    return list(newest.values())


def merged_env_timing(env_timings):
    """env -> step time relative to the fastest env, each env's step time from the first file that times it."""
    seconds = {}
    for timing in env_timings:
        for env, entry in timing.get("envs", {}).items():
            seconds.setdefault(env, entry["step_seconds"])
    fastest = min(seconds.values(), default=math.nan)
    return {env: step / fastest for env, step in seconds.items()}


def window_names(runs):
    """METRIC_NAMES with the steady-state window named by the iterations the runs really hold (e.g. 8–9)."""
    lengths = sorted({run.num_iterations for run in runs})
    first, last = WINDOWS["iterations 8–99"][:2]
    last = min(lengths[-1] - 1, last)
    if last < first:  # no run reaches the window: it keeps its full name, and the sections say it is empty
        return dict(METRIC_NAMES)
    held = f"iteration {first}" if last == first else f"iterations {first}–{last}"
    held = held if len(lengths) == 1 or lengths[0] - 1 >= last else f"iterations {first}+"
    return {metric: name.replace("iterations 8–99", held) for metric, name in METRIC_NAMES.items()}


def shared_window_runs(runs):
    """The runs whose lengths name the windows of the sections of exp1 to exp4: all but exp5's, exp6's and exp7's,
    which name their own (exp5's runs and exp7's large ones are shorter than the others), or all of them in a sweep of
    those alone."""
    return [run for run in runs if run.config.exp not in ("exp5", "exp6", "exp7")] or runs


def read_runs(folders, pool, chunks):
    """Every finished run under the folders (warm-up runs aside), each with the folder it was read from; the files are
    read in `chunks` calls in the pool (one per worker)."""
    folder_of = {}
    for folder in folders:
        found = [path for path in sorted(folder.rglob("events.out.tfevents.*")) if path.parent.parent.name != "warmup"]
        if not found:
            fail(f"no event files (events.out.tfevents.*, warm-up runs aside) under {folder}")
        folder_of.update(dict.fromkeys(found, folder))
    paths = list(folder_of)
    print(f"reading {len(paths)} event files under {', '.join(map(str, folders))}", flush=True)
    chunks = [paths[i::chunks] for i in range(chunks)]
    results = dict(zip([path for chunk in chunks for path in chunk],
                       itertools.chain.from_iterable(in_parallel(pool, [(load_runs, chunk) for chunk in chunks]))))
    runs = []
    for path in paths:
        if isinstance(results[path], Run):
            runs.append(results[path])
        else:
            warn(f"skipping {path}: {results[path]}")
    if not runs:
        fail(f"none of the {len(paths)} event files under {', '.join(map(str, folders))} is a finished run")
    return runs, folder_of


def gpu_model(system):
    """The GPU's model name from a system.json, None without a GPU."""
    gpu = system.get("gpu")
    return gpu.get("name", "?") if isinstance(gpu, dict) else gpu or None


def machine_kind(system):
    """What runs must share to be ranked or paired: the CPU model and the GPU model, e.g. 'AMD EPYC, no GPU'."""
    if system is None:
        return "unknown machine (no system.json)"
    return f"{system.get('cpu') or 'unknown CPU'}, {gpu_model(system) or 'no GPU'}"


def group_of(path, rows):
    """The Group that the group.json at path describes, from it and its agents' rows; None where the file is
    unreadable (read_json warns), else a string saying why the group cannot be used."""
    data = read_json(path, "its exp6 group is left out")
    if data is None:
        return None
    try:
        script, mode, env = (str(data[name]) for name in GROUP_FIELDS[:3])
        agents, processes, parallel = (int(data[name]) for name in ("agents", "processes", "parallel"))
        wall = float(data["wall_seconds"])
    except (KeyError, TypeError, ValueError) as error:
        return f"group.json has no usable {error} (it needs {', '.join(GROUP_FIELDS)})"
    label = f"{Path(script).stem.removeprefix('ppo_')} ({mode})"
    if min(agents, processes, parallel) < 1 or not wall > 0 or math.isinf(wall):
        return "group.json's agents, processes and parallel must be at least 1 and wall_seconds positive"
    if len(rows) != agents:
        return f"{len(rows)} of its {agents} agents' runs finished, so its wall time does not train {agents} agents"
    identities = {(row["label"], row["env"], row["config"], row["num_iterations"]) for row in rows}
    if len(identities) > 1 or rows[0]["label"] != label or rows[0]["env"] != env:
        return f"its agents' runs are not all {label} on {env} with one workload and length"
    return Group(path=path.parent, label=label, config=rows[0]["config"], num_iterations=rows[0]["num_iterations"],
                 agents=agents, processes=processes, parallel=parallel, wall=wall, rows=rows)


def read_groups(folders, rows):
    """The exp6 Groups under the folders (runs/exp6/<group>/group.json), each agent's row given its group's number of
    agents; one warning for each group that cannot be used and each folder of exp6 runs without a group.json."""
    agent_rows = defaultdict(list)
    for row in rows:
        if row["exp"] == "exp6":
            agent_rows[Path(row["path"]).parents[1]].append(row)
    files = sorted(path for folder in folders for path in folder.rglob("group.json")
                   if path.parent.parent.name == "exp6")
    groups = []
    for path in files:
        group = group_of(path, agent_rows.pop(path.parent, []))
        if isinstance(group, str):
            warn(f"leaving out the exp6 group {path.parent}: {group}")
        elif group:
            groups.append(group)
    for group in groups:
        for row in group.rows:
            row["agents"], row["process_agents"] = group.agents, group.agents // group.processes
    for folder in agent_rows:
        warn(f"leaving out the exp6 runs in {folder}: no group.json beside them")
    return groups


def load_sweep(folders, pool, workers=1):
    """Reads every finished run under the folders, plus the system.json, workload.json and env_timing.json beside them;
    the event files in one call per worker of the pool.

    A run belongs to the machine kind of the folder it was read from (that folder's system.json).
    """
    started = time.perf_counter()
    runs, folder_of = read_runs(folders, pool, max(workers, 1))
    systems = [(folder, read_json(folder / "system.json", "the report cannot name this machine")) for folder in folders]
    kinds = {folder: machine_kind(system) for folder, system in systems}
    machine_of = {run.path: kinds[folder_of[run.path]] for run in runs}
    runs = drop_duplicate_runs(runs, machine_of)
    print(f"read {len(runs)} finished runs in {time.perf_counter() - started:.1f} s", flush=True)
    workloads = [(folder, read_json(folder / "workload.json")) for folder in folders]
    timing_files = [folder / "env_timing.json" for folder in folders]
    env_timings = [read_json(path) for path in timing_files]
    if not any(env_timings):
        warn(f"{timing_files[0]} not found: no duration_vs_complexity.png; envs keep the grid's order")
    env_relative = merged_env_timing([timing for timing in env_timings if timing])
    envs = {run.config.env for run in runs}
    env_order = sorted(envs, key=lambda env: env_relative.get(env, math.inf)) if env_relative else list(GRID_ENVS)
    rows = [summary_row(run, machine_of[run.path]) for run in runs]
    rows.sort(key=lambda row: row_sort_key(row, env_order))
    groups = read_groups(folders, rows)
    conditions = [(folder, read_conditions(folder)) for folder in folders]
    machines = defaultdict(list)
    for folder, kind in kinds.items():
        machines[kind].append(folder)
    return Sweep(rows=rows, systems=[(f, s) for f, s in systems if s], env_relative=env_relative, env_order=env_order,
                 workload_files=[(f, w) for f, w in workloads if w], names=window_names(shared_window_runs(runs)),
                 conditions=[(f, c) for f, c in conditions if c], machines=dict(machines), groups=groups)


# -------------------------------------------------------------------- summarise: one row per run, summary.csv


def window_seconds(seconds, window):
    """The window's statistic (mean or median) over the iterations that exist in it; NaN when none do."""
    first, last, statistic = WINDOWS[window]
    values = seconds[first : last + 1]
    values = values[~np.isnan(values)]
    return float(statistic(values)) if values.size else math.nan


def summary_row(run, machine=""):
    """The run's summary.csv row (plus its label, machine kind and the Run itself for the charts)."""
    return {
        "exp": run.config.exp,
        "variant": run.variant,
        "compile_mode": run.compile_mode,
        "env": run.config.env,
        "size": run.config.size,
        "timing": run.config.timing,
        "seed": run.seed,
        "num_iterations": run.num_iterations,
        **dict(zip(WORK_FIELDS, run.config.work)),
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
        "agents": math.nan,  # exp6: its group's number of agents, set with the groups
        "process_agents": 1,  # exp6: the agents its process trained (a vmapped group's N), set with the groups
        "path": str(run.path),
        "label": run.label,
        "machine": machine,
        "config": run.config,
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


# -------- statistics: selecting and pairing runs, means, intervals, the ranking, break-even, the exp4 effects


def rows_of(rows, exp):
    """Rows of one experiment; runs found outside runs/<exp>/ are exp1 if async, exp2 (small) and exp3 if sync."""
    if exp == "exp2":
        return [row for row in rows if row["exp"] == "exp2" or (row["exp"] == "sync" and row["size"] == "small")]
    if exp == "exp3":
        return [row for row in rows if row["exp"] in ("exp3", "sync")]
    return [row for row in rows if row["exp"] == exp]


def where(rows, **fields):
    """Rows whose fields equal the given values."""
    return [row for row in rows if all(row[name] == value for name, value in fields.items())]


def metric_values(rows, metric):
    """The metric of the rows, NaNs left out."""
    return [row[metric] for row in rows if not math.isnan(row[metric])]


def scope(rows):
    """The envs rows cover, for chart titles: the env's name when only one, else their count."""
    envs = {row["env"] for row in rows}
    return next(iter(envs)) if len(envs) == 1 else f"{len(envs)} envs"


def paired(rows_a, rows_b, metric):
    """Pairs of A's and B's metric for every config and seed both ran; for LENGTH_METRICS also the same length.

    Runs of different workloads have different configs and are never paired; neither are different seeds.
    """
    by_key = []
    for rows in (rows_a, rows_b):
        values = {}
        for row in rows:
            if not math.isnan(row[metric]):
                length = row["num_iterations"] if metric in LENGTH_METRICS else None
                values[row["config"], length, row["seed"]] = row[metric]
        by_key.append(values)
    values_a, values_b = by_key
    return [Pair(key[0], values_a[key], values_b[key])
            for key in sorted(values_a.keys() & values_b.keys(), key=lambda key: (key[0], key[1] or 0, key[2]))]


def paired_labels(rows, label_a, label_b, metric):
    """paired() of the rows of label A and the rows of label B."""
    return paired(where(rows, label=label_a), where(rows, label=label_b), metric)


def values_by(rows, category_field, categories, labels, metric):
    """{(category, label): the metric of the label's rows in the category, NaNs left out}: what draw_points draws."""
    return {(category, label): metric_values(where(rows, label=label, **{category_field: category}), metric)
            for category in categories for label in labels}


def most_common_length(rows):
    """The rows of the most common number of iterations (the longest on a tie), and that number."""
    counts = Counter(row["num_iterations"] for row in rows)
    if not counts:
        return rows, None
    length = max(counts, key=lambda n: (counts[n], n))
    return [row for row in rows if row["num_iterations"] == length], length


def geometric_mean(values, axis=None):
    """Geometric mean, ignoring NaNs (NaN for no values); along axis, every slice must hold a value."""
    values = np.asarray(values, dtype=float)
    if axis is None:
        values = values[~np.isnan(values)]
    return np.exp(np.nanmean(np.log(values), axis=axis)) if values.size else math.nan


def median(values, axis=None):
    """Median, ignoring NaNs (NaN for no values); along axis, every slice must hold a value."""
    values = np.asarray(values, dtype=float)
    if axis is None:
        values = values[~np.isnan(values)]
    return np.nanmedian(values, axis=axis) if values.size else math.nan


def by_env(pairs):
    """The pairs' speedups grouped by env: [[speedups of one env], ...]."""
    groups = defaultdict(list)
    for pair in pairs:
        groups[pair.config.env].append(pair.speedup)
    return list(groups.values())


def interval(pairs):
    """(low, high, kind) of the geometric mean of the pairs' speedups, over envs (the seeds of one env are not
    independent evidence about other envs, so each env counts once, by the geometric mean of its seeds).

    With at least MIN_ENVS_FOR_CI envs, kind is '95% CI': Student's t interval of the envs' mean log speedup,
    exp(m ± t(n−1) s/√n), exact when log speedups are normal. With fewer, kind is 'range': the min and max over
    envs. NaN with fewer than two envs.
    """
    per_env = [float(geometric_mean(group)) for group in by_env(pairs)]
    if len(per_env) < MIN_ENVS_FOR_CI:
        return envs_range(per_env)
    logs = np.log(per_env)
    half_width = student_t.ppf(0.5 + CI_LEVEL / 2, len(logs) - 1) * np.std(logs, ddof=1) / math.sqrt(len(logs))
    return math.exp(logs.mean() - half_width), math.exp(logs.mean() + half_width), f"{CI_LEVEL:.0%} CI"


def median_interval(pairs):
    """(low, high, kind) of the median of the pairs' speedups, over envs (each env once, by the median of its seeds).

    With at least MIN_ENVS_FOR_CI envs, a distribution-free confidence interval of the median: the k-th smallest and
    k-th largest env, k the largest for which the coverage 1 − 2·P(Binomial(n, ½) < k) is at least CI_LEVEL; that
    coverage is exact for any continuous distribution and discrete in n, so kind names it rounded down, e.g. '96% CI'
    (12 envs). With fewer, 'range' as interval() gives it.
    """
    per_env = sorted(float(median(group)) for group in by_env(pairs))
    if len(per_env) < MIN_ENVS_FOR_CI:
        return envs_range(per_env)
    n = len(per_env)
    coverages = {k: 1 - 2 * binomial.cdf(k - 1, n, 0.5) for k in range(1, n // 2 + 1)}
    k = max(k for k, coverage in coverages.items() if coverage >= CI_LEVEL)
    return per_env[k - 1], per_env[n - k], f"{math.floor(coverages[k] * 100)}% CI"


def envs_range(per_env):
    """(min, max, 'range') over the envs' values; NaN with fewer than two envs."""
    if len(per_env) < 2:
        return math.nan, math.nan, ""
    return min(per_env), max(per_env), "range"


def distinguishable(bounds):
    """True when an interval (low, high, kind) excludes 1× as printed (two decimals): the envs agree on a side."""
    low, high = (round(bound, 2) for bound in bounds[:2])
    return not math.isnan(low) and not low <= 1 <= high


def compiled_comparisons(labels):
    """('A over B', A, B) for every two fully compiled variants among labels, A before B in display order."""
    present = [label for label in FULLY_COMPILED if label in labels]
    return [(f"{a} over {b}", a, b) for a, b in itertools.combinations(present, 2)]


def framework_of(label):
    """The framework of a variant label: 'nnx_cached (cached)' -> 'nnx'."""
    return label.split(" ")[0].split("_")[0]


def compile_mode_comparisons(rows):
    """(framework, label, baseline label) for every compiled mode whose COMPILE_BASELINES baseline also ran."""
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    return [(framework_of(COMPILE_BASELINES[label]), label, COMPILE_BASELINES[label])
            for label in labels if COMPILE_BASELINES.get(label) in labels]


@dataclass
class Standing:
    """One fully compiled variant of one model size against the fastest: relative times and its windows."""

    label: str
    envs: int
    total: tuple  # (geometric mean of time / fastest's time, interval (low, high, kind))
    steady: tuple
    iter0_s: float  # geometric mean over envs and seeds
    steady_s: float
    steady_vs_total: tuple = (math.nan, (math.nan, math.nan, ""))  # steady state / the fastest-in-total's, as total


class SizeRanking(NamedTuple):
    """One model size's ranking: its runs of their most common length, the steady window's name, the standings."""

    size: str
    length: int
    steady_name: str
    table: list  # Standings, by total
    fastest_total: str
    fastest_steady: str
    rows: list


def window_standing(rows):
    """A Standing holding only the geometric means of the rows' iteration 0 and steady state (for break_even)."""
    return Standing(rows[0]["label"], len({row["env"] for row in rows}), (math.nan, ()), (math.nan, ()),
                    geometric_mean(metric_values(rows, "iter0_s")), geometric_mean(metric_values(rows, "iter8_99_median_s")))


def fastest_label(rows, labels, metric):
    """The label with the smallest geometric mean of metric over the (env, seed) that every label ran; None if no value."""
    keys = [{(row["env"], row["seed"]) for row in where(rows, label=label) if not math.isnan(row[metric])}
            for label in labels]
    common = set.intersection(*keys)
    means = {label: geometric_mean([row[metric] for row in where(rows, label=label)
                                    if (row["env"], row["seed"]) in common or not common]) for label in labels}
    measured = [label for label in labels if not math.isnan(means[label])]
    return min(measured, key=means.get) if measured else None


def relative_to(rows, fastest, label, metric):
    """(geometric mean, interval) of label's metric over fastest's, paired by env and seed."""
    pairs = paired_labels(rows, fastest, label, metric)
    return geometric_mean([pair.speedup for pair in pairs]), interval(pairs)


def standings(rows, labels):
    """Standing of every label and the fastest labels on total and on the steady state."""
    fastest_total = fastest_label(rows, labels, "total_s")
    fastest_steady = fastest_label(rows, labels, "iter8_99_median_s")
    return [Standing(label, len({row["env"] for row in where(rows, label=label)}),
                     relative_to(rows, fastest_total, label, "total_s"),
                     relative_to(rows, fastest_steady, label, "iter8_99_median_s"),
                     geometric_mean(metric_values(where(rows, label=label), "iter0_s")),
                     geometric_mean(metric_values(where(rows, label=label), "iter8_99_median_s")),
                     relative_to(rows, fastest_total, label, "iter8_99_median_s"))
            for label in labels], fastest_total, fastest_steady


def break_even(variant, reference):
    """Iterations after which variant's faster steady state repays its longer iteration 0 against reference.

    With total(n) ≈ iteration 0 + (n − 1) × steady state: n = 1 + Δ iteration 0 / Δ steady state. None when
    variant's steady state is not faster (never repaid); 0 when its iteration 0 is not longer either; NaN when a
    steady state is unknown (its window empty).
    """
    if math.isnan(variant.steady_s) or math.isnan(reference.steady_s):
        return math.nan
    if variant.steady_s >= reference.steady_s:
        return None
    if variant.iter0_s <= reference.iter0_s:
        return 0
    return 1 + (variant.iter0_s - reference.iter0_s) / (reference.steady_s - variant.steady_s)


def backend_effects(rows, metric):
    """{(env, size): [(framework effect, backend effect)] per seed} from exp4 cells that ran all four variants.

    Framework effect = √(torch/linen on gymnax × torch/linen on Gymnasium); backend effect = √(Gymnasium/gymnax
    with torch × Gymnasium/gymnax with linen): time ratios, each averaged (geometrically) over the other factor.
    """
    values = defaultdict(dict)
    for row in rows:
        if not math.isnan(row[metric]):
            length = row["num_iterations"] if metric in LENGTH_METRICS else None
            values[row["config"], length, row["seed"]][row["label"]] = row[metric]
    effects = defaultdict(list)
    for (config, _, _), cell in sorted(values.items(), key=lambda item: (item[0][0], item[0][1] or 0, item[0][2])):
        if not all(label in cell for label in BACKEND_CELLS.values()):
            continue
        t = {key: cell[label] for key, label in BACKEND_CELLS.items()}
        framework = math.sqrt(t["torch", "gymnax"] / t["linen", "gymnax"] * t["torch", "Gymnasium"] / t["linen", "Gymnasium"])
        backend = math.sqrt(t["torch", "Gymnasium"] / t["torch", "gymnax"] * t["linen", "Gymnasium"] / t["linen", "gymnax"])
        effects[config.env, config.size].append((framework, backend))
    return effects


def magnitude(ratio):
    """How far a time ratio is from 1×, either way: max(ratio, 1 / ratio)."""
    return max(ratio, 1 / ratio)


def effect_summary(effects, effect):
    """(geometric mean, interval over envs) of effect(framework effect, backend effect) over every seed of every cell."""
    pairs = [Pair(Config("exp4", env, size, "async", ()), 1.0, effect(framework, backend))
             for (env, size), cell in effects.items() for framework, backend in cell]
    return geometric_mean([pair.speedup for pair in pairs]), interval(pairs)


def inverted(value):
    """(mean, interval) of a time ratio turned around: B / A from A / B."""
    mean, (low, high, kind) = value
    return 1 / mean, (1 / high, 1 / low, kind)


def mean_curve(curves, points=200):
    """Grid, mean, min and max across repeats of (x, y) curves, interpolated where all repeats have data (else None)."""
    if not curves:
        return None
    start, end = max(x[0] for x, _ in curves), min(x[-1] for x, _ in curves)
    if not end > start:
        return None
    grid = np.linspace(start, end, points)
    ys = np.array([np.interp(grid, x, y) for x, y in curves])
    return grid, ys.mean(axis=0), ys.min(axis=0), ys.max(axis=0)


class CostFit(NamedTuple):
    """The cost model t(n) = a + b·n of steady iteration times, the intervals of a and b, the relative residuals."""

    a: float  # seconds per iteration whatever the number of envs: the fixed cost
    b: float  # seconds per iteration per env: the marginal cost
    a_bounds: tuple  # (low, high) at FIT_LEVEL; NaN without residual degrees of freedom
    b_bounds: tuple
    residuals: np.ndarray  # (a + b·nᵢ − tᵢ) / tᵢ, one per point in the order given

    def at(self, n):
        """The modelled seconds per iteration with n envs."""
        return self.a + self.b * n


def fit_cost(ns, times):
    """Fits t(n) = a + b·n to the points (nᵢ, tᵢ) by least squares on relative error: Σ((a + b·nᵢ − tᵢ)/tᵢ)² least.

    Each interval is the estimate ± Student's t(m − 2) × its standard error from the residuals of the m points: with
    one seed per n the residuals are the only spread. None with fewer than two distinct n.
    """
    ns, times = np.asarray(ns, dtype=float), np.asarray(times, dtype=float)
    if len(set(ns)) < 2:
        return None
    design = np.column_stack([1 / times, ns / times])
    coefficients = np.linalg.lstsq(design, np.ones(len(times)), rcond=None)[0]
    residuals = design @ coefficients - 1
    dof = len(times) - 2
    half = np.full(2, math.nan)
    if dof > 0:
        covariance = residuals @ residuals / dof * np.linalg.inv(design.T @ design)
        half = student_t.ppf(0.5 + FIT_LEVEL / 2, dof) * np.sqrt(np.diag(covariance))
    (a, b), (half_a, half_b) = coefficients, half
    return CostFit(float(a), float(b), (a - half_a, a + half_a), (b - half_b, b + half_b), residuals)


def num_envs(row):
    """A row's number of envs as an int, None where its hyperparameters did not state one."""
    return int(row["num_envs"]) if str(row["num_envs"]).isdigit() else None


def num_steps(row):
    """A row's steps per env per rollout, NaN where its hyperparameters did not state them."""
    return float(row["num_steps"]) if str(row["num_steps"]).isdigit() else math.nan


def max_residual(fit):
    """The largest relative residual of a fit, in size; NaN without a fit."""
    return float(np.abs(fit.residuals).max()) if fit else math.nan


def named_cells(items, key, env_order):
    """{name: items} grouped by key(item) = (env, model size, rest of the workload), envs by complexity; a cell is
    named by its env, and also by its size and workload where the env has several cells."""
    env_rank, size_rank = rank(env_order), rank(SIZES)
    keys = sorted({key(item) for item in items}, key=lambda k: (env_rank(k[0]), size_rank(k[1]), str(k[2])))
    per_env = Counter(env for env, _, _ in keys)
    name = lambda env, size, rest: env if per_env[env] == 1 else f"{env} ({size}, {'/'.join(map(str, rest))})"
    return {name(*k): [item for item in items if key(item) == k] for k in keys}


def per_env_workload(row):
    """exp5's cell key of a row: env, model size and the workload but the number of envs, which exp5 varies."""
    return row["env"], row["size"], row["config"].work[1:]


@dataclass
class Scaling:
    """One variant's time per iteration against the number of envs in one exp5 cell."""

    label: str
    points: list  # (n, seconds) of each run with a value, by n
    ns: np.ndarray  # the measured numbers of envs, ascending
    times: np.ndarray  # the median over seeds at each
    relative: np.ndarray  # times / the fastest variant's at the same n
    fit: CostFit | None


def scalings(rows, metric="iter8_99_median_s"):
    """A Scaling of metric per variant of one cell's rows, each relative to the fastest variant at each n."""
    measured = {}
    for label in ordered((row["label"] for row in rows), LABEL_COLORS):
        points = sorted((num_envs(row), row[metric]) for row in where(rows, label=label)
                        if num_envs(row) and not math.isnan(row[metric]))
        if points:
            ns = np.array(sorted({n for n, _ in points}))
            measured[label] = points, ns, np.array([median([t for m, t in points if m == n]) for n in ns])
    fastest = defaultdict(lambda: math.inf)
    for _, ns, times in measured.values():
        for n, seconds in zip(ns, times):
            fastest[n] = min(fastest[n], seconds)
    return [Scaling(label, points, ns, times, times / np.array([fastest[n] for n in ns]), fit_cost(*zip(*points)))
            for label, (points, ns, times) in measured.items()]


def time_at(scaling, n):
    """A Scaling's median time at n, NaN where it did not run n envs."""
    return float(scaling.times[scaling.ns == n][0]) if n in scaling.ns else math.nan


def fastest_at(table, n):
    """The Scaling with the shortest time at n among those that ran n envs."""
    return min((scaling for scaling in table if n in scaling.ns), key=lambda scaling: time_at(scaling, n))


def within_ranges(ns, ratios, threshold=WITHIN_FASTEST):
    """The stretches of the measured n where ratio ≤ threshold, log ratio interpolated linearly in log n between
    measured n, never beyond them: [((low, interpolated?), (high, interpolated?))]."""
    excess = np.log(ratios) - math.log(threshold)  # ≤ 0: within
    ranges, start = [], (int(ns[0]), False) if excess[0] <= 0 else None
    for n0, n1, e0, e1 in zip(ns, ns[1:], excess, excess[1:]):
        if (e0 <= 0) == (e1 <= 0):
            continue
        crossing = math.exp(math.log(n0) + e0 / (e0 - e1) * (math.log(n1) - math.log(n0)))
        end = (int(n0), False) if e0 == 0 else (int(n1), False) if e1 == 0 else (crossing, True)
        if start is None:
            start = end
        else:
            ranges.append((start, end))
            start = None
    return ranges + [(start, (int(ns[-1]), False))] if start else ranges


@dataclass
class AgentTimes:
    """One exp6 variant's wall time to train N agents: the median over repeats per N measured, and for a process
    variant, at every other N of its cell, the estimate from one wave of `parallel` processes at its largest N."""

    label: str
    vmapped: bool  # one process trains all N agents
    measured: dict  # N -> seconds
    extrapolated: dict  # N -> seconds
    parallel: int
    groups: list


def agent_times(groups):
    """The AgentTimes of each variant of one exp6 cell's groups, the vmapped ones first."""
    every_n = sorted({group.agents for group in groups})
    result = []
    for label in ordered((group.label for group in groups), LABEL_COLORS):
        mine = [group for group in groups if group.label == label]
        measured = {n: float(median([group.wall for group in mine if group.agents == n]))
                    for n in sorted({group.agents for group in mine})}
        largest = max(mine, key=lambda group: group.agents)
        vmapped = all(group.processes == 1 for group in mine) and largest.agents > 1
        wave = measured[largest.agents] / math.ceil(largest.agents / largest.parallel)
        extrapolated = {} if vmapped else {n: math.ceil(n / largest.parallel) * wave
                                           for n in every_n if n not in measured}
        result.append(AgentTimes(label, vmapped, measured, extrapolated, largest.parallel, mine))
    return sorted(result, key=lambda times: not times.vmapped)


def wall_at(times, n):
    """(seconds to train n agents, extrapolated?) of an AgentTimes; NaN where neither measured nor extrapolated."""
    if n in times.measured:
        return times.measured[n], False
    return times.extrapolated.get(n, math.nan), n in times.extrapolated


def exp5_fit(rows, label, cell_key):
    """The cost model of label's async exp5 runs in the cell (env, model size, per-env workload), None if none."""
    chosen = [row for row in rows_of(rows, "exp5")
              if row["timing"] == "async" and row["label"] == label and per_env_workload(row) == cell_key]
    return next((scaling.fit for scaling in scalings(chosen)), None)


def modelled_run(fit, rows, width, iterations):
    """Seconds of one run of iterations with width envs: its rows' median start-up and iteration 0 as measured, the
    other iterations from the cost model."""
    return (median(metric_values(rows, "startup_s")) + median(metric_values(rows, "iter0_s"))
            + (iterations - 1) * fit.at(width))


def predicted_gains(fit, n, width, parallel, iterations, process_rows, vmapped_rows):
    """(per iteration, per run) gain the cost model predicts for one process with an n times wider batch over n
    processes `parallel` at a time: ⌈n/P⌉·(a + b·width) / (a + b·n·width); per run also the start-up and
    iteration 0 measured on each side."""
    waves = math.ceil(n / parallel)
    per_iteration = waves * fit.at(width) / fit.at(n * width)
    per_run = (waves * modelled_run(fit, process_rows, width, iterations)
               / modelled_run(fit, vmapped_rows, n * width, iterations))
    return per_iteration, per_run


# --------------------------------------------------------------------- charts: the drawing the sections share


def colors_for(names):
    """A fixed colour per variant label ('A over B': A's colour); any other series (sweeps) from OTHER_COLORS."""
    others = itertools.cycle(OTHER_COLORS)
    return {name: LABEL_COLORS.get(name.split(" over ")[0]) or next(others) for name in names}


def edge_color(name):
    """B's colour for a comparison 'A over B' (the points' outline), else None."""
    return LABEL_COLORS.get(name.split(" over ")[1]) if " over " in name else None


def new_figure(title, panels, ncols=None, panel_size=(4.8, 3.8), fixed_margins=False):
    """A figure with a title and a grid of panels (axes returned flat, extras hidden).

    Constrained layout by default; fixed_margins suits large grids of alike panels and saves its extra
    layout pass, which is most of the drawing time of a 12-panel figure.
    """
    ncols = ncols or panels
    nrows = math.ceil(panels / ncols)
    title_width = 0.09 * max(map(len, title.splitlines())) + 0.5  # inches, ~0.09 per character of the title
    top, bottom = (1.0, 1.4) if fixed_margins else (0.3, 0.3)  # inches: title above; axis labels and legend below
    width, height = max(panel_size[0] * ncols, title_width), panel_size[1] * nrows + top + bottom
    figure = Figure(figsize=(width, height), layout=None if fixed_margins else "constrained")
    if fixed_margins:
        figure.subplots_adjust(left=0.8 / width, right=1 - 0.25 / width, top=1 - top / height, bottom=bottom / height,
                               wspace=0.3, hspace=0.55)
    axes = figure.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[panels:]:
        ax.set_visible(False)
    figure.suptitle(title)
    return figure, axes[:panels]


def save_figure(figure, out, name):
    """Adds one legend for all panels, writes the figure into the ChartFolder out and returns its file name.

    For one machine kind of a sweep of several, the name gets the kind's suffix and the title the kind's name.
    """
    name = name.replace(".png", f"{out.suffix}.png")
    if out.machine:
        figure.suptitle(f"{figure.get_suptitle()}\n{out.machine}")
    handles = {}
    for ax in figure.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        columns_that_fit = int(figure.get_figwidth() / (0.08 * max(map(len, handles)) + 0.6))  # ~0.08 in per character
        location = "outside lower center" if figure.get_layout_engine() else "lower center"
        columns = max(1, min(len(handles), 5, columns_that_fit))
        figure.legend(handles.values(), handles.keys(), loc=location, ncols=columns, markerscale=1.5)
    figure.savefig(out.path / name, dpi=DPI, pil_kwargs={"compress_level": 3})  # faster than zlib's default 6
    print(f"  wrote {name}", flush=True)
    return name


def log_axis(ax, which, unit):
    """Log scale on ax's 'x' or 'y' axis (after plotting) with plain-number ticks and a unit, e.g. '0.5 s', '2×'."""
    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    low, high = getattr(ax, f"get_{which}lim")()
    # Within less than a factor 4, decade ticks would leave the axis nearly bare: use evenly spaced ones.
    narrow = high / low < 4
    axis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]) if narrow else LogLocator(subs=(1, 2, 5)))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}{unit}"))
    axis.set_minor_formatter(NullFormatter())


def category_axis(ax, categories):
    """Category names as x tick labels, slanted when they are long."""
    long_names = max(map(len, categories)) > 8
    ax.set_xticks(range(len(categories)), categories, rotation=30 if long_names else 0,
                  ha="right" if long_names else "center")
    ax.set_xlim(-0.5, len(categories) - 0.5)


def series_offsets(count, group_width=0.8):
    """x offsets of count series within a category group, and the width of each."""
    width = group_width / count
    return (np.arange(count) - (count - 1) / 2) * width, width


def empty_panel(ax, text):
    """Writes text in the middle of a panel that has nothing to draw."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="dimgrey")
    ax.tick_params(axis="y", left=False, labelleft=False)


def min_max_whiskers(centres, cells):
    """errorbar's yerr from each centre down to its cell's minimum and up to its maximum."""
    return [centres - [cell.min() for cell in cells], [cell.max() for cell in cells] - centres]


def draw_points(ax, categories, series, values, colors=None):
    """Median of values[(category, series)] as a point with min–max whiskers, grouped by category, log seconds.

    Points, not bars: on a log axis a bar's length depends on where the axis starts and means nothing.
    """
    colors = colors or colors_for(series)
    offsets, _ = series_offsets(len(series))
    drawn = False
    for offset, name in zip(offsets, series):
        cells = [(x, np.array(values[category, name]))
                 for x, category in enumerate(categories) if values.get((category, name))]
        if not cells:
            continue
        drawn = True
        medians = np.array([np.median(cell) for _, cell in cells])
        whiskers = min_max_whiskers(medians, [cell for _, cell in cells])
        ax.errorbar([x + offset for x, _ in cells], medians, yerr=whiskers, color=colors[name], label=name,
                    marker="o", markersize=5, linestyle="none", elinewidth=1, capsize=2)
    if drawn:
        log_axis(ax, "y", " s")
    else:
        empty_panel(ax, "no run has a value\nfor this window")
    category_axis(ax, categories)
    ax.grid(axis="y", which="major", alpha=0.3)


def draw_speedup_strips(ax, categories, series, speedups, colors=None, category_colors=None):
    """Each pair's speedups[(category, series)] as a point, their geometric mean as a black line; log y, 1× dashed.

    A comparison 'A over B' is filled with A's colour and outlined in B's; category_colors, when given, colours
    the points by category instead (e.g. a variant per category).
    """
    colors = colors or colors_for(series)
    offsets, width = series_offsets(len(series))
    jitter = np.random.default_rng(0)
    for offset, name in zip(offsets, series):
        labelled = False
        for x, category in enumerate(categories):
            values = speedups.get((category, name))
            if not values:
                continue
            centre = x + offset
            ax.hlines(geometric_mean(values), centre - width / 2, centre + width / 2, color="black", linewidth=1.5)
            edge = edge_color(name)
            ax.scatter(centre + jitter.uniform(-width / 4, width / 4, len(values)), values, s=40, alpha=0.9,
                       color=(category_colors or {}).get(category, colors[name]), edgecolors=edge or "none", linewidths=1.5 if edge else 0, zorder=3,
                       label=None if labelled else name)
            labelled = True
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    if not any(speedups.get((category, name)) for category in categories for name in series):
        empty_panel(ax, "no pair of runs has a value\nfor this window")
    log_axis(ax, "y", "×")
    category_axis(ax, categories)
    ax.grid(axis="y", which="major", alpha=0.3)


def speedups_by_category(rows, category_field, categories, comparisons, metric):
    """speedups[(category, name)] for comparisons [(name, label A, label B)] on rows split by category_field."""
    speedups = {}
    for category in categories:
        in_category = where(rows, **{category_field: category})
        for name, label_a, label_b in comparisons:
            pairs = paired_labels(in_category, label_a, label_b, metric)
            speedups[category, name] = [pair.speedup for pair in pairs]
    return speedups


# Line styles for curves identical to an earlier one in the same panel, so that each stays visible.
DUPLICATE_STYLES = ((0, (4, 3)), (0, (1, 2)), (0, (6, 2, 1, 2)), (0, (2, 4)))


def curve_x(run, x_axis, process_agents=1):
    """A run's x values for its returns: env steps, or seconds of training after the end of iteration 0 (divided by
    the agents its process trained: the agents of one vmapped process share its clock)."""
    if x_axis == "steps":
        return run.return_steps
    return (run.return_seconds - np.nan_to_num(run.iteration_seconds[0])) / process_agents


def draw_panel_curves(ax, panel_rows, labels, colors, x_axis):
    """Draws each label's curve in one panel; returns notes on identical and missing curves for the report."""
    notes, drawn = [], {}
    for label in labels:
        label_rows = sorted(where(panel_rows, label=label), key=lambda row: row["seed"])
        runs = [row["run"] for row in label_rows]
        if not runs:
            continue
        signature = tuple((run.seed, tuple(run.return_steps), tuple(run.returns)) for run in runs)
        same_as = drawn.get(signature, []) if any(run.returns.size for run in runs) else []
        style = DUPLICATE_STYLES[(len(same_as) - 1) % len(DUPLICATE_STYLES)] if same_as else "solid"
        if same_as:
            notes.append(f"{label} is identical to {same_as[0]} (drawn dashed on top of it)")
        drawn.setdefault(signature, []).append(label)
        curves = [(curve_x(row["run"], x_axis, row["process_agents"]), row["run"].returns) for row in label_rows
                  if row["run"].returns.size]
        curve = mean_curve([(x, y) for x, y in curves if len(y) > 1 and np.isfinite(x).all()])
        if curve:
            grid, mean, low, high = curve
            ax.plot(grid, mean, color=colors[label], linewidth=2.2 if not same_as else 1.2, linestyle=style,
                    label=label)
            ax.fill_between(grid, low, high, color=colors[label], alpha=0.2, linewidth=0)
        elif curves:  # too few returns for a line: each logged return as a point
            x, y = np.concatenate([x for x, _ in curves]), np.concatenate([y for _, y in curves])
            ax.scatter(x, y, color=colors[label], marker="o" if not same_as else "x", s=30, label=label, zorder=3)
            notes.append(f"{label}: too few returns for a line, drawn as points")
        else:
            notes.append(f"{label}: no episode finished")
    if not any(run_rows_returns(panel_rows)):
        longest = max(row["num_iterations"] for row in panel_rows)
        empty_panel(ax, f"no episode finished\nin these runs\n(at most {longest} iterations)")
        notes = ["no episode finished in any run, so the panel is empty"]
    return notes


def run_rows_returns(rows):
    """How many returns each row's run logged."""
    return [row["run"].returns.size for row in rows]


def spread_time_axis(ax):
    """A symmetric-log time axis when the curves end more than 10× apart (eager runs take far longer), so that
    the fast variants' curves are not squeezed against 0; linear below a tenth of the earliest end."""
    ends = [float(np.max(line.get_xdata())) for line in ax.lines if len(line.get_xdata())]
    ends = [end for end in ends if end > 0]
    if len(ends) > 1 and max(ends) > 10 * min(ends):
        ax.set_xscale("symlog", linthresh=min(ends) / 10)
        ax.set_xlabel(ax.get_xlabel().removesuffix(" (s)") + f" (s, log above {min(ends) / 10:.2g} s)")


def learning_curve_figure(rows, env_order, title, x_axis, out, name, time_label="training time after iteration 0"):
    """One panel per (env, size): each variant/mode's mean episodic return with a min–max band across seeds.

    Returns the file name and notes per panel (identical curves, runs without returns) for the report.
    """
    panels = ordered_configs(rows, env_order)
    multiple_sizes = len({size for _, size in panels}) > 1
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    colors = colors_for(labels)
    figure, axes = new_figure(title, len(panels), ncols=min(len(panels), 4), panel_size=(4.2, 3.2), fixed_margins=True)
    notes = []
    for ax, (env, size) in zip(axes, panels):
        panel = f"{env} · {size}" if multiple_sizes else env
        panel_notes = draw_panel_curves(ax, where(rows, env=env, size=size), labels, colors, x_axis)
        notes += [f"{panel}: {note}" for note in panel_notes]
        if any("identical" in note for note in panel_notes):
            ax.text(0.02, 0.98, "dashed: identical to a solid curve", transform=ax.transAxes, fontsize=7, va="top")
        ax.set(title=panel, ylabel="episodic return",
               xlabel="env steps" if x_axis == "steps" else f"{time_label} (s)")
        if x_axis == "time":
            spread_time_axis(ax)
        ax.grid(alpha=0.3)
    return save_figure(figure, out, name), notes


def ranking_chart(rankings, out, exp, name):
    """Chart: per model size, each variant's total and steady-state time relative to the fastest, with intervals."""
    figure, axes = new_figure(f"Which variant is fastest? Time relative to the fastest variant per model size ({exp})\n"
                              "points: geometric mean over envs (and seeds); bars: interval (95% CI, or range with few "
                              "envs)", len(rankings),
                              panel_size=(6, 0.5 * max(len(ranking.table) for ranking in rankings) + 1.8))
    colors = colors_for(LABEL_COLORS)
    for ax, ranking in zip(axes, rankings):
        markers = (("o", "total"), ("s", ranking.steady_name))
        for y, standing in enumerate(ranking.table):
            for offset, value, (marker, _) in zip((-0.12, 0.12), (standing.total, standing.steady), markers):
                mean, (low, high, _) = value
                xerr = None if math.isnan(low) else [[mean - low], [high - mean]]
                ax.errorbar([mean], [y + offset], xerr=xerr, marker=marker, markersize=6, capsize=3, linestyle="none",
                            color=colors[standing.label], markerfacecolor=colors[standing.label] if marker == "o" else "white")
        for marker, what in markers:
            ax.plot([], [], marker=marker, linestyle="none", color="black",
                    markerfacecolor="black" if marker == "o" else "white", label=what)
        ax.set_yticks(range(len(ranking.table)), [standing.label for standing in ranking.table])
        ax.set_ylim(len(ranking.table) - 0.5, -0.5)
        ax.axvline(1.0, color="grey", linestyle="--", linewidth=0.8)
        log_axis(ax, "x", "×")
        ax.set(title=f"model size: {ranking.size} ({ranking.length} iterations)",
               xlabel="time relative to the fastest (1× = fastest)")
        ax.grid(axis="x", which="major", alpha=0.3)
    return save_figure(figure, out, name)


def size_trend_chart(rankings, out):
    """Chart (exp7): one panel, x the model size, y each variant's steady iteration relative to that size's fastest
    (log; geometric mean over envs and seeds, bars its interval), one line per variant: how each gap moves with size."""
    figure, (ax,) = new_figure("How the gap to the fastest moves with the model size — exp7 (async)\npoints: steady "
                               "iteration relative to that size's fastest, geometric mean over envs and seeds; bars: "
                               "interval (95% CI, or range with few envs)", 1, panel_size=(7.5, 5.0))
    labels = ordered((standing.label for ranking in rankings for standing in ranking.table), SIZE_LABELS)
    colors = colors_for(labels)
    offsets, _ = series_offsets(len(labels), group_width=0.3)
    for offset, label in zip(offsets, labels):
        points = [(x + offset, standing.steady) for x, ranking in enumerate(rankings) for standing in ranking.table
                  if standing.label == label and not math.isnan(standing.steady[0])]
        if not points:
            continue
        xs, values = zip(*points)
        means = [mean for mean, _ in values]
        errors = np.array([[0, 0] if math.isnan(low) else [mean - low, high - mean] for mean, (low, high, _) in values])
        ax.errorbar(xs, means, yerr=errors.T, color=colors[label], marker="o", markersize=5, linewidth=1.5, capsize=3,
                    label=label)
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    log_axis(ax, "y", "×")
    category_axis(ax, [f"{ranking.size} ({ranking.steady_name})" for ranking in rankings])
    ax.set(xlabel="model size (steady window)", ylabel="steady iteration / that size's fastest")
    ax.grid(axis="y", which="major", alpha=0.3)
    return save_figure(figure, out, "ranking_sizes.png")


def compile_mode_chart(rows, comparisons, out, names):
    """Chart: per framework, the speedup of each compiled mode over its baseline on each metric (exp2)."""
    frameworks = ordered((framework for framework, _, _ in comparisons), map(framework_of, LABEL_COLORS))
    metric_names = [names[metric] for metric in COMPILE_METRICS]
    title = (f"Speedup of each compile mode over its baseline — exp2 (sync, small, {scope(rows)})\n"
             "points: (env, seed) pairs, filled: the mode, outline: its baseline; black line: geometric mean")
    figure, axes = new_figure(title, len(frameworks), panel_size=(5.5, 4.6))
    for ax, framework in zip(axes, frameworks):
        modes = [f"{label} over {baseline}" for fw, label, baseline in comparisons if fw == framework]
        speedups = {(names[metric], mode): [pair.speedup for pair in paired_labels(rows, *mode.split(" over "), metric)]
                    for metric in COMPILE_METRICS for mode in modes}
        draw_speedup_strips(ax, metric_names, modes, speedups)
        ax.set(title=f"{framework}: " + "; ".join(modes), ylabel="speedup (time_baseline / time_mode)")
        ax.title.set_fontsize(8)
    return image(save_figure(figure, out, "compile_modes.png"), "compile mode effect")


def count_axis(ax, counts, name):
    """A log₂ x axis ticked at the counts (numbers of envs or agents) and labelled with name."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, [f"{count:,}" for count in counts])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(name)


def scaling_sps_chart(tables, steps, out, steady_name):
    """Chart: per exp5 cell, each variant's steady-state SPS against the number of envs (log-log), each run a point,
    the fitted cost model a line drawn over the measured numbers of envs only, its largest residual written beside."""
    figure, axes = new_figure("Steady-state env steps per second against the number of envs — exp5 (async)\n"
                              f"points: runs, SPS = N × num_steps / median of {steady_name}; lines: the fitted "
                              "t(N) = a + b·N, over the measured N only, with its largest residual", len(tables),
                              ncols=min(len(tables), 2), panel_size=(6.4, 4.6))
    colors = colors_for([scaling.label for table in tables.values() for scaling in table])
    for ax, (name, table) in zip(axes, tables.items()):
        residuals = []
        for scaling in table:
            ns, seconds = np.array(scaling.points, dtype=float).T
            ax.scatter(ns, ns * steps[name] / seconds, color=colors[scaling.label], s=25, zorder=3, label=scaling.label)
            grid = np.geomspace(scaling.ns[0], scaling.ns[-1], 100)
            if scaling.fit and (scaling.fit.at(grid) > 0).all():
                ax.plot(grid, grid * steps[name] / scaling.fit.at(grid), color=colors[scaling.label], linewidth=1.5)
                residuals.append(f"{scaling.label}: {percent_text(max_residual(scaling.fit), '')}")
        if residuals:
            ax.text(0.02, 0.98, "fit's largest relative residual\n" + "\n".join(residuals), transform=ax.transAxes,
                    fontsize=7, va="top", bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0})
        count_axis(ax, sorted({int(n) for scaling in table for n in scaling.ns}), "number of envs N")
        log_axis(ax, "y", "")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value / 1e6:g}M" if value >= 1e6 else
                                                   f"{value / 1e3:g}k" if value >= 1e3 else f"{value:g}"))
        ax.set(title=name, ylabel="env steps per second (steady state)")
        ax.grid(which="major", alpha=0.3)
    return save_figure(figure, out, "scaling_sps.png")


def scaling_relative_chart(tables, out, steady_name):
    """Chart: per exp5 cell, each variant's median steady time relative to the fastest variant's at each number of
    envs, with the WITHIN_FASTEST line."""
    figure, axes = new_figure(f"Time per iteration relative to the fastest variant at each number of envs — exp5 "
                              f"(async, median of {steady_name})\npoints: measured N (median over seeds); dashed: "
                              f"{WITHIN_FASTEST}× the fastest", len(tables), ncols=min(len(tables), 2),
                              panel_size=(6.4, 4.6))
    colors = colors_for([scaling.label for table in tables.values() for scaling in table])
    for ax, (name, table) in zip(axes, tables.items()):
        for scaling in table:
            ax.plot(scaling.ns, scaling.relative, marker="o", markersize=4, color=colors[scaling.label],
                    label=scaling.label)
        ax.axhline(WITHIN_FASTEST, color="grey", linestyle="--", linewidth=0.8)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        count_axis(ax, sorted({int(n) for scaling in table for n in scaling.ns}), "number of envs N")
        log_axis(ax, "y", "×")
        ax.set(title=name, ylabel="time per iteration / the fastest's")
        ax.grid(which="major", alpha=0.3)
    return save_figure(figure, out, "scaling_relative.png")


def agents_chart(cells, out):
    """Chart: per exp6 cell, each variant's wall time to train N agents against N: measured solid, extrapolated
    (process variants beyond their measured N) dashed with hollow markers."""
    figure, axes = new_figure("Wall time to train N agents — exp6\nsolid: measured (median over repeats); dashed, "
                              "hollow: extrapolated from one wave of parallel processes", len(cells),
                              ncols=min(len(cells), 2), panel_size=(6.4, 4.6))
    colors = colors_for([times.label for variants in cells.values() for times in variants])
    for ax, (name, variants) in zip(axes, cells.items()):
        for times in variants:
            every = sorted({**times.measured, **times.extrapolated}.items())
            ax.plot(*zip(*every), color=colors[times.label], linestyle="--", linewidth=1)
            ax.plot(*zip(*sorted(times.measured.items())), color=colors[times.label], marker="o", label=times.label)
            if times.extrapolated:
                ax.scatter(*zip(*times.extrapolated.items()), facecolors="none", edgecolors=colors[times.label], s=36)
        ax.plot([], [], color="black", linestyle="--", marker="o", markerfacecolor="none", label="extrapolated")
        count_axis(ax, sorted({n for times in variants for n in (*times.measured, *times.extrapolated)}),
                   "number of agents N")
        log_axis(ax, "y", " s")
        ax.set(title=name, ylabel="wall time to train N agents")
        ax.grid(which="major", alpha=0.3)
    return save_figure(figure, out, "agents.png")


# ------------------------------------------------ text: markdown, numbers in words, the generated conclusions


def heading(sweep, title, level="##"):
    """A section heading; in the part of one machine kind of a sweep of several, it names the kind."""
    return f"{level} {title}" + (f" — {sweep.machine}" if sweep.machine else "")


def markdown_table(header, rows):
    """Markdown table lines for a header and rows of cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines + [""]


def number_text(value):
    """A number with three significant digits, whole from 100 up (never an exponent there): 0.0123, 4.56, 1,234."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def seconds_text(value):
    """Seconds as number_text gives them, '–' for NaN."""
    return "–" if math.isnan(value) else number_text(value)


def speedup_text(value, bounds=(math.nan, math.nan, "")):
    """A speedup like '2.00×', then ' [95% CI 1.80–2.20]' or ' [range 1.80–2.20]' when known; '–' for NaN."""
    if math.isnan(value):
        return "–"
    low, high, kind = bounds
    return f"{value:.2f}×" + ("" if math.isnan(low) else f" [{kind} {low:.2f}–{high:.2f}]")


def mean_and_spread(values):
    """'mean ± sample std' of values with three significant digits; the mean alone for one value, '–' for none."""
    if len(values) < 2:
        return f"{values[0]:.3g}" if values else "–"
    return f"{np.mean(values):.3g} ± {np.std(values, ddof=1):.2g}"


def image(name, caption):
    """Markdown lines embedding a chart."""
    return [f"![{caption}]({name})", ""]


def empty_window_lines(rows, metrics):
    """One line naming the windows of metrics that some of the rows' runs end before; none when every run reaches them."""
    parts = []
    for window in dict.fromkeys(METRIC_WINDOWS[metric] for metric in metrics if metric in METRIC_WINDOWS):
        first = WINDOWS[window][0]
        short = [row for row in rows if row["num_iterations"] <= first]
        if short:
            lengths = "/".join(map(str, sorted({row["num_iterations"] for row in short})))
            share = "every run" if len(short) == len(rows) else f"{len(short)} of {len(rows)} runs"
            plural = "" if lengths == "1" else "s"
            parts.append(f"{window} is empty in {share} (runs of {lengths} iteration{plural} end before iteration {first})")
    if not parts:
        return []
    return [f"*Empty windows:* {'; '.join(parts)}; figures over an empty window are left out ('–' in tables).", ""]


def speedup_table(groups):
    """Markdown table of geometric-mean and median speedups with their intervals for [(group, A, B, pairs)]."""
    lines = []
    for group, label_a, label_b, pairs in groups:
        speedups = [pair.speedup for pair in pairs]
        envs = len({pair.config.env for pair in pairs})
        lines.append([
            group, f"{label_a} over {label_b}", len(pairs), envs,
            speedup_text(geometric_mean(speedups), interval(pairs)),
            speedup_text(median(speedups), median_interval(pairs)),
        ])
    header = ["model size", "speedup of A over B", "pairs", "envs", "geometric mean [interval]", "median [interval]"]
    return markdown_table(header, lines)


def gpu_text(system):
    """'NVIDIA H100 80GB HBM3 (driver 580.65) ×1', or 'none (CPU only)'."""
    name, gpu = gpu_model(system), system.get("gpu")
    if not name:
        return "none (CPU only)"
    driver, count = (gpu.get("driver"), gpu.get("count", 1)) if isinstance(gpu, dict) else (system.get("driver"), 1)
    return f"{name}" + (f" (driver {driver})" if driver else "") + f" ×{count}"


def cpu_text(system):
    """'AMD EPYC, 2 cores' (the core count where known)."""
    cores = system.get("cpu_count")
    return f"{system.get('cpu', '?')}" + (f", {cores} cores" if cores else "")


def packages_text(system):
    """'jax 0.10.2, torch 2.13.0, …' from system.json's packages."""
    return ", ".join(f"{name} {version}" for name, version in (system.get("packages") or {}).items() if version) or "?"


def listed(names):
    """'a', 'a and b', 'a, b and c'."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def tie_reason(values):
    """Why relative times (mean, interval) do not tell variants apart: their intervals hold 1×, or there is none."""
    if all(math.isnan(bounds[0]) for _, bounds in values):
        return "with one env there is no interval"
    return "its interval holds 1×" if len(values) == 1 else "their intervals hold 1×"


def relative_text(value):
    """A relative time like '1.09× [range 0.97–1.21]'; '1 (fastest)' for the fastest itself."""
    mean, bounds = value
    itself = mean == 1 and (math.isnan(bounds[0]) or bounds[0] == bounds[1] == 1)
    return "1 (fastest)" if itself else speedup_text(mean, bounds)


def break_even_text(variant, reference, steady_ratio):
    """Plain words for break_even; steady_ratio is (mean, interval) of variant's steady state over reference's.

    A break-even is computed only between steady states that the interval tells apart.
    """
    if variant is reference:
        return "–"
    mean, bounds = steady_ratio
    if math.isnan(mean):
        return "– (no steady state)"
    if not distinguishable(bounds):
        return "– (one env: no interval)" if math.isnan(bounds[0]) else "– (steady states indistinguishable)"
    iterations = break_even(variant, reference)
    if mean > 1 or iterations is None:
        return "never (steady state slower)"
    return "from the start" if iterations == 0 else f"after {math.ceil(iterations):,} iterations"


def fastest_claim(table, fastest, value, what, time):
    """'**X** is fastest {what}.', or, where a variant's interval against X holds 1× or one env gives none, that no
    variant is (named) fastest: X has the shortest {time}."""
    others = [standing for standing in table if standing.label != fastest]
    unknown = [standing for standing in others if math.isnan(value(standing)[1][0])]
    tied = [standing for standing in others if standing not in unknown and not distinguishable(value(standing)[1])]
    if not tied and not unknown:
        return f"**{fastest}** is fastest {what}."
    text = lambda group: listed([f"{standing.label} ({speedup_text(*value(standing))})" for standing in group])
    claim = f"No variant is {'named ' * bool(unknown)}fastest {what}: {fastest} has the shortest {time}"
    if tied:
        claim += (f", and {text(tied)} {'is' if len(tied) == 1 else 'are'} not distinguishable from it "
                  f"({tie_reason([value(standing) for standing in tied])})")
    if unknown:
        claim += f"; with one env there is no interval to tell it from {text(unknown)}"
    return claim + "."


def steady_conclusion(by_label, fastest_total, fastest_steady, steady_name):
    """The steady-state sentences of a ranking conclusion: the fastest, and when a faster steady state is repaid."""
    if fastest_steady is None:
        return [f"No steady-state comparison: {steady_name} is empty in these runs."]
    claim = fastest_claim(list(by_label.values()), fastest_steady, lambda standing: standing.steady,
                          f"in the steady state ({steady_name})", "time per iteration")
    reference = by_label[fastest_total]
    if fastest_steady == fastest_total:
        return [claim]
    ratio = reference.steady
    if not distinguishable(ratio[1]):
        return [claim, f"No break-even against {fastest_total}, the shortest in total: the two steady states are not "
                       f"told apart ({speedup_text(*ratio)})."]
    iterations = break_even(by_label[fastest_steady], reference)
    when = ("its iteration 0 is not longer either" if iterations == 0 else
            f"its longer iteration 0 is repaid after about {math.ceil(iterations):,} iterations")
    return [claim, f"{fastest_steady} is {speedup_text(*ratio)} faster per iteration than {fastest_total}, the "
                   f"shortest in total; {when}."]


def ranking_conclusion(size, length, table, fastest_total, fastest_steady, steady_name):
    """One generated paragraph of conclusions for one model size; a winner is named only where intervals exclude 1×."""
    envs = max(standing.envs for standing in table)
    lead = f"**{size}** ({envs} env{'s' * (envs > 1)}, runs of {length} iterations):"
    if len(table) == 1:
        return f"{lead} only {table[0].label} ran."
    sentences = [lead, fastest_claim(table, fastest_total, lambda standing: standing.total, "in total", "total time")]
    sentences += [f"{standing.label} takes {speedup_text(*standing.total)} the time of {fastest_total}."
                  for standing in table if standing.label != fastest_total and distinguishable(standing.total[1])]
    by_label = {standing.label: standing for standing in table}
    return " ".join(sentences + steady_conclusion(by_label, fastest_total, fastest_steady, steady_name))


def ratio_words(value, slower, faster):
    """'Gymnasium takes 3.10× [range 2.90–3.30] the time of gymnax' (turned around below 1×), or that they tie."""
    if not distinguishable(value[1]):
        reason = "one env: no interval, " if math.isnan(value[1][0]) else ""
        return f"{slower} and {faster} are not told apart ({reason}{slower} / {faster}: {speedup_text(*value)})"
    if value[0] >= 1:
        return f"{slower} takes {speedup_text(*value)} the time of {faster}"
    return f"{faster} takes {speedup_text(*inverted(value))} the time of {slower}"


def backend_conclusion(effects, what):
    """The generated sentence on one metric: each factor's effect, and which dominates where the interval says so.

    Dominance is the geometric mean over seeds of |backend effect| / |framework effect| (each as a ratio ≥ 1).
    """
    framework = effect_summary(effects, lambda framework, _: framework)
    backend = effect_summary(effects, lambda _, backend: backend)
    dominance = effect_summary(effects, lambda framework, backend: magnitude(backend) / magnitude(framework))
    facts = (f"({len(effects)} env/size cell{'s' * (len(effects) > 1)}, geometric means): "
             f"{ratio_words(backend, 'Gymnasium on the CPU', 'gymnax on the device')}, while "
             f"{ratio_words(framework, 'torch', 'linen')}")
    if not distinguishable(dominance[1]):
        return (f"On {what}, **neither factor dominates** {facts}; the env backend changes the time "
                f"{speedup_text(*dominance)} as much as the framework ({tie_reason([dominance])}).")
    factors = ("the env backend", "the framework")
    dominant, other = factors if dominance[0] > 1 else factors[::-1]
    ratio = dominance if dominance[0] > 1 else inverted(dominance)
    return f"On {what}, **{dominant} dominates** {facts}; {dominant} changes the time {speedup_text(*ratio)} as much " \
           f"as {other}."


def cost_text(fit, part, bounds=True):
    """A fitted cost, 'a' in ms or 'b' in µs per env, with its interval where bounds and the fit has one; '–' if no
    fit."""
    if fit is None:
        return "–"
    value, (low, high) = (fit.a, fit.a_bounds) if part == "a" else (fit.b, fit.b_bounds)
    scale, unit = (1e3, " ms") if part == "a" else (1e6, " µs")
    text = f"{number_text(value * scale)}{unit}"
    if not bounds or math.isnan(low):
        return text
    return f"{text} [{FIT_LEVEL:.0%} fit interval {number_text(low * scale)} to {number_text(high * scale)}]"


def percent_text(value, sign="+"):
    """A fraction as a percentage with one decimal ('+2.5%'; never '-0.0%'), '–' for NaN."""
    return "–" if math.isnan(value) else f"{round(value, 3) or 0.0:{sign}.1%}"


def mib_text(value):
    """Bytes in MiB without decimals, '–' for NaN."""
    return "–" if math.isnan(value) else f"{value / 2**20:,.0f}"


def span_text(ns):
    """The measured numbers of envs as a span: '8–2,048 envs', or 'N = 8' for one."""
    return f"N = {ns[0]:,}" if len(ns) == 1 else f"{ns[0]:,}–{ns[-1]:,} envs"


def within_text(scaling):
    """Where a variant comes within WITHIN_FASTEST× of the fastest, in words: measured stretches of N, interpolated
    ends marked ≈, or 'not in the measured range'."""
    ranges = within_ranges(scaling.ns, scaling.relative)
    if (scaling.relative == 1).all():
        return f"the fastest at every measured N ({span_text(scaling.ns)})"
    if not ranges:
        return f"not in the measured range ({span_text(scaling.ns)})"
    if ranges == [((scaling.ns[0], False), (scaling.ns[-1], False))]:
        return f"at every measured N ({span_text(scaling.ns)})"
    end = lambda point: f"≈{point[0]:,.0f}" if point[1] else f"{point[0]:,}"
    parts = [f"N = {end(low)}" if low == high else f"{end(low)}–{end(high)} envs" for low, high in ranges]
    interpolated = any(point[1] for stretch in ranges for point in stretch)
    return ", ".join(parts) + (" (≈: interpolated between measured N)" if interpolated else "")


def gap_trend(scaling):
    """How a variant's time relative to the fastest goes from its smallest to its largest N, as printed."""
    first, last = (round(float(value), 2) for value in (scaling.relative[0], scaling.relative[-1]))
    start, end = scaling.ns[0], scaling.ns[-1]
    if len(scaling.ns) == 1:
        return f"is {first:.2f}× at {start:,} envs, its only N"
    if first == last:
        return f"stays at {first:.2f}× from {start:,} to {end:,} envs"
    return f"{'falls' if last < first else 'grows'} from {first:.2f}× at {start:,} envs to {last:.2f}× at {end:,}"


def variant_scaling_sentence(scaling, reference):
    """One exp5 variant's fixed and per-env cost against the reference's, its gap to the fastest and where it comes
    within WITHIN_FASTEST× of it."""
    if scaling.fit and reference.fit:
        costs = (f"{scaling.label}'s fixed cost per iteration is {cost_text(scaling.fit, 'a', False)} against "
                 f"{reference.label}'s {cost_text(reference.fit, 'a', False)}, its cost per env "
                 f"{cost_text(scaling.fit, 'b', False)} against {cost_text(reference.fit, 'b', False)}")
    else:
        costs = f"{scaling.label}: no cost model to compare (a fit needs two N with a steady state on both sides)"
    return f"{costs}; its gap to the fastest {gap_trend(scaling)}; within {WITHIN_FASTEST}× of the fastest: " \
           f"{within_text(scaling)}."


def scaling_conclusion(name, table):
    """The generated paragraph of one exp5 cell: the fastest at the smallest and the largest N, then each other variant
    against the fastest at the largest N."""
    ns = sorted({int(n) for scaling in table for n in scaling.ns})
    lead = f"**{name}** ({len(table)} variant{'s' * (len(table) > 1)}, {span_text(ns)}):"
    if len(table) == 1:
        return f"{lead} only {table[0].label} ran."
    large = fastest_at(table, ns[-1])
    others = [variant_scaling_sentence(scaling, large) for scaling in table if scaling is not large]
    return " ".join([lead, shortest_sentence(table, ns[0], ns[-1])] + others)


def shortest_sentence(table, first, last):
    """Which variant has the shortest time per iteration at the smallest and at the largest N of an exp5 cell."""
    ms = lambda scaling, n: f"{number_text(time_at(scaling, n) * 1e3)} ms"
    small, large = fastest_at(table, first), fastest_at(table, last)
    if first == last:
        return f"{small.label} has the shortest time per iteration ({ms(small, first)})."
    if small is large:
        return (f"{small.label} has the shortest time per iteration at {first:,} and at {last:,} envs "
                f"({ms(small, first)} and {ms(small, last)}).")
    return (f"{small.label} has the shortest time per iteration at {first:,} envs ({ms(small, first)}), "
            f"{large.label} at {last:,} envs ({ms(large, last)}).")


def wall_text(value, extrapolated, form=None):
    """A wall time in seconds (or an agents-per-hour figure, in the given format), marked '≈… (extrapolated)' where
    extrapolated, '–' for NaN."""
    if math.isnan(value):
        return "–"
    text = format(value, form) if form else seconds_text(value)
    return f"≈{text} (extrapolated)" if extrapolated else text


def faster_words(speedup):
    """'2.50× faster than', '1.20× slower than' (as printed) or 'as fast as'."""
    rounded = round(speedup, 2)
    if rounded == 1:
        return "as fast as"
    return f"{speedup:.2f}× faster than" if rounded > 1 else f"{1 / speedup:.2f}× slower than"


def agents_sentence(vmapped, processes, n):
    """At N agents: the vmapped variant's wall time and agents per hour against each process variant's."""
    wall = vmapped.measured[n]
    parts = []
    for times in processes:
        other, extrapolated = wall_at(times, n)
        if not math.isnan(other):
            parts.append(f"{faster_words(other / wall)} {n:,} {times.label} processes {times.parallel} at a time "
                         f"({'≈' * extrapolated}{seconds_text(other)} s{', extrapolated' * extrapolated})")
    against = f": {listed(parts)}" if parts else ""
    return f"At N = {n:,}, one {vmapped.label} process trains the {n:,} agents in {seconds_text(wall)} s " \
           f"({n * 3600 / wall:,.0f} agents per hour){against}."


def agents_conclusion(name, variants, prediction):
    """The generated sentences of one exp6 cell: at the largest N every variant measured and at the largest N the
    vmapped process measured, and the exp5 prediction (the sentence prediction_lines gives, or None) beside it."""
    vmapped = [times for times in variants if times.vmapped]
    processes = [times for times in variants if not times.vmapped]
    if not vmapped:
        return f"**{name}:** no variant trained several agents in one process; the table gives each one's wall time."
    sentences = [f"**{name}:**"]
    for times in vmapped:
        common = [n for n in times.measured if all(n in other.measured for other in processes)]
        counts = sorted({max(common)} if common else set()) + [max(times.measured)]
        sentences += [agents_sentence(times, processes, n) for n in dict.fromkeys(counts)]
    return " ".join(sentences + ([prediction] if prediction else []))


# ---------------------------------- sections: the header, the answers, how to read, the details, a comparison


def machine_lines(systems):
    """One block per system.json: machine, software, commit, command (and load or wall time where recorded)."""
    if not systems:
        return ["- **Machine:** unknown: no system.json was found.", ""]
    lines = []
    for folder, system in systems:
        dirty = {True: " (working tree dirty)", False: " (clean)"}.get(system.get("git_dirty"), "")
        extras = [f"**{key.replace('_', ' ')}:** {value}" for key, value in system.items()
                  if ("load" in key or "wall" in key) and value is not None]
        lines += [
            *([f"- **folder:** `{folder}`"] if len(systems) > 1 else []),
            f"- **CPU:** {cpu_text(system)}; **GPU:** {gpu_text(system)}",
            f"- **Python:** {system.get('python', '?')}; **packages:** {packages_text(system)}",
            f"- **git commit:** {system.get('git_commit') or 'unknown'}{dirty}; **host:** {system.get('hostname', '?')}; "
            f"**date:** {system.get('date', '?')}",
            f"- **command:** `{system.get('command', '?')}`" + "".join(f"; {extra}" for extra in extras),
            "",
        ]
    return lines


def shard_differences(systems):
    """Lines naming what differs between the folders' machines (hardware, package versions); none when alike."""
    if len(systems) < 2:
        return []
    aspects = {"hardware": lambda system: f"{cpu_text(system)}; GPU {gpu_text(system)}",
               "package versions": lambda system: f"Python {system.get('python', '?')}, {packages_text(system)}"}
    lines = []
    for aspect, describe in aspects.items():
        seen = defaultdict(list)
        for folder, system in systems:
            seen[describe(system)].append(folder.name)
        if len(seen) > 1:
            lines.append(f"- **Warning: the folders ran on different {aspect}**, so their runs are not like for like: "
                         + "; ".join(f"{', '.join(names)}: {text}" for text, names in seen.items()))
    return lines + [""] if lines else []


def is_quick(sweep):
    """True when the sweep was run with benchmark.sh --quick (its command line or workload.json says so)."""
    commands = [system.get("command") or "" for _, system in sweep.systems]
    return any("--quick" in command.split() for command in commands) or any(
        workload.get("quick") for _, workload in sweep.workload_files)


def condition_lines(sweep):
    """The sweep's wall time and the load average while it ran, as benchmark.sh recorded them."""
    lines = []
    for folder, conditions in sweep.conditions:
        parts = []
        if conditions.wall_seconds:
            total = sum(conditions.wall_seconds)
            several = len(conditions.wall_seconds) > 1
            parts.append(f"**sweep wall time:** {total / 60:.1f} min ({total:.0f} s"
                         + (f", {len(conditions.wall_seconds)} invocations" if several else "")
                         + (f" from {conditions.span[0]} to {conditions.span[1]}" if several else "") + ")")
            parts += [invocations_text(conditions.commands)] if several else []
        if conditions.loads:
            loads = sorted(conditions.loads)
            parts.append(f"**1-minute load average at the end of each run:** median {float(np.median(loads)):.2f}, "
                         f"range {loads[0]:.2f}–{loads[-1]:.2f} over {len(loads)} runs (a run itself accounts for "
                         f"about 1–2 on this count; more means something else was running)")
        prefix = f"`{folder.name}`: " if max(len(sweep.conditions), len(sweep.systems)) > 1 else ""
        lines.append("- " + prefix + "; ".join(parts))
    return lines + [""] if lines else []


def invocations_text(commands):
    """The command lines of a sweep's invocations, each once with how many ran it; older sweeps.txt files recorded
    none, and then the command above (system.json's) is only the last invocation's."""
    if not any(commands):
        return "**commands:** not recorded per invocation (the command above is the last invocation's)"
    counts = Counter(commands)
    return "**commands (invocations):** " + ", ".join(
        f"`{command}` ({count})" if command else f"not recorded ({count})" for command, count in counts.items())


def workload_key(row):
    """What the header groups runs by: their workload; exp5's, which differ in the number of envs by design, by the
    rest of it."""
    work = row["config"].work
    return ("exp5", ("", *work[1:])) if row["exp"] == "exp5" else ("", work)


def workload_lines(sweep):
    """The per-iteration workloads and iteration counts of the runs, eager and compiled apart; exp5's in one line."""
    lines = []
    for (exp, work), rows in itertools.groupby(sorted(sweep.rows, key=workload_key), key=workload_key):
        rows = list(rows)
        counts = lambda eager: sorted({row["num_iterations"] for row in rows if (row["compile_mode"] in EAGER_MODES) == eager})
        envs = ordered((row["env"] for row in rows), sweep.env_order)
        if exp:
            work = ("/".join(map(str, sorted({num_envs(row) or 0 for row in rows}))), *work[1:])
        settings = ", ".join(f"{name} {value}" for name, value in zip(WORK_FIELDS, work))
        compiled, eager = counts(False), counts(True)
        lines.append(f"- **Workload{f' ({exp})' if exp else ''}:** {settings}; iterations "
                     f"{'/'.join(map(str, compiled)) or '–'}, eager iterations {'/'.join(map(str, eager)) or '–'}; "
                     f"{len(rows)} runs on {len(envs)} envs ({', '.join(envs)})")
    for folder, workload in sweep.workload_files:
        lines.append(f"- **workload.json** (`{folder.name}`): " + ", ".join(f"{k} {v}" for k, v in workload.items()))
    exp5 = ("; exp5's runs, which differ in the number of envs by design, meet only in its cost model and its "
            "comparisons at the same N") if rows_of(sweep.rows, "exp5") else ""
    if len(lines) > 1 + len(sweep.workload_files) or exp5:
        lines.append(f"- Runs of different workloads are never paired with each other{exp5}.")
    return lines + [""]


def machine_kind_lines(sweep):
    """One line naming the machine kinds of a sweep of several, and that runs are compared only within one kind."""
    if len(sweep.machines) < 2:
        return []
    kinds = "; ".join(f"**machine {number}:** {kind} ({', '.join(f'`{folder.name}`' for folder in folders)})"
                      for number, (kind, folders) in enumerate(sweep.machines.items(), 1))
    return [f"- **This sweep mixes {len(sweep.machines)} machine kinds** (CPU model, GPU model; each folder's "
            f"system.json): {kinds}. Runs are ranked and paired only within one kind: every section below but "
            "'How to read this report' and 'Environment complexity' is written once per kind, its heading naming "
            "the kind.", ""]


def absent_lines(sweep):
    """One line naming the experiments the sweep does not hold (their sections are left out); none when it holds all."""
    absent = [f"{exp} ({topic})" for exp, topic in EXPERIMENT_TOPICS.items() if not rows_of(sweep.rows, exp)]
    return [f"- **Not in this sweep:** {'; '.join(absent)}.", ""] if absent else []


def window_lines(sweep):
    """Which iterations each window holds for each run length in the sweep."""
    lines = []
    for length in sorted({row["num_iterations"] for row in sweep.rows}):
        held = []
        for window, (first, last, _) in WINDOWS.items():
            last = min(last, length - 1)
            held.append(f"{window}: " + ("none" if last < first else f"{first}" if last == first else f"{first}–{last}"))
        lines.append(f"- **Iterations each window holds, runs of {length} iterations:** " + "; ".join(held))
    return lines + [""]


def header_section(sweep):
    """What a reader needs before the numbers: smoke-test warning, machine, software, commit, workload, windows."""
    lines = []
    if is_quick(sweep):
        lines += ["> **Smoke test, not results:** this sweep ran `benchmark.sh --quick` (a reduced workload) to check "
                  "the pipeline; its numbers show the shape of the effects only.", ""]
    lines += machine_lines(sweep.systems) + shard_differences(sweep.systems) + machine_kind_lines(sweep)
    return lines + condition_lines(sweep) + workload_lines(sweep) + absent_lines(sweep) + window_lines(sweep)


def section_ranking(sweep, out):
    """The answer first: per model size, the fully compiled variants ranked, with intervals, break-even and conclusions."""
    if not rows_of(sweep.rows, "exp1"):
        return []
    rows = [row for row in rows_of(sweep.rows, "exp1") if row["label"] in FULLY_COMPILED]
    lines = [heading(sweep, "Which variant is fastest? (exp1, fully compiled variants)"), ""]
    labels = ordered((row["label"] for row in rows), FULLY_COMPILED)
    if len(labels) < 2:
        warn("skipping ranking.png: fewer than two fully compiled variants in exp1")
        return lines + ["Skipped: fewer than two fully compiled variants in exp1.", ""]
    rankings = size_rankings(rows, FULLY_COMPILED, sweep.names["iter8_99_median_s"])
    lines += empty_window_lines([row for ranking in rankings for row in ranking.rows], ("iter8_99_median_s",))
    lines += image(ranking_chart(rankings, out, "exp1", "ranking.png"), "ranking of the fully compiled variants")
    return lines + ranking_lines(rankings)


def size_rankings(rows, labels, steady_name=None):
    """A SizeRanking per model size of the rows, of the labels it has; the steady window named by each size's runs
    unless steady_name names it for all."""
    rankings = []
    for size in ordered((row["size"] for row in rows), SIZES):
        sized, length = most_common_length(where(rows, size=size))
        table, fastest_total, fastest_steady = standings(sized, ordered((row["label"] for row in sized), labels))
        table.sort(key=lambda standing: standing.total[0])
        name = steady_name or window_names([row["run"] for row in sized])["iter8_99_median_s"]
        rankings.append(SizeRanking(size, length, name, table, fastest_total, fastest_steady, sized))
    return rankings


def ranking_lines(rankings):
    """The ranking table of every size and its generated conclusions."""
    table_rows, conclusions = [], []
    for ranking in rankings:
        reference = next(standing for standing in ranking.table if standing.label == ranking.fastest_total)
        conclusions.append(ranking_conclusion(ranking.size, ranking.length, ranking.table, ranking.fastest_total,
                                              ranking.fastest_steady, ranking.steady_name))
        table_rows += [[ranking.size, standing.label, standing.envs, relative_text(standing.total),
                        relative_text(standing.steady), seconds_text(standing.iter0_s), seconds_text(standing.steady_s),
                        break_even_text(standing, reference, standing.steady_vs_total)] for standing in ranking.table]
    steady = "/".join(dict.fromkeys(ranking.steady_name for ranking in rankings))
    header = ["model size", "variant (mode)", "envs", "total, relative to the fastest", f"{steady}, relative",
              "iteration 0 (s, geo. mean)", f"{steady} (s/iteration, geo. mean)",
              "faster steady state repays iteration 0 (vs the shortest in total)"]
    lines = markdown_table(header, table_rows)
    return lines + ["**Conclusions** (generated from the numbers above):", ""] + [f"- {c}" for c in conclusions] + [""]


def section_sizes(sweep, out):
    """exp7's answer: per model size, the fully compiled variants and torch env-jit ranked as exp1's are, how each
    one's gap to the fastest moves with the size, the spread over seeds beside the spread over envs, and the rollout's
    share of the iteration per size (the synchronised runs). Each size's windows are named from its own runs."""
    rows = rows_of(sweep.rows, "exp7")
    if not rows:
        return []
    lines = [heading(sweep, "Does the ranking hold at every model size? (exp7)"), ""]
    rankings = [ranking for ranking in size_rankings(where(rows, timing="async"), SIZE_LABELS)
                if len(ranking.table) > 1]
    if not rankings:
        return lines + ["Skipped: no model size has two variants of exp7.", ""]
    longest = max(ranking.length for ranking in rankings)
    reduced = [f"{ranking.size} ({ranking.length} iterations)" for ranking in rankings if ranking.length < longest]
    if reduced:
        lines += [f"*Reduced workload:* the {listed(reduced)} runs are shorter than the others, so their totals weigh "
                  "iteration 0 more; totals are compared within a size, never across sizes, and the trend across "
                  "sizes below is the steady state's.", ""]
    lines += empty_window_lines([row for ranking in rankings for row in ranking.rows], ("iter8_99_median_s",))
    lines += image(size_trend_chart(rankings, out), "steady iteration relative to each size's fastest")
    return lines + ranking_lines(rankings) + size_trend_lines(rankings) + seed_spread_lines(rankings) + \
        size_share_lines(where(rows, timing="sync"))


def size_trend_lines(rankings):
    """How each variant's steady state relative to the fastest moves from one size to the next, with a conclusion on
    the spread between the slowest and the fastest variant per size."""
    if len(rankings) < 2:
        return []
    labels = ordered((standing.label for ranking in rankings for standing in ranking.table), SIZE_LABELS)
    by_size = [{standing.label: standing for standing in ranking.table} for ranking in rankings]
    table = [[label] + [relative_text(sized[label].steady) if label in sized else "–" for sized in by_size]
             for label in labels]
    lines = ["**How the gap moves with the model size** (each variant's steady state relative to the fastest of its "
             "size, geometric mean over envs and seeds, as in the table above):", ""]
    lines += markdown_table(["variant (mode)"] + [ranking.size for ranking in rankings], table)
    gaps = {label: {ranking.size: sized[label].steady[0] for ranking, sized in zip(rankings, by_size)
                    if label in sized and not math.isnan(sized[label].steady[0])} for label in labels}
    lines += [gap_move_text(label, by_size) for label, by_size in gaps.items() if len(by_size) > 1]
    spreads = {ranking.size: max(standing.steady[0] for standing in ranking.table) for ranking in rankings
               if not any(math.isnan(standing.steady[0]) for standing in ranking.table)}
    if len(spreads) < 2:
        return lines + [""]
    first, last = list(spreads)[0], list(spreads)[-1]
    direction = "narrows" if spreads[last] < spreads[first] else "widens"
    moves = listed([f"{spread:.2f}× at {size}" for size, spread in spreads.items()])
    return lines + [f"- The slowest variant's steady state is {moves} the fastest's: the gap between the frameworks "
                    f"{direction} from {first} to {last}.", ""]


def gap_move_text(label, by_size):
    """One variant's steady state relative to each size's fastest, from the smallest size to the largest, and whether
    its gap narrows or widens as the model grows, or stays within KEEPS_UP× of the fastest at every size."""
    path = " → ".join(f"{gap:.2f}× ({size})" for size, gap in by_size.items())
    gaps = list(by_size.values())
    if max(gaps) <= KEEPS_UP:
        return f"- {label}: {path}: within {KEEPS_UP - 1:.0%} of the fastest at every size."
    direction = "narrows" if gaps[-1] < gaps[0] else "widens" if gaps[-1] > gaps[0] else "ends where it started"
    return f"- {label}: {path}: its gap to the fastest {direction} as the model grows."


def seed_spread_lines(rankings):
    """Per size with repeats: each variant's steady state relative to the fastest, its spread over the envs (the min
    and max of the envs' geometric means over seeds) beside its spread over seeds (the widest env's min to max)."""
    table = []
    for ranking in rankings:
        if len({row["seed"] for row in ranking.rows}) < 2:
            continue
        for standing in ranking.table:
            pairs = paired_labels(ranking.rows, ranking.fastest_steady, standing.label, "iter8_99_median_s")
            per_env = [sorted(group) for group in by_env(pairs)]  # each speedup: its time / the fastest's
            if not per_env:
                continue
            envs = [geometric_mean(ratios) for ratios in per_env]
            widest = max(per_env, key=lambda ratios: ratios[-1] / ratios[0])
            table.append([ranking.size, standing.label, speedup_text(geometric_mean(envs)),
                          f"{min(envs):.2f}–{max(envs):.2f}×", f"{widest[0]:.2f}–{widest[-1]:.2f}×",
                          max(len(ratios) for ratios in per_env)])
    if not table:
        return []
    lines = ["**Run-to-run spread beside env-to-env spread** (steady state relative to the fastest, paired by env "
             "and seed): over envs, the range of each env's geometric mean over seeds; over seeds, the range within "
             "the env whose seeds differ most.", ""]
    return lines + markdown_table(["model size", "variant (mode)", "relative (geo. mean)", "over envs",
                                   "over seeds (widest env)", "seeds"], table)


def size_share_lines(rows):
    """The synchronised exp7 runs: per size and variant, the rollout and the update (medians over seeds of each run's
    steady-window median) and the rollout's share of the two."""
    table, shares = [], defaultdict(dict)
    sizes = ordered((row["size"] for row in rows), SIZES)
    for size in sizes:
        sized = where(rows, size=size)
        steady = window_names([row["run"] for row in sized])["iter8_99_median_s"]
        for label in ordered((row["label"] for row in sized), SIZE_LABELS):
            rollout, update = (median(metric_values(where(sized, label=label), metric)) for metric in SYNC_METRICS)
            share = rollout / (rollout + update)
            if not math.isnan(share):
                shares[label][size] = share
            table.append([size, label, steady, seconds_text(rollout), seconds_text(update), percent_text(share, "")])
    if not table:
        return []
    envs = listed(ordered((row["env"] for row in rows), GRID_ENVS))
    lines = [f"**Rollout and update per model size** (the synchronised runs on {envs}; medians over seeds of each "
             "run's median over its steady window):", ""]
    lines += markdown_table(["model size", "variant (mode)", "window", "rollout (s)", "update (s)", "rollout share"],
                            table)
    share_text = lambda by_size: " → ".join(f"{percent_text(share, '')} ({size})" for size, share in by_size.items())
    moves = [f"{label} {share_text(by_size)}" for label, by_size in shares.items() if len(by_size) > 1]
    return lines + ([f"- The rollout's share of the iteration by model size: {'; '.join(moves)}.", ""] if moves else [])


def section_scaling(sweep, out):
    """exp5's answer: per env, each variant's cost model t(N) = a + b·N with the N at which it comes within
    WITHIN_FASTEST× of the fastest, two charts and generated conclusions; the sync runs' rollout and update; every run
    with its peak memory. Its windows are named from exp5's runs alone."""
    rows = rows_of(sweep.rows, "exp5")
    if not rows:
        return []
    steady = window_names([row["run"] for row in rows])["iter8_99_median_s"]
    lines = [heading(sweep, "How the cost grows with the number of envs (exp5)"), "",
             f"Each run's steady time per iteration t is the median of its {steady}. Per variant and env, "
             "t(N) = a + b·N is fitted over the measured numbers of envs N by least squares on relative error: "
             "**a** is the fixed cost of an iteration whatever the batch (dispatch, host round trips, Python per "
             "step), **b** the cost of one more env (its steps, their forward passes and its share of the update). "
             f"The intervals are {FIT_LEVEL:.0%} intervals from the fit's standard errors and Student's t with "
             "(runs − 2) degrees of freedom: with one seed per N the residuals are the only spread, so they say how "
             f"well a line fits these points, not how runs vary. 'Within {WITHIN_FASTEST}× of the fastest' compares "
             "the median at each measured N with the fastest variant's at that N; between measured N it is "
             "interpolated log-log (marked ≈), beyond them never.", ""]
    empty = empty_window_lines(rows, ("iter8_99_median_s",))
    cells = named_cells(where(rows, timing="async"), per_env_workload, sweep.env_order)
    tables = {name: table for name, table in ((name, scalings(cell)) for name, cell in cells.items()) if table}
    if not tables:  # one line: the empty window, or that no async run has a steady state
        lines += empty or [f"No cost model: no async exp5 run has a steady state ({steady}).", ""]
        return lines + scaling_run_lines(rows, {}, sweep.env_order, steady)
    steps = {name: num_steps(cell[0]) for name, cell in cells.items()}
    lines += empty + scaling_model_lines(tables, steps, out, steady) + scaling_sync_lines(rows, sweep.env_order, steady)
    fits = {(name, scaling.label): scaling.fit for name, table in tables.items() for scaling in table}
    return lines + scaling_run_lines(rows, fits, sweep.env_order, steady)


def scaling_model_lines(tables, steps, out, steady):
    """The cost model of each exp5 cell: the two charts (the relative one only where an env has two variants to
    compare), the a/b table and the generated conclusions."""
    lines = image(scaling_sps_chart(tables, steps, out, steady), "steady-state SPS against the number of envs")
    if any(len(table) > 1 for table in tables.values()):
        lines += image(scaling_relative_chart(tables, out, steady),
                       "time relative to the fastest against the number of envs")
    else:
        variants = listed(sorted({scaling.label for table in tables.values() for scaling in table}))
        lines += [f"No chart of times relative to the fastest: every env ran one variant ({variants}), which would "
                  "only be compared with itself.", ""]
    table = [[name, scaling.label, len(scaling.points), "/".join(map(str, scaling.ns)), cost_text(scaling.fit, "a"),
              cost_text(scaling.fit, "b"), percent_text(max_residual(scaling.fit), ""), within_text(scaling)]
             for name, cells in tables.items() for scaling in cells]
    header = ["env", "variant (mode)", "runs", "N measured", "a: fixed cost per iteration",
              "b: cost per env per iteration", "largest relative residual", f"within {WITHIN_FASTEST}× of the fastest"]
    lines += markdown_table(header, table)
    conclusions = [scaling_conclusion(name, cells) for name, cells in tables.items()]
    return lines + ["**Conclusions** (generated from the numbers above):", ""] + [f"- {c}" for c in conclusions] + [""]


def scaling_sync_lines(rows, env_order, steady):
    """exp5's synchronised runs: rollout and update per variant and N, and a and b of each part."""
    sync = where(rows, timing="sync")
    if not sync:
        return []
    times, costs = [], []
    for name, cell in named_cells(sync, per_env_workload, env_order).items():
        rollouts, updates = ({scaling.label: scaling for scaling in scalings(cell, metric)} for metric in SYNC_METRICS)
        for label in [label for label in rollouts if label in updates]:
            rollout, update = rollouts[label], updates[label]
            times += [[name, label, f"{n:,}", seconds_text(time_at(rollout, n)), seconds_text(time_at(update, n)),
                       percent_text(time_at(rollout, n) / (time_at(rollout, n) + time_at(update, n)), "")]
                      for n in rollout.ns if n in update.ns]
            costs.append([name, label] + [cost_text(part.fit, cost) for part in (rollout, update) for cost in "ab"])
    if not times:
        return [f"No rollout and update split: no synchronised exp5 run has a steady state ({steady}).", ""]
    lines = [f"**Rollout and update** (the synchronised runs; medians over seeds of each run's median of {steady}):",
             ""]
    lines += markdown_table(["env", "variant (mode)", "N", "rollout (s)", "update (s)", "rollout share"], times)
    lines += ["a and b of each part, fitted as above over its synchronised N (through two N the line is exact: no "
              "interval):", ""]
    return lines + markdown_table(["env", "variant (mode)", "rollout a", "rollout b (per env)", "update a",
                                   "update b (per env)"], costs)


def scaling_run_lines(rows, fits, env_order, steady):
    """Every exp5 run: its steady time against the cost model's, the steady SPS, its peak RSS and device peak."""
    device = any(not math.isnan(row["peak_memory_bytes"]) for row in rows)
    label_rank, table = rank(LABEL_COLORS), []
    for name, cell in named_cells(rows, per_env_workload, env_order).items():
        order = lambda row: (label_rank(row["label"]), num_envs(row) or 0, row["timing"], row["seed"])
        for row in sorted(cell, key=order):
            n, seconds = num_envs(row) or math.nan, row["iter8_99_median_s"]
            fit = fits.get((name, row["label"])) if row["timing"] == "async" else None
            model = fit.at(n) if fit else math.nan
            sps = n * num_steps(row) / seconds
            table.append([name, row["label"], f"{n:,.0f}", row["timing"], row["seed"], seconds_text(seconds),
                          seconds_text(model), percent_text((model - seconds) / seconds),
                          "–" if math.isnan(sps) else f"{sps:,.0f}", mib_text(row["peak_rss_bytes"])]
                         + ([mib_text(row["peak_memory_bytes"])] if device else []))
    header = ["env", "variant (mode)", "N", "timing", "seed", f"{steady} (s, median)", "cost model (s)",
              "relative residual", "steady SPS", "peak RSS (MiB)"] + (["device peak (MiB)"] if device else [])
    return ["**Every exp5 run** (the cost model's time and residual for the async runs it was fitted to; peak RSS: "
            "`memory/peak_rss_bytes`" + (", device peak: `memory/peak_bytes`" if device else "") + "):", ""] \
        + markdown_table(header, table)


def group_cell_key(group):
    """exp6's cell key of a group: env, model size, and the agents' workload and length."""
    return group.config.env, group.config.size, (*group.config.work, group.num_iterations)


def section_agents(sweep, out):
    """exp6's answer: the wall time to train N agents per variant (chart and table with agents per hour and the vmapped
    process's speedup over the processes), the exp5 prediction beside the measured gain, generated conclusions."""
    if not rows_of(sweep.rows, "exp6"):
        return []
    lines = [heading(sweep, "Many agents: one vmapped process against many processes (exp6)"), ""]
    if not sweep.groups:
        return lines + ["No exp6 group is usable: the warnings name each group's reason.", ""]
    lines += ["Each group trains N agents: one process for all of them (vmapped), or N fresh processes run `parallel` "
              "at a time. Wall time: the launch of the first process to the exit of the last (group.json). A process "
              "variant's time for an N it did not run is extrapolated from its largest measured N: ⌈N/P⌉ waves of P "
              "processes, each taking one wave's time there; extrapolated figures are marked as such.", ""]
    cells = named_cells(sweep.groups, group_cell_key, sweep.env_order)
    times = {name: agent_times(groups) for name, groups in cells.items()}
    lines += image(agents_chart(times, out), "wall time to train N agents")
    conclusions = []
    for name, groups in cells.items():
        key = group_cell_key(groups[0])
        prediction, sentence = prediction_lines(sweep.rows, times[name], (key[0], key[1], key[2][1:-1]),
                                                num_envs(groups[0].rows[0]), groups[0].num_iterations)
        lines += ([f"**{name}**", ""] if len(cells) > 1 else []) + agents_table(times[name]) + prediction
        conclusions.append(agents_conclusion(name, times[name], sentence))
    return lines + ["**Conclusions** (generated from the numbers above):", ""] + [f"- {c}" for c in conclusions] + [""]


def agents_table(variants):
    """Table: per N, each variant's wall time and agents per hour, and each vmapped variant's speedup over each process
    variant; extrapolated values marked."""
    every_n = sorted({n for times in variants for n in (*times.measured, *times.extrapolated)})
    pairs = [(vmapped, other) for vmapped in variants if vmapped.vmapped for other in variants if not other.vmapped]
    table = []
    for n in every_n:
        row = [f"{n:,}"]
        for times in variants:
            wall, extrapolated = wall_at(times, n)
            row += [wall_text(wall, extrapolated), wall_text(n * 3600 / wall, extrapolated, ",.0f")]
        for vmapped, other in pairs:
            (wall, extrapolated), (other_wall, other_extrapolated) = wall_at(vmapped, n), wall_at(other, n)
            speedup = speedup_text(other_wall / wall)
            row.append(speedup + (" (extrapolated)" if extrapolated or other_extrapolated else ""))
        table.append(row)
    header = ["N agents"] + [f"{times.label}: {what}" for times in variants for what in ("wall (s)", "agents per hour")]
    header += [f"speedup of {vmapped.label} over {other.label} processes" for vmapped, other in pairs]
    return markdown_table(header, table)


def prediction_lines(rows, variants, cell_key, width, iterations):
    """The gain the exp5 cost model of PREDICTION_LABEL in the cell predicts for the vmapped variant over its processes
    (agents of width envs and the given iterations), beside the measured one; and the conclusion's sentence (None
    without a prediction)."""
    vmapped = next((times for times in variants if times.vmapped), None)
    processes = [times for times in variants if not times.vmapped]
    fit = exp5_fit(rows, PREDICTION_LABEL, cell_key)
    if vmapped is None or not processes or fit is None:
        why = ("no exp5 fit of " + PREDICTION_LABEL + f" on {cell_key[0]} with the agents' per-env workload to predict "
               "from" if fit is None else "no vmapped variant and process variant to compare")
        return [f"No predicted gain: {why}.", ""], None
    linen = next((times for times in processes if times.label == PREDICTION_LABEL), None)
    parallel = (linen or processes[0]).parallel
    process_rows = [row for group in (linen.groups if linen else []) for row in group.rows]
    table, compared = [], [n for n in vmapped.measured if linen and n in linen.measured] or list(vmapped.measured)
    for n in sorted(vmapped.measured):
        vmapped_rows = [row for group in vmapped.groups if group.agents == n for row in group.rows]
        per_iteration, per_run = predicted_gains(fit, n, width, parallel, iterations, process_rows, vmapped_rows)
        measured, extrapolated = wall_at(linen, n) if linen else (math.nan, False)
        table.append([f"{n:,}", speedup_text(per_iteration), speedup_text(per_run),
                      speedup_text(measured / vmapped.measured[n]) + (" (extrapolated)" if extrapolated else "")])
    largest, said = max(vmapped.measured), sorted(vmapped.measured).index(max(compared))
    lines = [f"**Predicted from exp5** (a prediction, not a measurement): {PREDICTION_LABEL}'s cost model on "
             f"{cell_key[0]}, a = {cost_text(fit, 'a', False)} and b = {cost_text(fit, 'b', False)} per env, with "
             f"n = {width} envs per agent and P = {parallel} processes at a time: per iteration, N processes cost "
             "⌈N/P⌉·(a + b·n) against a + b·N·n for one process with an N times wider batch; per run, each side "
             "also pays its start-up and iteration 0 as measured in these groups.", ""]
    lines += markdown_table(["N agents", "predicted gain per iteration", "predicted gain per run",
                             f"measured gain over {PREDICTION_LABEL} processes"], table)
    gpu = (f"On a GPU, where b is far smaller, the gain per iteration tends to ⌈N/P⌉ (b → 0): "
           f"{math.ceil(largest / parallel)}× at N = {largest:,} with P = {parallel} — a prediction of the model, "
           "not measured here.")
    sentence = (f"exp5's cost model of {PREDICTION_LABEL} predicts a gain of {table[said][1]} per iteration at N = "
                f"{table[said][0]} ({table[said][2]} per run with the measured start-up and iteration 0); measured: "
                f"{table[said][3]}. {gpu}")
    return lines + [gpu, ""], sentence


def section_env_backend(sweep, out):
    """Chart, table and conclusion of exp4: framework effect against env-backend effect per env and size."""
    rows = rows_of(sweep.rows, "exp4")
    lines = [heading(sweep, "Env backend against framework (exp4)"), ""]
    if not rows:
        return []
    metrics = ("total_s", "iter8_99_median_s")
    effects = {metric: backend_effects(rows, metric) for metric in metrics}
    if not any(effects.values()):
        warn("skipping env_backend.png: no exp4 env and size ran all four variants with the same seed")
        return lines + ["Skipped: no exp4 env and size ran all four variants "
                        f"({', '.join(BACKEND_CELLS.values())}) with the same seed and workload.", ""]
    lines += ["The 2 × 2 of framework {torch, linen} × env backend {gymnax on the device, Gymnasium on the CPU}: "
              + "; ".join(f"{fw} on {backend}: {label}" for (fw, backend), label in BACKEND_CELLS.items())
              + ". The chart and the first table give the cells' times; each effect in the second is a time ratio "
              "averaged over the other factor.", ""]
    lines += empty_window_lines(rows, metrics)
    cells = ordered_configs([{"env": env, "size": size} for cells in effects.values() for env, size in cells],
                            sweep.env_order)
    table = [[sweep.names[metric], env, size, len(cell), f"{geometric_mean([f for f, _ in cell]):.2f}×",
              f"{geometric_mean([b for _, b in cell]):.2f}×"]
             for metric in metrics for (env, size), cell in sorted(effects[metric].items())]
    lines += image(env_backend_chart(rows, cells, out, sweep.names["iter8_99_median_s"]),
                   "each framework's steady iteration on each env backend")
    lines += cell_time_lines(rows, cells, sweep.names)
    lines += ["**The effects** (time ratios, geometric means over seeds):", ""]
    lines += markdown_table(["metric", "env", "model size", "seeds", "framework: torch / linen",
                             "env backend: Gymnasium / gymnax"], table)
    conclusions = [backend_conclusion(effects[metric], what) for metric, what in
                   (("total_s", "total time"), ("iter8_99_median_s", f"the steady state ({sweep.names['iter8_99_median_s']})"))
                   if effects[metric]]
    return lines + ["**Conclusion** (generated from the numbers above):", ""] + [f"- {c}" for c in conclusions] + [""]


def backend_axes():
    """The frameworks and the env backends of exp4's cells, each in BACKEND_CELLS's order."""
    return list(dict.fromkeys(fw for fw, _ in BACKEND_CELLS)), list(dict.fromkeys(b for _, b in BACKEND_CELLS))


def env_backend_chart(rows, cells, out, steady_name):
    """Chart: per env and size, each framework's steady iteration on each env backend (x: the backend, one line per
    framework through the geometric means over seeds, each seed a point; log y): the cells themselves, so that an
    interaction between the two factors shows as lines that are not parallel."""
    frameworks, backends = backend_axes()
    figure, axes = new_figure(f"Steady iteration per framework and env backend — exp4 (async, median of "
                              f"{steady_name})\npoints: seeds; lines: geometric mean over seeds; parallel lines: the "
                              "two factors do not interact", len(cells), ncols=min(len(cells), 3),
                              panel_size=(4.4, 3.8))
    colors = colors_for(BACKEND_CELLS.values())
    for ax, (env, size) in zip(axes, cells):
        for framework in frameworks:
            present = [(x, backend) for x, backend in enumerate(backends) if (framework, backend) in BACKEND_CELLS]
            color = colors[BACKEND_CELLS[framework, present[0][1]]]
            seconds = [metric_values(where(rows, env=env, size=size, label=BACKEND_CELLS[framework, backend]),
                                     "iter8_99_median_s") for _, backend in present]
            measured = [(x, values) for (x, _), values in zip(present, seconds) if values]
            for x, values in measured:
                ax.scatter([x] * len(values), values, color=color, s=20, alpha=0.7, zorder=3)
            if measured:
                ax.plot([x for x, _ in measured], [geometric_mean(values) for _, values in measured], color=color,
                        marker="o", linewidth=2, label=framework)
        log_axis(ax, "y", " s")
        category_axis(ax, backends)
        ax.set(title=f"{env} · {size}", xlabel="env backend", ylabel="s per steady iteration")
        ax.grid(axis="y", which="major", alpha=0.3)
    return save_figure(figure, out, "env_backend.png")


def cell_time_lines(rows, cells, names):
    """Table: each exp4 cell's steady iteration (geometric mean over seeds) per env and size, framework × backend."""
    frameworks, backends = backend_axes()
    columns = [(framework, backend) for framework in frameworks for backend in backends
               if (framework, backend) in BACKEND_CELLS]
    table = [[env, size] + [seconds_text(geometric_mean(metric_values(
        where(rows, env=env, size=size, label=BACKEND_CELLS[column]), "iter8_99_median_s"))) for column in columns]
        for env, size in cells]
    return [f"**The cells** (s per steady iteration, median of {names['iter8_99_median_s']}; geometric mean over "
            "seeds):", ""] + markdown_table(["env", "model size"] + [f"{fw} on {backend}" for fw, backend in columns],
                                            table)


def section_compile_modes(sweep, out):
    """Chart and table: each compiled mode's speedup over its explicit baseline (exp2 chart; exp2, exp3 table)."""
    rows = rows_of(sweep.rows, "exp2")
    if not rows and not rows_of(sweep.rows, "exp3"):
        return []
    comparisons = compile_mode_comparisons(rows)
    lines = [heading(sweep, "Effect of each compile mode"), "",
             "Each mode is measured against the same framework one step less compiled: "
             + ", ".join(f"{label} over {baseline}" for label, baseline in COMPILE_BASELINES.items())
             + " (torch_compile jits the env, so its baseline is torch env-jit, not torch none). Totals are compared "
               "only between runs of the same number of iterations ('–' where the eager runs are shorter).", ""]
    lines += empty_window_lines([row for row in sweep.rows if row["exp"] in ("exp2", "exp3", "sync")], COMPILE_METRICS)
    if comparisons:
        lines += compile_mode_chart(rows, comparisons, out, sweep.names)
    else:
        warn("skipping compile_modes.png: no exp2 compiled mode ran beside its baseline")
        lines += ["No chart: no exp2 compiled mode ran beside its baseline.", ""]
    table = []
    for exp in ("exp2", "exp3"):
        exp_rows = rows_of(sweep.rows, exp)
        for (_, label, baseline), size in itertools.product(compile_mode_comparisons(exp_rows), SIZES):
            sized = where(exp_rows, size=size)
            pairs = [paired_labels(sized, label, baseline, metric) for metric in COMPILE_METRICS]
            if any(pairs):
                mode, base = (window_standing(where(sized, label=name)) for name in (label, baseline))
                steady_ratio = relative_to(sized, baseline, label, "iter8_99_median_s")
                table.append([exp, label, baseline, size, max(map(len, pairs))]
                             + [speedup_text(geometric_mean([p.speedup for p in pair])) for pair in pairs]
                             + [break_even_text(mode, base, steady_ratio)])
    header = ["exp", "mode", "over (baseline)", "model size", "pairs"]
    header += [f"{sweep.names[metric]} (geo. mean)" for metric in COMPILE_METRICS]
    header += ["a faster steady state repays a longer iteration 0"]
    return lines + (markdown_table(header, table) if table else [])


def definitions_section(sweep):
    """How to read the numbers: speedup, windows, statistics, repeats (of exp6: groups of one variant and N agents)."""
    repeats = Counter((row["label"], row["config"], row["num_iterations"])
                      for row in sweep.rows if row["exp"] != "exp6")
    repeats.update((group.label, group_cell_key(group), group.agents) for group in sweep.groups)
    counts = sorted(set(repeats.values()))
    steady = sweep.names["iter8_99_median_s"]
    return [
        "## How to read this report",
        "",
        f"- {len(sweep.rows)} finished runs; repeats (seeds) per configuration: {', '.join(map(str, counts))}.",
        "- **Speedup of A over B** = time_B / time_A for the same experiment, env, model size, timing mode and "
        "per-iteration workload, paired by seed (only the same seed; totals only between runs of the same number "
        "of iterations). Above 1× means A is faster.",
        "- Windows of `time/iteration`: **iteration 0** (holds compilation), **iterations 1–7** (mean), "
        f"**{steady}** (median: the steady state). **Start-up** (`time/startup`: imports, device "
        "and model creation) precedes iteration 0. **Total** is `time/total` (iteration 0 to the end).",
        "- exp1 runs asynchronously (the honest end-to-end time); exp2 and exp3 synchronise around rollout "
        "and update to time them separately, which adds host syncs.",
        f"- Intervals over envs (each env once, its seeds averaged): with {MIN_ENVS_FOR_CI} or more envs a **95% CI** "
        "of a geometric mean (Student's t on the envs' mean log speedups) and, for a median, the distribution-free "
        "interval between two envs' values, labelled with its exact coverage (e.g. 96% CI at 12 envs); with fewer "
        "envs the **range** (min–max over envs), which is no confidence interval. Both describe the spread over "
        "this sweep's envs and seeds on this machine, not across machines.",
        "",
    ]


def env_section(sweep):
    """The env complexity axis: step time relative to the fastest env."""
    if not sweep.env_relative:
        return []
    header = ["env", "step time relative to the fastest env"]
    return ["## Environment complexity", "", "From env_timing.json (the sweep's own regime).", ""] + markdown_table(
        header, [[env, f"{sweep.env_relative[env]:.3g}"] for env in sweep.env_order if env in sweep.env_relative]
    )


def section_duration_vs_complexity(sweep, out):
    """Chart: exp1 total duration of each variant against env complexity, one panel per model size."""
    rows = rows_of(sweep.rows, "exp1")
    lines = [heading(sweep, "Total duration against env complexity (exp1)"), ""]
    if not rows:
        return []
    if not sweep.env_relative:  # read_json has warned
        return lines + ["Skipped: no env_timing.json.", ""]
    rows, length = most_common_length(rows)
    sizes = ordered((row["size"] for row in rows), SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    colors = colors_for(labels)
    envs = [env for env in sweep.env_order if where(rows, env=env)]
    if not_timed := [env for env in envs if env not in sweep.env_relative]:
        warn(f"duration_vs_complexity.png leaves out envs that env_timing.json does not time: {', '.join(not_timed)}")
        envs = [env for env in envs if env in sweep.env_relative]
    figure, axes = new_figure(f"Total duration against env complexity — exp1 (async, {scope(rows)}, runs of {length} "
                              "iterations)\n"
                              "points: mean over seeds, whiskers: min–max", len(sizes), panel_size=(5.2, 4.8))
    for ax, size in zip(axes, sizes):
        for label in labels:
            totals = [metric_values(where(rows, size=size, label=label, env=env), "total_s") for env in envs]
            cells = [(sweep.env_relative[env], np.array(values)) for env, values in zip(envs, totals) if values]
            x = [relative for relative, _ in cells]
            means = np.array([values.mean() for _, values in cells])
            whiskers = min_max_whiskers(means, [values for _, values in cells])
            ax.errorbar(x, means, yerr=whiskers, marker="o", markersize=4, capsize=2, color=colors[label], label=label)
        log_axis(ax, "x", "×")
        log_axis(ax, "y", " s")
        ax.set(title=f"model size: {size}", xlabel="env step time relative to the fastest env",
               ylabel="total duration (time/total)")
        ax.grid(which="major", alpha=0.3)
        env_names = ax.secondary_xaxis("top")
        env_names.set_xticks([sweep.env_relative[env] for env in envs], envs, rotation=90, fontsize=6)
        env_names.xaxis.set_minor_formatter(NullFormatter())
    return lines + image(save_figure(figure, out, "duration_vs_complexity.png"), "duration against env complexity")


def section_pairwise_speedups(sweep, out, metric, name):
    """Chart and table: speedups between the fully compiled variants on metric, per model size (exp1)."""
    rows = rows_of(sweep.rows, "exp1")
    what = sweep.names[metric]
    lines = [heading(sweep, f"Speedups between the fully compiled variants: {what} (exp1)"), ""]
    comparisons = compiled_comparisons({row["label"] for row in rows})
    if not rows:
        return []
    if not comparisons:
        warn(f"skipping {name}: fewer than two fully compiled variants in exp1")
        return lines + ["Skipped: fewer than two fully compiled variants in exp1.", ""]
    lines += empty_window_lines([row for row in rows if row["label"] in FULLY_COMPILED], (metric,))
    sizes = ordered((row["size"] for row in rows), SIZES)
    groups = [(size, a, b, paired_labels(where(rows, size=size), a, b, metric))
              for size in sizes for _, a, b in comparisons]
    if not any(pairs for _, _, _, pairs in groups):
        warn(f"skipping {name}: no two fully compiled variants have a value of {what} for the same run configuration")
        return lines + [f"No speedups: no two fully compiled variants have a value of {what} for the same "
                          "configuration and seed.", ""]
    figure, axes = new_figure(f"Speedup of A over B on {what} — exp1 (async, {scope(rows)})\n"
                              "points: (env, seed) pairs, black line: geometric mean", 1, panel_size=(8, 4.6))
    draw_speedup_strips(axes[0], sizes, [name for name, _, _ in comparisons],
                        speedups_by_category(rows, "size", sizes, comparisons, metric))
    axes[0].set(xlabel="model size", ylabel=f"speedup (time_B / time_A), {what}")
    return lines + image(save_figure(figure, out, name), f"speedups on {what}") + speedup_table(groups)


def section_overhead(sweep, out, exp):
    """Chart and table: start-up and the three iteration windows per variant/mode and model size."""
    rows = rows_of(sweep.rows, exp)
    lines = [heading(sweep, f"Overhead windows ({exp})"), ""]
    if not rows:
        return []
    lines += empty_window_lines(rows, OVERHEAD_METRICS)
    sizes = ordered((row["size"] for row in rows), SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    title = (f"Overhead windows — {exp} ({rows[0]['timing']}, {scope(rows)})\n"
             "points: median over runs (envs × seeds), whiskers: min–max")
    figure, axes = new_figure(title, len(OVERHEAD_METRICS), ncols=2, panel_size=(6, 3.8))
    for ax, metric in zip(axes, OVERHEAD_METRICS):
        draw_points(ax, sizes, labels, values_by(rows, "size", sizes, labels, metric))
        per_iteration = metric in ("iter1_7_mean_s", "iter8_99_median_s")
        ax.set(title=sweep.names[metric], xlabel="model size",
               ylabel="seconds per iteration" if per_iteration else "seconds")
    lines += image(save_figure(figure, out, f"overhead_{exp}.png"), f"overhead windows {exp}")
    table = []
    for label, size in itertools.product(labels, sizes):
        cell = where(rows, size=size, label=label)
        if cell:
            medians = [seconds_text(median(metric_values(cell, metric))) for metric in OVERHEAD_METRICS]
            table.append([label, size, len(cell)] + medians)
    header = ["variant (mode)", "model size", "runs", "start-up (s)", "iteration 0 (s)",
              "iterations 1–7 (s, mean)", f"{sweep.names['iter8_99_median_s']} (s, median)"]
    return lines + ["Medians over runs (envs × seeds) of each run's value.", ""] + markdown_table(header, table)


def section_sync(sweep, out, exp, category_field):
    """Charts: synchronised rollout and update times per env or size, and the compiled variants' speedups on them."""
    rows = [row for row in rows_of(sweep.rows, exp) if row["timing"] == "sync"]
    lines = [heading(sweep, f"Synchronised rollout and update ({exp}, per {category_field})"), ""]
    if not rows_of(sweep.rows, exp):
        return []
    if not rows:
        warn(f"skipping sync_times_{exp}.png and sync_speedups_{exp}.png: no synchronised {exp} runs")
        return lines + [f"Skipped: no synchronised {exp} runs.", ""]
    lines += empty_window_lines(rows, SYNC_METRICS)
    if not any(metric_values(rows, metric) for metric in SYNC_METRICS):
        warn(f"skipping sync_times_{exp}.png and sync_speedups_{exp}.png: no synchronised {exp} run holds a steady state")
        return lines + [f"No charts: no synchronised {exp} run reaches {sweep.names['iter8_99_median_s']}, the window "
                        "rollout and update are timed over.", ""]
    categories = ordered((row[category_field] for row in rows), sweep.env_order if category_field == "env" else SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    layout = {"ncols": 1, "panel_size": (14, 4.2)} if category_field == "env" else {"ncols": 2, "panel_size": (7, 4.2)}
    title = (f"Synchronised rollout and update times — {exp} ({scope(rows)}), per-run median of "
             f"{sweep.names['iter8_99_median_s']}\n"
             "points: median over seeds, whiskers: min–max")
    figure, axes = new_figure(title, len(SYNC_METRICS), **layout)
    for ax, metric in zip(axes, SYNC_METRICS):
        draw_points(ax, categories, labels, values_by(rows, category_field, categories, labels, metric))
        ax.set(title=sweep.names[metric], ylabel="seconds per iteration")
    lines += image(save_figure(figure, out, f"sync_times_{exp}.png"), f"synchronised times {exp}")
    comparisons = compiled_comparisons(labels)
    if not comparisons:
        return lines
    figure, axes = new_figure(f"Speedups on synchronised rollout and update — {exp} ({scope(rows)})\n"
                              "points: seeds, black line: geometric mean", len(SYNC_METRICS), **layout)
    for ax, metric in zip(axes, SYNC_METRICS):
        draw_speedup_strips(ax, categories, [name for name, _, _ in comparisons],
                            speedups_by_category(rows, category_field, categories, comparisons, metric))
        ax.set(title=sweep.names[metric], ylabel="speedup of A over B (time_B / time_A)")
    return lines + image(save_figure(figure, out, f"sync_speedups_{exp}.png"), f"synchronised speedups {exp}")


def section_memory(sweep, out):
    """Chart and table: peak device memory (memory/peak_bytes) per variant and model size, where runs of exp1 to exp4
    logged it (exp5's runs, which differ in their number of envs, give it per run in its section; exp6's and exp7's,
    repeats of exp1's configurations, not at all)."""
    rows = [row for row in sweep.rows if row["exp"] not in ("exp5", "exp6", "exp7")]
    if not rows:
        return []
    rows = [row for row in rows if not math.isnan(row["peak_memory_bytes"])]
    lines = [heading(sweep, "Peak device memory"), ""]
    if not rows:
        return lines + ["No run logged `memory/peak_bytes` (the frameworks report it only on some devices, e.g. GPUs).", ""]
    for row in rows:
        row["peak_memory_mib"] = row["peak_memory_bytes"] / 2**20
    sizes = ordered((row["size"] for row in rows), SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    figure, axes = new_figure(f"Peak device memory (memory/peak_bytes) — exp1 to exp4 ({scope(rows)})\n"
                              "points: median over runs, whiskers: min–max", 1, panel_size=(8, 4.4))
    values = values_by(rows, "size", sizes, labels, "peak_memory_mib")
    draw_points(axes[0], sizes, labels, values)
    log_axis(axes[0], "y", " MiB")
    axes[0].set(xlabel="model size", ylabel="peak device memory")
    lines += image(save_figure(figure, out, "memory.png"), "peak device memory")
    table = [[label, size, len(values[size, label]), f"{median(values[size, label]):.4g}"]
             for label, size in itertools.product(labels, sizes) if values[size, label]]
    return lines + markdown_table(["variant (mode)", "model size", "runs", "peak memory (MiB, median)"], table)


def learning_rows(rows, exp):
    """The rows of an experiment whose returns the learning evidence shows: exp5's and exp7's async runs (their sync
    runs repeat their seeds), exp6's agents of usable groups."""
    rows = rows_of(rows, exp)
    if exp in ("exp5", "exp7"):
        return where(rows, timing="async")
    return [row for row in rows if not math.isnan(row["agents"])] if exp == "exp6" else rows


def final_return_table(rows, env_order, split):
    """The labels of the rows and a table row [env, split value, each label's final returns] per env (by complexity)
    and value of the split field (sizes small to large, counts ascending)."""
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    env_rank = rank(env_order)
    value_rank = rank(SIZES) if split == "size" else lambda value: (float(value), "")
    keys = sorted({(row["env"], row[split]) for row in rows}, key=lambda key: (env_rank(key[0]), value_rank(key[1])))
    return labels, [[env, value] + [mean_and_spread(metric_values(where(rows, env=env, label=label, **{split: value}),
                                                                  "final_return")) for label in labels]
                    for env, value in keys]


def section_final_returns(sweep):
    """Heading of the learning evidence; the final return per variant/mode and env, and model size (exp5: number of
    envs, async runs; exp6: number of agents, the agents of usable groups), for each experiment."""
    lines = [heading(sweep, "Learning: final returns and learning curves"), "",
             f"Final return: mean of a run's last {FINAL_RETURN_EPISODES} logged episodic returns; "
             "mean ± sample standard deviation over seeds (exp6: over the agents of the groups of N agents).", ""]
    for exp in EXPERIMENTS:
        rows = learning_rows(sweep.rows, exp)
        split, name = FINAL_RETURN_SPLITS.get(exp, ("size", "model size"))
        labels, table = final_return_table(rows, sweep.env_order, split)
        if table:
            lines += [f"**{exp}**", ""] + markdown_table(["env", name] + labels, table)
    return lines


def learning_curve_groups(sweep):
    """(exp, size) of each learning-curve figure pair: exp1 per model size, exp2, exp3, exp4 and exp6 whole (size None).

    exp5 has none: its runs of 12 iterations at numbers of envs 256 times apart are no repeats of one curve (its final
    returns are per number of envs).
    """
    groups = [("exp1", size) for size in ordered((row["size"] for row in rows_of(sweep.rows, "exp1")), SIZES)]
    return groups + [(exp, None) for exp in ("exp2", "exp3", "exp4", "exp6") if learning_rows(sweep.rows, exp)]


def section_learning_curves(sweep, out, exp, size):
    """Charts: one experiment's (and model size's) learning curves against env steps and against training time."""
    rows = learning_rows(sweep.rows, exp)
    rows = where(rows, size=size) if size else rows
    what = f"{exp}, {size}" if size else exp
    lines = [heading(sweep, f"Learning curves: {what}", "###"), ""]
    shared = any(row["process_agents"] > 1 for row in rows)  # exp6's vmapped agents: one clock for N agents
    time_label = f"training time{' per agent' * shared} after iteration 0"
    notes = []
    for x_axis, against in (("steps", "env steps"), ("time", time_label)):
        name = f"learning_curves_{exp}{'_' + size if size else ''}_{x_axis}.png"
        title = (f"Episodic return against {against} — {what} ({scope(rows)})\nmean over seeds, band: min–max"
                 + ("; iteration 0 (compilation) left out of the time axis, see the overhead windows" if x_axis == "time"
                    else ""))
        if x_axis == "time" and shared:
            title += "\ntime per agent: a process's time divided by the agents it trains (one for a process per agent)"
        figure_name, notes = learning_curve_figure(rows, sweep.env_order, title, x_axis, out, name, time_label)
        lines += image(figure_name, f"learning curves {what} against {against}")
    return lines + ([f"- {note}" for note in notes] + [""] if notes else [])


def side_name(letter, folders, sweep):
    """'A: shard-1, shard-2 (NVIDIA H100 80GB HBM3 (driver 580.65) ×1)': a compared side's folders and machine."""
    system = sweep.systems[0][1] if sweep.systems else {}
    machine = gpu_text(system) if system.get("gpu") else system.get("cpu") or "unknown machine"
    return f"{letter}: {', '.join(folder.name for folder in folders)} ({machine})"


def section_compare(sides, sweeps, out):
    """Chart and table: the same configurations' total durations on two sweeps side by side, and A's speedup over B."""
    (sweep_a, sweep_b) = sweeps
    name_a, name_b = side_name("A", sides[0], sweep_a), side_name("B", sides[1], sweep_b)
    lines = ["## Comparison of two sweeps", "", f"### {name_a}", ""] + machine_lines(sweep_a.systems)
    lines += shard_differences(sweep_a.systems) + [f"### {name_b}", ""] + machine_lines(sweep_b.systems)
    lines += shard_differences(sweep_b.systems)
    lines += ["Only configurations (experiment, variant, mode, env, size, timing, workload, iterations) present in "
              "both are compared, paired by seed.", ""]
    labels_timings = ordered(((row["label"], row["timing"]) for row in sweep_a.rows + sweep_b.rows),
                             list(itertools.product(LABEL_COLORS, ("async", "sync"))))
    categories, times, speedups, table, category_colors = [], {}, {}, [], {}
    for label, timing in labels_timings:
        pairs = paired(*(where(sweep.rows, label=label, timing=timing) for sweep in (sweep_a, sweep_b)), "total_s")
        if not pairs:
            continue
        category = f"{label}, {timing}"
        categories.append(category)
        category_colors[category] = colors_for([label])[label]
        times[category, name_a] = [pair.time_a for pair in pairs]
        times[category, name_b] = [pair.time_b for pair in pairs]
        speedups[category, "A over B"] = [pair.speedup for pair in pairs]
        for size in ordered((pair.config.size for pair in pairs), SIZES):
            sized = [pair for pair in pairs if pair.config.size == size]
            sized_speedups = [pair.speedup for pair in sized]
            table.append([label, timing, size, len(sized), seconds_text(median([pair.time_a for pair in sized])),
                          seconds_text(median([pair.time_b for pair in sized])),
                          speedup_text(geometric_mean(sized_speedups), interval(sized))])
    if not categories:
        warn("skipping compare.png: the two sweeps share no configuration")
        return lines + ["Skipped: the two sweeps share no configuration.", ""]
    figure, axes = new_figure(f"{name_a}  vs  {name_b}", 2, ncols=1, panel_size=(max(8, 1.1 * len(categories)), 4.2))
    colors = colors_for([name_a, name_b])
    draw_points(axes[0], categories, [name_a, name_b], times, colors)
    axes[0].set(title="total duration of matched runs (points: median, whiskers: min–max)", ylabel="total duration")
    draw_speedup_strips(axes[1], categories, ["A over B"], speedups, {"A over B": "black"}, category_colors)
    axes[1].set(title="speedup of A over B = time_B / time_A\npoints: matched runs in the variant's colour, black line: "
                "geometric mean", ylabel="speedup of A over B")
    lines += image(save_figure(figure, out, "compare.png"), "comparison of two sweeps")
    header = ["variant (mode)", "timing", "model size", "pairs", "median total A (s)", "median total B (s)",
              "speedup of A over B, geo. mean [interval]"]
    return lines + markdown_table(header, table)


# ------------------------------------------ report: the command line, the sections run in parallel, REPORT.md


def parse_args(argv):
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path, metavar="DIR", help="sweep folder(s) to read together as one sweep")
    parser.add_argument("--out", type=Path, help="output folder (default: the first DIR; with --compare a new folder "
                        "compare__A__vs__B)")
    parser.add_argument("--compare", nargs="+", type=Path, metavar="DIR_A",
                        help="side A of a comparison of two sweeps (e.g. two machines); several folders = the shards "
                             "of one sweep. `--compare DIR_A DIR_B` alone compares two single folders")
    parser.add_argument("--vs", nargs="+", type=Path, metavar="DIR_B", help="side B of --compare")
    parser.add_argument("--workers", type=int, default=WORKERS,
                        help=f"processes that read and draw (default {WORKERS}); 0 does everything in this process")
    args = parser.parse_args(argv)
    if not args.dirs and not args.compare:
        fail("give at least one DIR or --compare DIR_A [...] --vs DIR_B [...]")
    if args.workers < 0:
        fail(f"--workers must be 0 or more, not {args.workers}")
    if args.vs and not args.compare:
        fail("--vs needs --compare")
    if args.compare and not args.vs:
        if len(args.compare) != 2:
            fail("--compare needs --vs DIR_B [...], or exactly two folders: --compare DIR_A DIR_B")
        args.compare, args.vs = args.compare[:1], args.compare[1:]
    for folder in [*args.dirs, *(args.compare or []), *(args.vs or [])]:
        if not folder.is_dir():
            fail(f"{folder} is not a folder")
    if args.compare and args.dirs:
        fail("give either DIR ... (one sweep's report) or --compare (a comparison), not both")
    if args.compare:
        args.out = args.out or Path(f"compare__{args.compare[0].name}__vs__{args.vs[0].name}")
        if args.out.is_dir() and next(args.out.rglob("events.out.tfevents.*"), None):
            fail(f"--out {args.out} holds a sweep: a comparison never overwrites a sweep's own REPORT.md")
    return args


def machine_parts(sweep, folder):
    """(sweep, ChartFolder) per machine kind: the sweep and the folder itself when every run ran on one kind."""
    if len(sweep.machines) < 2:
        return [(sweep, ChartFolder(folder))]
    return [(replace(sweep, rows=where(sweep.rows, machine=kind), machine=f"machine {number}: {kind}",
                     groups=[group for group in sweep.groups if group.rows[0]["machine"] == kind]),
             ChartFolder(folder, f"_machine{number}", f"machine {number}: {kind}"))
            for number, kind in enumerate(sweep.machines, 1)]


def detail_tasks(sweep, out):
    """The sections after the answers, for one sweep (or the part of one machine kind), in report order."""
    return [
        (section_duration_vs_complexity, sweep, out),
        (section_pairwise_speedups, sweep, out, "total_s", "speedups_total.png"),
        (section_overhead, sweep, out, "exp1"),
        (section_overhead, sweep, out, "exp3"),
        (section_pairwise_speedups, sweep, out, "iter8_99_median_s", "speedups_steady_state.png"),
        (section_sync, sweep, out, "exp2", "env"),
        (section_sync, sweep, out, "exp3", "size"),
        (section_memory, sweep, out),
        (section_final_returns, sweep),
        *[(section_learning_curves, sweep, out, exp, size) for exp, size in learning_curve_groups(sweep)],
    ]


def report_tasks(sweep, folder):
    """The report's sections in order, as (function, *arguments) calls that draw their charts and return markdown.

    The answers of the experiments come first (ranking, ranking per model size, env backend, compile modes, scaling,
    many agents); a section whose experiment the sweep does not hold returns no lines. A sweep of several machine kinds
    gets each answer once per kind, then the details kind by kind: runs are ranked and paired only within one kind.
    """
    parts = machine_parts(sweep, folder)
    answers = [(section, part, out) for section in (section_ranking, section_sizes, section_env_backend,
                                                    section_compile_modes, section_scaling, section_agents)
               for part, out in parts]
    details = [task for part, out in parts for task in detail_tasks(part, out)]
    return [*answers, (definitions_section, sweep), (env_section, sweep), *details]


def section_name(task):
    """A report task's name for messages: 'overhead (exp3)', 'ranking (machine 2: …)'."""
    function, sweep, *arguments = task
    details = [argument for argument in arguments if isinstance(argument, str)] + [sweep.machine] * bool(sweep.machine)
    return function.__name__.removeprefix("section_") + (f" ({', '.join(details)})" if details else "")


def run_sections(pool, tasks):
    """Each report task's markdown lines, run in the pool, and one error line per task that failed.

    A failed section leaves a line in its place; the other sections are written as usual.
    """
    futures = [pool.submit(*task) for task in tasks]
    sections, errors = [], []
    for task, future in zip(tasks, futures):
        try:
            sections.append(future.result())
        except Exception as error:  # any failure of one section: the report keeps the others
            cause = f"{type(error).__name__}: {error}"
            errors.append(f"section {section_name(task)} failed: {cause}")
            sections.append([f"## Failed section: {section_name(task)}", "", f"This section failed ({cause}).", ""])
    return sections, errors


def main(argv=None):
    """Reads the sweep (or the two compared sweeps), writes summary.csv, the charts and REPORT.md."""
    started = time.perf_counter()
    args = parse_args(argv)
    errors = []
    out = args.out or args.dirs[0]
    with ProcessPoolExecutor(max_workers=args.workers) if args.workers else InProcess() as pool:
        if args.compare:
            sides = (args.compare, args.vs)
            sweeps = [load_sweep(folders, pool, args.workers) for folders in sides]
            out.mkdir(parents=True, exist_ok=True)
            report = ["# PPO framework benchmark: comparison of two sweeps", ""] + section_compare(sides, sweeps,
                                                                                                ChartFolder(out))
        else:
            sweep = load_sweep(args.dirs, pool, args.workers)
            out.mkdir(parents=True, exist_ok=True)
            write_summary_csv(sweep.rows, out / "summary.csv")
            print("drawing charts", flush=True)
            sections, errors = run_sections(pool, report_tasks(sweep, out))
            report = ["# PPO framework benchmark report", ""] + header_section(sweep)
            report += [line for section in sections for line in section]
    (out / "REPORT.md").write_text("\n".join(report))
    print(f"wrote {out / 'REPORT.md'} in {time.perf_counter() - started:.1f} s", flush=True)
    for error in errors:
        print(f"plot.py: error: {error}", file=sys.stderr, flush=True)
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
