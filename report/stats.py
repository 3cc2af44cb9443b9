"""Statistics every section uses: selecting and pairing runs, means, intervals over envs, cells."""

import itertools
import math
from collections import Counter, defaultdict
from typing import NamedTuple

import numpy as np
from scipy.stats import binom as binomial, t as student_t

from sweep.experiments import BY_NAME, SIZES, UNFILED
from sweep.variants import BY_LABEL, PPO
from report.settings import CI_LEVEL, COMPILE_BASELINES, FULLY_COMPILED, LABEL_COLORS, LENGTH_METRICS, MIN_ENVS_FOR_CI
from report.summary import ordered, rank
from report.types import Pair


def rows_of(rows, exp):
    """Rows of one experiment, with the runs found outside runs/<exp>/ that it reads as its own (experiments.UNFILED
    names what they are taken for, the experiment's `unfiled` which of them it takes)."""
    unfiled = {UNFILED[key]: sizes for key, sizes in BY_NAME[exp].unfiled.items()} if exp in BY_NAME else {}
    return [row for row in rows if row["exp"] == exp
            or (row["exp"] in unfiled and (unfiled[row["exp"]] is None or row["size"] in unfiled[row["exp"]]))]


def algorithm_of(label):
    """The algorithm of a variant label, 'ppo' or 'dqn', as the registry (sweep/variants.py) has it; PPO for a label
    the registry lacks."""
    return BY_LABEL[label].algorithm if label in BY_LABEL else PPO


def is_eager(label):
    """Whether a variant label runs op by op (the registry's Variant.eager; False for a label the registry lacks)."""
    return label in BY_LABEL and BY_LABEL[label].eager


def where(rows, **fields):
    """Rows whose fields equal the given values."""
    return [row for row in rows if all(row[name] == value for name, value in fields.items())]


def metric_values(rows, metric):
    """The metric of the rows, NaNs left out."""
    return [row[metric] for row in rows if not math.isnan(row[metric])]


def scope(rows):
    """The envs rows cover, for chart titles: the env's name when only one, else their count."""
    envs = {row["env"] for row in rows}
    return next(iter(envs)) if len(envs) == 1 else f"{len(envs)} envs"


def paired(rows_a, rows_b, metric):
    """Pairs of A's and B's metric for every condition and seed both ran; for LENGTH_METRICS also the same length.

    Runs of different workloads have different configs and are never paired; neither are different seeds.
    """
    by_key = []
    for rows in (rows_a, rows_b):
        values = {}
        for row in rows:
            if not math.isnan(row[metric]):
                length = row["num_iterations"] if metric in LENGTH_METRICS else None
                values[row["condition"], length, row["seed"]] = row[metric]
        by_key.append(values)
    values_a, values_b = by_key
    return [Pair(key[0], values_a[key], values_b[key])
            for key in sorted(values_a.keys() & values_b.keys(), key=lambda key: (key[0], key[1] or 0, key[2]))]


def paired_labels(rows, label_a, label_b, metric):
    """paired() of the rows of label A and the rows of label B."""
    return paired(where(rows, label=label_a), where(rows, label=label_b), metric)


def values_by(rows, category_field, categories, labels, metric):
    """{(category, label): the metric of the label's rows in the category, NaNs left out}: what draw_points draws."""
    return {(category, label): metric_values(where(rows, label=label, **{category_field: category}), metric)
            for category in categories for label in labels}


def most_common_length(rows):
    """The rows of the most common number of iterations (the longest on a tie), and that number."""
    counts = Counter(row["num_iterations"] for row in rows)
    if not counts:
        return rows, None
    length = max(counts, key=lambda n: (counts[n], n))
    return [row for row in rows if row["num_iterations"] == length], length


def geometric_mean(values, axis=None):
    """Geometric mean, ignoring NaNs (NaN for no values); along axis, every slice must hold a value."""
    values = np.asarray(values, dtype=float)
    if axis is None:
        values = values[~np.isnan(values)]
    return np.exp(np.nanmean(np.log(values), axis=axis)) if values.size else math.nan


