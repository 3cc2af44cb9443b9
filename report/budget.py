"""exp13's report: `python -m report.budget DIR` writes DIR/REPORT.md and DIR/charts/ from DIR/exp13.json (the
machine, every invocation with its date, commit and load, and the cells: env, trial length, study seed, minutes, the
four studies) and the study folders and reruns it lists.

Per env: the same minutes spent four ways (random populations, TPE + Hyperband trials, populations of K seeds per
trial, PBT); each way's best trial among those ended within the minutes, chosen by its objective and scored by its
rerun on fresh seeds (a PBT agent: the replay of its lineage). The answer: which way gives the best agent for the
minutes, and by how much, over the study seeds (the independent unit, not the reruns of one pick) and, against the first
way, the difference paired by study seed and fresh seed: identical picks said as the same configuration. A difference
is told apart only over enough study seeds to tell one at 95 % (report/cells.py's can_tell: 6 or more), by a bootstrap
interval over them; over fewer, its direction is given study seed by study seed. No winner in bold inside overlapping
intervals, nor over too few study seeds."""
import itertools
import math
import os
import statistics
import sys
from typing import NamedTuple

import numpy as np

from report.cells import (TELL_RULE, Cell, best_by, best_chart, can_tell, direction_text, grouped, read_cells,
                          seeds_text, tpe_drawn, untold_text)
from report.folder import CHARTS, run_command, write_markdown
from report.machines import plan_machine
from report.study import OBJECTIVE, WALL_TIME, busy_seconds, completed, interval, merged, quiet
from report.text import markdown_table, number_text, spread_text
from search.storage import TPE_STARTUP

PLAN_FILE = "exp13.json"
WAYS = ("population", "pruned", "seeds", "pbt")  # the tables' order, whatever order a cell ran them in
LEVEL = 0.95  # the bootstrap intervals' coverage
EXACT_UNITS = 8  # up to this many study seeds, the bootstrap distribution is enumerated, not sampled


def rerun_values(cell: Cell, way: str) -> dict:
    """{(study seed, fresh seed): value} of the rerun of the way's pick in the cell (none where it had no pick, a
    rerun seed without a value left out)."""
    pick = pick_config(cell, way)
    if pick is None:
        return {}
    values = cell.score["configs"][pick]["values"]
    return {(cell.seed, seed): value for seed, value in zip(cell.score["seeds"], values) if value is not None}


def pick_config(cell: Cell, way: str) -> int | None:
    """The index in score.json's configurations of the way's pick in the cell (the same index: the same
    configuration, rerun once), None where it had none."""
    pick = (cell.score or {}).get("picks", {}).get(way, {}).get("equal")
    return None if pick is None else pick["config"]


def seed_means(cells: list, way: str) -> dict:
    """{study seed: the mean of its pick's rerun over the fresh seeds}: the independent unit's values (the reruns of
    one pick are not independent samples of the way: its pick varies by study seed)."""
    return {cell.seed: statistics.fmean(values.values()) for cell in cells if (values := rerun_values(cell, way))}


# THE BOOTSTRAP: over the independent unit, the study seed
def unit_interval(values: list, level: float = LEVEL) -> tuple:
    """The percentile bootstrap's interval of the mean of independent units' values: (low, high), the mean itself
    for one value (or all alike), NaN for none. Up to EXACT_UNITS units the bootstrap distribution is enumerated
    (every resample with its multinomial probability), so no random seed moves a bound; beyond, 20,000 resamples of a
    seeded generator. With 3 units or fewer its 95 % interval is their range."""
    if not values:
        return math.nan, math.nan
    if len(set(values)) == 1:
        return values[0], values[0]
    n = len(values)
    if n <= EXACT_UNITS:
        draws = []
        for resample in itertools.combinations_with_replacement(range(n), n):
            counts = [resample.count(k) for k in set(resample)]
            weight = math.factorial(n) / math.prod(math.factorial(c) for c in counts) / n ** n
            draws.append((statistics.fmean(values[k] for k in resample), weight))
    else:
        generator = np.random.default_rng(0)
        means = np.asarray(values)[generator.integers(0, n, size=(20_000, n))].mean(axis=1)
        draws = [(float(mean), 1 / len(means)) for mean in means]
    draws.sort()
    tail, total, low, high = (1 - level) / 2, 0.0, None, None
    for mean, weight in draws:
        total += weight
        if low is None and total >= tail - 1e-12:
            low = mean
        if high is None and total >= 1 - tail - 1e-12:
            high = mean
    return low, high


