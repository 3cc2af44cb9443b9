"""exp9: NumPy or JAX for my own env? Training on Doors (doors.py, one MDP written in NumPy and in JAX): per algorithm,
each design's time to reach a return that only near-shortest paths to the goal give, its final return and total time,
its learning curves against env steps and against wall-clock time; and the published source's Table 2 (DQN on its
gridworld, three designs) beside ours, as ratios (its machine differs)."""

import math
from typing import NamedTuple

import numpy as np

from sweep import variants
from sweep.experiments import EXP9
from report.charts import log_axis, new_figure, save_figure
from report.curves import WALL_CLOCK_CAPTION, learning_curve_figure
from report.palette import colors_for, marker_of
from report.settings import FINAL_RETURN_EPISODES, LABEL_COLORS
from report.stats import algorithm_of, level_with_first, metric_values, ranges_apart, rows_of
from report.summary import num_envs, ordered, rank
from report.text import (
    Answer, heading, image, lead_names, lead_note, listed, markdown_table, mean_and_spread, memory_columns,
    seconds_text,
)

# An optimal Doors episode returns 0.09 x its path length + 0.91: 2.17 to 3.43 as the doors fall (a mean about 2.4);
# one that misses the goal returns at most 1.8, so a mean of 2.0 needs the goal reached by near-shortest paths
SOLVED_RETURN = 2.0
# the published source's Table 2: DQN's training time on its gridworld, minutes on its machine, per design (our run)
SOURCE_TABLE2 = (("PyTorch + NumPy env", variants.DQN_TORCH_GYMNASIUM.label, 22.5),
                 ("Flax + NumPy env", variants.DQN_LINEN_GYMNASIUM.label, 22.8),
                 ("Flax + JAX env, 16 x the envs", f"{EXP9.WIDE[1].label} at {EXP9.WIDE_FACTOR} envs", 2.3))
ALGORITHMS = (("PPO", variants.PPO), ("DQN", variants.DQN))  # each algorithm's name, and the registry's
BACKENDS = ("NumPy, loop over copies", "NumPy, vectorised", "JAX", "JAX (whole training compiled)")


def design_name(row, reference_envs):
    """A design's name: the variant's label, with its number of envs where it is not the algorithm's usual one."""
    count = num_envs(row)
    return row["label"] + (f" at {count} envs" if count != reference_envs else "")


def env_backend(row):
    """How the design steps the env: the NumPy env (a loop over copies or vectorised) or the JAX env."""
    variant = variants.BY_KEY.get((row["variant"], row["compile_mode"]))
    if variant is None or variant.backend != variants.GYMNASIUM:
        return "JAX (whole training compiled)" if row["compile_mode"] == "scan" else "JAX"
    return "NumPy, vectorised" if row["compile_mode"].endswith("-vector") else "NumPy, loop over copies"


def time_to_reach(run, threshold):
    """Seconds from the start of iteration 0 (compilation included) to the end of the iteration in which the mean of
    the last FINAL_RETURN_EPISODES logged returns first reaches `threshold`, and the env steps by then; NaN if never."""
    window = FINAL_RETURN_EPISODES
    if run.returns.size < window:
        return math.nan, math.nan
    means = np.convolve(run.returns, np.ones(window) / window, mode="valid")
    hit = np.flatnonzero(means >= threshold)
    if not hit.size:
        return math.nan, math.nan
    return float(run.return_seconds[hit[0] + window - 1]), float(run.return_steps[hit[0] + window - 1])


def median_text(values):
    """'12.3 [range 10.1–14.0]' of the finite values, '12.3' for one, '–' for none."""
    values = [value for value in values if not math.isnan(value)]
    if not values:
        return "–"
    middle = seconds_text(float(np.median(values)))
    return middle if len(values) == 1 else f"{middle} [range {seconds_text(min(values))}–{seconds_text(max(values))}]"


def designs(rows):
    """{design name: its rows} of one algorithm's runs: the NumPy env's designs (a loop, then vectorised) before the
    JAX env's, each in label order, those at another number of envs than the usual last."""
    counts = [num_envs(row) for row in rows]
    reference = max(set(counts), key=counts.count)
    label_rank = rank(LABEL_COLORS)
    names = {}
    for row in sorted(rows, key=lambda row: (num_envs(row) != reference, BACKENDS.index(env_backend(row)),
                                             label_rank(row["label"]), row["seed"])):
        names.setdefault(design_name(row, reference), []).append(row)
    return names


