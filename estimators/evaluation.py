"""Exact coverage and expected width of the interval methods (sums over the binomial pmf)."""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from deniable.client.mechanism import resolve

from .intervals import check_method, interval
from .validate import check_confidence


def _setup(method, n, k, epsilon, pi, confidence):
    method = check_method(method)
    confidence = check_confidence(confidence)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    mech = resolve(k, epsilon)
    pi = np.atleast_1d(np.asarray(pi, dtype=float))
    if pi.size and (np.any(~np.isfinite(pi)) or pi.min() < 0 or pi.max() > 1):
        raise ValueError("pi must lie in [0, 1]")
    x = np.arange(int(n) + 1)
    low, high = interval(method, x, int(n), mech.p, mech.q, confidence)
    lam = mech.q + (mech.p - mech.q) * pi
    pmf = binom.pmf(x[None, :], int(n), lam[:, None])
    return pi, low, high, pmf


def coverage(method, n, k, epsilon, pi, confidence=0.95) -> np.ndarray:
    """Return the exact coverage probability of a method's interval at each true π.

    Parameters
    ----------
    method : str
        One of :data:`estimators.METHODS`.
    n : int
        Number of respondents.
    k : int
        Number of options.
    epsilon : float or None
        Declared ε (None: asked directly, ``p = 1, q = 0``).
    pi : array_like
        True proportions of one option, in [0, 1].
    confidence : float
        Nominal level.

    Returns
    -------
    numpy.ndarray
        ``Σ_x Binomial(x; n, λ) · [ci_low(x) ≤ π ≤ ci_high(x)]`` with ``λ = q + (p − q) π``,
        summed over every count ``x = 0..n`` (no simulation).

    Examples
    --------
    >>> bool(coverage("exact", 30, 2, 1.0, [0.0, 0.5, 1.0]).min() >= 0.95 - 1e-9)
    True
    """
    pi, low, high, pmf = _setup(method, n, k, epsilon, pi, confidence)
    covered = (low[None, :] <= pi[:, None]) & (pi[:, None] <= high[None, :])
    return np.where(covered, pmf, 0.0).sum(axis=1)


def expected_width(method, n, k, epsilon, pi, confidence=0.95) -> np.ndarray:
    """Return the exact expected interval width ``Σ_x pmf(x) (ci_high − ci_low)`` at each π."""
    pi, low, high, pmf = _setup(method, n, k, epsilon, pi, confidence)
    return pmf @ (high - low)
