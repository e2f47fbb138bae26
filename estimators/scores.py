"""Intervals for the mean of a bounded answer seen through a known noise: the score interval.

Every mean this package estimates from randomized numbers has the same shape.  The answer X
takes integer values in ``0..M`` (answer indices of a numeric question, grid indices, the number
of options ticked, the count of a list experiment).  Each report gives an **unbiased score**
s with ``E s = μ = E X`` and

    Var s = c · Var X + h(μ),        h(μ) = h0 + h1 μ + h2 μ²,                          (1)

where ``c ≥ 1`` and h are known from the mechanism (:class:`ScoreModel`; derivations in the
constructors' docstrings).  Whatever the answers' distribution, ``Var X`` lies between what
a distribution with mean μ can have on the integers ``0..M``:

    f(1 − f) ≤ Var X ≤ μ(M − μ),        f = μ − floor(μ),                               (2)

(the least when X sits on the two integers around μ, the most when X sits on 0 and M).

The interval
------------
From the n scores: their mean ``s̄``, central moments ``m2``, ``m3`` (divided by n) and sample
variance ``v = m2 · n/(n − 1)``.  A value μ0 is kept iff

    |s̄ − μ0| ≤ t_(n−1) · sqrt(V(μ0)/n),                                                (3)
    V(μ0) = max(v, Vmin(μ0), min(W(μ0), Vmax(μ0))),
    W(μ0) = (m2 + (s̄ − μ0)²) · n/(n − 1) − (m3/m2) · (s̄ − μ0),

with ``Vmin``, ``Vmax`` from (1) and (2).  Three things make (3) honest where a t interval is not:

* **the floor** ``Vmin(μ0)``: when every report is the same (a point mass seen through little
  noise) the sample variance is 0, but the noise alone has variance ``h(μ0)``;
* **the skewness adjustment** W: the variance about μ0, minus its regression on ``s̄ − μ0``
  (``Cov(s̄, m2) = μ3/n``, so ``b = μ3/σ²``).  Under μ = μ0, W estimates σ² without the
  correlation with ``s̄`` that makes a studentized mean of skewed scores undercover (Hall 1992:
  the two-sided error is ``−(2/n) φ(z) z [… + γ²(z⁴ + 2z² − 3)/18 …]``, −0.046 at n = 50 for a
  skewness γ = 2.9); with W the test behaves like the known-variance one, whose error has no
  such γ² term;
* **the larger of the two** (v and W, each kept above the floor): the kept set is the union of
  both tests' kept sets, so neither's failure mode — W's noise at small n when the scores are
  symmetric and heavy-tailed, v's at skewed ones — decides alone.

The interval is the hull of the kept μ0 in ``[0, M]``, found on a grid and refined by
bisection (rounded outward); when none is kept (s̄ outside ``[0, M]`` with tiny variance) it is
the nearest end.

Coverage is not exact at every distribution and every n: (3) is a large-sample construction,
checked by Monte Carlo (``scripts/numeric_coverage.py``: 20,000 replicates per cell, the table in
docs/statistics.md) at n ∈ {50, 500, 5000}, ε ∈ {0.5, 1, 2, 4} and distributions including the point masses
at both ends and the middle and two-point distributions on the ends (the least favourable: the
largest variance (2) and the most skew).  Where an exact interval exists — a numeric question
asked with ``G = 1``, whose reports depend on the answers only through their mean — :mod:`.numeric`
uses that instead.

The **oracle** interval, against which widths are reported, is ``s̄ ± z sqrt(σ²/n)`` with the
true variance σ² of the score (known only in a simulation); its plug-in version
``s̄ ± z sqrt(v/n)`` is the CLT interval.

References
----------
.. [1] P. Hall, *The bootstrap and Edgeworth expansion*, Springer (1992), section 2.6.
.. [2] L. D. Brown, T. T. Cai, A. DasGupta, "Interval estimation for a binomial proportion",
   Statistical Science 16 (2001) 101–133 (why score intervals beat Wald's near the ends).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRID_POINTS = 257
BISECTIONS = 48
CHUNK = 2048  # rows of a vectorized call solved at once


@dataclass(frozen=True)
class ScoreModel:
    """``Var s = c · Var X + h0 + h1 μ + h2 μ²`` for an answer X in ``0..M`` (module notes, (1))."""

    span: int  # M
    c: float
    h0: float
    h1: float = 0.0
    h2: float = 0.0

    def noise(self, mu):
        """``h(μ)``: the part of the score's variance that the mechanism adds."""
        mu = np.asarray(mu, dtype=float)
        return self.h0 + self.h1 * mu + self.h2 * mu * mu

    def vmin(self, mu):
        """The least variance of the score when the answers' mean is μ (module notes, (2))."""
        mu = np.asarray(mu, dtype=float)
        f = mu - np.floor(mu)
        return self.c * f * (1 - f) + self.noise(mu)

    def vmax(self, mu):
        """The largest variance of the score when the answers' mean is μ (module notes, (2))."""
        mu = np.asarray(mu, dtype=float)
        return self.c * np.clip(mu * (self.span - mu), 0.0, None) + self.noise(mu)

    def variance(self, mu, var_x):
        """The score's variance (1) for answers with mean μ and variance ``var_x``."""
        return self.c * np.asarray(var_x, dtype=float) + self.noise(mu)


