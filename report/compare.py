"""plot.py --compare: two sweeps side by side."""

import itertools

from sweep.experiments import SIZES
from report.charts import draw_points, draw_speedup_strips, new_figure, save_figure
from report.machines import cpu_difference, cpu_name, gpu_text, machine_lines, shard_differences
from report.messages import warn
from report.palette import colors_for, marker_of
from report.settings import LABEL_COLORS
from report.stats import geometric_mean, interval, inverted, median, paired, where
from report.summary import ordered
from report.text import Answer, image, markdown_table, seconds_text, speedup_text


def side_name(letter, folders, sweep):
    """'A: shard-1, shard-2 (NVIDIA H100 80GB HBM3 (driver 580.65) ×1)': a compared side's folders and machine."""
    system = sweep.systems[0][1] if sweep.systems else {}
    machine = gpu_text(system) if system.get("gpu") else cpu_name(system) if system else "unknown machine"
    return f"{letter}: {', '.join(folder.name for folder in folders)} ({machine})"


def compare_machine_lines(sides, sweeps):
    """Each side's machines, software, commit and command, under a heading naming the side."""
    lines = []
    for letter, folders, sweep in zip("AB", sides, sweeps):
        lines += [f"### {side_name(letter, folders, sweep)}", ""] + machine_lines(sweep.systems)
        lines += shard_differences(sweep.systems)
    return lines


def section_compare(sides, sweeps, out):
    """Chart: each configuration's steady iteration on each side and B's speedup over A (paired whatever the runs'
    lengths); the steady table; the total durations of the runs of equal length both sides ran, with B's speedup over
    A; the summary bullets (the steady iteration per side)."""
    (sweep_a, sweep_b) = sweeps
    name_a, name_b = side_name("A", sides[0], sweep_a), side_name("B", sides[1], sweep_b)
    lines = ["## Comparison of two sweeps", "", f"- {name_a}", f"- {name_b}",
             "- Only configurations (experiment, variant, mode, env, size, timing, workload) present in both are "
             "compared, paired by seed; totals only between runs of the same number of iterations.",
             "- B's speedup over A = A's time / B's time: above 1× where B is faster."]
    difference = cpu_difference([(letter, sweep.systems[0][1] if sweep.systems else {})
                                 for letter, sweep in zip("AB", sweeps)])
    lines += [f"- **Warning:** A and B ran on {difference}.", ""] if difference else [""]
    labels_timings = ordered(((row["label"], row["timing"]) for row in sweep_a.rows + sweep_b.rows),
                             list(itertools.product(LABEL_COLORS, ("async", "sync"))))
    steady = steady_pairs(sweep_a, sweep_b, labels_timings)
    steady_lines, bullets = steady_section(steady)
    if steady:
        lines += image(steady_chart(steady, name_a, name_b, out), "steady iteration on each side and B's speedup")
    else:
        warn("skipping compare.png: the two sweeps share no configuration with a steady iteration")
    return Answer(lines + steady_lines + total_lines(sweep_a, sweep_b, labels_timings), bullets)


def steady_pairs(sweep_a, sweep_b, labels_timings):
    """{(size, env, timing): {label: [Pair of A's and B's steady iteration, per seed]}} of every configuration both
    sweeps ran, whatever their lengths (a steady iteration does not depend on how many follow)."""
    steady = {}
    for label, timing in labels_timings:
        rows = [where(sweep.rows, label=label, timing=timing) for sweep in (sweep_a, sweep_b)]
        for pair in paired(*rows, "iter8_99_median_s"):
            steady.setdefault((pair.condition.size, pair.condition.env, timing), {}).setdefault(label, []).append(pair)
    return dict(sorted(steady.items(), key=lambda item: (SIZES.index(item[0][0]), item[0][1], item[0][2])))


