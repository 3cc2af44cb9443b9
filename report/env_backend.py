"""exp4: the env backend against the framework, the cells and the two effects."""

import math
from collections import defaultdict

from sweep.experiments import EXP4
from report.charts import category_axis, colors_for, log_axis, new_figure, save_figure, series_offsets
from report.messages import warn
from report.palette import colors_for, marker_of
from report.settings import LENGTH_METRICS
from report.standings import tie_reason
from report.stats import (
    distinguishable, geometric_mean, interval, inverted, magnitude, metric_values, paired_labels, rows_of, where,
)
from report.summary import ordered_configs
from report.text import (
    Answer, empty_window_lines, heading, image, markdown_table, ratio_words, seconds_text, speedup_text,
)
from report.types import Condition, Pair

# (framework, env backend) -> variant label: the 2 x 2 of EFFECT_CELLS gives each factor's effect, and torch on envs
# written in torch a fifth cell (what the JAX env's hand-over costs torch)
BACKEND_CELLS = {cell: variant.label for cell, variant in EXP4.CELLS.items()}
EFFECT_CELLS = EXP4.EFFECT_CELLS


def backend_effects(rows, metric):
    """{(env, size): [(framework effect, backend effect)] per seed} from exp4 cells that ran the four of the 2 x 2.

    Framework effect = √(torch/linen on gymnax × torch/linen on Gymnasium); backend effect = √(Gymnasium/gymnax
    with torch × Gymnasium/gymnax with linen): time ratios, each averaged (geometrically) over the other factor.
    """
    values = defaultdict(dict)
    for row in rows:
        if not math.isnan(row[metric]):
            length = row["num_iterations"] if metric in LENGTH_METRICS else None
            values[row["condition"], length, row["seed"]][row["label"]] = row[metric]
    effects = defaultdict(list)
    for (condition, _, _), cell in sorted(values.items(), key=lambda item: (item[0][0], item[0][1] or 0, item[0][2])):
        if not all(BACKEND_CELLS[key] in cell for key in EFFECT_CELLS):
            continue
        t = {key: cell[BACKEND_CELLS[key]] for key in EFFECT_CELLS}
        framework = math.sqrt(t["torch", "gymnax"] / t["linen", "gymnax"] * t["torch", "Gymnasium"] / t["linen", "Gymnasium"])
        backend = math.sqrt(t["torch", "Gymnasium"] / t["torch", "gymnax"] * t["linen", "Gymnasium"] / t["linen", "gymnax"])
        effects[condition.env, condition.size].append((framework, backend))
    return effects


def effect_summary(effects, effect):
    """(geometric mean, interval over envs) of effect(framework effect, backend effect) over every seed of every cell."""
    pairs = [Pair(Condition("exp4", env, size, "async", ()), 1.0, effect(framework, backend))
             for (env, size), cell in effects.items() for framework, backend in cell]
    return geometric_mean([pair.speedup for pair in pairs]), interval(pairs)


def backend_summaries(effects):
    """The framework effect, the env-backend effect and the dominance (each (geometric mean, interval over envs)) of
    one metric's cells.

    Dominance is the geometric mean over seeds of |backend effect| / |framework effect| (each as a ratio ≥ 1).
    """
    framework = effect_summary(effects, lambda framework, _: framework)
    backend = effect_summary(effects, lambda _, backend: backend)
    dominance = effect_summary(effects, lambda framework, backend: magnitude(backend) / magnitude(framework))
    return framework, backend, dominance


def dominant_words(dominance):
    """'**the env backend dominates**', '**the framework dominates**' or '**neither factor dominates**', and the
    sentence on how much more the one changes the time than the other."""
    if not distinguishable(dominance[1]):
        return ("**neither factor dominates**",
                f"The env backend changes the time {speedup_text(*dominance)} as much as the framework "
                f"({tie_reason([dominance])}).")
    factors = ("the env backend", "the framework")
    dominant, other = factors if dominance[0] > 1 else factors[::-1]
    ratio = dominance if dominance[0] > 1 else inverted(dominance)
    return f"**{dominant} dominates**", f"{dominant[0].upper()}{dominant[1:]} changes the time " \
                                        f"{speedup_text(*ratio)} as much as {other}."


