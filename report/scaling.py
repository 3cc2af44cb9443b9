"""exp5: how the cost grows with the number of envs, the cost model t(N) = a + b·N (cost_model.py's)."""

import math

import numpy as np
from matplotlib.ticker import FuncFormatter

from report.charts import count_axis, log_axis, new_figure, save_figure
from report.cost_model import cost_text, max_residual, scalings, time_at
from report.load import window_names
from report.palette import colors_for, marker_of
from report.settings import FIT_LEVEL, LABEL_COLORS, SYNC_METRICS, WITHIN_FASTEST
from report.stats import level_with_first, named_cells, per_env_workload, ranges_apart, rows_of, where
from report.summary import num_envs, num_steps, rank
from report.text import (
    Answer, empty_window_lines, heading, image, lead_names, lead_note, listed, markdown_table, mib_text, number_text,
    percent_text, seconds_text,
)


def seconds_at(scaling, n):
    """A Scaling's runs' times at n, one per seed."""
    return [seconds for m, seconds in scaling.points if m == n]


def shortest_at(table, n):
    """(Lead, its times, note) of the shortest time per iteration at n: the Lead (stats.level_with_first) of the
    Scalings that ran n envs by their median there, two apart where their ranges over seeds at n do not overlap; the
    median of its first, to that of the last level with it, in ms; and why no variant is named alone (lead_note)."""
    ran = sorted((scaling for scaling in table if n in scaling.ns), key=lambda scaling: time_at(scaling, n))
    lead = level_with_first(ran, lambda first, scaling: ranges_apart(seconds_at(first, n), seconds_at(scaling, n)))
    ms = lambda scaling: number_text(time_at(scaling, n) * 1e3)
    times = ms(lead.first) + (f"–{ms(lead.level[-1])}" if lead.level else "") + " ms"
    return lead, times, lead_note(lead, lambda scaling: scaling.label, "ranges over seeds overlap", "seed")


def within_ranges(ns, ratios, threshold=WITHIN_FASTEST):
    """The stretches of the measured n where ratio ≤ threshold, log ratio interpolated linearly in log n between
    measured n, never beyond them: [((low, interpolated?), (high, interpolated?))]."""
    excess = np.log(ratios) - math.log(threshold)  # ≤ 0: within
    ranges, start = [], (int(ns[0]), False) if excess[0] <= 0 else None
    for n0, n1, e0, e1 in zip(ns, ns[1:], excess, excess[1:]):
        if (e0 <= 0) == (e1 <= 0):
            continue
        crossing = math.exp(math.log(n0) + e0 / (e0 - e1) * (math.log(n1) - math.log(n0)))
        end = (int(n0), False) if e0 == 0 else (int(n1), False) if e1 == 0 else (crossing, True)
        if start is None:
            start = end
        else:
            ranges.append((start, end))
            start = None
    return ranges + [(start, (int(ns[-1]), False))] if start else ranges


def scaling_sps_chart(tables, steps, out, steady_name):
    """Chart: per exp5 cell, each variant's steady-state SPS against the number of envs (log-log), each run a point,
    the fitted cost model a line drawn over the measured numbers of envs only, its largest residual written beside."""
    figure, axes = new_figure("Steady-state env steps per second against the number of envs — exp5 (async)\n"
                              f"points: runs, SPS = N × num_steps / median of {steady_name}; lines: the fitted "
                              "t(N) = a + b·N, over the measured N only, with its largest residual", len(tables),
                              ncols=min(len(tables), 2), panel_size=(6.4, 4.6))
    colors = colors_for([scaling.label for table in tables.values() for scaling in table])
    for ax, (name, table) in zip(axes, tables.items()):
        residuals = []
        for scaling in table:
            ns, seconds = np.array(scaling.points, dtype=float).T
            ax.scatter(ns, ns * steps[name] / seconds, color=colors[scaling.label], marker=marker_of(scaling.label), s=25,
                       zorder=3, label=scaling.label)
            grid = np.geomspace(scaling.ns[0], scaling.ns[-1], 100)
            if scaling.fit and (scaling.fit.at(grid) > 0).all():
                ax.plot(grid, grid * steps[name] / scaling.fit.at(grid), color=colors[scaling.label], linewidth=1.5)
                residuals.append(f"{scaling.label}: {percent_text(max_residual(scaling.fit), '')}")
        if residuals:
            ax.text(0.02, 0.98, "fit's largest relative residual\n" + "\n".join(residuals), transform=ax.transAxes,
                    fontsize=7, va="top", bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0})
        count_axis(ax, sorted({int(n) for scaling in table for n in scaling.ns}), "number of envs N")
        log_axis(ax, "y", "")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value / 1e6:g}M" if value >= 1e6 else
                                                   f"{value / 1e3:g}k" if value >= 1e3 else f"{value:g}"))
        ax.set(title=name, ylabel="env steps per second (steady state)")
        ax.grid(which="major", alpha=0.3)
    return save_figure(figure, out, "scaling_sps.png")


