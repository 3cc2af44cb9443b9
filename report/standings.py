"""The ranking of variants, which every ranking answer shares: per model size each variant's standing against the
fastest (relative times with intervals over envs), when a faster steady state repays a longer iteration 0 (break-even),
the generated conclusions, the table and the summary bullets of a ranking."""

import math
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

from sweep.experiments import SIZES
from report.load import window_names
from report.stats import (
    distinguishable, framework_of, geometric_mean, interval, metric_values, most_common_length, paired_labels, where,
)
from report.summary import ordered
from report.text import listed, markdown_table, memory_columns, relative_text, seconds_text, speedup_text


@dataclass
class Standing:
    """One fully compiled variant of one model size against the fastest: relative times and its windows."""

    label: str
    envs: int
    total: tuple  # (geometric mean of time / fastest's time, interval (low, high, kind))
    steady: tuple
    iter0_s: float  # geometric mean over envs and seeds
    steady_s: float
    steady_vs_total: tuple = (math.nan, (math.nan, math.nan, ""))  # steady state / the fastest-in-total's, as total


class SizeRanking(NamedTuple):
    """One model size's ranking: its runs of their most common length, the steady window's name, the standings."""

    size: str
    length: int
    steady_name: str
    table: list  # Standings, by steady iteration (those without one last), then by total
    fastest_total: str
    fastest_steady: str
    rows: list


def window_standing(rows):
    """A Standing holding only the geometric means of the rows' iteration 0 and steady state (for break_even)."""
    return Standing(rows[0]["label"], len({row["env"] for row in rows}), (math.nan, ()), (math.nan, ()),
                    geometric_mean(metric_values(rows, "iter0_s")), geometric_mean(metric_values(rows, "iter8_99_median_s")))


def fastest_label(rows, labels, metric):
    """The label with the smallest geometric mean of metric over the (env, seed) that every label ran; None if no value."""
    keys = [{(row["env"], row["seed"]) for row in where(rows, label=label) if not math.isnan(row[metric])}
            for label in labels]
    common = set.intersection(*keys)
    means = {label: geometric_mean([row[metric] for row in where(rows, label=label)
                                    if (row["env"], row["seed"]) in common or not common]) for label in labels}
    measured = [label for label in labels if not math.isnan(means[label])]
    return min(measured, key=means.get) if measured else None


def relative_to(rows, fastest, label, metric):
    """(geometric mean, interval) of label's metric over fastest's, paired by env and seed."""
    pairs = paired_labels(rows, fastest, label, metric)
    return geometric_mean([pair.speedup for pair in pairs]), interval(pairs)


def standings(rows, labels):
    """Standing of every label and the fastest labels on total and on the steady state."""
    fastest_total = fastest_label(rows, labels, "total_s")
    fastest_steady = fastest_label(rows, labels, "iter8_99_median_s")
    return [Standing(label, len({row["env"] for row in where(rows, label=label)}),
                     relative_to(rows, fastest_total, label, "total_s"),
                     relative_to(rows, fastest_steady, label, "iter8_99_median_s"),
                     geometric_mean(metric_values(where(rows, label=label), "iter0_s")),
                     geometric_mean(metric_values(where(rows, label=label), "iter8_99_median_s")),
                     relative_to(rows, fastest_total, label, "iter8_99_median_s"))
            for label in labels], fastest_total, fastest_steady


def break_even(variant, reference):
    """Iterations after which variant's faster steady state repays its longer iteration 0 against reference.

    With total(n) ≈ iteration 0 + (n − 1) × steady state: n = 1 + Δ iteration 0 / Δ steady state. None when
    variant's steady state is not faster (never repaid); 0 when its iteration 0 is not longer either; NaN when a
    steady state is unknown (its window empty).
    """
    if math.isnan(variant.steady_s) or math.isnan(reference.steady_s):
        return math.nan
    if variant.steady_s >= reference.steady_s:
        return None
    if variant.iter0_s <= reference.iter0_s:
        return 0
    return 1 + (variant.iter0_s - reference.iter0_s) / (reference.steady_s - variant.steady_s)


def tie_reason(values):
    """Why relative times (mean, interval) do not tell variants apart: their intervals hold 1×, or there is none."""
    if all(math.isnan(bounds[0]) for _, bounds in values):
        return "with one env there is no interval"
    return "its interval holds 1×" if len(values) == 1 else "their intervals hold 1×"


def break_even_text(variant, reference, steady_ratio):
    """Plain words for break_even; steady_ratio is (mean, interval) of variant's steady state over reference's.

    A break-even is computed only between steady states that the interval tells apart.
    """
    if variant is reference:
        return "–"
    mean, bounds = steady_ratio
    if math.isnan(mean):
        return "– (no steady state)"
    if not distinguishable(bounds):
        return "– (one env: no interval)" if math.isnan(bounds[0]) else "– (steady states indistinguishable)"
    iterations = break_even(variant, reference)
    if mean > 1 or iterations is None:
        return "never (steady state slower)"
    return "from the start" if iterations == 0 else f"after {math.ceil(iterations):,} iterations"


