"""The cells of the trial-length command sets (those of the budget and lengths reports): each (env, trial length,
study seed) with its studies, one per way of searching, and the reruns of their best configurations on fresh seeds
(score.json): loading them, grouping them, each way's best by a moment of its wall-time clock and its rerun values,
and the chart of the best so far that both reports draw.

One clock for every way: a trial ends at its tell, whether it ran in a process of its own or as an agent of a
population (whose process ends before its agents are told). report/study.py's clock ends a population's agents at
their process's end, and a trial in a process at its tell: the studies are loaded here without that difference."""
import copy
import json
import math
import os
import statistics
import textwrap
from typing import NamedTuple

import optuna
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from optuna.trial import TrialState

from report.folder import CHARTS, DPI, read_json_file
from report.palette import other_colors
from report.study import best_so_far, busy_seconds, completed, interval, merged, time_points, wall_seconds
from report.text import listed, number_text
from search import Refused, storage
from search.storage import TPE_STARTUP

WAYS = ("population", "trials", "pruned")  # the lengths report's order of the ways, whatever order a cell ran them in
SHORT = {"population": "populations", "trials": "trials in processes", "pruned": "TPE + Hyperband trials",
         "seeds": "K seeds per trial", "pbt": "PBT"}  # the budget report's ways too


# ONE CLOCK: every trial ends at its tell
class TellClock:
    """A study whose trials all end at their tell: a population's agents without their process's end
    (population_end), so that a trial in a process and an agent of a population are timed alike."""

    def __init__(self, study: optuna.Study):
        self.study = study
        self.trials = [told(trial) for trial in study.get_trials(deepcopy=False)]

    def get_trials(self, deepcopy: bool = False, states=None) -> list:
        return [trial for trial in self.trials if states is None or trial.state in states]

    def __getattr__(self, name):
        if name == "study":  # not yet set (a copy being made): no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self.study, name)


def told(trial: optuna.trial.FrozenTrial) -> optuna.trial.FrozenTrial:
    """The trial without its population's process end: it ends at its tell (datetime_complete)."""
    if "population_end" not in trial.user_attrs:
        return trial
    copied = copy.copy(trial)
    copied.user_attrs = {key: value for key, value in trial.user_attrs.items() if key != "population_end"}
    return copied


def load_study(directory: str, folder: str) -> TellClock:
    """The study of DIR/folder on the one clock (TellClock)."""
    return TellClock(storage.load(os.path.join(directory, folder))[1])


# TPE'S START-UP: Optuna's TPE draws at random until TPE_STARTUP trials have finished (completed or pruned)
def tpe_drawn(study) -> list:
    """The numbers of the trials TPE itself drew: those begun once TPE_STARTUP trials had finished."""
    trials = study.get_trials(deepcopy=False)
    ends = sorted(trial.datetime_complete for trial in trials
                  if trial.state in (TrialState.COMPLETE, TrialState.PRUNED) and trial.datetime_complete)
    return [trial.number for trial in trials if trial.datetime_start
            and sum(end <= trial.datetime_start for end in ends) >= TPE_STARTUP]


def sampled_label(label: str, sampler: str, studies: list) -> str:
    """A way's label as its studies sampled: TPE that never left its random start-up is random search."""
    if sampler != "tpe" or any(tpe_drawn(study) for study in studies):
        return label
    if "TPE + " in label:
        return label.replace("TPE + ", "random search (TPE's start-up) + ")
    return f"{label} (random search: TPE's start-up)"


# TELLING WAYS APART: the study seed is the independent unit, and a few of them can tell no difference at 95 %
TELL_LEVEL = 0.95


def sign_test_floor(n: int) -> float:
    """The smallest two-sided p a sign test over n independent units can give (every unit on one side): 2 / 2^n."""
    return min(1.0, 2 / 2 ** n)