def steady_chart(steady, name_a, name_b, out):
    """Chart: per configuration (size, env, timing where both occur) each variant's steady iteration on A and on B
    (median over seeds, whiskers min–max; one log scale for both), and B's speedup over A per seed (black line: the
    geometric mean; above 1× where B is faster)."""
    timings = {timing for _, _, timing in steady}
    categories = {key: " · ".join(key if len(timings) > 1 else key[:2]) for key in steady}
    labels = ordered((label for cell in steady.values() for label in cell), LABEL_COLORS)
    times = [{(categories[key], label): [getattr(pair, side) for pair in pairs] for key, cell in steady.items()
              for label, pairs in cell.items()} for side in ("time_a", "time_b")]
    speedups = {(categories[key], label): [pair.time_a / pair.time_b for pair in pairs]
                for key, cell in steady.items() for label, pairs in cell.items()}
    figure, axes = new_figure(f"{name_a}  vs  {name_b}\nsteady iteration (median of iterations 8 on) of the "
                              "configurations both ran, paired by seed whatever the runs' lengths", 3, ncols=1,
                              panel_size=(max(8, 0.5 * len(labels) * len(categories)), 3.6))
    colors = colors_for(labels)
    axes[1].sharey(axes[0])  # one scale: the two sides' times read against each other
    for ax, side_times, name in zip(axes, times, (name_a, name_b)):
        draw_points(ax, list(categories.values()), labels, side_times, colors)
        ax.set(title=f"{name}: steady iteration (points: median over seeds, whiskers: min–max)",
               ylabel="s per steady iteration")
    draw_speedup_strips(axes[2], list(categories.values()), labels, speedups, colors)
    axes[2].set(title="B's speedup over A = time_A / time_B (above 1×: B is faster)\npoints: seeds; black line: "
                "geometric mean", ylabel="B's speedup over A")
    return save_figure(figure, out, "compare.png")


def total_lines(sweep_a, sweep_b, labels_timings):
    """Table: the total durations of the runs both sweeps ran at the same number of iterations (a total grows with
    them), per variant, timing and size, and B's speedup over A; a line saying so where there are none."""
    table = []
    for label, timing in labels_timings:
        pairs = paired(*(where(sweep.rows, label=label, timing=timing) for sweep in (sweep_a, sweep_b)), "total_s")
        for size in ordered((pair.condition.size for pair in pairs), SIZES):
            sized = [pair for pair in pairs if pair.condition.size == size]
            a_over_b = geometric_mean([pair.speedup for pair in sized]), interval(sized)
            table.append([label, timing, size, len(sized), seconds_text(median([pair.time_a for pair in sized])),
                          seconds_text(median([pair.time_b for pair in sized])), speedup_text(*inverted(a_over_b))])
    heading = "### Total duration on each side"
    if not table:
        return [heading, "", "No total compared: the two sweeps share no configuration run at the same number of "
                "iterations.", ""]
    header = ["variant (mode)", "timing", "model size", "pairs", "median total A (s)", "median total B (s)",
              "B's speedup over A, geo. mean [interval]"]
    return [heading, "", "- Only runs of the same number of iterations are paired (a total grows with the "
            "iterations): the configurations below, not every one of the steady table.", ""] + markdown_table(
        header, table)


def steady_section(steady):
    """The steady iteration of each configuration both sweeps ran, per size and env, each variant on A and on B, and
    relative to the fastest variant of its side among those both ran there; the summary bullets."""
    table, relative = [], {}  # relative: size -> [(label, A's relative, B's relative, B's speedup over A)]
    for (size, env, timing), cell in steady.items():
        means = {label: (geometric_mean([pair.time_a for pair in pairs]), geometric_mean([pair.time_b for pair in pairs]))
                 for label, pairs in cell.items()}
        fastest = [min(times[side] for times in means.values()) for side in (0, 1)]
        for label, (a, b) in means.items():
            table.append([size, env, label, timing, seconds_text(a), f"{a / fastest[0]:.2f}×", seconds_text(b),
                          f"{b / fastest[1]:.2f}×", speedup_text(a / b)])
            relative.setdefault(size, []).append((label, a / fastest[0], b / fastest[1], a / b))
    if not table:
        return [], [("compare", "the two sweeps share no configuration with a steady iteration")]
    header = ["model size", "env", "variant (mode)", "timing", "steady iteration A (s)", "relative to A's fastest",
              "steady iteration B (s)", "relative to B's fastest", "B's speedup over A"]
    heading = "### Steady iteration on each side"
    bullets = [(f"compare · {size}", steady_bullet(values), heading) for size, values in relative.items()]
    return [heading, "",
            "- The median of iterations 8 onwards (geometric mean over seeds) of every configuration both sweeps ran, "
            "paired whatever the runs' lengths.",
            "- Each side's relative time is against its own fastest variant of those both ran at that size and env.",
            ""] + markdown_table(header, table), bullets


def steady_bullet(values):
    """The summary of one model size: on each side the slowest variant's steady iteration over its fastest's, and the
    range of B's speedup over A, as the steady table writes them."""
    slowest_a = max(values, key=lambda value: value[1])
    slowest_b = max(values, key=lambda value: value[2])
    low, high = (speedup_text(speedup) for speedup in (min(value[3] for value in values),
                                                       max(value[3] for value in values)))
    spread = low if low == high else f"{low} to {high}"
    return (f"slowest steady iteration over the fastest: A {slowest_a[1]:.2f}× ({slowest_a[0]}), B {slowest_b[2]:.2f}× "
            f"({slowest_b[0]}); B's speedup over A {spread}")
