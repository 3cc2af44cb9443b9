"""The drawing the sections share: figures, axes, points and strips, colours."""

import itertools
import math

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from report.settings import DPI, LABEL_COLORS, OTHER_COLORS
from report.stats import geometric_mean


def colors_for(names):
    """A fixed colour per variant label ('A over B': A's colour); any other series (sweeps) from OTHER_COLORS."""
    others = itertools.cycle(OTHER_COLORS)
    return {name: LABEL_COLORS.get(name.split(" over ")[0]) or next(others) for name in names}


def edge_color(name):
    """B's colour for a comparison 'A over B' (the points' outline), else None."""
    return LABEL_COLORS.get(name.split(" over ")[1]) if " over " in name else None


def new_figure(title, panels, ncols=None, panel_size=(4.8, 3.8), fixed_margins=False):
    """A figure with a title and a grid of panels (axes returned flat, extras hidden).

    Constrained layout by default; fixed_margins suits large grids of alike panels and saves its extra
    layout pass, which is most of the drawing time of a 12-panel figure.
    """
    ncols = ncols or panels
    nrows = math.ceil(panels / ncols)
    title_width = 0.09 * max(map(len, title.splitlines())) + 0.5  # inches, ~0.09 per character of the title
    top, bottom = (1.0, 1.4) if fixed_margins else (0.3, 0.3)  # inches: title above; axis labels and legend below
    width, height = max(panel_size[0] * ncols, title_width), panel_size[1] * nrows + top + bottom
    figure = Figure(figsize=(width, height), layout=None if fixed_margins else "constrained")
    if fixed_margins:
        figure.subplots_adjust(left=0.8 / width, right=1 - 0.25 / width, top=1 - top / height, bottom=bottom / height,
                               wspace=0.3, hspace=0.55)
    axes = figure.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[panels:]:
        ax.set_visible(False)
    figure.suptitle(title)
    return figure, axes[:panels]


def save_figure(figure, out, name):
    """Adds one legend for all panels, writes the figure into the ChartFolder out and returns its file name.

    For one machine kind of a sweep of several, the name gets the kind's suffix and the title the kind's name.
    """
    name = name.replace(".png", f"{out.suffix}.png")
    if out.machine:
        figure.suptitle(f"{figure.get_suptitle()}\n{out.machine}")
    handles = {}
    for ax in figure.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        columns_that_fit = int(figure.get_figwidth() / (0.08 * max(map(len, handles)) + 0.6))  # ~0.08 in per character
        location = "outside lower center" if figure.get_layout_engine() else "lower center"
        columns = max(1, min(len(handles), 5, columns_that_fit))
        figure.legend(handles.values(), handles.keys(), loc=location, ncols=columns, markerscale=1.5)
    figure.savefig(out.path / name, dpi=DPI, pil_kwargs={"compress_level": 3})  # faster than zlib's default 6
    print(f"  wrote {name}", flush=True)
    return name


def log_axis(ax, which, unit):
    """Log scale on ax's 'x' or 'y' axis (after plotting) with plain-number ticks and a unit, e.g. '0.5 s', '2×'."""
    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    low, high = getattr(ax, f"get_{which}lim")()
    # Within less than a factor 4, decade ticks would leave the axis nearly bare: use evenly spaced ones.
    narrow = high / low < 4
    axis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]) if narrow else LogLocator(subs=(1, 2, 5)))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}{unit}"))
    axis.set_minor_formatter(NullFormatter())


def category_axis(ax, categories):
    """Category names as x tick labels, slanted when they are long."""
    long_names = max(map(len, categories)) > 8
    ax.set_xticks(range(len(categories)), categories, rotation=30 if long_names else 0,
                  ha="right" if long_names else "center")
    ax.set_xlim(-0.5, len(categories) - 0.5)


def series_offsets(count, group_width=0.8):
    """x offsets of count series within a category group, and the width of each."""
    width = group_width / count
    return (np.arange(count) - (count - 1) / 2) * width, width


def empty_panel(ax, text):
    """Writes text in the middle of a panel that has nothing to draw."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=9, color="dimgrey")
    ax.tick_params(axis="y", left=False, labelleft=False)


def min_max_whiskers(centres, cells):
    """errorbar's yerr from each centre down to its cell's minimum and up to its maximum."""
    return [centres - [cell.min() for cell in cells], [cell.max() for cell in cells] - centres]


def draw_points(ax, categories, series, values, colors=None):
    """Median of values[(category, series)] as a point with min–max whiskers, grouped by category, log seconds.

    Points, not bars: on a log axis a bar's length depends on where the axis starts and means nothing.
    """
    colors = colors or colors_for(series)
    offsets, _ = series_offsets(len(series))
    drawn = False
    for offset, name in zip(offsets, series):
        cells = [(x, np.array(values[category, name]))
                 for x, category in enumerate(categories) if values.get((category, name))]
        if not cells:
            continue
        drawn = True
        medians = np.array([np.median(cell) for _, cell in cells])
        whiskers = min_max_whiskers(medians, [cell for _, cell in cells])
        ax.errorbar([x + offset for x, _ in cells], medians, yerr=whiskers, color=colors[name], label=name,
                    marker="o", markersize=5, linestyle="none", elinewidth=1, capsize=2)
    if drawn:
        log_axis(ax, "y", " s")
    else:
        empty_panel(ax, "no run has a value\nfor this window")
    category_axis(ax, categories)
    ax.grid(axis="y", which="major", alpha=0.3)


def draw_speedup_strips(ax, categories, series, speedups, colors=None, category_colors=None):
    """Each pair's speedups[(category, series)] as a point, their geometric mean as a black line; log y, 1× dashed.

    A comparison 'A over B' is filled with A's colour and outlined in B's; category_colors, when given, colours
    the points by category instead (e.g. a variant per category).
    """
    colors = colors or colors_for(series)
    offsets, width = series_offsets(len(series))
    jitter = np.random.default_rng(0)
    for offset, name in zip(offsets, series):
        labelled = False
        for x, category in enumerate(categories):
            values = speedups.get((category, name))
            if not values:
                continue
            centre = x + offset
            ax.hlines(geometric_mean(values), centre - width / 2, centre + width / 2, color="black", linewidth=1.5)
            edge = edge_color(name)
            ax.scatter(centre + jitter.uniform(-width / 4, width / 4, len(values)), values, s=40, alpha=0.9,
                       color=(category_colors or {}).get(category, colors[name]), edgecolors=edge or "none", linewidths=1.5 if edge else 0, zorder=3,
                       label=None if labelled else name)
            labelled = True
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8)
    if not any(speedups.get((category, name)) for category in categories for name in series):
        empty_panel(ax, "no pair of runs has a value\nfor this window")
    log_axis(ax, "y", "×")
    category_axis(ax, categories)
    ax.grid(axis="y", which="major", alpha=0.3)


def count_axis(ax, counts, name):
    """A log₂ x axis ticked at the counts (numbers of envs or agents) and labelled with name."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, [f"{count:,}" for count in counts])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(name)
