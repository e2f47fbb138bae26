"""Design-based estimates of a question randomized by a randomized-response design (forced response,
Warner, the crosswise model, a custom matrix, …) under a survey design: ``M⁺ λ̂``, its linearized
covariance, each answer's interval, and the exact interval at Kish's n that an unweighted question
of the design gets.

The statistics ("module notes" below) are in the notes of :mod:`deniable.estimators.weights`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import t

from .linearization import linearized_covariance
from .result import frozen
from .survey_intervals import _with_floor, exact_at, kish_note, kish_respondents, korn_graubard
from .validate import check_confidence
from .weighted import WeightedResult, _domain
from .weights import SamplingDesignError, SurveyDesign


DESIGN_UNION = ("the union of the t interval (linearization) and Korn-Graubard's beta interval at the estimate's "
                "effective sample size, on the weights' Satterthwaite degrees of freedom, clipped to [0, 1]: no report "
                "of this design is affine in one share")


def weighted_design_estimate(reports, design, sample: SurveyDesign, *, confidence: float = 0.95,
                             subset=None) -> WeightedResult:
    """Each answer's share from ``reports`` (report indices) made under a randomized-response
    ``design`` (:class:`deniable.client.designs.Design`), under a survey design ``sample``.

    With ``M`` the design's realized matrix (reports × answers) and ``λ̂_r = Σ w_i [R_i = r]/Σ w_i``
    the weighted (Hájek) report shares, ``E λ̂ ≈ λ = M π``, so the estimate is
    ``π̂ = M⁺ λ̂`` (:func:`deniable.estimators.designs.unbiased` with weighted shares; ``M⁺ M = I``).
    It is linear in λ̂, so its linearized covariance is ``M⁺ Σ̂ M⁺ᵀ`` with Σ̂ the design-based
    covariance of λ̂ (:func:`linearized_covariance` of the influence values
    ``w_i ([R_i = r] − λ̂_r)/Σw``; Binder 1983).  Equivalently π̂_t is the weighted mean of the
    *debiased indicator* ``z_it = M⁺[t, R_i]`` (``Σ_r M⁺[t, r] = 1`` as the columns of M sum to 1),
    so R's ``svymean(~z_t, design)`` gives the same estimate and standard error.

    Intervals:

    * a binary design: report r (the one whose probability differs most between the answers) has
      ``λ_r = b + (a − b) π₀`` (``a = M[r, 0]``, ``b = M[r, 1]``), the form of k-ary randomized
      response with ``p = max(a, b)``, ``q = min(a, b)``; Korn and Graubard's interval for λ_r (at
      the weights' Satterthwaite degrees of freedom, as :func:`weighted_estimate`) maps through
      ``(x − q)/(p − q)`` to the answer whose probability it rises with, ``1 −`` it to the other (the
      respondent-side crosswise model: the hull of that interval under its device-side matrices at the
      low end of the fact's stated prevalence range, the stated prevalence and the high end, as
      :func:`deniable.estimators.designs.respondent_intervals` joins the exact ones; the estimate stays
      at the stated prevalence);
    * forced response: ``λ_t = p_t + p π_t`` for every answer t, so report t's interval maps
      through ``p = p + p_t``, ``q = p_t``;
    * other designs with more than two answers: no report is affine in one share, so no single
      proportion's interval maps onto π_t; the interval is the union of two approximations
      (:func:`_unaffine_interval`, labelled :data:`DESIGN_UNION`), kept in [0, 1]: the t interval
      ``π̂_t ± t_{ν, 1−α/2} SE_t`` (ν: :func:`weights_degrees_of_freedom`) and Korn and Graubard's
      beta interval at the estimate's own effective sample size ``π̂_t(1 − π̂_t)/SE_t²``.

    Each interval then contains the unweighted design's exact interval of the same report shares at
    Kish's effective sample size (module notes, "Never more certain than the reports").

    ``p`` and ``q`` of the result are a binary design's (forced response: those of the largest
    ``p_t``), NaN otherwise; ``subset`` is a domain as for :func:`weighted_estimate`."""
    confidence = check_confidence(confidence)
    m = np.asarray(design.matrix, dtype=float)
    k_reports, k = m.shape
    r = np.asarray(reports)
    if r.shape != (sample.n,) or r.dtype.kind not in "iu":
        raise SamplingDesignError(f"reports: one report index per respondent ({sample.n}) needed", "reports")
    if r.min() < 0 or r.max() >= k_reports:
        raise SamplingDesignError(f"reports: report indices must be 0..{k_reports - 1}", "reports")
    sample, n, df, interval_df = _domain(sample, subset)
    w = sample.weights
    y = (r[:, None] == np.arange(k_reports)).astype(float)
    lam = w @ y / w.sum()
    sigma = linearized_covariance(w[:, None] * (y - lam) / w.sum(), sample)
    return _design_result(design, lam, sigma, n, df, interval_df, sample.effective_n, confidence,
                          positive=int(np.count_nonzero(w > 0)))


def _unaffine_interval(estimate: float, variance: float, n: int, df: float, confidence: float,
                       positive: float | None = None) -> tuple[float, float]:
    """The interval of a debiased share ``π̂`` that no report is affine in (a design's share that mixes
    several reports: :func:`weighted_design_estimate`), kept in [0, 1]: the union of

    * the t interval ``π̂ ± t_{df, 1−α/2} √variance`` — the normal approximation of the linearized
      mean ``π̂ = Σ w_i z_i/Σ w_i`` of the debiased indicators ``z_i = M⁺[t, R_i]`` (Binder 1983), on
      the weights' Satterthwaite degrees of freedom ``df`` (:func:`weights_degrees_of_freedom`); and
    * Korn and Graubard's (1998) beta interval (:func:`korn_graubard`; R's ``svyciprop(method =
      "beta")`` recipe, which takes any mean) at the estimate's own effective sample size
      ``n* = π̂(1 − π̂)/variance``, df-adjusted by ``(t_{n−1}/t_df)²``: the binomial proportion with
      the same mean and variance as π̂ (a proportion of n* respondents has variance ``π(1 − π)/n*``),
      whose beta interval is skewed away from 0 and 1 as a small share's sampling distribution is —
      the t interval is symmetric, and falls short when the weights leave few effective respondents
      (docs/statistics.md, "Weighted estimates, by simulation": the custom design at n = 200 in
      about twenty clusters with weights of CV 1.5, 0.944 against a floor of 0.946 at 10,000
      replicates; the union: at or above the floor in every cell).

    The union (lowest lower end, highest upper end) is conservative where either approximation
    fails — as :func:`weighted_crosstab` unites Fieller's and Korn and Graubard's intervals for a
    conditional share; the beta interval applies when ``0 < π̂ < 1`` and the variance is positive."""
    half = float(t.ppf(0.5 + confidence / 2, df)) * math.sqrt(max(variance, 0.0)) if df > 0 else math.inf
    low, high = estimate - half, estimate + half
    if 0 < estimate < 1 and variance > 0:
        kg_low, kg_high = korn_graubard(estimate, variance, n, df, confidence, positive)
        low, high = min(low, kg_low), max(high, kg_high)
    return float(np.clip(low, 0.0, 1.0)), float(np.clip(high, 0.0, 1.0))


def _design_result(design, lam: np.ndarray, sigma: np.ndarray, n: int, df: int, interval_df: float,
                   effective_n: float, confidence: float, positive: float | None = None) -> WeightedResult:
    """:func:`weighted_design_estimate`'s estimate ``M⁺ λ̂``, covariance ``M⁺ Σ̂ M⁺ᵀ`` and intervals from
    the report shares ``lam`` and their covariance ``sigma`` (design-based, or calibrated:
    :func:`raked_design_estimate`), Korn and Graubard's at ``n`` on ``interval_df`` degrees of freedom
    (``positive``: the respondents with a positive weight, :func:`korn_graubard`'s n at a variance of 0),
    each joined with the exact interval of the same report shares at Kish's ``effective_n``
    (:func:`_design_floor`)."""
    m = np.asarray(design.matrix, dtype=float)
    k = m.shape[1]
    pinv = np.linalg.pinv(m)
    estimate = pinv @ lam
    std_error = np.sqrt(np.clip(np.diag(pinv @ sigma @ pinv.T), 0.0, None))
    report_se = np.sqrt(np.clip(np.diag(sigma), 0.0, None))

    def kg(row: int, hi: float, lo: float) -> tuple[float, float]:
        low, high = korn_graubard(float(lam[row]), float(sigma[row, row]), n, interval_df, confidence, positive)
        return (float(np.clip((low - lo) / (hi - lo), 0, 1)), float(np.clip((high - lo) / (hi - lo), 0, 1)))

    p_shown = q_shown = float("nan")
    method = WeightedResult.method
    if k == 2:
        row = int(np.argmax(np.abs(m[:, 0] - m[:, 1])))
        a, b = float(m[row, 0]), float(m[row, 1])
        p_shown, q_shown = max(a, b), min(a, b)
        channels = [(row, a, b)]
        if getattr(design, "respondent_side", False):  # the hull over the fact's stated range, as unweighted
            channels = [(0, float(twin[0, 0]), float(twin[0, 1])) for twin in _range_matrices(design)]
        first = [1.0, 0.0]
        for r, a, b in channels:
            lo, hi = kg(r, max(a, b), min(a, b))
            lo, hi = (lo, hi) if a > b else (1 - hi, 1 - lo)  # the report rises with answer 0, or with answer 1
            first = [min(first[0], lo), max(first[1], hi)]
        lows, highs = np.array([first[0], 1 - first[1]]), np.array([first[1], 1 - first[0]])
    elif design.name == "forced":
        params = dict(design.params)
        truth, forced = float(params["p"]), [float(v) for v in params["forced"]]
        q_shown = max(forced)
        p_shown = truth + q_shown
        ends = [kg(j, truth + forced[j], forced[j]) for j in range(k)]
        lows, highs = np.array([e[0] for e in ends]), np.array([e[1] for e in ends])
    else:
        ends = [_unaffine_interval(float(estimate[j]), float(std_error[j]) ** 2, n, interval_df, confidence,
                                   positive) for j in range(k)]
        lows, highs = np.array([e[0] for e in ends]), np.array([e[1] for e in ends])
        method = DESIGN_UNION
    lows, highs, floored = _with_floor(lows, highs, _design_floor(design, lam, kish_respondents(effective_n),
                                                                  confidence))
    return WeightedResult(
        n=n, effective_n=effective_n, degrees_of_freedom=df, k=k, epsilon=design.epsilon, p=p_shown,
        q=q_shown, confidence=confidence, report_share=frozen(lam), report_std_error=frozen(report_se),
        estimate=frozen(estimate), std_error=frozen(std_error), ci_low=frozen(lows), ci_high=frozen(highs),
        method=method, kish_floor=frozen(floored, dtype=bool), note=kish_note(floored, effective_n, what="answer"))


def _design_floor(design, lam: np.ndarray, n: int, confidence: float) -> list[tuple[float, float]]:
    """Each answer's exact interval from the report shares ``lam`` of ``n`` unweighted respondents, as an
    unweighted question of the design gets it (:func:`deniable.estimators.designs.estimate_design`): a
    binary design's report r with ``λ_r = M[r, 1] + (M[r, 0] − M[r, 1]) π₀`` (for the respondent-side
    crosswise model, the hull over the private fact's stated prevalence range: its low end, the stated
    prevalence and its high end), forced response's ``λ_t = p_t + p π_t``, any other design the
    simultaneous region (:func:`deniable.estimators.design_region.rounded_region_intervals`); each
    joined over the whole counts on either side of ``n · λ̂`` (:func:`exact_at`)."""
    if getattr(design, "respondent_side", False):  # the hull over the fact's stated prevalence range
        floors = [_matrix_floor(twin, lam, n, confidence) for twin in _range_matrices(design)]
        return [(min(f[t][0] for f in floors), max(f[t][1] for f in floors)) for t in range(2)]
    affine = None
    if design.name == "forced":
        params = dict(design.params)
        affine = [(float(params["p"]) + float(share), float(share)) for share in params["forced"]]
    return _matrix_floor(design.matrix, lam, n, confidence, affine)


def _range_matrices(design) -> list[np.ndarray]:
    """The respondent-side crosswise model's device-side matrices at the low end of its fact's stated
    prevalence range, at the stated prevalence and at the high end (as
    :func:`deniable.estimators.designs.respondent_intervals` joins them: the fact's true prevalence is
    only known to lie in the range, and the interval at either end covers when the truth is there)."""
    from deniable.client.designs import crosswise

    params = dict(design.params)
    low, high = (float(v) for v in params["prevalence_range"])
    return [np.asarray(crosswise(v).matrix, dtype=float) for v in (low, float(params["prevalence"]), high)]


def _matrix_floor(matrix, lam: np.ndarray, n: int, confidence: float, affine=None) -> list[tuple[float, float]]:
    """:func:`_design_floor` of a misclassification ``matrix`` (reports × answers): two answers by the
    report r whose probability differs most between them; more, each by its report t when ``affine[t]``
    gives ``(p_t, q_t)`` with ``λ_t = q_t + (p_t − q_t) π_t`` for every t (forced response), else the
    simultaneous region."""
    m = np.asarray(matrix, dtype=float)
    k = m.shape[1]
    if k == 2:
        row = int(np.argmax(np.abs(m[:, 0] - m[:, 1])))
        a, b = float(m[row, 0]), float(m[row, 1])
        lo, hi = exact_at(float(lam[row]), n, max(a, b), min(a, b), confidence)
        lo, hi = (lo, hi) if a > b else (1 - hi, 1 - lo)  # the report rises with answer 0, or with answer 1
        return [(lo, hi), (1 - hi, 1 - lo)]
    if affine is not None and all(pair is not None for pair in affine):
        out = []
        for t, (p_t, q_t) in enumerate(affine):
            if p_t > q_t:
                out.append(exact_at(float(lam[t]), n, p_t, q_t, confidence))
            else:  # the report falls with its answer: λ_t = p_t + (q_t − p_t)(1 − π_t)
                lo, hi = exact_at(float(lam[t]), n, q_t, p_t, confidence)
                out.append((1 - hi, 1 - lo))
        return out
    from .design_region import rounded_region_intervals

    low, high = rounded_region_intervals(lam, n, m, confidence)
    return list(zip(low.tolist(), high.tolist()))
