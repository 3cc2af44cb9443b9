"""exp8: DQN across frameworks and env backends: how far apart the DQN variants' steady iterations lie, and how far
apart those of the four designs with a PPO analogue (torch or Linen, on Gymnasium's NumPy env or on a gymnax env),
beside the same spread for PPO's four analogous variants in the PPO experiment it reads beside its own
(EXP8.ppo_beside)."""

import math
from typing import NamedTuple

import numpy as np

from sweep.experiments import EXP8
from sweep.variants import BY_LABEL, DQN, GYMNASIUM, VARIANTS
from report.charts import category_axis, colors_for, log_axis, new_figure, save_figure, series_offsets
from report.load import window_names
from report.palette import colors_for, marker_of
from report.settings import FINAL_RETURN_EPISODES, LABEL_COLORS, MIN_ENVS_FOR_CI
from report.stats import (
    distinguishable, geometric_interval, geometric_mean, level_with_first, metric_values, rows_of, where,
)
from report.summary import num_envs, ordered
from report.text import (
    Answer, empty_window_lines, heading, image, lead_names, lead_note, listed, markdown_table, mean_and_spread,
    memory_columns, number_text, relative_text, seconds_interval_text, seconds_text, speedup_text,
)

STEADY = "iter8_99_median_s"
OVERLAP = "the ratio's interval over seeds holds 1×"
PPO_BESIDE = EXP8.ppo_beside  # the PPO experiment whose runs of the analogues it reads
# the DQN designs that have a PPO analogue there (the same framework on the same env backend), DQN -> PPO label: the
# four whose spread the section sets beside PPO's
PPO_ANALOGUES = {row.label: row.analogue for row in VARIANTS if row.algorithm == DQN and row.analogue}


class DesignRuns(NamedTuple):
    """One variant's runs on one env (and one number of envs) and its steady iteration over seeds."""

    name: str  # its label, with the number of envs where more than one: '<label> at 16 envs'
    rows: list
    steady: tuple  # (geometric mean over seeds, interval over seeds) of the runs' steady iteration


def over_seeds(values):
    """(geometric mean, interval over seeds) of one cell's values, each seed one unit."""
    return geometric_mean(values), geometric_interval(values)


def seed_ratio(rows, reference_rows, metric):
    """(geometric mean, interval over seeds) of the rows' metric over the reference rows', paired by seed; unlike
    stats.paired it pairs across numbers of envs (the wide variant against the fastest 1-env variant)."""
    reference = {row["seed"]: row[metric] for row in reference_rows}
    ratios = [row[metric] / reference[row["seed"]] for row in rows if row["seed"] in reference]
    return over_seeds([ratio for ratio in ratios if not math.isnan(ratio)])


def variants(rows, suffix=""):
    """A DesignRuns per label of the rows (its name the label and suffix), the fastest steady iteration first and those
    without one last."""
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    cells = {label + suffix: where(rows, label=label) for label in labels}
    found = [DesignRuns(name, cell, over_seeds(metric_values(cell, STEADY))) for name, cell in cells.items()]
    return sorted(found, key=lambda variant: (math.isnan(variant.steady[0]), variant.steady[0]))


def env_variants(rows):
    """One env's exp8 DesignRuns: those at 1 env, and those at more envs (the wide variant)."""
    counts = sorted({num_envs(row) or 0 for row in rows} - {1})
    wide = [variant for count in counts
            for variant in variants([row for row in rows if (num_envs(row) or 0) == count], f" at {count} envs")]
    return variants([row for row in rows if num_envs(row) == 1]), wide


def steady_apart(first, variant):
    """Whether a DesignRuns's steady iteration is told apart from the first's: the interval over seeds of their ratio,
    paired by seed, excludes 1× (None: one seed, no interval)."""
    bounds = seed_ratio(variant.rows, first.rows, STEADY)[1]
    return None if math.isnan(bounds[0]) else distinguishable(bounds)


def spread(single):
    """(slowest, the Lead of the fastest (stats.level_with_first by steady_apart), (the slowest's ratio over the
    fastest's, interval over seeds)) of the DesignRuns that have a steady iteration; None with fewer than two."""
    timed = [variant for variant in single if not math.isnan(variant.steady[0])]
    if len(timed) < 2:
        return None
    lead = level_with_first(timed, steady_apart)
    return timed[-1], lead, seed_ratio(timed[-1].rows, lead.first.rows, STEADY)


