"""Estimates for a known misclassification matrix (:mod:`deniable.client.designs`).

With n reports and the design's realized matrix ``M`` (reports × answers), the report counts are
Multinomial(n, λ) with ``λ = M π``.

* **Unbiased**: ``π̂ = M⁺ λ̂`` with ``λ̂`` the report shares and ``M⁺`` the Moore–Penrose inverse;
  since M has full column rank (the designs refuse a singular one), ``M⁺ M = I`` and
  ``E π̂ = M⁺ λ = π`` (Warner 1965; Chaudhuri & Mukerjee 1988, ch. 2).  It can leave the simplex.
* **Consistent**: the maximum-likelihood estimate on the simplex (:func:`fit_consistent`).  The
  log-likelihood ``ℓ(π) = Σ_r c_r log (Mπ)_r`` is concave, and its Karush–Kuhn–Tucker conditions
  on the simplex are, with the scores ``s_t = Σ_r c_r M[r, t] / (n λ_r)`` (``Σ_t π_t s_t = 1``
  always, so the multiplier of ``Σ π = 1`` is 1): ``s_t = 1`` where ``π_t > 0`` and ``s_t ≤ 1``
  where ``π_t = 0`` (Boyd & Vandenberghe 2004, §5.5.3).  **Closed forms** first: with a square M,
  ``λ = λ̂`` is the unconstrained maximum of the multinomial likelihood, so whenever ``π̂ = M⁻¹λ̂``
  lies in the simplex it is the estimate (the scores are all 1); with two answers ℓ is a concave
  function of ``π₀`` alone, maximized over the line at ``π̂₀``, so over [0, 1] at ``clip(π̂₀, 0, 1)``
  — the unbiased estimate exactly 0 or 1, or far outside (a near-singular design), costs nothing.
  **Otherwise** an active-set Newton method: on the face of the simplex where the current π is
  positive, the Newton step of ℓ restricted to ``Σ d = 0`` (``H d + ν1 = g``, H the negative
  Hessian ``Mᵀ diag(c/λ²) M``, g the gradient ``Mᵀ(c/λ)``), followed by an exact line search of
  the concave ``ℓ(π + t d)`` up to the first share it drives to 0, which then leaves the face; on a
  face's maximum, a share at 0 whose score exceeds 1 re-enters by an exact line search along
  ``e_t − π`` (its directional derivative ``n(s_t − 1) > 0``).  It stops when the scores meet the
  KKT conditions to ``KKT_TOLERANCE`` (``converged``), at most ``NEWTON_STEPS`` steps.  EM (the
  E-step ``π_t M[r, t] / λ_r``, M-step their average; Dempster, Laird & Rubin 1977; van den Hout &
  van der Heijden 2002, §3), used here before, converges sublinearly where the maximum is on the
  boundary with a score of exactly 1 — the unbiased estimate exactly 0, the most likely count at
  π = 0 — and ran its 100,000 steps there (seconds per question) to stop 1e-6 to 2.5e-4 short of 0.
* **Standard errors** of the unbiased estimate: it is linear in the report shares, so
  ``Cov π̂ = M⁺ Σ M⁺ᵀ`` with the multinomial ``Σ = (diag λ − λ λᵀ)/n`` exactly; the standard
  errors shown plug in ``λ̂`` for λ (Chaudhuri & Mukerjee 1988, §2.3).
* **Exact intervals** where a count is binomial in an affine function of one share:
  - a binary design: the count of a report r with ``M[r, 0] ≠ M[r, 1]`` is Binomial(n, λ),
    ``λ = M[r, 1] + (M[r, 0] − M[r, 1]) π₀``, so any of the project's interval methods for
    ``λ ∈ [q, p]`` (:func:`.intervals.interval`; "exact" is Feldman–Cousins, the one a choice's
    options get) with ``q = min``, ``p = max`` of the two entries maps to an interval for π₀
    (and ``1 − π₀`` for the other answer);
  - forced response with k answers: report r's count is Binomial(n, λ_r),
    ``λ_r = p_r + p·π_r``, so the same with ``q = p_r`` and ``p = p + p_r``, per answer.
  Coverage is checked by summing the binomial distribution exactly (tests/unit/test_designs.py).
  Other designs with more than two answers get conservative simultaneous intervals from an exact
  confidence region for the report probabilities mapped through the design
  (:mod:`.design_region`), their coverage summed over the multinomial.
* **Planning** (:func:`plan_design`): where the interval is exact (a binary design, forced
  response), a report's count is Binomial(n, ``q + (p − q)π``) on ``[q, p]``, so the exact
  planner of :mod:`.planning` (:func:`.planning.plan_channel`: the worst-case over π of the
  expected half-width, summed exactly over the binomial) gives the respondents a margin needs —
  for forced response the largest over the answers.  Otherwise the **normal approximation**
  ``n = ⌈z² V / margin²⌉``, ``V = max_π max_t [M⁺ (diag λ − λλᵀ) M⁺ᵀ]_tt`` with ``λ = Mπ`` (the
  unbiased estimate's worst-case variance per respondent; each ``[·]_tt`` is a concave quadratic
  in π, maximized over the simplex by SLSQP), and it is labelled so.

References
----------
.. [1] S. L. Warner, JASA 60 (1965) 63–69.
.. [2] A. Chaudhuri, R. Mukerjee, *Randomized Response: Theory and Techniques* (1988).
.. [3] A. P. Dempster, N. M. Laird, D. B. Rubin, JRSS B 39 (1977) 1–38.
.. [4] A. van den Hout, P. G. M. van der Heijden, "Randomized response, statistical disclosure
   control and misclassification: a review", International Statistical Review 70 (2002) 269–288.
.. [5] S. Boyd, L. Vandenberghe, *Convex Optimization* (2004), §5.5.3 (KKT conditions) and §10.2
   (Newton's method with equality constraints).
.. [6] J. Nocedal, S. J. Wright, *Numerical Optimization*, 2nd ed. (2006), §16.5 (active-set methods).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from deniable.errors import FieldError

from .intervals import check_method, interval
from .result import Result, json_number
from .validate import check_confidence

KKT_TOLERANCE = 1e-9  # the scores meet the KKT conditions to this: the consistent estimate converged
NEWTON_STEPS = 500  # at most, over every face the active set visits
BOUNDARY = 1e-9  # a consistent share within this of 0 or 1 sits on the simplex's boundary (the note says so)


@dataclass(frozen=True)
class DesignResult(Result):
    """Estimates of each answer's share under a design: unbiased, consistent, and intervals where exact."""

    labels: tuple
    n: int
    counts: np.ndarray  # report counts
    estimate: np.ndarray  # unbiased, M⁺ λ̂
    consistent: np.ndarray  # maximum likelihood on the simplex
    ci_low: np.ndarray | None  # None where no exact interval is offered
    ci_high: np.ndarray | None
    method: str | None
    confidence: float
    epsilon: float  # realized ε of the design (inf when not ε-LDP)
    std_error: np.ndarray | None = None  # of the unbiased estimate (module notes)
    note: str | None = None  # why there is no interval, when there is none
    # The interval's report probabilities, as k-ary randomized response's p and q: a binary design's
    # chosen report under the first and the second answer; forced response's p + p_r and p_r (the
    # largest p_r); NaN for other designs.
    p: float = float("nan")
    q: float = float("nan")
    converged: bool = True  # whether the consistent estimate meets the KKT conditions (:func:`fit_consistent`)
    iterations: int = 0  # the consistent estimate's Newton steps (0: a closed form)
    notes: tuple = ()  # the parts of ``note`` (:func:`design_notes`), one by one

    def to_dict(self) -> dict:
        """JSON-ready: per answer its label, unbiased and consistent estimate and interval; the note and
        whether the consistent estimate converged."""
        rows = []
        for i, label in enumerate(self.labels):
            rows.append({"label": label, "estimate": json_number(self.estimate[i]), "consistent": json_number(self.consistent[i]),
                         "ci_low": None if self.ci_low is None else json_number(self.ci_low[i]),
                         "ci_high": None if self.ci_high is None else json_number(self.ci_high[i])})
        return {"n": self.n, "method": self.method, "confidence": self.confidence,
                "epsilon": json_number(self.epsilon), "converged": self.converged, "note": self.note or None,
                "answers": rows}

    def summary(self) -> str:
        """A plain-text table: one line per answer."""
        head = f"n = {self.n:,}, ε = {self.epsilon:.4g}" + (f", {self.confidence:.0%} {self.method} intervals"
                                                             if self.method else ", no exact interval for this design")
        lines = [head]
        for i, label in enumerate(self.labels):
            span = "" if self.ci_low is None else f"  [{self.ci_low[i]:.4f}, {self.ci_high[i]:.4f}]"
            lines.append(f"  {label:<24} {self.estimate[i]:8.4f} (consistent {self.consistent[i]:.4f}){span}")
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)


