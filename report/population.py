"""exp11's report across its study folders: `python -m report.population DIR` writes DIR/REPORT.md and DIR/charts/
from DIR/exp11.json (the machine, the load at the start, the date, the commit, the trials and workload, and the
studies: env, way, folder, workers, population size) and the study folders it lists.

Per env, every way trains the same configurations with the same seeds (a random sampler seeded per trial number):
trials in processes of the torch and Linen scripts, and populations of the scan script. The report gives each
way's wall time, trials per hour, peak memory and best configuration with its re-evaluation; where the population
stops paying (a cost model fitted to the population studies: a process of N agents takes F + c N, with the range of
its level-off N when one size is left out, and said to extrapolate where that N lies beyond the sizes measured); and
how far the ways' returns agree per configuration. Wall time and the best are report/study.py's."""
import math
import os
import statistics
import sys

import numpy as np
from matplotlib.figure import Figure

from report.folder import CHARTS, DPI, ratio, run_command, write_markdown
from report.machines import plan_machine
from report.palette import other_colors
from report.studies import Entry, load_entry, rank_correlation, read_plan, shared_values, spread, study_link
from report.study import WALL_TIME, duration_text, evaluation_text, params_text, quiet, rate_text
from report.text import markdown_table, number_text, percent_text, speedup_text
from search import evaluation, trial as trial_process
from sweep.variants import LINEN

PLAN_FILE = "exp11.json"
LEVEL = 0.9  # trials per hour "level off" at the N where they reach this fraction of the model's limit (N -> inf)


def peak_memory(directory: str, entry: Entry) -> float:
    """The largest peak resident memory (bytes) a trial's process logged (memory/peak_rss_bytes), NaN if none."""
    peaks = []
    for trial in entry.study.get_trials(deepcopy=False) if entry.study else []:
        run_dir = os.path.join(directory, entry.folder, "runs", f"trial_{trial.number:04d}")
        peaks += [value for _, value in trial_process.read_scalars(run_dir).get("memory/peak_rss_bytes", [])]
    return max(peaks, default=math.nan)


def memory_text(peak: float, workers: int) -> str:
    if math.isnan(peak):
        return "–"
    text = f"{peak / 2**30:.2f} GiB"
    return f"{text} × {workers} at once" if workers > 1 else text


# THE COST MODEL: a population process of N agents takes F + c N seconds; N trials in one process
def fit_model(points: list) -> tuple:
    """(F, c) of wall = (T / N) F + T c, least squares over the population studies' (N, trials T, wall seconds);
    NaNs below two sizes."""
    if len({n for n, _, _ in points}) < 2:
        return math.nan, math.nan
    design = np.array([[trials / n, trials] for n, trials, _ in points], dtype=float)
    walls = np.array([wall for _, _, wall in points], dtype=float)
    (fixed, per_agent), *_ = np.linalg.lstsq(design, walls, rcond=None)
    return float(fixed), float(per_agent)


def left_out_range(points: list) -> tuple:
    """(lowest, highest) level-off N of the fits that leave one point out, over those with two sizes left; NaNs
    below three sizes (a fit on as many points as parameters has no spread to show)."""
    knees = [level_off(*fit_model(points[:k] + points[k + 1:])) for k in range(len(points))]
    knees = [knee for knee in knees if not math.isnan(knee)]
    if len({n for n, _, _ in points}) < 3 or not knees:
        return math.nan, math.nan
    return min(knees), max(knees)


def knee_text(knee: float, points: list) -> str:
    """N ≈ knee with its leave-one-out range and, beyond the largest N measured, that it is an extrapolation."""
    low, high = left_out_range(points)
    spread = f" ({number_text(low)}–{number_text(high)} leaving one size out)" if not math.isnan(low) else ""
    largest = max(n for n, _, _ in points)
    beyond = f", an extrapolation beyond the largest N measured ({largest})" if knee > largest else ""
    return f"N ≈ {number_text(knee)}{spread}{beyond}"


def level_off(fixed: float, per_agent: float) -> float:
    """The N at which the model's trials per hour, 3600 N / (F + c N), reach LEVEL of their limit 3600 / c."""
    if not (fixed > 0 and per_agent > 0):
        return math.nan
    return LEVEL / (1 - LEVEL) * fixed / per_agent


def model_points(entries: list) -> list:
    """(N, trials, wall seconds) of each population study that ran."""
    return [(entry.population, entry.figures.completed + entry.figures.failed, entry.figures.wall_s)
            for entry in entries if entry.population and entry.figures]


