"""Reads the TensorBoard event files of benchmark sweeps and writes summary.csv, charts (PNG) and REPORT.md.

    python plot.py DIR [DIR ...] [--out OUT] [--compare DIR_A DIR_B]

DIR is a sweep folder written by benchmark.sh (system.json, env_timing.json, runs/<exp>/<run>/events.*)
or any folder holding run folders. A run's configuration comes from its `hyperparameters` and
`system` text summaries, never from its folder name. Runs under runs/warmup/ are ignored. Runs found
outside runs/<exp1|exp2|exp3>/ count as exp1 when async; sync ones are labelled "sync" and count as
exp2 (those of model size small) and as exp3.

Speedup of A over B = time_B / time_A for matched configurations (same experiment, env, model size
and timing mode), paired by seed where both ran the seed and otherwise by the means over seeds.
"""

import argparse
import csv
import itertools
import json
import math
import os
import struct
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
from google.protobuf.message import DecodeError
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

EXPERIMENTS = ("exp1", "exp2", "exp3")
SIZES = ("small", "medium", "large")
REFERENCE_ENVS = (
    "CartPole-v1", "Acrobot-v1", "MountainCar-v0", "DiscountingChain-bsuite", "MemoryChain-bsuite",
    "UmbrellaChain-bsuite", "BernoulliBandit-misc", "GaussianBandit-misc", "Asterix-MinAtar",
    "Breakout-MinAtar", "Freeway-MinAtar", "SpaceInvaders-MinAtar",
)
# Variant/compile-mode labels in display order, with colours: one hue per framework, darker = more compiled.
LABEL_COLORS = {
    "linen (none)": "#9ecae1", "linen (jit)": "#2171b5",
    "nnx (none)": "#a1d99b", "nnx (jit)": "#41ab5d", "nnx_cached (cached)": "#00441b",
    "torch (none)": "#fdae6b", "torch (env-jit)": "#e6550d",
    "torch_compile (compile)": "#7f2704", "torch_compile (compile+cudagraphs)": "#756bb1",
}
OTHER_COLORS = ("#6a3d9a", "#e7298a", "#17becf", "#bcbd22", "#7f7f7f", "#cab2d6")  # hues no variant label uses
FULLY_COMPILED = ("linen (jit)", "nnx_cached (cached)", "torch_compile (compile)", "torch_compile (compile+cudagraphs)")
# Iteration windows: label -> (first iteration, last iteration, statistic over the window).
WINDOWS = {
    "iteration 0": (0, 0, np.mean),
    "iterations 1–7": (1, 7, np.mean),
    "iterations 8–99": (8, 99, np.median),
}
# summary.csv columns; the timing ones are also the metrics the charts and tables use.
COLUMNS = (
    "exp", "variant", "compile_mode", "env", "size", "timing", "seed", "num_iterations",
    "startup_s", "iter0_s", "iter1_7_mean_s", "iter8_99_median_s", "total_s",
    "rollout_8_99_median_s", "update_8_99_median_s", "final_return", "peak_memory_bytes", "path",
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
OVERHEAD_METRICS = ("startup_s", "iter0_s", "iter1_7_mean_s", "iter8_99_median_s")
SYNC_METRICS = ("rollout_8_99_median_s", "update_8_99_median_s")
COMPILE_METRICS = ("total_s", "iter0_s", "iter8_99_median_s", "rollout_8_99_median_s", "update_8_99_median_s")
FINAL_RETURN_EPISODES = 5
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0
DPI = 110


class SkippedRun(Exception):
    """An event file that plot.py cannot use: unfinished, corrupt, truncated or without its metadata."""


class Config(NamedTuple):
    """What two runs must share to be compared: everything but the variant, compile mode and seed."""

    exp: str
    env: str
    size: str
    timing: str


@dataclass
class Run:
    """One finished run: its configuration and the series the charts use."""

    path: Path
    config: Config
    variant: str
    compile_mode: str
    seed: int
    startup: float
    total: float
    iteration_seconds: np.ndarray  # time/iteration by iteration index, NaN where not logged
    rollout_seconds: np.ndarray  # time/rollout, all NaN without sync timing
    update_seconds: np.ndarray
    return_steps: np.ndarray  # global steps at which an episodic return was logged
    returns: np.ndarray
    return_seconds: np.ndarray  # cumulative time/iteration at the end of the iteration of each return
    peak_memory: float

    @property
    def label(self):
        """Variant and compile mode, e.g. 'linen (jit)'."""
        return f"{self.variant.removeprefix('ppo_')} ({self.compile_mode})"


@dataclass
class Sweep:
    """Every finished run of the input folders, with the machine and env timing files found beside them."""

    rows: list  # one summary row (dict) per run; row["run"] is the Run
    systems: list  # the system.json of each folder that has one
    env_relative: dict  # env -> step time relative to the fastest env (empty without env_timing.json)
    env_order: list  # envs by complexity when known, else in the reference order


@dataclass
class Pair:
    """Two matched measurements of one configuration: A's and B's time for one seed, or their means over seeds."""

    config: Config
    time_a: float
    time_b: float

    @property
    def speedup(self):
        """Speedup of A over B."""
        return self.time_b / self.time_a


# ---------------------------------------------------------------------------------------------- reading


def warn(message):
    """Prints one warning line on stderr."""
    print(f"warning: {message}", file=sys.stderr, flush=True)


def fail(message):
    """Stops with one error line on stderr and exit status 1."""
    sys.exit(f"plot.py: error: {message}")


def read_records(path):
    """Yields the records of a TFRecord file, checking lengths and CRCs.

    tensorboard's own loader stops silently at a truncated or corrupt record, which would make a corrupt
    file look like an unfinished run; this reader says which it is.
    """
    data = path.read_bytes()
    offset = 0
    while offset < len(data):
        if offset + 12 > len(data):
            raise SkippedRun("corrupt: truncated record header")
        header = data[offset : offset + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack_from("<I", data, offset + 8)
        if masked_crc32c(header) != header_crc:
            raise SkippedRun("corrupt: record header fails its CRC check")
        start, end = offset + 12, offset + 12 + length
        if end + 4 > len(data):
            raise SkippedRun("corrupt: truncated record")
        record = data[start:end]
        if masked_crc32c(record) != struct.unpack_from("<I", data, end)[0]:
            raise SkippedRun("corrupt: record fails its CRC check")
        yield record
        offset = end + 4


def parse_markdown_table(markdown):
    """Turns a two-column markdown table (|key|value| rows after a header and a |-|-| line) into a dict."""
    cells = (line.strip().strip("|").split("|", 1) for line in markdown.splitlines()[2:])
    return {cell[0].strip(): cell[1].strip() for cell in cells if len(cell) == 2}


def read_event_file(path):
    """Returns the scalars {tag: [(step, value), ...]} and the text tables {tag: {key: value}} of an event file."""
    scalars, tables = defaultdict(list), {}
    for record in read_records(path):
        try:
            event = Event.FromString(record)
        except DecodeError:
            raise SkippedRun("corrupt: a record is not an Event") from None
        for value in event.summary.value:
            kind = value.WhichOneof("value")
            if kind == "simple_value":
                scalars[value.tag].append((event.step, value.simple_value))
            elif kind == "tensor" and value.metadata.plugin_data.plugin_name == "text":
                tables[value.tag] = parse_markdown_table(value.tensor.string_val[0].decode())
    return scalars, tables


def by_iteration(pairs, num_iterations):
    """Values of (iteration, value) pairs in an array indexed by iteration, NaN where missing."""
    values = np.full(num_iterations, np.nan)
    for step, value in pairs:
        if 0 <= step < num_iterations:
            values[step] = value
    return values


def load_run(path):
    """Reads one event file into a Run; raises SkippedRun when it cannot be used."""
    scalars, tables = read_event_file(path)
    if "time/total" not in scalars:
        raise SkippedRun("unfinished run (no time/total)")
    try:
        hyperparameters, system = tables["hyperparameters"], tables["system"]
        timing = "sync" if hyperparameters["sync_timing"].lower() == "true" else "async"
        exp = path.parent.parent.name
        if exp not in EXPERIMENTS:
            exp = "sync" if timing == "sync" else "exp1"
        config = Config(exp, hyperparameters["env_id"], hyperparameters["model_size"], timing)
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
        startup=scalars["time/startup"][0][1] if scalars["time/startup"] else math.nan,
        total=total,
        iteration_seconds=iteration_seconds,
        rollout_seconds=by_iteration(scalars["time/rollout"], total_step),
        update_seconds=by_iteration(scalars["time/update"], total_step),
        return_steps=returns[:, 0],
        returns=returns[:, 1],
        return_seconds=cumulative_seconds[return_iterations],
        peak_memory=scalars["memory/peak_bytes"][-1][1] if scalars["memory/peak_bytes"] else math.nan,
    )


def load_run_or_reason(path):
    """load_run(path), or the reason it was skipped as a string."""
    try:
        return load_run(path)
    except (SkippedRun, OSError) as reason:
        return str(reason)


def in_parallel(calls):
    """Results of (function, *arguments) calls, run in worker processes (one per CPU), in call order."""
    with ProcessPoolExecutor(max_workers=min(len(calls), os.cpu_count() or 1)) as pool:
        futures = [pool.submit(*call) for call in calls]
        return [future.result() for future in futures]


def read_json(path, consequence):
    """The JSON object in path, or None with a warning that states the consequence when it is missing or unreadable."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        warn(f"{path} not found: {consequence}")
    except (OSError, ValueError) as error:
        warn(f"{path} unreadable ({error}): {consequence}")
    return None


def drop_duplicate_runs(runs):
    """Keeps the newest file of runs that repeat the same variant, mode, config and seed."""
    newest = {}
    for run in sorted(runs, key=lambda run: run.path.stat().st_mtime):
        key = (run.label, run.config, run.seed)
        if key in newest:
            warn(f"{run.path} repeats {newest[key].path}: using the newer file")
        newest[key] = run
    return list(newest.values())


def load_sweep(folders):
    """Reads every finished run under the folders, plus the system.json and env_timing.json beside them."""
    paths = []
    for folder in folders:
        found = [path for path in sorted(folder.rglob("events.out.tfevents.*")) if path.parent.parent.name != "warmup"]
        if not found:
            fail(f"no event files (events.out.tfevents.*, warm-up runs aside) under {folder}")
        paths += found
    print(f"reading {len(paths)} event files under {', '.join(map(str, folders))}", flush=True)
    started = time.perf_counter()
    runs = []
    for path, run in zip(paths, in_parallel([(load_run_or_reason, path) for path in paths])):
        if isinstance(run, Run):
            runs.append(run)
        else:
            warn(f"skipping {path}: {run}")
    if not runs:
        fail(f"none of the {len(paths)} event files under {', '.join(map(str, folders))} is a finished run")
    runs = drop_duplicate_runs(runs)
    print(f"read {len(runs)} finished runs in {time.perf_counter() - started:.1f} s", flush=True)
    systems = [read_json(folder / "system.json", "the report cannot name this machine") for folder in folders]
    env_timings = [read_json(folder / "env_timing.json", "no duration_vs_complexity.png; envs keep the reference order")
                   for folder in folders]
    systems, env_timings = [system for system in systems if system], [timing for timing in env_timings if timing]
    env_relative = {env: entry["relative"] for env, entry in env_timings[0]["envs"].items()} if env_timings else {}
    envs = {run.config.env for run in runs}
    env_order = sorted(envs, key=lambda env: env_relative.get(env, math.inf)) if env_relative else list(REFERENCE_ENVS)
    rows = [summary_row(run) for run in runs]
    rows.sort(key=lambda row: row_sort_key(row, env_order))
    return Sweep(rows=rows, systems=systems, env_relative=env_relative, env_order=env_order)


# ---------------------------------------------------------------------------------------------- summary


def window_seconds(seconds, window):
    """The window's statistic (mean or median) over the iterations that exist in it; NaN when none do."""
    first, last, statistic = WINDOWS[window]
    values = seconds[first : last + 1]
    values = values[~np.isnan(values)]
    return float(statistic(values)) if values.size else math.nan


def summary_row(run):
    """The run's summary.csv row (plus its label and the Run itself for the charts)."""
    return {
        "exp": run.config.exp,
        "variant": run.variant,
        "compile_mode": run.compile_mode,
        "env": run.config.env,
        "size": run.config.size,
        "timing": run.config.timing,
        "seed": run.seed,
        "num_iterations": len(run.iteration_seconds),
        "startup_s": run.startup,
        "iter0_s": window_seconds(run.iteration_seconds, "iteration 0"),
        "iter1_7_mean_s": window_seconds(run.iteration_seconds, "iterations 1–7"),
        "iter8_99_median_s": window_seconds(run.iteration_seconds, "iterations 8–99"),
        "total_s": run.total,
        "rollout_8_99_median_s": window_seconds(run.rollout_seconds, "iterations 8–99"),
        "update_8_99_median_s": window_seconds(run.update_seconds, "iterations 8–99"),
        "final_return": float(np.mean(run.returns[-FINAL_RETURN_EPISODES:])) if run.returns.size else math.nan,
        "peak_memory_bytes": run.peak_memory,
        "path": str(run.path),
        "label": run.label,
        "config": run.config,
        "run": run,
    }


def rank(reference):
    """Sort key placing values in the order of reference, unknown ones after it by name."""
    positions = {value: i for i, value in enumerate(reference)}
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
    """Rows by experiment, variant/mode, env complexity, size and seed."""
    label_rank, env_rank, size_rank = rank(LABEL_COLORS), rank(env_order), rank(SIZES)
    return row["exp"], label_rank(row["label"]), env_rank(row["env"]), size_rank(row["size"]), row["seed"]


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


# ---------------------------------------------------------------------------------------------- statistics


def rows_of(rows, exp):
    """Rows of one experiment; runs found outside runs/<exp>/ are exp1 if async, exp2 (small) and exp3 if sync."""
    if exp == "exp2":
        return [row for row in rows if row["exp"] == "exp2" or (row["exp"] == "sync" and row["size"] == "small")]
    if exp == "exp3":
        return [row for row in rows if row["exp"] in ("exp3", "sync")]
    return [row for row in rows if row["exp"] == exp]


def scope(rows):
    """The envs rows cover, for chart titles: the env's name when only one, else their count."""
    envs = {row["env"] for row in rows}
    return next(iter(envs)) if len(envs) == 1 else f"{len(envs)} envs"


def where(rows, **fields):
    """Rows whose fields equal the given values."""
    return [row for row in rows if all(row[name] == value for name, value in fields.items())]


def metric_values(rows, metric):
    """The metric of the rows, NaNs left out."""
    return [row[metric] for row in rows if not math.isnan(row[metric])]


def paired(rows_a, rows_b, metric):
    """Pairs of A's and B's metric for every config both ran: per common seed, else the means over seeds."""
    by_config = []
    for rows in (rows_a, rows_b):
        seeds = defaultdict(dict)
        for row in rows:
            if not math.isnan(row[metric]):
                seeds[row["config"]][row["seed"]] = row[metric]
        by_config.append(seeds)
    seeds_a, seeds_b = by_config
    pairs = []
    for config in sorted(seeds_a.keys() & seeds_b.keys()):
        a, b = seeds_a[config], seeds_b[config]
        common = sorted(a.keys() & b.keys())
        if common:
            pairs += [Pair(config, a[seed], b[seed]) for seed in common]
        else:
            pairs.append(Pair(config, float(np.mean(list(a.values()))), float(np.mean(list(b.values())))))
    return pairs


def geometric_mean(values, axis=None):
    """Geometric mean, ignoring NaNs (NaN for no values)."""
    values = np.asarray(values, dtype=float)
    return np.exp(np.nanmean(np.log(values), axis=axis)) if values.size else math.nan


def median(values, axis=None):
    """Median, ignoring NaNs (NaN for no values)."""
    values = np.asarray(values, dtype=float)
    return np.nanmedian(values, axis=axis) if values.size else math.nan


def bootstrap_ci(pairs, statistic):
    """95% percentile-bootstrap interval of statistic over the pairs' speedups, resampling whole envs.

    The seeds of one env are not independent evidence about other envs, so each resample draws envs
    with replacement and takes all their pairs. NaN interval with fewer than two envs.
    """
    speedups_by_env = defaultdict(list)
    for pair in pairs:
        speedups_by_env[pair.config.env].append(pair.speedup)
    if len(speedups_by_env) < 2:
        return math.nan, math.nan
    groups = list(speedups_by_env.values())
    padded = np.full((len(groups), max(map(len, groups))), np.nan)
    for i, group in enumerate(groups):
        padded[i, : len(group)] = group
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    picks = rng.integers(len(groups), size=(BOOTSTRAP_RESAMPLES, len(groups)))
    statistics = statistic(padded[picks].reshape(BOOTSTRAP_RESAMPLES, -1), axis=1)
    low, high = np.percentile(statistics, [2.5, 97.5])
    return float(low), float(high)


def compiled_comparisons(labels):
    """('A over B', A, B) for every two fully compiled variants among labels, A before B in display order."""
    present = [label for label in FULLY_COMPILED if label in labels]
    return [(f"{a} over {b}", a, b) for a, b in itertools.combinations(present, 2)]


def framework_of(label):
    """The framework of a variant label: 'nnx_cached (cached)' -> 'nnx'."""
    return label.split(" ")[0].split("_")[0]


def compile_mode_comparisons(rows):
    """(framework, label, eager baseline label) for every compiled mode whose framework's 'none' mode ran."""
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    return [
        (framework_of(label), label, f"{framework_of(label)} (none)")
        for label in labels
        if f"{framework_of(label)} (none)" in labels and not label.endswith("(none)")
    ]


# ---------------------------------------------------------------------------------------------- chart helpers


def colors_for(names):
    """A fixed colour per variant label; any other series (comparisons, sweeps) from OTHER_COLORS."""
    others = itertools.cycle(OTHER_COLORS)
    return {name: LABEL_COLORS.get(name) or next(others) for name in names}


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
    """Adds one legend for all panels, writes the figure as out/name and returns name."""
    handles = {}
    for ax in figure.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        columns_that_fit = int(figure.get_figwidth() / (0.08 * max(map(len, handles)) + 0.6))  # ~0.08 in per character
        location = "outside lower center" if figure.get_layout_engine() else "lower center"
        columns = max(1, min(len(handles), 5, columns_that_fit))
        figure.legend(handles.values(), handles.keys(), loc=location, ncols=columns, markerscale=1.5)
    figure.savefig(out / name, dpi=DPI)
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


def draw_bars(ax, categories, series, values, colors=None):
    """Median of values[(category, series)] as bars with min–max whiskers, grouped by category, log seconds."""
    colors = colors or colors_for(series)
    offsets, width = series_offsets(len(series))
    for offset, name in zip(offsets, series):
        cells = [(x, np.array(values[category, name]))
                 for x, category in enumerate(categories) if values.get((category, name))]
        if not cells:
            continue
        medians = np.array([np.median(cell) for _, cell in cells])
        whiskers = [medians - [cell.min() for _, cell in cells], [cell.max() for _, cell in cells] - medians]
        ax.bar([x + offset for x, _ in cells], medians, width, yerr=whiskers, color=colors[name], label=name,
               error_kw={"elinewidth": 0.8, "capsize": 1.5})
    log_axis(ax, "y", " s")
    category_axis(ax, categories)
    ax.grid(axis="y", which="major", alpha=0.3)


def draw_speedup_strips(ax, categories, series, speedups, colors=None):
    """Each pair's speedups[(category, series)] as a point, their geometric mean as a black line; log y, 1× dashed."""
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
            ax.scatter(centre + jitter.uniform(-width / 4, width / 4, len(values)), values, s=18, alpha=0.7,
                       color=colors[name], linewidths=0, zorder=3, label=None if labelled else name)
            labelled = True
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    log_axis(ax, "y", "×")
    category_axis(ax, categories)
    ax.grid(axis="y", which="major", alpha=0.3)


def speedups_by_category(rows, category_field, categories, comparisons, metric):
    """speedups[(category, name)] for comparisons [(name, label A, label B)] on rows split by category_field."""
    speedups = {}
    for category in categories:
        in_category = where(rows, **{category_field: category})
        for name, label_a, label_b in comparisons:
            pairs = paired(where(in_category, label=label_a), where(in_category, label=label_b), metric)
            speedups[category, name] = [pair.speedup for pair in pairs]
    return speedups


# ---------------------------------------------------------------------------------------------- report helpers


def markdown_table(header, rows):
    """Markdown table lines for a header and rows of cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines + [""]


def seconds_text(value):
    """Seconds with three significant digits, '–' for NaN."""
    return "–" if math.isnan(value) else f"{value:.3g}"


def speedup_text(value, interval=(math.nan, math.nan)):
    """A speedup like '2.00×', with ' [1.80, 2.20]' when an interval is known, '–' for NaN."""
    if math.isnan(value):
        return "–"
    return f"{value:.2f}×" + ("" if math.isnan(interval[0]) else f" [{interval[0]:.2f}, {interval[1]:.2f}]")


def mean_and_spread(values):
    """'mean ± sample std' of values with three significant digits; the mean alone for one value, '–' for none."""
    if len(values) < 2:
        return f"{values[0]:.3g}" if values else "–"
    return f"{np.mean(values):.3g} ± {np.std(values, ddof=1):.2g}"


def image(name, caption):
    """Markdown lines embedding a chart."""
    return [f"![{caption}]({name})", ""]


def speedup_table(groups):
    """Markdown table of geometric-mean and median speedups with bootstrap CIs for [(group, A, B, pairs)]."""
    lines = []
    for group, label_a, label_b, pairs in groups:
        speedups = [pair.speedup for pair in pairs]
        envs = len({pair.config.env for pair in pairs})
        lines.append([
            group, f"{label_a} over {label_b}", len(pairs), envs,
            speedup_text(geometric_mean(speedups), bootstrap_ci(pairs, geometric_mean)),
            speedup_text(median(speedups), bootstrap_ci(pairs, median)),
        ])
    header = ["model size", "speedup of A over B", "pairs", "envs", "geometric mean [95% CI]", "median [95% CI]"]
    return markdown_table(header, lines)


# ---------------------------------------------------------------------------------------------- report sections


def machine_section(systems, heading="## Machine"):
    """The machine(s) a sweep ran on, from system.json."""
    lines = [heading, ""]
    if not systems:
        return lines + ["Unknown: no system.json was found.", ""]
    for system in systems:
        packages = ", ".join(f"{name} {version}" for name, version in (system.get("packages") or {}).items())
        driver = f", driver {system['driver']}" if system.get("driver") else ""
        lines += [
            f"- **GPU:** {system.get('gpu') or 'none (CPU only)'}{driver}",
            f"- **CPU:** {system.get('cpu', '?')}",
            f"- **Python:** {system.get('python', '?')}; **packages:** {packages or '?'}",
            f"- **host:** {system.get('hostname', '?')}; **date:** {system.get('date', '?')}; "
            f"**git commit:** {system.get('git_commit', '?')}",
            f"- **command:** `{system.get('command', '?')}`",
            "",
        ]
    return lines


def definitions_section(sweep):
    """How to read the numbers: speedup, windows, statistics, repeats."""
    repeats = defaultdict(int)
    for row in sweep.rows:
        repeats[row["label"], row["config"]] += 1
    counts = sorted(set(repeats.values()))
    return [
        "## How to read this report",
        "",
        f"- {len(sweep.rows)} finished runs; repeats (seeds) per configuration: {', '.join(map(str, counts))}.",
        "- **Speedup of A over B** = time_B / time_A for the same experiment, env, model size and timing mode, "
        "paired by seed (or, where the two ran different seeds, the ratio of the means over seeds). "
        "Above 1× means A is faster.",
        "- Windows of `time/iteration`: **iteration 0** (holds compilation), **iterations 1–7** (mean), "
        "**iterations 8–99** (median: the steady state). **Start-up** (`time/startup`: imports, device "
        "and model creation) precedes iteration 0. **Total** is `time/total` (iteration 0 to the end).",
        "- exp1 runs asynchronously (the honest end-to-end time); exp2 and exp3 synchronise around rollout "
        "and update to time them separately, which adds host syncs.",
        f"- 95% confidence intervals: percentile bootstrap, {BOOTSTRAP_RESAMPLES:,} resamples (seed "
        f"{BOOTSTRAP_SEED}), drawing whole envs with replacement (all of an env's seeds together). They "
        "describe the spread over this sweep's envs and seeds on this machine, not across machines.",
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
    heading = ["## Total duration against env complexity (exp1)", ""]
    if not rows:
        warn("skipping duration_vs_complexity.png: no exp1 runs")
        return heading + ["Skipped: no exp1 runs.", ""]
    if not sweep.env_relative:  # read_json has warned
        return heading + ["Skipped: no env_timing.json.", ""]
    sizes = ordered((row["size"] for row in rows), SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    colors = colors_for(labels)
    envs = [env for env in sweep.env_order if where(rows, env=env)]
    if not_timed := [env for env in envs if env not in sweep.env_relative]:
        warn(f"duration_vs_complexity.png leaves out envs that env_timing.json does not time: {', '.join(not_timed)}")
        envs = [env for env in envs if env in sweep.env_relative]
    figure, axes = new_figure(f"Total duration against env complexity — exp1 (async, {scope(rows)})\n"
                              "points: mean over seeds, whiskers: min–max", len(sizes), panel_size=(5.2, 4.8))
    for ax, size in zip(axes, sizes):
        for label in labels:
            totals = [metric_values(where(rows, size=size, label=label, env=env), "total_s") for env in envs]
            cells = [(sweep.env_relative[env], np.array(values)) for env, values in zip(envs, totals) if values]
            x = [relative for relative, _ in cells]
            means = np.array([values.mean() for _, values in cells])
            whiskers = [means - [values.min() for _, values in cells], [values.max() for _, values in cells] - means]
            ax.errorbar(x, means, yerr=whiskers, marker="o", markersize=4, capsize=2, color=colors[label], label=label)
        log_axis(ax, "x", "×")
        log_axis(ax, "y", " s")
        ax.set(title=f"model size: {size}", xlabel="env step time relative to the fastest env",
               ylabel="total duration (time/total)")
        ax.grid(which="major", alpha=0.3)
        env_names = ax.secondary_xaxis("top")
        env_names.set_xticks([sweep.env_relative[env] for env in envs], envs, rotation=90, fontsize=6)
        env_names.xaxis.set_minor_formatter(NullFormatter())
    return heading + image(save_figure(figure, out, "duration_vs_complexity.png"), "duration against env complexity")


def section_pairwise_speedups(sweep, out, metric, name):
    """Chart and table: speedups between the fully compiled variants on metric, per model size (exp1)."""
    rows = rows_of(sweep.rows, "exp1")
    what = METRIC_NAMES[metric]
    heading = [f"## Speedups between the fully compiled variants: {what} (exp1)", ""]
    comparisons = compiled_comparisons({row["label"] for row in rows})
    if not comparisons:
        warn(f"skipping {name}: fewer than two fully compiled variants in exp1")
        return heading + ["Skipped: fewer than two fully compiled variants in exp1.", ""]
    sizes = ordered((row["size"] for row in rows), SIZES)
    figure, axes = new_figure(f"Speedup of A over B on {what} — exp1 (async, {scope(rows)})\n"
                              "points: (env, seed) pairs, black line: geometric mean", 1, panel_size=(8, 4.6))
    draw_speedup_strips(axes[0], sizes, [name for name, _, _ in comparisons],
                        speedups_by_category(rows, "size", sizes, comparisons, metric))
    axes[0].set(xlabel="model size", ylabel=f"speedup (time_B / time_A), {what}")
    groups = [(size, a, b, paired(where(rows, size=size, label=a), where(rows, size=size, label=b), metric))
              for size in sizes for _, a, b in comparisons]
    return heading + image(save_figure(figure, out, name), f"speedups on {what}") + speedup_table(groups)


def section_overhead(sweep, out, exp):
    """Chart and table: start-up and the three iteration windows per variant/mode and model size."""
    rows = rows_of(sweep.rows, exp)
    lines = [f"## Overhead windows ({exp})", ""]
    if not rows:
        warn(f"skipping overhead_{exp}.png: no {exp} runs")
        return lines + [f"Skipped: no {exp} runs.", ""]
    sizes = ordered((row["size"] for row in rows), SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    title = (f"Overhead windows — {exp} ({rows[0]['timing']}, {scope(rows)})\n"
             "bars: median over runs (envs × seeds), whiskers: min–max")
    figure, axes = new_figure(title, len(OVERHEAD_METRICS), ncols=2, panel_size=(6, 3.8))
    for ax, metric in zip(axes, OVERHEAD_METRICS):
        values = {(size, label): metric_values(where(rows, size=size, label=label), metric)
                  for size in sizes for label in labels}
        draw_bars(ax, sizes, labels, values)
        per_iteration = metric in ("iter1_7_mean_s", "iter8_99_median_s")
        ax.set(title=METRIC_NAMES[metric], xlabel="model size",
               ylabel="seconds per iteration" if per_iteration else "seconds")
    lines += image(save_figure(figure, out, f"overhead_{exp}.png"), f"overhead windows {exp}")
    table = []
    for label, size in itertools.product(labels, sizes):
        cell = where(rows, size=size, label=label)
        if cell:
            medians = [seconds_text(median(metric_values(cell, metric))) for metric in OVERHEAD_METRICS]
            table.append([label, size, len(cell)] + medians)
    header = ["variant (mode)", "model size", "runs", "start-up (s)", "iteration 0 (s)",
              "iterations 1–7 (s, mean)", "iterations 8–99 (s, median)"]
    return lines + ["Medians over runs (envs × seeds) of each run's value.", ""] + markdown_table(header, table)


def section_sync(sweep, out, exp, category_field):
    """Charts: synchronised rollout and update times per env or size, and the compiled variants' speedups on them."""
    rows = [row for row in rows_of(sweep.rows, exp) if row["timing"] == "sync"]
    lines = [f"## Synchronised rollout and update ({exp}, per {category_field})", ""]
    if not rows:
        warn(f"skipping sync_times_{exp}.png and sync_speedups_{exp}.png: no synchronised {exp} runs")
        return lines + [f"Skipped: no synchronised {exp} runs.", ""]
    categories = ordered((row[category_field] for row in rows), sweep.env_order if category_field == "env" else SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    layout = {"ncols": 1, "panel_size": (14, 4.2)} if category_field == "env" else {"ncols": 2, "panel_size": (7, 4.2)}
    title = (f"Synchronised rollout and update times — {exp} ({scope(rows)}), per-run median of iterations 8–99\n"
             "bars: median over seeds, whiskers: min–max")
    figure, axes = new_figure(title, len(SYNC_METRICS), **layout)
    for ax, metric in zip(axes, SYNC_METRICS):
        values = {(category, label): metric_values(where(rows, label=label, **{category_field: category}), metric)
                  for category in categories for label in labels}
        draw_bars(ax, categories, labels, values)
        ax.set(title=METRIC_NAMES[metric], ylabel="seconds per iteration")
    lines += image(save_figure(figure, out, f"sync_times_{exp}.png"), f"synchronised times {exp}")
    comparisons = compiled_comparisons(labels)
    if not comparisons:
        return lines
    figure, axes = new_figure(f"Speedups on synchronised rollout and update — {exp} ({scope(rows)})\n"
                              "points: seeds, black line: geometric mean", len(SYNC_METRICS), **layout)
    for ax, metric in zip(axes, SYNC_METRICS):
        draw_speedup_strips(ax, categories, [name for name, _, _ in comparisons],
                            speedups_by_category(rows, category_field, categories, comparisons, metric))
        ax.set(title=METRIC_NAMES[metric], ylabel="speedup of A over B (time_B / time_A)")
    return lines + image(save_figure(figure, out, f"sync_speedups_{exp}.png"), f"synchronised speedups {exp}")


def section_compile_modes(sweep, out):
    """Chart and table: each compiled mode's speedup over its framework's eager mode (exp2 chart; exp2, exp3 table)."""
    rows = rows_of(sweep.rows, "exp2")
    comparisons = compile_mode_comparisons(rows)
    lines = ["## Effect of each compile mode", ""]
    if comparisons:
        lines += compile_mode_chart(rows, comparisons, out)
    else:
        warn("skipping compile_modes.png: no exp2 framework has both an eager ('none') and a compiled mode")
        lines += ["No chart: no exp2 framework has both an eager ('none') and a compiled mode.", ""]
    table = []
    for exp in ("exp2", "exp3"):
        exp_rows = rows_of(sweep.rows, exp)
        for (_, label, baseline), size in itertools.product(compile_mode_comparisons(exp_rows), SIZES):
            sized = where(exp_rows, size=size)
            pairs = [paired(where(sized, label=label), where(sized, label=baseline), m) for m in COMPILE_METRICS]
            if pairs[0]:
                table.append([exp, label, baseline, size, len(pairs[0])]
                             + [speedup_text(geometric_mean([p.speedup for p in pair])) for pair in pairs])
    header = ["exp", "mode", "over", "model size", "pairs"]
    header += [f"{METRIC_NAMES[metric]} (geo. mean)" for metric in COMPILE_METRICS]
    return lines + (markdown_table(header, table) if table else [])


def compile_mode_chart(rows, comparisons, out):
    """Chart: per framework, the speedup of each compiled mode over the eager one on each metric (exp2)."""
    frameworks = ordered((framework for framework, _, _ in comparisons), map(framework_of, LABEL_COLORS))
    metric_names = [METRIC_NAMES[metric] for metric in COMPILE_METRICS]
    title = (f"Speedup of each compile mode over its framework's eager mode — exp2 (sync, small, {scope(rows)})\n"
             "points: (env, seed) pairs, black line: geometric mean")
    figure, axes = new_figure(title, len(frameworks), panel_size=(5.5, 4.6))
    for ax, framework in zip(axes, frameworks):
        modes = [(label, baseline) for fw, label, baseline in comparisons if fw == framework]
        speedups = {
            (METRIC_NAMES[metric], label): [
                pair.speedup for pair in paired(where(rows, label=label), where(rows, label=baseline), metric)
            ]
            for metric in COMPILE_METRICS
            for label, baseline in modes
        }
        draw_speedup_strips(ax, metric_names, [label for label, _ in modes], speedups)
        ax.set(title=f"{framework}: speedup over {framework} (none)", ylabel="speedup (time_eager / time_compiled)")
    return image(save_figure(figure, out, "compile_modes.png"), "compile mode effect")


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


def learning_curve_figure(rows, env_order, title, x_axis, out, name):
    """One panel per (env, size): each variant/mode's mean episodic return with a min–max band across seeds."""
    panels = ordered_configs(rows, env_order)
    multiple_sizes = len({size for _, size in panels}) > 1
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    colors = colors_for(labels)
    figure, axes = new_figure(title, len(panels), ncols=min(len(panels), 4), panel_size=(4.2, 3.2), fixed_margins=True)
    for ax, (env, size) in zip(axes, panels):
        for label in labels:
            runs = [row["run"] for row in where(rows, env=env, size=size, label=label)]
            curves = [(run.return_steps if x_axis == "steps" else run.return_seconds, run.returns) for run in runs]
            curve = mean_curve([(x, y) for x, y in curves if len(y) > 1 and np.isfinite(x).all()])
            if curve:
                grid, mean, low, high = curve
                ax.plot(grid, mean, color=colors[label], linewidth=1.2, label=label)
                ax.fill_between(grid, low, high, color=colors[label], alpha=0.2, linewidth=0)
        ax.set(title=f"{env} · {size}" if multiple_sizes else env, ylabel="episodic return",
               xlabel="env steps" if x_axis == "steps" else "training time, cumulative time/iteration (s)")
        ax.grid(alpha=0.3)
    return save_figure(figure, out, name)


def learning_curve_groups(sweep):
    """(exp, size) of each learning-curve figure pair: exp1 per model size, exp2 and exp3 whole (size None)."""
    groups = [("exp1", size) for size in ordered((row["size"] for row in rows_of(sweep.rows, "exp1")), SIZES)]
    return groups + [(exp, None) for exp in ("exp2", "exp3") if rows_of(sweep.rows, exp)]


def section_learning_curves(sweep, out, exp, size):
    """Charts: one experiment's (and model size's) learning curves against env steps and against training time."""
    rows = rows_of(sweep.rows, exp)
    rows = where(rows, size=size) if size else rows
    what = f"{exp}, {size}" if size else exp
    lines = [f"### Learning curves: {what}", ""]
    for x_axis, against in (("steps", "env steps"), ("time", "training time")):
        name = f"learning_curves_{exp}{'_' + size if size else ''}_{x_axis}.png"
        title = f"Episodic return against {against} — {what} ({scope(rows)})\nmean over seeds, band: min–max"
        figure_name = learning_curve_figure(rows, sweep.env_order, title, x_axis, out, name)
        lines += image(figure_name, f"learning curves {what} against {against}")
    return lines


def section_final_returns(sweep):
    """Heading of the learning evidence; the final return per variant/mode and env (and size) for each experiment."""
    lines = ["## Learning: final returns and learning curves", "",
             f"Final return: mean of a run's last {FINAL_RETURN_EPISODES} logged episodic returns; "
             "mean ± sample standard deviation over seeds.", ""]
    for exp in EXPERIMENTS:
        rows = rows_of(sweep.rows, exp)
        labels = ordered((row["label"] for row in rows), LABEL_COLORS)
        table = []
        for env, size in ordered_configs(rows, sweep.env_order):
            cells = [metric_values(where(rows, env=env, size=size, label=label), "final_return") for label in labels]
            table.append([env, size] + [mean_and_spread(values) for values in cells])
        if table:
            lines += [f"**{exp}**", ""] + markdown_table(["env", "model size"] + labels, table)
    return lines


def machine_name(systems, folder):
    """Short name of a sweep's machine: its GPU or CPU, else the folder name."""
    system = systems[0] if systems else {}
    return f"{folder.name} ({system.get('gpu') or system.get('cpu') or 'unknown machine'})"


def section_compare(folders, sweeps, out):
    """Chart and table: the same configurations' total durations on two sweeps side by side, and A's speedup over B."""
    (folder_a, folder_b), (sweep_a, sweep_b) = folders, sweeps
    name_a, name_b = f"A: {machine_name(sweep_a.systems, folder_a)}", f"B: {machine_name(sweep_b.systems, folder_b)}"
    lines = ["## Comparison of two sweeps", ""]
    lines += machine_section(sweep_a.systems, f"### {name_a}") + machine_section(sweep_b.systems, f"### {name_b}")
    lines += ["Only configurations (experiment, variant, mode, env, size, timing) present in both are compared.", ""]
    labels_timings = ordered(((row["label"], row["timing"]) for row in sweep_a.rows + sweep_b.rows),
                             list(itertools.product(LABEL_COLORS, ("async", "sync"))))
    categories, times, speedups, table = [], {}, {}, []
    for label, timing in labels_timings:
        pairs = paired(*(where(sweep.rows, label=label, timing=timing) for sweep in (sweep_a, sweep_b)), "total_s")
        if not pairs:
            continue
        category = f"{label}, {timing}"
        categories.append(category)
        times[category, name_a] = [pair.time_a for pair in pairs]
        times[category, name_b] = [pair.time_b for pair in pairs]
        speedups[category, "A over B"] = [pair.speedup for pair in pairs]
        for size in ordered((pair.config.size for pair in pairs), SIZES):
            sized = [pair for pair in pairs if pair.config.size == size]
            sized_speedups = [pair.speedup for pair in sized]
            table.append([label, timing, size, len(sized), seconds_text(median([pair.time_a for pair in sized])),
                          seconds_text(median([pair.time_b for pair in sized])),
                          speedup_text(geometric_mean(sized_speedups), bootstrap_ci(sized, geometric_mean))])
    if not categories:
        warn("skipping compare.png: the two sweeps share no configuration")
        return lines + ["Skipped: the two sweeps share no configuration.", ""]
    figure, axes = new_figure(f"{name_a}  vs  {name_b}", 2, ncols=1, panel_size=(max(8, 1.1 * len(categories)), 4.2))
    colors = colors_for([name_a, name_b, "A over B"])
    draw_bars(axes[0], categories, [name_a, name_b], times, colors)
    axes[0].set(title="total duration of matched runs (bars: median, whiskers: min–max)", ylabel="total duration")
    draw_speedup_strips(axes[1], categories, ["A over B"], speedups, colors)
    axes[1].set(title="speedup of A over B = time_B / time_A\npoints: matched runs, black line: geometric mean",
                ylabel="speedup of A over B")
    lines += image(save_figure(figure, out, "compare.png"), "comparison of two sweeps")
    header = ["variant (mode)", "timing", "model size", "pairs", "median total A (s)", "median total B (s)",
              "speedup of A over B, geo. mean [95% CI]"]
    return lines + markdown_table(header, table)


# ---------------------------------------------------------------------------------------------- main


def parse_args(argv):
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path, metavar="DIR", help="sweep folder(s) to read together")
    parser.add_argument("--out", type=Path, help="output folder (default: the first DIR, or DIR_A)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("DIR_A", "DIR_B"),
                        help="compare the same configurations on two sweeps (e.g. two machines)")
    args = parser.parse_args(argv)
    if not args.dirs and not args.compare:
        parser.error("give at least one DIR or --compare DIR_A DIR_B")
    for folder in [*args.dirs, *(args.compare or [])]:
        if not folder.is_dir():
            fail(f"{folder} is not a folder")
    return args


def report_tasks(sweep, out):
    """The report's sections in order, as (function, *arguments) calls that draw their charts and return markdown."""
    return [
        (section_duration_vs_complexity, sweep, out),
        (section_pairwise_speedups, sweep, out, "total_s", "speedups_total.png"),
        (section_overhead, sweep, out, "exp1"),
        (section_overhead, sweep, out, "exp3"),
        (section_pairwise_speedups, sweep, out, "iter8_99_median_s", "speedups_steady_state.png"),
        (section_sync, sweep, out, "exp2", "env"),
        (section_sync, sweep, out, "exp3", "size"),
        (section_compile_modes, sweep, out),
        (section_final_returns, sweep),
        *[(section_learning_curves, sweep, out, exp, size) for exp, size in learning_curve_groups(sweep)],
    ]


def main(argv=None):
    """Reads the sweeps, writes summary.csv, the charts and REPORT.md."""
    started = time.perf_counter()
    args = parse_args(argv)
    out = args.out or (args.dirs or args.compare)[0]
    sweep = load_sweep(args.dirs) if args.dirs else None
    compared = [load_sweep([folder]) for folder in args.compare or []]
    out.mkdir(parents=True, exist_ok=True)
    report = ["# PPO framework benchmark report", ""]
    if sweep:
        write_summary_csv(sweep.rows, out / "summary.csv")
        print("drawing charts", flush=True)
        report += machine_section(sweep.systems) + definitions_section(sweep) + env_section(sweep)
        sections = in_parallel(report_tasks(sweep, out))
        report += [line for section in sections for line in section]
    if compared:
        report += section_compare(args.compare, compared, out)
    (out / "REPORT.md").write_text("\n".join(report))
    print(f"wrote {out / 'REPORT.md'} in {time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