class Reach(NamedTuple):
    """One design's time to reach SOLVED_RETURN over its seeds."""

    median: float  # over the seeds that reached it; NaN if none did
    reached: int  # seeds that reached it
    seeds: int
    times: list  # each reaching seed's time: their range is the design's interval


def design_stats(cells):
    """A Reach per design."""
    stats = {}
    for name, rows in cells.items():
        times = [time_to_reach(row["run"], SOLVED_RETURN)[0] for row in rows]
        reached = [time for time in times if not math.isnan(time)]
        stats[name] = Reach(float(np.median(reached)) if reached else math.nan, len(reached), len(rows), reached)
    return stats


def reach_order(cells, stats):
    """The designs that reached the return, the first to reach it first, and those that never did."""
    timed = sorted((name for name in cells if not math.isnan(stats[name][0])), key=lambda name: stats[name][0])
    return timed, [name for name in cells if math.isnan(stats[name][0])]


def relative_reach(stats, name, fastest):
    """A design's time to reach the return over the first design's, as the table writes it: '1.6×'."""
    return f"{stats[name][0] / stats[fastest][0]:.1f}×"


def reach_lead(timed, stats):
    """The Lead (stats.level_with_first) of the designs that reached the return, the first first: a design's interval
    is the range of its reaching seeds' times, two are apart where their ranges do not overlap."""
    return level_with_first(timed, lambda first, name: ranges_apart(stats[first].times, stats[name].times))


def reach_words(lead, stats, overlap, most=None):
    """Who reaches the return first: the Lead's first alone where its range is apart from every other's; else it and
    those level with it with the span of their medians and why (overlap, '' to leave it unsaid; lead_note), or that
    one seed gives no interval. Names beyond most are counted (lead_names)."""
    first = seconds_text(stats[lead.first].median)
    if lead.crowned:
        return f"{lead.first} reaches a mean return of {SOLVED_RETURN} first ({first} s)"
    note = lead_note(lead, str, overlap, "seed")
    note = f"; {note}" if note else ""
    if not lead.level:
        return f"{lead.first} reaches a mean return of {SOLVED_RETURN} soonest ({first} s{note})"
    last = seconds_text(stats[lead.level[-1]].median)
    return f"{lead_names(lead, str, most)} reach a mean return of {SOLVED_RETURN} level ({first}–{last} s{note})"


def other_words(cells, stats, lead, other):
    """The first design on the other env (NumPy or JAX) than the Lead's first and not level with it (other_backend),
    against that first: the ratio of their times, and where one seed gives no interval, that."""
    env = "NumPy" if other_is_numpy(cells, other) else "JAX"
    against = "that time" if lead.crowned else f"the time of {lead.first}"
    return (f"the {env} env's first, {other}, takes {relative_reach(stats, other, lead.first)} {against}"
            + " (one seed: no interval)" * (other in lead.unknown))


def answer_lines(algorithm, cells, stats):
    """The algorithm's answer as markdown lines: a bullet on the design that reaches the return first, or those level
    with it (reach_words), then short bullets on the first on the other env, the seeds that reached it only in part
    and the designs that never did (each design's time relative to the first is in the table)."""
    timed, never = reach_order(cells, stats)
    if not timed:
        return [f"- **{algorithm}:** no design reached a mean return of {SOLVED_RETURN} in these runs."]
    lead = reach_lead(timed, stats)
    lines = [f"- **{algorithm}:** {reach_words(lead, stats, 'ranges over seeds overlap')}."]
    other = other_backend(cells, timed, lead.level)
    if other:
        words = other_words(cells, stats, lead, other)
        lines.append(f"  - {words[0].upper()}{words[1:]}.")
    partly = [f"{name} ({stats[name][1]} of {stats[name][2]} seeds)" for name in timed if stats[name][1] < stats[name][2]]
    if partly:
        lines.append(f"  - Some seeds only: {listed(partly)}.")
    return lines + ([f"  - Never: {listed(never)}."] if never else [])


def other_is_numpy(cells, name):
    """Whether a design steps the NumPy env."""
    return env_backend(cells[name][0]).startswith("NumPy")


def other_backend(cells, timed, level):
    """The first design to reach the return on the other env (NumPy or JAX) than the first one's, None if none did or
    if it is among those level with the first (named with them)."""
    first = other_is_numpy(cells, timed[0])
    other = next((name for name in timed if other_is_numpy(cells, name) != first), None)
    return None if other in level else other