MAX_NAMED = 4  # a conclusion names at most this many variants in one list, and counts them beyond


def fastest_claim(table, fastest, value, what, time):
    """['**X** is fastest {what}.'], or, where a variant's interval against X holds 1× or one env gives none, that no
    variant is (named) fastest: X has the shortest {time}, then one sentence on the variants it is not told from and
    one on those with one env (their relative times are in the table beside it)."""
    others = [standing for standing in table if standing.label != fastest]
    unknown = [standing for standing in others if math.isnan(value(standing)[1][0])]
    tied = [standing for standing in others if standing not in unknown and not distinguishable(value(standing)[1])]
    if not tied and not unknown:
        return [f"**{fastest}** is fastest {what}."]
    names = lambda group: listed([standing.label for standing in group]) if len(group) <= MAX_NAMED else \
        f"{len(group)} variants"
    claims = [f"No variant is {'named ' * bool(unknown)}fastest {what}: {fastest} has the shortest {time}."]
    if tied:
        claims.append(f"{names(tied)} {'is' if len(tied) == 1 else 'are'} not told apart from it "
                      f"({tie_reason([value(standing) for standing in tied])}).")
    if unknown:
        whom = "the other variants" if len(unknown) == len(others) and len(others) > 1 else names(unknown)
        claims.append(f"With one env there is no interval to tell it from {whom}.")
    return claims


def steady_conclusion(by_label, fastest_total, fastest_steady, steady_name):
    """The steady-state lines of a ranking conclusion: the fastest, and when a faster steady state is repaid."""
    if fastest_steady is None:
        return [f"No steady-state comparison: {steady_name} is empty in these runs."]
    claims = fastest_claim(list(by_label.values()), fastest_steady, lambda standing: standing.steady,
                           f"in the steady state ({steady_name})", "time per iteration")
    reference = by_label[fastest_total]
    if fastest_steady == fastest_total:
        return claims
    ratio = reference.steady
    if not distinguishable(ratio[1]):
        return claims + [f"No break-even against {fastest_total}, the shortest in total: the two steady states are "
                         f"not told apart ({speedup_text(*ratio)})."]
    iterations = break_even(by_label[fastest_steady], reference)
    when = ("its iteration 0 is not longer either" if iterations == 0 else
            f"its longer iteration 0 is repaid after about {math.ceil(iterations):,} iterations")
    return claims + [f"{fastest_steady} is {speedup_text(*ratio)} faster per iteration than {fastest_total}, the "
                     f"shortest in total; {when}."]


def ranking_conclusion(size, length, table, fastest_total, fastest_steady, steady_name):
    """The generated conclusions of one model size as markdown lines: a bullet naming the size, then one short
    bullet per finding (the fastest in total, in the steady state, the break-even); a winner is named only where
    intervals exclude 1×. Each variant's time relative to the fastest is in the table above, not repeated here."""
    envs = max(standing.envs for standing in table)
    lead = f"- **{size}** ({envs} env{'s' * (envs > 1)}, runs of {length} iterations):"
    if len(table) == 1:
        return [f"{lead} only {table[0].label} ran."]
    claims = fastest_claim(table, fastest_total, lambda standing: standing.total, "in total", "total time")
    by_label = {standing.label: standing for standing in table}
    claims += steady_conclusion(by_label, fastest_total, fastest_steady, steady_name)
    return [lead] + [f"  - {claim}" for claim in claims]


FRAMEWORK_FAMILIES = {"linen": "JAX", "nnx": "JAX", "equinox": "JAX", "torch": "torch"}


def family_of(label):
    """'JAX' or 'torch': the framework family of a variant label."""
    return FRAMEWORK_FAMILIES.get(framework_of(label), framework_of(label))


def repaid_starts(ranking):
    """(the variant with the shortest iteration 0, [(iterations, label) of each variant whose faster steady state repays
    its longer iteration 0 against it, the soonest first]): break_even against the quickest start, for the steady
    states that an interval tells apart from it or that have none (one env, one seed: the bullet says so)."""
    timed = [standing for standing in ranking.table if not math.isnan(standing.iter0_s)]
    if not timed:
        return None, []
    quickest = min(timed, key=lambda standing: standing.iter0_s)
    repaid = []
    for standing in timed:
        bounds = relative_to(ranking.rows, quickest.label, standing.label, "iter8_99_median_s")[1]
        iterations = break_even(standing, quickest)
        known = iterations and not math.isnan(iterations)
        if standing is not quickest and known and (math.isnan(bounds[0]) or distinguishable(bounds)):
            repaid.append((math.ceil(iterations), standing.label))
    return quickest, sorted(repaid)


def one_run_per_cell(rows):
    """Whether every variant ran each env of the rows once (one seed): no run-to-run spread behind any figure."""
    return max(Counter((row["label"], row["env"]) for row in rows).values()) == 1


