"""The report of one study folder (tune.py's): REPORT.md and its charts under charts/, written by tune.py at the end
of a study and by `python -m report.study STUDY_DIR`.

REPORT.md opens with the answer (the best configuration, its value and its re-evaluation on fresh seeds, the trials'
outcomes, the study's wall time), then the study's settings, the charts (best so far, the parameters' importances,
the contour of the two most important parameters) and the best trials. Wall time here, and the best-so-far chart's
clock, is the time at least one trial ran: the length of the union of the trials' start-to-end intervals, so the gaps
between an interrupted study and its resumption do not count."""
import math
import os
import statistics
import sys
import warnings
from collections import Counter
from typing import NamedTuple

import matplotlib
import matplotlib.pyplot as plt
import optuna
from matplotlib.figure import Figure
from optuna.trial import TrialState

from report.folder import CHARTS, DPI, run_command, write_markdown
from report.palette import OTHER_COLORS
from report.text import markdown_table, mean_and_spread, number_text
from search import evaluation, records
from search.storage import load

matplotlib.use("Agg")  # Optuna's contour draws with pyplot: no window, whatever the machine

OBJECTIVE = "the mean episodic return over the last 10 % of env steps"
WALL_TIME = ("*Wall time* is the time at least one trial ran: the length of the union of the trials' start-to-end "
             "intervals, so the gaps between resumed runs do not count (the best-so-far chart's clock too).")
TOP_TRIALS = 10
AGGREGATES = {"mean": "mean", "iqm": "interquartile mean"}


class Figures(NamedTuple):
    """What one study comes to: its trials' outcomes (retried trials apart: their retries count instead), its cost and
    its best trial."""
    completed: int
    pruned: int
    failed: int
    retried: int
    unfinished: int  # running or waiting: an interrupted study
    reasons: Counter  # the failed trials by reason
    wall_s: float
    per_hour: float  # finished trials per hour of wall time
    median_s: float  # the median duration of the finished trials
    best: optuna.trial.FrozenTrial | None


# TIME: the union of the trials' intervals
def interval(trial: optuna.trial.FrozenTrial) -> tuple | None:
    """A trial's (start, end) in seconds since the epoch, or None where it never started or has no end. The end is
    its completion (an agent of a population: its process's end, which every agent shares, not its tell's moment);
    for a retried trial (a lost worker's is failed when noticed, maybe at the next start) or one still marked running,
    its worker's last heartbeat where that is earlier."""
    if trial.datetime_start is None:
        return None
    start = trial.datetime_start.timestamp()
    end = trial.datetime_complete.timestamp() if trial.datetime_complete else math.inf
    end = min(end, trial.user_attrs.get("population_end", math.inf))
    if end == math.inf or trial.system_attrs.get("retried"):
        end = min(end, trial.system_attrs.get("heartbeat") or math.inf)
    return (start, max(start, end)) if end < math.inf else None


def merged(trials: list) -> list:
    """The union of the trials' intervals as sorted, disjoint [start, end] pairs."""
    spans = []
    for start, end in sorted(filter(None, map(interval, trials))):
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    return spans


def busy_seconds(spans: list, moment: float = math.inf) -> float:
    """The time at least one trial ran before moment (seconds since the epoch): the study's wall-time clock."""
    return sum(max(0.0, min(end, moment) - start) for start, end in spans)


def wall_seconds(trials: list) -> float:
    """The study's wall time: the length of the union of its trials' intervals."""
    return busy_seconds(merged(trials))


def clock_unit(seconds: float) -> tuple:
    """(seconds per unit, its name) for a span of time: hours from 2 h on, minutes below."""
    return (3600.0, "h") if seconds >= 7200 else (60.0, "min")


def rate_text(value: float) -> str:
    """A number as number_text writes it, '–' for NaN."""
    return "–" if math.isnan(value) else number_text(value)


def duration_text(seconds: float) -> str:
    """A duration in s (below 2 min), min (below 2 h) or h, three significant digits; '–' for NaN."""
    if math.isnan(seconds):
        return "–"
    if seconds < 120:
        return f"{number_text(seconds)} s"
    scale, unit = clock_unit(seconds)
    return f"{number_text(seconds / scale)} {unit}"