def _counts(counts, k_reports: int) -> np.ndarray:
    c = np.asarray(counts)
    if c.ndim != 1 or c.size != k_reports or c.dtype.kind not in "iu" or (c < 0).any():
        raise FieldError(f"counts must be {k_reports} non-negative integers (one per report), got {counts!r}", "counts")
    return c.astype(np.int64)


def unbiased(counts, matrix) -> np.ndarray:
    """``M⁺ λ̂``: unbiased for π whenever M has full column rank (module notes)."""
    c = np.asarray(counts, dtype=float)
    return np.linalg.pinv(np.asarray(matrix, dtype=float)) @ (c / c.sum())


@dataclass(frozen=True)
class ConsistentFit(Result):
    """The maximum-likelihood estimate on the simplex and how it was found (:func:`fit_consistent`)."""

    estimate: np.ndarray
    converged: bool  # the KKT conditions hold to KKT_TOLERANCE
    iterations: int  # Newton steps and re-entries (0: a closed form)
    kkt_gap: float  # the largest violation of the KKT conditions by the scores
    method: str  # "closed form" or "active-set Newton"


def _scores(x: np.ndarray, m: np.ndarray, c: np.ndarray) -> np.ndarray | None:
    """``s_t = Σ_r c_r M[r, t] / (n λ_r)`` over the reports made, or None where one has ``λ_r ≤ 0``."""
    live = c > 0
    lam = m[live] @ x
    if not np.all(lam > 0):
        return None
    return (c[live] / lam) @ m[live] / c.sum()


