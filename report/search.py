"""exp10's report across its study folders: `python -m report.search DIR` writes DIR/REPORT.md and DIR/charts/ from
DIR/exp10.json (the machine, the load at the start, the date, the trials and env steps of every study, and the
studies: part, design label, folder, workers) and the study folders it lists.

Part (a) runs the same random search with every design: the cost of that search per design, and per configuration
(the sampler is seeded per trial number, so the same number is the same configuration) how far the designs' returns
agree, each design (script and flags) counted once: a study that differs from another only by its workers is the same
design. Part (b) runs our source's study per design: the best so far against wall time, the best configuration, its
re-evaluation and the parameters' importances. Each part names its sampler and pruner, and each study its script and
flags, from the study's own settings (study.json). The ratios of part (a) are to its fastest study, named. Wall time,
the best so far and the importances are report/study.py's.

With several study seeds (the repeats) or a part (p), the DQN population script's studies over the float fields, every
part gives its spread over the seeds. Each ratio is taken seed by seed to one baseline, named: the design of least
median wall time among those at one worker and their scripts' own flags (so that a ratio sets a framework and env
against a framework and env, not also against more envs or workers); a design whose wall times' range over the seeds
overlaps the baseline's is level with it (marked =), and the design that finishes first is named so only where its
range is apart from every other's. Part (b) marks TPE's random start-up trials and sets when each design came near its
best beside how often part (a)'s random search of the same design and seed comes near its own best: a difference in
that time inside the seeds' ranges is the draw's, not a result. Part (p) gives the cost of fixing the integer fields:
its best and the full search's are in-sample bests (one seed each, not rerun), set beside how far part (a)'s in-sample
bests of the same configurations spread across its designs."""
import math
import os
import statistics
import sys

import optuna
from matplotlib.figure import Figure

from report.folder import CHARTS, DPI, ratio, run_command, write_markdown
from report.machines import plan_machine
from report.palette import script_colors
from report.stats import level_with_first, ranges_apart
from report.studies import (Entry, configuration_values, load_entry, rank_correlation, read_plan, shared_values,
                            spread, study_link)
from report.study import (WALL_TIME, best_so_far, clock_unit, completed, draw_best, duration_text, evaluation_text,
                          importances, params_text, quiet, rate_text, time_points)
from report.text import listed, markdown_table, number_text, percent_text, speedup_text, spread_text
from search import evaluation
from search.space import DEFAULT_SPACES, script_defaults
from search.storage import TPE_STARTUP

PLAN_FILE = "exp10.json"
NEAR = 0.05  # part (b)'s answer: when a design's best so far first came within this fraction of its final best
SAMPLERS = {"random": "a random sampler seeded per trial number", "tpe": "TPE"}
PRUNERS = {"none": "no pruner", "hyperband": "Hyperband", "median": "the median pruner"}


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
    colors = script_colors({entry.label: entry.script for entry in entries})
    for k, entry in enumerate(entries):
        axes.scatter(means, [values[k] for values in shared.values()], s=18, color=colors[entry.label],
                     label=entry.label)
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
    colors = script_colors({entry.label: entry.script for entry in entries})
    for entry in entries:
        draw_best(axes, [(x / scale, value) for x, value in time_points(entry.study)], entry.label, colors[entry.label])
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


# REPEATS: several study seeds (each part's studies per seed), and the population of part (p)
def by_label(entries: list) -> dict:
    """{label: {study seed: entry}} in exp10.json's order: one design (or way) across the repeats."""
    groups = {}
    for entry in entries:
        groups.setdefault(entry.label, {})[entry.seed] = entry
    return groups


def wall(entry: Entry | None) -> float:
    return entry.figures.wall_s if entry and entry.figures else math.nan


def own_flags(entry: Entry, common: int) -> list:
    """The flags that set the study's script apart (the `common` last ones, which every study shares, left out)."""
    flags = entry.settings.script_flags if entry.settings else []
    return flags[:len(flags) - common]


def median_wall(group: dict) -> float:
    """A design's median wall time over the study seeds it ran (NaN where it ran none)."""
    walls = [wall(entry) for entry in group.values() if entry.figures]
    return statistics.median(walls) if walls else math.nan