def rr_model(k: int, p: float, q: float) -> ScoreModel:
    """k-ary randomized response of an answer X in ``0..k−1``; score ``(R − a)/(p − q)``, ``a = q k(k−1)/2``.

    ``E[R | X] = a + (p − q) X`` and ``E[R² | X] = q S2 + (p − q) X²`` with ``S2 = Σ r² =
    (k−1)k(2k−1)/6``, so ``Var s = Var X/(p − q) + [q S2 + (p − q)μ² − (a + (p − q)μ)²]/(p − q)²``.
    A question asked directly (p = 1, q = 0) has score X and ``h = 0``.

    >>> m = rr_model(2, 0.75, 0.25)
    >>> float(m.variance(0.5, 0.25)), 0.5 * 0.5 / 0.5 ** 2
    (1.0, 1.0)
    """
    d = p - q
    a = q * k * (k - 1) / 2
    s2 = (k - 1) * k * (2 * k - 1) / 6
    return ScoreModel(span=k - 1, c=1 / d, h0=(q * s2 - a * a) / d**2, h1=-2 * a / d, h2=(1 - d) / d)


def rr_score(k: int, p: float, q: float) -> np.ndarray:
    """The unbiased score of each report ``0..k−1`` of :func:`rr_model`."""
    return (np.arange(k) - q * k * (k - 1) / 2) / (p - q)


def additive_model(span: int, noise_variance: float) -> ScoreModel:
    """An answer in ``0..M`` plus independent noise of known variance (the discrete Laplace mechanism)."""
    return ScoreModel(span=span, c=1.0, h0=noise_variance)


def quantile(n, confidence: float):
    """``t_(n−1)`` at the two-sided ``confidence`` (n ≥ 2), vectorized."""
    from scipy.stats import t as student_t  # imported here: scipy.stats takes most of a second

    df = np.maximum(np.asarray(n, dtype=float) - 1, 1)
    return student_t.ppf(1 - (1 - confidence) / 2, df)


@dataclass(frozen=True)
class Moments:
    """Sufficient statistics of n scores: count, mean and central moments ``m2``, ``m3`` (÷ n)."""

    n: np.ndarray
    mean: np.ndarray
    m2: np.ndarray
    m3: np.ndarray


def moments(counts, scores) -> Moments:
    """Moments of scores ``scores[r]`` seen ``counts[..., r]`` times (vectorized over leading axes)."""
    counts = np.asarray(counts, dtype=float)
    scores = np.asarray(scores, dtype=float)
    n = counts.sum(axis=-1)
    safe = np.where(n > 0, n, 1.0)
    mean = counts @ scores / safe
    centred = scores - mean[..., None]
    m2 = (counts * centred**2).sum(axis=-1) / safe
    m3 = (counts * centred**3).sum(axis=-1) / safe
    return Moments(n=n, mean=mean, m2=m2, m3=m3)


