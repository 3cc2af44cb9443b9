"""exp6: many agents, one vmapped process against many processes, and what the cost model of the experiment it reads
beside its own (EXP6.predicted_by) predicts."""

import math
from dataclasses import dataclass

from sweep.experiments import EXP6
from report.charts import count_axis, log_axis, new_figure, save_figure
from report.cost_model import cost_text, scalings
from report.palette import colors_for, marker_of
from report.settings import LABEL_COLORS
from report.stats import median, metric_values, named_cells, per_env_workload, ranges_apart, rows_of
from report.summary import num_envs, ordered
from report.text import Answer, heading, image, listed, markdown_table, seconds_text, speedup_text
from report.types import group_cell_key

PREDICTED_BY = EXP6.predicted_by  # the experiment whose cost model predicts the vmapped process's gain
PREDICTION_LABEL = EXP6.PREDICTION_VARIANT.label  # the variant of that cost model


@dataclass
class AgentTimes:
    """One exp6 variant's wall time to train N agents: the median over repeats per N measured, and for a process
    variant, at every other N of its cell, the estimate from one wave of `parallel` processes at its largest N."""

    label: str
    vmapped: bool  # one process trains all N agents
    measured: dict  # N -> seconds
    extrapolated: dict  # N -> seconds
    parallel: int
    groups: list


def agent_times(groups):
    """The AgentTimes of each variant of one exp6 cell's groups, the vmapped ones first."""
    every_n = sorted({group.agents for group in groups})
    result = []
    for label in ordered((group.label for group in groups), LABEL_COLORS):
        mine = [group for group in groups if group.label == label]
        measured = {n: float(median([group.wall for group in mine if group.agents == n]))
                    for n in sorted({group.agents for group in mine})}
        largest = max(mine, key=lambda group: group.agents)
        vmapped = all(group.processes == 1 for group in mine) and largest.agents > 1
        wave = measured[largest.agents] / math.ceil(largest.agents / largest.parallel)
        extrapolated = {} if vmapped else {n: math.ceil(n / largest.parallel) * wave
                                           for n in every_n if n not in measured}
        result.append(AgentTimes(label, vmapped, measured, extrapolated, largest.parallel, mine))
    return sorted(result, key=lambda times: not times.vmapped)


def wall_at(times, n):
    """(seconds to train n agents, extrapolated?) of an AgentTimes; NaN where neither measured nor extrapolated."""
    if n in times.measured:
        return times.measured[n], False
    return times.extrapolated.get(n, math.nan), n in times.extrapolated


def cost_fit(rows, label, cell_key):
    """The cost model of label's async runs of PREDICTED_BY in the cell (env, model size, per-env workload), None if
    none."""
    chosen = [row for row in rows_of(rows, PREDICTED_BY)
              if row["timing"] == "async" and row["label"] == label and per_env_workload(row) == cell_key]
    return next((scaling.fit for scaling in scalings(chosen)), None)


def modelled_run(fit, rows, width, iterations):
    """Seconds of one run of iterations with width envs: its rows' median start-up and iteration 0 as measured, the
    other iterations from the cost model."""
    return (median(metric_values(rows, "startup_s")) + median(metric_values(rows, "iter0_s"))
            + (iterations - 1) * fit.at(width))


def predicted_gains(fit, n, width, parallel, iterations, process_rows, vmapped_rows):
    """(per iteration, per run) gain the cost model predicts for one process with an n times wider batch over n
    processes `parallel` at a time: ⌈n/P⌉·(a + b·width) / (a + b·n·width); per run also the start-up and
    iteration 0 measured on each side."""
    waves = math.ceil(n / parallel)
    per_iteration = waves * fit.at(width) / fit.at(n * width)
    per_run = (waves * modelled_run(fit, process_rows, width, iterations)
               / modelled_run(fit, vmapped_rows, n * width, iterations))
    return per_iteration, per_run


