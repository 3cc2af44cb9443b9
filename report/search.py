"""exp10's report across its study folders: `python -m report.search DIR` writes DIR/REPORT.md and DIR/charts/ from
DIR/exp10.json (the machine, the load at the start, the date, the trials and env steps of every study, and the
studies: part, design label, folder, workers) and the study folders it lists.

Part (a) runs the same random search with every design: the cost of that search per design, and per configuration
(the sampler is seeded per trial number, so the same number is the same configuration) how far the designs' returns
agree. Part (b) runs our source's study per design: the best so far against wall time, the best configuration, its
re-evaluation and the parameters' importances. The first design of part (a) in exp10.json is the one the others are
measured against. Wall time, the best so far and the importances are report/study.py's."""
import math
import os
import statistics
import sys
import warnings
from typing import NamedTuple

import optuna
from matplotlib.figure import Figure
from scipy.stats import spearmanr

from report.folder import CHARTS, DPI, ratio, read_json_file, run_command, write_markdown
from report.machines import plan_machine
from report.study import (WALL_TIME, Figures, best_so_far, clock_unit, completed, draw_best, duration_text,
                          evaluation_text, figures, importances, params_text, quiet, rate_text, time_points)
from report.text import listed, markdown_table, number_text, percent_text, speedup_text
from search import Refused, evaluation
from search.study import load

PLAN_FILE = "exp10.json"
STUDY_KEYS = {"part", "label", "folder"}
NEAR = 0.05  # part (b)'s answer: when a design's best so far first came within this fraction of its final best


class Entry(NamedTuple):
    """One study of exp10.json and what its folder holds: its study and figures, None where it was not run."""
    part: str
    label: str
    folder: str
    workers: int
    study: optuna.Study | None
    figures: Figures | None


def read_plan(directory: str, plan_file: str = PLAN_FILE) -> dict:
    """DIR/exp10.json (or another command set's plan_file); a folder without it, or a file that is not one, is
    refused."""
    plan, path = read_json_file(directory, plan_file)
    studies = plan.get("studies") if isinstance(plan, dict) else None
    if not isinstance(studies, list) or not all(isinstance(item, dict) and STUDY_KEYS <= set(item) for item in studies):
        raise Refused(f"{path}: want a 'studies' list, each study with its {', '.join(sorted(STUDY_KEYS))}")
    return plan


def load_entry(directory: str, item: dict) -> Entry:
    """One listed study, loaded from its folder; not run where the folder holds no study or no finished trial."""
    part, label, folder, workers = item["part"], item["label"], item["folder"], item.get("workers", 1)
    try:
        _, study = load(os.path.join(directory, folder))
    except Refused:
        return Entry(part, label, folder, workers, None, None)
    summary = figures(study)
    if not summary.completed + summary.pruned + summary.failed:
        return Entry(part, label, folder, workers, None, None)
    return Entry(part, label, folder, workers, study, summary)


def part(entries: list, name: str, run: bool = True) -> list:
    """The entries of a part, in exp10.json's order; only those run where run is true."""
    return [entry for entry in entries if entry.part == name and (entry.study is not None or not run)]


# PART (A): the cost of the same search, and the returns per configuration
def origins(trials: list) -> dict:
    """{trial number: the number of the configuration it ran}: a retry (user_attr retry_of) runs its original's."""
    parent = {trial.number: trial.user_attrs.get("retry_of", trial.number) for trial in trials}
    roots = {}
    for number in parent:
        root = number
        while parent.get(root, root) != root:
            root = parent[root]
        roots[number] = root
    return roots


def configuration_values(study: optuna.Study) -> dict:
    """{configuration number: value} of the study's completed trials."""
    trials = study.get_trials(deepcopy=False)
    roots = origins(trials)
    return {roots[trial.number]: trial.value for trial in completed(trials)}


def shared_values(entries: list) -> dict:
    """{configuration number: [value per entry]} of the configurations completed in every entry's study."""
    values = [configuration_values(entry.study) for entry in entries]
    numbers = sorted(set.intersection(*(set(each) for each in values))) if values else []
    return {number: [each[number] for each in values] for number in numbers}


def spread(values: list) -> float:
    """The spread of one configuration's values across designs, (max - min), relative to their mean |value|."""
    scale = statistics.fmean(abs(value) for value in values)
    return (max(values) - min(values)) / scale if scale else math.nan


def rank_correlation(first: list, other: list) -> float:
    """Spearman's rank correlation of two designs' values over the shared configurations; NaN below 3 of them."""
    if len(first) < 3:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant input: NaN
        return float(spearmanr(first, other).statistic)