def model_lines(env: str, entries: list) -> tuple:
    """The fitted model's sentence for one env, and (F, c)."""
    points = model_points(entries)
    fixed, per_agent = fit_model(points)
    if math.isnan(fixed):
        return [f"- {env}: fewer than two population sizes ran: no model."], (fixed, per_agent)
    limit, knee = 3600 / per_agent if per_agent > 0 else math.inf, level_off(fixed, per_agent)
    return [f"- {env}: a process of N agents takes F + c N with **F = {number_text(fixed)} s** (start-up and "
            f"compilation, once per process) and **c = {number_text(per_agent)} s** per agent, fitted to "
            f"{len(points)} population sizes; trials per hour tend to {rate_text(limit)} and reach {LEVEL:.0%} of "
            f"that at **{knee_text(knee, points)}**."], (fixed, per_agent)


def rate_chart(envs: dict, path: str):
    """Trials per hour against the population size, per env (dots: studies, line: the model), the trials in processes
    as dashed lines."""
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.subplots()
    colors = other_colors(envs)
    for env, entries in envs.items():
        populations = [entry for entry in entries if entry.population and entry.figures]
        if populations:
            axes.plot([e.population for e in populations], [e.figures.per_hour for e in populations], "o-",
                      color=colors[env], label=f"{env}: populations")
        for style, entry in zip(("--", ":"), [entry for entry in entries if not entry.population and entry.figures]):
            axes.axhline(entry.figures.per_hour, color=colors[env], linestyle=style, linewidth=1,
                         label=f"{env}: {entry.label}")
    axes.set_xscale("log", base=2)
    axes.set_xlabel("population size N (agents in one process, log₂ scale)")
    axes.set_ylabel("trials per hour")
    axes.legend(fontsize="small")
    figure.savefig(path, dpi=DPI)


# PER ENV: the ways' cost, memory and best configuration
def cost_lines(directory: str, entries: list) -> list:
    run = [entry for entry in entries if entry.figures]
    slowest = max((entry.figures.wall_s for entry in run), default=math.nan)
    rows = []
    for entry in entries:
        if entry.figures is None:
            rows.append([entry.label, "not run"] + ["–"] * 6)
            continue
        summary, best = entry.figures, entry.figures.best
        again = evaluation.read(os.path.join(directory, entry.folder))
        again = evaluation_text(again) if best and again and again.get("trial") == best.number else "–"
        rows.append([f"[{entry.label}]({study_link(directory, entry)})", duration_text(summary.wall_s),
                     speedup_text(ratio(slowest, summary.wall_s)), rate_text(summary.per_hour),
                     memory_text(peak_memory(directory, entry), entry.workers),
                     f"{summary.completed} / {summary.failed}",
                     f"{number_text(best.value)} (trial {best.number})" if best else "–", again])
    header = ["way", "wall time", "speed-up on the slowest", "trials per hour", "peak memory per process",
              "completed / failed", "best value (trial)", "best rerun on fresh seeds"]
    return markdown_table(header, rows)


def best_lines(entries: list) -> list:
    rows = [[entry.label, params_text(entry.figures.best.params)] for entry in entries
            if entry.figures and entry.figures.best]
    return markdown_table(["way", "best configuration"], rows) if rows else []


def agreement_lines(entries: list) -> list:
    """How far the ways' values agree per configuration: the spread, and rank correlations with the first way."""
    run = [entry for entry in entries if entry.figures]
    shared = shared_values(run)
    if len(run) < 2 or not shared:
        return ["Fewer than two ways completed a configuration in common: nothing to compare.", ""]
    spreads = [value for value in map(spread, shared.values()) if not math.isnan(value)]
    first = [values[0] for values in shared.values()]
    linen = next((k for k, entry in enumerate(run) if entry.script == LINEN.file), None)
    rows = []
    for k, entry in enumerate(run[1:], start=1):
        values = [each[k] for each in shared.values()]
        same = "–"
        if linen is not None and entry.population:
            diffs = [abs(each[k] - each[linen]) / max(abs(each[linen]), 1e-9) for each in shared.values()]
            same = f"{sum(d <= 0.01 for d in diffs)} of {len(diffs)}"
        rows.append([entry.label, f"{rank_correlation(first, values):.2f}", same])
    median = percent_text(statistics.median(spreads), sign="") if spreads else "–"
    return [f"{len(shared)} configurations completed in every way; the spread across ways (max − min, relative to "
            f"the mean |value|): median {median}.", ""] + markdown_table(
        ["way", f"rank correlation with {run[0].label}", f"within 1 % of {LINEN.file}'s value (same seed)"], rows)


def env_lines(directory: str, env: str, entries: list) -> list:
    return ([f"## {env}", ""] + cost_lines(directory, entries) + best_lines(entries)
            + ["### Per configuration, across ways", ""] + agreement_lines(entries))