def baseline_of(groups: dict, common: int = 0) -> str:
    """Every ratio's baseline: the design of least median wall time over the study seeds among those run at one worker
    and their script's own flags (a ratio to it sets framework and env against framework and env, not against more
    envs or workers too); where none ran so, the least of all."""
    ran = {label: group for label, group in groups.items() if not math.isnan(median_wall(group))}
    plain = [label for label, group in ran.items() if all(entry.workers == 1 and not own_flags(entry, common)
                                                          for entry in group.values() if entry.figures)]
    return min(plain or ran, key=lambda label: median_wall(ran[label]))


def seed_walls(group: dict) -> list:
    """A design's wall times, one per study seed it ran."""
    return [wall(entry) for entry in group.values() if entry.figures]


def level_with(groups: dict, base: str) -> set:
    """The designs level with the baseline: their wall times' ranges over the study seeds overlap its range."""
    return {label for label, group in groups.items() if label != base
            and ranges_apart(seed_walls(group), seed_walls(groups[base])) is False}


def first_text(walls: dict, base: str) -> str:
    """' **X** finishes the search first, in ...' where the design of least median wall time is not the baseline and
    its range over the seeds is apart from every other design's; '' otherwise ({label: wall seconds, seed by
    seed})."""
    ran = {label: values for label, values in walls.items() if values}
    lead = level_with_first(sorted(ran, key=lambda label: statistics.median(ran[label])),
                            lambda a, b: ranges_apart(ran[a], ran[b]))
    if lead.first == base or not lead.crowned:
        return ""
    return (f" **{lead.first}** finishes the search first, in {spread_text(ran[lead.first], duration_text)}, apart "
            "from every other design (ranges over the seeds).")


def seed_ratios(group: dict, base: dict) -> list:
    """A design's wall time over the baseline's, study seed by study seed (NaN where either did not run)."""
    return [ratio(wall(entry), wall(base.get(seed))) for seed, entry in group.items()]


def ratio_spread_text(group: dict, base: dict, level: bool) -> str:
    """A design's ratio to the baseline, seed by seed, as median (min–max), '=' after the median where level."""
    text = spread_text(seed_ratios(group, base), speedup_text)
    return text.replace("×", "×=", 1) if level and text != "–" else text


def repeat_cost_lines(groups: dict, base: str, common: int) -> list:
    """Part (a) over the study seeds: per design its wall time and its ratio to the baseline (named; = where level
    with it), each as median (min–max) over the seeds, trials per hour, outcomes and the best value."""
    rows, level = [], level_with(groups, base)
    for label, group in groups.items():
        run = [entry for entry in group.values() if entry.figures]
        if not run:
            rows.append([label, "–", "–", "not run", "–", "–", "–", "–"])
            continue
        rows.append([label, script_text(run[0], common), run[0].workers,
                     spread_text([wall(entry) for entry in group.values()], duration_text),
                     ratio_spread_text(group, groups[base], label in level),
                     spread_text([entry.figures.per_hour for entry in run], rate_text),
                     f"{sum(e.figures.completed for e in run)} / {sum(e.figures.failed for e in run)}",
                     spread_text([e.figures.best.value if e.figures.best else math.nan for e in run])])
    header = ["design", "script", "workers", "wall time", f"× {base}", "trials per hour", "completed / failed (all "
              "seeds)", "best value"]
    return markdown_table(header, rows) + [f"= level with {base}: their wall times' ranges over the study seeds "
                                           "overlap.", ""]


def agreement_rows(entries: list) -> list:
    """Per study seed: the configurations completed in every distinct design, their median spread across designs and
    the median rank correlation with the first design."""
    rows = []
    for seed in sorted({entry.seed for entry in entries}):
        designs = distinct([entry for entry in entries if entry.seed == seed])
        shared = shared_values(designs)
        if len(designs) < 2 or not shared:
            rows.append([seed, len(shared), len(designs), "–", "–"])
            continue
        spreads = [value for value in map(spread, shared.values()) if not math.isnan(value)]
        first = [values[0] for values in shared.values()]
        correlations = [rank_correlation(first, [values[k] for values in shared.values()])
                        for k in range(1, len(designs))]
        rows.append([seed, len(shared), len(designs), percent_text(statistics.median(spreads), sign="") if spreads
                     else "–", spread_text(correlations, correlation_text)])
    return rows