def kkt_gap(x, matrix, counts) -> float:
    """How far ``x`` is from the KKT conditions of the maximum on the simplex (module notes): the largest of
    ``s_t − 1`` over every answer and ``|s_t − 1|`` where ``x_t > 0``; infinite where a report made has
    probability 0."""
    x, m, c = (np.asarray(v, dtype=float) for v in (x, matrix, counts))
    s = _scores(x, m, c)
    if s is None:
        return math.inf
    gap = max(0.0, float(s.max()) - 1.0)
    inside = x > 0
    return max(gap, float(np.abs(s[inside] - 1.0).max())) if inside.any() else gap


def _closed_form(c: np.ndarray, m: np.ndarray) -> np.ndarray | None:
    """The maximum where it has a closed form (module notes): ``π̂`` in the simplex (square M), or two answers."""
    k = m.shape[1]
    if m.shape[0] != k:
        return None
    try:
        pi = np.linalg.solve(m, c / c.sum())
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(pi)):
        return None
    if k == 2:
        share = min(max(float(pi[0]), 0.0), 1.0)
        return np.array([share, 1.0 - share])
    if pi.min() >= 0:
        return pi / pi.sum()  # Σ π̂ = 1 already (the columns of M sum to 1); this removes rounding
    return None


def _line_search(lam: np.ndarray, u: np.ndarray, c: np.ndarray, end: float) -> float:
    """The t in ``[0, end]`` that maximizes the concave ``φ(t) = Σ c log(λ + t u)``: ``end`` if φ still rises
    there, else the root of ``φ'(t) = Σ c u / (λ + t u)`` by Newton steps kept inside a bisection bracket."""
    def slope(t):
        at = lam + t * u
        if np.any(at <= 0):
            return -math.inf, -math.inf
        ratio = u / at
        return float(c @ ratio), -float(c @ (ratio * ratio))

    high = end
    first, _ = slope(high)
    if first >= 0:
        return high
    low, t = 0.0, min(1.0, high / 2)
    for _ in range(200):
        value, curve = slope(t)
        if value > 0:
            low = t
        else:
            high = t
        if abs(value) <= 1e-13 * float(c.sum()) or high - low <= 1e-16 * max(1.0, high):
            return t
        newton = t - value / curve if curve < 0 and math.isfinite(value) else -1.0
        t = newton if low < newton < high else (low + high) / 2
    return t