# THE ANSWER AND THE REPORT
def answer_line(env: str, entries: list) -> str:
    """The fastest way against the others, for one env."""
    run = sorted((entry for entry in entries if entry.figures), key=lambda entry: entry.figures.wall_s)
    if not run:
        return f"{env}: no study was run."
    fastest, others = run[0], [entry for entry in run[1:] if not entry.population or not run[0].population]
    against = [f"{speedup_text(ratio(entry.figures.wall_s, fastest.figures.wall_s))} faster than {entry.label} "
               f"({duration_text(entry.figures.wall_s)})" for entry in others]
    return (f"{env}: **{fastest.label}** run the {fastest.figures.completed + fastest.figures.failed} configurations "
            f"fastest, in {duration_text(fastest.figures.wall_s)}" + (f": {', '.join(against)}" if against else "")
            + ".")


def rate_line(env: str, entries: list, model: tuple) -> str:
    """Trials per hour of the populations by size, and where the model levels off."""
    populations = [entry for entry in entries if entry.population and entry.figures]
    if not populations:
        return f"{env}: no population study was run."
    rates = ", ".join(f"{rate_text(entry.figures.per_hour)} at N = {entry.population}" for entry in populations)
    knee = level_off(*model)
    levels = f"; the fitted model reaches {LEVEL:.0%} of its limit at {knee_text(knee, model_points(entries))}" \
        if not math.isnan(knee) else ""
    return f"{env}: trials per hour {rates}{levels}."


def workers_text(plan: dict) -> str:
    """How the studies' processes ran: the trials' workers, and each population size's."""
    trials = sorted({item.get("workers", 1) for item in plan["studies"] if not item.get("population")})
    sizes = {}
    for item in plan["studies"]:
        if item.get("population") and item["population"] not in sizes.setdefault(item.get("workers", 1), []):
            sizes[item.get("workers", 1)].append(item["population"])
    populations = "; ".join(f"{workers} process{'es' * (workers > 1)} at a time (N = {', '.join(map(str, each))})"
                            for workers, each in sorted(sizes.items(), reverse=True))
    return (f"Trials in processes ran {' or '.join(map(str, trials)) or '–'} at a time; the population studies ran "
            f"{populations or 'no process'}.")


def numbers_lines(plan: dict) -> list:
    return [f"*The numbers:* {plan_machine(plan)}, load average {plan.get('load', '–')} at "
            f"the start, {plan.get('date', '–')} to {plan.get('end', '–')}, commit {plan.get('commit', '–')}; "
            f"{plan.get('trials', '–')} configurations per study, each trial `{plan.get('workload', '–')}` (small "
            "model); a random sampler seeded per trial number over the PPO space's float fields (the others at the "
            "scripts' defaults), no pruner, trial n with seed 1 + n; the objective is the mean episodic return over "
            f"the last 10 % of env steps; the best rerun on fresh seeds ({plan.get('eval_seeds', '–')}). "
            f"{workers_text(plan)} Each study ran alone, one after another (not alternated).", "", WALL_TIME, ""]


def write_report(directory: str) -> str:
    """Writes DIR/REPORT.md and DIR/charts/ from DIR/exp11.json and its study folders; returns REPORT.md's path."""
    plan = read_plan(directory, PLAN_FILE)
    envs = {}
    for item in plan["studies"]:
        envs.setdefault(item["part"], []).append(load_entry(directory, item))
    os.makedirs(os.path.join(directory, CHARTS), exist_ok=True)
    models = [model_lines(env, entries) for env, entries in envs.items()]
    lines = ["# exp11: the same PPO search three ways", "", "## The answer", ""]
    lines += [f"- {answer_line(env, entries)}" for env, entries in envs.items()]
    lines += [f"- {rate_line(env, entries, model)}" for (env, entries), (_, model) in zip(envs.items(), models)] + [""]
    lines += numbers_lines(plan)
    lines += ["## Where the population stops paying", ""]
    if any(entry.population and entry.figures for entries in envs.values() for entry in entries):
        rate_chart(envs, os.path.join(directory, CHARTS, "trials_per_hour.png"))
        lines += [f"![trials per hour]({CHARTS}/trials_per_hour.png)", "",
                  "*Trials per hour* against the population size (dots), the trials in processes as flat lines.", ""]
    lines += [line for text, _ in models for line in text] + [""]
    for env, entries in envs.items():
        lines += env_lines(directory, env, entries)
    return write_markdown(directory, lines)


def main(argv: list | None = None) -> int:
    """`python -m report.population DIR`: writes exp11's REPORT.md."""
    return run_command(argv, "python -m report.population", __doc__.split("\n\n")[0],
                       f"exp11's folder (it holds {PLAN_FILE} and the study folders)", quiet(write_report))


if __name__ == "__main__":
    sys.exit(main())
