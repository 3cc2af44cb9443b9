"""plot.py --compare: two sweeps side by side."""

import itertools

from sweep.experiments import SIZES
from report.charts import colors_for, draw_points, draw_speedup_strips, new_figure, save_figure
from report.header import gpu_text, machine_lines, shard_differences
from report.load import warn
from report.settings import LABEL_COLORS
from report.stats import geometric_mean, interval, median, paired, where
from report.summary import ordered
from report.text import Answer, image, markdown_table, seconds_text, speedup_text


def side_name(letter, folders, sweep):
    """'A: shard-1, shard-2 (NVIDIA H100 80GB HBM3 (driver 580.65) ×1)': a compared side's folders and machine."""
    system = sweep.systems[0][1] if sweep.systems else {}
    machine = gpu_text(system) if system.get("gpu") else system.get("cpu") or "unknown machine"
    return f"{letter}: {', '.join(folder.name for folder in folders)} ({machine})"


def compare_machine_lines(sides, sweeps):
    """Each side's machines, software, commit and command, under a heading naming the side."""
    lines = []
    for letter, folders, sweep in zip("AB", sides, sweeps):
        lines += [f"### {side_name(letter, folders, sweep)}", ""] + machine_lines(sweep.systems)
        lines += shard_differences(sweep.systems)
    return lines


def section_compare(sides, sweeps, out):
    """Chart and table: the same configurations' total durations on two sweeps side by side, and A's speedup over B;
    each side's steady iteration; the summary bullets (the steady iteration per side)."""
    (sweep_a, sweep_b) = sweeps
    name_a, name_b = side_name("A", sides[0], sweep_a), side_name("B", sides[1], sweep_b)
    lines = ["## Comparison of two sweeps", "", f"- {name_a}", f"- {name_b}",
             "- Only configurations (experiment, variant, mode, env, size, timing, workload, iterations) present in "
             "both are compared, paired by seed.", ""]
    labels_timings = ordered(((row["label"], row["timing"]) for row in sweep_a.rows + sweep_b.rows),
                             list(itertools.product(LABEL_COLORS, ("async", "sync"))))
    categories, times, speedups, table, category_colors = [], {}, {}, [], {}
    for label, timing in labels_timings:
        pairs = paired(*(where(sweep.rows, label=label, timing=timing) for sweep in (sweep_a, sweep_b)), "total_s")
        if not pairs:
            continue
        category = f"{label}, {timing}"
        categories.append(category)
        category_colors[category] = colors_for([label])[label]
        times[category, name_a] = [pair.time_a for pair in pairs]
        times[category, name_b] = [pair.time_b for pair in pairs]
        speedups[category, "A over B"] = [pair.speedup for pair in pairs]
        for size in ordered((pair.config.size for pair in pairs), SIZES):
            sized = [pair for pair in pairs if pair.config.size == size]
            sized_speedups = [pair.speedup for pair in sized]
            table.append([label, timing, size, len(sized), seconds_text(median([pair.time_a for pair in sized])),
                          seconds_text(median([pair.time_b for pair in sized])),
                          speedup_text(geometric_mean(sized_speedups), interval(sized))])
    steady_lines, bullets = steady_section(sweep_a, sweep_b, labels_timings)
    if not categories:
        warn("skipping compare.png: the two sweeps share no configuration of the same length")
        return Answer(lines + ["No total compared: the two sweeps share no configuration of the same length.", ""]
                      + steady_lines, bullets)
    figure, axes = new_figure(f"{name_a}  vs  {name_b}", 2, ncols=1, panel_size=(max(8, 1.1 * len(categories)), 4.2))
    colors = colors_for([name_a, name_b])
    draw_points(axes[0], categories, [name_a, name_b], times, colors)
    axes[0].set(title="total duration of matched runs (points: median, whiskers: min–max)", ylabel="total duration")
    draw_speedup_strips(axes[1], categories, ["A over B"], speedups, {"A over B": "black"}, category_colors)
    axes[1].set(title="speedup of A over B = time_B / time_A\npoints: matched runs in the variant's colour, black line: "
                "geometric mean", ylabel="speedup of A over B")
    lines += image(save_figure(figure, out, "compare.png"), "comparison of two sweeps")
    header = ["variant (mode)", "timing", "model size", "pairs", "median total A (s)", "median total B (s)",
              "speedup of A over B, geo. mean [interval]"]
    return Answer(lines + markdown_table(header, table) + steady_lines, bullets)


def steady_section(sweep_a, sweep_b, labels_timings):
    """The steady iteration (the median of iterations 8+) of each configuration both sweeps ran, whatever their lengths
    (a steady iteration does not depend on how many follow): per size and env, each variant on A and on B, and
    relative to the fastest variant of its side among those both ran there."""
    steady = {}  # (size, env, timing) -> {label: (A's, B's) geometric mean over seeds}
    for label, timing in labels_timings:
        rows = [where(sweep.rows, label=label, timing=timing) for sweep in (sweep_a, sweep_b)]
        for pair in paired(*rows, "iter8_99_median_s"):
            steady.setdefault((pair.config.size, pair.config.env, timing), {}).setdefault(label, []).append(pair)
    table, relative = [], {}  # relative: size -> [(label, A's relative, B's relative, B's speedup over A)]
    for (size, env, timing) in sorted(steady, key=lambda key: (SIZES.index(key[0]), key[1], key[2])):
        means = {label: (geometric_mean([pair.time_a for pair in pairs]), geometric_mean([pair.time_b for pair in pairs]))
                 for label, pairs in steady[size, env, timing].items()}
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
