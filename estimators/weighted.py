"""Design-based estimates of a question randomized by k-ary randomized response under a survey
design, and the difference of two groups' weighted means (a list experiment's arms).

The statistics ("module notes" below) are in the notes of :mod:`deniable.estimators.weights`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import t

from deniable.client.mechanism import resolve

from .linearization import (domain_degrees_of_freedom, linearized_covariance, linearized_variance,
                            weights_degrees_of_freedom)
from .result import Result, frozen
from .survey_intervals import _with_floor, exact_at, kish_note, kish_respondents, korn_graubard
from .validate import check_confidence
from .weights import SamplingDesignError, SurveyDesign


@dataclass(frozen=True, eq=False)
class WeightedResult(Result):
    """Each option's share from weighted randomized reports, with design-based standard errors and intervals."""

    n: int
    effective_n: float  # Kish's, of the weights
    degrees_of_freedom: int
    k: int
    epsilon: float
    p: float
    q: float
    confidence: float
    report_share: np.ndarray  # λ̂, the weighted share of each report
    report_std_error: np.ndarray
    estimate: np.ndarray  # π̂ = (λ̂ − q)/(p − q)
    std_error: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    method: str = ("Korn-Graubard beta interval at the design's effective sample size (linearization), "
                   "on the weights' Satterthwaite degrees of freedom")
    simultaneous: bool = False  # Bonferroni: each option's interval at 1 − α/k (sampling.weighted_estimates)
    kish_floor: np.ndarray | None = None  # per option: the exact interval at Kish's n widened it (module notes)
    note: str | None = None  # kish_note: which intervals that rule set, and at how many respondents


def _domain(design: SurveyDesign, subset) -> tuple[SurveyDesign, int, int, float]:
    """``(design, n, df, interval_df)`` for the whole sample (``subset`` None) or a domain of it: the
    design with the weights of everyone outside the domain set to 0 (domain estimation keeps their
    clusters and strata), the domain's respondents, its design degrees of freedom, and the degrees of
    freedom its intervals use (:func:`weights_degrees_of_freedom`: ≤ df, fewer when the weights are unequal)."""
    n, df = design.n, design.degrees_of_freedom
    if subset is not None:
        subset = np.asarray(subset, dtype=bool)
        if subset.shape != (design.n,):
            raise SamplingDesignError(f"subset: one flag per respondent ({design.n}) needed", "subset")
        n, df = int(subset.sum()), domain_degrees_of_freedom(design, subset)
        design = replace(design, weights=design.weights * subset)
        if not np.any(design.weights > 0):
            raise SamplingDesignError("subset: no respondent of the subpopulation has a positive weight", "subset")
    return design, n, df, weights_degrees_of_freedom(design, subset)


def weighted_estimate(reports, epsilon, design: SurveyDesign, *, k: int | None = None,
                      confidence: float = 0.95, subset=None) -> WeightedResult:
    """Estimate each option's share from randomized ``reports`` (option indices) under a survey design.

    With ``subset`` (a boolean mask: a subpopulation, such as the respondents of one option of a
    question asked directly), the estimate is the subpopulation's — a domain estimate: the rows
    outside it keep their place in the design with weight 0, so the strata and clusters still say
    how the sample was drawn (Lumley 2004, §3.4) — and Korn & Graubard's interval counts the
    subpopulation's respondents and its degrees of freedom (:func:`domain_degrees_of_freedom`), as
    R's ``svyby(~r, ~g, design, svyciprop, method = "beta")`` does.  ``n`` is then the subset's size.

    Each interval contains the exact interval (Feldman–Cousins) of the same report share at Kish's
    effective sample size of the weights over the estimate's rows, rounded down and at least 1 (module
    notes, "Never more certain than the reports"): ``kish_floor`` says per option where that widened
    Korn and Graubard's, and ``note`` says so.

    Parameters
    ----------
    reports : array of int
        Each respondent's report, ``0..k−1`` (a row per respondent, in the design's order).
    epsilon : float or None
        The question's declared ε (None: asked directly, p = 1).
    design : SurveyDesign
        From :func:`survey_design`.
    k : int, optional
        Number of options (default: the largest report + 1).
    confidence : float, default 0.95
    subset : array of bool, optional
        The subpopulation to estimate (a domain); default: everyone.

    Examples
    --------
    >>> from deniable.estimators.weights import survey_design
    >>> d = survey_design([1, 1, 2, 2, 1, 3])
    >>> r = weighted_estimate([0, 1, 0, 0, 1, 1], None, d)
    >>> r.estimate.round(4).tolist()
    [0.5, 0.5]
    """
    confidence = check_confidence(confidence)
    r = np.asarray(reports)
    if r.shape != (design.n,) or r.dtype.kind not in "iu":
        raise SamplingDesignError(f"reports: one option index per respondent ({design.n}) needed", "reports")
    k = int(r.max()) + 1 if k is None else int(k)
    if r.min() < 0 or r.max() >= k:
        raise SamplingDesignError(f"reports: option indices must be 0..{k - 1}", "reports")
    mech = resolve(k, epsilon)
    design, n, df, interval_df = _domain(design, subset)
    w = design.weights
    positive = int(np.count_nonzero(w > 0))
    shares, errors, lows, highs = [], [], [], []
    for j in range(k):
        y = (r == j).astype(float)
        share = float(w @ y / w.sum())
        variance = linearized_variance(y, design)
        low, high = korn_graubard(share, variance, n, interval_df, confidence, positive)
        shares.append(share)
        errors.append(math.sqrt(variance))
        lows.append(low)
        highs.append(high)
    lam = np.array(shares)
    span = mech.p - mech.q

    def to_pi(x):
        return np.clip((np.asarray(x) - mech.q) / span, 0.0, 1.0)

    effective_n = design.effective_n
    n_kish = kish_respondents(effective_n)
    ci_low, ci_high, floored = _with_floor(to_pi(lows), to_pi(highs),
                                           [exact_at(share, n_kish, mech.p, mech.q, confidence) for share in lam])
    return WeightedResult(
        n=n, effective_n=effective_n, degrees_of_freedom=df, k=k,
        epsilon=mech.epsilon, p=mech.p, q=mech.q, confidence=confidence,
        report_share=frozen(lam), report_std_error=frozen(errors), estimate=frozen((lam - mech.q) / span),
        std_error=frozen(np.array(errors) / span), ci_low=frozen(ci_low), ci_high=frozen(ci_high),
        kish_floor=frozen(floored, dtype=bool), note=kish_note(floored, effective_n))