def agents_chart(cells, out):
    """Chart: per exp6 cell, each variant's wall time to train N agents against N: measured solid, extrapolated
    (process variants beyond their measured N) dashed with hollow markers."""
    figure, axes = new_figure("Wall time to train N agents — exp6\nsolid: measured (median over repeats); dashed, "
                              "hollow: extrapolated from one wave of parallel processes", len(cells),
                              ncols=min(len(cells), 2), panel_size=(6.4, 4.6))
    colors = colors_for([times.label for variants in cells.values() for times in variants])
    for ax, (name, variants) in zip(axes, cells.items()):
        for times in variants:
            every = sorted({**times.measured, **times.extrapolated}.items())
            ax.plot(*zip(*every), color=colors[times.label], linestyle="--", linewidth=1)
            ax.plot(*zip(*sorted(times.measured.items())), color=colors[times.label], marker=marker_of(times.label),
                    label=times.label)
            if times.extrapolated:
                ax.scatter(*zip(*times.extrapolated.items()), marker=marker_of(times.label), facecolors="none",
                           edgecolors=colors[times.label], s=36)
        ax.plot([], [], color="black", linestyle="--", marker="o", markerfacecolor="none", label="extrapolated")
        count_axis(ax, sorted({n for times in variants for n in (*times.measured, *times.extrapolated)}),
                   "number of agents N")
        log_axis(ax, "y", " s")
        ax.set(title=name, ylabel="wall time to train N agents")
        ax.grid(which="major", alpha=0.3)
    return save_figure(figure, out, "agents.png")


def wall_text(value, extrapolated, form=None):
    """A wall time in seconds (or an agents-per-hour figure, in the given format), marked '≈… (extrapolated)' where
    extrapolated, '–' for NaN."""
    if math.isnan(value):
        return "–"
    text = format(value, form) if form else seconds_text(value)
    return f"≈{text} (extrapolated)" if extrapolated else text


def faster_words(speedup):
    """'2.50× faster than', '1.20× slower than' (as printed) or 'as fast as'."""
    rounded = round(speedup, 2)
    if rounded == 1:
        return "as fast as"
    return f"{speedup:.2f}× faster than" if rounded > 1 else f"{1 / speedup:.2f}× slower than"


def walls_at(times, n):
    """The wall times behind wall_at(times, n), one per repeat: those measured at n, or, extrapolated, each repeat at
    the largest measured N scaled to n as their median is."""
    if n in times.measured:
        return [group.wall for group in times.groups if group.agents == n]
    largest = max(times.measured)
    scale = times.extrapolated.get(n, math.nan) / times.measured[largest]
    return [group.wall * scale for group in times.groups if group.agents == largest]


def against_text(vmapped, times, n):
    """(words, apart) of the vmapped variant against one process variant at N agents: how much faster, or level with
    it where their ranges over repeats overlap; apart as stats.ranges_apart gives it (None: one run, no interval)."""
    other, extrapolated = wall_at(times, n)
    whom = f"{times.label} processes {times.parallel} at a time{' (extrapolated)' * extrapolated}"
    told = ranges_apart(walls_at(vmapped, n), walls_at(times, n))
    if told is False:
        return f"level with {whom} ({other / vmapped.measured[n]:.2f}×, ranges over repeats overlap)", told
    return f"{faster_words(other / vmapped.measured[n])} {whom}", told


def agents_sentence(vmapped, processes, n):
    """At N agents: how much faster the vmapped variant trains them than each process variant, or that it is level
    with one, and where one run gives no interval (the wall times, agents per hour and speedups are in the table)."""
    compared = [(times.label, *against_text(vmapped, times, n)) for times in processes
                if not math.isnan(wall_at(times, n)[0])]
    against = listed([words for _, words, _ in compared]) if compared else "no process variant to compare with"
    unknown = [label for label, _, told in compared if told is None]
    note = "" if not unknown else "; one run: no interval" + (
        "" if len(unknown) == len(compared) else f" for {listed(unknown)}")
    return f"At N = {n:,}, one {vmapped.label} process is {against}{note}."


