"""The reports of the command sets that time each script on each env beside the env's steps alone (report/continuous.py
and report/cnn.py): their plan (DIR/<exp>.json: the runs, each env's step costs), each run's numbers read from its
event file, and the per-env statistics both reports give (the median steady iteration over the
repeats and its range, iteration 0 cold and warm, the env's share, which scripts are level with the fastest); and the
tables both give of their experiments' runs in a sweep (--grid gpu)."""
import math
import os
import statistics
from typing import NamedTuple

from report.folder import ratio, read_json_file
from report.load import SkippedRun, read_event_file, window_names
from report.settings import LABEL_COLORS
from report.stats import level_with_first, metric_values, ranges_apart, where
from report.summary import ordered
from report.text import markdown_table, number_text, percent_text, seconds_text, speedup_text
from search import Refused

STEADY_FROM = 2  # the steady iterations: 2 onwards (0 compiles; 1 can still warm caches up)


def read_plan(directory: str, plan_file: str) -> dict:
    """DIR/plan_file; refused where it is missing, not JSON, or lists no runs."""
    plan, path = read_json_file(directory, plan_file)
    if not isinstance(plan, dict) or not isinstance(plan.get("runs"), list) or not plan["runs"]:
        raise Refused(f"{path} lists no runs")
    return plan


def run_numbers(directory: str, name: str, threshold: float | None = None) -> dict | None:
    """A finished run's steady iteration, iteration 0, start-up and last return, and with a `threshold` the seconds
    of training (iteration 0's included) until the end of the first iteration whose mean return reaches it (NaN if
    none does); None if unfinished or missing."""
    folder = os.path.join(directory, "runs", name)
    files = sorted(f for f in os.listdir(folder) if f.startswith("events.")) if os.path.isdir(folder) else []
    if not files:
        return None
    try:
        scalars, _ = read_event_file(os.path.join(folder, files[-1]))
    except SkippedRun:
        return None
    if "time/total" not in scalars:
        return None
    seconds = [value for _, value in sorted(scalars["time/iteration"])]
    returns = [value for _, value in scalars.get("charts/episodic_return", [])]
    numbers = {"steady": statistics.median(seconds[STEADY_FROM:] or seconds[-1:]), "first": seconds[0],
               "startup": scalars["time/startup"][0][1], "return": returns[-1] if returns else math.nan}
    if threshold is not None:
        numbers["to_threshold"] = threshold_seconds(scalars, seconds, threshold)
    return numbers


def threshold_seconds(scalars: dict, seconds: list, threshold: float) -> float:
    """The training seconds until the end of the first iteration whose mean episodic return reaches `threshold`: a
    return is logged at the iteration's global step, (iteration + 1) x the batch."""
    batch = sorted(scalars["charts/SPS"])[0][0]  # the first iteration's global step: one batch
    for step, value in sorted(scalars.get("charts/episodic_return", [])):
        if value >= threshold:
            return sum(seconds[: round(step / batch)])
    return math.nan


def env_key(item: dict) -> tuple:
    """What a run is compared within: its env and what steps it."""
    return item["env"], item["backend"]


def cells(directory: str, plan: dict, key=env_key) -> dict:
    """{key(run): {label: [run numbers with their repeat, one per repeat]}}, in the plan's order; a run whose plan
    entry names a return threshold also gives its time to it."""
    table = {}
    for item in plan["runs"]:
        numbers = run_numbers(directory, item["run"], item.get("threshold"))
        if numbers:
            numbers["repeat"] = item.get("repeat", 1)
            table.setdefault(key(item), {}).setdefault(item["label"], []).append(numbers)
    return table


def env_seconds(plan: dict, env: str, backend: str) -> tuple:
    """The env's steps per iteration: the median over its processes of each one's median call, and their range;
    and the compile seconds of a JAX env (reset plus the first call of the steps, less a steady call), or NaN."""
    entry = next((item for item in plan.get("env_costs", []) if (item["env"], item["backend"]) == (env, backend)), None)
    if not entry:
        return math.nan, (math.nan, math.nan), math.nan
    medians = [statistics.median(process["seconds"]) for process in entry["processes"]]
    compiles = [process.get("reset_compile_seconds", math.nan) + process["first_call_seconds"]
                - statistics.median(process["seconds"]) for process in entry["processes"]]
    return statistics.median(medians), (min(medians), max(medians)), statistics.median(compiles)


