"""exp15's report: `python -m report.lengths DIR` writes DIR/REPORT.md and DIR/charts/ from DIR/exp15.json (the
machine, every invocation with its date, commit and load, and the cells: env, trial length, study seed, the three
studies) and the study folders and reruns it lists.

Per env and trial length, over the study seeds: each way's wall time (trials in processes against populations: the
crossover, measured where it lies among the lengths run, never extrapolated); and at equal wall time (the fastest
way's), each way's best configuration so far, chosen by its objective and scored by its rerun on fresh seeds."""
import math
import os
import statistics
import sys

from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, ScalarFormatter

from report.cells import Cell, best_by, best_chart, grouped, read_cells, rerun_value, wall, way_keys
from report.folder import CHARTS, DPI, ratio, run_command, write_markdown
from report.machines import plan_machine
from report.study import OBJECTIVE, WALL_TIME, duration_text, figures, quiet
from report.text import markdown_table, number_text, speedup_text, spread_text

PLAN_FILE = "exp15.json"


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
