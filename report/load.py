"""Load: the event files and the sweep's own files (system.json, workload.json, env_timing.json, the records of
benchmark.sh, a grouped experiment's group.json) into a Sweep."""

import itertools
import json
import math
import time
from collections import defaultdict
from concurrent.futures import Executor, Future
from pathlib import Path

import numpy as np
from google.protobuf.message import DecodeError
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader

from sweep.experiments import ALL, BY_NAME, EXPERIMENTS, GRID_ENVS, UNFILED
from report.machines import machine_kind
from report.messages import fail, warn
from report.settings import GROUP_FIELDS, METRIC_NAMES, WINDOWS, WORK_FIELDS
from report.summary import row_sort_key, summary_row
from report.types import Condition, Group, RunSeries, SkippedRun, Sweep, SweepConditions

GROUPED = tuple(experiment.name for experiment in ALL if experiment.grouped)  # their runs: runs/<exp>/<group>/<agent>/
PREPARES = tuple(experiment.name for experiment in ALL if experiment.prepares)  # their runs are never read


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
    """Turns a two-column markdown table (|key|value| rows after a header and a |-|-| line; a value may be empty)
    into a dict."""
    cells = (line.strip()[1:-1].split("|", 1) for line in markdown.splitlines()[2:])
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
    """The group folder of an agent's event file of a grouped experiment (runs/<exp>/<group>/<agent>/events.*), else
    None."""
    return path.parents[1] if len(path.parents) > 2 and path.parents[2].name in GROUPED else None


def scalar_at_end(scalars, tag):
    """The last value logged under tag, NaN where it was not logged."""
    return scalars[tag][-1][1] if scalars[tag] else math.nan


def load_run(path):
    """Reads one event file into a RunSeries; raises SkippedRun when it cannot be used."""
    scalars, tables = read_event_file(path)
    if "time/total" not in scalars:
        raise SkippedRun("unfinished, or cut or corrupt before its end (no time/total)")
    try:
        hyperparameters, system = tables["hyperparameters"], tables["system"]
        timing = "sync" if hyperparameters["sync_timing"].lower() == "true" else "async"
        group = group_folder(path)
        exp = group.parent.name if group else path.parent.parent.name
        if exp not in EXPERIMENTS:
            exp = UNFILED[timing]
        work = tuple(hyperparameters.get(name, "?") for name in WORK_FIELDS)
        condition = Condition(exp, hyperparameters["env_id"], hyperparameters["model_size"], timing, work,
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
    return RunSeries(
        path=path,
        condition=condition,
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
        env_steps=float(iteration_end_steps[-1]) if iteration_end_steps.size else math.nan,
        buffer_size=int(hyperparameters["buffer_size"]) if hyperparameters.get("buffer_size", "").isdigit() else None,
    )


def load_runs(paths):
    """The RunSeries of each path, or the reason it was skipped as a string."""
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
    """The folder's SweepConditions, or None when benchmark.sh recorded none of its files (older sweeps, other
    machines). The load as each run ended: records.txt's ("<run_name> <verdict> <exit status> <ms> <load> <log>", "-"
    where unknown), after load.txt's ("<run_name> <load>"), what benchmark.sh recorded before records.txt."""
    sweeps, loads, records = folder / "sweeps.txt", folder / "load.txt", folder / "records.txt"
    if not sweeps.is_file() and not loads.is_file() and not records.is_file():
        return None
    try:
        invocations = [line.split() for line in sweeps.read_text().splitlines() if line.strip()] \
            if sweeps.is_file() else []
        wall = [float(fields[2]) for fields in invocations]
        commands = [" ".join(fields[4:]) for fields in invocations]
        load = [float(line.split()[1]) for line in loads.read_text().splitlines() if line.strip()] \
            if loads.is_file() else []
        load += [float(fields[4]) for fields in map(str.split, records.read_text().splitlines())
                 if fields and fields[4] != "-"] if records.is_file() else []
    except (IndexError, ValueError, OSError) as error:
        warn(f"ignoring the sweep's wall time and load records in {folder}: {error}")
        return None
    span = (invocations[0][0], invocations[-1][1]) if invocations else ("", "")
    return SweepConditions(wall_seconds=wall, loads=load, span=span, commands=commands)


def drop_duplicate_runs(runs, machine_of):
    """Keeps the newest file of runs that repeat the same variant, mode, condition, length and seed on one machine kind."""
    newest = {}
    for run in sorted(runs, key=lambda run: run.path.stat().st_mtime):
        key = (run.label, run.condition, run.num_iterations, run.seed, machine_of[run.path])
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


def shares_windows(exp):
    """Whether an experiment's runs (or the unfiled runs: experiments.UNFILED) have the reference length, so that they
    name the windows of the generic sections and make the memory chart (Experiment.shared_windows)."""
    return exp not in BY_NAME or BY_NAME[exp].shared_windows


def shared_window_runs(runs):
    """The runs whose lengths name the windows of the experiments of the reference length: all but those of the
    experiments that name their own (their runs differ in length from the others), or all of them in a sweep of those
    alone."""
    return [run for run in runs if shares_windows(run.condition.exp)] or runs


def read_runs(folders, pool, chunks):
    """Every finished run under the folders (warm-up runs aside), each with the folder it was read from; the files are
    read in `chunks` calls in the pool (one per worker)."""
    folder_of = {}
    for folder in folders:
        found = [path for path in sorted(folder.rglob("events.out.tfevents.*"))
                 if path.parent.parent.name not in PREPARES]
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
        if isinstance(results[path], RunSeries):
            runs.append(results[path])
        else:
            warn(f"skipping {path}: {results[path]}")
    if not runs:
        fail(f"none of the {len(paths)} event files under {', '.join(map(str, folders))} is a finished run")
    return runs, folder_of


def group_of(path, rows):
    """The Group that the group.json at path describes, from it and its agents' rows; None where the file is
    unreadable (read_json warns), else a string saying why the group cannot be used."""
    data = read_json(path, f"its {path.parent.parent.name} group is left out")
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
    identities = {(row["label"], row["env"], row["condition"], row["num_iterations"]) for row in rows}
    if len(identities) > 1 or rows[0]["label"] != label or rows[0]["env"] != env:
        return f"its agents' runs are not all {label} on {env} with one workload and length"
    return Group(path=path.parent, label=label, condition=rows[0]["condition"],
                 num_iterations=rows[0]["num_iterations"], agents=agents, processes=processes, parallel=parallel,
                 wall=wall, rows=rows)


def read_groups(folders, rows):
    """The Groups of the grouped experiments under the folders (runs/<exp>/<group>/group.json), each agent's row given
    its group's number of agents; one warning for each group that cannot be used and each folder of a grouped
    experiment's runs without a group.json."""
    agent_rows = defaultdict(list)
    for row in rows:
        if row["exp"] in GROUPED:
            agent_rows[Path(row["path"]).parents[1]].append(row)
    files = sorted(path for folder in folders for path in folder.rglob("group.json")
                   if path.parent.parent.name in GROUPED)
    groups = []
    for path in files:
        group = group_of(path, agent_rows.pop(path.parent, []))
        if isinstance(group, str):
            warn(f"leaving out the {path.parent.parent.name} group {path.parent}: {group}")
        elif group:
            groups.append(group)
    for group in groups:
        for row in group.rows:
            row["agents"], row["process_agents"] = group.agents, group.agents // group.processes
    for folder, left in agent_rows.items():
        warn(f"leaving out the {left[0]['exp']} runs in {folder}: no group.json beside them")
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
    envs = {run.condition.env for run in runs}
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