def retries(study: optuna.Study) -> int:
    """How many of the study's trials rerun a failed trial's configuration (user_attr retry_of)."""
    return sum("retry_of" in trial.user_attrs for trial in study.get_trials(deepcopy=False))


def shortfall_lines(entries: list, trials: int) -> list:
    """Why a study seed shares fewer configurations than its studies' trials: a failed trial's retry runs the failed
    configuration again within the study's trials, so that study never draws its last ones."""
    lines = []
    for seed in sorted({entry.seed for entry in entries}):
        designs = distinct([entry for entry in entries if entry.seed == seed])
        shared = len(shared_values(designs)) if len(designs) > 1 else trials
        retried = [f"{entry.label} {count}" for entry in designs if (count := retries(entry.study))]
        if shared < trials and retried:
            lines.append(f"Study seed {seed} shares {shared} of its {trials} configurations: a failed trial is retried "
                         f"on its own configuration within the study's {trials} trials, so that study never draws its "
                         f"last configuration (retried trials: {listed(retried)}).")
    return lines + [""] if lines else []


def startup_chart(entries: list, path: str):
    """Part (b): the best so far against wall time, a colour per design and a line style per study seed; TPE's random
    start-up trials as open circles, its own picks as dots."""
    longest = max(entry.figures.wall_s for entry in entries)
    scale, unit = clock_unit(longest)
    labels, seeds = list(dict.fromkeys(e.label for e in entries)), sorted({e.seed for e in entries})
    figure = Figure(figsize=(7.5, 4.5), layout="constrained")
    axes = figure.subplots()
    colors = script_colors({entry.label: entry.script for entry in entries})
    for entry in entries:
        color, style = colors[entry.label], ("-", "--", ":", "-.")[seeds.index(entry.seed) % 4]
        points = [(x / scale, value, trial.number < TPE_STARTUP) for (x, value), trial in
                  zip(time_points(entry.study), completed(entry.study.get_trials(deepcopy=False)))]
        curve = best_so_far([(x, value) for x, value, _ in points])
        axes.step([x for x, _ in curve], [y for _, y in curve], where="post", color=color, linestyle=style,
                  label=f"{entry.label}, seed {entry.seed}")
        for startup, face in ((True, "none"), (False, color)):
            chosen = [(x, value) for x, value, first in points if first == startup]
            axes.scatter([x for x, _ in chosen], [y for _, y in chosen], s=16, facecolors=face, edgecolors=color)
    axes.set_xlabel(f"wall time ({unit}): time at least one trial ran")
    axes.set_ylabel(f"best so far (open: TPE's {TPE_STARTUP} random start-up trials)")
    axes.legend(fontsize="x-small", loc="lower right")
    figure.savefig(path, dpi=DPI)


def repeat_source_lines(entries: list, directory: str, common: int) -> list:
    """Part (b) over the study seeds: the chart, and per design and seed its best, when it came within NEAR of it
    (and whether TPE drew that trial at random), its re-evaluation and importances."""
    lines = ["## (b) Our source's study, per study seed", "", f"Each study: {search_text(entries)}.", ""]
    run = [entry for entry in entries if entry.figures and entry.figures.best]
    if run:
        startup_chart(run, os.path.join(directory, CHARTS, "best_so_far.png"))
        lines += [f"![best so far]({CHARTS}/best_so_far.png)", "", "*Best so far* against the wall time, per design "
                  f"and study seed; TPE's {TPE_STARTUP} random start-up trials as open circles.", ""]
    rows = []
    for entry in entries:
        best = entry.figures.best if entry.figures else None
        if best is None:
            rows.append([entry.label, entry.seed, "not run" if entry.study is None else "no trial completed", "–", "–",
                         "–"])
            continue
        seconds, number = near_time(entry.study)
        again = evaluation.read(os.path.join(directory, entry.folder))
        again = evaluation_text(again) if again and again.get("trial") == best.number else "not re-evaluated"
        rows.append([entry.label, entry.seed, f"{number_text(best.value)} (trial {best.number})",
                     f"{duration_text(seconds)}, {trial_text(number, entry)}", again, importance_text(entry.study)])
    header = ["design", "study seed", "best value", f"within {NEAR:.0%} of it after", "re-evaluation",
              "importances (top 3)"]
    return lines + markdown_table(header, rows)