def agents_counts(vmapped, processes):
    """The N of a vmapped variant the conclusion speaks of: the largest N every variant measured, and its largest."""
    common = [n for n in vmapped.measured if all(n in other.measured for other in processes)]
    return list(dict.fromkeys(sorted({max(common)} if common else set()) + [max(vmapped.measured)]))


def agents_conclusion(name, variants, prediction):
    """The generated lines of one exp6 cell: a bullet naming it, then one short bullet at the largest N every variant
    measured, one at the largest N the vmapped process measured, and the cost model's prediction (the sentence
    prediction_lines gives, or None)."""
    vmapped = [times for times in variants if times.vmapped]
    processes = [times for times in variants if not times.vmapped]
    if not vmapped:
        return [f"- **{name}:** no variant trained several agents in one process; the table gives each one's wall "
                "time."]
    sentences = [agents_sentence(times, processes, n) for times in vmapped for n in agents_counts(times, processes)]
    return [f"- **{name}:**"] + [f"  - {sentence}" for sentence in sentences + ([prediction] if prediction else [])]


def agents_bullet(variants):
    """The summary of one exp6 cell: at the largest N every variant measured, how much faster the vmapped process is."""
    vmapped = [times for times in variants if times.vmapped]
    processes = [times for times in variants if not times.vmapped]
    if not vmapped:
        return "no variant trained several agents in one process"
    times = vmapped[0]
    return agents_sentence(times, processes, agents_counts(times, processes)[0]).removesuffix(".")


def section_agents(sweep, out):
    """exp6's answer: the wall time to train N agents per variant (chart and table with agents per hour and the vmapped
    process's speedup over the processes), the cost model's prediction beside the measured gain, generated
    conclusions."""
    if not rows_of(sweep.rows, "exp6"):
        return Answer([], [])
    lines = [heading(sweep, "Many agents: one vmapped process against many processes (exp6)"), ""]
    if not sweep.groups:
        return Answer(lines + ["No exp6 group is usable: the warnings name each group's reason.", ""],
                      [("exp6", "no usable group")])
    lines += ["- Each group trains N agents: one process for all of them (vmapped), or N fresh processes run "
              "`parallel` at a time.",
              "- Wall time: the launch of the first process to the exit of the last (group.json).",
              "- A process variant's time for an N it did not run is extrapolated from its largest measured N: ⌈N/P⌉ "
              "waves of P processes, each taking one wave's time there; extrapolated figures are marked as such.",
              "- One process is called faster only where the ranges of the two wall times over repeats do not overlap; "
              "with one run there is no interval.", ""]
    cells = named_cells(sweep.groups, group_cell_key, sweep.env_order)
    times = {name: agent_times(groups) for name, groups in cells.items()}
    lines += image(agents_chart(times, out), "wall time to train N agents")
    conclusions = []
    for name, groups in cells.items():
        key = group_cell_key(groups[0])
        prediction, sentence = prediction_lines(sweep.rows, times[name], (key[0], key[1], key[2][1:-1]),
                                                num_envs(groups[0].rows[0]), groups[0].num_iterations)
        lines += ([f"**{name}**", ""] if len(cells) > 1 else []) + agents_table(times[name]) + prediction
        conclusions += agents_conclusion(name, times[name], sentence)
    bullets = [(f"exp6 · {name}", agents_bullet(variants)) for name, variants in times.items()]
    return Answer(lines + ["**Conclusions** (generated from the numbers above):", ""] + conclusions + [""], bullets)


