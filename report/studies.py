"""The studies of a search command set: the plan that lists them (DIR/<exp>.json), each study loaded from
its folder with its figures and settings, what their reports compare across studies (each configuration's values,
their spread across designs and their rank correlation) and the link to a study's own report."""
import math
import os
import statistics
import warnings
from typing import NamedTuple

import optuna
from scipy.stats import spearmanr

from report.folder import read_json_file
from report.study import Figures, completed, figures
from search import Refused
from search.storage import Settings, load

STUDY_KEYS = {"part", "label", "folder"}


class Entry(NamedTuple):
    """One study of a command set's plan and what its folder holds: its study and figures, None where it was not
    run."""
    part: str
    label: str
    folder: str
    workers: int
    study: optuna.Study | None
    figures: Figures | None
    settings: Settings | None
    seed: int = 1  # the study seed (the samplers' seed)
    population: int = 0  # agents per process; 0: trials in processes
    script: str = ""  # the script the plan names for the study, "" where it names none


def read_plan(directory: str, plan_file: str) -> dict:
    """DIR/plan_file (the command set's <exp>.json); a folder without it, or a file that is not one, is refused."""
    plan, path = read_json_file(directory, plan_file)
    studies = plan.get("studies") if isinstance(plan, dict) else None
    if not isinstance(studies, list) or not all(isinstance(item, dict) and STUDY_KEYS <= set(item) for item in studies):
        raise Refused(f"{path}: want a 'studies' list, each study with its {', '.join(sorted(STUDY_KEYS))}")
    return plan


def load_entry(directory: str, item: dict) -> Entry:
    """One listed study, loaded from its folder; not run where the folder holds no study or no finished trial."""
    part, label, folder, workers = item["part"], item["label"], item["folder"], item.get("workers", 1)
    seed, population, script = item.get("seed", 1), int(item.get("population", 0)), item.get("script", "")
    try:
        settings, study = load(os.path.join(directory, folder))
    except Refused:
        return Entry(part, label, folder, workers, None, None, None, seed, population, script)
    summary = figures(study)
    if not summary.completed + summary.pruned + summary.failed:
        return Entry(part, label, folder, workers, None, None, settings, seed, population, script)
    return Entry(part, label, folder, workers, study, summary, settings, seed, population, script)


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


def study_link(directory: str, entry: Entry) -> str:
    """A study's REPORT.md where it has one, else its folder."""
    report = os.path.join(entry.folder, "REPORT.md")
    return report if os.path.exists(os.path.join(directory, report)) else f"{entry.folder}/"
