"""exp15's report: `python -m report.lengths DIR` writes DIR/REPORT.md and DIR/charts/ from DIR/exp15.json (the
machine, every invocation with its date, commit and load, and the cells: env, trial length, study seed, the three
studies) and the study folders and reruns it lists.

Per env and trial length, over the study seeds: each way's wall time (trials in processes against populations: the
crossover, measured where it lies among the lengths run, never extrapolated); and at equal wall time (the fastest
way's), each way's best configuration so far, chosen by its objective and scored by its rerun on fresh seeds; the ways
told apart only over enough study seeds to tell a difference at 95 % (report/cells.py's can_tell: 6 or more), else
their direction given study seed by study seed."""
import math
import os
import statistics
import sys

from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, ScalarFormatter

from report.cells import (TELL_RULE, Cell, best_by, best_chart, can_tell, direction_text, equal_time, grouped,
                          read_cells, rerun_value, seeds_text, untold_text, wall, way_keys, ways_best)
from report.folder import CHARTS, DPI, ratio, run_command, write_markdown
from report.machines import plan_machine
from report.palette import other_colors
from report.stats import level_with_first, ranges_apart
from report.study import OBJECTIVE, WALL_TIME, duration_text, figures, quiet
from report.text import listed, markdown_table, number_text, speedup_text, spread_text
from search.storage import TPE_STARTUP

PLAN_FILE = "exp15.json"
# the highest return an env's episode can give (CartPole-v1: 500 steps of reward 1, then truncated): picks that rerun
# within CEILING_MARGIN of it are level by construction, not by what the ways found
CEILINGS = {"CartPole-v1": 500.0}
CEILING_MARGIN = 0.01


# ONE CLOCK: the equal time and each way's best by it, on the clock the cells are loaded with (report/cells.py)
def on_one_clock(cell: Cell) -> Cell:
    """The cell with its equal time and its picks by it taken on the one clock of its studies, each pick's rerun
    found by its configuration (config None where that configuration was not rerun): score.json's equal time was
    taken on the run's clock, which may have been another."""
    if cell.score is None:
        return cell
    moment = equal_time(cell.studies.values())
    picks = {}
    for way, found in ways_best(cell.studies, moment).items():
        picks[way] = {}
        for at, trial in found.items():
            config = next((k for k, entry in enumerate(cell.score["configs"]) if trial is not None
                           and entry.get("params") == trial.params), None)
            picks[way][at] = None if trial is None else {"trial": trial.number, "config": config}
    return cell._replace(score={**cell.score, "equal_time_s": moment, "picks": picks})


def equal_pick(cell: Cell, way: str):
    return ((cell.score or {}).get("picks", {}).get(way) or {}).get("equal")


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
def by_equal_time_text(cells: list, way: str) -> str:
    """The spread of the way's reruns of its best by the equal time, or that it had finished nothing by then."""
    empty = [cell.seed for cell in cells if equal_pick(cell, way) is None]
    if len(empty) == len(cells):
        return "nothing finished by then"
    text = spread_text([rerun_value(cell, way, "equal") for cell in cells])
    return text + (f"; nothing finished by then in {seeds_text(empty)}" if empty else "")


def equal_rows(lengths: dict, labels: dict) -> list:
    rows = []
    for length, cells in sorted(lengths.items()):
        for way in way_keys(cells):
            rows.append([f"{length:,}", labels[way], spread_text([cell.score["equal_time_s"] if cell.score else math.nan
                                                           for cell in cells], duration_text),
                         by_equal_time_text(cells, way),
                         spread_text([rerun_value(cell, way, "end") for cell in cells]),
                         spread_text([best_value(cell, way) for cell in cells])])
    return rows


def best_value(cell: Cell, way: str) -> float:
    best = best_by(cell.studies[way])
    return math.nan if best is None else best.value


def fastest_text(cells: list, labels: dict) -> str:
    """Whose end the equal time is: the fastest way's, named where it is the same way in every study seed."""
    fastest = {min(cell.studies, key=lambda way: wall(cell, way)) for cell in cells}
    return f"the end of {labels[fastest.pop()]}" if len(fastest) == 1 else "the end of each cell's fastest way"


def same_text(cells: list, ways: list, labels: dict) -> str:
    """The pairs of ways that picked the same configuration by the equal time, and in which study seeds."""
    parts = []
    for n, first in enumerate(ways):
        for other in ways[n + 1:]:
            seeds = [cell.seed for cell in cells if (a := equal_pick(cell, first)) and (b := equal_pick(cell, other))
                     and a["config"] is not None and a["config"] == b["config"]]
            if seeds:
                every = "every study seed" if len(seeds) == len(cells) else seeds_text(seeds)
                parts.append(f"{labels[first]} and {labels[other]} picked the same configuration in {every}")
    return "; ".join(parts)


