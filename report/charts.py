"""The drawing the sections share: figures, axes, points and strips, colours."""

import math
import re

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.category import StrCategoryFormatter
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox
from matplotlib.ticker import FixedFormatter, FixedLocator, FuncFormatter, LogLocator, NullFormatter

from report.messages import warn
from report.palette import colors_for, edge_color, marker_of
from report.settings import DPI
from report.stats import geometric_mean


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
    figure = Figure(figsize=(width, height), layout=None if fixed_margins else "constrained", dpi=DPI)
    FigureCanvasAgg(figure)  # one renderer (at the saved DPI) draws the figure and measures it for chart_problems
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

    For one machine kind of a sweep of several, the name gets the kind's suffix and the title the kind's name. Below
    the panels of a fixed-margin figure the legend gets the room it needs; each value axis reaches the labelled ticks
    around its points (enclose_in_ticks); what chart_problems still finds once drawn is one warning line each
    ('warning: chart problem: <name>: ...', which tools/regenerate_reports.py --check fails on).
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
        legend = figure.legend(handles.values(), handles.keys(), loc=location, ncols=columns, markerscale=1.5)
        if not figure.get_layout_engine():
            room_for_legend(figure, legend)
    for ax in figure.axes:
        enclose_in_ticks(ax)
        for axis in (ax.xaxis, ax.yaxis):
            say_log_scale(axis)
    figure.savefig(out.path / name, dpi=DPI, pil_kwargs={"compress_level": 3})  # faster than zlib's default 6
    for problem in chart_problems(figure):
        warn(f"chart problem: {name}: {problem}")
    print(f"  wrote {name}", flush=True)
    return name


def renderer_of(figure):
    """A renderer that measures the figure's texts (an Agg canvas is attached where the figure has none)."""
    canvas = figure.canvas if hasattr(figure.canvas, "get_renderer") else FigureCanvasAgg(figure)
    return canvas.get_renderer()


def room_for_legend(figure, legend):
    """Makes a fixed-margin figure taller, below its panels, until its bottom legend clears the lowest axes' tick
    labels and axis labels (the panels keep their size)."""
    renderer = renderer_of(figure)
    boxes = [box for ax in figure.axes if ax.get_visible()
             for box in (ax.bbox, ax.xaxis.get_tightbbox(renderer)) if box]
    lowest = min(box.y0 for box in boxes)
    overlap = legend.get_window_extent(renderer).y1 + 0.1 * figure.dpi - lowest  # pixels, with a 0.1 in gap
    if overlap <= 0:
        return
    width, height = figure.get_size_inches()
    extra = overlap / figure.dpi
    parameters = figure.subplotpars
    figure.set_size_inches(width, height + extra)
    figure.subplots_adjust(bottom=(parameters.bottom * height + extra) / (height + extra),
                           top=1 - (1 - parameters.top) * height / (height + extra))


def is_category_axis(axis):
    """Whether an axis names categories (ticks fixed where the chart put them, labelled with names, e.g. by
    category_axis) rather than showing values through a locator's ticks."""
    return (isinstance(axis.get_major_locator(), FixedLocator)
            or isinstance(axis.get_major_formatter(), (FixedFormatter, StrCategoryFormatter)))


def axis_fractions(axis, values):
    """Where values lie along the axis' view: 0 at its lower limit, 1 at its upper one (in the axis' scale; a value
    a log axis cannot show lies far below 0)."""
    scale = axis.get_transform()
    low, high = scale.transform(np.sort(axis.get_view_interval()))
    return (scale.transform(np.asarray(values, dtype=float)) - low) / (high - low)


def data_points(ax):
    """The points ax plots: (its label, {'x': values, 'y': values}) per visible line (errorbar caps included),
    whisker/segment collection and scatter, only the coordinates given in data units (not an axhline's x)."""
    drawn = [(line, line.get_xydata(), line.get_transform()) for line in ax.get_lines()]
    for collection in ax.collections:
        if isinstance(collection, LineCollection):
            segments = collection.get_segments()
            drawn.append((collection, np.concatenate(segments) if segments else np.empty((0, 2)),
                          collection.get_transform()))
        elif isinstance(collection, PathCollection):
            drawn.append((collection, collection.get_offsets(), collection.get_offset_transform()))
    points = []
    for artist, xy, transform in drawn:
        xy = np.ma.filled(np.ma.asarray(xy, dtype=float), np.nan).reshape(-1, 2)
        xy = xy[np.isfinite(xy).all(axis=1)]
        if not artist.get_visible() or not xy.size:
            continue
        in_data = transform.contains_branch_separately(ax.transData)
        points.append((artist.get_label(), {which: xy[:, column] for column, which in enumerate("xy")
                                            if in_data[column]}))
    return points


