"""exp10's report across its study folders: `python -m report.search DIR` writes DIR/REPORT.md and DIR/charts/ from
DIR/exp10.json (the machine, the load at the start, the date, the trials and env steps of every study, and the
studies: part, design label, folder, workers) and the study folders it lists.

Part (a) runs the same random search with every design: the cost of that search per design, and per configuration
(the sampler is seeded per trial number, so the same number is the same configuration) how far the designs' returns
agree, each design (script and flags) counted once: a study that differs from another only by its workers is the same
design. Part (b) runs our source's study per design: the best so far against wall time, the best configuration, its
re-evaluation and the parameters' importances. Each part names its sampler and pruner, and each study its script and
flags, from the study's own settings (study.json). The ratios of part (a) are to its fastest study, named. Wall time,
the best so far and the importances are report/study.py's."""
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
from search.study import TPE_STARTUP, Settings, load

PLAN_FILE = "exp10.json"
STUDY_KEYS = {"part", "label", "folder"}
NEAR = 0.05  # part (b)'s answer: when a design's best so far first came within this fraction of its final best
SAMPLERS = {"random": "a random sampler seeded per trial number", "tpe": "TPE"}
PRUNERS = {"none": "no pruner", "hyperband": "Hyperband", "median": "the median pruner"}


class Entry(NamedTuple):
    """One study of exp10.json and what its folder holds: its study and figures, None where it was not run."""
    part: str
    label: str
    folder: str
    workers: int
    study: optuna.Study | None
    figures: Figures | None
    settings: Settings | None


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
        settings, study = load(os.path.join(directory, folder))
    except Refused:
        return Entry(part, label, folder, workers, None, None, None)
    summary = figures(study)
    if not summary.completed + summary.pruned + summary.failed:
        return Entry(part, label, folder, workers, None, None, settings)
    return Entry(part, label, folder, workers, study, summary, settings)


def design(entry: Entry) -> tuple:
    """What a study ran: its script and flags (its workers aside); () where its settings are unknown."""
    return (entry.settings.script, *entry.settings.script_flags) if entry.settings else ()


def common_flags(entries: list) -> int:
    """How many flags every study with settings ends its flags with alike (the env and the trial length that the
    command set adds to each)."""
    lists = [entry.settings.script_flags for entry in entries if entry.settings]
    size = min(map(len, lists), default=0)
    while size and any(each[len(each) - size:] != lists[0][len(lists[0]) - size:] for each in lists):
        size -= 1
    return size


def script_text(entry: Entry, common: int) -> str:
    """The study's script and the flags that set it apart (the `common` last ones, which every study shares, left
    out), as code."""
    if not entry.settings:
        return "–"
    flags = entry.settings.script_flags
    return f"`{' '.join([entry.settings.script, *flags[:len(flags) - common]])}`"


def search_text(entries: list) -> str:
    """The sampler and pruner of a part's studies, in words: one for all, or each study's."""
    named = {(SAMPLERS.get(e.settings.sampler, e.settings.sampler), PRUNERS.get(e.settings.pruner, e.settings.pruner))
             for e in entries if e.settings}
    return " / ".join(f"{sampler}, {pruner}" for sampler, pruner in sorted(named)) or "unknown"


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


def cost_lines(entries: list, common: int) -> list:
    """Part (a)'s table: per design its script, workers, wall time, its ratio to the fastest study (named), trials per
    hour, median trial, outcomes and best value; the designs not run listed as such."""
    run = [entry for entry in entries if entry.figures]
    fastest = min(run, key=lambda entry: entry.figures.wall_s, default=None)
    rows = []
    for entry in entries:
        summary = entry.figures
        script = script_text(entry, common)
        if summary is None:
            rows.append([entry.label, script, entry.workers, "not run", "–", "–", "–", "–", "–"])
            continue
        best = number_text(summary.best.value) if summary.best else "–"
        rows.append([entry.label, script, entry.workers, duration_text(summary.wall_s),
                     speedup_text(ratio(summary.wall_s, fastest.figures.wall_s)), rate_text(summary.per_hour),
                     duration_text(summary.median_s), f"{summary.completed} / {summary.failed}", best])
    baseline = f"× the fastest ({fastest.label})" if fastest else "× the fastest"
    header = ["design", "script", "workers", "wall time", baseline, "trials per hour", "median trial",
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
    lines = ["### Per configuration, the returns across designs", ""] + same_design_lines(entries)
    entries = distinct(entries)
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
        f"{len(shared)} configurations (trial numbers) completed in all {len(entries)} distinct designs. The spread "
        f"across designs (max − min) relative to the configuration's mean |value|: median **{median}** over the "
        "configurations.", "", f"![values per configuration]({CHARTS}/configurations.png)", "",
        "*Values per configuration:* each design's value against the mean over the designs, one dot per "
        "configuration; on the grey line a design returns the mean.", "",
        f"Spearman's rank correlation with {entries[0].label} over the same configurations (1: the same order):",
        ""] + markdown_table(["design", "rank correlation"], rows)


def distinct(entries: list) -> list:
    """The first study of each design (script and flags): a study of more workers is the same design again."""
    firsts = {}
    for entry in entries:
        firsts.setdefault(design(entry) or entry.folder, entry)
    return [entry for entry in entries if firsts[design(entry) or entry.folder] is entry]


