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

import optuna

from report.study import completed, interval, merged, busy_seconds, wall_seconds

PLAN_FILE = "exp15.json"


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
