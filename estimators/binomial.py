"""Binomial building blocks shared by the interval methods and the ε audit.

``z`` is the two-sided normal quantile; ``cp_lower`` / ``cp_upper`` are the one-sided
Clopper–Pearson (1934) bounds, exact for a Binomial(n, π) count: the π at which the observed
tail has probability α.  Two-sided Clopper–Pearson is ``(cp_lower(x, n, α/2), cp_upper(x, n, α/2))``.
"""

from __future__ import annotations

import functools

import numpy as np


def z(confidence: float) -> float:
    """Return the two-sided standard normal quantile ``Φ⁻¹(1 − (1 − confidence)/2)``.

    >>> round(z(0.95), 4)
    1.96
    """
    from scipy.special import ndtri  # imported on first use: a planner answering from its cache needs no scipy

    return float(ndtri(1 - (1 - confidence) / 2))


def _beta():
    from scipy.stats import beta  # scipy.stats takes most of a second to import: only when used

    return beta


@functools.cache
def pmf_kernel():
    """The binomial density kernel ``scipy.stats.binom`` calls (Boost's, compiled into scipy.special).

    ``scipy.special._ufuncs._binom_pmf`` is private: where a scipy lacks it, scipy.stats it is.
    """
    try:
        from scipy.special._ufuncs import _binom_pmf
    except ImportError:  # pragma: no cover - every scipy this project supports has it
        return None
    return _binom_pmf


def binom_pmf(x, n, p):
    """``scipy.stats.binom.pmf(x, n, p)``, bit for bit, without importing scipy.stats (most of a second).

    For counts in 0..n and π in [0, 1] scipy.stats returns ``clip(kernel(x, n, π), 0, 1)`` with
    the kernel scipy.special holds; elsewhere (a count off the support, a bad π) it is asked itself.
    """
    x, n_, p_ = np.asarray(x), np.asarray(n), np.asarray(p)
    kernel = pmf_kernel()
    regular = (kernel is not None and x.size > 0 and x.dtype.kind in "iu" and n_.dtype.kind in "iu"
               and x.min() >= 0 and np.all(x <= n_) and p_.min() >= 0 and p_.max() <= 1)
    if regular:
        return np.clip(kernel(x, n_, p_), 0, 1)
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