def ranking_bullet(ranking):
    """The answer of one model size's ranking in one short line, on the steady iteration: the shortest (and those not
    told apart from it), how far the rest of its framework family (JAX or torch) lies behind, the other family's best,
    and whether each cell is one run; relative steady iterations as the ranking table writes them."""
    if len(ranking.table) == 1:
        return f"only {ranking.table[0].label} ran"
    if ranking.fastest_steady is None:
        return (f"no steady iteration ({ranking.steady_name} is empty in runs of {ranking.length} iterations); "
                f"{ranking.fastest_total} has the shortest total")
    fastest = next(standing for standing in ranking.table if standing.label == ranking.fastest_steady)
    others = [standing for standing in ranking.table if standing is not fastest]
    unknown = [standing for standing in others if math.isnan(standing.steady[1][0])]
    tied = [standing.label for standing in others if standing not in unknown and not distinguishable(standing.steady[1])]
    no_interval = "; one env: no interval" * (len(unknown) == len(others))
    text = f"steady iteration: {fastest.label} shortest ({seconds_text(fastest.steady_s)} s{no_interval})"
    if tied:
        text += f", level with {listed(tied) if len(tied) < 3 else f'{len(tied)} others'}"
    family = family_of(fastest.label)
    own = [standing for standing in others if family_of(standing.label) == family]
    rest = [standing for standing in others if family_of(standing.label) != family]
    if own:
        slowest = max(own, key=lambda standing: standing.steady[0])
        text += f"; {family} within {relative_text(slowest.steady)} ({slowest.label})"
    if rest:
        best = min(rest, key=lambda standing: standing.steady[0])
        text += f"; {family_of(best.label)} at best {relative_text(best.steady)} ({best.label})"
    return text + "; one run per cell" * one_run_per_cell(ranking.rows)


def start_bullet(ranking):
    """The iterations after which the faster steady states repay their longer iteration 0 against the quickest start,
    in one short line; None where none does (every faster steady state starts as quickly)."""
    quickest, repaid = repaid_starts(ranking)
    if not repaid:
        return None
    (first, _), (last, label) = repaid[0], repaid[-1]
    span = f"{first:,} iterations ({label})" if len(repaid) == 1 else f"{first:,}–{last:,} iterations (last: {label})"
    return (f"{quickest.label} starts quickest (iteration 0: {seconds_text(quickest.iter0_s)} s); a faster steady "
            f"iteration repays its slower start after {span}")


def ranking_bullets(rankings, exp):
    """The summary bullets of a ranking: per model size, (label, text) on the steady iteration, then one on when the
    faster steady states repay their slower start."""
    bullets = []
    for ranking in rankings:
        start = start_bullet(ranking) if len(ranking.table) > 1 else None
        bullets += [(f"{exp} · {ranking.size}", ranking_bullet(ranking))]
        bullets += [(f"{exp} · {ranking.size} · start", start)] * bool(start)
    return bullets


def size_rankings(rows, labels, steady_name=None):
    """A SizeRanking per model size of the rows, of the labels it has; the steady window named by each size's runs
    unless steady_name names it for all."""
    rankings = []
    for size in ordered((row["size"] for row in rows), SIZES):
        sized, length = most_common_length(where(rows, size=size))
        table, fastest_total, fastest_steady = standings(sized, ordered((row["label"] for row in sized), labels))
        table.sort(key=lambda standing: (math.isnan(standing.steady[0]), standing.steady[0], standing.total[0]))
        name = steady_name or window_names([row["run"] for row in sized])["iter8_99_median_s"]
        rankings.append(SizeRanking(size, length, name, table, fastest_total, fastest_steady, sized))
    return rankings


def ranking_lines(rankings):
    """The ranking table of every size and its generated conclusions."""
    table_rows, conclusions = [], []
    memory_header, _ = memory_columns({"all": [row for ranking in rankings for row in ranking.rows]})
    for ranking in rankings:
        reference = next(standing for standing in ranking.table if standing.label == ranking.fastest_total)
        conclusions += ranking_conclusion(ranking.size, ranking.length, ranking.table, ranking.fastest_total,
                                          ranking.fastest_steady, ranking.steady_name)
        _, memory = memory_columns({standing.label: where(ranking.rows, label=standing.label)
                                    for standing in ranking.table}, len(memory_header) > 1)
        table_rows += [[ranking.size, standing.label, standing.envs, relative_text(standing.total),
                        relative_text(standing.steady), seconds_text(standing.iter0_s), seconds_text(standing.steady_s),
                        break_even_text(standing, reference, standing.steady_vs_total),
                        *memory[standing.label]] for standing in ranking.table]
    steady = "/".join(dict.fromkeys(ranking.steady_name for ranking in rankings))
    header = ["model size", "variant (mode)", "envs", "total, relative to the fastest", f"{steady}, relative",
              "iteration 0 (s, geo. mean)", f"{steady} (s/iteration, geo. mean)",
              "faster steady state repays iteration 0 (vs the shortest in total)", *memory_header]
    lines = markdown_table(header, table_rows)
    return lines + ["**Conclusions** (generated from the numbers above):", ""] + conclusions + [""]