def _newton(c: np.ndarray, m: np.ndarray, x: np.ndarray, budget: int) -> tuple[np.ndarray, int]:
    """The active-set Newton method from ``x`` (module notes); returns the estimate and the steps taken."""
    live = c > 0
    a_all, cl = m[live], c[live]
    n = float(cl.sum())
    k = m.shape[1]
    steps = 0
    while steps < budget:
        steps += 1
        face = x > 0
        a = a_all[:, face]
        lam = a @ x[face]
        weight = cl / lam
        gradient = a.T @ weight
        size = int(face.sum())
        direction = np.zeros(size)
        if size > 1:
            system = np.zeros((size + 1, size + 1))
            system[:size, :size] = (a.T * (weight / lam)) @ a
            system[:size, size] = system[size, :size] = 1.0
            solution = np.linalg.lstsq(system, np.concatenate([gradient, [0.0]]), rcond=None)[0]
            direction = solution[:size] - solution[:size].mean()  # exactly on the face's plane
        rise = float(gradient @ direction)  # the Newton decrement: twice the model's gain
        if rise > 1e-22 * n and np.abs(direction).max() > 1e-17:
            falling = direction < 0
            ratios = -x[face][falling] / direction[falling]
            end = float(ratios.min()) if ratios.size else 1.0
            t = _line_search(lam, a @ direction, cl, end)
            moved = x[face] + t * direction
            if t >= end:  # the share that blocked the step leaves the face
                moved[falling] = np.where(ratios <= end, 0.0, moved[falling])
            x = x.copy()
            x[face] = np.maximum(moved, 0.0)
            if t * np.abs(direction).max() > 1e-16 or t >= end:
                continue
        scores = (cl / (a_all @ x)) @ a_all / n
        outside = (~(x > 0)) & (scores > 1 + KKT_TOLERANCE / 10)
        if not outside.any():
            return x, steps
        j = int(np.argmax(np.where(outside, scores, -np.inf)))  # the share at 0 whose score is largest re-enters
        towards = -x.copy()
        towards[j] += 1.0
        t = _line_search(a_all @ x, a_all @ towards, cl, 1.0)
        x = np.maximum(x + t * towards, 0.0)
        x[j] = max(x[j], t)
    return x, steps


def fit_consistent(counts, matrix) -> ConsistentFit:
    """The maximum-likelihood π on the simplex from report ``counts`` under ``matrix`` (reports × answers).

    Parameters
    ----------
    counts : array of float
        How many reports of each kind (weighted counts allowed).
    matrix : array
        The design's realized misclassification matrix ``M[r, t] = P(report r | answer t)``.

    Returns
    -------
    ConsistentFit
        ``estimate``, ``converged`` (the KKT conditions hold to ``KKT_TOLERANCE``), ``iterations``
        (0 for a closed form), ``kkt_gap`` and ``method``.

    Notes
    -----
    A closed form where there is one (``π̂ = M⁻¹λ̂`` in the simplex; two answers: ``clip(π̂₀, 0, 1)``),
    else the active-set Newton method of the module notes, from the unbiased estimate clipped to
    the simplex (uniform where that leaves a report made with probability 0).  Where no π gives every
    report made a positive probability the estimate is NaN and ``converged`` False.

    Examples
    --------
    >>> from deniable.client.designs import forced
    >>> fit = fit_consistent([10, 40], forced(0.7, [0.2, 0.1]).matrix)
    >>> [round(float(v), 9) for v in fit.estimate], fit.converged, fit.iterations
    ([0.0, 1.0], True, 0)
    """
    m = np.asarray(matrix, dtype=float)
    c = np.asarray(counts, dtype=float)
    k = m.shape[1]
    if c.sum() <= 0:
        return ConsistentFit(np.full(k, np.nan), False, 0, math.nan, "no reports")
    closed = _closed_form(c, m)
    if closed is not None:
        gap = kkt_gap(closed, m, c)
        if gap < KKT_TOLERANCE or k == 2:  # two answers: the clip is the maximum (module notes)
            return ConsistentFit(closed, bool(gap < KKT_TOLERANCE), 0, gap, "closed form")
    start = np.clip(np.linalg.pinv(m) @ (c / c.sum()), 0.0, None)
    start = start / start.sum() if start.sum() > 0 else np.full(k, 1.0 / k)
    if _scores(start, m, c) is None:
        start = np.full(k, 1.0 / k)
        if _scores(start, m, c) is None:  # a report made that no answer gives
            return ConsistentFit(np.full(k, np.nan), False, 0, math.inf, "active-set Newton")
    x, steps = _newton(c, m, start, NEWTON_STEPS)
    x = x / x.sum()
    gap = kkt_gap(x, m, c)
    return ConsistentFit(x, bool(gap < KKT_TOLERANCE), steps, gap, "active-set Newton")