def scaling_relative_chart(tables, out, steady_name):
    """Chart: per exp5 cell, each variant's median steady time relative to the fastest variant's at each number of
    envs, with the WITHIN_FASTEST line."""
    figure, axes = new_figure(f"Time per iteration relative to the fastest variant at each number of envs — exp5 "
                              f"(async, median of {steady_name})\npoints: measured N (median over seeds); dashed: "
                              f"{WITHIN_FASTEST}× the fastest", len(tables), ncols=min(len(tables), 2),
                              panel_size=(6.4, 4.6))
    colors = colors_for([scaling.label for table in tables.values() for scaling in table])
    for ax, (name, table) in zip(axes, tables.items()):
        for scaling in table:
            ax.plot(scaling.ns, scaling.relative, marker=marker_of(scaling.label), markersize=4, color=colors[scaling.label],
                    label=scaling.label)
        ax.axhline(WITHIN_FASTEST, color="grey", linestyle="--", linewidth=0.8)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        count_axis(ax, sorted({int(n) for scaling in table for n in scaling.ns}), "number of envs N")
        log_axis(ax, "y", "×")
        ax.set(title=name, ylabel="time per iteration / the fastest's")
        ax.grid(which="major", alpha=0.3)
    return save_figure(figure, out, "scaling_relative.png")


def span_text(ns):
    """The measured numbers of envs as a span: '8–2,048 envs', or 'N = 8' for one."""
    return f"N = {ns[0]:,}" if len(ns) == 1 else f"{ns[0]:,}–{ns[-1]:,} envs"


def within_text(scaling):
    """Where a variant comes within WITHIN_FASTEST× of the fastest, in words: measured stretches of N, interpolated
    ends marked ≈, or 'not in the measured range'."""
    ranges = within_ranges(scaling.ns, scaling.relative)
    if (scaling.relative == 1).all():
        return f"the fastest at every measured N ({span_text(scaling.ns)})"
    if not ranges:
        return f"not in the measured range ({span_text(scaling.ns)})"
    if ranges == [((scaling.ns[0], False), (scaling.ns[-1], False))]:
        return f"at every measured N ({span_text(scaling.ns)})"
    end = lambda point: f"≈{point[0]:,.0f}" if point[1] else f"{point[0]:,}"
    parts = [f"N = {end(low)}" if low == high else f"{end(low)}–{end(high)} envs" for low, high in ranges]
    interpolated = any(point[1] for stretch in ranges for point in stretch)
    return ", ".join(parts) + (" (≈: interpolated between measured N)" if interpolated else "")


def gap_text(scaling):
    """A variant's time relative to the fastest at its smallest and its largest N: '9.32× at 8 → 1.23× at 2,048'."""
    first, last = (float(value) for value in (scaling.relative[0], scaling.relative[-1]))
    if len(scaling.ns) == 1:
        return f"{first:.2f}× at {scaling.ns[0]:,}"
    return f"{first:.2f}× at {scaling.ns[0]:,} → {last:.2f}× at {scaling.ns[-1]:,}"


def scaling_conclusion(name, table):
    """The generated conclusion of one exp5 cell in one short line: the fastest at the smallest and the largest N, or
    those level with it (shortest_sentence; each variant's costs, gap to the fastest and where it comes within
    WITHIN_FASTEST× of it are in the table)."""
    ns = sorted({int(n) for scaling in table for n in scaling.ns})
    lead = f"**{name}** ({len(table)} variant{'s' * (len(table) > 1)}, {span_text(ns)}):"
    if len(table) == 1:
        return f"{lead} only {table[0].label} ran."
    return f"{lead} {shortest_sentence(table, ns[0], ns[-1])}"


def scaling_bullet(table):
    """The summary of one exp5 cell: who is fastest at the smallest and the largest N, or level (shortest_sentence; a
    lone variant: its costs)."""
    if len(table) == 1:
        fit = table[0].fit
        costs = f": a = {cost_text(fit, 'a', False)}, b = {cost_text(fit, 'b', False)} per env" if fit else ""
        return f"only {table[0].label} ran{costs}"
    ns = sorted({int(n) for scaling in table for n in scaling.ns})
    return shortest_sentence(table, ns[0], ns[-1]).removesuffix(".")