def seed_differences(cells: list, first: str, way: str) -> dict:
    """{study seed: the first's rerun by the equal time minus the way's} where both rerun and their picks differ (the
    same configuration differs by 0 by construction, no evidence)."""
    found = {}
    for cell in cells:
        a, b = equal_pick(cell, first), equal_pick(cell, way)
        mine, theirs = rerun_value(cell, first, "equal"), rerun_value(cell, way, "equal")
        if a and b and a["config"] != b["config"] and not math.isnan(mine) and not math.isnan(theirs):
            found[cell.seed] = mine - theirs
    return found


def equal_text(length: int, cells: list, labels: dict) -> str:
    """At the equal time: nothing compared where a way had finished nothing by then (said, with the study seeds), nor
    where every pick reruns at the env's ceiling (level by construction); else the ways by the median of their
    reruns; over too few study seeds to tell a difference (can_tell), each way's direction from the first, study seed
    by study seed; over enough, whether their ranges over the study seeds overlap the first's; and the picks that
    were the same configuration."""
    ways = way_keys(cells)
    times = spread_text([cell.score["equal_time_s"] for cell in cells if cell.score], duration_text)
    head = f"{length:,} iterations, equal time {times} ({fastest_text(cells, labels)}): "
    empty = {way: [cell.seed for cell in cells if equal_pick(cell, way) is None] for way in ways}
    if any(empty.values()):
        said = [f"{labels[way]} had finished nothing by then "
                f"({'in every study seed' if len(seeds) == len(cells) else 'in ' + seeds_text(seeds)})"
                for way, seeds in empty.items() if seeds]
        return head + "; ".join(said) + ": nothing compared at equal time"
    values = {way: [rerun_value(cell, way, "equal") for cell in cells] for way in ways}
    unrerun = [way for way in ways if any(equal_pick(cell, way)["config"] is None for cell in cells)]
    if unrerun:
        return head + f"the pick of {listed([labels[way] for way in unrerun])} on this clock was not rerun: " \
                      "nothing compared at equal time"
    known = [value for found in values.values() for value in found if not math.isnan(value)]
    ceiling = CEILINGS.get(cells[0].env)
    if ceiling and known and min(known) >= (1 - CEILING_MARGIN) * ceiling:
        return head + (f"every way's pick reruns at {number_text(min(known))}–{number_text(max(known))}, at "
                       f"{cells[0].env}'s ceiling of {number_text(ceiling)}: level by construction, nothing compared")
    medians = {way: statistics.median(v for v in found if not math.isnan(v)) if any(not math.isnan(v) for v in found)
               else math.nan for way, found in values.items()}
    order = sorted(ways, key=lambda way: -math.inf if math.isnan(medians[way]) else medians[way], reverse=True)
    listed_values = "; ".join(f"{labels[way]} {number_text(medians[way]) if not math.isnan(medians[way]) else '–'}"
                              for way in order)
    same = same_text(cells, order, labels)
    if not can_tell(len(cells)):
        directions = [f"{labels[way]} {direction_text(found)}" for way in order[1:]
                      if (found := seed_differences(cells, order[0], way))]
        return head + listed_values + f" (medians; {'; '.join([*directions, untold_text(len(cells))])}" + (
            f"; {same}" if same else "") + ")"
    lead = level_with_first(order, lambda a, b: ranges_apart([v for v in values[a] if not math.isnan(v)],
                                                             [v for v in values[b] if not math.isnan(v)]))
    if lead.crowned:
        verdict = f"{labels[lead.first]}'s range over the study seeds lies apart from every other's"
    else:
        verdict = "; ".join(filter(None, [
            f"the ranges over the study seeds of {listed([labels[way] for way in lead.level])} overlap the first's: "
            "not told apart" if lead.level else "",
            f"{listed([labels[way] for way in lead.unknown])}: one study seed, no range" if lead.unknown else "",
            f"{listed([labels[way] for way in lead.apart])}: apart from the first" if lead.apart else ""]))
    return head + listed_values + f" (medians; {verdict}" + (f"; {same}" if same else "") + ")"