def doors_bullet(cells, stats):
    """The summary of one algorithm: the design that reaches the return first (or those level with it, more than four
    counted), after how long, and the first on the other env (NumPy or JAX) against it."""
    timed, _ = reach_order(cells, stats)
    if not timed:
        return f"no design reached a mean return of {SOLVED_RETURN}"
    lead = reach_lead(timed, stats)
    other = other_backend(cells, timed, lead.level)
    return reach_words(lead, stats, "", 4) + (f"; {other_words(cells, stats, lead, other)}" if other else "")


def design_table(cells, stats):
    """Per design: env backend, envs, seeds that reached the return, time and env steps to reach it, the time relative
    to the first design to reach it, final return, total time and total relative to the fastest, peak memory."""
    totals = {name: float(np.median(metric_values(rows, "total_s"))) for name, rows in cells.items()}
    fastest = min(totals.values())
    timed, _ = reach_order(cells, stats)
    memory_header, memory = memory_columns(cells)
    table = []
    for name, rows in cells.items():
        reach = [time_to_reach(row["run"], SOLVED_RETURN) for row in rows]
        table.append([name, env_backend(rows[0]), num_envs(rows[0]),
                      f"{sum(not math.isnan(time) for time, _ in reach)}/{len(rows)}",
                      median_text([time for time, _ in reach]), median_text([steps for _, steps in reach]),
                      relative_reach(stats, name, timed[0]) if name in timed else "–",
                      mean_and_spread(metric_values(rows, "final_return")), median_text(metric_values(rows, "total_s")),
                      f"{totals[name] / fastest:.2f}×", *memory[name]])
    header = ["design", "env backend", "envs", "seeds reaching", f"time to reach {SOLVED_RETURN} (s)",
              f"env steps to reach {SOLVED_RETURN}", "time to reach, relative (median)", "final return", "total (s)",
              "total, relative", *memory_header]
    return markdown_table(header, table)


def source_table(cells):
    """The source's Table 2 beside our DQN runs of the same designs: each design's training time relative to the
    fastest of the three, there and here (total, and time to reach the return)."""
    ours = {label: cells[label] for _, label, _ in SOURCE_TABLE2 if label in cells}
    if len(ours) < len(SOURCE_TABLE2):
        return []
    source_fastest = min(minutes for _, _, minutes in SOURCE_TABLE2)
    totals = {label: float(np.median(metric_values(rows, "total_s"))) for label, rows in ours.items()}
    reach = {label: design_stats({label: rows})[label][0] for label, rows in ours.items()}
    fastest_reach = min((time for time in reach.values() if not math.isnan(time)), default=math.nan)
    table = [[design, label, f"{minutes:g}", f"{minutes / source_fastest:.1f}×", seconds_text(totals[label]),
              f"{totals[label] / min(totals.values()):.1f}×",
              "–" if math.isnan(reach[label]) else f"{reach[label] / fastest_reach:.1f}×"]
             for design, label, minutes in SOURCE_TABLE2]
    header = ["design (source)", "our run", "source: minutes", "source: relative", "ours: total (s)",
              "ours: total, relative", f"ours: time to reach {SOLVED_RETURN}, relative"]
    return ["**Beside the published source's Table 2** (DQN on its own gridworld, its machine: compare the ratios, "
            "not the times):", ""] + markdown_table(header, table)


def relabelled(cells):
    """The rows of every design, each labelled with its design's name (the curves are drawn per label)."""
    return [{**row, "label": name} for name, rows in cells.items() for row in rows]


