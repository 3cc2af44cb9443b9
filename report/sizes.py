"""exp7: does the ranking hold at every model size; how each gap moves with the size, seeds beside envs, the rollout's
share per size (the ranking machinery is standings.py's)."""

import math
from collections import defaultdict

import numpy as np

from sweep.experiments import EXP7, GRID_ENVS, SIZES
from report.charts import category_axis, colors_for, log_axis, new_figure, save_figure, series_offsets
from report.load import window_names
from report.palette import colors_for, marker_of
from report.settings import KEEPS_UP, SYNC_METRICS
from report.standings import ranking_bullets, ranking_lines, size_rankings
from report.stats import by_env, geometric_mean, median, metric_values, paired_labels, rows_of, where
from report.summary import ordered
from report.text import (
    Answer, empty_window_lines, heading, image, listed, markdown_table, percent_text, relative_text, seconds_text,
    speedup_text,
)

# the labels it ranks at each model size, in the ranking's order: the fully compiled variants, then the others beside
# them (a label beyond these is ranked after them, by name)
SIZE_LABELS = EXP7.ranked


def size_trend_chart(rankings, out):
    """Chart (exp7): one panel, x the model size, y each variant's steady iteration relative to that size's fastest
    (log; geometric mean over envs and seeds, bars its interval), one line per variant: how each gap moves with size."""
    figure, (ax,) = new_figure("How the gap to the fastest moves with the model size — exp7 (async)\npoints: steady "
                               "iteration relative to that size's fastest, geometric mean over envs and seeds; bars: "
                               "interval (95% CI, or range with few envs)", 1, panel_size=(7.5, 5.0))
    labels = ordered((standing.label for ranking in rankings for standing in ranking.table), SIZE_LABELS)
    colors = colors_for(labels)
    offsets, _ = series_offsets(len(labels), group_width=0.3)
    for offset, label in zip(offsets, labels):
        points = [(x + offset, standing.steady) for x, ranking in enumerate(rankings) for standing in ranking.table
                  if standing.label == label and not math.isnan(standing.steady[0])]
        if not points:
            continue
        xs, values = zip(*points)
        means = [mean for mean, _ in values]
        errors = np.array([[0, 0] if math.isnan(low) else [mean - low, high - mean] for mean, (low, high, _) in values])
        ax.errorbar(xs, means, yerr=errors.T, color=colors[label], marker=marker_of(label), markersize=5, linewidth=1.5, capsize=3,
                    label=label)
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    log_axis(ax, "y", "×")
    category_axis(ax, [f"{ranking.size} ({ranking.steady_name})" for ranking in rankings])
    ax.set(xlabel="model size (steady window)", ylabel="steady iteration / that size's fastest")
    ax.grid(axis="y", which="major", alpha=0.3)
    return save_figure(figure, out, "ranking_sizes.png")


def section_sizes(sweep, out):
    """exp7's answer: per model size, its variants (SIZE_LABELS) ranked as the ranking ranks the fully compiled ones,
    how each one's gap to the fastest moves with the size, the spread over seeds beside the spread over envs, and the
    rollout's share of the iteration per size (the synchronised runs). Each size's windows are named from its own
    runs."""
    rows = rows_of(sweep.rows, "exp7")
    if not rows:
        return Answer([], [])
    lines = [heading(sweep, "Does the ranking hold at every model size? (exp7)"), ""]
    rankings = [ranking for ranking in size_rankings(where(rows, timing="async"), SIZE_LABELS)
                if len(ranking.table) > 1]
    if not rankings:
        return Answer(lines + ["Skipped: no model size has two variants of exp7.", ""],
                      [("exp7", "no ranking: no model size has two variants")])
    longest = max(ranking.length for ranking in rankings)
    reduced = [f"{ranking.size} ({ranking.length} iterations)" for ranking in rankings if ranking.length < longest]
    if reduced:
        lines += [f"- *Reduced workload:* the {listed(reduced)} runs are shorter than the others, so their totals "
                  "weigh iteration 0 more.",
                  "- Totals are compared within a size, never across sizes; the trend across sizes below is the steady "
                  "state's.", ""]
    lines += empty_window_lines([row for ranking in rankings for row in ranking.rows], ("iter8_99_median_s",))
    lines += image(size_trend_chart(rankings, out), "steady iteration relative to each size's fastest")
    lines += ranking_lines(rankings) + size_trend_lines(rankings) + seed_spread_lines(rankings)
    lines += size_share_lines(where(rows, timing="sync"))
    trend = size_spreads(rankings)
    bullets = ranking_bullets(rankings, "exp7")
    if len(trend) > 1:
        bullets.append(("exp7 · across sizes", f"the slowest variant's steady state over the fastest's: "
                                               f"{spread_path(trend)}; the gap {spread_direction(trend)}"))
    return Answer(lines, bullets)


def size_spreads(rankings):
    """{size: the slowest variant's steady state relative to that size's fastest} of the sizes where every variant
    has a steady state."""
    return {ranking.size: max(standing.steady[0] for standing in ranking.table) for ranking in rankings
            if not any(math.isnan(standing.steady[0]) for standing in ranking.table)}


def spread_path(spreads):
    """'2.57× (small) → 1.69× (medium) → 1.22× (large)'."""
    return " → ".join(f"{spread:.2f}× ({size})" for size, spread in spreads.items())