# CHARTS
def wall_chart(lengths: dict, labels: dict, path: str):
    """Each way's wall time against the trial length, log-log: dots the study seeds, a bar each length's median; no
    line joins the lengths, which would draw a crossing where none was measured."""
    figure = Figure(figsize=(7, 5.2), layout="constrained")
    axes = figure.subplots()
    cells = [cell for group in lengths.values() for cell in group]
    colors = other_colors(way_keys(cells))
    for way in colors:
        points = sorted((cell.length, wall(cell, way)) for cell in cells)
        axes.scatter([x for x, _ in points], [y for _, y in points], s=14, color=colors[way], alpha=0.6)
        medians = [(length, statistics.median(wall(cell, way) for cell in group))
                   for length, group in sorted(lengths.items())]
        axes.scatter([x for x, _ in medians], [y for _, y in medians], marker="_", s=400, linewidths=2,
                     color=colors[way], label=f"{labels[way]} (bar: median)")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xticks(sorted(lengths), [f"{length:,}" for length in sorted(lengths)])
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.yaxis.set_major_formatter(ScalarFormatter())
    axes.yaxis.set_minor_formatter(ScalarFormatter())
    axes.set_xlabel("trial length (PPO iterations of 2,048 env steps, log scale)")
    axes.set_ylabel("wall time of the study (s, log scale)")
    figure.legend(*axes.get_legend_handles_labels(), loc="outside lower center", fontsize="small")
    figure.savefig(path, dpi=DPI)


# THE REPORT
def invocation_lines(plan: dict) -> list:
    rows = [[f"`{' '.join(item['argv'])}`", item["date"], item["commit"], item["load"], item["trials"],
             f"`{item['workload']}`", item["score_seeds"]] for item in plan["invocations"]]
    return markdown_table(["invocation", "date", "commit", "load average at its start", "trials per study",
                           "workload (and --num-iterations L)", "rerun seeds"], rows)


def numbers_lines(plan: dict) -> list:
    samplers = {entry.get("sampler") for item in plan["cells"] for entry in item["studies"] if entry["way"] == "pruned"}
    same = ("the populations and the trials without pruning train the same configurations" if samplers != {"random"}
            else "the populations, the trials and the pruned study draw the same configurations (the pruned study "
            "stops some of them early)")
    return [f"*The numbers:* {plan_machine(plan)}; 2 cores; every way uses both (two trial processes at a time, two "
            "population processes side by side). Each cell (env, trial length, study seed) ran three tune.py studies "
            "one after another, in an order that turns from cell to cell, then the reruns; study seed s seeds the "
            "samplers, and trial n runs with seed s + n. The random sampler draws trial n's values from (s, n): "
            f"{same}. TPE draws at random until "
            f"{TPE_STARTUP} trials have finished (completed or pruned: Optuna's start-up), so a study of {TPE_STARTUP} "
            "trials or fewer is random search with Hyperband (reduction factor 3, resources in iterations), and is "
            "named so. The study seed is the independent unit, and the rule: " + TELL_RULE + " (over enough, two "
            "ways are told apart where their ranges over the study seeds do not overlap). One clock for every way: a "
            "trial ends at its tell, whether in a process of its own or an agent of a population (told after its "
            "process ends), and the equal time and each way's best by it are taken on that clock. The space is the "
            "PPO space's float fields (docs/tuning.md; the others at the scripts' defaults). The objective: "
            + OBJECTIVE + ". The reruns: every way's best configuration, by the equal time and at its end, trained "
            "again by the populations' script (one process of its fresh seeds' agents, two processes side by side) "
            "on the same fresh seeds; the value is the mean of their objectives. Spread: median (min–max) over the "
            "study seeds.", "", WALL_TIME, "",
            *invocation_lines(plan)]


def env_lines(env: str, lengths: dict, labels: dict, directory: str) -> list:
    slug = env.lower().replace("-", "_")
    wall_chart(lengths, labels, os.path.join(directory, CHARTS, f"{slug}_wall.png"))
    best_chart(lengths, labels, os.path.join(directory, CHARTS, f"{slug}_best.png"))
    seeds = sorted({cell.seed for cells in lengths.values() for cell in cells})
    lines = [f"## {env}", "", f"Study seeds {', '.join(map(str, seeds))}.", "",
             f"![wall time against trial length]({CHARTS}/{slug}_wall.png)", "",
             "*Wall time against the trial length:* dots the study seeds, bars the medians, at the lengths measured "
             "only: no line joins them, as nothing between them was measured.", "",
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
    envs = grouped([on_one_clock(cell) for cell in cells])
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