def maximum_likelihood(counts, matrix) -> np.ndarray:
    """The maximum-likelihood π on the simplex (:func:`fit_consistent`'s estimate)."""
    return fit_consistent(counts, matrix).estimate


def standard_errors(counts, matrix) -> np.ndarray:
    """Standard errors of :func:`unbiased`: ``sqrt(diag(M⁺ Σ M⁺ᵀ))``, ``Σ = (diag λ̂ − λ̂ λ̂ᵀ)/n`` (module notes)."""
    c = np.asarray(counts, dtype=float)
    n = c.sum()
    lam = c / n
    pinv = np.linalg.pinv(np.asarray(matrix, dtype=float))
    cov = pinv @ ((np.diag(lam) - np.outer(lam, lam)) / n) @ pinv.T
    return np.sqrt(np.clip(np.diag(cov), 0, None))


def _binary_row(matrix: np.ndarray) -> int:
    """The report whose probability differs most between the two answers."""
    return int(np.argmax(np.abs(matrix[:, 0] - matrix[:, 1])))


def estimate_design(counts, design, *, confidence: float = 0.95, method: str = "exact", answers=None) -> DesignResult:
    """Estimate each answer's share from report ``counts`` under ``design`` (:class:`deniable.client.designs.Design`).

    Parameters
    ----------
    counts : array of int
        How many reports of each kind (``design.k_reports``).
    design : Design
        The realized design the reports were made with.
    confidence : float, default 0.95
    method : str, default "exact"
        The interval method for binary and forced-response designs (:data:`deniable.estimators.METHODS`).
    answers : list of str, optional
        The answers' names (a question's options), for ``labels`` and the notes; by default the reports'
        labels where each report is an answer's, else "answer 1", "answer 2", ….

    Returns
    -------
    DesignResult
        The unbiased and consistent estimates, intervals, standard errors, ``converged`` and
        ``iterations`` of the consistent estimate (:func:`fit_consistent`), and ``note`` (:func:`design_notes`):
        why the numbers may not say what they seem to — a nearly uninformative design, an estimate on the
        boundary of [0, 1], a consistent estimate that did not converge, the respondent-side crosswise
        model's range.

    Examples
    --------
    >>> from deniable.client.designs import forced
    >>> r = estimate_design([700, 300], forced(2/3, [1/6, 1/6]))
    >>> r.estimate.round(4).tolist(), [round(float(v), 3) for v in (r.ci_low[0], r.ci_high[0])]
    ([0.8, 0.2], [0.756, 0.842])
    """
    confidence = check_confidence(confidence)
    method = check_method(method)
    m = design.matrix
    c = _counts(counts, design.k_reports)
    n = int(c.sum())
    k = design.k
    if answers is not None:
        labels = tuple(str(a) for a in answers)
    elif design.k_reports == k and design.name not in ("kuk", "crosswise"):  # their reports are colours, same/different
        labels = tuple(design.reports)
    else:
        labels = tuple(f"answer {t + 1}" for t in range(k))
    if n == 0:
        empty = np.full(k, np.nan)
        return DesignResult(labels, 0, c, empty, empty, None, None, None, confidence, design.epsilon, empty,
                            "no reports yet")
    estimate, fit = unbiased(c, m), fit_consistent(c, m)
    consistent = fit.estimate
    low = high = None
    used = None
    p_shown = q_shown = float("nan")
    if k == 2:
        r = _binary_row(m)
        p_shown, q_shown = float(m[r, 0]), float(m[r, 1])
        if design.respondent_side:
            lo0, hi0 = respondent_intervals(design, np.array([c[0]]), n, confidence=confidence, method=method)
        else:
            lo0, hi0 = _binary_intervals(m, r, np.array([c[r]]), n, method, confidence)
        low = np.array([lo0[0], 1 - hi0[0]])
        high = np.array([hi0[0], 1 - lo0[0]])
        used = method
    elif design.name == "forced":
        params = dict(design.params)
        truth = float(params["p"])
        low, high = np.empty(k), np.empty(k)
        q_shown = float(max(params["forced"]))
        p_shown = truth + q_shown
        for t in range(k):
            share = float(params["forced"][t])
            lo, hi = interval(method, np.array([c[t]]), n, truth + share, share, confidence)
            low[t], high[t] = lo[0], hi[0]
        used = method
    else:  # no report is binomial in one share: a simultaneous region for λ, mapped through M
        from .design_region import METHOD, region_intervals

        low, high = region_intervals(c, m, confidence)
        used = METHOD
    notes = tuple(design_notes(n, design, estimate, fit, labels, confidence))
    return DesignResult(labels, n, c, estimate, consistent, low, high, used, confidence, design.epsilon,
                        standard_errors(c, m), "; ".join(notes) or None, p_shown, q_shown, fit.converged,
                        fit.iterations, notes)


