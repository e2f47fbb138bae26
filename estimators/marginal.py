"""Estimates for one protected question, overall and within subgroups."""

from __future__ import annotations

import numpy as np

from deniable.client.mechanism import resolve
from deniable.errors import FieldError

from . import caveats, point
from .intervals import check_method, interval
from .result import EstimateResult, frozen
from .validate import check_confidence, check_counts


def estimate(counts, epsilon, *, confidence=0.95, method="exact", simultaneous=False) -> EstimateResult:
    """Estimate the option proportions of one protected question from its noisy counts.

    Parameters
    ----------
    counts : sequence of int
        ``counts[i]`` is the number of randomized reports of option ``i``; ``k = len(counts) ≥ 2``.
    epsilon : float or None
        The question's *declared* ε.  The realized ``p`` and ``q`` come from
        :func:`deniable.client.mechanism.resolve`.  None means asked directly (``p = 1, q = 0``).
    confidence : float, default 0.95
        Confidence level of each interval, in (0, 1).
    method : {"exact", "likelihood", "wilson", "clopper-pearson", "wald"}, default "exact"
        Interval method, used as asked at every n (nothing switches silently).
    simultaneous : bool, default False
        Bonferroni: each option's interval at level ``1 − (1 − confidence)/k``, so all k
        intervals hold together with probability at least ``confidence``.

    Returns
    -------
    EstimateResult
        With ``n = 0`` the estimates and standard errors are NaN and every interval is [0, 1].
        ``note`` is empty, or says in words what the numbers are not (see Notes), "; "-joined.

    Raises
    ------
    deniable.errors.FieldError
        For k < 2, negative or non-integer counts, ε out of range, confidence outside (0, 1)
        or an unknown method; the message and ``field`` name the argument.  A ValueError, as before.

    Notes
    -----
    k-ary randomized response reports the true option with probability ``p`` and each other
    option with probability ``q = (1 − p)/(k − 1)`` (Warner 1965; Wang et al. 2017), so an
    option's noisy count is ``c ~ Binomial(n, λ)`` with ``λ = q + (p − q) π``.

    * ``estimate`` is the unbiased ``(c/n − q)/(p − q)`` (``E[c/n] = λ``); it can leave [0, 1].
    * ``consistent`` is the constrained maximum-likelihood estimate on the simplex
      (Kairouz et al. 2016): ``λ_i = max(q, c_i/μ)`` with μ making the λ sum to one.  It is
      *biased* toward the inside of [0, 1]: for two options it is ``clip(estimate, 0, 1)``,
      whose bias at π = 0 is, exactly, +0.306 at n = 12, ε = 0.3; +0.203 at n = 40; +0.073 at
      n = 333; +0.030 at n = 2,000 (+0.127, +0.068, +0.024, +0.010 at ε = 0.9).  ``note``
      says so when the bias at the estimated proportions reaches one point
      (:mod:`deniable.estimators.caveats`).
    * ``std_error`` is ``sqrt(λ̃(1 − λ̃)/n)/(p − q)``: the exact variance of the unbiased
      estimate, ``λ(1 − λ)/(n (p − q)²)``, with λ replaced by ``λ̃ = clip(c/n, q, p)``.  At
      n ≤ 40 its expectation is 0.84–1.24 times the true standard deviation (near the
      boundary it stays up to 1.24 times at n = 100), and ``note`` says so.
    * When ``n · min(KL(p‖q), KL(q‖p)) < χ²₁(confidence)/2`` — the reports cannot tell an
      option nobody holds from one everybody holds (a tiny ε: ``estimate([60, 40], 0.001)``) —
      ``note`` says the intervals mostly show the range, not the data, and how many
      respondents would be needed.
    * Intervals are binomial intervals for λ restricted to ``[q, p]`` mapped by
      ``π = (λ − q)/(p − q)``: "exact" is the Feldman–Cousins likelihood-ratio-ordered
      Neyman belt (coverage ≥ nominal at every π); "likelihood" inverts the likelihood-ratio
      test with the χ²₁ quantile; "wilson" is the score interval (Wilson 1927) and
      "clopper-pearson" the beta-quantile interval (Clopper & Pearson 1934), both truncated
      and, instead of collapsing to [0, 0] or [1, 1], replaced by a one-sided bound; "wald"
      is the textbook interval, for comparison only (Brown, Cai & DasGupta 2001).
    * For k > 2 the consistent estimate uses all k counts while each interval uses one, so
      with implausible counts it can fall outside that option's interval; the clipped
      unbiased estimate is always inside.

    References
    ----------
    .. [1] S. L. Warner, "Randomized response: a survey technique for eliminating evasive
       answer bias", JASA 60 (1965) 63–69.
    .. [2] T. Wang, J. Blocki, N. Li, S. Jha, "Locally differentially private protocols for
       frequency estimation", USENIX Security 2017.
    .. [3] P. Kairouz, K. Bonawitz, D. Ramage, "Discrete distribution estimation under local
       privacy", ICML 2016.
    .. [4] G. J. Feldman, R. D. Cousins, "Unified approach to the classical statistical
       analysis of small signals", Phys. Rev. D 57 (1998) 3873.
    .. [5] E. B. Wilson, "Probable inference, the law of succession, and statistical
       inference", JASA 22 (1927) 209–212.
    .. [6] C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits illustrated
       in the case of the binomial", Biometrika 26 (1934) 404–413.
    .. [7] L. D. Brown, T. T. Cai, A. DasGupta, "Interval estimation for a binomial
       proportion", Statistical Science 16 (2001) 101–133.

    Examples
    --------
    >>> r = estimate([700, 300], epsilon=1.0)
    >>> r.method, round(float(r.estimate[0]), 3)
    ('exact', 0.933)
    """
    noisy = check_counts(counts)
    confidence = check_confidence(confidence)
    method = check_method(method)
    if not isinstance(simultaneous, (bool, np.bool_)):
        raise FieldError(f"simultaneous must be True or False, got {simultaneous!r}", "simultaneous")
    mech = resolve(noisy.size, epsilon)
    n = int(noisy.sum())
    level = 1 - (1 - confidence) / mech.k if simultaneous else confidence
    low, high = interval(method, noisy, n, mech.p, mech.q, level)
    consistent = point.consistent(noisy, mech.p, mech.q)
    if n == 0:
        note = "no reports: estimates are undefined (NaN) and intervals are [0, 1]"
    else:
        note = "; ".join(caveats.notes(n, mech.k, mech.p, mech.q, mech.epsilon, confidence, consistent))
    return EstimateResult(
        n=n, k=mech.k, epsilon=mech.epsilon, declared_epsilon=mech.declared_epsilon,
        p=mech.p, q=mech.q, method=method, confidence=confidence,
        simultaneous=bool(simultaneous),
        noisy_counts=frozen(noisy, dtype=np.int64),
        estimate=frozen(point.unbiased(noisy, mech.p, mech.q)),
        consistent=frozen(consistent),
        std_error=frozen(point.std_error(noisy, mech.p, mech.q)),
        ci_low=frozen(low), ci_high=frozen(high), note=note,
    )


def subgroups(counts_by_group, epsilon, *, confidence=0.95, method="exact", simultaneous=False) -> list[EstimateResult]:
    """Estimate a protected question within each subgroup defined by a direct question.

    Parameters
    ----------
    counts_by_group : array_like, shape (g, k)
        Row ``j``: noisy counts of the protected question among respondents whose direct
        (unprotected) answer is option ``j``.
    epsilon, confidence, method, simultaneous
        As for :func:`estimate`, applied to each row.

    Returns
    -------
    list of EstimateResult
        One per row, in order.  Rows are independent samples, so each row's interval is
        valid on its own; a row with no respondents gets the ``n = 0`` result.

    Examples
    --------
    >>> [r.n for r in subgroups([[70, 30], [20, 80]], 1.0)]
    [100, 100]
    """
    table = np.asarray(counts_by_group) if not isinstance(counts_by_group, np.ndarray) else counts_by_group
    if table.ndim != 2 or table.shape[0] < 1:
        raise FieldError(f"counts_by_group must be a 2-d array (groups x options), got shape {table.shape}", "counts_by_group")
    return [estimate(row, epsilon, confidence=confidence, method=method, simultaneous=simultaneous) for row in table]