def backend_conclusion(effects, what):
    """The generated conclusion on one metric as markdown lines: a bullet naming the factor that dominates (where the
    interval says so), then one short bullet per effect and one on the dominance."""
    framework, backend, dominance = backend_summaries(effects)
    verdict, how_much = dominant_words(dominance)
    cells = f"{len(effects)} env/size cell{'s' * (len(effects) > 1)}, geometric means"
    return [f"- On {what}, {verdict} ({cells}):",
            f"  - {ratio_words(backend, 'Gymnasium on the CPU', 'gymnax on the device')}.",
            f"  - {ratio_words(framework, 'torch', 'linen')}.",
            f"  - {how_much}"]


def backend_bullet(effects):
    """The summary bullet of one metric: which factor dominates, and each effect, in the conclusion's numbers."""
    framework, backend, dominance = backend_summaries(effects)
    verdict = dominant_words(dominance)[0].strip("*")
    return f"{verdict}: {ratio_words(backend, 'Gymnasium', 'gymnax')}; {ratio_words(framework, 'torch', 'linen')}"


def section_env_backend(sweep, out):
    """Chart, table and conclusion of exp4: framework effect against env-backend effect per env and size."""
    rows = rows_of(sweep.rows, "exp4")
    lines = [heading(sweep, "Env backend against framework (exp4)"), ""]
    if not rows:
        return Answer([], [])
    metrics = ("total_s", "iter8_99_median_s")
    effects = {metric: backend_effects(rows, metric) for metric in metrics}
    if not any(effects.values()):
        warn("skipping env_backend.png: no exp4 env and size ran all four variants with the same seed")
        return Answer(lines + ["Skipped: no exp4 env and size ran all four variants of the 2 × 2 "
                               f"({', '.join(BACKEND_CELLS[key] for key in EFFECT_CELLS)}) with the same seed and "
                               "workload.", ""],
                      [("exp4", "no effects: no env and size ran all four variants of the 2 × 2 with the same seed")])
    present = {row["label"] for row in rows}
    own = " and torch on envs written in torch" if BACKEND_CELLS["torch", "torch"] in present else ""
    lines += [f"- The 2 × 2: framework {{torch, linen}} × env backend {{gymnax on the device, Gymnasium on the CPU}}"
              f"{own}.",
              "- Cells: " + "; ".join(f"{fw} on {backend}: {label}" for (fw, backend), label in BACKEND_CELLS.items()
                                      if label in present) + ".",
              "- The chart and the first table give the cells' times; each effect in the second is a time ratio "
              "averaged over the other factor, over the 2 × 2.", ""]
    lines += empty_window_lines(rows, metrics)
    cells = ordered_configs([{"env": env, "size": size} for cells in effects.values() for env, size in cells],
                            sweep.env_order)
    table = [[sweep.names[metric], env, size, len(cell), f"{geometric_mean([f for f, _ in cell]):.2f}×",
              f"{geometric_mean([b for _, b in cell]):.2f}×"]
             for metric in metrics for (env, size), cell in sorted(effects[metric].items())]
    lines += image(env_backend_chart(rows, cells, out, sweep.names["iter8_99_median_s"]),
                   "each framework's steady iteration on each env backend")
    lines += cell_time_lines(rows, cells, sweep.names)
    lines += ["**The effects** (time ratios, geometric means over seeds):", ""]
    lines += markdown_table(["metric", "env", "model size", "seeds", "framework: torch / linen",
                             "env backend: Gymnasium / gymnax"], table)
    steady = f"the steady state ({sweep.names['iter8_99_median_s']})"
    measured = [(metric, what) for metric, what in (("total_s", "total time"), ("iter8_99_median_s", steady))
                if effects[metric]]
    conclusions = [line for metric, what in measured for line in backend_conclusion(effects[metric], what)]
    own_lines, own_bullet = own_env_lines(rows, steady)
    bullets = [(f"exp4 · {'total' if metric == 'total_s' else 'steady state'}", backend_bullet(effects[metric]))
               for metric, _ in measured] + own_bullet
    return Answer(lines + ["**Conclusion** (generated from the numbers above):", ""] + conclusions + own_lines + [""],
                  bullets)


def own_env_lines(rows, steady):
    """What torch on its own env does against torch on gymnax (the JAX env behind DLPack) and Linen on gymnax
    (own_env_words): the conclusion's lines and the summary bullet (none without such runs)."""
    own = BACKEND_CELLS["torch", "torch"]
    words = []
    for key, what in ((("torch", "gymnax"), "torch on gymnax (the JAX env behind DLPack)"),
                      (("linen", "gymnax"), "Linen on gymnax")):
        pairs = paired_labels(rows, BACKEND_CELLS[key], own, "iter8_99_median_s")
        if pairs:
            ratio = geometric_mean([pair.speedup for pair in pairs]), interval(pairs)
            words.append(own_env_words(ratio, what))
    if not words:
        return [], []
    lines = [f"- On {steady}, **torch on envs written in torch** ({own}):"]
    lines += [f"  - {part[0].upper()}{part[1:]}." for part in words]
    return lines, [("exp4 · torch's own env", f"{own} {' and '.join(words)} (steady state)")]