def agents_table(variants):
    """Table: per N, each variant's wall time and agents per hour, and each vmapped variant's speedup over each process
    variant; extrapolated values marked."""
    every_n = sorted({n for times in variants for n in (*times.measured, *times.extrapolated)})
    pairs = [(vmapped, other) for vmapped in variants if vmapped.vmapped for other in variants if not other.vmapped]
    table = []
    for n in every_n:
        row = [f"{n:,}"]
        for times in variants:
            wall, extrapolated = wall_at(times, n)
            row += [wall_text(wall, extrapolated), wall_text(n * 3600 / wall, extrapolated, ",.0f")]
        for vmapped, other in pairs:
            (wall, extrapolated), (other_wall, other_extrapolated) = wall_at(vmapped, n), wall_at(other, n)
            speedup = speedup_text(other_wall / wall)
            row.append(speedup + (" (extrapolated)" if extrapolated or other_extrapolated else ""))
        table.append(row)
    header = ["N agents"] + [f"{times.label}: {what}" for times in variants for what in ("wall (s)", "agents per hour")]
    header += [f"speedup of {vmapped.label} over {other.label} processes" for vmapped, other in pairs]
    return markdown_table(header, table)


def prediction_lines(rows, variants, cell_key, width, iterations):
    """The gain the cost model of PREDICTION_LABEL's runs of PREDICTED_BY in the cell predicts for the vmapped variant
    over its processes (agents of width envs and the given iterations), beside the measured one; and the conclusion's
    sentence (None without a prediction)."""
    vmapped = next((times for times in variants if times.vmapped), None)
    processes = [times for times in variants if not times.vmapped]
    fit = cost_fit(rows, PREDICTION_LABEL, cell_key)
    if vmapped is None or not processes or fit is None:
        why = (f"no {PREDICTED_BY} fit of {PREDICTION_LABEL} on {cell_key[0]} with the agents' per-env workload to "
               "predict from" if fit is None else "no vmapped variant and process variant to compare")
        return [f"No predicted gain: {why}.", ""], None
    linen = next((times for times in processes if times.label == PREDICTION_LABEL), None)
    parallel = (linen or processes[0]).parallel
    process_rows = [row for group in (linen.groups if linen else []) for row in group.rows]
    table, compared = [], [n for n in vmapped.measured if linen and n in linen.measured] or list(vmapped.measured)
    for n in sorted(vmapped.measured):
        vmapped_rows = [row for group in vmapped.groups if group.agents == n for row in group.rows]
        per_iteration, per_run = predicted_gains(fit, n, width, parallel, iterations, process_rows, vmapped_rows)
        measured, extrapolated = wall_at(linen, n) if linen else (math.nan, False)
        table.append([f"{n:,}", speedup_text(per_iteration), speedup_text(per_run),
                      speedup_text(measured / vmapped.measured[n]) + (" (extrapolated)" if extrapolated else "")])
    largest, said = max(vmapped.measured), sorted(vmapped.measured).index(max(compared))
    lines = [f"**Predicted from {PREDICTED_BY}** (a prediction, not a measurement): {PREDICTION_LABEL}'s cost model on "
             f"{cell_key[0]}:", "",
             f"- a = {cost_text(fit, 'a', False)} and b = {cost_text(fit, 'b', False)} per env; n = {width} envs per "
             f"agent; P = {parallel} processes at a time.",
             "- Per iteration, N processes cost ⌈N/P⌉·(a + b·n) against a + b·N·n for one process with an N times "
             "wider batch.",
             "- Per run, each side also pays its start-up and iteration 0 as measured in these groups.", ""]
    lines += markdown_table(["N agents", "predicted gain per iteration", "predicted gain per run",
                             f"measured gain over {PREDICTION_LABEL} processes"], table)
    gpu = (f"On a GPU, where b is far smaller, the gain per iteration tends to ⌈N/P⌉ (b → 0): "
           f"{math.ceil(largest / parallel)}× at N = {largest:,} with P = {parallel} — a prediction of the model, "
           "not measured here.")
    sentence = (f"{PREDICTED_BY}'s cost model of {PREDICTION_LABEL} predicts a gain of {table[said][1]} per iteration at N = "
                f"{table[said][0]} ({table[said][2]} per run with the measured start-up and iteration 0); measured: "
                f"{table[said][3]}.")
    return lines + [gpu, ""], sentence