def bounds_text(values: list) -> str:
    """'[95 % interval low, high]': the bootstrap interval of the mean over enough study seeds to tell a difference
    (can_tell), else '[range low, high]': their range, which is no 95 % interval."""
    if can_tell(len(values)):
        low, high = unit_interval(values)
        return f"[{LEVEL * 100:g} % interval {number_text(low)}, {number_text(high)}]"
    return f"[range {number_text(min(values))}, {number_text(max(values))}]"


def mean_text(cells: list, way: str) -> str:
    """'mean [range low, high]' or 'mean [95 % interval low, high]' (bounds_text) of the study seeds' rerun means;
    '–' for no rerun."""
    values = list(seed_means(cells, way).values())
    if not values:
        return "–"
    return f"{number_text(statistics.fmean(values))} {bounds_text(values)}"


class Difference(NamedTuple):
    """The first way's rerun minus another's, study seed by study seed."""
    same: list  # the study seeds where both picked the same configuration: 0 by construction, no evidence of a tie
    apart: dict  # {study seed: the mean over its fresh seeds of the paired difference} where the picks differ
    mean: float  # over those study seeds
    low: float  # their bootstrap interval
    high: float

    @property
    def told_apart(self) -> bool:
        """Whether the interval over the study seeds whose picks differ excludes 0, and they are enough to tell a
        difference at 95 % (can_tell: 6 or more; fewer all on one side happen by chance 2 / 2^n of the time)."""
        return can_tell(len(self.apart)) and (self.low > 0 or self.high < 0)


def difference(cells: list, best: str, way: str) -> Difference:
    """The best way's rerun minus the way's, per study seed: the seeds where both picked the same configuration, and
    elsewhere the mean over the fresh seeds of the differences paired by fresh seed, with the bootstrap interval of
    their mean over those study seeds (NaN where none)."""
    same, apart = [], {}
    for cell in cells:
        mine, theirs = pick_config(cell, best), pick_config(cell, way)
        if mine is None or theirs is None:
            continue
        if mine == theirs:
            same.append(cell.seed)
            continue
        a, b = rerun_values(cell, best), rerun_values(cell, way)
        pairs = [a[key] - b[key] for key in a if key in b]
        if pairs:
            apart[cell.seed] = statistics.fmean(pairs)
    mean = statistics.fmean(apart.values()) if apart else math.nan
    return Difference(same, apart, mean, *unit_interval(list(apart.values())))


def less_text(mean: float) -> str:
    return f"{number_text(mean)} less" if mean >= 0 else f"{number_text(-mean)} more"


def difference_text(found: Difference, cells: list) -> str:
    """Over too few study seeds to tell a difference (can_tell), its direction seed by seed: 'the same configuration
    in study seed 2; 68.5 less on average: below the first in each of the 2 study seeds, by 49.3 to 91; 2 study seeds
    cannot tell a difference at 95 %'; over enough, '3.1 less [95 % interval 0.5, 6] over study seeds 1, ... and 6:
    told apart'; 'no rerun' where no study seed pairs them."""
    parts = []
    if found.same:
        every = len(found.same) == len(cells)
        parts.append("the same configuration in every study seed" if every else
                     f"the same configuration in {seeds_text(found.same)}")
    seeds = list(found.apart)
    if seeds and not can_tell(len(seeds)):
        average = f"{less_text(found.mean)} on average: " if len(seeds) > 1 else ""
        parts += [average + direction_text(found.apart), untold_text(len(seeds))]
    elif seeds:
        parts.append(f"{less_text(found.mean)} [{LEVEL * 100:g} % interval {number_text(found.low)}, "
                     f"{number_text(found.high)}] over {seeds_text(seeds)}: "
                     f"{'told apart' if found.told_apart else 'not told apart'}")
    return "; ".join(parts) or "no rerun"


def way_keys(cells: list) -> list:
    found = {way for cell in cells for way in cell.studies}
    return [way for way in WAYS if way in found]


def ranked(cells: list) -> list:
    """The ways by the mean of their study seeds' rerun means, the highest first (a way with no rerun last)."""
    means = {way: statistics.fmean(seed_means(cells, way).values()) if seed_means(cells, way) else -math.inf
             for way in way_keys(cells)}
    return sorted(means, key=means.get, reverse=True)