# TRIALS: outcomes and the best so far
def completed(trials: list) -> list:
    """The completed trials that have a value."""
    return [trial for trial in trials if trial.state == TrialState.COMPLETE and trial.value is not None]


def reason(trial: optuna.trial.FrozenTrial) -> str:
    """Why a trial ended as it did (its user_attr reason)."""
    return trial.user_attrs.get("reason") or "no reason recorded"


def figures(study: optuna.Study) -> Figures:
    """The study's outcomes, cost and best trial (the first of the highest value; None before any completed)."""
    trials = study.get_trials(deepcopy=False)
    kept = [trial for trial in trials if not trial.system_attrs.get("retried")]
    states = Counter(trial.state for trial in kept)
    done = [trial for trial in kept if trial.state.is_finished()]
    durations = [trial.duration.total_seconds() for trial in done if trial.duration]
    wall = wall_seconds(trials)
    return Figures(
        completed=states[TrialState.COMPLETE], pruned=states[TrialState.PRUNED], failed=states[TrialState.FAIL],
        retried=len(trials) - len(kept), unfinished=states[TrialState.RUNNING] + states[TrialState.WAITING],
        reasons=Counter(reason(trial) for trial in kept if trial.state == TrialState.FAIL), wall_s=wall,
        per_hour=len(done) / (wall / 3600) if wall else math.nan,
        median_s=statistics.median(durations) if durations else math.nan,
        best=max(completed(trials), key=lambda trial: trial.value, default=None))


def best_so_far(points: list) -> list:
    """The running maximum of [(x, value)] in the order of x: [(x, the best value up to x)]."""
    best, curve = -math.inf, []
    for x, value in sorted(points):
        best = max(best, value)
        curve.append((x, best))
    return curve


def time_points(study: optuna.Study) -> list:
    """[(the wall time at its end, s; its value)] of the completed trials, on the union-of-intervals clock."""
    trials = study.get_trials(deepcopy=False)
    spans = merged(trials)
    return [(busy_seconds(spans, interval(trial)[1]), trial.value) for trial in completed(trials)]


def number_points(study: optuna.Study) -> list:
    """[(trial number, value)] of the completed trials."""
    return [(trial.number, trial.value) for trial in completed(study.get_trials(deepcopy=False))]


# IMPORTANCES
def varying(trials: list) -> list:
    """The parameters that take two values or more across the trials."""
    names = dict.fromkeys(name for trial in trials for name in trial.params)
    return [name for name in names if len({repr(trial.params.get(name)) for trial in trials}) > 1]


def importances(study: optuna.Study) -> tuple:
    """Optuna's parameter importances (its default evaluator) over the completed trials, most important first, and
    ''; or {} and why there are none."""
    trials = completed(study.get_trials(deepcopy=False))
    if len(trials) < 2:
        return {}, f"they need at least 2 completed trials, and this study has {len(trials)}"
    if not varying(trials):
        return {}, "every completed trial has the same configuration"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few trials: Optuna warns, and says so in equal importances
        try:
            values = optuna.importance.get_param_importances(study)
        except (ValueError, RuntimeError) as error:
            return {}, f"Optuna could not compute them ({error})"
    return dict(sorted(values.items(), key=lambda item: -item[1])), ""


# CHARTS
def draw_best(axes, points: list, label: str = "best so far", color: str = OTHER_COLORS[0]):
    """The completed trials' values as dots and their best so far as a step line, on axes."""
    axes.scatter([x for x, _ in points], [value for _, value in points], s=14, color=color, alpha=0.5)
    curve = best_so_far(points)
    axes.step([x for x, _ in curve], [best for _, best in curve], where="post", color=color, label=label)


def best_chart(study: optuna.Study, path: str):
    """Best so far against the study's wall time (left) and against the trial number (right)."""
    by_time = time_points(study)
    scale, unit = clock_unit(max(x for x, _ in by_time))
    figure = Figure(figsize=(10, 4), layout="constrained")
    left, right = figure.subplots(1, 2, sharey=True)
    draw_best(left, [(x / scale, value) for x, value in by_time])
    draw_best(right, number_points(study))
    left.set_xlabel(f"wall time ({unit}): time at least one trial ran")
    right.set_xlabel("trial number")
    left.set_ylabel("objective (completed trials: dots)")
    left.legend(loc="lower right")
    figure.savefig(path, dpi=DPI)