def fastest_words(lead, overlap, most=None):
    """The fastest of a spread in words: the Lead's first alone where its interval is apart from every other's; else
    'the fastest, a and b level' with why (overlap, '' to leave it unsaid), or the first with 'one seed: no
    interval' (lead_note). Names beyond most are counted (lead_names)."""
    note = lead_note(lead, lambda variant: variant.name, overlap, "seed")
    note = f" ({note})" if note else ""
    if lead.level:
        return f"the fastest, {lead_names(lead, lambda variant: variant.name, most)} level{note}"
    return lead.first.name + note


def ppo_spread(sweep_rows, env, ppo_labels):
    """The spread of PPO's variants ppo_labels in PPO_BESIDE on env at model size small, or a string saying why there
    is none."""
    ppo_rows = rows_of(sweep_rows, PPO_BESIDE)
    if not ppo_rows:
        return f"PPO's {PPO_BESIDE} is not in this sweep"
    cell = [row for row in where(ppo_rows, env=env, size="small") if row["label"] in ppo_labels]
    if not cell:
        return f"PPO's {PPO_BESIDE} has no run on {env} at model size small"
    missing = [label for label in ppo_labels if not where(cell, label=label)]
    if missing:
        return f"PPO's {PPO_BESIDE} has no {listed(missing)} on {env} at model size small"
    return spread(variants(cell)) or f"PPO's {PPO_BESIDE} variants on {env} have no steady iteration to compare"


def apart(dqn, ppo):
    """'further apart' or 'closer together' where the two ratios' intervals over seeds do not overlap, 'overlap' where
    they do, None without an interval (one seed)."""
    (_, (dqn_low, dqn_high, _)), (_, (ppo_low, ppo_high, _)) = dqn, ppo
    if math.isnan(dqn_low) or math.isnan(ppo_low):
        return None
    return "further apart" if dqn_low > ppo_high else "closer together" if dqn_high < ppo_low else "overlap"


def one_seed_side(dqn, ppo):
    """The side of the two ratios without an interval (one seed): "DQN's side", "PPO's side" or "each side"."""
    sides = [side for side, (_, bounds) in (("DQN", dqn), ("PPO", ppo)) if math.isnan(bounds[0])]
    return "each side" if len(sides) == 2 else f"{sides[0]}'s side"


def verdict(dqn, ppo):
    """Whether the DQN designs lie further apart than PPO's, from the two ratios' intervals over seeds."""
    order = apart(dqn, ppo)
    if order is None:
        side = one_seed_side(dqn, ppo)
        return f"{side[0].upper()}{side[1:]} has one seed: no interval to tell the two spreads apart."
    if order == "overlap":
        return "The two spreads are not told apart: their intervals overlap."
    return f"**The designs lie {order} for DQN than for PPO** here: the two intervals do not overlap."


def answer_lines(env, single, sweep_rows, steady, ppo_steady):
    """The generated answer for one env as markdown lines: a bullet naming the env, then one short bullet on the
    slowest 1-env DQN variant's steady iteration over the fastest's (the family's spread), then the PPO comparison
    (ppo_comparison_lines)."""
    family = spread(single)
    if family is None:
        return [f"- **{env}:** fewer than two DQN variants at 1 env have a steady iteration: no spread."]
    slowest, lead, ratio = family
    return [f"- **{env}:** {len(single)} DQN variants at 1 env.",
            f"  - {slowest.name} takes {speedup_text(*ratio)} the steady iteration (median of {steady}) of "
            f"{fastest_words(lead, OVERLAP)}{', the fastest' * lead.crowned}."] + [
        f"  - {line}" for line in ppo_comparison_lines(env, single, sweep_rows, ppo_steady)]