def finished_within(cell: Cell, way: str) -> int:
    """The trials the way completed within the cell's minutes (on its wall-time clock)."""
    moment = cell.score["equal_time_s"] if cell.score else math.inf
    trials = cell.studies[way].get_trials(deepcopy=False)
    spans = merged(trials)
    return sum(busy_seconds(spans, interval(trial)[1]) <= moment + 1e-9 for trial in completed(trials))


def way_rows(cells: list, labels: dict) -> list:
    order = ranked(cells)
    rows = []
    for way in order:
        moment = [cell.score["equal_time_s"] if cell.score else math.inf for cell in cells]
        bests = [best_by(cell.studies[way], at) for cell, at in zip(cells, moment)]
        means = seed_means(cells, way)
        against = "the first (the highest mean)" if way == order[0] else (
            difference_text(difference(cells, order[0], way), cells) if means else "–")
        rows.append([labels[way], spread_text([float(finished_within(cell, way)) for cell in cells]),
                     spread_text([best.value if best else math.nan for best in bests]),
                     spread_text([means.get(cell.seed, math.nan) for cell in cells]), mean_text(cells, way), against])
    return rows


def answer_text(env: str, cells: list, labels: dict) -> str:
    """The way whose pick reruns highest, in bold only where every other way's difference is told apart over its
    study seeds (none of them the same configuration, enough of them to tell a difference at 95 %): no winner inside
    overlapping intervals, nor over too few study seeds."""
    order = ranked(cells)
    minutes, length = cells[0].score["equal_time_s"] / 60 if cells[0].score else math.nan, cells[0].length
    compared = [way for way in order if seed_means(cells, way)]
    head = f"{env}, {minutes:g} min a way on 2 cores, {length:,} iterations a trial, {len(cells)} study seeds: "
    if not compared:
        return head + "no way had a pick within the minutes"
    best, others = compared[0], []
    found = {way: difference(cells, best, way) for way in compared[1:]}
    for way in order[1:]:
        others.append(f"{labels[way]} {mean_text(cells, way)}, "
                      + (difference_text(found[way], cells) if way in found else "no rerun"))
    if len(compared) == 1:
        lead = f"only {labels[best]} had a pick within the minutes, its rerun {mean_text(cells, best)}"
    elif all(item.told_apart and not item.same for item in found.values()):
        lead = f"**{labels[best]}** gave the best agent, its rerun {mean_text(cells, best)}"
    else:
        why = "" if can_tell(len(cells)) else f" ({untold_text(len(cells))})"
        lead = (f"no way's pick is told apart as the best{why}; the highest mean: {labels[best]} "
                f"{mean_text(cells, best)}")
    return head + "; ".join([lead, *others])


def startup_lines(plan: dict, cells: list, labels: dict) -> list:
    """For a way that TPE sampled: how many of each study's trials TPE drew itself (it draws at random until
    TPE_STARTUP trials have finished), and the study seeds whose pick was one of the random draws."""
    samplers = {entry["way"]: entry.get("sampler") for item in plan["cells"] for entry in item["studies"]}
    lines = []
    for way in way_keys(cells):
        if samplers.get(way) != "tpe":
            continue
        drawn = {cell.seed: tpe_drawn(cell.studies[way]) for cell in cells}
        counts = [float(len(cell.studies[way].get_trials(deepcopy=False))) for cell in cells]
        random_picks = [cell.seed for cell in cells if (pick := (cell.score or {}).get("picks", {}).get(way, {})
                                                        .get("equal")) and pick["trial"] not in drawn[cell.seed]]
        own = spread_text([float(len(numbers)) for numbers in drawn.values()])
        text = (f"*{labels[way]}:* TPE draws at random until {TPE_STARTUP} of a study's trials have finished "
                f"(completed or pruned: Optuna's start-up); here TPE drew {own} of the {spread_text(counts)} trials of "
                "a study itself, the others at random")
        if not any(drawn.values()):
            text += ": random search with Hyperband"
        elif random_picks:
            text += f"; the pick was one of the random draws in {seeds_text(random_picks)}"
        lines += [text + ".", ""]
    return lines


def invocation_lines(plan: dict) -> list:
    rows = [[f"`{' '.join(item['argv'])}`", item["date"], item["commit"], item["load"], f"{item['minutes']:g}",
             f"`{item['workload']}`", item["score_seeds"]] for item in plan["invocations"]]
    return markdown_table(["invocation", "date", "commit", "load average at its start", "minutes a way", "workload",
                           "rerun seeds"], rows)