def can_tell(n: int, level: float = TELL_LEVEL) -> bool:
    """Whether n study seeds can tell a difference at the level: the rule of both reports. Where a sign test over them
    cannot reach p below 1 - level (2 / 2^n: from 6 study seeds at 95 %), no interval over them is read as telling two
    ways apart, however it lies: all of them on one side happens by chance 2 / 2^n of the time."""
    return n >= 1 and sign_test_floor(n) < 1 - level


MIN_TOLD = next(n for n in range(1, 64) if can_tell(n))  # 6 at 95 %
TELL_RULE = (f"a difference is told apart at {TELL_LEVEL * 100:g} % only over {MIN_TOLD} study seeds or more: a "
             "two-sided sign test over n study seeds cannot give p below 2/2^n (every seed on one side), which is "
             f"below {1 - TELL_LEVEL:.2f} only from n = {MIN_TOLD}; over fewer, the direction is given study seed by "
             "study seed, nothing is told apart and no way is in bold")


def seeds_text(seeds: list) -> str:
    """'study seed 1', 'study seeds 1, 2 and 3'."""
    return f"study seed{'s' * (len(seeds) > 1)} {listed([str(seed) for seed in seeds])}"


def untold_text(n: int) -> str:
    """'3 study seeds cannot tell a difference at 95 %' ('one study seed ...')."""
    return f"{'one study seed' if n == 1 else f'{n} study seeds'} cannot tell a difference at {TELL_LEVEL * 100:g} %"


def direction_text(differences: dict) -> str:
    """The first's value minus another's, study seed by study seed ({seed: difference}), as a direction per seed:
    'below the first in each of the 3 study seeds, by 49.3 to 91', 'below the first in study seeds 1 and 2, by 1, and
    above it in study seed 3, by 0.3'."""
    def by(values):
        low, high = min(map(abs, values)), max(map(abs, values))
        return number_text(low) if number_text(low) == number_text(high) else \
            f"{number_text(low)} to {number_text(high)}"

    sides = [("below the first", [s for s, d in differences.items() if d > 0]),
             ("above it" if any(d > 0 for d in differences.values()) else "above the first",
              [s for s, d in differences.items() if d < 0]),
             ("level with it" if any(differences.values()) else "level with the first",
              [s for s, d in differences.items() if d == 0])]
    parts = []
    for side, seeds in sides:
        if not seeds:
            continue
        where = (f"each of the {len(seeds)} study seeds" if len(seeds) == len(differences) > 1 else seeds_text(seeds))
        values = [differences[seed] for seed in seeds]
        parts.append(f"{side} in {where}" + (f", by {by(values)}" if any(values) else ""))
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + ", and " + parts[-1]


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
        studies = {entry["way"]: load_study(directory, entry["folder"]) for entry in item["studies"]}
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
    samplers = {entry["way"]: entry.get("sampler") for item in plan["cells"] for entry in item["studies"]}
    labels = {}
    for way, label in {way: label for cell in cells for way, label in cell.labels.items()}.items():
        studies = [cell.studies[way] for cell in cells if way in cell.studies]
        labels[way] = sampled_label(label, samplers.get(way), studies)
    return plan, cells, labels


def wall(cell: Cell, way: str) -> float:
    return wall_seconds(cell.studies[way].get_trials(deepcopy=False))


def rerun_value(cell: Cell, way: str, at: str) -> float:
    """The mean of the rerun's values of the way's best by the equal time ("equal") or at its end ("end"); NaN where
    it had none, or where its pick has no rerun (config None)."""
    pick = (cell.score or {}).get("picks", {}).get(way, {}).get(at)
    config = None if pick is None else pick.get("config")
    values = [] if config is None else [v for v in cell.score["configs"][config]["values"] if v is not None]
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


def short_label(way: str, labels: dict) -> str:
    """The charts' short name of a way: SHORT's, a TPE study that never left its start-up named random search."""
    short = SHORT.get(way, way)
    return short.replace("TPE + ", "random search + ") if "TPE's start-up" in labels.get(way, "") else short


