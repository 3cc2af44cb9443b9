"""exp15's report: `python -m report.lengths DIR` writes DIR/REPORT.md and DIR/charts/ from DIR/exp15.json (the
machine, every invocation with its date, commit and load, and the cells: env, trial length, study seed, the three
studies) and the study folders and reruns it lists.

Per env and trial length, over the study seeds: each way's wall time (trials in processes against populations: the
crossover, measured where it lies among the lengths run, never extrapolated); and at equal wall time (the fastest
way's), each way's best configuration so far, chosen by its objective and scored by its rerun on fresh seeds."""
import json
import math
import os
import statistics
import sys
from typing import NamedTuple

import optuna
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, ScalarFormatter

from report.folder import CHARTS, DPI, ratio, read_json_file, run_command, write_markdown
from report.machines import plan_machine
from report.study import (OBJECTIVE, WALL_TIME, best_so_far, busy_seconds, completed, duration_text, figures,
                          interval, merged, quiet, time_points, wall_seconds)
from report.text import markdown_table, number_text, speedup_text, spread_text
from search import Refused, study as study_folder

PLAN_FILE = "exp15.json"
WAYS = ("population", "trials", "pruned")  # the tables' order, whatever order a cell ran them in
SHORT = {"population": "populations", "trials": "trials in processes", "pruned": "TPE + Hyperband trials",
         "seeds": "K seeds per trial", "pbt": "PBT"}  # exp13's ways too


def cell_name(env: str, length: int, seed: int) -> str:
    return f"{env}-L{length}-s{seed}"


def score_path(directory: str, name: str) -> str:
    return os.path.join(directory, f"{name}-score.json")


def equal_time(studies) -> float:
    """The wall time of the fastest study: the time every way of the cell had (s, on the union-of-intervals clock)."""
    return min(wall_seconds(study.get_trials(deepcopy=False)) for study in studies)


def best_by(study: optuna.Study, moment: float = math.inf) -> optuna.trial.FrozenTrial | None:
    """The study's best completed trial among those that ended by `moment` on its wall-time clock (the first of the
    highest value), None if none had."""
    trials = study.get_trials(deepcopy=False)
    spans = merged(trials)
    ended = [trial for trial in completed(trials) if busy_seconds(spans, interval(trial)[1]) <= moment + 1e-9]
    return max(ended, key=lambda trial: trial.value, default=None)


def ways_best(studies: dict, moment: float) -> dict:
    """{way: {"equal": its best by the equal time, "end": its best at its end}}."""
    return {way: {"equal": best_by(study, moment), "end": best_by(study)} for way, study in studies.items()}


# THE CELLS: each (env, length, study seed) with its studies and reruns
class Cell(NamedTuple):
    env: str
    length: int
    seed: int
    name: str
    studies: dict  # way -> its study
    labels: dict  # way -> its label
    score: dict | None  # the reruns (score.json), None before them


def load_cells(directory: str, plan: dict) -> list:
    cells = []
    for item in plan["cells"]:
        studies = {entry["way"]: study_folder.load(os.path.join(directory, entry["folder"]))[1]
                   for entry in item["studies"]}
        try:
            with open(score_path(directory, item["name"])) as f:
                score = json.load(f)
        except FileNotFoundError:
            score = None
        cells.append(Cell(item["env"], item["length"], item["seed"], item["name"], studies,
                          {entry["way"]: entry["label"] for entry in item["studies"]}, score))
    envs = list(dict.fromkeys(item["env"] for item in plan["cells"]))  # in the order they ran
    return sorted(cells, key=lambda cell: (envs.index(cell.env), cell.length, cell.seed))


def read_cells(directory: str, plan_file: str) -> tuple[dict, list, dict]:
    """A command set's plan, its finished cells and {way: label}, DIR/charts/ made; a plan without a finished cell is
    refused."""
    plan, _ = read_json_file(directory, plan_file)
    cells = load_cells(directory, plan)
    if not cells:
        raise Refused(f"{directory}/{plan_file} lists no finished cell")
    os.makedirs(os.path.join(directory, CHARTS), exist_ok=True)
    return plan, cells, {way: label for cell in cells for way, label in cell.labels.items()}


def wall(cell: Cell, way: str) -> float:
    return wall_seconds(cell.studies[way].get_trials(deepcopy=False))


def rerun_value(cell: Cell, way: str, at: str) -> float:
    """The mean of the rerun's values of the way's best by the equal time ("equal") or at its end ("end"); NaN where
    it had none."""
    pick = (cell.score or {}).get("picks", {}).get(way, {}).get(at)
    values = [] if pick is None else [v for v in cell.score["configs"][pick["config"]]["values"] if v is not None]
    return statistics.mean(values) if values else math.nan


def grouped(cells: list) -> dict:
    """{env: {length: [its cells, one per study seed]}}."""
    groups = {}
    for cell in cells:
        groups.setdefault(cell.env, {}).setdefault(cell.length, []).append(cell)
    return groups


def way_keys(cells: list) -> list:
    found = {way for cell in cells for way in cell.studies}
    return [way for way in WAYS if way in found] + sorted(found - set(WAYS))