def _binary_intervals(m: np.ndarray, r: int, x: np.ndarray, n: int, method: str, confidence: float):
    """The interval for the first answer's share from the counts ``x`` of report r of a binary design (module
    notes): the report's ``λ = M[r, 1] + (M[r, 0] − M[r, 1])·π₀``, on ``[min, max]`` of its two cells."""
    yes, no = m[r, 0], m[r, 1]
    if yes > no:
        return interval(method, x, n, yes, no, confidence)
    lo1, hi1 = interval(method, x, n, no, yes, confidence)  # the report is likelier under the second answer
    return 1 - hi1, 1 - lo1


def range_designs(design) -> list:
    """The respondent-side crosswise model's device-side twins at the low end of its fact's stated prevalence
    range, at the stated prevalence and at the high end (:func:`respondent_intervals`)."""
    from deniable.client.designs import crosswise

    params = dict(design.params)
    low, high = params["prevalence_range"]
    return [crosswise(value) for value in (low, params["prevalence"], high)]


def respondent_intervals(design, same, n: int, *, confidence: float = 0.95, method: str = "exact"):
    """The respondent-side crosswise model's interval for the first answer's share from the counts ``same``
    of its first report ("same"), each of n reports: the hull of the binary intervals (module notes) at the
    low end of the private fact's stated prevalence range, at the stated prevalence and at the high end.

    Notes
    -----
    With the fact's true prevalence ``π_y`` the count of "same" is Binomial(n, ``π_y π + (1 − π_y)(1 − π)``)
    (Yu, Tian & Tang 2008), so an interval computed at a stated prevalence covers only when the truth is
    that prevalence.  The fact's prevalence is only known to lie in ``[low, high]``; at either end the
    interval computed there covers π with at least the nominal probability, and so does any interval that
    contains it — the hull.  For a fixed report share the estimate ``(1 − π_y − λ)/(1 − 2π_y)`` is monotone
    in ``π_y`` (its derivative is ``(1 − 2λ)/(1 − 2π_y)²``), so the ends bound it in between.  The
    coverage, summed exactly over the binomial distribution at both ends, is in docs/statistics.md
    (``python scripts/design_coverage.py --crosswise``).

    Examples
    --------
    >>> from deniable.client.designs import crosswise_respondent
    >>> d = crosswise_respondent(0.25, "Born in Jan-Mar?", [0.23, 0.27])
    >>> low, high = respondent_intervals(d, [300], 500)
    >>> [round(float(v), 3) for v in (low[0], high[0])]
    [0.19, 0.396]
    """
    x = np.asarray(same, dtype=np.int64)
    ends = [_binary_intervals(twin.matrix, 0, x, n, method, confidence) for twin in range_designs(design)]
    return np.min([lo for lo, _ in ends], axis=0), np.max([hi for _, hi in ends], axis=0)


def _column_information(n: int, m: np.ndarray) -> tuple[float, float]:
    """The expected log-likelihood ratio of n reports between "everybody gives answer t" and "everybody gives
    answer t'", ``n · min(KL(M_t‖M_t'), KL(M_t'‖M_t))`` for the least distinguishable pair of columns, and
    the respondents at which it would reach 1 (per respondent, its reciprocal)."""
    from scipy.special import rel_entr

    worst = math.inf
    k = m.shape[1]
    for t in range(k):
        for u in range(t + 1, k):
            worst = min(worst, float(rel_entr(m[:, t], m[:, u]).sum()), float(rel_entr(m[:, u], m[:, t]).sum()))
    return n * worst, worst


