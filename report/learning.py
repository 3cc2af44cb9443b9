"""The evidence that every variant learns: final returns and learning curves, of each experiment as it says
(sweep/experiments.py: learning, split, curves)."""

import math

from sweep.experiments import ALL, BY_NAME, EXPERIMENTS, SIZES
from report.curves import WALL_CLOCK_CAPTION, learning_curve_figure
from report.settings import FINAL_RETURN_EPISODES, LABEL_COLORS
from report.stats import metric_values, rows_of, scope, where
from report.summary import ordered, rank
from report.text import heading, image, markdown_table, mean_and_spread


def learning_rows(rows, exp):
    """The rows of an experiment whose returns the learning evidence shows, as it says (Experiment.learning): all its
    runs ("whole"), its async ones ("async": its sync runs repeat their seeds), the agents of usable groups
    ("groups"), or none ("own": its section gives its returns)."""
    learning = BY_NAME[exp].learning
    if learning == "own":
        return []
    rows = rows_of(rows, exp)
    if learning == "async":
        return where(rows, timing="async")
    return [row for row in rows if not math.isnan(row["agents"])] if learning == "groups" else rows


def final_return_table(rows, env_order, split):
    """The labels of the rows and a table row [env, split value, each label's final returns] per env (by complexity)
    and value of the split field (sizes small to large, counts ascending)."""
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    env_rank = rank(env_order)
    value_rank = rank(SIZES) if split == "size" else lambda value: (float(value), "")
    keys = sorted({(row["env"], row[split]) for row in rows}, key=lambda key: (env_rank(key[0]), value_rank(key[1])))
    return labels, [[env, value] + [mean_and_spread(metric_values(where(rows, env=env, label=label, **{split: value}),
                                                                  "final_return")) for label in labels]
                    for env, value in keys]


def section_final_returns(sweep):
    """Heading of the learning evidence; the final return per variant/mode and env, and model size or what the
    experiment varies instead (Experiment.split), for each experiment whose learning evidence is here; none in a sweep
    of experiments that give their own alone."""
    if all(row["exp"] in BY_NAME and BY_NAME[row["exp"]].learning == "own" for row in sweep.rows):
        return []
    grouped = "; ".join(f"{experiment.name}: over the agents of the groups of N agents" for experiment in ALL
                        if experiment.grouped)
    lines = [heading(sweep, "Learning: final returns and learning curves"), "",
             f"Final return: mean of a run's last {FINAL_RETURN_EPISODES} logged episodic returns; "
             f"mean ± sample standard deviation over seeds ({grouped}).", ""]
    for exp in EXPERIMENTS:
        rows = learning_rows(sweep.rows, exp)
        split, name = BY_NAME[exp].split
        labels, table = final_return_table(rows, sweep.env_order, split)
        if table:
            lines += [f"**{exp}**", ""] + markdown_table(["env", name] + labels, table)
    return lines


def learning_curve_groups(sweep):
    """(exp, size) of each learning-curve figure set, as each experiment says (Experiment.curves): those drawn per
    model size first, then those drawn whole (size None), each in run order.

    An experiment without curves has runs that are no repeats of one curve (e.g. a few iterations at numbers of envs
    256 times apart: its final returns are per number of envs), or a section that draws its own.
    """
    groups = [(exp, size) for exp in EXPERIMENTS if BY_NAME[exp].curves == "size"
              for size in ordered((row["size"] for row in learning_rows(sweep.rows, exp)), SIZES)]
    return groups + [(exp, None) for exp in EXPERIMENTS
                     if BY_NAME[exp].curves == "whole" and learning_rows(sweep.rows, exp)]


def section_learning_curves(sweep, out, exp, size):
    """Charts: one experiment's (and model size's) learning curves against env steps, against training time after
    iteration 0, and against wall-clock time from the start of iteration 0 (compilation included): the time each
    variant takes to reach a return."""
    rows = learning_rows(sweep.rows, exp)
    rows = where(rows, size=size) if size else rows
    what = f"{exp}, {size}" if size else exp
    lines = [heading(sweep, f"Learning curves: {what}", "###"), ""]
    shared = any(row["process_agents"] > 1 for row in rows)  # a group's vmapped agents: one clock for N agents
    per_agent = " per agent" * shared
    time_label = f"training time{per_agent} after iteration 0"
    wall_label = f"wall-clock time{per_agent} from the start of iteration 0"
    notes = []
    for x_axis, against in (("steps", "env steps"), ("time", time_label), ("wall", wall_label)):
        name = f"learning_curves_{exp}{'_' + size if size else ''}_{x_axis}.png"
        title = (f"Episodic return against {against} — {what} ({scope(rows)})\nmean over seeds, band: min–max"
                 + ("; iteration 0 (compilation) left out of the time axis, see the overhead windows" if x_axis == "time"
                    else "; compilation included: the time to reach a return" if x_axis == "wall" else ""))
        if x_axis != "steps" and shared:
            title += "\ntime per agent: a process's time divided by the agents it trains (one for a process per agent)"
        figure_name, notes = learning_curve_figure(rows, sweep.env_order, title, x_axis, out, name,
                                                   time_label if x_axis == "time" else wall_label)
        if x_axis == "wall":
            lines += [f"{WALL_CLOCK_CAPTION} (x: {wall_label}, compilation included):", ""]
        lines += image(figure_name, f"learning curves {what} against {against}")
    return lines + ([f"- {note}" for note in notes] + [""] if notes else [])