def _variance(model: ScoreModel, mom, mu):
    """V(μ0) of (3), broadcasting ``mom`` (columns) against ``mu`` (rows of candidates)."""
    n, mean, m2, m3 = mom
    scale = n / np.maximum(n - 1, 1)
    v = np.where(n >= 2, m2 * scale, np.inf)
    slope = np.where(m2 > 0, m3 / np.where(m2 > 0, m2, 1.0), 0.0)
    w = (m2 + (mean - mu) ** 2) * scale - slope * (mean - mu)
    return np.maximum(np.maximum(v, model.vmin(mu)), np.minimum(w, model.vmax(mu)))


def _kept(model, mom, crit, mu):
    n, mean = mom[0], mom[1]
    return (mean - mu) ** 2 <= crit * crit * _variance(model, mom, mu) / n


def score_interval(model: ScoreModel, mom: Moments, confidence: float):
    """The interval (3) of the module notes for μ, vectorized over the entries of ``mom``.

    Returns ``(low, high)`` in ``[0, M]``; n = 0 gives ``[0, M]``, n = 1 uses the largest
    possible variance.
    """
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (mom.n, mom.mean, mom.m2, mom.m3)))
    shape = arrays[0].shape
    flat = [a.reshape(-1) for a in arrays]
    low, high = np.empty(flat[0].size), np.empty(flat[0].size)
    for start in range(0, low.size, CHUNK):
        part = slice(start, start + CHUNK)
        low[part], high[part] = _solve(model, [a[part] for a in flat], confidence)
    return low.reshape(shape), high.reshape(shape)


def _solve(model, mom, confidence):
    n, mean = mom[0], mom[1]
    span = float(model.span)
    empty = n <= 0
    safe = [np.where(empty, 1.0, n), np.where(empty, 0.0, mean), mom[2], mom[3]]
    crit = quantile(safe[0], confidence)
    grid = np.linspace(0.0, span, GRID_POINTS)
    step = span / (GRID_POINTS - 1)
    kept = _kept(model, [a[:, None] for a in safe], crit[:, None], grid[None, :])
    centre = np.clip(safe[1], 0.0, span)
    centre_kept = _kept(model, safe, crit, centre)  # always, unless s̄ lies outside [0, M]
    on_grid = kept.any(axis=1)
    first = grid[np.argmax(kept, axis=1)]
    last = grid[GRID_POINTS - 1 - np.argmax(kept[:, ::-1], axis=1)]
    low = np.minimum(np.where(on_grid, first, np.inf), np.where(centre_kept, centre, np.inf))
    high = np.maximum(np.where(on_grid, last, -np.inf), np.where(centre_kept, centre, -np.inf))
    anything = on_grid | centre_kept

    def refine(inside, outside):
        for _ in range(BISECTIONS):
            mid = 0.5 * (inside + outside)
            ok = _kept(model, safe, crit, mid)
            inside = np.where(ok, mid, inside)
            outside = np.where(ok, outside, mid)
        return outside  # the rejected side: rounding outward

    low = np.where(anything, low, centre)
    high = np.where(anything, high, centre)
    # the grid point just outside each end is rejected (the ends are the outermost kept points)
    below = np.floor(low / step - 1e-9) * step
    above = np.ceil(high / step + 1e-9) * step
    down = anything & (low > 0)
    if down.any():
        low = np.where(down, refine(low, np.maximum(below, 0.0)), low)
    up = anything & (high < span)
    if up.any():
        high = np.where(up, refine(high, np.minimum(above, span)), high)
    low = np.where(empty, 0.0, np.clip(low, 0.0, span))
    high = np.where(empty, span, np.clip(high, 0.0, span))
    return low, high
