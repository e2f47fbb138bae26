"""Raking: weights fitted to population margins by iterative proportional fitting, optionally within
bounds (trimming).

The statistics ("module notes" below) are in the notes of :mod:`deniable.estimators.weights`:
"Raking".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .result import Result, frozen
from .weights import SamplingDesignError, _check_squares, _frequencies, survey_design


RAKE_TOLERANCE = 1e-10
RAKE_ITERATIONS = 1000


@dataclass(frozen=True, eq=False)
class RakeResult(Result):
    """Raked weights, the margins they achieve, and what raking did to them."""

    weights: np.ndarray
    achieved: dict  # variable → achieved shares per category
    iterations: int
    converged: bool
    smallest: float  # the smallest positive raked weight × the mean weight (scale-free, as the bounds)
    largest: float  # the largest, × the mean weight
    effective_n: float
    bounds: tuple | None = None  # (low, high) × the mean weight: the trimming bounds, or None
    trimmed: int = 0  # respondents whose weight is at a bound


def rake(weights, variables: dict, margins: dict, *, tolerance: float = RAKE_TOLERANCE,
         iterations: int = RAKE_ITERATIONS, counts=None, bounds: tuple | None = None) -> RakeResult:
    """Rake ``weights`` so that each variable's weighted shares equal its population ``margins``.

    ``variables``: name → category index per respondent (0..m−1; a question asked directly);
    ``margins``: name → population share of each category (adding up to 1).  Iterative proportional
    fitting (module notes); the total of the weights is kept (weights beyond ``2^±256`` are first
    rescaled by a power of two, as :func:`survey_design` does; the result's ``smallest`` and
    ``largest`` are × the mean weight, so they do not depend on the scale).  ``counts`` (optional): how many
    identical respondents each row stands for (answer patterns), so that a row's weight is each
    of its respondents' weight.  ``bounds = (low, high)``: trimming — after each round of fitting,
    the weights are clipped to ``[low, high]`` × the mean weight, and fitting goes on until the
    margins are met within the bounds (so the trimmed weights are still calibrated).  Raises
    SamplingDesignError naming the variable for margins that do not add up to 1, a category with a
    population share but no respondent (or respondents but a share of 0), or raking that does not
    converge (``field``: ``trim`` when bounds were given).
    """
    w = survey_design(weights).weights.copy()
    c = _frequencies(counts, w.size)
    total = float(c @ w)
    columns = {}
    for name, target in margins.items():
        if name not in variables:
            raise SamplingDesignError(f"margins: {name!r} is not one of the variables ({', '.join(variables)})", name)
        target = np.asarray(target, dtype=float)
        if target.ndim != 1 or np.any(target < 0) or not np.all(np.isfinite(target)) or \
                abs(target.sum() - 1) > 1e-9:
            raise SamplingDesignError(f"{name}: the margin must be non-negative shares adding up to 1", name)
        codes = np.asarray(variables[name])
        if codes.shape != w.shape or codes.dtype.kind not in "iu" or codes.min() < 0 or codes.max() >= target.size:
            raise SamplingDesignError(f"{name}: one category 0..{target.size - 1} per respondent needed", name)
        present = np.bincount(codes, weights=c * w, minlength=target.size) > 0
        missing = np.flatnonzero(~present & (target > 0))
        if missing.size:
            raise SamplingDesignError(f"{name}: category {int(missing[0])} has a population share but no respondent "
                                      "(merge it with another)", name)
        extra = np.flatnonzero(present & (target == 0))
        if extra.size:
            raise SamplingDesignError(f"{name}: category {int(extra[0])} has respondents but a population share of 0",
                                      name)
        columns[name] = (codes, target)
    low = high = None
    if bounds is not None:
        low, high = (float(b) * total / c.sum() for b in bounds)
        if not (0 <= low < high) or not math.isfinite(high):
            raise SamplingDesignError("trim: the bounds must be 0 ≤ LOW < HIGH (times the mean weight)", "trim")
    if bounds is not None:
        _check_feasible(columns, c, low, high, total)
    done = 0
    converged = False
    start = w.copy()
    factors = {name: np.ones(target.size) for name, (codes, target) in columns.items()}
    for done in range(1, iterations + 1):
        for name, (codes, target) in columns.items():
            if bounds is None:
                current = np.bincount(codes, weights=c * w, minlength=target.size) / total
                factor = np.divide(target, current, out=np.zeros_like(target), where=current > 0)
                w = w * factor[codes]
                continue
            raw = start * np.prod([f[col[0]] for f, col in zip(factors.values(), columns.values())], axis=0)
            unscaled = raw / factors[name][codes]
            for g in np.flatnonzero(target > 0):
                rows = codes == g
                factors[name][g] = _bounded_factor(unscaled[rows], c[rows], low, high, target[g] * total, name)
        if bounds is not None:
            raw = start * np.prod([f[col[0]] for f, col in zip(factors.values(), columns.values())], axis=0)
            w = np.clip(raw, low, high)
        gap = max(float(np.max(np.abs(np.bincount(codes, weights=c * w, minlength=target.size) / total - target)))
                  for codes, target in columns.values())
        if gap < tolerance:
            converged = True
            break
    if not converged:
        if bounds is not None:
            raise SamplingDesignError(
                f"trim: raking within the bounds {bounds[0]:g}..{bounds[1]:g} × the mean weight did "
                f"not meet the margins in {iterations} rounds; widen the bounds", "trim")
        raise SamplingDesignError(
            f"margins: raking did not converge in {iterations} rounds (the margins may contradict "
            "each other on the respondents' combinations)", "margins")
    if not np.all(np.isfinite(w)):
        raise SamplingDesignError("margins: raking made weights that are not finite numbers", "margins")
    _check_squares(w, c, "margins: the raked weights", "margins")
    achieved = {name: (np.bincount(codes, weights=c * w, minlength=target.size) / float(c @ w)).tolist()
                for name, (codes, target) in columns.items()}
    positive = (w > 0) & (c > 0)
    trimmed = 0
    if bounds is not None:
        at_bound = np.isclose(w, low, rtol=1e-12, atol=0) | np.isclose(w, high, rtol=1e-12, atol=0)
        trimmed = int(round(float(c[at_bound].sum())))
    mean = float(c @ w) / float(c.sum())  # the weights' range × their mean: the same whatever their scale
    return RakeResult(weights=frozen(w), achieved=achieved, iterations=done, converged=converged,
                      smallest=float(w[positive].min()) / mean, largest=float(w[positive].max()) / mean,
                      effective_n=float((c @ w) ** 2 / (c @ w**2)),
                      bounds=None if bounds is None else (float(bounds[0]), float(bounds[1])), trimmed=trimmed)


def _check_feasible(columns: dict, c: np.ndarray, low: float, high: float, total: float) -> None:
    """Refuse bounds that no weights can keep while meeting the margins: a linear program over the
    cells (the combinations of the raking variables' categories) — some weights within the bounds
    meet the margins exactly when some mean weight per cell within them does."""
    from scipy.optimize import linprog

    codes = np.column_stack([col[0] for col in columns.values()])
    cells, inverse = np.unique(codes, axis=0, return_inverse=True)
    sizes = np.bincount(inverse.reshape(-1), weights=c, minlength=len(cells))
    rows, goals = [], []
    for m, (_, target) in enumerate(columns.values()):
        for g in range(target.size):
            rows.append(np.where(cells[:, m] == g, sizes, 0.0))
            goals.append(target[g] * total)
    found = linprog(np.zeros(len(cells)), A_eq=np.array(rows), b_eq=np.array(goals), bounds=[(low, high)] * len(cells),
                    method="highs")
    if found.status == 2:
        raise SamplingDesignError("trim: no weights within the bounds meet the margins; widen the bounds", "trim")


def _bounded_factor(a: np.ndarray, c: np.ndarray, low: float, high: float, goal: float, name: str) -> float:
    """The factor s with ``Σ c·clip(s·a, low, high) = goal`` (increasing in s: bisection on log s, to
    the last bit).  One category's step of raking within bounds: the weights clipped at a bound stay
    there, the others take the whole adjustment (Deville & Särndal 1992, calibration with a
    truncated distance, solved block by block as iterative proportional fitting solves raking)."""
    if goal < low * c.sum() * (1 - 1e-12) or goal > high * c.sum() * (1 + 1e-12) or \
            not np.all(np.isfinite(a) & (a > 0)) or not (1e-250 < a.min() and a.max() < 1e250):
        raise SamplingDesignError(f"trim: {name}: a category's population share cannot be met with weights within the "
                                  "bounds; widen them", "trim")
    lo, hi = math.log(low / a.max()) if low > 0 else math.log(1e-300 / a.max()), math.log(high / a.min())
    for _ in range(200):
        mid = (lo + hi) / 2
        if float(c @ np.clip(math.exp(mid) * a, low, high)) < goal:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return math.exp((lo + hi) / 2)