def shortest_sentence(table, first, last):
    """Which variant has the shortest time per iteration at the smallest and at the largest N of an exp5 cell, or
    which share it, or that one seed gives no interval (shortest_at); a note said at both ends is said once."""
    label = lambda scaling: scaling.label
    (lead, times, note), *rest = [shortest_at(table, n) for n in dict.fromkeys((first, last))]
    said = lambda text, why: f"({text}; {why})" if why else f"({text})"
    start = f"{lead_names(lead, label)} {'share' if lead.level else 'has'} the shortest time per iteration"
    if not rest:
        return f"{start} {said(times, note)}."
    [(other, other_times, other_note)] = rest
    if other_note != note:
        return (f"{start} at {first:,} envs {said(times, note)}, {lead_names(other, label)} at {last:,} envs "
                f"{said(other_times, other_note)}.")
    if lead_names(other, label) == lead_names(lead, label):
        return f"{start} at {first:,} and at {last:,} envs {said(f'{times} and {other_times}', note)}."
    return (f"{start} at {first:,} envs ({times}), {lead_names(other, label)} at {last:,} envs ({other_times})"
            + (f"; {note}." if note else "."))


def section_scaling(sweep, out):
    """exp5's answer: per env, each variant's cost model t(N) = a + b·N with the N at which it comes within
    WITHIN_FASTEST× of the fastest, two charts and generated conclusions; the sync runs' rollout and update; every run
    with its peak memory. Its windows are named from exp5's runs alone."""
    rows = rows_of(sweep.rows, "exp5")
    if not rows:
        return Answer([], [])
    steady = window_names([row["run"] for row in rows])["iter8_99_median_s"]
    lines = [heading(sweep, "How the cost grows with the number of envs (exp5)"), "",
             f"- Each run's steady time per iteration t is the median of its {steady}.",
             "- Per variant and env, t(N) = a + b·N is fitted over the measured numbers of envs N by least squares on "
             "relative error.",
             "- **a** is the fixed cost of an iteration whatever the batch (dispatch, host round trips, Python per "
             "step).",
             "- **b** is the cost of one more env (its steps, their forward passes and its share of the update).",
             f"- The intervals are {FIT_LEVEL:.0%} intervals from the fit's standard errors and Student's t with "
             "(runs − 2) degrees of freedom.",
             "- With one seed per N the residuals are the only spread: the intervals say how well a line fits these "
             "points, not how runs vary.",
             f"- 'Within {WITHIN_FASTEST}× of the fastest' compares the median at each measured N with the fastest "
             "variant's at that N; between measured N it is interpolated log-log (marked ≈), beyond them never.",
             "- 'Gap to the fastest': the variant's time over the fastest variant's, at its smallest and its largest "
             "N.",
             "- A conclusion names one variant shortest at an N only where its range over seeds there is apart from "
             "every other's; with one seed there is no interval.", ""]
    empty = empty_window_lines(rows, ("iter8_99_median_s",))
    cells = named_cells(where(rows, timing="async"), per_env_workload, sweep.env_order)
    tables = {name: table for name, table in ((name, scalings(cell)) for name, cell in cells.items()) if table}
    if not tables:  # one line: the empty window, or that no async run has a steady state
        lines += empty or [f"No cost model: no async exp5 run has a steady state ({steady}).", ""]
        return Answer(lines + scaling_run_lines(rows, {}, sweep.env_order, steady),
                      [("exp5", f"no cost model: no async run has a steady state ({steady})")])
    steps = {name: num_steps(cell[0]) for name, cell in cells.items()}
    lines += empty + scaling_model_lines(tables, steps, out, steady) + scaling_sync_lines(rows, sweep.env_order, steady)
    fits = {(name, scaling.label): scaling.fit for name, table in tables.items() for scaling in table}
    return Answer(lines + scaling_run_lines(rows, fits, sweep.env_order, steady),
                  [(f"exp5 · {name}", scaling_bullet(table)) for name, table in tables.items()])


