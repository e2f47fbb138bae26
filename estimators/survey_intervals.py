"""The intervals of a weighted share: Korn and Graubard's beta interval, Fieller's for a ratio, and
the Kish rule (every weighted interval holds the exact interval at Kish's effective sample size).

The statistics ("module notes" below) are in the notes of :mod:`deniable.estimators.weights`:
"Intervals" and "Never more certain than the reports".
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import beta, t

from .intervals import exact as exact_interval


def korn_graubard(share: float, variance: float, n: int, df: int, confidence: float,
                  positive: float | None = None) -> tuple[float, float]:
    """Korn & Graubard's beta interval for a proportion from a complex sample (module notes; R's
    ``svyciprop(method = "beta")``).  ``n``: the rows of the design (R's ``nrow``, in the t ratio);
    ``positive``: the respondents with a positive weight (default ``n``), the effective sample size
    when the variance is 0 — a row of weight 0 (outside a domain, not answered) tells nothing."""
    alpha = 1 - confidence
    if variance <= 0:
        n_eff = float(n if positive is None else max(positive, 1.0))
    else:
        n_eff = share * (1 - share) / variance
        if df > 0:
            n_eff *= (t.ppf(alpha / 2, n - 1) / t.ppf(alpha / 2, df)) ** 2
    x = n_eff * share
    low = float(beta.ppf(alpha / 2, x, n_eff - x + 1)) if x > 0 else 0.0
    high = float(beta.ppf(1 - alpha / 2, x + 1, n_eff - x)) if n_eff - x > 0 else 1.0
    return (0.0 if math.isnan(low) else low), (1.0 if math.isnan(high) else high)


KISH_TOLERANCE = 1e-9  # an exact end beyond Korn–Graubard's by less than this is rounding, not the rule


def kish_respondents(effective_n: float) -> int:
    """Kish's effective sample size rounded down, at least 1: the unweighted respondents whose exact
    interval every weighted interval contains (module notes, "Never more certain than the reports")."""
    if not math.isfinite(effective_n) or effective_n < 1:
        return 1
    return int(math.floor(effective_n * (1 + 1e-12)))  # Kish's n of equal weights is whole to rounding


def _whole_counts(share: float, n: int) -> np.ndarray:
    """The whole counts on either side of ``n · share`` (the same count twice when it is whole)."""
    x = min(max(float(share), 0.0), 1.0) * n
    nearest = round(x)
    if abs(x - nearest) <= 1e-9 * n:
        return np.array([nearest, nearest], dtype=np.int64)
    return np.array([math.floor(x), math.ceil(x)], dtype=np.int64)


def exact_at(share: float, n: int, p: float, q: float, confidence: float) -> tuple[float, float]:
    """The exact (Feldman–Cousins) interval for π of ``n`` unweighted reports of which a share ``share``
    is the report with probability ``λ = q + (p − q)π`` (:func:`deniable.estimators.intervals.exact`, the
    interval an unweighted question gets), joined over the whole counts on either side of ``n · share``
    (so it contains the interval at whichever of them ``n · share`` is rounded to)."""
    low, high = exact_interval(_whole_counts(share, n), n, p, q, confidence)
    return float(np.min(low)), float(np.max(high))


def kish_note(floored, effective_n: float, labels=None, what: str = "option") -> str | None:
    """The note of a weighted result whose intervals the Kish rule set (module notes): which options'
    (``labels``, default ``what`` and the index), and at how many unweighted respondents; None if none."""
    which = np.flatnonzero(np.asarray(floored, dtype=bool)) if floored is not None else np.empty(0, dtype=int)
    if not which.size:
        return None
    names = [repr(str(labels[j])) if labels is not None else f"{what} {j}" for j in which]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    n_k = kish_respondents(effective_n)
    return (f"the interval{'s' if len(names) > 1 else ''} of {listed} {'are' if len(names) > 1 else 'is'} widened to "
            f"contain the exact interval of {n_k:,} unweighted respondent{'s' if n_k != 1 else ''} with the same "
            f"report shares (Kish's effective sample size {effective_n:,.1f}, rounded down): Korn–Graubard's "
            f"interval from the weighted variance was narrower, more certain than {n_k:,} randomized "
            f"report{'s' if n_k != 1 else ''} can be")


def _with_floor(lows, highs, floors) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each interval joined with its exact interval at Kish's n, and whether that widened it."""
    lows, highs = np.asarray(lows, dtype=float), np.asarray(highs, dtype=float)
    floor_low = np.array([f[0] for f in floors])
    floor_high = np.array([f[1] for f in floors])
    floored = (floor_low < lows - KISH_TOLERANCE) | (floor_high > highs + KISH_TOLERANCE)
    return np.minimum(lows, floor_low) + 0.0, np.maximum(highs, floor_high) + 0.0, floored  # + 0.0: no -0.0


def fieller(numerator: float, denominator: float, v_num: float, v_both: float, v_den: float,
            t_half: float) -> tuple[float, float]:
    """Fieller's (1954) interval for the ratio ``R = N/D`` of two estimates with variances ``v_num``,
    ``v_den`` and covariance ``v_both``, at the quantile ``t_half`` (the design's t).

    The set of ratios R that the data do not reject: ``N − R·D`` has mean 0 at the true R and
    variance ``V(R) = v_num − 2R·v_both + R²·v_den``, so ``(N − R·D)² ≤ t² V(R)``, a quadratic
    ``a R² − 2 b R + c ≤ 0`` with ``a = D² − t² v_den``, ``b = N·D − t² v_both``, ``c = N² − t² v_num``.
    When the denominator is told from 0 (``a > 0``) the interval is ``(b ± √(b² − ac))/a``; otherwise
    the set is unbounded (the data cannot say the row is not empty) and the interval is [0, 1]
    (Fieller 1954; Cochran 1977, §6.10; the delta method's ``R ± t·se`` is its first-order
    approximation, which ignores the denominator's skew and undercovers when D is uncertain).
    The caller keeps the ends in [0, 1].
    """
    if not math.isfinite(t_half):
        return 0.0, 1.0
    t2 = t_half * t_half
    a = denominator * denominator - t2 * v_den
    b = numerator * denominator - t2 * v_both
    c = numerator * numerator - t2 * v_num
    if a <= 0:
        return 0.0, 1.0
    disc = b * b - a * c
    root = math.sqrt(max(disc, 0.0))
    return (b - root) / a, (b + root) / a
