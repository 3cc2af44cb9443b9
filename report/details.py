"""The sections after the answers: duration against env complexity, pairwise speedups, the overhead windows,
synchronised rollout and update, peak memory. Which experiment each reads is the experiment's own say
(sweep/experiments.py: pairwise, overhead, sync_by, shared_windows)."""

import itertools
import math

import numpy as np
from matplotlib.ticker import NullFormatter

from sweep.experiments import ALL, SIZES
from report.charts import draw_points, draw_speedup_strips, log_axis, min_max_whiskers, new_figure, save_figure
from report.load import shares_windows
from report.messages import warn
from report.palette import colors_for, marker_of
from report.settings import FULLY_COMPILED, LABEL_COLORS, OVERHEAD_METRICS, SYNC_METRICS
from report.stats import (
    compiled_comparisons, median, metric_values, most_common_length, paired_labels, rows_of, scope,
    speedups_by_category, values_by, where,
)
from report.summary import ordered
from report.text import (
    empty_window_lines, heading, image, markdown_table, memory_columns, seconds_text, speedup_table,
)


def pairwise_experiment():
    """The name of the experiment whose runs the duration against env complexity and the pairwise speedups read."""
    return next(experiment.name for experiment in ALL if experiment.pairwise)


def section_duration_vs_complexity(sweep, out):
    """Chart: the pairwise experiment's total duration of each variant against env complexity, one panel per model
    size."""
    exp = pairwise_experiment()
    rows = rows_of(sweep.rows, exp)
    lines = [heading(sweep, f"Total duration against env complexity ({exp})"), ""]
    if not rows:
        return []
    if not sweep.env_relative:  # read_json has warned
        return lines + ["Skipped: no env_timing.json.", ""]
    rows, length = most_common_length(rows)
    sizes = ordered((row["size"] for row in rows), SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    colors = colors_for(labels)
    envs = [env for env in sweep.env_order if where(rows, env=env)]
    if not_timed := [env for env in envs if env not in sweep.env_relative]:
        warn(f"duration_vs_complexity.png leaves out envs that env_timing.json does not time: {', '.join(not_timed)}")
        envs = [env for env in envs if env in sweep.env_relative]
    figure, axes = new_figure(f"Total duration against env complexity — {exp} (async, {scope(rows)}, runs of {length} "
                              "iterations)\n"
                              "points: mean over seeds, whiskers: min–max", len(sizes), panel_size=(5.2, 4.8))
    for ax, size in zip(axes, sizes):
        for label in labels:
            totals = [metric_values(where(rows, size=size, label=label, env=env), "total_s") for env in envs]
            cells = [(sweep.env_relative[env], np.array(values)) for env, values in zip(envs, totals) if values]
            x = [relative for relative, _ in cells]
            means = np.array([values.mean() for _, values in cells])
            whiskers = min_max_whiskers(means, [values for _, values in cells])
            ax.errorbar(x, means, yerr=whiskers, marker=marker_of(label), markersize=4, capsize=2, color=colors[label], label=label)
        log_axis(ax, "x", "×")
        log_axis(ax, "y", " s")
        ax.set(title=f"model size: {size}", xlabel="env step time relative to the fastest env",
               ylabel="total duration (time/total)")
        ax.grid(which="major", alpha=0.3)
        env_names = ax.secondary_xaxis("top")
        env_names.set_xticks([sweep.env_relative[env] for env in envs], envs, rotation=90, fontsize=6)
        env_names.xaxis.set_minor_formatter(NullFormatter())
    return lines + image(save_figure(figure, out, "duration_vs_complexity.png"), "duration against env complexity")


def section_pairwise_speedups(sweep, out, metric, name):
    """Chart and table: speedups between the fully compiled variants on metric, per model size (the pairwise
    experiment's runs)."""
    exp = pairwise_experiment()
    rows = rows_of(sweep.rows, exp)
    what = sweep.names[metric]
    lines = [heading(sweep, f"Speedups between the fully compiled variants: {what} ({exp})"), ""]
    comparisons = compiled_comparisons({row["label"] for row in rows})
    if not rows:
        return []
    if not comparisons:
        warn(f"skipping {name}: fewer than two fully compiled variants in {exp}")
        return lines + [f"Skipped: fewer than two fully compiled variants in {exp}.", ""]
    lines += empty_window_lines([row for row in rows if row["label"] in FULLY_COMPILED], (metric,))
    sizes = ordered((row["size"] for row in rows), SIZES)
    groups = [(size, a, b, paired_labels(where(rows, size=size), a, b, metric))
              for size in sizes for _, a, b in comparisons]
    if not any(pairs for _, _, _, pairs in groups):
        warn(f"skipping {name}: no two fully compiled variants have a value of {what} for the same run configuration")
        return lines + [f"No speedups: no two fully compiled variants have a value of {what} for the same "
                          "configuration and seed.", ""]
    figure, axes = new_figure(f"Speedup of A over B on {what} — {exp} (async, {scope(rows)})\n"
                              "points: (env, seed) pairs, black line: geometric mean", 1, panel_size=(8, 4.6))
    draw_speedup_strips(axes[0], sizes, [name for name, _, _ in comparisons],
                        speedups_by_category(rows, "size", sizes, comparisons, metric))
    axes[0].set(xlabel="model size", ylabel=f"speedup (time_B / time_A), {what}")
    return lines + image(save_figure(figure, out, name), f"speedups on {what}") + speedup_table(groups)


def section_overhead(sweep, out, exp):
    """Chart and table: start-up and the three iteration windows per variant/mode and model size."""
    rows = rows_of(sweep.rows, exp)
    lines = [heading(sweep, f"Overhead windows ({exp})"), ""]
    if not rows:
        return []
    lines += empty_window_lines(rows, OVERHEAD_METRICS)
    sizes = ordered((row["size"] for row in rows), SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    title = (f"Overhead windows — {exp} ({rows[0]['timing']}, {scope(rows)})\n"
             "points: median over runs (envs × seeds), whiskers: min–max")
    figure, axes = new_figure(title, len(OVERHEAD_METRICS), ncols=2, panel_size=(6, 3.8))
    for ax, metric in zip(axes, OVERHEAD_METRICS):
        draw_points(ax, sizes, labels, values_by(rows, "size", sizes, labels, metric))
        per_iteration = metric in ("iter1_7_mean_s", "iter8_99_median_s")
        ax.set(title=sweep.names[metric], xlabel="model size",
               ylabel="seconds per iteration" if per_iteration else "seconds")
    lines += image(save_figure(figure, out, f"overhead_{exp}.png"), f"overhead windows {exp}")
    table = []
    for label, size in itertools.product(labels, sizes):
        cell = where(rows, size=size, label=label)
        if cell:
            medians = [seconds_text(median(metric_values(cell, metric))) for metric in OVERHEAD_METRICS]
            table.append([label, size, len(cell)] + medians)
    header = ["variant (mode)", "model size", "runs", "start-up (s)", "iteration 0 (s)",
              "iterations 1–7 (s, mean)", f"{sweep.names['iter8_99_median_s']} (s, median)"]
    return lines + ["Medians over runs (envs × seeds) of each run's value.", ""] + markdown_table(header, table)


def section_sync(sweep, out, exp, category_field):
    """Charts: synchronised rollout and update times per env or size, and the compiled variants' speedups on them."""
    rows = [row for row in rows_of(sweep.rows, exp) if row["timing"] == "sync"]
    lines = [heading(sweep, f"Synchronised rollout and update ({exp}, per {category_field})"), ""]
    if not rows_of(sweep.rows, exp):
        return []
    if not rows:
        warn(f"skipping sync_times_{exp}.png and sync_speedups_{exp}.png: no synchronised {exp} runs")
        return lines + [f"Skipped: no synchronised {exp} runs.", ""]
    lines += empty_window_lines(rows, SYNC_METRICS)
    if not any(metric_values(rows, metric) for metric in SYNC_METRICS):
        warn(f"skipping sync_times_{exp}.png and sync_speedups_{exp}.png: no synchronised {exp} run holds a steady state")
        return lines + [f"No charts: no synchronised {exp} run reaches {sweep.names['iter8_99_median_s']}, the window "
                        "rollout and update are timed over.", ""]
    categories = ordered((row[category_field] for row in rows), sweep.env_order if category_field == "env" else SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    layout = {"ncols": 1, "panel_size": (14, 4.2)} if category_field == "env" else {"ncols": 2, "panel_size": (7, 4.2)}
    title = (f"Synchronised rollout and update times — {exp} ({scope(rows)}), per-run median of "
             f"{sweep.names['iter8_99_median_s']}\n"
             "points: median over seeds, whiskers: min–max")
    figure, axes = new_figure(title, len(SYNC_METRICS), **layout)
    for ax, metric in zip(axes, SYNC_METRICS):
        draw_points(ax, categories, labels, values_by(rows, category_field, categories, labels, metric))
        ax.set(title=sweep.names[metric], ylabel="seconds per iteration")
    lines += image(save_figure(figure, out, f"sync_times_{exp}.png"), f"synchronised times {exp}")
    comparisons = compiled_comparisons(labels)
    if not comparisons:
        return lines
    figure, axes = new_figure(f"Speedups on synchronised rollout and update — {exp} ({scope(rows)})\n"
                              "points: seeds, black line: geometric mean", len(SYNC_METRICS), **layout)
    for ax, metric in zip(axes, SYNC_METRICS):
        draw_speedup_strips(ax, categories, [name for name, _, _ in comparisons],
                            speedups_by_category(rows, category_field, categories, comparisons, metric))
        ax.set(title=sweep.names[metric], ylabel="speedup of A over B (time_B / time_A)")
    return lines + image(save_figure(figure, out, f"sync_speedups_{exp}.png"), f"synchronised speedups {exp}")


def section_memory(sweep, out):
    """Table: every experiment's peak memory per variant and model size, the host's peak RSS (memory/peak_rss_bytes)
    and the device's peak (memory/peak_bytes) where runs logged one; chart: the device's peak of the runs of the
    experiments of the reference length (Experiment.shared_windows; a section of another may give it per run)."""
    if not sweep.rows:
        return []
    lines = [heading(sweep, "Peak memory"), ""]
    cells = {}
    for exp in sorted({row["exp"] for row in sweep.rows}):
        rows = where(sweep.rows, exp=exp)
        for label, size in itertools.product(ordered((row["label"] for row in rows), LABEL_COLORS),
                                             ordered((row["size"] for row in rows), SIZES)):
            cells.update({(exp, label, size): cell} if (cell := where(rows, label=label, size=size)) else {})
    header, values = memory_columns(cells)
    table = [[exp, label, size, len(cell), *values[exp, label, size]] for (exp, label, size), cell in cells.items()]
    lines += ["Medians over each cell's runs (envs × seeds) of each run's peak.", ""]
    lines += markdown_table(["experiment", "variant (mode)", "model size", "runs", *header], table)
    rows = [row for row in sweep.rows if shares_windows(row["exp"]) and not math.isnan(row["peak_memory_bytes"])]
    if not rows:
        return lines + ["No run logged `memory/peak_bytes` (the frameworks report it only on some devices, e.g. "
                        "GPUs).", ""]
    rows = [{**row, "peak_memory_mib": row["peak_memory_bytes"] / 2**20} for row in rows]
    sizes = ordered((row["size"] for row in rows), SIZES)
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    shared = [experiment.name for experiment in ALL if experiment.shared_windows and not experiment.prepares]
    figure, axes = new_figure(f"Peak device memory (memory/peak_bytes) — {shared[0]} to {shared[-1]} ({scope(rows)})\n"
                              "points: median over runs, whiskers: min–max", 1, panel_size=(8, 4.4))
    draw_points(axes[0], sizes, labels, values_by(rows, "size", sizes, labels, "peak_memory_mib"))
    log_axis(axes[0], "y", " MiB")
    axes[0].set(xlabel="model size", ylabel="peak device memory")
    return lines + image(save_figure(figure, out, "memory.png"), "peak device memory")
