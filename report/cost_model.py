"""The cost model t(N) = a + b·N of a variant's steady iteration against the number of envs N: the fit with the
intervals of a and b, each variant's times per N relative to the fastest's, and the costs in words."""

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.stats import t as student_t

from report.settings import FIT_LEVEL, LABEL_COLORS
from report.stats import median, where
from report.summary import num_envs, ordered
from report.text import number_text


class CostFit(NamedTuple):
    """The cost model t(n) = a + b·n of steady iteration times, the intervals of a and b, the relative residuals."""

    a: float  # seconds per iteration whatever the number of envs: the fixed cost
    b: float  # seconds per iteration per env: the marginal cost
    a_bounds: tuple  # (low, high) at FIT_LEVEL; NaN without residual degrees of freedom
    b_bounds: tuple
    residuals: np.ndarray  # (a + b·nᵢ − tᵢ) / tᵢ, one per point in the order given

    def at(self, n):
        """The modelled seconds per iteration with n envs."""
        return self.a + self.b * n


def fit_cost(ns, times):
    """Fits t(n) = a + b·n to the points (nᵢ, tᵢ) by least squares on relative error: Σ((a + b·nᵢ − tᵢ)/tᵢ)² least.

    Each interval is the estimate ± Student's t(m − 2) × its standard error from the residuals of the m points: with
    one seed per n the residuals are the only spread. None with fewer than two distinct n.
    """
    ns, times = np.asarray(ns, dtype=float), np.asarray(times, dtype=float)
    if len(set(ns)) < 2:
        return None
    design = np.column_stack([1 / times, ns / times])
    coefficients = np.linalg.lstsq(design, np.ones(len(times)), rcond=None)[0]
    residuals = design @ coefficients - 1
    dof = len(times) - 2
    half = np.full(2, math.nan)
    if dof > 0:
        covariance = residuals @ residuals / dof * np.linalg.inv(design.T @ design)
        half = student_t.ppf(0.5 + FIT_LEVEL / 2, dof) * np.sqrt(np.diag(covariance))
    (a, b), (half_a, half_b) = coefficients, half
    return CostFit(float(a), float(b), (a - half_a, a + half_a), (b - half_b, b + half_b), residuals)


def max_residual(fit):
    """The largest relative residual of a fit, in size; NaN without a fit."""
    return float(np.abs(fit.residuals).max()) if fit else math.nan


@dataclass
class Scaling:
    """One variant's time per iteration against the number of envs in one cell (env, model size, per-env
    workload)."""

    label: str
    points: list  # (n, seconds) of each run with a value, by n
    ns: np.ndarray  # the measured numbers of envs, ascending
    times: np.ndarray  # the median over seeds at each
    relative: np.ndarray  # times / the fastest variant's at the same n
    fit: CostFit | None


def scalings(rows, metric="iter8_99_median_s"):
    """A Scaling of metric per variant of one cell's rows, each relative to the fastest variant at each n."""
    measured = {}
    for label in ordered((row["label"] for row in rows), LABEL_COLORS):
        points = sorted((num_envs(row), row[metric]) for row in where(rows, label=label)
                        if num_envs(row) and not math.isnan(row[metric]))
        if points:
            ns = np.array(sorted({n for n, _ in points}))
            measured[label] = points, ns, np.array([median([t for m, t in points if m == n]) for n in ns])
    fastest = defaultdict(lambda: math.inf)
    for _, ns, times in measured.values():
        for n, seconds in zip(ns, times):
            fastest[n] = min(fastest[n], seconds)
    return [Scaling(label, points, ns, times, times / np.array([fastest[n] for n in ns]), fit_cost(*zip(*points)))
            for label, (points, ns, times) in measured.items()]


def time_at(scaling, n):
    """A Scaling's median time at n, NaN where it did not run n envs."""
    return float(scaling.times[scaling.ns == n][0]) if n in scaling.ns else math.nan


def cost_text(fit, part, bounds=True):
    """A fitted cost, 'a' in ms or 'b' in µs per env, with its interval where bounds and the fit has one; '–' if no
    fit."""
    if fit is None:
        return "–"
    value, (low, high) = (fit.a, fit.a_bounds) if part == "a" else (fit.b, fit.b_bounds)
    scale, unit = (1e3, " ms") if part == "a" else (1e6, " µs")
    text = f"{number_text(value * scale)}{unit}"
    if not bounds or math.isnan(low):
        return text
    return f"{text} [{FIT_LEVEL:.0%} fit interval {number_text(low * scale)} to {number_text(high * scale)}]"