# THE CROSSOVER: trials in processes against populations, per length
def ratios(cells: list, way: str) -> list:
    """The way's wall time over the populations', per study seed."""
    return [ratio(wall(cell, way), wall(cell, "population")) for cell in cells]


def crossover_text(lengths: dict, way: str) -> str:
    """Where the way's trials overtake the populations among the lengths measured (medians over study seeds)."""
    medians = [(length, statistics.median(ratios(cells, way))) for length, cells in sorted(lengths.items())]
    parts = ", ".join(f"{speedup_text(value)} at {length:,}" for length, value in medians)
    below = [length for length, value in medians if value < 1]
    if not below:
        return (f"{parts} iterations: the populations are faster at every length measured; no crossover up to "
                f"{medians[-1][0]:,} iterations (beyond is not measured)")
    first = below[0]
    before = [length for length, _ in medians if length < first]
    where = f"between {before[-1]:,} and {first:,} iterations" if before else f"at or before {first:,} iterations"
    return f"{parts} iterations: they overtake the populations {where} (medians; not located more finely)"


def cost_rows(lengths: dict, labels: dict) -> list:
    rows = []
    for length, cells in sorted(lengths.items()):
        for way in way_keys(cells):
            walls = [wall(cell, way) for cell in cells]
            against = "1" if way == "population" else spread_text(ratios(cells, way), speedup_text)
            done = [figures(cell.studies[way]) for cell in cells]
            rows.append([f"{length:,}", labels[way], spread_text(walls, duration_text), against,
                         f"{sum(f.completed for f in done)} / {sum(f.pruned for f in done)}"])
    return rows


# AT EQUAL WALL TIME: each way's best by the fastest way's end, scored by its rerun
def equal_rows(lengths: dict, labels: dict) -> list:
    rows = []
    for length, cells in sorted(lengths.items()):
        for way in way_keys(cells):
            rows.append([f"{length:,}", labels[way], spread_text([cell.score["equal_time_s"] if cell.score else math.nan
                                                           for cell in cells], duration_text),
                         spread_text([rerun_value(cell, way, "equal") for cell in cells]),
                         spread_text([rerun_value(cell, way, "end") for cell in cells]),
                         spread_text([best_value(cell, way) for cell in cells])])
    return rows


def best_value(cell: Cell, way: str) -> float:
    best = best_by(cell.studies[way])
    return math.nan if best is None else best.value


def equal_text(length: int, cells: list, labels: dict) -> str:
    """The way whose best by the equal time reruns highest (median over study seeds), the others after it."""
    medians = {way: statistics.median([rerun_value(cell, way, "equal") for cell in cells])
               for way in way_keys(cells)}
    order = sorted(medians, key=lambda way: -math.inf if math.isnan(medians[way]) else medians[way], reverse=True)
    times = spread_text([cell.score["equal_time_s"] for cell in cells if cell.score], duration_text)
    listed = "; ".join(f"{labels[way]} {'nothing finished' if math.isnan(medians[way]) else number_text(medians[way])}"
                       for way in order)
    return f"{length:,} iterations, equal time {times}: {listed}"


# CHARTS
def wall_chart(lengths: dict, labels: dict, path: str):
    """Each way's wall time against the trial length (dots: study seeds, line: medians), log-log."""
    figure = Figure(figsize=(7, 4.5), layout="constrained")
    axes = figure.subplots()
    cells = [cell for group in lengths.values() for cell in group]
    for k, way in enumerate(way_keys(cells)):
        points = sorted((cell.length, wall(cell, way)) for cell in cells)
        axes.scatter([x for x, _ in points], [y for _, y in points], s=14, color=f"C{k}", alpha=0.6)
        medians = [(length, statistics.median(wall(cell, way) for cell in group))
                   for length, group in sorted(lengths.items())]
        axes.plot([x for x, _ in medians], [y for _, y in medians], "-", color=f"C{k}", label=labels[way])
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xticks(sorted(lengths), [f"{length:,}" for length in sorted(lengths)])
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.yaxis.set_major_formatter(ScalarFormatter())
    axes.yaxis.set_minor_formatter(ScalarFormatter())
    axes.set_xlabel("trial length (PPO iterations of 2,048 env steps)")
    axes.set_ylabel("wall time of the study (s)")
    axes.legend(fontsize="small")
    figure.savefig(path, dpi=DPI)


