"""Confidence sequences for one protected question: intervals that stay valid however often you look.

A fixed-n interval covers the truth with probability ≥ the level *at the n chosen in advance*.
A researcher who looks every day and stops when an interval excludes a value picks n from the
data, and the chance that one of the many intervals seen misses the truth grows without bound
(the law of the iterated logarithm).  A **confidence sequence** ``(C_n)`` has
``P(π ∈ C_n for every n ≥ 1) ≥ confidence``: looking at every n, and stopping at any time, is
safe.  The price is width: at n = 10,000 these are about 1.5 times the exact fixed-n interval
(``scripts/sequence_coverage.py``, quoted in docs/analysis.md).

The construction (a beta-binomial mixture martingale)
------------------------------------------------------
Each report names a given option with probability ``λ = q + (p − q) π`` independently
(k-ary randomized response, :mod:`deniable.estimators.marginal`), so after n reports of which
x name it, the likelihood of any ``θ ∈ [0, 1]`` is ``θ^x (1 − θ)^(n − x)``.  For a candidate λ,

    M_n(λ) = ∫ θ^x (1 − θ)^(n − x) dF_λ(θ) / (λ^x (1 − λ)^(n − x))
           = B(cλ + x, c(1 − λ) + n − x) / (B(cλ, c(1 − λ)) λ^x (1 − λ)^(n − x)),

with ``F_λ = Beta(cλ, c(1 − λ))`` (mean λ, concentration c), is a mixture of likelihood ratios,
hence a non-negative martingale with ``M_0 = 1`` when λ is the truth.  Ville's inequality gives
``P(∃ n: M_n(λ) ≥ 1/α) ≤ α``, so ``C_n = {λ ∈ [q, p] : M_n(λ) < 1/α}`` is a confidence sequence
for λ at level ``1 − α`` (Robbins 1970; Howard, Ramdas, McAuliffe & Sekhon 2021, section 3.3,
the conjugate "beta-binomial" mixture), mapped to π by ``π = (λ − q)/(p − q)``.  It depends on
the data only through ``(x, n)``, so cumulative counts at the end of each day are enough, and
it holds at every n in between as well.

**Tuning.**  The prior variance of θ is ``λ(1 − λ)/(c + 1)``; with ``c = 0.1 · tuned_for`` it is
ten times the sampling variance of x/n at ``n = tuned_for``, which makes the sequence nearly
narrowest relative to the fixed-n interval there (the normal-mixture rule of Howard et al.,
section 3.5: ρ ≈ 0.1 n at the target n; measured width ratios at n = 10,000 for ρ/n ∈
{0.02, 0.05, 0.1, 0.2, 0.4}: 1.64, 1.58, 1.57, 1.57, 1.64 in the worst cell).  ``tuned_for``
must be fixed before the data are seen — the dashboard uses the survey's target number of
respondents, which is frozen when the survey opens.

**Computing C_n.**  ``log M_n(λ)`` is quasi-convex in λ (checked on 4,000 random (n, x, c)
with n up to 10⁶ on a 40,001-point grid, and by ``tests/unit/test_sequential.py`` against a
dense grid), so ``C_n`` is an interval around the minimizer: a vectorized golden-section
search finds the minimizer, and bisection each side finds where ``log M_n`` crosses
``log(1/α)``; the returned ends are the rejected side of each bracket (rounded outward).  If
even the minimum is at or above ``log(1/α)`` the set is empty — which happens with probability
at most α — and the interval is the single point at the minimizer.

References
----------
.. [1] H. Robbins, "Statistical methods related to the law of the iterated logarithm",
   Ann. Math. Statist. 41 (1970) 1397–1409.
.. [2] S. R. Howard, A. Ramdas, J. McAuliffe, J. Sekhon, "Time-uniform, nonparametric,
   nonasymptotic confidence sequences", Ann. Statist. 49 (2021) 1055–1080.
.. [3] I. Waudby-Smith, A. Ramdas, "Estimating means of bounded random variables by betting",
   J. R. Stat. Soc. B 86 (2024) 1–27.
.. [4] J. Ville, *Étude critique de la notion de collectif*, Gauthier-Villars (1939).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import betaln, xlogy

from deniable.client.mechanism import resolve
from deniable.errors import FieldError

from . import caveats, point
from .result import EstimateResult, Result, frozen
from .validate import check_confidence, check_counts

METHOD = "confidence-sequence"
PRIOR_FRACTION = 0.1  # c = PRIOR_FRACTION · tuned_for (module notes, "Tuning")
DEFAULT_TUNED_FOR = 10_000
_EDGE = 1e-12  # λ is searched in [q + EDGE, p − EDGE]: Beta(cλ, ·) needs cλ > 0
_GOLDEN = 80  # golden-section steps: the bracket shrinks by 0.618^80 ≈ 2e-17
_BISECT = 60
NOTE = ("confidence sequence: valid at every n at once, so it may be watched daily; "
        "wider than a fixed-n interval")


def check_tuned_for(tuned_for) -> int:
    """Return ``tuned_for`` as an int ≥ 1, or raise FieldError naming it."""
    if isinstance(tuned_for, bool) or not isinstance(tuned_for, (int, np.integer)) or tuned_for < 1:
        raise FieldError(f"tuned_for must be a whole number of respondents >= 1, got {tuned_for!r}", "tuned_for")
    return int(tuned_for)


def log_martingale(x, n, lam, concentration: float) -> np.ndarray:
    """Return ``log M_n(λ)`` of the beta-binomial mixture (module notes) for counts x of n.

    >>> float(log_martingale(0, 0, 0.3, 1000.0))
    0.0
    """
    x, n, lam = (np.asarray(v, dtype=float) for v in (x, n, lam))
    a, b = concentration * lam, concentration * (1.0 - lam)
    return betaln(a + x, b + n - x) - betaln(a, b) - xlogy(x, lam) - xlogy(n - x, 1.0 - lam)


def lambda_sequence(x, n, p: float, q: float, confidence: float, tuned_for: int = DEFAULT_TUNED_FOR):
    """Return ``(low, high, empty)``: the confidence sequence for λ on [q, p] at counts x of n.

    Arrays broadcast; ``empty`` marks counts for which no λ survives (both ends at the minimizer).
    """
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    c = PRIOR_FRACTION * check_tuned_for(tuned_for)
    threshold = math.log(1.0 / (1.0 - confidence))
    lo_end, hi_end = q + _EDGE, p - _EDGE

    def f(lam):
        return log_martingale(x, n, lam, c)

    # Golden-section search for the minimizer of the quasi-convex log M_n on [lo_end, hi_end].
    left, right = np.full(x.shape, lo_end), np.full(x.shape, hi_end)
    ratio = (math.sqrt(5) - 1) / 2
    m1, m2 = right - ratio * (right - left), left + ratio * (right - left)
    f1, f2 = f(m1), f(m2)
    for _ in range(_GOLDEN):
        go_left = f1 <= f2
        right = np.where(go_left, m2, right)
        left = np.where(go_left, left, m1)
        new1 = right - ratio * (right - left)
        new2 = left + ratio * (right - left)
        m1, m2 = np.where(go_left, new1, m2), np.where(go_left, m1, new2)
        f1, f2 = np.where(go_left, f(m1), f2), np.where(go_left, f1, f(m2))
    centre = 0.5 * (left + right)
    empty = f(centre) >= threshold

    def crossing(far):
        """The end of the accepted interval between the centre and ``far`` (rejected side)."""
        reach = f(np.full(x.shape, far)) < threshold
        inside, outside = centre.copy(), np.full(x.shape, far)
        for _ in range(_BISECT):
            mid = 0.5 * (inside + outside)
            ok = f(mid) < threshold
            inside = np.where(ok, mid, inside)
            outside = np.where(ok, outside, mid)
        return np.where(reach, far, outside)

    low = np.where(empty, centre, crossing(lo_end))
    high = np.where(empty, centre, crossing(hi_end))
    # An end that reaches the search edge is the boundary itself (π = 0 or 1 exactly).
    low = np.where(low <= lo_end, q, low)
    high = np.where(high >= hi_end, p, high)
    return low, high, empty


def confidence_sequence(x, n, p: float, q: float, confidence: float = 0.95,
                        tuned_for: int = DEFAULT_TUNED_FOR):
    """Return ``(ci_low, ci_high)`` for π: the confidence sequence at counts x of n, mapped to π.

    Parameters
    ----------
    x, n : array_like of int
        Reports of the option, and reports in all, at one or many looks (broadcast together).
    p, q : float
        The realized keep and flip probabilities (:mod:`deniable.client.mechanism`).
    confidence : float
        Time-uniform level: the probability that *every* interval of the sequence covers π.
    tuned_for : int
        The n at which the sequence is tuned to be narrowest relative to the fixed-n interval;
        fixed before the data are seen.

    Returns
    -------
    (ndarray, ndarray)
        π-scale ends in [0, 1]; ``n = 0`` gives [0, 1].

    Notes
    -----
    See the module docstring: a beta-binomial mixture martingale per candidate λ, inverted
    (Robbins 1970; Howard et al. 2021).

    Examples
    --------
    >>> low, high = confidence_sequence(620, 1000, 0.75, 0.25)  # π̂ = (0.62 − 0.25)/0.5 = 0.74
    >>> round(float(low), 4), round(float(high), 4)
    (0.6258, 0.8494)
    """
    confidence = check_confidence(confidence)
    low, high, _ = lambda_sequence(x, n, p, q, confidence, tuned_for)
    to_pi = lambda lam: np.clip((lam - q) / (p - q), 0.0, 1.0)  # noqa: E731
    return to_pi(low), to_pi(high)


def monitor(counts, epsilon, *, confidence=0.95, simultaneous=False, tuned_for=DEFAULT_TUNED_FOR) -> EstimateResult:
    """Estimate one protected question with confidence-sequence intervals (monitoring mode).

    Parameters
    ----------
    counts : sequence of int
        Noisy counts per option, as for :func:`deniable.estimators.estimate`.
    epsilon : float or None
        The declared ε (None: asked directly).
    confidence : float, default 0.95
        Time-uniform level of each option's sequence.
    simultaneous : bool, default False
        Bonferroni over the k options: all k sequences hold at every n together with
        probability ≥ ``confidence``.
    tuned_for : int, default 10,000
        See :func:`confidence_sequence`.

    Returns
    -------
    EstimateResult
        The point estimates and standard errors of :func:`deniable.estimators.estimate`, with
        ``method = "confidence-sequence"`` and its intervals; ``note`` says why they are wider.

    Notes
    -----
    The intervals are :func:`confidence_sequence` at ``(c_i, n)`` for every option.  They can be
    recomputed after every response, and a decision taken whenever one excludes a value,
    without losing coverage (Howard et al. 2021; Ville 1939).

    References
    ----------
    .. [1] S. R. Howard, A. Ramdas, J. McAuliffe, J. Sekhon, Ann. Statist. 49 (2021) 1055–1080.

    Examples
    --------
    >>> r = monitor([700, 300], 1.0)
    >>> r.method, bool(r.ci_low[0] < r.estimate[0] < r.ci_high[0])
    ('confidence-sequence', True)
    """
    noisy = check_counts(counts)
    confidence = check_confidence(confidence)
    tuned_for = check_tuned_for(tuned_for)
    if not isinstance(simultaneous, (bool, np.bool_)):
        raise FieldError(f"simultaneous must be True or False, got {simultaneous!r}", "simultaneous")
    mech = resolve(noisy.size, epsilon)
    n = int(noisy.sum())
    level = 1 - (1 - confidence) / mech.k if simultaneous else confidence
    if n == 0:
        low, high = np.zeros(mech.k), np.ones(mech.k)
    else:
        low, high = confidence_sequence(noisy, n, mech.p, mech.q, level, tuned_for)
    consistent = point.consistent(noisy, mech.p, mech.q)
    notes = [NOTE] if n else ["no reports: estimates are undefined (NaN) and intervals are [0, 1]"]
    if n:
        notes += caveats.notes(n, mech.k, mech.p, mech.q, mech.epsilon, confidence, consistent)
    return EstimateResult(
        n=n, k=mech.k, epsilon=mech.epsilon, declared_epsilon=mech.declared_epsilon,
        p=mech.p, q=mech.q, method=METHOD, confidence=confidence, simultaneous=bool(simultaneous),
        noisy_counts=frozen(noisy, dtype=np.int64),
        estimate=frozen(point.unbiased(noisy, mech.p, mech.q)),
        consistent=frozen(consistent),
        std_error=frozen(point.std_error(noisy, mech.p, mech.q)),
        ci_low=frozen(low), ci_high=frozen(high), note="; ".join(notes),
    )


@dataclass(frozen=True, eq=False)
class SequencePath(Result):
    """A question's cumulative estimates over time, each with its confidence-sequence interval.

    Row ``t`` is everything reported up to and including ``labels[t]`` (a day).  ``fixed_low``
    and ``fixed_high`` are the exact fixed-n intervals at the same counts, for comparison: they
    are valid only at an n chosen in advance.
    """

    labels: tuple
    n: np.ndarray  # (T,)
    estimate: np.ndarray  # (T, k) unbiased
    ci_low: np.ndarray  # (T, k) confidence sequence
    ci_high: np.ndarray
    fixed_low: np.ndarray  # (T, k) exact fixed-n interval
    fixed_high: np.ndarray
    k: int
    epsilon: float
    confidence: float
    tuned_for: int


def monitor_path(counts_by_time, epsilon, *, labels=None, confidence=0.95, tuned_for=DEFAULT_TUNED_FOR,
                 fixed_method="exact") -> SequencePath:
    """Cumulative estimates with their confidence sequence, one row per period (e.g. per day).

    Parameters
    ----------
    counts_by_time : array_like, shape (T, k)
        Row t: the noisy counts of the reports that arrived in period t (not cumulative).
    epsilon : float or None
        The declared ε.
    labels : sequence of T labels, optional
        What each period is (``"2026-03-01"``); defaults to ``0..T−1``.
    confidence, tuned_for
        As for :func:`monitor`.
    fixed_method : str, default "exact"
        Interval method of the fixed-n comparison (``deniable.estimators.METHODS``).

    Returns
    -------
    SequencePath

    Examples
    --------
    >>> path = monitor_path([[30, 20], [40, 10]], 1.0, labels=["d1", "d2"])
    >>> path.n.tolist(), path.labels
    ([50, 100], ('d1', 'd2'))
    """
    from .marginal import estimate  # the fixed-n intervals, for the comparison

    table = np.asarray(counts_by_time)
    if table.ndim != 2 or table.shape[0] < 1:
        raise FieldError(f"counts_by_time must be a 2-d array (periods x options), got shape {table.shape}", "counts_by_time")
    if table.shape[1] < 2:
        raise FieldError(f"counts_by_time must have at least 2 options (columns), got shape {table.shape}", "counts_by_time")
    table = check_counts(table.reshape(-1), "counts_by_time").reshape(table.shape)
    labels = tuple(range(table.shape[0])) if labels is None else tuple(labels)
    if len(labels) != table.shape[0]:
        raise FieldError(f"labels must have one entry per period ({table.shape[0]}), got {len(labels)}", "labels")
    cumulative = np.cumsum(table, axis=0)
    mech = resolve(table.shape[1], epsilon)
    n = cumulative.sum(axis=1)
    low, high = confidence_sequence(cumulative, n[:, None], mech.p, mech.q, check_confidence(confidence),
                                    tuned_for)
    low = np.where(n[:, None] == 0, 0.0, low)
    high = np.where(n[:, None] == 0, 1.0, high)
    fixed = [estimate(row, epsilon, confidence=confidence, method=fixed_method) for row in cumulative]
    with np.errstate(invalid="ignore", divide="ignore"):
        unbiased = (cumulative / n[:, None] - mech.q) / (mech.p - mech.q)
    return SequencePath(
        labels=labels, n=frozen(n, dtype=np.int64), estimate=frozen(np.where(n[:, None] > 0, unbiased, np.nan)),
        ci_low=frozen(low), ci_high=frozen(high),
        fixed_low=frozen([r.ci_low for r in fixed]), fixed_high=frozen([r.ci_high for r in fixed]),
        k=mech.k, epsilon=mech.epsilon, confidence=float(confidence), tuned_for=check_tuned_for(tuned_for),
    )
