"""exp1's answer: per model size, the fully compiled variants ranked, with intervals, break-even and
conclusions (the ranking machinery it shares with the ranking per model size is standings.py's)."""

import math

from report.charts import log_axis, new_figure, save_figure
from report.messages import warn
from report.palette import colors_for, marker_of
from report.settings import FULLY_COMPILED, LABEL_COLORS
from report.standings import ranking_bullets, ranking_lines, size_rankings
from report.stats import rows_of
from report.summary import ordered
from report.text import Answer, empty_window_lines, heading, image


def ranking_chart(rankings, out, exp, name):
    """Chart: per model size, each variant's total and steady-state time relative to the fastest, with intervals."""
    figure, axes = new_figure(f"Which variant is fastest? Time relative to the fastest variant per model size ({exp})\n"
                              "points: geometric mean over envs (and seeds); bars: interval (95% CI, or range with few "
                              "envs)", len(rankings),
                              panel_size=(6, 0.5 * max(len(ranking.table) for ranking in rankings) + 1.8))
    colors = colors_for(LABEL_COLORS)
    for ax, ranking in zip(axes, rankings):
        fills = ((True, "total (filled)"), (False, f"{ranking.steady_name} (hollow)"))
        for y, standing in enumerate(ranking.table):
            color = colors[standing.label]
            for offset, value, (filled, _) in zip((-0.12, 0.12), (standing.total, standing.steady), fills):
                mean, (low, high, _) = value
                xerr = None if math.isnan(low) else [[mean - low], [high - mean]]
                ax.errorbar([mean], [y + offset], xerr=xerr, marker=marker_of(standing.label), markersize=6, capsize=3,
                            linestyle="none", color=color, markerfacecolor=color if filled else "white")
        for filled, what in fills:
            ax.plot([], [], marker="o", linestyle="none", color="black",
                    markerfacecolor="black" if filled else "white", label=what)
        ax.set_yticks(range(len(ranking.table)), [standing.label for standing in ranking.table])
        ax.set_ylim(len(ranking.table) - 0.5, -0.5)
        ax.axvline(1.0, color="grey", linestyle="--", linewidth=0.8)
        log_axis(ax, "x", "×")
        ax.set(title=f"model size: {ranking.size} ({ranking.length} iterations)",
               xlabel="time relative to the fastest (1× = fastest)")
        ax.grid(axis="x", which="major", alpha=0.3)
    return save_figure(figure, out, name)


def section_ranking(sweep, out):
    """The answer first: per model size, the fully compiled variants ranked, with intervals, break-even and conclusions."""
    if not rows_of(sweep.rows, "exp1"):
        return Answer([], [])
    rows = [row for row in rows_of(sweep.rows, "exp1") if row["label"] in FULLY_COMPILED]
    lines = [heading(sweep, "Which variant is fastest? (exp1, fully compiled variants)"), ""]
    labels = ordered((row["label"] for row in rows), FULLY_COMPILED)
    if len(labels) < 2:
        warn("skipping ranking.png: fewer than two fully compiled variants in exp1")
        return Answer(lines + ["Skipped: fewer than two fully compiled variants in exp1.", ""],
                      [("exp1", "no ranking: fewer than two fully compiled variants ran")])
    rankings = size_rankings(rows, FULLY_COMPILED, sweep.names["iter8_99_median_s"])
    lines += empty_window_lines([row for ranking in rankings for row in ranking.rows], ("iter8_99_median_s",))
    lines += image(ranking_chart(rankings, out, "exp1", "ranking.png"), "ranking of the fully compiled variants")
    return Answer(lines + ranking_lines(rankings), ranking_bullets(rankings, "exp1"))
