"""Central differential privacy for what depends on direct answers: sensitivities, post-processing,
and intervals that account for the added noise.

**Neighbouring surveys.**  The number of respondents is published exactly (every page shows it),
and protected answers are protected already by randomized response; what a release must hide is
one respondent's *direct* answers.  Two surveys are neighbours when they have the same
respondents and the same randomized reports (ε-LDP already, released exactly) and differ in the
direct answers of one respondent.  A respondent's protection is then their questions' local ε for
the reports plus the release ledger's central ε for their direct answers.

**Sensitivities** (L1, derived from that definition):

* a histogram of one direct question ("not answered" a category of its own for an optional
  question, so that the counts add up to the public number of respondents): one respondent
  moves from one category to another, one count −1 and one +1, so **Δ₁ = 2** (:data:`HISTOGRAM`);
* the counts of a protected question's reports within each group of a direct question (a g × k
  table): one respondent leaves one cell for another in the same report column (its report is
  fixed, its group changes), **Δ₁ = 2**, and every column keeps its public total (:data:`TABLE`);
* the scores of the exponential mechanism for "the most common answer" are the counts
  themselves; each changes by at most 1, so **Δ = 1**, and since one count may go up while
  another goes down (not monotone) the mechanism needs ``exp(ε·s/(2Δ))`` (McSherry & Talwar
  2007; Dwork & Roth 2014, Theorem 3.10) (:data:`SCORE`).

Several releases compose: the ledger adds up their ε (basic composition, Dwork & Roth 2014,
Theorem 3.16).

**Post-processing** (free of privacy cost): :func:`consistent_counts` is the Euclidean projection
of the noisy counts onto ``{v ≥ 0, Σ v = total}`` (the scaled simplex; Held, Wolfe & Crowder
1974; Duchi et al. 2008) followed by rounding that keeps the sum (largest remainders).

**Intervals with the noise accounted for.**  A released count is ``Y = X + Z`` with
``X ~ Binomial(n, π)`` (sampling: the target is the population share π) and Z discrete Laplace
with base β, independent.  Its distribution function is the exact convolution

    F(y; π) = Σ_x b(x; n, π) F_Z(y − x),   F_Z(z) = 1 − β^(z+1)/(1 + β) (z ≥ 0),  β^(−z)/(1 + β) (z < 0),

and Y is stochastically increasing in π, so inverting the two one-sided tests
``P(Y ≥ y; π) ≤ α/2`` and ``P(Y ≤ y; π) ≤ α/2`` gives an interval with coverage ≥ 1 − α at every
π, exactly as Clopper & Pearson (1934) do for the binomial alone (Casella & Berger 2002,
Theorem 9.2.12).  :func:`noisy_share_interval` computes it (sums over the binomial's mass
within ±40 standard deviations, bisection to 1e-12).

For the estimates of a protected question within groups (a noisy table), the noise cannot be
convolved away as simply: :func:`noisy_group_interval` bounds every cell's noise by ``t`` with
``P(|Z| > t) = 2β^(t+1)/(1 + β)``, small enough that all of a group's k cells hold together with
probability ≥ 1 − δ, and takes the Clopper–Pearson interval at level ``confidence + δ`` that
covers every count the bounds allow (its ends are monotone in the counts).  That interval is
**conservative**: its coverage is at least ``confidence`` and usually more.

References
----------
.. [1] F. McSherry, K. Talwar, "Mechanism design via differential privacy", FOCS 2007.
.. [2] C. Dwork, A. Roth, *The algorithmic foundations of differential privacy* (2014).
.. [3] M. Held, P. Wolfe, H. P. Crowder, "Validation of subgradient optimization",
   Math. Programming 6 (1974) 62–88.
.. [4] J. Duchi, S. Shalev-Shwartz, Y. Singer, T. Chandra, "Efficient projections onto the
   l1-ball for learning in high dimensions", ICML 2008.
.. [5] C. J. Clopper, E. S. Pearson, Biometrika 26 (1934) 404–413.
.. [6] G. Casella, R. L. Berger, *Statistical Inference*, 2nd ed. (2002), section 9.2.3.
.. [7] A. Ghosh, T. Roughgarden, M. Sundararajan, SIAM J. Comput. 41 (2012) 1673–1693.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom

from deniable.errors import FieldError

from .binomial import cp_lower, cp_upper

HISTOGRAM = 2  # L1 sensitivity of a direct question's histogram (one respondent: −1 here, +1 there)
TABLE = 2  # L1 sensitivity of a group × option table of a protected question's reports
SCORE = 1  # sensitivity of each count used as an exponential-mechanism score
_WINDOW_SD = 40


def consistent_counts(noisy, total: int) -> np.ndarray:
    """Non-negative integers summing to ``total``, as close as possible to the noisy counts.

    The Euclidean projection onto ``{v ≥ 0, Σ v = total}``: ``v_i = max(y_i − τ, 0)`` with τ set
    so the sum is ``total`` (sort, then the largest m with ``y_(m) − τ_m > 0``), then floors
    plus one unit for each of the largest fractional parts (ties to the lower index).

    >>> consistent_counts([12, -3, 5], 15).tolist()
    [11, 0, 4]
    """
    y = np.asarray(noisy, dtype=float)
    if y.ndim != 1 or y.size == 0:
        raise FieldError(f"noisy counts must be a non-empty 1-d array, got shape {y.shape}", "noisy")
    if isinstance(total, bool) or int(total) != total or total < 0:
        raise FieldError(f"total must be a non-negative integer, got {total!r}", "total")
    total = int(total)
    if total == 0:
        return np.zeros(y.size, dtype=np.int64)
    ordered = np.sort(y)[::-1]
    cumulative = np.cumsum(ordered)
    m = np.arange(1, y.size + 1)
    taus = (cumulative - total) / m
    valid = ordered - taus > 0
    tau = taus[np.flatnonzero(valid)[-1]]
    projected = np.maximum(y - tau, 0.0)
    floors = np.floor(projected + 1e-9).astype(np.int64)
    remainder = total - int(floors.sum())
    if remainder > 0:
        fraction = projected - floors
        order = np.lexsort((np.arange(y.size), -fraction))
        floors[order[:remainder]] += 1
    elif remainder < 0:  # floors overshot by rounding error: take back from the largest
        order = np.argsort(-floors, kind="stable")
        floors[order[:-remainder]] -= 1
    return floors


def laplace_cdf(z, beta: float) -> np.ndarray:
    """``P(Z ≤ z)`` for the discrete Laplace ``P(Z = z) = (1 − β)/(1 + β) β^|z|``."""
    z = np.asarray(z, dtype=float)
    with np.errstate(over="ignore"):
        return np.where(z >= 0, 1.0 - beta ** (z + 1) / (1 + beta), beta ** (-z) / (1 + beta))


def noisy_cdf(y: int, n: int, pi: float, beta: float, upper: bool = False) -> float:
    """``P(Y ≤ y)`` (or ``P(Y ≥ y)`` with ``upper``) for ``Y = Binomial(n, π) + Z`` (module notes)."""
    sd = math.sqrt(n * pi * (1 - pi))
    lo = max(0, int(math.floor(n * pi - _WINDOW_SD * sd - _WINDOW_SD)))
    hi = min(n, int(math.ceil(n * pi + _WINDOW_SD * sd + _WINDOW_SD)))
    x = np.arange(lo, hi + 1)
    weights = binom.pmf(x, n, pi)
    if upper:  # P(Y ≥ y) = Σ b(x) P(Z ≥ y − x) = Σ b(x) (1 − F_Z(y − x − 1))
        return float(weights @ (1.0 - laplace_cdf(y - x - 1, beta)))
    return float(weights @ laplace_cdf(y - x, beta))


def noisy_share_interval(noisy: int, n: int, beta: float, confidence: float = 0.95) -> tuple[float, float]:
    """Exact equal-tailed interval for π from one count released as ``Binomial(n, π) + Laplace_β``.

    >>> [round(end, 4) for end in noisy_share_interval(30, 100, 0.5)]  # Clopper–Pearson alone: [0.2124, 0.3998]
    [0.2045, 0.4082]
    """
    if n <= 0:
        return 0.0, 1.0
    tail = (1 - confidence) / 2

    def solve(test, increasing):
        """The π where ``test(π)`` crosses ``tail``: bisection on [0, 1]."""
        left, right = 0.0, 1.0
        for _ in range(60):
            mid = 0.5 * (left + right)
            above = test(mid) > tail
            if above == increasing:
                right = mid
            else:
                left = mid
        return left if increasing else right

    # Lower end: the smallest π with P(Y ≥ y; π) > α/2 (that probability increases with π).
    if noisy_cdf(noisy, n, 0.0, beta, upper=True) > tail:
        low = 0.0
    else:
        low = solve(lambda pi: noisy_cdf(noisy, n, pi, beta, upper=True), increasing=True)
    # Upper end: the largest π with P(Y ≤ y; π) > α/2 (that probability decreases with π).
    if noisy_cdf(noisy, n, 1.0, beta) > tail:
        high = 1.0
    else:
        high = solve(lambda pi: noisy_cdf(noisy, n, pi, beta), increasing=False)
    return low, high


def noise_bound(beta: float, cells: int, delta: float) -> int:
    """Smallest t with ``cells · P(|Z| > t) ≤ δ``, where ``P(|Z| > t) = 2β^(t+1)/(1 + β)``.

    >>> noise_bound(0.5, 1, 0.01)  # P(|Z| > 6) = 0.0104, P(|Z| > 7) = 0.0052
    7
    """
    if beta <= 0:
        return 0
    t = math.log(delta * (1 + beta) / (2 * cells)) / math.log(beta) - 1
    return max(0, math.ceil(t - 1e-12))


def noisy_group_interval(noisy_row, option: int, p: float, q: float, beta: float, confidence: float = 0.95,
                         delta: float = 0.01) -> tuple[float, float]:
    """Conservative interval for π of ``option`` in a group, from the group's noisy report counts.

    Every cell's noise is within ±t (:func:`noise_bound`) with probability ≥ 1 − δ together; the
    Clopper–Pearson interval for λ at level ``confidence + δ`` is taken at the count and total
    that put each end farthest out (lower: fewest reports of the option, most of the others;
    upper: the reverse), then mapped by ``π = (λ − q)/(p − q)``.  Coverage ≥ ``confidence``.
    """
    row = np.asarray(noisy_row, dtype=np.int64)
    t = noise_bound(beta, row.size, delta)
    alpha = 1 - confidence - delta
    if alpha <= 0:
        raise FieldError(f"confidence + delta must be below 1, got {confidence} + {delta}", "confidence")
    x_low, x_high = max(int(row[option]) - t, 0), max(int(row[option]) + t, 0)
    others = np.delete(row, option)
    m_low, m_high = int(np.maximum(others - t, 0).sum()), int(np.maximum(others + t, 0).sum())
    n_low, n_high = x_low + m_high, x_high + m_low
    lam_low = float(cp_lower(x_low, n_low, alpha / 2)) if n_low > 0 else 0.0
    lam_high = float(cp_upper(x_high, n_high, alpha / 2)) if n_high > 0 else 1.0

    def to_pi(lam):
        return float(np.clip((lam - q) / (p - q), 0.0, 1.0))

    return to_pi(lam_low), to_pi(lam_high)


def simultaneous_group_intervals(noisy_row, p: float, q: float, beta: float, confidence: float = 0.95,
                                 delta: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """Intervals for every option's π in a group that hold **together** with probability ≥ ``confidence``.

    The noise box of :func:`noisy_group_interval` (all k cells within ±t, probability ≥ 1 − δ) is
    shared; each option's Clopper–Pearson interval is taken at level ``1 − α/k`` with
    ``α = 1 − confidence − δ`` (Bonferroni), so all k intervals cover at once with probability at
    least ``1 − δ − k·α/k = confidence``.  What a released function of the shares needs (a mean over
    a numeric grid, a list experiment's difference in means; :func:`mean_range`).
    """
    row = np.asarray(noisy_row, dtype=np.int64)
    alpha = 1 - confidence - delta
    if alpha <= 0:
        raise FieldError(f"confidence + delta must be below 1, got {confidence} + {delta}", "confidence")
    each = 1 - delta - alpha / row.size
    ends = [noisy_group_interval(row, j, p, q, beta, each, delta) for j in range(row.size)]
    return np.array([low for low, _ in ends]), np.array([high for _, high in ends])


def mean_range(values, low, high) -> tuple[float, float]:
    """The smallest and largest ``Σ v_j π_j`` over the shares with ``low ≤ π ≤ high`` and ``Σ π = 1``.

    A linear programme over a box cut by the simplex, solved greedily: start every share at its
    lower end and give the rest of the unit mass to the smallest values first (for the minimum)
    or the largest first (for the maximum), each up to its upper end — optimal because moving
    mass from a larger value to a smaller one never raises the sum (the fractional knapsack).
    When the box misses the simplex (Σ low > 1 or Σ high < 1: the intervals cannot all be right)
    the answer is the whole range ``[min v, max v]``, which covers every distribution.

    >>> [round(end, 9) for end in mean_range([0, 1, 2], [0.1, 0.2, 0.3], [0.5, 0.6, 0.7])]
    [0.8, 1.6]
    """
    v, lo, hi = (np.asarray(a, dtype=float) for a in (values, low, high))
    spare = 1.0 - lo.sum()
    if spare < -1e-12 or hi.sum() < 1.0 - 1e-12:
        return float(v.min()), float(v.max())

    def fill(order):
        pi, left = lo.copy(), max(spare, 0.0)
        for j in order:
            step = min(hi[j] - lo[j], left)
            pi[j] += step
            left -= step
        return float(pi @ v)

    ascending = np.argsort(v, kind="stable")
    return fill(ascending), fill(ascending[::-1])


def group_shares(counts, noisy, p: float, q: float, beta: float, confidence: float = 0.95, *,
                 together: bool = False, delta: float = 0.01):
    """Each option's share π within a group from its released row of k-ary randomized-response reports.

    The estimate is the unbiased ``(c/n − q)/(p − q)`` of the consistent counts ``c`` (None when the
    group is empty: n = 0); the intervals are :func:`noisy_group_interval` for each option alone,
    or with ``together`` :func:`simultaneous_group_intervals` (all options at once: what a
    function of several shares needs).  Returns ``(estimate or None, low, high)`` as arrays.
    """
    c = np.asarray(counts, dtype=float)
    n = c.sum()
    estimate = (c / n - q) / (p - q) if n > 0 else None
    if together:
        low, high = simultaneous_group_intervals(noisy, p, q, beta, confidence, delta)
    else:
        ends = [noisy_group_interval(noisy, j, p, q, beta, confidence, delta) for j in range(c.size)]
        low, high = np.array([e[0] for e in ends]), np.array([e[1] for e in ends])
    return estimate, low, high