SEED_MARKERS = "osD^vP*Xph"  # the rerun panel's marker of each study seed, in the order of the seeds


def rerun_marks(cells: list, ways: list) -> list:
    """The rerun panel's markers: (x, value, way index, study seed index, "equal" or "end") for every pick that
    reruns; x is the way's position (k), offset by study seed and by pick so that no marker lies on another."""
    seeds = sorted({cell.seed for cell in cells})
    kinds = [at for at in ("equal", "end") if any(((cell.score or {}).get("picks", {}).get(way) or {}).get(at)
                                                   for cell in cells for way in ways)]
    slots = [(n, at) for n in range(len(seeds)) for at in kinds]
    width = 0.7 / max(1, len(slots))
    marks = []
    for k, way in enumerate(ways):
        for cell in cells:
            for at in kinds:
                value = rerun_value(cell, way, at)
                if not math.isnan(value):
                    slot = slots.index((seeds.index(cell.seed), at))
                    marks.append((k + (slot - (len(slots) - 1) / 2) * width, value, k, seeds.index(cell.seed), at))
    return marks


def best_chart(lengths: dict, labels: dict, path: str):
    """Per length, two panels of their own axes: above, each way's best objective so far (its own seed) against wall
    time (steps, one per study seed); below, the rerun on fresh seeds of each way's pick by the equal time (filled)
    and at its end (hollow), one marker per study seed, side by side so that equal values do not hide each other."""
    figure = Figure(figsize=(max(4.5 * len(lengths), 11), 8.2), layout="constrained")
    panels = figure.subplots(2, len(lengths), squeeze=False, sharey="col")
    seeds = sorted({cell.seed for cells in lengths.values() for cell in cells})
    colors = other_colors(way_keys([cell for cells in lengths.values() for cell in cells]))
    for column, (length, cells) in enumerate(sorted(lengths.items())):
        above, below = panels[0][column], panels[1][column]
        ways = way_keys(cells)
        for way in ways:
            for cell in cells:
                curve = best_so_far(time_points(cell.studies[way]))
                above.step([x for x, _ in curve], [y for _, y in curve], where="post", color=colors[way], alpha=0.6)
        for x, value, k, n, at in rerun_marks(cells, ways):
            below.scatter([x], [value], marker=SEED_MARKERS[n % len(SEED_MARKERS)], s=36, color=colors[ways[k]],
                          facecolors=colors[ways[k]] if at == "equal" else "none", linewidths=1.2)
        below.set_xticks(range(len(ways)), [textwrap.fill(short_label(way, labels), 16) for way in ways],
                         fontsize="small")
        below.set_xlim(-0.5, len(ways) - 0.5)
        above.set_title(f"{length:,} iterations per trial")
        above.set_xlabel("wall time (s): time at least one trial ran")
        below.set_xlabel("way (one marker per study seed, side by side)")
    panels[0][0].set_ylabel("best objective so far (its own seed)")
    panels[1][0].set_ylabel("the pick's rerun on fresh seeds (mean return)")
    ways = way_keys([cell for cells in lengths.values() for cell in cells])
    handles = [Line2D([], [], color=colors[way], label=short_label(way, labels)) for way in ways]
    handles += [Line2D([], [], marker=SEED_MARKERS[n % len(SEED_MARKERS)], linestyle="", color="0.3",
                       label=f"study seed {seed}") for n, seed in enumerate(seeds)]
    kinds = {at for cells in lengths.values() for *_, at in rerun_marks(cells, way_keys(cells))}
    if "end" in kinds:
        handles += [Line2D([], [], marker="o", linestyle="", color="0.3", label="rerun: best by the equal time"),
                    Line2D([], [], marker="o", linestyle="", color="0.3", markerfacecolor="none",
                           label="rerun: best at its end")]
    figure.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 6), fontsize="small")
    figure.savefig(path, dpi=DPI)
