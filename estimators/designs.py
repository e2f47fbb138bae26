"""Estimates for a known misclassification matrix (:mod:`deniable.client.designs`).

With n reports and the design's realized matrix ``M`` (reports × answers), the report counts are
Multinomial(n, λ) with ``λ = M π``.

* **Unbiased**: ``π̂ = M⁺ λ̂`` with ``λ̂`` the report shares and ``M⁺`` the Moore–Penrose inverse;
  since M has full column rank (the designs refuse a singular one), ``M⁺ M = I`` and
  ``E π̂ = M⁺ λ = π`` (Warner 1965; Chaudhuri & Mukerjee 1988, ch. 2).  It can leave the simplex.
* **Consistent**: the maximum-likelihood estimate on the simplex, by the EM algorithm for
  misclassified multinomial data (each report's answer is the missing datum: E-step
  ``π_t M[r, t] / λ_r``, M-step their average; Dempster, Laird & Rubin 1977; van den Hout & van
  der Heijden 2002, section 3), iterated to a change below 1e-12.  When ``π̂`` lies in the
  simplex the two agree.
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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .intervals import check_method, interval
from .result import Result, json_number
from .validate import check_confidence

EM_TOLERANCE = 1e-12
EM_ITERATIONS = 100_000


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

    def to_dict(self) -> dict:
        """JSON-ready: per answer its label, unbiased and consistent estimate and interval."""
        rows = []
        for i, label in enumerate(self.labels):
            rows.append({"label": label, "estimate": json_number(self.estimate[i]), "consistent": json_number(self.consistent[i]),
                         "ci_low": None if self.ci_low is None else json_number(self.ci_low[i]),
                         "ci_high": None if self.ci_high is None else json_number(self.ci_high[i])})
        return {"n": self.n, "method": self.method, "confidence": self.confidence,
                "epsilon": json_number(self.epsilon), "answers": rows}

    def summary(self) -> str:
        """A plain-text table: one line per answer."""
        head = f"n = {self.n:,}, ε = {self.epsilon:.4g}" + (f", {self.confidence:.0%} {self.method} intervals"
                                                             if self.method else ", no exact interval for this design")
        lines = [head]
        for i, label in enumerate(self.labels):
            span = "" if self.ci_low is None else f"  [{self.ci_low[i]:.4f}, {self.ci_high[i]:.4f}]"
            lines.append(f"  {label:<24} {self.estimate[i]:8.4f} (consistent {self.consistent[i]:.4f}){span}")
        return "\n".join(lines)


def _counts(counts, k_reports: int) -> np.ndarray:
    c = np.asarray(counts)
    if c.ndim != 1 or c.size != k_reports or c.dtype.kind not in "iu" or (c < 0).any():
        raise ValueError(f"counts must be {k_reports} non-negative integers (one per report), got {counts!r}")
    return c.astype(np.int64)


def unbiased(counts, matrix) -> np.ndarray:
    """``M⁺ λ̂``: unbiased for π whenever M has full column rank (module notes)."""
    c = np.asarray(counts, dtype=float)
    return np.linalg.pinv(np.asarray(matrix, dtype=float)) @ (c / c.sum())


def maximum_likelihood(counts, matrix, tolerance: float = EM_TOLERANCE) -> np.ndarray:
    """The maximum-likelihood π on the simplex by EM (module notes); from the uniform start."""
    m = np.asarray(matrix, dtype=float)
    c = np.asarray(counts, dtype=float)
    n = c.sum()
    pi = np.full(m.shape[1], 1.0 / m.shape[1])
    live = c > 0
    for _ in range(EM_ITERATIONS):
        lam = m[live] @ pi
        step = pi * ((c[live] / lam) @ m[live]) / n
        if np.max(np.abs(step - pi)) < tolerance:
            return step
        pi = step
    return pi


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


def estimate_design(counts, design, *, confidence: float = 0.95, method: str = "exact") -> DesignResult:
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
    labels = tuple(design.reports[:k]) if design.k_reports == k else tuple(f"answer {t + 1}" for t in range(k))
    if n == 0:
        empty = np.full(k, np.nan)
        return DesignResult(labels, 0, c, empty, empty, None, None, None, confidence, design.epsilon, empty,
                            "no reports yet")
    estimate, consistent = unbiased(c, m), maximum_likelihood(c, m)
    low = high = None
    used = None
    p_shown = q_shown = float("nan")
    if k == 2:
        r = _binary_row(m)
        yes, no = m[r, 0], m[r, 1]
        p_shown, q_shown = float(yes), float(no)
        if yes > no:
            lo0, hi0 = interval(method, np.array([c[r]]), n, yes, no, confidence)
        else:  # the report is likelier under the second answer: its count estimates π₁
            lo1, hi1 = interval(method, np.array([c[r]]), n, no, yes, confidence)
            lo0, hi0 = 1 - hi1, 1 - lo1
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
    note = None
    return DesignResult(labels, n, c, estimate, consistent, low, high, used, confidence, design.epsilon,
                        standard_errors(c, m), note, p_shown, q_shown)


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


def plan_design(design, margin: float, *, confidence: float = 0.95) -> DesignPlan:
    """How many respondents ``design`` needs for a worst-case half-width ≤ ``margin`` on every answer's
    share (module notes, "Planning": exact for binary and forced-response designs, else the normal
    approximation, labelled so).

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
        plans = [plan_channel(p, q, margin, confidence=confidence, k=design.k, epsilon=design.epsilon)
                 for p, q in dict.fromkeys(channels)]
        worst = max(plans, key=lambda plan: plan.n)
        return DesignPlan(worst.n, float(margin), worst.half_width, True,
                          "exact (Feldman–Cousins, worst case over the prevalence)", design.epsilon, confidence)
    if not 0 < float(margin) < 0.5:
        raise ValueError(f"margin must be a number in (0, 0.5), got {margin!r}")
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


__all__ = ["DesignPlan", "DesignResult", "design_channels", "design_margin", "estimate_design",
           "maximum_likelihood", "plan_design", "standard_errors", "unbiased", "worst_variance"]
