"""Sample-size planning: worst-case expected interval half-width as a function of n."""

from __future__ import annotations

import functools
import math
import numbers

import numpy as np
from scipy.special import ndtr
from scipy.stats import binom

from deniable.client.mechanism import resolve

from . import intervals
from .binomial import z
from .validate import check_confidence

_GRID = 401  # λ points on [q, p] searched for the worst case
MAX_N = 10**9
EXACT_PLANNING_N = 1000  # at or below this n the exact interval's expected width is summed
_PI_GRID = np.linspace(0.0, 1.0, 201)


@functools.lru_cache(maxsize=256)
def _exact_half_width(n: int, p: float, q: float, confidence: float) -> float:
    """Worst case over a π grid of the exact (Feldman–Cousins) interval's expected half-width."""
    x = np.arange(n + 1)
    low, high = intervals.exact(x, n, p, q, confidence)
    lam = q + (p - q) * _PI_GRID
    return float((binom.pmf(x[None, :], n, lam[:, None]) @ (high - low)).max() / 2)


def _half_width(n: int, p: float, q: float, confidence: float) -> float:
    if n <= EXACT_PLANNING_N:
        return _exact_half_width(n, p, q, confidence)
    return _expected_half_width(n, p, q, z(confidence))


def _expected_half_width(n: float, p: float, q: float, z: float) -> float:
    """Worst case over λ ∈ [q, p] of E[half-width] of ``λ̂ ± z·σ(λ)`` truncated to [q, p], in π units.

    With ``λ̂ ~ N(λ, σ²)``, ``E[min(λ̂ + h, p)] − E[max(λ̂ − h, q)]`` has a closed form
    through ``E[(c − Y)⁺] = (c − μ)Φ((c − μ)/σ) + σ φ((c − μ)/σ)``.
    """
    lam = np.linspace(q, p, _GRID)
    sigma = np.sqrt(np.maximum(lam * (1 - lam), 1e-300) / n)
    half = z * sigma

    def positive_part(mean):  # E[(Y)⁺] for Y ~ N(mean, sigma²)
        t = np.clip(mean / sigma, -40.0, 40.0)
        return mean * ndtr(t) + sigma * np.exp(-0.5 * t * t) / math.sqrt(2 * math.pi)

    upper = p - positive_part(p - (lam + half))  # E[min(λ̂ + h, p)]
    lower = q + positive_part((lam - half) - q)  # E[max(λ̂ − h, q)]
    width = (upper - lower) / (p - q)
    return float(np.max(width) / 2)


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return int(n)


def margin_of_error(epsilon, k, n, confidence=0.95) -> float:
    """Return the worst-case (over π) expected half-width of an option's interval at n respondents.

    Parameters
    ----------
    epsilon : float or None
        Declared ε; None means asked directly (``p = 1, q = 0``), the no-privacy baseline.
    k : int
        Number of options.
    n : int
        Number of respondents.
    confidence : float, default 0.95

    Notes
    -----
    For ``n ≤ EXACT_PLANNING_N`` this is computed exactly: the exact interval's expected
    half-width ``Σ_x pmf(x)(ci_high − ci_low)/2`` maximized over a grid of 201 π.  Above it, a
    large-sample model of the exact interval: ``λ̂ ± z·sqrt(λ(1 − λ)/n)`` truncated to the
    possible range ``[q, p]``, mapped to π by dividing by ``p − q``; the expected width is
    integrated in closed form under the normal approximation and maximized over a grid of λ.
    Without truncation this is ``z·sqrt(λ*(1 − λ*)/n)/(p − q)`` with ``λ* = clip(1/2, q, p)``;
    truncation matters when ``p − q`` is small relative to ``1/sqrt(n)``.  The tests check it
    within 5% of the exact (Feldman–Cousins) interval's worst-case expected half-width for
    ``n ≥ 200``.

    Examples
    --------
    >>> round(margin_of_error(None, 2, 1000), 3)
    0.031
    """
    mech = resolve(k, epsilon)
    n = _check_n(n)
    return _half_width(n, mech.p, mech.q, check_confidence(confidence))


def sample_size(epsilon, k, margin, confidence=0.95) -> int:
    """Return the fewest respondents whose worst-case expected half-width is at most ``margin``.

    Parameters
    ----------
    epsilon : float or None
        Declared ε; None means asked directly.
    k : int
        Number of options.
    margin : float
        Target half-width on the proportion scale, in (0, 0.5).
    confidence : float, default 0.95

    Notes
    -----
    Bisection on n over :func:`margin_of_error` (which decreases with n; the exact
    expected width is monotone up to small wiggles from the discreteness of the counts).

    Examples
    --------
    >>> sample_size(None, 2, 0.05)
    392
    """
    mech = resolve(k, epsilon)
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not 0 < float(margin) < 0.5:
        raise ValueError(f"margin must be a number in (0, 0.5), got {margin!r}")
    confidence = check_confidence(confidence)
    margin = float(margin)
    if _half_width(MAX_N, mech.p, mech.q, confidence) > margin:
        raise ValueError(f"margin {margin} needs more than {MAX_N} respondents at this epsilon")
    low, high = 1, 1
    while _half_width(high, mech.p, mech.q, confidence) > margin:
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        if _half_width(mid, mech.p, mech.q, confidence) > margin:
            low = mid
        else:
            high = mid
    return high