def best_chart(lengths: dict, labels: dict, path: str):
    """Per length: each way's best objective so far against wall time (steps, one per study seed), and its rerun on
    fresh seeds at the equal time and at its end (markers)."""
    figure = Figure(figsize=(max(4 * len(lengths), 11), 4.6), layout="constrained")
    panels = figure.subplots(1, len(lengths), squeeze=False)[0]
    for axes, (length, cells) in zip(panels, sorted(lengths.items())):
        for k, way in enumerate(way_keys(cells)):
            for n, cell in enumerate(cells):
                curve = best_so_far(time_points(cell.studies[way]))
                axes.step([x for x, _ in curve], [y for _, y in curve], where="post", color=f"C{k}", alpha=0.4,
                          label=f"{SHORT.get(way, way)}: best objective so far" if n == 0 else None)
                marks = [(cell.score["equal_time_s"], rerun_value(cell, way, "equal")),
                         (wall(cell, way), rerun_value(cell, way, "end"))] if cell.score else []
                axes.scatter([x for x, y in marks if not math.isnan(y)], [y for _, y in marks if not math.isnan(y)],
                             marker="D", s=22, color=f"C{k}", label=f"{SHORT.get(way, way)}: its best, rerun"
                             if n == 0 else None)
        axes.set_title(f"{length:,} iterations per trial")
        axes.set_xlabel("wall time (s): time at least one trial ran")
    panels[0].set_ylabel("return (objective; rerun on fresh seeds: diamonds)")
    figure.legend(*panels[0].get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize="small")
    figure.savefig(path, dpi=DPI)


# THE REPORT
def invocation_lines(plan: dict) -> list:
    rows = [[f"`{' '.join(item['argv'])}`", item["date"], item["commit"], item["load"], item["trials"],
             f"`{item['workload']}`", item["score_seeds"]] for item in plan["invocations"]]
    return markdown_table(["invocation", "date", "commit", "load average at its start", "trials per study",
                           "workload (and --num-iterations L)", "rerun seeds"], rows)


def numbers_lines(plan: dict) -> list:
    return [f"*The numbers:* {plan_machine(plan)}; 2 cores; every way uses both (two trial processes at a time, two "
            "population processes side by side). Each cell (env, trial length, study seed) ran three tune.py studies "
            "one after another, in an order that turns from cell to cell, then the reruns; study seed s seeds the "
            "samplers, and trial n runs with seed s + n. The random sampler draws trial n's values from (s, n): the "
            "populations and the trials without pruning train the same configurations. TPE draws its first 10 "
            "trials at random (Optuna's start-up): a study of 10 trials or fewer is random search with Hyperband "
            "(reduction factor 3, resources in iterations). The space is the PPO space's float fields (docs/tuning.md; "
            "the others at the scripts' defaults). The objective: " + OBJECTIVE + ". The reruns: every way's best "
            "configuration, by the equal time and at its end, trained again by the populations' script (one process of "
            "its fresh seeds' agents, two processes side by side) on the same fresh seeds; the value is the mean of "
            "their objectives. Spread: median (min–max) over the study seeds.", "", WALL_TIME, "",
            *invocation_lines(plan)]


def env_lines(env: str, lengths: dict, labels: dict, directory: str) -> list:
    slug = env.lower().replace("-", "_")
    wall_chart(lengths, labels, os.path.join(directory, CHARTS, f"{slug}_wall.png"))
    best_chart(lengths, labels, os.path.join(directory, CHARTS, f"{slug}_best.png"))
    seeds = sorted({cell.seed for cells in lengths.values() for cell in cells})
    lines = [f"## {env}", "", f"Study seeds {', '.join(map(str, seeds))}.", "",
             f"![wall time against trial length]({CHARTS}/{slug}_wall.png)", "",
             "### Cost: wall time of the study", ""]
    lines += markdown_table(["iterations per trial", "way", "wall time", "against the populations",
                             "trials completed / pruned (all seeds)"], cost_rows(lengths, labels))
    lines += [f"![best against wall time]({CHARTS}/{slug}_best.png)", "", "### What each way finds, at equal wall time",
              "", "*Equal time:* the wall time of the cell's fastest study. *By it:* the best configuration a way had "
              "finished by then (by its objective), rerun; *at its end:* its best after all its trials, rerun.", ""]
    lines += markdown_table(["iterations per trial", "way", "equal time", "best by it, rerun",
                             "best at its end, rerun", "best objective at its end (its own seed)"],
                            equal_rows(lengths, labels))
    return lines


def write_report(directory: str) -> str:
    """Writes DIR/REPORT.md and DIR/charts/ from DIR/exp15.json and its studies; returns REPORT.md's path."""
    plan, cells, labels = read_cells(directory, PLAN_FILE)
    envs = grouped(cells)
    lines = ["# exp15: the search at the trial lengths users run", "", "## The answer", ""]
    for env, lengths in envs.items():
        lines += [f"- {env}, the wall time of {labels['trials']} against {labels['population']}: "
                  f"{crossover_text(lengths, 'trials')}.",
                  f"- {env}, {labels['pruned']} against the populations: {crossover_text(lengths, 'pruned')}."]
        lines += [f"- {env}, at equal wall time, the best found, rerun on fresh seeds (median over study seeds): "
                  f"{equal_text(length, group, labels)}." for length, group in sorted(lengths.items())]
    lines += ["", *numbers_lines(plan)]
    for env, lengths in envs.items():
        lines += env_lines(env, lengths, labels, directory)
    return write_markdown(directory, lines)


def main(argv: list | None = None) -> int:
    """`python -m report.lengths DIR`: writes exp15's REPORT.md."""
    return run_command(argv, "python -m report.lengths", __doc__.split("\n\n")[0],
                       f"exp15's folder (it holds {PLAN_FILE} and the study folders)", quiet(write_report))


if __name__ == "__main__":
    sys.exit(main())