def importance_chart(values: dict, path: str):
    """The parameters' importances as horizontal bars, the most important on top."""
    names = list(values)[::-1]
    figure = Figure(figsize=(6, 1 + 0.4 * len(names)), layout="constrained")
    axes = figure.subplots()
    axes.barh(names, [values[name] for name in names])
    axes.set_xlabel("importance (Optuna's default evaluator; they sum to 1)")
    figure.savefig(path, dpi=DPI)


def contour_chart(study: optuna.Study, values: dict, path: str) -> tuple:
    """Optuna's contour of the objective over the two most important parameters that vary across the completed
    trials: (their names, '') once saved at path, or ([], why not)."""
    if not values:
        return [], "it plots the two most important parameters, and there are no importances"
    moving = varying(completed(study.get_trials(deepcopy=False)))
    names = [name for name in values if name in moving][:2]
    if len(names) < 2:
        return [], f"it needs two parameters that vary across the completed trials; only {names[0]} does"
    with warnings.catch_warnings(), matplotlib.rc_context():  # Optuna sets its style globally: kept to this chart
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        axes = optuna.visualization.matplotlib.plot_contour(study, params=names)
        axes.figure.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(axes.figure)
    return names, ""


def chart_lines(study: optuna.Study, study_dir: str) -> list:
    """Draws the three charts under charts/; their markdown: each linked with a caption, or why it is absent."""
    os.makedirs(os.path.join(study_dir, CHARTS), exist_ok=True)
    lines = ["## Charts", ""]
    if completed(study.get_trials(deepcopy=False)):
        best_chart(study, os.path.join(study_dir, CHARTS, "best_so_far.png"))
        lines += [f"![best so far]({CHARTS}/best_so_far.png)", "",
                  "*Best so far:* the best value against the wall time (left) and against the trial number (right); "
                  "completed trials as dots.", ""]
    else:
        lines += ["*No best-so-far chart:* no trial completed.", ""]
    values, why = importances(study)
    if values:
        importance_chart(values, os.path.join(study_dir, CHARTS, "importances.png"))
        lines += [f"![parameter importances]({CHARTS}/importances.png)", "",
                  "*Parameter importances:* how much each parameter moves the objective across the completed trials "
                  "(Optuna's default evaluator, normalised to sum to 1).", ""]
    else:
        lines += [f"*No parameter importances:* {why}.", ""]
    names, why = contour_chart(study, values, os.path.join(study_dir, CHARTS, "contour.png"))
    if names:
        return lines + [f"![contour]({CHARTS}/contour.png)", "", f"*Contour:* the objective over the two most "
                        f"important parameters, {names[0]} and {names[1]}; completed trials as dots.", ""]
    return lines + [f"*No contour:* {why}.", ""]


# TEXT
def cell(text) -> str:
    """Text for a markdown table's cell: one line, no column bars."""
    return " ".join(str(text).split()).replace("|", "\\|")


def param_text(value) -> str:
    """A parameter's value: floats with four significant digits, the rest as they are."""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def params_text(params: dict) -> str:
    """A configuration in one line: 'learning_rate=0.001, batch_size=64'."""
    return ", ".join(f"{name}={param_text(value)}" for name, value in params.items())


def evaluation_text(data: dict | None) -> str:
    """The re-evaluation's mean ± sd over its fresh seeds, or 'not re-evaluated'."""
    if not data or not data.get("runs"):
        return "not re-evaluated"
    values, runs = evaluation.values(data), len(data["runs"])
    failed = f"; {runs - len(values)} of {runs} seeds failed" if len(values) < runs else ""
    if not values:
        return f"the re-evaluation failed on all {runs} seeds"
    return f"{mean_and_spread(values)} over {len(values)} fresh seed{'s' * (len(values) > 1)} (mean ± sd{failed})"


def re_evaluation_text(best: optuna.trial.FrozenTrial, data: dict | None) -> str:
    """The best trial's re-evaluation (evaluation_text); 'not re-evaluated' where evaluation.json holds another's."""
    if data and data.get("trial") != best.number:
        return f"not re-evaluated (evaluation.json holds trial {data.get('trial')}'s re-evaluation)"
    return evaluation_text(data)