def cost_lines(entries: list) -> list:
    """Part (a)'s table: per design its wall time, its ratio to the fastest, trials per hour, median trial, outcomes
    and best value; the designs not run listed as such."""
    fastest = min((entry.figures.wall_s for entry in entries if entry.figures), default=math.nan)
    rows = []
    for entry in entries:
        summary = entry.figures
        if summary is None:
            rows.append([entry.label, entry.workers, "not run", "–", "–", "–", "–", "–"])
            continue
        best = number_text(summary.best.value) if summary.best else "–"
        rows.append([entry.label, entry.workers, duration_text(summary.wall_s),
                     speedup_text(ratio(summary.wall_s, fastest)), rate_text(summary.per_hour),
                     duration_text(summary.median_s), f"{summary.completed} / {summary.failed}", best])
    header = ["design", "workers", "wall time", "× the fastest", "trials per hour", "median trial",
              "completed / failed", "best value"]
    return markdown_table(header, rows)


def configuration_chart(entries: list, shared: dict, path: str):
    """Each design's value against the mean over designs, one dot per configuration, with the line y = x."""
    means = [statistics.fmean(values) for values in shared.values()]
    figure = Figure(figsize=(6, 5), layout="constrained")
    axes = figure.subplots()
    for k, entry in enumerate(entries):
        axes.scatter(means, [values[k] for values in shared.values()], s=18, color=f"C{k}", label=entry.label)
    axes.plot([min(means), max(means)], [min(means), max(means)], color="grey", linewidth=1, label="the mean")
    axes.set_xlabel("mean value over the designs (per configuration)")
    axes.set_ylabel("the design's value")
    axes.legend(fontsize="small")
    figure.savefig(path, dpi=DPI)


def configuration_lines(entries: list, directory: str) -> list:
    """Part (a) per configuration: the median relative spread across designs, the chart, the rank correlations."""
    lines = ["### Per configuration, the returns across designs", ""]
    shared = shared_values(entries)
    if len(entries) < 2 or not shared:
        return lines + ["Fewer than two designs completed a configuration in common: nothing to compare.", ""]
    spreads = [value for value in map(spread, shared.values()) if not math.isnan(value)]
    median = percent_text(statistics.median(spreads), sign="") if spreads else "–"
    configuration_chart(entries, shared, os.path.join(directory, CHARTS, "configurations.png"))
    first = [values[0] for values in shared.values()]
    rows = [[entry.label, correlation_text(rank_correlation(first, [values[k] for values in shared.values()]))]
            for k, entry in enumerate(entries)]
    return lines + [
        f"{len(shared)} configurations (trial numbers) completed in all {len(entries)} run studies. The spread across "
        f"designs (max − min) relative to the configuration's mean |value|: median **{median}** over the "
        "configurations.", "", f"![values per configuration]({CHARTS}/configurations.png)", "",
        "*Values per configuration:* each design's value against the mean over the designs, one dot per "
        "configuration; on the grey line a design returns the mean.", "",
        f"Spearman's rank correlation with {entries[0].label} over the same configurations (1: the same order):",
        ""] + markdown_table(["design", "rank correlation"], rows)


def correlation_text(value: float) -> str:
    """A rank correlation with two decimals, '–' for NaN."""
    return "–" if math.isnan(value) else f"{value:.2f}"


# PART (B): our source's study per design
def near_time(study: optuna.Study) -> float:
    """The wall time (s) at which the best so far first came within NEAR of the study's final best value."""
    curve = best_so_far(time_points(study))
    final = curve[-1][1]
    return next(seconds for seconds, best in curve if best >= final - NEAR * abs(final))


def progress_chart(entries: list, path: str):
    """The best so far against wall time of each study, on one axis."""
    longest = max(entry.figures.wall_s for entry in entries)
    scale, unit = clock_unit(longest)
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.subplots()
    for k, entry in enumerate(entries):
        draw_best(axes, [(x / scale, value) for x, value in time_points(entry.study)], entry.label, f"C{k}")
    axes.set_xlabel(f"wall time ({unit}): time at least one trial ran")
    axes.set_ylabel("objective: best so far (completed trials: dots)")
    axes.legend(fontsize="small", loc="lower right")
    figure.savefig(path, dpi=DPI)


def importance_text(study: optuna.Study) -> str:
    """The three most important parameters with their importances, or why there are none."""
    values, why = importances(study)
    return ", ".join(f"{name} {value:.2f}" for name, value in list(values.items())[:3]) if values else f"none: {why}"