def ppo_comparison_lines(env, single, sweep_rows, ppo_steady):
    """The same spread over the four designs with a PPO analogue in PPO_BESIDE (PPO_ANALOGUES; where they are all the
    1-env variants, the spread just given), PPO's over those analogues there and whether the two differ, one short
    line each; or why there is no comparison (a design without a run here, as the Gymnasium pair on a MinAtar env; no
    run of PPO_BESIDE)."""
    designs = [variant for variant in single if variant.name in PPO_ANALOGUES]
    missing = [name for name in PPO_ANALOGUES if name not in [variant.name for variant in designs]]
    if missing:
        why = " (the Gymnasium scripts run only envs with a Gymnasium counterpart)" if all(
            BY_LABEL[name].backend == GYMNASIUM for name in missing) else ""
        return [f"No PPO spread to set beside it: the four designs with a PPO analogue in {PPO_BESIDE} are not all "
                "here.", f"exp8 has no run of {listed(missing)} on {env}{why}."]
    dqn = spread(designs)
    if dqn is None:
        return [f"Fewer than two of the four designs with a PPO analogue in {PPO_BESIDE} have a steady iteration: no "
                "PPO spread to set beside theirs."]
    slowest, lead, ratio = dqn
    lines = [] if len(designs) == len(single) else [
        f"Of the four designs with a PPO analogue in {PPO_BESIDE} (the same framework on the same env backend), "
        f"{slowest.name} takes {speedup_text(*ratio)} that of {fastest_words(lead, OVERLAP)}."]
    ppo = ppo_spread(sweep_rows, env, [PPO_ANALOGUES[variant.name] for variant in designs])
    if isinstance(ppo, str):
        return lines + [f"{ppo}: no PPO spread to set beside it."]
    ppo_slowest, ppo_lead, ppo_ratio = ppo
    return lines + [f"For PPO ({PPO_BESIDE}, small, median of {ppo_steady}) {ppo_slowest.name} takes "
                    f"{speedup_text(*ppo_ratio)} that of {fastest_words(ppo_lead, OVERLAP)}.",
                    verdict(ratio, ppo_ratio)]


def dqn_bullet(env, single, sweep_rows):
    """The summary of one env: the family's spread (against its fastest, or those level with it, more than two
    counted), and the four designs' beside PPO's where both are measured, or which side has one seed."""
    family = spread(single)
    if family is None:
        return "fewer than two DQN variants at 1 env have a steady iteration"
    slowest, lead, ratio = family
    text = f"{slowest.name} takes {speedup_text(*ratio)} the steady iteration of {fastest_words(lead, '', 2)}"
    designs = [variant for variant in single if variant.name in PPO_ANALOGUES]
    dqn = spread(designs) if len(designs) == len(PPO_ANALOGUES) else None
    ppo = ppo_spread(sweep_rows, env, list(PPO_ANALOGUES.values())) if dqn else "no comparison"
    if isinstance(ppo, str):
        return text
    order = apart(dqn[2], ppo[2])
    told = {"overlap": "not told apart"}.get(order, f"{order} for DQN")
    if order is None:
        told = f"{one_seed_side(dqn[2], ppo[2])} has one seed: no interval"
    designs_text = "" if len(designs) == len(single) else f"the four designs {speedup_text(*dqn[2])} against "
    return f"{text}; {designs_text}PPO's four {speedup_text(*ppo[2])}: {told}"


def whole_run_sps(rows):
    """The rows' whole-run env steps per second (a run's transitions over its total duration), geometric mean over
    seeds; NaN where not logged."""
    return geometric_mean([row["env_steps"] / row["total_s"] for row in rows])


def variant_table(single, wide, steady):
    """Table: each DesignRuns of one env, the 1-env ones fastest first, then the wide ones: its steady iteration with
    its interval over seeds, iteration 0, total, whole-run SPS, steady iteration relative to the fastest, final
    return, peak memory."""
    fastest_rows = single[0].rows if single else []
    memory_header, memory = memory_columns({variant.name: variant.rows for variant in single + wide})
    table = []
    for variant in single + wide:
        sps = whole_run_sps(variant.rows)
        table.append([variant.name, len(variant.rows), seconds_interval_text(*variant.steady),
                      seconds_text(geometric_mean(metric_values(variant.rows, "iter0_s"))),
                      seconds_text(geometric_mean(metric_values(variant.rows, "total_s"))),
                      "–" if math.isnan(sps) else number_text(sps),
                      relative_text(seed_ratio(variant.rows, fastest_rows, STEADY)),
                      mean_and_spread(metric_values(variant.rows, "final_return")), *memory[variant.name]])
    header = ["variant (mode)", "seeds", f"s per steady iteration ({steady}) [interval over seeds]",
              "iteration 0 (s)", "total (s)", "SPS (whole run)", "steady iteration relative to the fastest at 1 env",
              "final return", *memory_header]
    return markdown_table(header, table)