def design_notes(n: int, design, estimate, fit: ConsistentFit, labels, confidence: float) -> list[str]:
    """The notes a design's result carries (module notes of :mod:`.caveats`, rule 1, and the boundary).

    * **Nearly uninformative**: plain randomized response's rule (:func:`.caveats.uninformative_note`) —
      the expected log-likelihood ratio of n reports between an answer nobody gives and one everybody
      gives below ``χ²₁(confidence)/2`` — with the design's own report probabilities: a binary design's
      report ``(max, min)`` of its cells, forced response's ``(p + p_t, p_t)`` for the least informative
      answer (the Bernoulli report of "answer t or not", as for an option of k-ary randomized response),
      and any other design the least distinguishable pair of its columns (the multinomial reports).
    * **On the boundary**: a consistent share within ``BOUNDARY`` of 0 or 1 — the unbiased estimate on
      or outside the edge of the simplex.
    * **Not converged**: the consistent estimate missed the KKT conditions (:func:`fit_consistent`).
    * **The respondent-side crosswise model**: its interval covers the fact's whole stated range.
    """
    from .binomial import z
    from .caveats import information, respondents_to_inform, uninformative_note

    out = []
    critical = z(confidence) ** 2 / 2
    privacy = f"the {design.name} design ({f'ε = {design.epsilon:.3g}' if design.ldp else 'not ε-LDP'})"
    channels = design_channels(design)
    if channels is not None:
        p, q = min(channels, key=lambda pq: information(n, *pq))
        info, needed = information(n, p, q), respondents_to_inform(p, q, confidence)
    else:
        info, per_report = _column_information(n, design.matrix)
        needed = math.inf if per_report == 0 else critical / per_report
    if info < critical and math.isfinite(needed):
        out.append(uninformative_note(n, info, needed, privacy, confidence, "an answer", "gives"))
    if not fit.converged:
        out.append(f"the consistent estimate (maximum likelihood) did not converge: its scores miss the optimality "
                   f"conditions by {fit.kkt_gap:.2g} after {fit.iterations} Newton steps; read the unbiased "
                   "estimate and the intervals")
    consistent = np.asarray(fit.estimate, dtype=float)
    at_zero = [labels[t] for t in range(len(labels)) if consistent[t] <= BOUNDARY]
    at_one = [labels[t] for t in range(len(labels)) if consistent[t] >= 1 - BOUNDARY]
    if fit.converged and (at_zero or at_one):
        where = "; ".join(part for part in (
            ", ".join(f"'{label}'" for label in at_zero) + " at 0" if at_zero else "",
            ", ".join(f"'{label}'" for label in at_one) + " at 1" if at_one else "") if part)
        unbiased_estimate = np.asarray(estimate, dtype=float)
        # the answer whose unbiased estimate is farthest out (below 0 first: the one a reader looks for)
        worst = int(np.argmin(unbiased_estimate)) if at_zero else int(np.argmax(unbiased_estimate))
        value = float(unbiased_estimate[worst])
        side = "on the edge of" if -BOUNDARY <= value <= 1 + BOUNDARY else "outside"
        shown = "0" if abs(value) <= BOUNDARY else "1" if abs(value - 1) <= BOUNDARY else f"{value:.3g}"
        out.append(f"the consistent estimate sits on the boundary of [0, 1] ({where}): the unbiased estimate of "
                   f"'{labels[worst]}' is {shown}, {side} [0, 1]; the intervals show what the data allow")
    if design.respondent_side:
        low, high = (float(v) for v in dict(design.params)["prevalence_range"])
        stated = float(dict(design.params)["prevalence"])
        out.append(f"the interval holds over the private fact's whole stated prevalence range [{low:g}, {high:g}] "
                   f"(it joins the intervals at its ends and at {stated:g}); the estimates use {stated:g}")
    return out