def near_counts(study: optuna.Study) -> tuple:
    """How many of the study's configurations came within NEAR of its best value: (that count over the completed
    configurations, how many of the first TPE_STARTUP configurations did)."""
    values = configuration_values(study)
    best = max(values.values())
    near = [number for number, value in values.items() if value >= best - NEAR * abs(best)]
    return len(near) / len(values), sum(number < TPE_STARTUP for number in near)


def random_rate_text(entries: list, search: list) -> str:
    """How often part (a)'s random search of the same design and seed as part (b)'s studies came within NEAR of its
    own best: the range of the fraction of its configurations, and of the count among its first TPE_STARTUP; '' where
    no part (a) study matches."""
    twins = [other for entry in entries for other in search if other.figures and other.figures.best
             and other.seed == entry.seed and design(other) and design(other) == design(entry)]
    if not twins:
        return ""
    counts = [near_counts(twin.study) for twin in twins]
    fractions, firsts = [fraction for fraction, _ in counts], [first for _, first in counts]

    def span(low, high, text):
        return text(low) if low == high else f"{text(low)}–{text(high)}"

    def percent(value):
        return percent_text(value, sign="")
    return (f" In part (a)'s random search of the same designs and seeds, "
            f"{span(min(fractions), max(fractions), percent)} of the configurations, "
            f"and {span(min(firsts), max(firsts), str)} of the first {TPE_STARTUP}, came within {NEAR:.0%} of their "
            f"study's best: one random draw in {span(1 / max(fractions), 1 / min(fractions), number_text)} gets there, "
            "on average.")


def repeat_source_answer(entries: list, search: list | None = None) -> str:
    """Part (b) over the seeds: per design, the median time to within NEAR of its best, and in how many seeds the
    trial that got there was one of TPE's random start-up trials; beside it, how often part (a)'s random search of the
    same design and seed came near its own best; and whether the designs' times are apart (ranges over the seeds) or
    level, when a difference is the draw's."""
    texts, times = [], {}
    run = [e for e in entries if e.figures and e.figures.best]
    for label, group in by_label(run).items():
        near = [near_time(entry.study) for entry in group.values()]
        startup = sum(number < TPE_STARTUP for _, number in near)
        times[label] = [seconds for seconds, _ in near]
        texts.append(f"{label} {spread_text(times[label], duration_text)}, at a start-up trial in {startup} of "
                     f"{len(near)} seeds")
    if not texts:
        return "Part (b): no study completed a trial."
    text = (f"Part (b), TPE + Hyperband: the wall time until each design's best so far came within {NEAR:.0%} of its "
            f"final best: {'; '.join(texts)}.{random_rate_text(run, search or [])}")
    if len(times) < 2:
        return text
    lead = level_with_first(sorted(times, key=lambda label: statistics.median(times[label])),
                            lambda a, b: ranges_apart(times[a], times[b]))
    if lead.crowned:
        return text + (f" Their times are apart (ranges over the seeds): {lead.first} came near first in every "
                       "seed's range.")
    return text + (" Their times are level (ranges over the seeds overlap): a difference between them is the draw's, "
                   "not a result.")


def repeat_cost_answer(groups: dict, base: str, common: int) -> str:
    """Part (a) over the seeds: the baseline (why it is) and its wall time, the designs level with it and the others,
    each with its ratio to it seed by seed, then the design that finishes first where it is another, apart from all."""
    level = level_with(groups, base)
    ran = {label: group for label, group in groups.items() if seed_walls(group)}
    ratios = {label: f"{label} {spread_text(seed_ratios(group, groups[base]), speedup_text)}"
              for label, group in ran.items() if label != base}
    plain = all(entry.workers == 1 and not own_flags(entry, common) for entry in groups[base].values()
                if entry.figures)
    why = ("the fastest of the designs at one worker and their scripts' own flags" if plain else
           "the fastest design (none ran at one worker and its script's own flags)")
    text = (f"Part (a): every ratio is to **{base}**, {why}, "
            f"{spread_text(seed_walls(groups[base]), duration_text)}, seed by seed.")
    if level:
        text += (" Level with it (their wall times' ranges over the seeds overlap): "
                 f"{listed([ratios[label] for label in ratios if label in level])}.")
    others = [ratios[label] for label in ratios if label not in level]
    if others:
        text += f" The others take {listed(others)} its time."
    return text + first_text({label: seed_walls(group) for label, group in ran.items()}, base)