def dqn_chart(cells, out, steady):
    """Chart: per env, each DQN variant's steady iteration (geometric mean over seeds, bars its interval over seeds;
    log y), the wide ones beside those at 1 env."""
    names = ordered((variant.name for single, wide in cells.values() for variant in single + wide), LABEL_COLORS)
    figure, (ax,) = new_figure(f"Steady iteration of each DQN variant — exp8 (async, median of {steady})\npoints: "
                               "geometric mean over seeds; bars: interval over seeds (95% CI, or range with few seeds)",
                               1, panel_size=(max(6.0, 2.4 * len(cells)), 4.6))
    colors = colors_for(names)
    offsets, _ = series_offsets(len(names))
    for offset, name in zip(offsets, names):
        points = [(x + offset, variant.steady) for x, (single, wide) in enumerate(cells.values())
                  for variant in single + wide if variant.name == name and not math.isnan(variant.steady[0])]
        if not points:
            continue
        xs, values = zip(*points)
        means = [mean for mean, _ in values]
        errors = np.array([[0, 0] if math.isnan(low) else [mean - low, high - mean] for mean, (low, high, _) in values])
        # clipped: the geometric mean of equal seeds can lie a rounding error outside their range
        ax.errorbar(xs, means, yerr=errors.T.clip(min=0), color=colors[name], marker=marker_of(name), markersize=5,
                    linestyle="none", capsize=3, label=name)
    log_axis(ax, "y", " s")
    category_axis(ax, list(cells))
    ax.set(xlabel="env", ylabel="s per steady iteration")
    ax.grid(axis="y", which="major", alpha=0.3)
    return save_figure(figure, out, "dqn.png")


def note_lines(steady, wide):
    """How to read the section: the windows, what iteration 0 holds, why only whole iterations are timed, the columns,
    and what the wide variants are."""
    lines = [f"- Each run's steady iteration is the median of its {steady}; per variant the geometric mean over seeds, "
             f"with its interval over seeds (the range below {MIN_ENVS_FOR_CI} seeds, a 95% CI from there).",
             "- A variant is named the fastest only where each other's ratio to it, paired by seed, has an interval "
             "that excludes 1×; otherwise those level with it are named too.",
             "- Iteration 0 holds the learning-starts phase (transitions stored, no gradient step) and compilation.",
             "- The DQN loop has no rollout/update split (acting and learning alternate at every env step), so only "
             "whole iterations are timed.",
             "- SPS: a run's transitions over its total duration.",
             f"- Final return: mean of a run's last {FINAL_RETURN_EPISODES} logged episodic returns, mean ± sample "
             "standard deviation over seeds."]
    names = list(dict.fromkeys(variant.name for variant in wide))
    if names:
        lines += [f"- A table that has {listed(names)} gives it apart, after the variants at 1 env; it is in neither "
                  "spread.",
                  "- It makes as many transitions and gradient steps as at 1 env, in fewer, wider steps of its loop."]
    return lines + [""]


def section_dqn(sweep, out):
    """exp8's answer: per env, the slowest DQN variant's steady iteration over the fastest's, the same over the four
    designs with a PPO analogue beside PPO's for those analogues in PPO_BESIDE, a chart and a table per env. Its
    windows are named from exp8's runs alone, an env's answer and table from that env's (a MinAtar env's runs are
    shorter)."""
    rows = rows_of(sweep.rows, "exp8")
    if not rows:
        return Answer([], [])
    steady = window_names([row["run"] for row in rows])[STEADY]
    cells = {env: env_variants(where(rows, env=env)) for env in ordered((row["env"] for row in rows), sweep.env_order)}
    env_steady = {env: window_names([row["run"] for row in where(rows, env=env)])[STEADY] for env in cells}
    lines = [heading(sweep, "Does the framework matter more for DQN than for PPO? (exp8)"), ""]
    lines += [line for env, (single, _) in cells.items()
              for line in answer_lines(env, single, sweep.rows, env_steady[env], sweep.names[STEADY])]
    lines += [""] + note_lines(steady, [variant for _, wide in cells.values() for variant in wide])
    lines += empty_window_lines(rows, ("iter0_s", STEADY))
    if metric_values(rows, STEADY):
        lines += image(dqn_chart(cells, out, steady), "each DQN variant's steady iteration per env")
    for env, (single, wide) in cells.items():
        lines += [f"**{env}**", ""] + variant_table(single, wide, env_steady[env])
    return Answer(lines, [(f"exp8 · {env}", dqn_bullet(env, single, sweep.rows)) for env, (single, _) in cells.items()])