def labelled_ticks(axis):
    """The view fractions of the axis' major ticks that carry a label and lie inside its view."""
    locations = axis.get_majorticklocs()
    if not len(locations):
        return np.array([])
    texts = axis.get_major_formatter().format_ticks(locations)
    fractions = axis_fractions(axis, locations)
    return np.array([fraction for fraction, text in zip(fractions, texts)
                     if text.strip() and -TOLERANCE <= fraction <= 1 + TOLERANCE])


# How far (a fraction of the axis) a point may lie past a limit or the outermost labelled tick: rounding only.
TOLERANCE = 2e-3


def enclose_in_ticks(ax):
    """Extends each value axis (not a category axis) to the next major tick beyond its outermost data point, so
    that every point lies between two labelled ticks and its value can be read."""
    for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        values = np.concatenate([axes.get(which, []) for _, axes in data_points(ax)] + [[]])
        if is_category_axis(axis) or not values.size or not len(axis.get_majorticklocs()):
            continue
        values = values[(axis_fractions(axis, values) >= -TOLERANCE) & (axis_fractions(axis, values) <= 1 + TOLERANCE)]
        if not values.size:
            continue
        for _ in range(5):  # the locator picks new ticks for new limits: a few rounds settle
            ticks = labelled_ticks(axis)
            fractions = axis_fractions(axis, [values.min(), values.max()])
            if ticks.size and ticks.min() <= fractions[0] + TOLERANCE and fractions[1] <= ticks.max() + TOLERANCE:
                break
            inverted = getattr(ax, f"{which}axis_inverted")()
            low, high = np.sort(axis.get_view_interval())
            low = min(low, nearest_tick(axis, values.min(), below=True))
            high = max(high, nearest_tick(axis, values.max(), below=False))
            getattr(ax, f"set_{which}lim")((high, low) if inverted else (low, high))


def nearest_tick(axis, value, below):
    """The axis locator's nearest tick at or below (or above) value, looked for in ever wider views around the
    current one (a locator gives few ticks beyond its view); the value itself if none is found."""
    scale = axis.get_transform()
    ends = scale.transform(np.sort(axis.get_view_interval()))
    for widen in (0, 0.25, 0.5, 1, 2):
        around = scale.inverted().transform(ends + np.array([-widen, widen]) * (ends[1] - ends[0]))
        # the axis' own ticks first: a locator may pick others for limits a rounding error away (LogLocator falls
        # back to linear ticks when its view holds a single tick)
        locations = axis.get_majorticklocs() if not widen else np.asarray(axis.get_major_locator().tick_values(*around))
        found = locations[locations <= value] if below else locations[locations >= value]
        if found.size:
            return found.max() if below else found.min()
    return value


def point_problems(ax, panel):
    """Data points outside ax's view, and on a value axis beyond its outermost labelled tick: a line per kind and
    axis, with the series and a few of the values."""
    problems = []
    for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        series = [(label, values[which]) for label, values in data_points(ax) if which in values]
        ticks = labelled_ticks(axis) if series and not is_category_axis(axis) else None
        found = {"outside the limits": ([], []), "beyond the outermost labelled tick": ([], [])}
        for label, values in series:
            fractions = axis_fractions(axis, values)
            outside = (fractions < -TOLERANCE) | (fractions > 1 + TOLERANCE)
            beyond = np.zeros(len(values), dtype=bool)
            if ticks is not None:
                beyond = ~outside & ((fractions < ticks.min() - TOLERANCE) | (fractions > ticks.max() + TOLERANCE)
                                     if ticks.size else True)
            for kind, selected in (("outside the limits", outside), ("beyond the outermost labelled tick", beyond)):
                if selected.any():
                    found[kind][0].append(label if not label.startswith("_") else "unlabelled")
                    found[kind][1].extend(values[selected])
        for kind, (labels, values) in found.items():
            if values:
                shown = ", ".join(f"{value:.4g}" for value in sorted(set(values))[:4])
                problems.append(f"{panel}: {len(values)} point(s) {kind} of the {which} axis ({shown}; series: "
                                f"{', '.join(dict.fromkeys(labels))})")
    return problems


def visible_texts(figure):
    """(what, Text) of every tick label, axis label and panel title shown, and of the figure's texts (its title)."""
    texts = [("the title", text) for text in figure.texts]
    for ax in figure.axes:
        if not ax.get_visible():
            continue
        panel = ax.get_title() or "a panel"
        texts += [(f"{panel}'s {which} axis label", axis.label) for which, axis in (("x", ax.xaxis), ("y", ax.yaxis))]
        texts.append((f"{panel}'s title", ax.title))
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            axis.get_majorticklabels()  # brings the ticks up to date
            for ticks, locations in ((axis.get_major_ticks(), axis.get_majorticklocs()),
                                     (axis.get_minor_ticks(), axis.get_minorticklocs())):
                inside = axis_fractions(axis, locations) if len(locations) else []
                texts += [(f"{panel}'s {which} tick label", label) for tick, fraction in zip(ticks, inside)
                          if -TOLERANCE <= fraction <= 1 + TOLERANCE for label in (tick.label1, tick.label2)]
    return [(what, text) for what, text in texts if text.get_visible() and text.get_text().strip()]