def population_lines(entries: list, groups: dict, base: str, search: list) -> tuple:
    """Part (p): the population's cost against the baseline and its best against the full-space search of its own
    framework's trials (Flax + JAX env, same seed), both in-sample bests set beside part (a)'s spread of them across
    designs (`search`: part (a)'s studies); the answer bullet and the section."""
    processes = next((groups[label] for label in groups if "Flax + JAX env" == label), {})
    rows, gaps, gaps_by_seed = [], [], {}
    for entry in entries:
        if not entry.figures or not entry.figures.best:
            rows.append([entry.label, entry.seed, "not run", "–", "–", "–"])
            continue
        other = processes.get(entry.seed)
        full = other.figures.best.value if other and other.figures and other.figures.best else math.nan
        gaps.append(entry.figures.best.value - full)
        if not math.isnan(full):
            gaps_by_seed[entry.seed] = gaps[-1]
        rows.append([entry.label, entry.seed, duration_text(wall(entry)),
                     speedup_text(ratio(wall(entry), wall(groups[base].get(entry.seed)))),
                     number_text(entry.figures.best.value), number_text(full)])
    fixed = fixed_fields(entries)
    header = ["way", "study seed", "wall time", f"× {base}", "best value (float fields)",
              "Flax + JAX env's best (all fields)"]
    script = next((f"`{entry.settings.script}`" for entry in entries if entry.settings), "the population script")
    floats = ", ".join(name for name, entry in DEFAULT_SPACES["dqn"].items() if entry["type"] == "float")
    lines = ["## (p) The population: the float fields only", "", f"Each study: {search_text(entries)}; {script} "
             f"trains a process's agents in one compiled call, each with its own float values ({floats}); the integer "
             f"fields are one value a process, fixed at the script's defaults ({fixed}).", ""]
    lines += markdown_table(header, rows)
    walls = spread_text([wall(entry) for entry in entries], duration_text)
    answer = (f"Part (p): {entries[0].label} searched the float fields in {walls}; with the integer fields fixed at "
              f"the script's defaults ({fixed}) its best value less Flax + JAX env's (all fields), seed by seed: "
              f"{spread_text(gaps)}. Both are in-sample bests, the largest of one-seed values, none rerun on fresh "
              f"seeds;{best_spread_text(entries, gaps_by_seed, search)}")
    return answer, lines


def best_spread_text(entries: list, gaps: dict, search: list) -> str:
    """How far part (a)'s in-sample bests (the same float values, every field searched) spread across its distinct
    designs in each seed of the population's gaps ({seed: gap}), and whether each gap is beyond that seed's spread."""
    spreads = {}
    for seed in gaps:
        bests = [entry.figures.best.value for entry in distinct([e for e in search if e.seed == seed])
                 if entry.figures and entry.figures.best]
        if len(bests) > 1:
            spreads[seed] = max(bests) - min(bests)
    if not spreads:
        return " no other design's in-sample best to set beside them."
    values = sorted(spreads.values())
    where = (f"seed {next(iter(spreads))}" if len(spreads) == 1 else "seed by seed")
    size = number_text(values[0]) if len(values) == 1 else f"{number_text(values[0])}–{number_text(values[-1])}"
    beyond = sum(abs(gaps[seed]) > spreads[seed] for seed in spreads)
    verdict = ("the gap is beyond that spread in every seed" if beyond == len(spreads) else
               "the gap is inside that spread, not a result" if not beyond else
               f"the gap is beyond that spread in {beyond} of {len(spreads)} seeds")
    return (f" part (a)'s in-sample bests of the same float values spread {size} across its designs ({where}): "
            f"{verdict}.")