def own_env_words(ratio, what):
    """torch on its own env against one cell, from the ratio (mean, interval over envs) of their times: 'takes 2.81×
    [range 2.71–3.12] the time of {what}' (with 'one env: no interval' where there is none), or 'is level with {what}
    (1.02× [range 0.96–1.32])' where the interval holds 1×."""
    if math.isnan(ratio[1][0]):
        return f"takes {speedup_text(*ratio)} the time of {what} (one env: no interval)"
    if not distinguishable(ratio[1]):
        return f"is level with {what} ({speedup_text(*ratio)})"
    return f"takes {speedup_text(*ratio)} the time of {what}"


def backend_axes(rows):
    """The frameworks and the env backends of the exp4 cells the rows hold, each in BACKEND_CELLS's order."""
    present = [key for key, label in BACKEND_CELLS.items() if label in {row["label"] for row in rows}]
    return list(dict.fromkeys(fw for fw, _ in present)), list(dict.fromkeys(backend for _, backend in present))


def env_backend_chart(rows, cells, out, steady_name):
    """Chart: per env and size, each framework's steady iteration on each env backend (x: the backend, a category;
    the frameworks side by side within it, each seed a small point, the geometric mean over seeds a large one; log y):
    the cells themselves. No line joins the backends: they are categories (gymnax, Gymnasium and torch's own env),
    and the effects and their interaction are the tables' ratios."""
    frameworks, backends = backend_axes(rows)
    figure, axes = new_figure(f"Steady iteration per framework and env backend — exp4 (async, median of "
                              f"{steady_name})\nsmall points: seeds; large points: geometric mean over seeds; "
                              "compare the frameworks within an env backend", len(cells), ncols=min(len(cells), 3),
                              panel_size=(4.4, 3.8))
    colors = colors_for(BACKEND_CELLS.values())
    offsets, width = series_offsets(len(frameworks))
    for ax, (env, size) in zip(axes, cells):
        for offset, framework in zip(offsets, frameworks):
            present = [(x, backend) for x, backend in enumerate(backends) if (framework, backend) in BACKEND_CELLS]
            color = colors[BACKEND_CELLS[framework, present[0][1]]]
            seconds = [metric_values(where(rows, env=env, size=size, label=BACKEND_CELLS[framework, backend]),
                                     "iter8_99_median_s") for _, backend in present]
            measured = [(x + offset, values, BACKEND_CELLS[framework, backend])
                        for (x, backend), values in zip(present, seconds) if values]
            for k, (x, values, label) in enumerate(measured):
                ax.scatter([x] * len(values), values, color=color, marker=marker_of(label), s=18, alpha=0.6, zorder=3)
                ax.scatter([x], [geometric_mean(values)], color=color, marker=marker_of(label), s=70,
                           edgecolors="white", linewidths=1, zorder=4, label=None if k else framework)
        log_axis(ax, "y", " s")
        category_axis(ax, backends)
        ax.set(title=f"{env} · {size}", xlabel="env backend", ylabel="s per steady iteration")
        ax.grid(axis="y", which="major", alpha=0.3)
    return save_figure(figure, out, "env_backend.png")


def cell_time_lines(rows, cells, names):
    """Table: each exp4 cell's steady iteration (geometric mean over seeds) per env and size, framework × backend."""
    frameworks, backends = backend_axes(rows)
    columns = [(framework, backend) for framework in frameworks for backend in backends
               if BACKEND_CELLS.get((framework, backend)) in {row["label"] for row in rows}]
    table = [[env, size] + [seconds_text(geometric_mean(metric_values(
        where(rows, env=env, size=size, label=BACKEND_CELLS[column]), "iter8_99_median_s"))) for column in columns]
        for env, size in cells]
    return [f"**The cells** (s per steady iteration, median of {names['iter8_99_median_s']}; geometric mean over "
            "seeds):", ""] + markdown_table(["env", "model size"] + [f"{fw} on {backend}" for fw, backend in columns],
                                            table)
