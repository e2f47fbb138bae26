"""Binomial building blocks shared by the interval methods and the ε audit.

``z`` is the two-sided normal quantile; ``cp_lower`` / ``cp_upper`` are the one-sided
Clopper–Pearson (1934) bounds, exact for a Binomial(n, π) count: the π at which the observed
tail has probability α.  Two-sided Clopper–Pearson is ``(cp_lower(x, n, α/2), cp_upper(x, n, α/2))``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri


def z(confidence: float) -> float:
    """Return the two-sided standard normal quantile ``Φ⁻¹(1 − (1 − confidence)/2)``.

    >>> round(z(0.95), 4)
    1.96
    """
    return float(ndtri(1 - (1 - confidence) / 2))


def _beta():
    from scipy.stats import beta  # scipy.stats takes most of a second to import: only when used

    return beta


def binom_pmf(x, n, p):
    """``scipy.stats.binom.pmf``, with scipy.stats imported on the first call (it takes most of a second)."""
    from scipy.stats import binom

    return binom.pmf(x, n, p)


def cp_lower(x, n, alpha: float) -> np.ndarray:
    """One-sided Clopper–Pearson lower bound: the π with ``P(X ≥ x | n, π) = α`` (0 when x = 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = _beta().ppf(alpha, x, n - x + 1)
    return np.where(x > 0, bound, 0.0)


def cp_upper(x, n, alpha: float) -> np.ndarray:
    """One-sided Clopper–Pearson upper bound: the π with ``P(X ≤ x | n, π) = α`` (1 when x = n)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = _beta().ppf(1 - alpha, x + 1, n - x)
    return np.where(x < n, bound, 1.0)