def numbers_lines(plan: dict) -> list:
    scripts = {study["way"]: f"`{study['script']}`" for cell in plan["cells"] for study in cell["studies"]
               if "script" in study}
    return [f"*The numbers:* {plan_machine(plan)}; 2 cores; every way uses both (two processes side by side). Each "
            "cell (env, study seed) ran four tune.py studies one after another, in an order that turns from cell to "
            "cell, each given the same minutes (`tune.py --minutes`: nothing starts after them, and the study is "
            "stopped a few seconds after), then the reruns. Study seed s seeds the samplers, and trial n runs with "
            "seed s + n. The space: the PPO space's float fields (docs/tuning.md; the others at the scripts' "
            "defaults). The objective: " + OBJECTIVE + " (the seeds way: the mean over its K seeds; a PBT trial: its "
            "agent at the end, after its copies). A way's pick: its best trial among those ended within the minutes. "
            f"The rerun: the pick trained again on the cell's fresh seeds, by {scripts.get('population', '–')} (a "
            f"configuration) or as the replay of its lineage by {scripts.get('pbt', '–')} (a PBT agent: its values "
            "iteration by iteration, no copies). The independent unit is the study seed (a way's pick varies by study "
            "seed; the reruns of one pick on the fresh seeds are not independent samples of the way). A difference "
            "is paired by study seed and fresh seed; where both ways picked the same configuration in a study seed "
            "it is 0 by construction, said as *the same configuration* and left out. The rule: " + TELL_RULE + ". "
            "Over enough study seeds, the intervals are 95 % bootstrap (percentile) over them (a resample draws "
            "study seeds, each with its fresh seeds' mean), a difference's over the study seeds whose picks differ: "
            "told apart where it excludes 0; over fewer, the brackets give the range of the study seeds' means, no "
            "95 % interval. A way is in bold only where it is told apart from every other way. Spread: median "
            "(min–max) over the study seeds.", "",
            WALL_TIME, "", *invocation_lines(plan)]


def env_lines(env: str, cells: list, labels: dict, directory: str, plan: dict) -> list:
    slug = env.lower().replace("-", "_")
    best_chart({cells[0].length: cells}, labels, os.path.join(directory, CHARTS, f"{slug}_best.png"))
    kind = "95 % interval" if can_tell(len(cells)) else "range"
    header = ["way", "trials completed within the minutes", "best objective within them (its own seed)",
              "its pick's rerun (mean per study seed)", f"rerun: mean over the study seeds [{kind}]",
              "the first's rerun minus this one's, per study seed (paired by fresh seed)"
              + (" [95 % interval]" if can_tell(len(cells)) else "")]
    return [f"## {env}", "", f"Study seeds {', '.join(str(cell.seed) for cell in cells)}.", "",
            f"![best against wall time]({CHARTS}/{slug}_best.png)", "",
            "*Above:* the best objective so far (each trial's own seed) against wall time, per way and study seed. "
            "*Below, on axes of their own:* each way's pick rerun on the fresh seeds (the mean over them), one marker "
            "per study seed, side by side.", "", *startup_lines(plan, cells, labels)] + markdown_table(
                header, way_rows(cells, labels))


def write_report(directory: str) -> str:
    """Writes DIR/REPORT.md and DIR/charts/ from DIR/exp13.json and its studies; returns REPORT.md's path."""
    plan, cells, labels = read_cells(directory, PLAN_FILE)
    envs = {env: [cell for group in lengths.values() for cell in group] for env, lengths in grouped(cells).items()}
    lines = ["# exp13: the same wall-clock budget, four ways", "", "## The answer", ""]
    lines += [f"- {answer_text(env, env_cells, labels)}." for env, env_cells in envs.items()]
    lines += ["", *numbers_lines(plan)]
    for env, env_cells in envs.items():
        lines += env_lines(env, env_cells, labels, directory, plan)
    return write_markdown(directory, lines)


def main(argv: list | None = None) -> int:
    """`python -m report.budget DIR`: writes exp13's REPORT.md."""
    return run_command(argv, "python -m report.budget", __doc__.split("\n\n")[0],
                       f"exp13's folder (it holds {PLAN_FILE} and the study folders)", quiet(write_report))


if __name__ == "__main__":
    sys.exit(main())
