"""The learning-curve figure every section that shows learning draws: per (env, size) panel, each variant's mean
episodic return with a min–max band across seeds, against env steps or time."""

import numpy as np

from report.charts import empty_panel, new_figure, save_figure
from report.palette import colors_for, marker_of
from report.settings import LABEL_COLORS
from report.stats import mean_curve, where
from report.summary import ordered, ordered_configs


# How the report names the chart of return against wall-clock time (x from the start of iteration 0, compilation
# included): where learning is compared, the time each variant takes to reach a return.
WALL_CLOCK_CAPTION = "**Return against wall-clock time: the time to reach a return**"

# Line styles for curves identical to an earlier one in the same panel, so that each stays visible.
DUPLICATE_STYLES = ((0, (4, 3)), (0, (1, 2)), (0, (6, 2, 1, 2)), (0, (2, 4)))


def curve_x(run, x_axis, process_agents=1):
    """A run's x values for its returns: env steps, seconds of training after the end of iteration 0 ("time"), or
    from its start, compilation included ("wall"); seconds divided by the agents its process trained (the agents of
    one vmapped process share its clock)."""
    if x_axis == "steps":
        return run.return_steps
    if x_axis == "wall":
        return run.return_seconds / process_agents
    return (run.return_seconds - np.nan_to_num(run.iteration_seconds[0])) / process_agents


def draw_panel_curves(ax, panel_rows, labels, colors, x_axis):
    """Draws each label's curve in one panel; returns notes on identical and missing curves for the report."""
    notes, drawn = [], {}
    for label in labels:
        label_rows = sorted(where(panel_rows, label=label), key=lambda row: row["seed"])
        runs = [row["run"] for row in label_rows]
        if not runs:
            continue
        signature = tuple((run.seed, tuple(run.return_steps), tuple(run.returns)) for run in runs)
        same_as = drawn.get(signature, []) if any(run.returns.size for run in runs) else []
        style = DUPLICATE_STYLES[(len(same_as) - 1) % len(DUPLICATE_STYLES)] if same_as else "solid"
        if same_as:
            notes.append(f"{label} is identical to {same_as[0]} (drawn dashed on top of it)")
        drawn.setdefault(signature, []).append(label)
        curves = [(curve_x(row["run"], x_axis, row["process_agents"]), row["run"].returns) for row in label_rows
                  if row["run"].returns.size]
        curve = mean_curve([(x, y) for x, y in curves if len(y) > 1 and np.isfinite(x).all()])
        if curve:
            grid, mean, low, high = curve
            ax.plot(grid, mean, color=colors[label], linewidth=2.2 if not same_as else 1.2, linestyle=style,
                    label=label)
            ax.fill_between(grid, low, high, color=colors[label], alpha=0.2, linewidth=0)
        elif curves:  # too few returns for a line: each logged return as a point
            x, y = np.concatenate([x for x, _ in curves]), np.concatenate([y for _, y in curves])
            ax.scatter(x, y, color=colors[label], marker=marker_of(label) if not same_as else "x", s=30, label=label, zorder=3)
            notes.append(f"{label}: too few returns for a line, drawn as points")
        else:
            notes.append(f"{label}: no episode finished")
    if not any(run_rows_returns(panel_rows)):
        longest = max(row["num_iterations"] for row in panel_rows)
        empty_panel(ax, f"no episode finished\nin these runs\n(at most {longest} iterations)")
        notes = ["no episode finished in any run, so the panel is empty"]
    return notes


def run_rows_returns(rows):
    """How many returns each row's run logged."""
    return [row["run"].returns.size for row in rows]


def spread_time_axis(ax):
    """A symmetric-log time axis when the curves end more than 10× apart (eager runs take far longer), so that
    the fast variants' curves are not squeezed against 0; linear below a tenth of the earliest end."""
    ends = [float(np.max(line.get_xdata())) for line in ax.lines if len(line.get_xdata())]
    ends = [end for end in ends if end > 0]
    if len(ends) > 1 and max(ends) > 10 * min(ends):
        ax.set_xscale("symlog", linthresh=min(ends) / 10)
        ax.set_xlabel(ax.get_xlabel().removesuffix(" (s)") + f" (s, log above {min(ends) / 10:.2g} s)")


def learning_curve_figure(rows, env_order, title, x_axis, out, name, time_label="training time after iteration 0"):
    """One panel per (env, size): each variant/mode's mean episodic return with a min–max band across seeds.

    Returns the file name and notes per panel (identical curves, runs without returns) for the report.
    """
    panels = ordered_configs(rows, env_order)
    multiple_sizes = len({size for _, size in panels}) > 1
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    colors = colors_for(labels)
    # one panel alone (Doors) gets the width of two, so that its legend of many labels fits in two columns below it
    figure, axes = new_figure(title, len(panels), ncols=min(len(panels), 4),
                              panel_size=(4.2, 3.2) if len(panels) > 1 else (7.0, 3.6), fixed_margins=True)
    notes = []
    for ax, (env, size) in zip(axes, panels):
        panel = f"{env} · {size}" if multiple_sizes else env
        panel_notes = draw_panel_curves(ax, where(rows, env=env, size=size), labels, colors, x_axis)
        notes += [f"{panel}: {note}" for note in panel_notes]
        if any("identical" in note for note in panel_notes):
            ax.text(0.02, 0.98, "dashed: identical to a solid curve", transform=ax.transAxes, fontsize=7, va="top")
        ax.set(title=panel, ylabel="episodic return (sum of rewards)",
               xlabel="env steps (all envs together)" if x_axis == "steps" else f"{time_label} (s)")
        if x_axis != "steps":
            spread_time_axis(ax)
        ax.grid(alpha=0.3)
    return save_figure(figure, out, name), notes