def steady(runs: list) -> tuple:
    """The median over repeats of the runs' steady iterations, and their range."""
    values = [run["steady"] for run in runs]
    return statistics.median(values), (min(values), max(values))


def first_iterations(runs: list) -> tuple:
    """Iteration 0 of the first repeat (compiled into the sitting's empty cache: what a fresh process pays) and the
    median of the later repeats' (the persistent compilation cache warm); NaN where there is none."""
    first = min(run["repeat"] for run in runs)
    cold = [run["first"] for run in runs if run["repeat"] == first]
    warm = [run["first"] for run in runs if run["repeat"] != first]
    return statistics.median(cold), statistics.median(warm) if warm else math.nan


def lead(by_label: dict):
    """The Lead (stats.level_with_first) of the env's scripts by their median steady iteration: a script is level with
    the fastest where their ranges over repeats overlap."""
    medians = {label: steady(runs)[0] for label, runs in by_label.items()}
    values = {label: [run["steady"] for run in runs] for label, runs in by_label.items()}
    return level_with_first(sorted(medians, key=medians.get), lambda a, b: ranges_apart(values[a], values[b]))


def env_rows(plan: dict, env: str, backend: str, by_label: dict) -> tuple:
    """The env's table rows, its framework spread (slowest over fastest steady iteration) and its share of the
    fastest script's iteration; where the runs were timed to a return threshold, that time (the median over repeats)
    before the last return."""
    env_time, _, _ = env_seconds(plan, env, backend)
    medians = {label: steady(runs) for label, runs in by_label.items()}
    fastest = min(median for median, _ in medians.values())
    rows = []
    for label, runs in by_label.items():
        median, (low, high) = medians[label]
        cold, warm = first_iterations(runs)
        timed = [seconds_text(statistics.median(run["to_threshold"] for run in runs))] if "to_threshold" in runs[0] \
            else []
        rows.append([label, f"{number_text(median)} [{number_text(low)}–{number_text(high)}]", str(len(runs)),
                     speedup_text(median / fastest), percent_text(min(ratio(env_time, median), 1.0), sign=""),
                     number_text(cold), seconds_text(warm),
                     number_text(statistics.median(run["startup"] for run in runs)), *timed,
                     seconds_text(statistics.median(run["return"] for run in runs))])
    spread = max(median for median, _ in medians.values()) / fastest
    return rows, spread, ratio(env_time, fastest)


SWEEP_STEADY = "iter8_99_median_s"  # a sweep's steady window (its name read from the runs)


class CaseSpread(NamedTuple):
    """A case of an experiment's runs in a sweep: its fastest script and the fastest and slowest steady iterations."""

    case: str
    first: str | None
    fastest: float
    slowest: float


def sweep_cases(rows: list, cases: list) -> tuple:
    """An experiment's runs in a sweep, per case (cases: (name, its rows) in order): a table of each script's steady
    iteration, the median over its seeds, and its ratio to the fastest script's; returns the lines and a CaseSpread
    per case."""
    steady_name = window_names([row["run"] for row in rows])[SWEEP_STEADY]
    lines, spreads = [], []
    for name, case_rows in cases:
        medians = {label: statistics.median(metric_values(where(case_rows, label=label), SWEEP_STEADY) or [math.nan])
                   for label in ordered((row["label"] for row in case_rows), LABEL_COLORS)}
        timed = {label: value for label, value in medians.items() if not math.isnan(value)}
        fastest = min(timed.values(), default=math.nan)
        table = [[label, seconds_text(value), speedup_text(ratio(value, fastest))] for label, value in medians.items()]
        lines += [f"**{name}**", ""] + markdown_table(["script (mode)", f"{steady_name}, s", "vs fastest"], table)
        spreads.append(CaseSpread(name, min(timed, key=timed.get, default=None), fastest,
                                  max(timed.values(), default=math.nan)))
    return lines, spreads