def median(values, axis=None):
    """Median, ignoring NaNs (NaN for no values); along axis, every slice must hold a value."""
    values = np.asarray(values, dtype=float)
    if axis is None:
        values = values[~np.isnan(values)]
    return np.nanmedian(values, axis=axis) if values.size else math.nan


def by_env(pairs):
    """The pairs' speedups grouped by env: [[speedups of one env], ...]."""
    groups = defaultdict(list)
    for pair in pairs:
        groups[pair.condition.env].append(pair.speedup)
    return list(groups.values())


def interval(pairs):
    """(low, high, kind) of the geometric mean of the pairs' speedups, over envs (the seeds of one env are not
    independent evidence about other envs, so each env counts once, by the geometric mean of its seeds).

    With at least MIN_ENVS_FOR_CI envs, kind is '95% CI': Student's t interval of the envs' mean log speedup,
    exp(m ± t(n−1) s/√n), exact when log speedups are normal. With fewer, kind is 'range': the min and max over
    envs. NaN with fewer than two envs.
    """
    return geometric_interval([float(geometric_mean(group)) for group in by_env(pairs)])


def geometric_interval(values):
    """(low, high, kind) of the geometric mean of independent positive values, one per unit (an env; or, within one
    cell, a seed): interval()'s rule, a '95% CI' from MIN_ENVS_FOR_CI values, else their 'range'; NaN below two."""
    if len(values) < MIN_ENVS_FOR_CI:
        return envs_range(values)
    logs = np.log(values)
    half_width = student_t.ppf(0.5 + CI_LEVEL / 2, len(logs) - 1) * np.std(logs, ddof=1) / math.sqrt(len(logs))
    return math.exp(logs.mean() - half_width), math.exp(logs.mean() + half_width), f"{CI_LEVEL:.0%} CI"