def fixed_fields(entries: list) -> str:
    """The integer fields of the DQN space with the population script's defaults, as `name=value`."""
    script = next((entry.settings.script for entry in entries if entry.settings), None)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    defaults = script_defaults(os.path.join(root, script)) if script else {}
    return ", ".join(f"{name}={defaults.get(name, '?')}" for name, entry in DEFAULT_SPACES["dqn"].items()
                     if entry["type"] != "float")


def repeat_numbers_lines(plan: dict, entries: list, directory: str) -> list:
    """The conditions, and every invocation of the command set with its date, commit and load."""
    steps = plan.get("total_timesteps", "–")
    seeds = sorted({entry.seed for entry in entries})
    invocations = plan.get("invocations", [])
    cpus = [plan_machine(item if "machine" in item else plan) for item in invocations]
    rows = [[f"`{item['argv']}`", item["date"], item["commit"], item["load"], cpu] for item, cpu in zip(invocations, cpus)]
    mixed = [f"**Mixed machines:** the invocations ran on {' and '.join(sorted(set(cpus)))}; a study that one "
             "invocation began and another resumed mixes their times. Every ratio is taken within a study seed; where "
             "the seeds ran on different machines, their spread includes the machines' difference.", ""
             ] if len(set(cpus)) > 1 else []
    folders = [f"[{entry.folder}]({study_link(directory, entry)})" for entry in entries if entry.study is not None]
    return [f"*The numbers:* {plan_machine(plan)}, 2 cores; {plan.get('trials', '–')} trials per study of "
            f"{number_text(steps) if isinstance(steps, int) else steps} env steps each, study seeds "
            f"{', '.join(map(str, seeds))} (the samplers' seeds: the repeats; the designs' order turns from seed to "
            "seed). The objective is the mean episodic return over the last 10 % of env steps. Spread: median "
            "(min–max) over the study seeds; every ratio is to one baseline, the design of least median wall time "
            "in part (a), seed by seed.", "", WALL_TIME, ""] + markdown_table(
        ["invocation", "date", "commit", "load average at its start", "CPU"], rows) + mixed + [
        f"The studies: {', '.join(folders)}.", ""]


def repeats_report(plan: dict, entries: list, directory: str) -> list:
    """The report of several study seeds or with a population: every part's spread over the seeds."""
    common = common_flags(entries)
    search = part(entries, "a", run=False)
    groups = by_label(search)
    base = baseline_of(groups, common) if part(entries, "a") else None
    answer = ["- Part (a): no study was run."]
    if base:
        answer = [f"- {repeat_cost_answer(groups, base, common)}"]
    answer.append(f"- {repeat_source_answer(part(entries, 'b'), part(entries, 'a'))}")
    population = part(entries, "p", run=False)
    section = []
    if population and base:
        text, section = population_lines(population, groups, base, part(entries, "a"))
        answer.append(f"- {text}")
    lines = ["# exp10: the same hyperparameter search by each design", "", "## The answer", "", *answer, ""]
    lines += repeat_numbers_lines(plan, entries, directory)
    lines += ["## (a) The cost of the same search, over the study seeds", ""]
    if base:
        lines += repeat_cost_lines(groups, base, common) + ["### Per configuration, the returns across designs", ""]
        lines += markdown_table(["study seed", "configurations completed in every distinct design", "distinct designs",
                                 "median spread (max − min over the mean absolute value)",
                                 "rank correlation with the first design"], agreement_rows(search))
        lines += ["A study that differs from another only by its workers is the same design: counted once.", ""]
        lines += shortfall_lines(part(entries, "a"), plan.get("trials", 0))
    return lines + repeat_source_lines(part(entries, "b", run=False), directory, common) + section


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


def write_report(directory: str) -> str:
    """Writes DIR/REPORT.md and DIR/charts/ from DIR/exp10.json and its study folders; returns REPORT.md's path."""
    plan = read_plan(directory, PLAN_FILE)
    entries = [load_entry(directory, item) for item in plan["studies"]]
    os.makedirs(os.path.join(directory, CHARTS), exist_ok=True)
    if len({entry.seed for entry in entries}) > 1 or part(entries, "p", run=False):
        return write_markdown(directory, repeats_report(plan, entries, directory))
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