def spread_direction(spreads):
    """'narrows' or 'widens' from the first size to the last."""
    first, last = list(spreads.values())[0], list(spreads.values())[-1]
    return "narrows" if last < first else "widens"


def size_trend_lines(rankings):
    """How each variant's steady state relative to the fastest moves from one size to the next, with a conclusion on
    the spread between the slowest and the fastest variant per size."""
    if len(rankings) < 2:
        return []
    labels = ordered((standing.label for ranking in rankings for standing in ranking.table), SIZE_LABELS)
    by_size = [{standing.label: standing for standing in ranking.table} for ranking in rankings]
    table = [[label] + [relative_text(sized[label].steady) if label in sized else "–" for sized in by_size]
             for label in labels]
    lines = ["**How the gap moves with the model size** (each variant's steady state relative to the fastest of its "
             "size, geometric mean over envs and seeds, as in the table above):", ""]
    lines += markdown_table(["variant (mode)"] + [ranking.size for ranking in rankings], table)
    gaps = {label: {ranking.size: sized[label].steady[0] for ranking, sized in zip(rankings, by_size)
                    if label in sized and not math.isnan(sized[label].steady[0])} for label in labels}
    lines += [gap_move_text(label, by_size) for label, by_size in gaps.items() if len(by_size) > 1]
    spreads = size_spreads(rankings)
    if len(spreads) < 2:
        return lines + [""]
    first, last = list(spreads)[0], list(spreads)[-1]
    moves = listed([f"{spread:.2f}× at {size}" for size, spread in spreads.items()])
    return lines + [f"- The slowest variant's steady state is {moves} the fastest's: the gap between the frameworks "
                    f"{spread_direction(spreads)} from {first} to {last}.", ""]


def gap_move_text(label, by_size):
    """One variant's steady state relative to each size's fastest, from the smallest size to the largest, and whether
    its gap narrows or widens as the model grows, or stays within KEEPS_UP× of the fastest at every size."""
    path = " → ".join(f"{gap:.2f}× ({size})" for size, gap in by_size.items())
    gaps = list(by_size.values())
    if max(gaps) <= KEEPS_UP:
        return f"- {label}: {path}: within {KEEPS_UP - 1:.0%} of the fastest at every size."
    direction = "narrows" if gaps[-1] < gaps[0] else "widens" if gaps[-1] > gaps[0] else "ends where it started"
    return f"- {label}: {path}: its gap to the fastest {direction} as the model grows."


def seed_spread_lines(rankings):
    """Per size with repeats: each variant's steady state relative to the fastest, its spread over the envs (the min
    and max of the envs' geometric means over seeds) beside its spread over seeds (the widest env's min to max)."""
    table = []
    for ranking in rankings:
        if len({row["seed"] for row in ranking.rows}) < 2:
            continue
        for standing in ranking.table:
            pairs = paired_labels(ranking.rows, ranking.fastest_steady, standing.label, "iter8_99_median_s")
            per_env = [sorted(group) for group in by_env(pairs)]  # each speedup: its time / the fastest's
            if not per_env:
                continue
            envs = [geometric_mean(ratios) for ratios in per_env]
            widest = max(per_env, key=lambda ratios: ratios[-1] / ratios[0])
            table.append([ranking.size, standing.label, speedup_text(geometric_mean(envs)),
                          f"{min(envs):.2f}–{max(envs):.2f}×", f"{widest[0]:.2f}–{widest[-1]:.2f}×",
                          max(len(ratios) for ratios in per_env)])
    if not table:
        return []
    lines = ["**Run-to-run spread beside env-to-env spread** (steady state relative to the fastest, paired by env "
             "and seed):", "",
             "- over envs: the range of each env's geometric mean over seeds;",
             "- over seeds: the range within the env whose seeds differ most.", ""]
    return lines + markdown_table(["model size", "variant (mode)", "relative (geo. mean)", "over envs",
                                   "over seeds (widest env)", "seeds"], table)


def size_share_lines(rows):
    """The synchronised exp7 runs: per size and variant, the rollout and the update (medians over seeds of each run's
    steady-window median) and the rollout's share of the two."""
    table, shares = [], defaultdict(dict)
    sizes = ordered((row["size"] for row in rows), SIZES)
    for size in sizes:
        sized = where(rows, size=size)
        steady = window_names([row["run"] for row in sized])["iter8_99_median_s"]
        for label in ordered((row["label"] for row in sized), SIZE_LABELS):
            rollout, update = (median(metric_values(where(sized, label=label), metric)) for metric in SYNC_METRICS)
            share = rollout / (rollout + update)
            if not math.isnan(share):
                shares[label][size] = share
            table.append([size, label, steady, seconds_text(rollout), seconds_text(update), percent_text(share, "")])
    if not table:
        return []
    envs = listed(ordered((row["env"] for row in rows), GRID_ENVS))
    lines = [f"**Rollout and update per model size** (the synchronised runs on {envs}; medians over seeds of each "
             "run's median over its steady window):", ""]
    lines += markdown_table(["model size", "variant (mode)", "window", "rollout (s)", "update (s)", "rollout share"],
                            table)
    share_text = lambda by_size: " → ".join(f"{percent_text(share, '')} ({size})" for size, share in by_size.items())
    moves = [f"  - {label}: {share_text(by_size)}" for label, by_size in shares.items() if len(by_size) > 1]
    return lines + (["- The rollout's share of the iteration by model size:", *moves, ""] if moves else [])
