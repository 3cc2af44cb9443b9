"""exp2 and exp3: what each compile mode changes against its baseline."""

import itertools
import math

from sweep.experiments import SIZES, UNFILED
from report.charts import draw_speedup_strips, new_figure, save_figure
from report.messages import warn
from report.settings import COMPILE_BASELINES, COMPILE_METRICS, LABEL_COLORS
from report.standings import break_even_text, relative_to, window_standing
from report.stats import (
    compile_mode_comparisons, distinguishable, framework_of, geometric_mean, inverted, paired_labels, rows_of, scope,
    where,
)
from report.summary import ordered
from report.text import Answer, empty_window_lines, heading, image, markdown_table, speedup_text


def compile_mode_chart(rows, comparisons, out, names):
    """Chart: per framework, the speedup of each compiled mode over its baseline on each metric (exp2)."""
    frameworks = ordered((framework for framework, _, _ in comparisons), map(framework_of, LABEL_COLORS))
    metric_names = [names[metric] for metric in COMPILE_METRICS]
    title = (f"Speedup of each compile mode over its baseline — exp2 (sync, small, {scope(rows)})\n"
             "points: (env, seed) pairs, filled: the mode, outline: its baseline; black line: geometric mean")
    figure, axes = new_figure(title, len(frameworks), panel_size=(5.5, 4.6))
    for ax, framework in zip(axes, frameworks):
        modes = [f"{label} over {baseline}" for fw, label, baseline in comparisons if fw == framework]
        speedups = {(names[metric], mode): [pair.speedup for pair in paired_labels(rows, *mode.split(" over "), metric)]
                    for metric in COMPILE_METRICS for mode in modes}
        draw_speedup_strips(ax, metric_names, modes, speedups)
        ax.set(title=f"{framework}: " + "; ".join(modes), ylabel="speedup (time_baseline / time_mode)")
        ax.title.set_fontsize(8)
    return image(save_figure(figure, out, "compile_modes.png"), "compile mode effect")


def section_compile_modes(sweep, out):
    """Chart and table: each compiled mode's speedup over its explicit baseline (exp2 chart; exp2, exp3 table)."""
    rows = rows_of(sweep.rows, "exp2")
    if not rows and not rows_of(sweep.rows, "exp3"):
        return Answer([], [])
    comparisons = compile_mode_comparisons(rows)
    lines = [heading(sweep, "Effect of each compile mode"), "",
             "- Each mode is measured against the same framework one step less compiled: "
             + ", ".join(f"{label} over {baseline}" for label, baseline in COMPILE_BASELINES.items()
                         if {label, baseline} <= {row["label"] for row in sweep.rows}) + ".",
             "- torch_compile jits the env, so its baseline is torch env-jit, not torch none.",
             "- Totals are compared only between runs of the same number of iterations ('–' where the eager runs are "
             "shorter).", ""]
    lines += empty_window_lines([row for row in sweep.rows if row["exp"] in ("exp2", "exp3", UNFILED["sync"])],
                                COMPILE_METRICS)
    if comparisons:
        lines += compile_mode_chart(rows, comparisons, out, sweep.names)
    else:
        warn("skipping compile_modes.png: no exp2 compiled mode ran beside its baseline")
        lines += ["No chart: no exp2 compiled mode ran beside its baseline.", ""]
    table, steady = [], {}  # steady: exp -> [((steady-state speedup, interval over envs), mode, baseline, size)]
    for exp in ("exp2", "exp3"):
        exp_rows = rows_of(sweep.rows, exp)
        for (_, label, baseline), size in itertools.product(compile_mode_comparisons(exp_rows), SIZES):
            sized = where(exp_rows, size=size)
            pairs = [paired_labels(sized, label, baseline, metric) for metric in COMPILE_METRICS]
            if any(pairs):
                mode, base = (window_standing(where(sized, label=name)) for name in (label, baseline))
                steady_ratio = relative_to(sized, baseline, label, "iter8_99_median_s")
                speedups = [geometric_mean([p.speedup for p in pair]) for pair in pairs]
                table.append([exp, label, baseline, size, max(map(len, pairs))]
                             + [speedup_text(speedup) for speedup in speedups]
                             + [break_even_text(mode, base, steady_ratio)])
                steady_speedup = speedups[COMPILE_METRICS.index("iter8_99_median_s")]
                if not math.isnan(steady_speedup):
                    steady.setdefault(exp, []).append((inverted(steady_ratio), label, baseline, size))
    header = ["exp", "mode", "over (baseline)", "model size", "pairs"]
    header += [f"{sweep.names[metric]} (geo. mean)" for metric in COMPILE_METRICS]
    header += ["a faster steady state repays a longer iteration 0"]
    bullets = [(exp, steady_bullet(steady.get(exp, []), sweep.names["iter8_99_median_s"]))
               for exp in ("exp2", "exp3") if rows_of(sweep.rows, exp)]
    return Answer(lines + (markdown_table(header, table) if table else []), bullets)


def speedup_reason(bounds):
    """Why a mode's speedup interval over envs does not tell it from its baseline: it holds 1×, or one env gives none;
    '' where it does."""
    if distinguishable(bounds):
        return ""
    return "one env: no interval" if math.isnan(bounds[0]) else "its interval holds 1×"


def steady_bullet(speedups, steady_name):
    """The summary of one experiment's compile modes: the smallest and the largest steady-state speedup of a mode over
    its baseline, as the table prints them, with its interval over envs, and where that does not tell the mode from
    its baseline, why (speedup_reason; said once where both share it)."""
    if not speedups:
        return f"no compiled mode ran beside its baseline with a steady state ({steady_name})"
    low, high = (pick(speedups, key=lambda item: item[0][0]) for pick in (min, max))
    sizes = len({size for *_, size in speedups}) > 1
    name = lambda item: f"{item[1]} over {item[2]}" + f", {item[3]}" * sizes
    reasons = [speedup_reason(item[0][1]) for item in (low, high)]
    shared = reasons[0] if reasons[0] == reasons[1] else ""
    said = lambda item, why: f"{speedup_text(*item[0])} ({name(item)}" + (f"; {why})" if why and not shared else ")")
    if low is high:
        text = f"of {name(low)}: {speedup_text(*low[0])}"
    else:
        text = f"of a mode over its baseline: {said(low, reasons[0])} to {said(high, reasons[1])}"
    return f"steady-state speedup ({steady_name}) {text}" + (f"; {shared}" if shared else "")