@dataclass(frozen=True, eq=False)
class WeightedDifference(Result):
    """The difference of two groups' weighted means (a list experiment's treatment − control)."""

    n: int  # respondents in either group
    n_groups: tuple  # (group 0, group 1)
    effective_n: float
    degrees_of_freedom: int
    confidence: float
    means: np.ndarray  # each group's weighted mean
    mean_std_errors: np.ndarray
    estimate: float  # means[1] − means[0]
    std_error: float
    ci_low: float
    ci_high: float
    method: str = "difference of the arms' weighted means, t interval on the design's degrees of freedom (linearization)"


def weighted_difference(values, groups, design: SurveyDesign, *, confidence: float = 0.95,
                        subset=None) -> WeightedDifference:
    """The difference ``ȳ₁ − ȳ₀`` of two groups' weighted (Hájek) means of ``values`` under a design.

    ``groups``: each respondent's group, 0 or 1, or −1 for a respondent in neither (not answered:
    it keeps its place in the design with weight 0); ``subset``: a subpopulation (a domain), whose
    degrees of freedom the interval then takes (:func:`domain_degrees_of_freedom`).

    Notes
    -----
    Each mean is a ratio of weighted totals, ``ȳ_g = Σ w d_g y / Σ w d_g``; the difference's
    linearization is the difference of the two ratios' influence values,
    ``u_i = w_i [d₁ᵢ (y_i − ȳ₁)/W₁ − d₀ᵢ (y_i − ȳ₀)/W₀]`` (Binder 1983; Wolter 2007, ch. 6), whose
    variance under the design is the module's stratified, clustered formula applied to their
    cluster totals.  The two groups share strata and clusters, so the covariance of their means is
    in it (R: ``svycontrast(svyby(~y, ~arm, design, svymean, covmat = TRUE), c(-1, 1))``).  The
    interval is ``estimate ± t_df · se`` on the design's degrees of freedom (R: ``confint(…, df =
    degf(design))``).
    """
    confidence = check_confidence(confidence)
    y = np.asarray(values, dtype=float)
    g = np.asarray(groups)
    if y.shape != (design.n,) or g.shape != (design.n,):
        raise SamplingDesignError(f"values: one value and one group per respondent ({design.n}) needed", "values")
    df = design.degrees_of_freedom
    rows = np.ones(design.n, dtype=bool) if subset is None else np.asarray(subset, dtype=bool)
    if subset is not None:
        df = domain_degrees_of_freedom(design, rows)
    w = design.weights * rows
    u = np.zeros(design.n)
    means, errors, sizes = [], [], []
    for arm in (0, 1):
        d = (g == arm) & rows
        total = float(w @ d)
        if total <= 0:
            raise SamplingDesignError(f"groups: no respondent with a positive weight in group {arm}", "groups")
        mean = float(w @ (d * y) / total)
        influence = w * d * np.where(d, y - mean, 0.0) / total
        means.append(mean)
        errors.append(math.sqrt(linearized_covariance(influence[:, None], design)[0, 0]))
        sizes.append(int(d.sum()))
        u += influence if arm else -influence
    se = math.sqrt(linearized_covariance(u[:, None], design)[0, 0])
    estimate = means[1] - means[0]
    half = float(t.ppf(0.5 + confidence / 2, df)) * se if df > 0 else math.nan
    both = w * (g >= 0)
    return WeightedDifference(n=sum(sizes), n_groups=tuple(sizes),
                              effective_n=float(both.sum() ** 2 / np.sum(both**2)), degrees_of_freedom=df,
                              confidence=confidence, means=frozen(means), mean_std_errors=frozen(errors),
                              estimate=estimate, std_error=se, ci_low=estimate - half, ci_high=estimate + half)