def legend_problems(figure, renderer):
    """Legends whose box overlaps a tick label, an axis label, a panel title or the figure's title."""
    legends = list(figure.legends) + [ax.get_legend() for ax in figure.axes if ax.get_legend()]
    problems = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        covered = []
        for what, text in visible_texts(figure):
            overlap = Bbox.intersection(box, text.get_window_extent(renderer))
            if overlap is not None and overlap.width > 1 and overlap.height > 1:
                covered.append(f"{what} '{text.get_text()}'")
        if covered:
            problems.append(f"the legend covers {len(covered)} label(s): {', '.join(dict.fromkeys(covered[:3]))}")
    return problems


def say_log_scale(axis):
    """Makes a log axis' label say so: 'time (s)' becomes 'time (s, log scale)', 'time' 'time (log scale)'."""
    label = axis.get_label_text()
    if axis.get_scale() != "log" or not label or "log" in label:
        return
    axis.set_label_text(f"{label[:-1]}, log scale)" if label.endswith(")") else f"{label} (log scale)")


# a tick label that carries its unit ('2×', '0.5 s', '40%'), not a bare number in mathtext ('$\\mathdefault{10^{0}}$')
UNIT_TICK = re.compile(r"\d\s*[^\d\s.,−${}^-]+$")


def axis_problems(ax, panel):
    """A value axis (not categories) with points but no label naming its metric, with neither a unit in its label
    (in parentheses: 'time (s)', 'number of envs (log₂ scale)') nor one on its tick labels ('2×', '0.5 s'), or on a
    log scale without its label saying so."""
    problems = []
    plotted = {which for _, values in data_points(ax) for which in values}
    for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
        if which not in plotted or is_category_axis(axis):
            continue
        label = axis.get_label_text()
        ticks = axis.get_major_formatter().format_ticks(axis.get_majorticklocs())
        if not label.strip():
            problems.append(f"{panel}: the {which} axis names no metric")
        elif "(" not in label and not any(UNIT_TICK.search(tick) for tick in ticks):
            problems.append(f"{panel}: the {which} axis '{label}' names no unit")
        if axis.get_scale() == "log" and "log" not in label:
            problems.append(f"{panel}: the {which} axis is on a log scale and its label does not say so")
    return problems


def chart_problems(figure):
    """What makes a drawn figure misleading or unreadable, one line each: a data point (line, errorbar point or
    whisker end, scatter point) outside its axes' limits; on a value axis (log or numeric, not categories) a point
    beyond the outermost labelled major tick, whose value cannot be read; a value axis that names no metric, no unit,
    or is on a log scale without saying so (axis_problems); a legend over a tick label, an axis label, a panel title
    or the figure's title (their bounding boxes). Call it after the layout is drawn (savefig)."""
    problems = []
    for number, ax in enumerate(figure.axes, 1):
        if ax.get_visible():
            title = ax.get_title().splitlines()[0] if ax.get_title() else ""
            panel = f"panel '{title}'" if title else f"panel {number}"
            problems += point_problems(ax, panel) + axis_problems(ax, panel)
    return problems + legend_problems(figure, renderer_of(figure))


def log_axis(ax, which, unit):
    """Log scale on ax's 'x' or 'y' axis (after plotting) with plain-number ticks and a unit, e.g. '0.5 s', '2×'."""
    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    low, high = getattr(ax, f"get_{which}lim")()
    # Ticks at 1-2-5 per decade; within less than a factor 4 these would leave the axis nearly bare: finer ones (the
    # next of which is near when save_figure extends the axis to the ticks around its points); over many decades
    # they crowd it: 1-3 from 2.5 decades, decades alone from 5.
    decades = math.log10(high / low)
    subs = ((1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8) if high / low < 4 else (1, 2, 5) if decades < 2.5
            else (1, 3) if decades < 5 else (1,))
    axis.set_major_locator(LogLocator(subs=subs))
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
                    marker=marker_of(name), markersize=5, linestyle="none", elinewidth=1, capsize=2)
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
            ax.scatter(centre + jitter.uniform(-width / 4, width / 4, len(values)), values, marker=marker_of(name),
                       s=40, alpha=0.9,
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
    """A log₂ x axis ticked at the counts (numbers of envs or agents), labelled with name and its scale."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts, [f"{count:,}" for count in counts])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(f"{name} (log₂ scale)")