def design_channels(design) -> list[tuple[float, float]] | None:
    """The ``(p, q)`` of each exact interval the design's estimate has (module notes), or None: a binary
    design's one report (``max``, ``min`` of its two cells), forced response's ``(p + p_t, p_t)`` per answer."""
    m = design.matrix
    if design.k == 2:
        r = _binary_row(m)
        return [(float(max(m[r, 0], m[r, 1])), float(min(m[r, 0], m[r, 1])))]
    if design.name == "forced":
        params = dict(design.params)
        truth = float(params["p"])
        return [(truth + float(share), float(share)) for share in params["forced"]]
    return None


def worst_variance(matrix) -> float:
    """``V = max_π max_t [M⁺ (diag λ − λλᵀ) M⁺ᵀ]_tt``, ``λ = Mπ`` (module notes, "Planning")."""
    from scipy.optimize import minimize

    m = np.asarray(matrix, dtype=float)
    a = np.linalg.pinv(m)
    k = m.shape[1]
    best = 0.0
    for t in range(k):
        def negative(pi, row=a[t]):
            lam = m @ pi
            return -(float(row ** 2 @ lam) - float(row @ lam) ** 2)

        result = minimize(negative, np.full(k, 1.0 / k), method="SLSQP", bounds=[(0.0, 1.0)] * k,
                          constraints=[{"type": "eq", "fun": lambda pi: pi.sum() - 1}],
                          options={"ftol": 1e-14, "maxiter": 500})
        best = max(best, -float(result.fun), -negative(np.full(k, 1.0 / k)))
    return best


@dataclass(frozen=True)
class DesignPlan(Result):
    """The respondents a design needs for a margin on every answer's share, and how that was computed."""

    n: int
    margin: float
    half_width: float  # the worst-case expected half-width at n (exact) or z·sqrt(V/n) (approximate)
    exact: bool  # the exact planner (True) or the normal approximation (False)
    method: str  # in words, for the output
    epsilon: float
    confidence: float


def plan_design(design, margin: float, *, confidence: float = 0.95, decided: bool = False) -> DesignPlan:
    """How many respondents ``design`` needs for a worst-case half-width ≤ ``margin`` on every answer's
    share (module notes, "Planning": exact for binary and forced-response designs, else the normal
    approximation, labelled so).  ``decided``: the exact plans by the decided search
    (:func:`.planning.plans`; what ``deniable plan`` and the builder use), else the exhaustive one.

    >>> from deniable.client.designs import forced
    >>> r = plan_design(forced(2/3, [1/6, 1/6]), 0.05)
    >>> r.exact, r.n > 0
    (True, True)
    """
    from .binomial import z
    from .planning import plan_channel

    confidence = check_confidence(confidence)
    channels = design_channels(design)
    if channels is not None:
        plans = [plan_channel(p, q, margin, confidence=confidence, k=design.k, epsilon=design.epsilon,
                              decided=decided)
                 for p, q in dict.fromkeys(channels)]
        worst = max(plans, key=lambda plan: plan.n)
        return DesignPlan(worst.n, float(margin), worst.half_width, True,
                          "exact (Feldman–Cousins, worst case over the prevalence)", design.epsilon, confidence)
    if not 0 < float(margin) < 0.5:
        raise FieldError(f"margin must be a number in (0, 0.5), got {margin!r}", "margin")
    variance = worst_variance(design.matrix)
    n = max(1, int(np.ceil(z(confidence) ** 2 * variance / float(margin) ** 2)))
    return DesignPlan(n, float(margin), z(confidence) * float(np.sqrt(variance / n)), False,
                      "normal approximation (worst-case variance of the unbiased estimate)", design.epsilon,
                      confidence)


def design_margin(design, n: int, *, confidence: float = 0.95) -> tuple[float, bool]:
    """The worst-case half-width at ``n`` respondents, and whether it is exact (as :func:`plan_design`)."""
    from .binomial import z
    from .planning import worst_case_channel

    channels = design_channels(design)
    if channels is not None:
        return max(worst_case_channel(p, q, n, confidence=confidence).half_width
                   for p, q in dict.fromkeys(channels)), True
    return z(confidence) * float(np.sqrt(worst_variance(design.matrix) / n)), False


__all__ = ["ConsistentFit", "DesignPlan", "DesignResult", "design_channels", "design_margin", "design_notes",
           "estimate_design", "fit_consistent", "kkt_gap", "maximum_likelihood", "plan_design", "range_designs",
           "respondent_intervals", "standard_errors", "unbiased", "worst_variance"]
