"""The cells of the trial-length command sets (those of the budget and lengths reports): each (env, trial length,
study seed) with its studies, one per way of searching, and the reruns of their best configurations on fresh seeds
(score.json): loading them, grouping them, each way's best by a moment of its wall-time clock and its rerun values,
and the chart of the best so far that both reports draw."""
import json
import math
import os
import statistics
from typing import NamedTuple

import optuna
from matplotlib.figure import Figure

from report.folder import CHARTS, DPI, read_json_file
from report.study import best_so_far, busy_seconds, completed, interval, merged, time_points, wall_seconds
from search import Refused, storage

WAYS = ("population", "trials", "pruned")  # the lengths report's order of the ways, whatever order a cell ran them in
SHORT = {"population": "populations", "trials": "trials in processes", "pruned": "TPE + Hyperband trials",
         "seeds": "K seeds per trial", "pbt": "PBT"}  # the budget report's ways too


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
        studies = {entry["way"]: storage.load(os.path.join(directory, entry["folder"]))[1]
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