def scaling_model_lines(tables, steps, out, steady):
    """The cost model of each exp5 cell: the two charts (the relative one only where an env has two variants to
    compare), the a/b table and the generated conclusions."""
    lines = image(scaling_sps_chart(tables, steps, out, steady), "steady-state SPS against the number of envs")
    if any(len(table) > 1 for table in tables.values()):
        lines += image(scaling_relative_chart(tables, out, steady),
                       "time relative to the fastest against the number of envs")
    else:
        variants = listed(sorted({scaling.label for table in tables.values() for scaling in table}))
        lines += [f"No chart of times relative to the fastest: every env ran one variant ({variants}), which would "
                  "only be compared with itself.", ""]
    table = [[name, scaling.label, len(scaling.points), "/".join(map(str, scaling.ns)), cost_text(scaling.fit, "a"),
              cost_text(scaling.fit, "b"), percent_text(max_residual(scaling.fit), ""), gap_text(scaling),
              within_text(scaling)]
             for name, cells in tables.items() for scaling in cells]
    header = ["env", "variant (mode)", "runs", "N measured", "a: fixed cost per iteration",
              "b: cost per env per iteration", "largest relative residual", "gap to the fastest",
              f"within {WITHIN_FASTEST}× of the fastest"]
    lines += markdown_table(header, table)
    conclusions = [scaling_conclusion(name, cells) for name, cells in tables.items()]
    return lines + ["**Conclusions** (generated from the numbers above):", ""] + [f"- {c}" for c in conclusions] + [""]


def scaling_sync_lines(rows, env_order, steady):
    """exp5's synchronised runs: rollout and update per variant and N, and a and b of each part."""
    sync = where(rows, timing="sync")
    if not sync:
        return []
    times, costs = [], []
    for name, cell in named_cells(sync, per_env_workload, env_order).items():
        rollouts, updates = ({scaling.label: scaling for scaling in scalings(cell, metric)} for metric in SYNC_METRICS)
        for label in [label for label in rollouts if label in updates]:
            rollout, update = rollouts[label], updates[label]
            times += [[name, label, f"{n:,}", seconds_text(time_at(rollout, n)), seconds_text(time_at(update, n)),
                       percent_text(time_at(rollout, n) / (time_at(rollout, n) + time_at(update, n)), "")]
                      for n in rollout.ns if n in update.ns]
            costs.append([name, label] + [cost_text(part.fit, cost) for part in (rollout, update) for cost in "ab"])
    if not times:
        return [f"No rollout and update split: no synchronised exp5 run has a steady state ({steady}).", ""]
    lines = [f"**Rollout and update** (the synchronised runs; medians over seeds of each run's median of {steady}):",
             ""]
    lines += markdown_table(["env", "variant (mode)", "N", "rollout (s)", "update (s)", "rollout share"], times)
    lines += ["a and b of each part, fitted as above over its synchronised N (through two N the line is exact: no "
              "interval):", ""]
    return lines + markdown_table(["env", "variant (mode)", "rollout a", "rollout b (per env)", "update a",
                                   "update b (per env)"], costs)


def scaling_run_lines(rows, fits, env_order, steady):
    """Every exp5 run: its steady time against the cost model's, the steady SPS, its peak RSS and device peak."""
    device = any(not math.isnan(row["peak_memory_bytes"]) for row in rows)
    label_rank, table = rank(LABEL_COLORS), []
    for name, cell in named_cells(rows, per_env_workload, env_order).items():
        order = lambda row: (label_rank(row["label"]), num_envs(row) or 0, row["timing"], row["seed"])
        for row in sorted(cell, key=order):
            n, seconds = num_envs(row) or math.nan, row["iter8_99_median_s"]
            fit = fits.get((name, row["label"])) if row["timing"] == "async" else None
            model = fit.at(n) if fit else math.nan
            sps = n * num_steps(row) / seconds
            table.append([name, row["label"], f"{n:,.0f}", row["timing"], row["seed"], seconds_text(seconds),
                          seconds_text(model), percent_text((model - seconds) / seconds),
                          "–" if math.isnan(sps) else f"{sps:,.0f}", mib_text(row["peak_rss_bytes"])]
                         + ([mib_text(row["peak_memory_bytes"])] if device else []))
    header = ["env", "variant (mode)", "N", "timing", "seed", f"{steady} (s, median)", "cost model (s)",
              "relative residual", "steady SPS", "peak RSS (MiB)"] + (["device peak (MiB)"] if device else [])
    return ["**Every exp5 run** (the cost model's time and residual for the async runs it was fitted to; peak RSS: "
            "`memory/peak_rss_bytes`" + (", device peak: `memory/peak_bytes`" if device else "") + "):", ""] \
        + markdown_table(header, table)