def top_lines(data: dict | None) -> list:
    """With --eval-top k: the k best configurations rerun on the same fresh seeds, each mean with its bootstrap
    interval, and whether the best can be told apart from each (the paired interval of the difference excludes 0)."""
    if not data or not data.get("others"):
        return []
    entries = [data, *data["others"]]
    rows, apart = [], 0
    for rank, entry in enumerate(entries, 1):
        found = evaluation.values(entry)
        low, high = evaluation.interval(found)
        mean = sum(found) / len(found) if found else math.nan
        difference = "–"
        if rank > 1:
            d_low, d_high = evaluation.difference_interval(data, entry)
            separated = not math.isnan(d_low) and (d_low > 0 or d_high < 0)
            apart += separated
            difference = f"[{number_text(d_low)}, {number_text(d_high)}]: {'apart' if separated else 'not apart'}" \
                if not math.isnan(d_low) else "–"
        rows.append([rank, entry["trial"], number_text(entry["value"]), f"{len(found)} of {len(entry['runs'])}",
                     "–" if math.isnan(mean) else f"{number_text(mean)} [{number_text(low)}, {number_text(high)}]",
                     difference])
    return ["### The top configurations, rerun", "",
            f"The {len(entries)} best trials' configurations, each rerun on the same fresh seeds. The best can be "
            f"told apart from {apart} of the {len(entries) - 1} others: the 95 % interval of the difference of their "
            "means, paired by seed (a bootstrap over the seeds, percentile method), excludes 0. With a handful of "
            "seeds these intervals are rough.", "",
            *markdown_table(["rank", "trial", "objective", "seeds rerun", "rerun mean [95 % interval]",
                             "the best minus this one [95 % interval]"], rows)]


def outcome_text(summary: Figures) -> str:
    """'4 completed, 1 pruned, 3 failed; 1 retry apart (...)'."""
    parts = [f"{summary.completed} completed, {summary.pruned} pruned, {summary.failed} failed"]
    if summary.unfinished:
        parts.append(f"{summary.unfinished} unfinished (running or waiting: an interrupted study)")
    if summary.retried:
        parts.append(f"{summary.retried} retr{'ies' if summary.retried > 1 else 'y'} apart (a trial cut short, its "
                     "worker lost or tune.py stopped: failed, and run again)")
    return "; ".join(parts)


def answer_lines(summary: Figures, data: dict | None, pbt: bool = False) -> list:
    """The report's opening: the best configuration, its value and re-evaluation, the trials, the wall time; in a PBT
    study, where the best trial's schedule is (its values are its start)."""
    lines = ["## The answer", ""]
    best = summary.best
    if best is None:
        lines += ["No trial completed: there is no best configuration yet.", ""]
    else:
        lines += [f"**Best configuration:** trial {best.number}, value **{number_text(best.value)}** (the objective: "
                  f"{OBJECTIVE}); re-evaluated: {re_evaluation_text(best, data)}.", ""]
        rows = [[name, param_text(value)] for name, value in best.params.items()]
        lines += markdown_table(["parameter", "value"], rows) + top_lines(data)
        if pbt:
            folder = f"runs/trial_{best.number:04d}"
            schedule, replay = (f"[{folder}/{file}]({folder}/{file})" for file in ("pbt_schedule.json",
                                                                                   "pbt_replay.json"))
            lines += [f"PBT: these are the values trial {best.number}'s agent started from. What it trained with, "
                      f"iteration by iteration, and whom it copied: {schedule}; its lineage as one agent's --hparams "
                      f"file, which the re-evaluation reruns: {replay}.", ""]
    lines += [f"- **Trials:** {outcome_text(summary)}.",
              f"- **Wall time:** {duration_text(summary.wall_s)}, {rate_text(summary.per_hour)} trials per hour "
              f"(finished trials); median trial {duration_text(summary.median_s)}.", "", WALL_TIME, ""]
    if summary.reasons:
        lines += ["Failed trials by reason:", ""]
        rows = [[cell(text), count] for text, count in summary.reasons.most_common()]
        lines += markdown_table(["reason", "trials"], rows)
    return lines


def range_text(entry: dict) -> str:
    """A range of the space: 'a – b' or its choices."""
    if entry["type"] == "categorical":
        return ", ".join(map(str, entry["choices"]))
    return f"{param_text(entry['low'])} – {param_text(entry['high'])}"