def reach_chart(parts, stats, out):
    """Chart: per algorithm (stats: its design_stats), each design's time to reach SOLVED_RETURN (the median over the seeds that reached it,
    whiskers: their min–max; log time), the first to reach it on top; the designs that never did listed at the bottom.

    The answer to 'NumPy or JAX for my own env?': against env steps all designs learn alike by construction (one MDP),
    so only time tells them apart."""
    counts = [len(cells) for _, cells in parts]
    figure, axes = new_figure(f"Time to reach a mean return of {SOLVED_RETURN} on Doors (exp9): the first on top\n"
                              "point: median over the seeds that reached it, whiskers: min–max; "
                              "■ NumPy env, ● JAX env", len(parts), ncols=1, panel_size=(8.5, 0.34 * max(counts) + 1.3))
    for ax, (algorithm, cells) in zip(axes, parts):
        colors = colors_for(ordered(cells, LABEL_COLORS))  # as the learning curves colour the designs
        times = {name: reach.times for name, reach in stats[algorithm].items()}
        names = sorted(cells, key=lambda name: (not times[name], np.median(times[name]) if times[name] else 0))
        tick_labels = []
        for y, name in enumerate(names):
            seeds, reached = stats[algorithm][name].seeds, times[name]
            if reached:
                middle = float(np.median(reached))
                ax.errorbar([middle], [y], xerr=[[middle - min(reached)], [max(reached) - middle]], color=colors[name],
                            marker=marker_of(name), markersize=7,
                            linestyle="none", elinewidth=1.5, capsize=3)
            some = f" ({len(reached)} of {seeds} seeds)" if 0 < len(reached) < seeds else ""
            tick_labels.append(f"{name}{some}" if reached else
                               f"{name}: never reached it ({seeds} seed{'s' * (seeds > 1)})")
        ax.set_yticks(range(len(names)), tick_labels)
        ax.set_ylim(len(names) - 0.5, -0.5)
        for label, name in zip(ax.get_yticklabels(), names):
            label.set_color("black" if times[name] else "dimgrey")
        ax.set_title(algorithm)
        if any(times.values()):
            log_axis(ax, "x", " s")
            ax.set_xlabel(f"time to reach a mean return of {SOLVED_RETURN} (s from the start of iteration 0, "
                          "compilation included)")
            ax.grid(axis="x", which="major", alpha=0.3)
        else:
            ax.set_xticks([])
            ax.text(0.5, 0.5, f"no design reached a mean return of {SOLVED_RETURN}", ha="center", va="center",
                    transform=ax.transAxes, fontsize=9, color="dimgrey")
    return save_figure(figure, out, "doors_time_to_reach.png")


def section_doors(sweep, out):
    """exp9's answer per algorithm, its tables, the comparison with the source, and the learning curves."""
    rows = rows_of(sweep.rows, "exp9")
    if not rows:
        return Answer([], [])
    lines = [heading(sweep, "NumPy or JAX for my own env? Training on Doors (exp9)"), ""]
    parts = [(algorithm, designs([row for row in rows if algorithm_of(row["label"]) == key]))
             for algorithm, key in ALGORITHMS if any(algorithm_of(row["label"]) == key for row in rows)]
    stats = {algorithm: design_stats(cells) for algorithm, cells in parts}
    lines += [line for algorithm, cells in parts for line in answer_lines(algorithm, cells, stats[algorithm])] + [""]
    lines += [f"- Time to reach: from the start of iteration 0 (compilation included) to the end of the iteration in "
              f"which the mean of the last {FINAL_RETURN_EPISODES} logged returns first reaches {SOLVED_RETURN}.",
              "- An optimal episode returns 2.17–3.43 as the doors fall, one that misses the goal at most 1.8.",
              "- Median over the seeds that reached it, with the range; relative: over the median of the first design "
              "to reach it.",
              "- A design is named first only where its range is apart from every other's; those whose ranges overlap "
              "its are named level with it.",
              f"- Final return: mean of a run's last {FINAL_RETURN_EPISODES} logged returns, mean ± sample standard "
              "deviation over seeds.",
              "- Total: the run's time/total (iteration 0 to the end), median over seeds.", ""]
    # the answer's chart first (it heads the report): against env steps the designs learn alike by construction
    lines += image(reach_chart(parts, stats, out), f"time to reach a mean return of {SOLVED_RETURN} per design")
    for algorithm, cells in parts:
        lines += [f"**{algorithm}**", ""] + design_table(cells, stats[algorithm])
        if algorithm == "DQN":
            lines += source_table(cells)
        for x_axis, against in (("steps", "env steps"), ("wall", "wall-clock time from iteration 0")):
            name = f"doors_{algorithm.lower()}_{x_axis}.png"
            title = f"{algorithm} on Doors: episodic return against {against}\nmean over seeds, band: min–max"
            figure, _ = learning_curve_figure(relabelled(cells), sweep.env_order, title, x_axis, out, name,
                                              "time from the start of iteration 0 (compilation included)")
            if x_axis == "wall":
                lines += [f"{WALL_CLOCK_CAPTION} ({algorithm}):", ""]
            lines += image(figure, f"{algorithm} on Doors against {against}")
    return Answer(lines, [(f"exp9 · {algorithm}", doors_bullet(cells, stats[algorithm])) for algorithm, cells in parts])
