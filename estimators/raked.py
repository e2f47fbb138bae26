"""Estimates under raked weights with R's calibration variance (the influence values less their
projection on the raking variables): a mean, several means, a randomized question (k-ary randomized
response or a design) and two groups' difference.

The statistics ("module notes" below) are in the notes of :mod:`deniable.estimators.weights`:
"Raking".
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy.stats import t

from deniable.client.mechanism import resolve

from .linearization import linearized_covariance, weights_degrees_of_freedom
from .result import frozen
from .survey_intervals import _with_floor, exact_at, kish_note, kish_respondents, korn_graubard
from .validate import check_confidence
from .weighted import WeightedDifference, WeightedResult
from .weighted_designs import DESIGN_UNION, _design_result
from .weights import SamplingDesignError, SurveyDesign, _frequencies, _given_weights


CALIBRATION_ROUNDS = 10  # R's svyrecvar: ten rounds of backfitting over the raking margins


def calibration_residuals(x, weights, variables, counts=None, rounds: int = CALIBRATION_ROUNDS) -> np.ndarray:
    """The influence values ``x`` of an estimate under raked ``weights``, less their projection on the
    raking variables: R's calibration (g-weight) variance for ``rake()`` (``svyrecvar``, Lumley 2004).

    Raking calibrates the weights to the margins, so the part of the influence values that the
    raking variables explain has no sampling variance (Deville & Särndal 1992: every calibration
    estimator has the linearization of the regression estimator on the calibration variables).
    The residuals of that regression on the margins' indicators are found by backfitting, as R
    does: with ``e = x/w``, for each margin in turn ``x ← x − w · ē_cat`` (``ē_cat`` the mean of
    ``e`` over the respondents of each category), ``rounds`` times over all margins (R: ten).
    ``variables``: the category codes of each raking variable per row; ``counts``: the respondents
    each row stands for."""
    x = np.asarray(x, dtype=float).copy()
    w = np.asarray(weights, dtype=float)
    c = _frequencies(counts, w.size)
    safe = np.where(w > 0, w, 1.0)
    for _ in range(rounds):
        for codes in variables:
            size = int(codes.max()) + 1 if codes.size else 0
            sums = np.bincount(codes, weights=c * x / safe, minlength=size)
            ns = np.bincount(codes, weights=c, minlength=size)
            means = np.divide(sums, ns, out=np.zeros_like(sums), where=ns > 0)
            x = x - safe * means[codes]
    return x


def raked_mean(values, weights, variables=(), *, counts=None, domain=None,
               design: SurveyDesign | None = None) -> tuple[float, float]:
    """The weighted mean of ``values`` (over the ``domain`` rows) and its variance under raking to
    ``variables`` — respondents sampled with replacement, each its own cluster, one stratum: with
    ``x_i = w_i d_i (y_i − ȳ)/Σ w d`` calibrated by :func:`calibration_residuals` and n respondents,
    ``Var = n/(n − 1) Σ (x_i − x̄)²`` (R: ``svymean`` of a ``rake()``d ``svydesign(ids = ~1)``).
    Without ``variables`` it is the unraked (Hájek) mean's variance.  With ``design`` (the sample's
    strata and clusters; one row per respondent, no ``counts``), the calibrated ``x`` go through the
    design's stratified, clustered formula instead (:func:`linearized_covariance`; R: ``svymean`` of
    ``rake(svydesign(ids = ~cluster, strata = ~stratum, weights = ~w), …)``, whose ``svyrecvar``
    calibrates the influence values before the multistage formula)."""
    y = np.asarray(values, dtype=float)
    w = _given_weights(weights)
    c = _frequencies(counts, w.size)
    d = np.ones(w.size) if domain is None else np.asarray(domain, dtype=float)
    wd = w * d
    total = float(c @ wd)
    mean = float(c @ (wd * y) / total)
    x = calibration_residuals(wd * (y - mean) / total, w, list(variables), c) if len(variables) else \
        wd * (y - mean) / total
    if design is not None:
        if counts is not None and np.any(c != 1):
            raise SamplingDesignError("counts: a design's rows are respondents (no counts)", "counts")
        return mean, float(linearized_covariance(x[:, None], design)[0, 0])
    n = float(c.sum())
    centred = float(c @ x**2) - float(c @ x) ** 2 / n
    return mean, n / (n - 1) * centred


def raked_estimate(reports, epsilon, weights, variables=(), *, k: int, counts=None, domain=None,
                   confidence: float = 0.95, design: SurveyDesign | None = None) -> WeightedResult:
    """Each option's share from randomized ``reports`` under raked ``weights`` (:func:`rake`), with
    the calibration variance (:func:`raked_mean`) and Korn & Graubard's interval at its effective
    sample size on n − 1 degrees of freedom (R: ``svyciprop(method = "beta")`` of a raked design),
    mapped through the mechanism as :func:`weighted_estimate` does, and joined with the exact interval of
    the same report share at the raked weights' Kish effective sample size over the domain (module
    notes).  R's interval alone falls short where raking leaves few effective respondents (coverage 0.89
    and 0.76 at a Kish n of about 33: ``scripts/weights_coverage.py --raking``); the joined interval
    covers there.  ``counts``: the respondents each
    row (answer pattern) stands for; ``domain``: the rows that answered (the others keep their place
    with weight 0, as R's ``subset``).  ``design``: raking started from sampling weights, whose
    strata and clusters the variance keeps (:func:`raked_mean`); the interval then takes the
    smaller of the design's degrees of freedom (R: ``degf`` of the raked design) and the raked
    weights' (:func:`weights_degrees_of_freedom`), as :func:`weighted_estimate` does — so raking to no
    margins gives :func:`weighted_estimate`'s interval."""
    confidence = check_confidence(confidence)
    r = np.asarray(reports)
    w = _given_weights(weights)
    c = _frequencies(counts, w.size)
    mech = resolve(k, epsilon)
    n = int(round(float(c.sum())))
    df = n - 1 if design is None else design.degrees_of_freedom
    interval_df = df
    if design is not None:  # a sampling design: the weights' degrees of freedom, as weighted_estimate's
        interval_df = weights_degrees_of_freedom(replace(design, weights=w * (1.0 if domain is None else
                                                                     np.asarray(domain, dtype=float))))
    d = np.ones(w.size) if domain is None else np.asarray(domain, dtype=float)
    positive = float(c[w * d > 0].sum())
    shares, errors, lows, highs = [], [], [], []
    for j in range(k):
        share, variance = raked_mean((r == j).astype(float), w, variables, counts=None if design else c,
                                     domain=domain, design=design)
        if variance < 1e-12 * share * (1 - share) / n:  # calibrated exactly (a raking question): rounding
            variance = 0.0
        low, high = korn_graubard(share, variance, n, interval_df, confidence, positive)
        shares.append(share)
        errors.append(math.sqrt(max(variance, 0.0)))
        lows.append(low)
        highs.append(high)
    lam = np.array(shares)
    span = mech.p - mech.q
    kish = float((c @ (w * d)) ** 2 / (c @ (w * d) ** 2))
    n_kish = kish_respondents(kish)
    ci_low, ci_high, floored = _with_floor(np.clip((np.array(lows) - mech.q) / span, 0.0, 1.0),
                                           np.clip((np.array(highs) - mech.q) / span, 0.0, 1.0),
                                           [exact_at(share, n_kish, mech.p, mech.q, confidence) for share in lam])
    return WeightedResult(
        n=n, effective_n=kish, degrees_of_freedom=df, k=k, epsilon=mech.epsilon, p=mech.p, q=mech.q,
        confidence=confidence, report_share=frozen(lam), report_std_error=frozen(errors),
        estimate=frozen((lam - mech.q) / span), std_error=frozen(np.array(errors) / span),
        ci_low=frozen(ci_low), ci_high=frozen(ci_high),
        method="Korn-Graubard beta interval at the effective sample size (raking: calibration variance)",
        kish_floor=frozen(floored, dtype=bool), note=kish_note(floored, kish))


def raked_covariance(values, weights, variables=(), *, counts=None, domains=None,
                     design: SurveyDesign | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The weighted means of the P columns of ``values`` (n × P), each over its own domain, and their
    covariance under raking to ``variables``: :func:`raked_mean` of several statistics at once.

    ``domains``: n × P booleans (or one column for every statistic; default everyone), the rows each
    mean is over — the others keep their place with weight 0, as in R's ``subset`` of a calibrated
    design.  Mean p's influence values ``x_ip = w_i d_ip (y_ip − ȳ_p)/Σ_i w_i d_ip`` are calibrated
    column by column (:func:`calibration_residuals`, linear in x), and with n respondents

        Cov(ȳ_p, ȳ_q) = n/(n − 1) Σ_i c_i (x_ip − x̄_p)(x_iq − x̄_q)

    (with ``design``: the stratified, clustered formula, :func:`linearized_covariance`).  Its diagonal
    is :func:`raked_mean`'s variance; the variance of a contrast ``aᵀȳ`` is ``aᵀ Cov a``, the variance of
    the contrast's own influence values ``Σ_p a_p x_ip`` — a calibration estimator is asymptotically the
    regression estimator on the calibration variables (Deville & Särndal 1992), linear in the
    influence values, so the residual-based linearization of a contrast is the contrast of the
    residuals (R: ``svycontrast`` of ``svyby(…, covmat = TRUE)`` on a ``rake()``d design)."""
    y = np.asarray(values, dtype=float)
    w = _given_weights(weights)
    c = _frequencies(counts, w.size)
    if y.ndim != 2 or y.shape[0] != w.size:
        raise SamplingDesignError(f"values: one row per respondent ({w.size}) needed", "values")
    d = np.ones_like(y) if domains is None else np.broadcast_to(
        np.asarray(domains, dtype=float).reshape(w.size, -1), y.shape)
    wd = w[:, None] * d
    totals = c @ wd
    if np.any(totals <= 0):
        raise SamplingDesignError("domains: a domain has no respondent with a positive weight", "domains")
    means = (c @ (wd * y)) / totals
    x = wd * (y - means) / totals
    if len(variables):
        x = np.column_stack([calibration_residuals(x[:, p], w, list(variables), c) for p in range(y.shape[1])])
    if design is not None:
        if counts is not None and np.any(c != 1):
            raise SamplingDesignError("counts: a design's rows are respondents (no counts)", "counts")
        return means, linearized_covariance(x, design)
    n = float(c.sum())
    sums = c @ x
    return means, n / (n - 1) * ((x * c[:, None]).T @ x - np.outer(sums, sums) / n)


RAKED_DESIGN_METHOD = "Korn-Graubard beta interval at the effective sample size (raking: calibration variance)"
RAKED_DESIGN_UNION = ("the union of the t interval and Korn-Graubard's beta interval at the estimate's effective "
                      "sample size (raking: calibration variance), clipped to [0, 1]: no report of this design is "
                      "affine in one share")


def raked_design_estimate(reports, design, weights, variables=(), *, counts=None, domain=None,
                          confidence: float = 0.95, sample: SurveyDesign | None = None) -> WeightedResult:
    """:func:`weighted_design_estimate` under raked ``weights`` (:func:`rake`): ``π̂ = M⁺ λ̂`` of the raked
    report shares, its covariance ``M⁺ Σ̂ M⁺ᵀ`` with Σ̂ the calibration covariance of the report shares
    (:func:`raked_covariance`).  π̂_t is the raked mean of the debiased indicator ``z_it = M⁺[t, R_i]``
    (row t of the design's inverse, indexed by the report), so R's ``svymean(~z_t, rake(…))`` gives the
    same estimate and standard error.  Intervals as :func:`weighted_design_estimate`'s (Korn and
    Graubard's mapped through the design where one report is affine in one share, else the union of
    the t interval and Korn and Graubard's at the estimate's effective sample size:
    :func:`_unaffine_interval`, the same code), at n respondents on n − 1 degrees of freedom — or,
    raking from a sampling design ``sample``, the smaller of its degrees of freedom and the raked
    weights' Satterthwaite ones, as :func:`raked_estimate` has them.  ``counts``, ``domain``: as :func:`raked_estimate`'s."""
    confidence = check_confidence(confidence)
    m = np.asarray(design.matrix, dtype=float)
    k_reports = m.shape[0]
    r = np.asarray(reports)
    w = _given_weights(weights)
    if r.shape != w.shape or r.dtype.kind not in "iu" or r.min(initial=0) < 0 or r.max(initial=0) >= k_reports:
        raise SamplingDesignError(f"reports: one report index 0..{k_reports - 1} per row ({w.size}) needed", "reports")
    c = _frequencies(counts, w.size)
    n = int(round(float(c.sum())))
    y = (r[:, None] == np.arange(k_reports)).astype(float)
    lam, sigma = raked_covariance(y, w, variables, counts=None if sample is not None else c, domains=domain,
                                  design=sample)
    d = np.ones(w.size) if domain is None else np.asarray(domain, dtype=float)
    df = interval_df = n - 1 if sample is None else sample.degrees_of_freedom
    if sample is not None:
        interval_df = weights_degrees_of_freedom(replace(sample, weights=w * d))
    kish = float((c @ (w * d)) ** 2 / (c @ (w * d) ** 2))
    result = _design_result(design, lam, sigma, n, df, interval_df, kish, confidence,
                            positive=float(c[w * d > 0].sum()))
    return replace(result, method=RAKED_DESIGN_UNION if result.method == DESIGN_UNION else RAKED_DESIGN_METHOD)


def raked_difference(values, groups, weights, variables=(), *, counts=None, confidence: float = 0.95,
                     design: SurveyDesign | None = None) -> WeightedDifference:
    """:func:`weighted_difference` under raked ``weights``: ``ȳ₁ − ȳ₀``, the difference of two domain
    means (a list experiment's treatment and control arms), with the calibration variance.

    Notes
    -----
    With ``d_g`` the rows of group g and ``W_g = Σ c w d_g``, each arm's mean has the influence values
    ``x_gi = w_i d_gi (y_i − ȳ_g)/W_g``; raking replaces them by their residuals on the raking
    variables, ``e_g`` (:func:`calibration_residuals`; Deville & Särndal 1992's residual-based
    linearization of a calibration estimator), so

        Var(ȳ₁ − ȳ₀) = V(e₁) + V(e₀) − 2 C(e₁, e₀),

    V and C the with-replacement (co)variance ``n/(n − 1) Σ c (e − ē)(e − ē)ᵀ`` over all n respondents
    (:func:`raked_covariance`; with ``design``, the stratified, clustered one).  The arms are random
    halves of the same respondents and the raking moves both, so the covariance is not 0: it is what
    R's ``svycontrast(svyby(~y, ~arm, rake(…), svymean, covmat = TRUE), c(-1, 1))`` keeps.  The
    interval is ``estimate ± t · se`` on n − 1 degrees of freedom (R's ``degf`` of a raked
    ``svydesign(ids = ~1)``; raking from a sampling ``design``: its degrees of freedom).
    ``groups``: 0, 1, or −1 for a row in neither (not answered, or outside a domain)."""
    confidence = check_confidence(confidence)
    y = np.asarray(values, dtype=float)
    g = np.asarray(groups)
    w = _given_weights(weights)
    if y.shape != w.shape or g.shape != w.shape:
        raise SamplingDesignError(f"values: one value and one group per row ({w.size}) needed", "values")
    c = _frequencies(counts, w.size)
    arms = np.column_stack([g == 0, g == 1])
    for arm in (0, 1):
        if not np.any(arms[:, arm] & (w * c > 0)):
            raise SamplingDesignError(f"groups: no respondent with a positive weight in group {arm}", "groups")
    means, cov = raked_covariance(np.column_stack([y, y]), w, variables, counts=None if design is not None else c,
                                  domains=arms, design=design)
    n = int(round(float(c.sum())))
    df = n - 1 if design is None else design.degrees_of_freedom
    se = math.sqrt(max(float(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]), 0.0))
    estimate = float(means[1] - means[0])
    half = float(t.ppf(0.5 + confidence / 2, df)) * se if df > 0 else math.nan
    both = w * (g >= 0)
    sizes = tuple(int(round(float(c @ arms[:, arm]))) for arm in (0, 1))
    return WeightedDifference(
        n=sum(sizes), n_groups=sizes, effective_n=float((c @ both) ** 2 / (c @ both**2)), degrees_of_freedom=df,
        confidence=confidence, means=frozen(means), mean_std_errors=frozen(np.sqrt(np.clip(np.diag(cov), 0, None))),
        estimate=estimate, std_error=se, ci_low=estimate - half, ci_high=estimate + half,
        method="difference of the arms' raked means, t interval on n − 1 degrees of freedom (raking: calibration "
               "variance)" if design is None else
               "difference of the arms' raked means, t interval on the design's degrees of freedom (raking: "
               "calibration variance)")