def source_lines(entries: list, directory: str) -> list:
    """Part (b): the chart of the best so far and, per study, its best configuration, re-evaluation, importances."""
    lines = ["## (b) Our source's study", ""]
    run = [entry for entry in entries if entry.figures and entry.figures.best]
    if run:
        progress_chart(run, os.path.join(directory, CHARTS, "best_so_far.png"))
        lines += [f"![best so far]({CHARTS}/best_so_far.png)", "", "*Best so far* against the wall time, per design; "
                  "completed trials as dots.", ""]
    rows = []
    for entry in entries:
        best = entry.figures.best if entry.figures else None
        if best is None:
            rows.append([entry.label, "not run" if entry.study is None else "no trial completed", "–", "–", "–"])
            continue
        again = evaluation.read(os.path.join(directory, entry.folder))
        again = evaluation_text(again) if again and again.get("trial") == best.number else "not re-evaluated"
        rows.append([entry.label, f"{number_text(best.value)} (trial {best.number})", params_text(best.params),
                     again, importance_text(entry.study)])
    header = ["design", "best value", "best configuration", "re-evaluation", "importances (top 3)"]
    return lines + markdown_table(header, rows)


# THE ANSWER AND THE REPORT
def cost_answer(entries: list) -> str:
    """Which design finishes part (a)'s search fastest, and by what factor against the first design."""
    if not entries:
        return "Part (a): no study was run."
    fastest = min(entries, key=lambda entry: entry.figures.wall_s)
    first = entries[0]
    if fastest is not first:
        factor = speedup_text(ratio(first.figures.wall_s, fastest.figures.wall_s))
        return (f"Part (a): **{fastest.label}** finishes the same search fastest, in "
                f"{duration_text(fastest.figures.wall_s)}: {factor} faster than {first.label} "
                f"({duration_text(first.figures.wall_s)}).")
    text = f"Part (a): **{first.label}** finishes the same search fastest ({duration_text(first.figures.wall_s)})"
    others = sorted(entries[1:], key=lambda entry: entry.figures.wall_s)
    if others:
        text += (f"; the next, {others[0].label}, takes "
                 f"{speedup_text(ratio(others[0].figures.wall_s, first.figures.wall_s))} its wall time")
    return text + "."


def source_answer(entries: list) -> str:
    """Which design of part (b) first came within NEAR of its final best value, and when."""
    run = sorted((near_time(entry.study), entry) for entry in entries if entry.figures and entry.figures.best)
    if not run:
        return "Part (b): no study completed a trial."
    (seconds, first), rest = run[0], run[1:]
    others = f" (then {listed([f'{entry.label} after {duration_text(s)}' for s, entry in rest])})" if rest else ""
    return (f"Part (b): **{first.label}** first came within {NEAR:.0%} of its final best value "
            f"({number_text(first.figures.best.value)}) after {duration_text(seconds)} of wall time{others}.")


def numbers_lines(plan: dict, entries: list, directory: str) -> list:
    """What the numbers are: exp10.json's machine, load, date, trials and env steps, and the study folders."""
    steps = plan.get("total_timesteps", "–")
    folders = [f"{entry.label} (not run)" if entry.study is None else f"[{entry.label}]({study_link(directory, entry)})"
               for entry in entries]
    return [f"*The numbers:* {plan_machine(plan)}, load average {plan.get('load', '–')} at "
            f"the start, {plan.get('date', '–')}; {plan.get('trials', '–')} trials per study of "
            f"{number_text(steps) if isinstance(steps, int) else steps} env steps each; the objective is the mean "
            f"episodic return over the last 10 % of env steps. The studies: {', '.join(folders)}.", "", WALL_TIME, ""]


def study_link(directory: str, entry: Entry) -> str:
    """A study's REPORT.md where it has one, else its folder."""
    report = os.path.join(entry.folder, "REPORT.md")
    return report if os.path.exists(os.path.join(directory, report)) else f"{entry.folder}/"


def write_report(directory: str) -> str:
    """Writes DIR/REPORT.md and DIR/charts/ from DIR/exp10.json and its study folders; returns REPORT.md's path."""
    plan = read_plan(directory)
    entries = [load_entry(directory, item) for item in plan["studies"]]
    os.makedirs(os.path.join(directory, CHARTS), exist_ok=True)
    search, source = part(entries, "a"), part(entries, "b")
    lines = ["# exp10: the same hyperparameter search by each design", "", "## The answer", "",
             f"- {cost_answer(search)}", f"- {source_answer(source)}", ""] + numbers_lines(plan, entries, directory)
    lines += ["## (a) The cost of the same search", ""] + cost_lines(part(entries, "a", run=False))
    lines += configuration_lines(search, directory) + source_lines(part(entries, "b", run=False), directory)
    return write_markdown(directory, lines)


def main(argv: list | None = None) -> int:
    """`python -m report.search DIR`: writes exp10's REPORT.md."""
    return run_command(argv, "python -m report.search", __doc__.split("\n\n")[0],
                       f"exp10's folder (it holds {PLAN_FILE} and the study folders)", quiet(write_report))


if __name__ == "__main__":
    sys.exit(main())
