"""exp13's report: `python -m report.budget DIR` writes DIR/REPORT.md and DIR/charts/ from DIR/exp13.json (the
machine, every invocation with its date, commit and load, and the cells: env, trial length, study seed, minutes, the
four studies) and the study folders and reruns it lists.

Per env: the same minutes spent four ways (random populations, TPE + Hyperband trials, populations of K seeds per
trial, PBT); each way's best trial among those ended within the minutes, chosen by its objective and scored by its
rerun on fresh seeds (a PBT agent: the replay of its lineage). The answer: which way gives the best agent for the
minutes, and by how much, with 95 % bootstrap intervals over every (study seed, fresh seed) and, against the best way,
the interval of the difference paired by them."""
import math
import os
import statistics
import sys

from report.cells import Cell, best_by, best_chart, grouped, read_cells
from report.folder import CHARTS, run_command, write_markdown
from report.machines import plan_machine
from report.study import OBJECTIVE, WALL_TIME, busy_seconds, completed, interval, merged, quiet
from report.text import markdown_table, number_text, spread_text
from search.evaluation import interval as bootstrap_interval

PLAN_FILE = "exp13.json"
WAYS = ("population", "pruned", "seeds", "pbt")  # the tables' order, whatever order a cell ran them in


def rerun_values(cell: Cell, way: str) -> dict:
    """{(study seed, fresh seed): value} of the rerun of the way's pick in the cell (none where it had no pick, a
    rerun seed without a value left out)."""
    pick = (cell.score or {}).get("picks", {}).get(way, {}).get("equal")
    if pick is None:
        return {}
    values = cell.score["configs"][pick["config"]]["values"]
    return {(cell.seed, seed): value for seed, value in zip(cell.score["seeds"], values) if value is not None}


def pooled(cells: list, way: str) -> dict:
    return {key: value for cell in cells for key, value in rerun_values(cell, way).items()}


def mean_text(values: list) -> str:
    """'mean [low, high]': the mean and its 95 % bootstrap interval; '–' for no value."""
    if not values:
        return "–"
    low, high = bootstrap_interval(values)
    return f"{number_text(statistics.fmean(values))} [{number_text(low)}, {number_text(high)}]"


def difference(cells: list, best: str, way: str) -> tuple:
    """The best way's rerun minus the way's, paired by (study seed, fresh seed): their mean, its interval, and
    whether the interval excludes 0 (told apart); NaN where no pair."""
    mine, theirs = pooled(cells, best), pooled(cells, way)
    pairs = [mine[key] - theirs[key] for key in mine if key in theirs]
    if not pairs:
        return math.nan, (math.nan, math.nan), False
    low, high = bootstrap_interval(pairs)
    return statistics.fmean(pairs), (low, high), len(pairs) > 1 and (low > 0 or high < 0)


def way_keys(cells: list) -> list:
    found = {way for cell in cells for way in cell.studies}
    return [way for way in WAYS if way in found]


def ranked(cells: list) -> list:
    """The ways by their pooled rerun mean, the best first (a way with no rerun last)."""
    means = {way: statistics.fmean(pooled(cells, way).values()) if pooled(cells, way) else -math.inf
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
        seeds = [statistics.fmean(rerun_values(cell, way).values()) if rerun_values(cell, way) else math.nan
                 for cell in cells]
        if way == order[0]:
            against = "the best"
        else:
            mean, (low, high), apart = difference(cells, order[0], way)
            against = "–" if math.isnan(mean) else (f"{number_text(mean)} [{number_text(low)}, {number_text(high)}]: "
                                                    + ("told apart" if apart else "not told apart"))
        rows.append([labels[way], spread_text([float(finished_within(cell, way)) for cell in cells]),
                     spread_text([best.value if best else math.nan for best in bests]), spread_text(seeds),
                     mean_text(list(pooled(cells, way).values())), against])
    return rows


def answer_text(env: str, cells: list, labels: dict) -> str:
    order = ranked(cells)
    minutes, length = cells[0].score["equal_time_s"] / 60 if cells[0].score else math.nan, cells[0].length
    best = order[0]
    others = []
    for way in order[1:]:
        mean, (low, high), apart = difference(cells, best, way)
        others.append(f"{labels[way]} {mean_text(list(pooled(cells, way).values()))}, "
                      + ("no rerun" if math.isnan(mean) else f"{number_text(mean)} less "
                         f"[{number_text(low)}, {number_text(high)}]: {'told apart' if apart else 'not told apart'}"))
    return (f"{env}, {minutes:g} min a way on 2 cores, {length:,} iterations a trial, {len(cells)} study seeds: "
            f"**{labels[best]}** gave the best agent, its rerun {mean_text(list(pooled(cells, best).values()))}; "
            + "; ".join(others))


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
            "iteration by iteration, no copies). Intervals: 95 % bootstrap (percentile) over every (study seed, fresh seed); a difference is "
            "paired by them, told apart where its interval excludes 0. Spread: median (min–max) over the study "
            "seeds.", "", WALL_TIME, "", *invocation_lines(plan)]


def env_lines(env: str, cells: list, labels: dict, directory: str) -> list:
    slug = env.lower().replace("-", "_")
    best_chart({cells[0].length: cells}, labels, os.path.join(directory, CHARTS, f"{slug}_best.png"))
    header = ["way", "trials completed within the minutes", "best objective within them (its own seed)",
              "its pick's rerun (mean per study seed)", "rerun, all seeds [95 % interval]",
              "the best way's rerun minus this one's [95 % interval]"]
    return [f"## {env}", "", f"Study seeds {', '.join(str(cell.seed) for cell in cells)}.", "",
            f"![best against wall time]({CHARTS}/{slug}_best.png)", "",
            "*Best objective so far* against wall time, per way and study seed; the pick's rerun as a diamond at the "
            "minutes.", ""] + markdown_table(header, way_rows(cells, labels))


def write_report(directory: str) -> str:
    """Writes DIR/REPORT.md and DIR/charts/ from DIR/exp13.json and its studies; returns REPORT.md's path."""
    plan, cells, labels = read_cells(directory, PLAN_FILE)
    envs = {env: [cell for group in lengths.values() for cell in group] for env, lengths in grouped(cells).items()}
    lines = ["# exp13: the same wall-clock budget, four ways", "", "## The answer", ""]
    lines += [f"- {answer_text(env, env_cells, labels)}." for env, env_cells in envs.items()]
    lines += ["", *numbers_lines(plan)]
    for env, env_cells in envs.items():
        lines += env_lines(env, env_cells, labels, directory)
    return write_markdown(directory, lines)


def main(argv: list | None = None) -> int:
    """`python -m report.budget DIR`: writes exp13's REPORT.md."""
    return run_command(argv, "python -m report.budget", __doc__.split("\n\n")[0],
                       f"exp13's folder (it holds {PLAN_FILE} and the study folders)", quiet(write_report))


if __name__ == "__main__":
    sys.exit(main())