def pruner_text(pruner: str, silent: int) -> str:
    if not silent or pruner == "none":
        return pruner
    return (f"{pruner}, in effect none: the script printed no iteration line in {silent} trial"
            f"{'s' * (silent > 1)}, so the pruner saw nothing of them")


def settings_lines(settings, silent: int = 0) -> list:
    """The study's header: its script and flags, sampler, pruner, seed and the space, from study.json; `silent`: the
    trials of a CleanRL-style script that printed no iteration line (the pruner saw nothing of them)."""
    flags = " ".join(settings.script_flags)
    rows = [["script", f"`{settings.script}`"], ["flags", f"`{flags}`" if flags else "none"],
            ["algorithm", settings.algorithm], ["sampler", settings.sampler], ["pruner", pruner_text(settings.pruner, silent)],
            ["seed", settings.seed], ["trials asked", settings.trials], ["workers", settings.workers],
            ["re-evaluation seeds", settings.eval_seeds], ["storage", settings.storage or "journal.log (the folder's)"]]
    if settings.contract == "cleanrl":
        rows.insert(1, ["contract", "a CleanRL-style script, run in its trial's folder (docs/tuning.md)"])
    if settings.pbt:
        rows.insert(5, ["PBT", f"populations of {settings.population} agents, each a trial"])
    if settings.seeds_per_trial > 1:
        rows.insert(5, ["seeds per trial",
                        f"{settings.seeds_per_trial}, the objective their {AGGREGATES[settings.aggregate]}"])
    space = [[name, entry["type"], range_text(entry), "yes" if entry.get("log") else "no"]
             for name, entry in settings.space.items()]
    return (["## The study", ""] + markdown_table(["setting", "value"], rows)
            + markdown_table(["parameter", "type", "range", "log scale"], space))


def trial_lines(study: optuna.Study, summary: Figures) -> list:
    """The best trials by value, the count of the rest and a pointer to trials.csv."""
    ranked = sorted(completed(study.get_trials(deepcopy=False)), key=lambda trial: -trial.value)
    top = ranked[:TOP_TRIALS]
    seeds = any("seed_values" in trial.user_attrs for trial in top)
    rows = [[trial.number, trial.state.name.lower(), number_text(trial.value),
             *([", ".join(map(number_text, trial.user_attrs.get("seed_values", [])))] if seeds else []),
             duration_text(trial.duration.total_seconds() if trial.duration else math.nan),
             cell(trial.user_attrs.get("reason", ""))] for trial in top]
    lines = ["## Trials", "", f"The {len(top)} best by value:", ""] if top else ["## Trials", ""]
    header = ["trial", "state", "value", *(["each seed's value"] if seeds else []), "duration", "reason"]
    lines += markdown_table(header, rows) if top else []
    rest = (f"{len(ranked) - len(top)} more completed, {summary.pruned} pruned, {summary.failed} failed, "
            f"{summary.retried} retried")
    return lines + [f"Not listed: {rest}. Every trial, its parameters, times and reason: [trials.csv](trials.csv).", ""]


def write_report(study_dir: str) -> str:
    """Writes STUDY_DIR/REPORT.md, its charts under charts/ and trials.csv; returns REPORT.md's path. A folder that
    holds no study is refused (search.Refused)."""
    settings, study = load(study_dir)
    summary = figures(study)
    records.write_trials_csv(study, study_dir, settings.space, settings.seeds_per_trial)
    title = f"# Study {settings.study_name or os.path.basename(os.path.abspath(study_dir))}: `{settings.script}`"
    silent = sum(bool(trial.user_attrs.get("no_iteration_line")) for trial in study.get_trials(deepcopy=False))
    lines = [title, ""] + answer_lines(summary, evaluation.read(study_dir), settings.pbt)
    lines += settings_lines(settings, silent)
    lines += chart_lines(study, study_dir) + trial_lines(study, summary)
    return write_markdown(study_dir, lines)


def quiet(write):
    """`write(folder)` with Optuna's line per loaded trial silenced."""
    def run(folder: str) -> str:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        return write(folder)
    return run


def main(argv: list | None = None) -> int:
    """`python -m report.study STUDY_DIR`: writes the folder's REPORT.md."""
    return run_command(argv, "python -m report.study", __doc__.split("\n\n")[0],
                       "a study folder of tune.py (it holds study.json)", quiet(write_report))


if __name__ == "__main__":
    sys.exit(main())