def same_design_lines(entries: list) -> list:
    """Each study that repeats an earlier study's design, with how many of their shared configurations returned the
    same value in both (the same configuration, seed and script: the same run, whatever the workers)."""
    lines, firsts = [], distinct(entries)
    for entry in entries:
        first = next((each for each in firsts if design(each) and design(each) == design(entry)), None)
        if first is None or first is entry:
            continue
        pair = shared_values([first, entry])
        same = sum(values[0] == values[1] for values in pair.values())
        lines += [f"{entry.label} ran the same design as {first.label} (the same script and flags, {entry.workers} "
                  f"workers against {first.workers}): the same value in {same} of their {len(pair)} shared "
                  "configurations. It is one design: the comparison below counts it once.", ""]
    return lines


def correlation_text(value: float) -> str:
    """A rank correlation with two decimals, '–' for NaN."""
    return "–" if math.isnan(value) else f"{value:.2f}"


# PART (B): our source's study per design
def near_time(study: optuna.Study) -> tuple:
    """The wall time (s) at which the best so far first came within NEAR of the study's final best value, and the
    number of the trial that brought it there."""
    ended = sorted(zip(time_points(study), completed(study.get_trials(deepcopy=False))), key=lambda pair: pair[0])
    final = max(value for (_, value), _ in ended)
    best = -math.inf
    for (seconds, value), trial in ended:
        best = max(best, value)
        if best >= final - NEAR * abs(final):
            return seconds, trial.number


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


def source_lines(entries: list, directory: str, common: int) -> list:
    """Part (b): its sampler and pruner, the chart of the best so far and, per study, its script, best configuration,
    re-evaluation, importances."""
    lines = ["## (b) Our source's study", "", f"Each study: {search_text(entries)}.", ""]
    run = [entry for entry in entries if entry.figures and entry.figures.best]
    if run:
        progress_chart(run, os.path.join(directory, CHARTS, "best_so_far.png"))
        lines += [f"![best so far]({CHARTS}/best_so_far.png)", "", "*Best so far* against the wall time, per design; "
                  "completed trials as dots.", ""]
    rows = []
    for entry in entries:
        best = entry.figures.best if entry.figures else None
        if best is None:
            rows.append([entry.label, script_text(entry, common),
                         "not run" if entry.study is None else "no trial completed", "–", "–", "–"])
            continue
        again = evaluation.read(os.path.join(directory, entry.folder))
        again = evaluation_text(again) if again and again.get("trial") == best.number else "not re-evaluated"
        rows.append([entry.label, script_text(entry, common), f"{number_text(best.value)} (trial {best.number})",
                     params_text(best.params), again, importance_text(entry.study)])
    header = ["design", "script", "best value", "best configuration", "re-evaluation", "importances (top 3)"]
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
    run = sorted(((*near_time(entry.study), entry) for entry in entries if entry.figures and entry.figures.best),
                 key=lambda near: near[0])
    if not run:
        return "Part (b): no study completed a trial."
    (seconds, number, first), rest = run[0], run[1:]
    others = [f"{entry.label} after {duration_text(s)}, {trial_text(n, entry)}" for s, n, entry in rest]
    return (f"Part (b): **{first.label}** first came within {NEAR:.0%} of its final best value "
            f"({number_text(first.figures.best.value)}) after {duration_text(seconds)} of wall time, "
            f"{trial_text(number, first)}" + (f" (then {listed(others)})" if others else "") + ".")


def trial_text(number: int, entry: Entry) -> str:
    """The trial that came near, and whether TPE drew it at random (its start-up trials, the same configurations in
    every study of the same seed and space)."""
    startup = entry.settings and entry.settings.sampler == "tpe" and number < TPE_STARTUP
    return f"at trial {number}" + (f", one of TPE's {TPE_STARTUP} random start-up trials" if startup else "")


def numbers_lines(plan: dict, entries: list, directory: str) -> list:
    """What the numbers are: exp10.json's machine, load, date, trials and env steps, each part's sampler and pruner,
    the flags every study shares, and the study folders."""
    steps = plan.get("total_timesteps", "–")
    folders = [f"{entry.label} (not run)" if entry.study is None else f"[{entry.label}]({study_link(directory, entry)})"
               for entry in entries]
    common = common_flags(entries)
    shared = next((entry.settings.script_flags for entry in entries if entry.settings), [])
    shared = f" Every study's script also takes `{' '.join(shared[len(shared) - common:])}`." if common else ""
    return [f"*The numbers:* {plan_machine(plan)}, load average {plan.get('load', '–')} at "
            f"the start, {plan.get('date', '–')}; {plan.get('trials', '–')} trials per study of "
            f"{number_text(steps) if isinstance(steps, int) else steps} env steps each; the objective is the mean "
            f"episodic return over the last 10 % of env steps. Part (a): {search_text(part(entries, 'a', False))}; "
            f"part (b): {search_text(part(entries, 'b', False))}.{shared} The studies: {', '.join(folders)}.", "",
            WALL_TIME, ""]


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
    common = common_flags(entries)
    lines += ["## (a) The cost of the same search", ""] + cost_lines(part(entries, "a", run=False), common)
    lines += configuration_lines(search, directory) + source_lines(part(entries, "b", run=False), directory, common)
    return write_markdown(directory, lines)


def main(argv: list | None = None) -> int:
    """`python -m report.search DIR`: writes exp10's REPORT.md."""
    return run_command(argv, "python -m report.search", __doc__.split("\n\n")[0],
                       f"exp10's folder (it holds {PLAN_FILE} and the study folders)", quiet(write_report))


if __name__ == "__main__":
    sys.exit(main())
