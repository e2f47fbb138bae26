"""How the Feldman–Cousins construction ranks the counts of Binomial(n, λ), λ in [q, p]: the log
likelihood ratio ``log R(y; λ)`` of a count against its best λ, the counts ranked strictly above a
count (an integer interval, found by Newton's method and checked on the integers), and the swap
point where one count starts to rank above another.

The facts these rest on, and the tie rule (``TIE``), are in the notes of
:mod:`deniable.estimators.exact` ("the module notes" below), which re-exports every name here.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logit

TIE = 1e-9  # log R differences up to this are ties, and ties are not "above"


def log_ratio(y, n, lam, q, p):
    """Return ``log R(y; λ) = ℓ(y; λ) − ℓ(y; λ̂(y))``, ``λ̂(y) = clip(y/n, q, p)`` (≤ 0).

    Written as ``y log1p((λ − λ̂)/λ̂) + (n − y) log1p((λ̂ − λ)/(1 − λ̂))`` so that the absolute error
    is about ``|y − nλ|·1e-16`` rather than ``n·1e-16``; y may be real (the continuous extension).
    """
    hat = np.minimum(np.maximum(y / n, q), p)
    with np.errstate(divide="ignore", invalid="ignore"):
        left = np.where(y > 0, y * np.log1p((lam - hat) / hat), 0.0)
        right = np.where(n - y > 0, (n - y) * np.log1p((hat - lam) / (1.0 - hat)), 0.0)
    return left + right


def _slope(y, n, lam, q, p):
    """``d/dy log R(y; λ) = logit λ − logit λ̂(y)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return logit(lam) - logit(np.minimum(np.maximum(y / n, q), p))


def above(x, n, lam, q, p):
    """Return ``(lo, hi)``: the counts ranked strictly above x at λ, for ``x ≤ nλ`` (empty if lo > hi)."""
    n = np.broadcast_to(np.asarray(n, dtype=float), x.shape)  # one n, or one per count
    c = log_ratio(x, n, lam, q, p) + TIE
    hi = x.copy()
    full = log_ratio(n, n, lam, q, p) > c
    hi[full] = n[full]
    rest = np.flatnonzero(~full & (c < 0))
    if rest.size:
        hi[rest] = _right_end(x[rest], n[rest], lam[rest], q[rest], p[rest], c[rest])
    lo = x + 1.0
    near = np.flatnonzero((lo <= hi) & ~(log_ratio(lo, n, lam, q, p) > c))
    if near.size:  # only within ~TIE of λ̂(x): the counts just above x tie with it
        lo[near] = _left_end(x[near], n[near], lam[near], q[near], p[near], c[near], hi[near])
    return lo, hi


def _right_end(x, n, lam, q, p, c):
    """Largest integer y with ``log R(y; λ) > c`` right of nλ, given ``c < 0`` and ``log R(n) ≤ c``."""
    m = n * lam
    # Pinsker, n·KL ≥ 2n(y/n − λ)², puts this start right of the root; the normal approximation
    # with its skewness term (see _Search.guess), a little further out, usually does too
    pinsker = np.minimum(n, m + np.sqrt(-c * n / 2.0))
    guess = m + 1.02 * (np.sqrt(-2.0 * c * m * (1.0 - lam)) - (1 - 2 * lam) * c / 3) + 2.0
    ok = (guess <= n) & (log_ratio(guess, n, lam, q, p) <= c)
    y = np.where(ok, guess, pinsker)
    active = np.arange(y.size)
    for _ in range(100):  # log R is concave right of nλ: Newton from the right stays right
        ya = y[active]
        f = log_ratio(ya, n[active], lam[active], q[active], p[active]) - c[active]
        d = _slope(ya, n[active], lam[active], q[active], p[active])
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(d < 0, f / d, 0.0)
        step = np.where(np.isfinite(step), step, 0.0)
        y[active] = ya - step
        active = active[np.abs(step) >= 1e-3]  # then the integer check below settles it
        if not active.size:
            break
    u = np.maximum(np.floor(y), x)
    for _ in range(64):  # the root is within a count of y; fix the integer exactly
        up = (u + 1 <= n) & (log_ratio(u + 1, n, lam, q, p) > c)
        down = ~up & (u > x) & ~(log_ratio(u, n, lam, q, p) > c)
        if not (up.any() or down.any()):
            break
        u = u + up - down
    return u


def _left_end(x, n, lam, q, p, c, hi):
    """Smallest y in (x, hi] with ``log R(y; λ) > c``; log R increases on [x, nλ] (near-ties only)."""
    top = np.maximum(np.minimum(np.floor(n * lam), hi), x + 1)
    top2 = np.minimum(top + 1, hi)
    best = np.where(log_ratio(top2, n, lam, q, p) > log_ratio(top, n, lam, q, p), top2, top)
    ok = log_ratio(best, n, lam, q, p) > c
    low, high = x + 1, best  # log R(low) ≤ c < log R(high) where ok
    for _ in range(64):
        open_ = ok & (high - low > 1)
        if not open_.any():
            break
        mid = np.floor((low + high) / 2)
        up = log_ratio(mid, n, lam, q, p) > c
        high = np.where(open_ & up, mid, high)
        low = np.where(open_ & ~up, mid, low)
    return np.where(ok, high, hi + 1)


def swap_point(x, y, n, q, p):
    """The λ where count y (> x) starts to rank above x: fact 1 of the module notes.

    ``logit s = logit r + (log R(x; r) − log R(y; r) + TIE)/(y − x)`` holds for every r; r is
    the midpoint of λ̂(x) and λ̂(y), so the log ratios are small (accurate) and the result
    depends on (x, y, n, q, p) alone — equal ends at two confidence levels stay equal.
    """
    ref = 0.5 * (np.minimum(np.maximum(x / n, q), p) + np.minimum(np.maximum(y / n, q), p))
    ref = np.minimum(np.maximum(ref, np.maximum(q, 1e-300)), np.minimum(p, 1 - 1e-16))
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = (log_ratio(x, n, ref, q, p) - log_ratio(y, n, ref, q, p) + TIE) / (y - x)
        return expit(logit(ref) + shift)