def median_interval(pairs):
    """(low, high, kind) of the median of the pairs' speedups, over envs (each env once, by the median of its seeds).

    With at least MIN_ENVS_FOR_CI envs, a distribution-free confidence interval of the median: the k-th smallest and
    k-th largest env, k the largest for which the coverage 1 − 2·P(Binomial(n, ½) < k) is at least CI_LEVEL; that
    coverage is exact for any continuous distribution and discrete in n, so kind names it rounded down, e.g. '96% CI'
    (12 envs). With fewer, 'range' as interval() gives it.
    """
    per_env = sorted(float(median(group)) for group in by_env(pairs))
    if len(per_env) < MIN_ENVS_FOR_CI:
        return envs_range(per_env)
    n = len(per_env)
    coverages = {k: 1 - 2 * binomial.cdf(k - 1, n, 0.5) for k in range(1, n // 2 + 1)}
    k = max(k for k, coverage in coverages.items() if coverage >= CI_LEVEL)
    return per_env[k - 1], per_env[n - k], f"{math.floor(coverages[k] * 100)}% CI"


def envs_range(per_env):
    """(min, max, 'range') over the envs' values (or one cell's seeds'); NaN with fewer than two."""
    if len(per_env) < 2:
        return math.nan, math.nan, ""
    return min(per_env), max(per_env), "range"


def distinguishable(bounds):
    """True when an interval (low, high, kind) excludes 1× as printed (two decimals): the envs agree on a side."""
    low, high = (round(bound, 2) for bound in bounds[:2])
    return not math.isnan(low) and not low <= 1 <= high


class Lead(NamedTuple):
    """The first of several designs by its point estimate, and the others sorted by how they stand against it."""

    first: object
    level: list  # their intervals are not apart from the first's
    unknown: list  # no interval to tell them from the first (one seed, one run)
    apart: list  # their intervals are apart from the first's

    @property
    def crowned(self):
        """Whether the first may be named first: its interval is apart from every other's."""
        return not self.level and not self.unknown


def level_with_first(items, apart):
    """The rule by which every answer names a design first (no winner inside noise): items are ordered by their point
    estimate, the first first; apart(first, item) is True where the two intervals are apart, False where they are not,
    None where there is none (one seed, one run). An answer names the first alone only where the Lead is crowned,
    otherwise it names those level with it, or says that there is no interval."""
    first, *others = items
    verdicts = [(item, apart(first, item)) for item in others]
    level = [item for item, verdict in verdicts if verdict is not None and not verdict]
    unknown = [item for item, verdict in verdicts if verdict is None]
    return Lead(first, level, unknown, [item for item, verdict in verdicts if verdict])


def ranges_apart(values_a, values_b):
    """True where two designs' ranges (min–max) over seeds or runs do not overlap, False where they do, None where
    either has fewer than two values (no range)."""
    if min(len(values_a), len(values_b)) < 2:
        return None
    return bool(max(values_a) < min(values_b) or max(values_b) < min(values_a))


def compiled_comparisons(labels):
    """('A over B', A, B) for every two fully compiled variants among labels, A before B in display order."""
    present = [label for label in FULLY_COMPILED if label in labels]
    return [(f"{a} over {b}", a, b) for a, b in itertools.combinations(present, 2)]


def framework_of(label):
    """The framework of a variant label: 'nnx_cached (cached)' -> 'nnx'."""
    return label.split(" ")[0].split("_")[0]


def compile_mode_comparisons(rows):
    """(framework, label, baseline label) for every compiled mode whose COMPILE_BASELINES baseline also ran."""
    labels = ordered((row["label"] for row in rows), LABEL_COLORS)
    return [(framework_of(COMPILE_BASELINES[label]), label, COMPILE_BASELINES[label])
            for label in labels if COMPILE_BASELINES.get(label) in labels]


def magnitude(ratio):
    """How far a time ratio is from 1×, either way: max(ratio, 1 / ratio)."""
    return max(ratio, 1 / ratio)


def inverted(value):
    """(mean, interval) of a time ratio turned around: B / A from A / B."""
    mean, (low, high, kind) = value
    return 1 / mean, (1 / high, 1 / low, kind)


def mean_curve(curves, points=200):
    """Grid, mean, min and max across repeats of (x, y) curves, interpolated where all repeats have data (else None)."""
    if not curves:
        return None
    start, end = max(x[0] for x, _ in curves), min(x[-1] for x, _ in curves)
    if not end > start:
        return None
    grid = np.linspace(start, end, points)
    ys = np.array([np.interp(grid, x, y) for x, y in curves])
    return grid, ys.mean(axis=0), ys.min(axis=0), ys.max(axis=0)


def named_cells(items, key, env_order):
    """{name: items} grouped by key(item) = (env, model size, rest of the workload), envs by complexity; a cell is
    named by its env, and also by its size and workload where the env has several cells."""
    env_rank, size_rank = rank(env_order), rank(SIZES)
    keys = sorted({key(item) for item in items}, key=lambda k: (env_rank(k[0]), size_rank(k[1]), str(k[2])))
    per_env = Counter(env for env, _, _ in keys)
    name = lambda env, size, rest: env if per_env[env] == 1 else f"{env} ({size}, {'/'.join(map(str, rest))})"
    return {name(*k): [item for item in items if key(item) == k] for k in keys}


def per_env_workload(row):
    """The cell key of a row of an experiment that varies the number of envs: env, model size and the workload but
    the number of envs."""
    return row["env"], row["size"], row["condition"].work[1:]


def speedups_by_category(rows, category_field, categories, comparisons, metric):
    """speedups[(category, name)] for comparisons [(name, label A, label B)] on rows split by category_field."""
    speedups = {}
    for category in categories:
        in_category = where(rows, **{category_field: category})
        for name, label_a, label_b in comparisons:
            pairs = paired_labels(in_category, label_a, label_b, metric)
            speedups[category, name] = [pair.speedup for pair in pairs]
    return speedups
