"""Survey-grade estimates of a randomized question: sampling weights, strata, clusters, raking.

**Sampling weights are not frequency weights.**  :func:`deniable.estimators.regress`'s ``weights``
and a :class:`~deniable.server.survey.dataset.Dataset`'s counts say "this row stands for w
identical responses" (the data are expanded); sampling weights say "this respondent stands for w
people of the population", and the precision comes from the design — the respondents, their
strata and clusters — not from Σw.  They come in here, as a :class:`SurveyDesign`.

**The estimate.**  The weighted share of reports of option j is the Hájek ratio
``λ̂_j = Σ w_i [r_i = j] / Σ w_i``, and randomized response is undone as everywhere else:
``π̂_j = (λ̂_j − q)/(p − q)``.

**Its variance** by Taylor linearization of the ratio (Binder 1983; Wolter 2007, ch. 6), as R's
``survey`` package computes it for ``svymean`` (Lumley 2004): with the influence values
``u_i = w_i ([r_i = j] − λ̂_j)/Σ w``, their totals ``U_hc`` over each cluster c of stratum h, and
``n_h`` clusters in stratum h,

    Var(λ̂_j) = Σ_h (1 − f_h) · n_h/(n_h − 1) · Σ_c (U_hc − Ū_h)²,

each respondent its own cluster when there are none, one stratum when there are none, and
``f_h = n_h/N_h`` the sampling fraction of clusters when the population's clusters ``N_h`` are given
(else 0: sampling with replacement).  ``Var(π̂_j) = Var(λ̂_j)/(p − q)²``.  The design's degrees of
freedom are clusters − strata.

**Intervals** that keep their coverage at small effective samples: Korn & Graubard's (1998) beta
interval for a proportion at the design's effective sample size, as R's ``svyciprop(method =
"beta")`` computes it — ``n* = λ̂(1 − λ̂)/Var(λ̂) · (t_{n−1}/t_df)²`` at the level's quantiles, then the
Clopper–Pearson ends with ``n*λ̂`` successes in ``n*`` trials (non-integer) — for the report share
λ_j, mapped to π_j by the mechanism (an increasing map, so coverage carries over) and kept in
[0, 1].  One change from R: the degrees of freedom ``df`` are the smaller of the design's
(clusters − strata, R's ``degf``) and Satterthwaite's for the variance under unequal weights
(:func:`weights_degrees_of_freedom`): with very unequal weights a few respondents (or clusters)
make most of the variance estimate, which is then as unstable as one from a handful of
respondents, and ``degf``'s intervals fall short at small samples (coverage 0.925–0.939 at 200
respondents with weights of CV 1.5).  With equal weights (and clusters of equal weight) the two
agree and so does the interval.  With p = 1 (asked directly) the estimates and standard errors are
exactly ``svymean``'s, and the intervals ``svyciprop``'s recipe at those degrees of freedom
(tests/unit/test_weights.py runs R), joined with the exact interval below.

**Never more certain than the reports.**  Korn and Graubard's effective sample size comes from the
estimated variance, which can be 0, or nearly so, although every report was randomized: when the
few respondents who carry most of the weight happen to agree (one weight of 10⁶ beside seven of 1
at ε = 1 gave [1, 1]; k-ary randomized response at ε = 4 with lognormal weights of CV 1.5 and
n = 200 gave [0, 0] for about 11 % of the samples at π = 0), or every report is the same (a custom
design's 8 identical reports gave [1, 1], [0, 0], [0, 0]).  So every weighted and raked interval
(:func:`weighted_estimate`, :func:`weighted_design_estimate`, :func:`raked_estimate`,
:func:`raked_design_estimate`, and a cross-tab's cells where they are a domain's or a proportion)
is joined with the **exact interval an unweighted question gets for the same report shares at
Kish's effective sample size** ``n_K = max(1, ⌊(Σw)²/Σw²⌋)`` of the rows it is over (a domain's:
rows of weight 0, outside it or not answered, count for nothing): Feldman and Cousins' interval of
the report's ``λ = q + (p − q)π`` (:func:`deniable.estimators.intervals.exact`; a design's binary
report, forced response's report per answer, the simultaneous region of
:mod:`.design_region` for other designs; the respondent-side crosswise model's hull over its fact's
stated range), at the whole counts on either side of ``n_K λ̂`` (:func:`exact_at`).  Kish's n is the
size of the simple random sample whose mean is as precise as the weighted mean when the answers do
not go with the weights (Kish 1965), and n for equal weights; the rule says that weighting never
makes the randomized reports of a sample tell more than that many unweighted reports would.  The
joined interval holds both, so it covers whenever either does: its coverage is at least Korn and
Graubard's (the rule can only widen), and the rule sets an interval mostly where Korn and Graubard's
variance is near 0 (a report share near 0 or 1) or where the design's variance is below Kish's
(strata, or raking on variables that go with the answers).  The result's ``kish_floor`` says, per
option, where the rule widened an interval (by more than 1e-9), and ``note`` says so
(:func:`kish_note`).  With a variance of 0 Korn and Graubard's effective size is the respondents
with a positive weight, not the rows.

**Raking** (:func:`rake`): iterative proportional fitting of the weights to population margins of
questions asked directly (Deming & Stephan 1940), until every margin is met to a tolerance; the
result says the achieved margins, the weights' range and Kish's effective sample size
``(Σw)²/Σw²`` (Kish 1965).  With bounds (trimming), each category's step solves for the factor
that meets its margin with the weights clipped to the bounds, so the trimmed weights still meet
the margins (calibration with a truncated distance, Deville & Särndal 1992); bounds that no
weights can keep are refused by a linear program over the raking cells.  **The variance of a
raked estimate** (:func:`raked_mean`, :func:`raked_estimate`) is R's calibration variance for
``rake()``: the influence values less their projection on the raking variables
(:func:`calibration_residuals`), since the calibrated totals have no sampling variance.

References
----------
.. [1] D. A. Binder, "On the variances of asymptotically normal estimators from complex surveys",
   International Statistical Review 51 (1983) 279–292.
.. [2] K. M. Wolter, *Introduction to Variance Estimation*, 2nd ed. (2007).
.. [3] T. Lumley, "Analysis of complex survey samples", J. Statistical Software 9 (2004).
.. [4] E. L. Korn, B. I. Graubard, "Confidence intervals for proportions with small expected
   number of positive counts estimated from survey data", Survey Methodology 24 (1998) 193–201.
.. [5] W. E. Deming, F. F. Stephan, "On a least squares adjustment of a sampled frequency table
   when the expected marginal totals are known", Ann. Math. Statist. 11 (1940) 427–444.
.. [6] L. Kish, *Survey Sampling* (1965).
.. [7] J.-C. Deville, C.-E. Särndal, "Calibration estimators in survey sampling", J. American
   Statistical Association 87 (1992) 376–382.
.. [8] E. C. Fieller, "Some problems in interval estimation", J. Royal Statistical Society B 16
   (1954) 175–185; W. G. Cochran, *Sampling Techniques*, 3rd ed. (1977), §6.10.
.. [9] F. E. Satterthwaite, "An approximate distribution of estimates of variance components",
   Biometrics Bulletin 2 (1946) 110–114.
.. [10] R. F. Potthoff, M. A. Woodbury, K. G. Manton, "'Equivalent sample size' and 'equivalent
   degrees of freedom' refinements for inference using survey weights under superpopulation
   models", J. American Statistical Association 87 (1992) 383–396.
.. [11] G. J. Feldman, R. D. Cousins, "Unified approach to the classical statistical analysis of small
   signals", Physical Review D 57 (1998) 3873–3889 (the exact interval of the Kish rule).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import beta, t

from deniable.client.mechanism import resolve
from deniable.errors import FieldError

from .intervals import exact as exact_interval
from .result import Result, frozen
from .validate import check_confidence

RAKE_TOLERANCE = 1e-10
RAKE_ITERATIONS = 1000


class SamplingDesignError(FieldError):
    """A sampling design (weights, strata, clusters, margins) that cannot be used; ``field`` names the part.

    Not :class:`deniable.client.designs.DesignError`, which is a randomized-response design's."""


# This class was named DesignError until issue 37, a second class of that name beside the
# randomized-response design's (deniable.client.designs.DesignError).  Code outside the repository
# may import it from here, a public module (as server/cli/analysis.py still does), so the old name
# stays an alias of the same class; not in __all__: new code names SamplingDesignError
# (tests/unit/test_error_family.py holds both).
DesignError = SamplingDesignError


@dataclass(frozen=True, eq=False)
class SurveyDesign:
    """Sampling weights, and optionally strata, clusters and the population's clusters per stratum."""

    weights: np.ndarray
    strata: np.ndarray  # stratum index per respondent (all 0 without strata)
    clusters: np.ndarray  # cluster index per respondent, unique across strata (the row without clusters)
    population_clusters: np.ndarray | None  # N_h per respondent's stratum, or None (with replacement)

    @property
    def n(self) -> int:
        return int(self.weights.size)

    @property
    def degrees_of_freedom(self) -> int:
        """Clusters − strata."""
        return int(np.unique(self.clusters).size - np.unique(self.strata).size)

    @property
    def effective_n(self) -> float:
        """Kish's effective sample size of the weights, ``(Σw)²/Σw²``."""
        return float(self.weights.sum() ** 2 / np.sum(self.weights**2))


def _labels(values, n: int, field: str) -> np.ndarray:
    values = np.asarray(values)
    if values.shape != (n,):
        raise SamplingDesignError(f"{field}: one value per respondent ({n}) needed, got shape {values.shape}", field)
    return np.unique(values.astype(str), return_inverse=True)[1].astype(np.int64)


WEIGHT_RATIO = 1e300  # the largest positive weight may be at most this many times the smallest
RESCALE_BEYOND = 2.0**256  # weights above this (or below its inverse) are rescaled by a power of two


def _check_squares(w: np.ndarray, c: np.ndarray, what: str, field: str = "weights") -> None:
    """SamplingDesignError unless every positive weight's square, and their sum (Kish's effective n, every
    variance), is a positive finite float: 1e308 squares to infinity, 1e-170 to 0."""
    positive = w[(w > 0) & (c > 0)]
    if not positive.size:
        return
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        fine = np.square(positive.min()) > 0 and math.isfinite(float(c @ np.square(w)))
    if not fine:
        raise SamplingDesignError(
            f"{what} range from {positive.min():g} to {positive.max():g}, beyond what floating point "
            "can square (Kish's effective sample size and the variances add up their squares); "
            "multiply them all by one number (a share's estimate depends only on their ratios)", field)


def _rescaled(w: np.ndarray, c: np.ndarray, what: str, field: str = "weights") -> np.ndarray:
    """The weights, multiplied by a power of two when they lie beyond ``2^±256``, so that the largest and
    the smallest positive one are as far above 1 as below it; SamplingDesignError naming the bound when the
    largest is more than :data:`WEIGHT_RATIO` times the smallest (no scale then keeps both squares in
    floating point), or when their squares still cannot be added up (:func:`_check_squares`).

    Every number a weighted estimate reports — shares, standard errors, intervals, Kish's effective
    sample size, degrees of freedom, a regression's coefficients — is a ratio of sums of weights (or
    of their squares) in which the weights' scale cancels: the Hájek share ``Σ w y/Σ w``, the influence
    values ``w (y − ȳ)/Σ w``, ``(Σ w)²/Σ w²``, Satterthwaite's ``(Σ a T²)²/Σ a² T⁴``.  So weights of 10³⁰⁸
    (whose squares are infinite) or 10⁻³⁰⁰ (whose squares are 0) estimate exactly what weights of 1 do.
    A power of two changes no digit of a weight (only its exponent), so every ratio of the rescaled
    weights is the ratio of the given ones, and weights within ``2^±256`` are left as they are."""
    positive = w[(w > 0) & (c > 0)]
    if not positive.size:
        return w
    high, low = float(positive.max()), float(positive.min())
    if high > low * WEIGHT_RATIO:
        raise SamplingDesignError(
            f"{what} range from {low:g} to {high:g}, beyond what floating point can square (Kish's "
            f"effective sample size and the variances add up their squares): the largest may be at "
            f"most {WEIGHT_RATIO:g} times the smallest positive one", field)
    if high > RESCALE_BEYOND or low < 1 / RESCALE_BEYOND:
        w = np.ldexp(w, -((math.frexp(high)[1] + math.frexp(low)[1]) // 2))
    _check_squares(w, c, what, field)
    return w


def _given_weights(weights) -> np.ndarray:
    """Weights handed to a raked estimator (:func:`rake`'s, or any): finite, not negative, rescaled as
    :func:`survey_design` rescales sampling weights (:func:`_rescaled`)."""
    w = np.asarray(weights, dtype=float)
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise SamplingDesignError("weights: every weight must be a finite number, not negative", "weights")
    return _rescaled(w, np.ones(w.shape), "weights: the weights")


def survey_design(weights, *, strata=None, clusters=None, population_clusters=None) -> SurveyDesign:
    """Check and build a :class:`SurveyDesign`: finite positive weights, labels per respondent.

    Weights beyond ``2^±256`` are multiplied by a power of two (every estimate is scale-free in them), and
    weights whose largest is more than 1e300 times their smallest positive one are refused
    (:func:`_rescaled`).

    ``population_clusters`` (per respondent: the number of clusters of its stratum in the
    population, ``N_h``) gives the finite-population correction ``1 − n_h/N_h``.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise SamplingDesignError("weights: one weight per respondent needed", "weights")
    if not np.all(np.isfinite(w)):
        raise SamplingDesignError("weights: every weight must be a finite number (found NaN or infinity)", "weights")
    if np.any(w < 0):
        raise SamplingDesignError(f"weights: weights cannot be negative (found {w[w < 0][0]:g})", "weights")
    if not np.any(w > 0):
        raise SamplingDesignError("weights: every weight is 0", "weights")
    w = _rescaled(w, np.ones(w.size), "weights: the weights")
    n = w.size
    h = np.zeros(n, dtype=np.int64) if strata is None else _labels(strata, n, "strata")
    if clusters is None:
        c = np.arange(n, dtype=np.int64)
    else:
        raw = np.asarray(clusters).astype(str)
        if raw.shape != (n,):
            raise SamplingDesignError(
                f"clusters: one value per respondent ({n}) needed, got shape {raw.shape}", "clusters")
        c = np.unique(np.char.add(np.char.add(h.astype(str), "\x00"), raw), return_inverse=True)[1].astype(np.int64)
    for stratum in np.unique(h):
        if np.unique(c[h == stratum]).size < 2:
            raise SamplingDesignError("strata: a stratum has a single cluster, so its variance cannot be estimated; "
                                      "merge it with another stratum", "strata")
    big_n = None
    if population_clusters is not None:
        big_n = np.asarray(population_clusters, dtype=float)
        if big_n.shape != (n,) or not np.all(np.isfinite(big_n)):
            raise SamplingDesignError(
                "population_clusters: one finite number per respondent needed", "population_clusters")
        for stratum in np.unique(h):
            sampled = np.unique(c[h == stratum]).size
            if np.any(big_n[h == stratum] < sampled) or np.unique(big_n[h == stratum]).size != 1:
                raise SamplingDesignError("population_clusters: must be one number per stratum, at least the clusters "
                                          f"sampled in it ({sampled})", "population_clusters")
    return SurveyDesign(weights=w, strata=h, clusters=c, population_clusters=big_n)


def linearized_variance(values: np.ndarray, design: SurveyDesign) -> float:
    """``Var`` of the weighted mean of ``values`` by linearization (module notes)."""
    w = design.weights
    total = w.sum()
    mean = float(w @ values / total)
    u = w * (values - mean) / total
    variance = 0.0
    for stratum in np.unique(design.strata):
        rows = design.strata == stratum
        ids, inverse = np.unique(design.clusters[rows], return_inverse=True)
        sums = np.bincount(inverse, weights=u[rows], minlength=ids.size)
        n_h = ids.size
        f_h = n_h / design.population_clusters[rows][0] if design.population_clusters is not None else 0.0
        variance += (1 - f_h) * n_h / (n_h - 1) * float(np.sum((sums - sums.mean()) ** 2))
    return variance


def linearized_covariance(scores: np.ndarray, design: SurveyDesign) -> np.ndarray:
    """``Σ_h (1 − f_h) n_h/(n_h − 1) Σ_c (U_hc − Ū_h)(U_hc − Ū_h)ᵀ`` of the rows' weighted scores
    ``scores`` (n × P, each row already multiplied by its weight): the middle of the sandwich of a
    pseudo-likelihood fit (Binder 1983; R's ``svyrecvar``), as :func:`linearized_variance` for a mean."""
    scores = np.asarray(scores, dtype=float)
    meat = np.zeros((scores.shape[1], scores.shape[1]))
    for stratum in np.unique(design.strata):
        rows = design.strata == stratum
        ids, inverse = np.unique(design.clusters[rows], return_inverse=True)
        totals = np.zeros((ids.size, scores.shape[1]))
        np.add.at(totals, inverse, scores[rows])
        n_h = ids.size
        f_h = n_h / design.population_clusters[rows][0] if design.population_clusters is not None else 0.0
        deviations = totals - totals.mean(axis=0)
        meat += (1 - f_h) * n_h / (n_h - 1) * deviations.T @ deviations
    return meat


def domain_degrees_of_freedom(design: SurveyDesign, rows: np.ndarray) -> int:
    """Clusters − strata among the respondents of a subpopulation ``rows`` (a boolean mask): the
    degrees of freedom R's ``degf()`` gives a ``subset()`` of the design, as ``svyby`` uses them."""
    rows = np.asarray(rows, dtype=bool)
    return int(np.unique(design.clusters[rows]).size - np.unique(design.strata[rows]).size)


def _variance_of_totals(design: SurveyDesign):
    """``u ↦ Σ_h (1 − f_h) n_h/(n_h − 1) Σ_c (U_hc − Ū_h)²`` of influence values ``u`` (module notes),
    with the design's clusters indexed once: for an estimator that needs many variances of one
    design (a cross-tab's cells), one pass over the respondents per variance."""
    ids, inverse = np.unique(design.clusters, return_inverse=True)  # cluster indices are unique across strata
    inverse = inverse.reshape(-1)
    stratum_of = np.zeros(ids.size, dtype=np.int64)
    stratum_of[inverse] = design.strata
    n_h = np.bincount(stratum_of).astype(float)
    f_h = np.zeros(n_h.size)
    if design.population_clusters is not None:
        big_n = np.zeros(n_h.size)
        big_n[design.strata] = design.population_clusters
        f_h = n_h / big_n
    factor = ((1 - f_h) * n_h / (n_h - 1))[stratum_of]

    def variance(u: np.ndarray) -> float:
        totals = np.bincount(inverse, weights=u, minlength=ids.size)
        deviations = totals - (np.bincount(stratum_of, weights=totals, minlength=n_h.size) / n_h)[stratum_of]
        return float(factor @ deviations**2)

    return variance


def weights_degrees_of_freedom(design: SurveyDesign, rows=None) -> float:
    """The degrees of freedom of the linearized variance under unequal weights: Satterthwaite's
    (1946) moment match of the variance estimate to a scaled χ², with each cluster's variance
    proportional to its squared total weight — the design's ``clusters − strata`` (R's ``degf``,
    :func:`domain_degrees_of_freedom` for ``rows``) when the weights are equal, fewer when a few
    clusters carry most of the weight.

    The linearized variance (module notes) is ``V̂ = Σ_c a_c (U_c − Ū_h)²`` over the clusters c,
    ``a_c = (1 − f_h) n_h/(n_h − 1)`` of c's stratum h.  A cluster's total influence value is
    ``U_c = T_c ē_c / Σw`` with ``T_c = Σ_{i∈c} w_i`` its total weight and ``ē_c`` its weighted mean
    residual; taking the ``ē_c`` independent with a common variance σ² (a model, as Kish's (1965)
    effective sample size takes the respondents' values to be), ``a_c U_c²`` has mean
    ``∝ a_c T_c² σ²`` and, for normal ``ē_c``, variance ``2 (a_c T_c² σ²)²/Σw⁴``.  Matching the mean
    and variance of ``V̂`` to ``(E V̂/ν) χ²_ν`` (Satterthwaite 1946, the recipe of "equivalent
    degrees of freedom" for weighted survey data: Potthoff, Woodbury & Manton 1992) gives

        ν = (Σ_c a_c T_c²)² / Σ_c a_c² T_c⁴,

    Kish's ``(Σw)²/Σw²`` one power up when every respondent is its own cluster, ``(Σw²)²/Σw⁴``.  It is
    the number of clusters when their weight totals are equal (and the a_c too); the design's
    ``clusters − strata`` is an upper bound, so the smaller of the two is returned (a weighted
    estimate never gets more degrees of freedom than R's ``degf`` gives it).  ``rows`` (a boolean
    mask): a domain, the other respondents' weights counted as 0.  With weights of coefficient of
    variation 1.5 and 200 respondents, ν is about 13 where ``degf`` says 199 — Korn & Graubard's
    interval with ``degf`` then falls short of its coverage (docs/statistics.md, "Weighted
    estimates, by simulation"; ``scripts/weights_coverage.py``)."""
    w = design.weights if rows is None else design.weights * np.asarray(rows, dtype=bool)
    df = design.degrees_of_freedom if rows is None else domain_degrees_of_freedom(design, rows)
    ids, inverse = np.unique(design.clusters, return_inverse=True)
    inverse = inverse.reshape(-1)
    totals = np.bincount(inverse, weights=w, minlength=ids.size)
    stratum_of = np.zeros(ids.size, dtype=np.int64)
    stratum_of[inverse] = design.strata
    n_h = np.bincount(stratum_of).astype(float)  # the design's clusters per stratum, as the variance has them
    f_h = np.zeros(n_h.size)
    if design.population_clusters is not None:
        big_n = np.zeros(n_h.size)
        big_n[design.strata] = design.population_clusters
        f_h = n_h / big_n
    a = ((1 - f_h) * n_h / (n_h - 1))[stratum_of]
    scale = float(np.max(totals)) or 1.0  # T_c/max T: the ratio is scale-free, and T⁴ stays finite
    s = a * (totals / scale) ** 2
    denominator = float(s @ s)
    return float(df) if denominator <= 0 else min(float(df), float(s.sum()) ** 2 / denominator)


def korn_graubard(share: float, variance: float, n: int, df: int, confidence: float,
                  positive: float | None = None) -> tuple[float, float]:
    """Korn & Graubard's beta interval for a proportion from a complex sample (module notes; R's
    ``svyciprop(method = "beta")``).  ``n``: the rows of the design (R's ``nrow``, in the t ratio);
    ``positive``: the respondents with a positive weight (default ``n``), the effective sample size
    when the variance is 0 — a row of weight 0 (outside a domain, not answered) tells nothing."""
    alpha = 1 - confidence
    if variance <= 0:
        n_eff = float(n if positive is None else max(positive, 1.0))
    else:
        n_eff = share * (1 - share) / variance
        if df > 0:
            n_eff *= (t.ppf(alpha / 2, n - 1) / t.ppf(alpha / 2, df)) ** 2
    x = n_eff * share
    low = float(beta.ppf(alpha / 2, x, n_eff - x + 1)) if x > 0 else 0.0
    high = float(beta.ppf(1 - alpha / 2, x + 1, n_eff - x)) if n_eff - x > 0 else 1.0
    return (0.0 if math.isnan(low) else low), (1.0 if math.isnan(high) else high)


KISH_TOLERANCE = 1e-9  # an exact end beyond Korn–Graubard's by less than this is rounding, not the rule


def kish_respondents(effective_n: float) -> int:
    """Kish's effective sample size rounded down, at least 1: the unweighted respondents whose exact
    interval every weighted interval contains (module notes, "Never more certain than the reports")."""
    if not math.isfinite(effective_n) or effective_n < 1:
        return 1
    return int(math.floor(effective_n * (1 + 1e-12)))  # Kish's n of equal weights is whole to rounding


def _whole_counts(share: float, n: int) -> np.ndarray:
    """The whole counts on either side of ``n · share`` (the same count twice when it is whole)."""
    x = min(max(float(share), 0.0), 1.0) * n
    nearest = round(x)
    if abs(x - nearest) <= 1e-9 * n:
        return np.array([nearest, nearest], dtype=np.int64)
    return np.array([math.floor(x), math.ceil(x)], dtype=np.int64)


def exact_at(share: float, n: int, p: float, q: float, confidence: float) -> tuple[float, float]:
    """The exact (Feldman–Cousins) interval for π of ``n`` unweighted reports of which a share ``share``
    is the report with probability ``λ = q + (p − q)π`` (:func:`deniable.estimators.intervals.exact`, the
    interval an unweighted question gets), joined over the whole counts on either side of ``n · share``
    (so it contains the interval at whichever of them ``n · share`` is rounded to)."""
    low, high = exact_interval(_whole_counts(share, n), n, p, q, confidence)
    return float(np.min(low)), float(np.max(high))


def kish_note(floored, effective_n: float, labels=None, what: str = "option") -> str | None:
    """The note of a weighted result whose intervals the Kish rule set (module notes): which options'
    (``labels``, default ``what`` and the index), and at how many unweighted respondents; None if none."""
    which = np.flatnonzero(np.asarray(floored, dtype=bool)) if floored is not None else np.empty(0, dtype=int)
    if not which.size:
        return None
    names = [repr(str(labels[j])) if labels is not None else f"{what} {j}" for j in which]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    n_k = kish_respondents(effective_n)
    return (f"the interval{'s' if len(names) > 1 else ''} of {listed} {'are' if len(names) > 1 else 'is'} widened to "
            f"contain the exact interval of {n_k:,} unweighted respondent{'s' if n_k != 1 else ''} with the same "
            f"report shares (Kish's effective sample size {effective_n:,.1f}, rounded down): Korn–Graubard's "
            f"interval from the weighted variance was narrower, more certain than {n_k:,} randomized "
            f"report{'s' if n_k != 1 else ''} can be")


def _with_floor(lows, highs, floors) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each interval joined with its exact interval at Kish's n, and whether that widened it."""
    lows, highs = np.asarray(lows, dtype=float), np.asarray(highs, dtype=float)
    floor_low = np.array([f[0] for f in floors])
    floor_high = np.array([f[1] for f in floors])
    floored = (floor_low < lows - KISH_TOLERANCE) | (floor_high > highs + KISH_TOLERANCE)
    return np.minimum(lows, floor_low) + 0.0, np.maximum(highs, floor_high) + 0.0, floored  # + 0.0: no -0.0


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


def debiasing_matrix(k: int, epsilon) -> np.ndarray:
    """``M⁻¹`` of k-ary randomized response, ``M = (p − q)I + qJ``: ``(I − qJ)/(p − q)`` (since
    ``p + (k − 1)q = 1``); row a gives each report's weight in the debiased indicator of option a."""
    mech = resolve(k, epsilon)
    return (np.eye(k) - mech.q) / (mech.p - mech.q)


@dataclass(frozen=True, eq=False)
class WeightedCrosstabResult(Result):
    """The joint and conditional shares of two randomized questions under a survey design."""

    n: int  # respondents who answered both
    effective_n: float
    degrees_of_freedom: int
    confidence: float
    report_share: np.ndarray  # k1 × k2 weighted shares of the report pairs
    joint_estimate: np.ndarray  # (M₁⁻¹ ⊗ M₂⁻¹) applied to the report shares
    joint_std_error: np.ndarray
    joint_ci_low: np.ndarray
    joint_ci_high: np.ndarray
    conditional_estimate: np.ndarray  # column given row: joint / row total (a ratio)
    conditional_std_error: np.ndarray
    conditional_ci_low: np.ndarray
    conditional_ci_high: np.ndarray
    method: str
    simultaneous: bool = False  # Bonferroni over the cells (sampling.weighted_crosstab_of)
    note: str | None = None  # which intervals the exact interval at Kish's n widened (module notes)


AFFINE_TOLERANCE = 1.5 / 2**32  # a realized design's column is within one unit of 2^32 of its probabilities


def _channel(k: int, epsilon, matrix, field: str) -> tuple[np.ndarray, list, bool]:
    """One question's side of a cross-tab: ``(M⁻¹, affine, direct)`` — the inverse of its
    misclassification matrix (answers × reports; k-ary randomized response's is
    :func:`debiasing_matrix`), per option j the ``(p_j, q_j)`` with which report j is affine in that
    option's share alone, ``λ_j = q_j + (p_j − q_j) π_j`` (report j has one probability ``q_j`` under
    every other answer: k-ary randomized response, forced response, every binary design), or None,
    and whether the question is asked directly (M = I).  SamplingDesignError names ``field`` for a matrix
    that is not a square, invertible matrix of probabilities whose columns add up to 1."""
    if matrix is None:
        mech = resolve(k, epsilon)
        return debiasing_matrix(k, epsilon), [(mech.p, mech.q)] * k, mech.q == 0
    if epsilon is not None:
        raise SamplingDesignError(f"{field}: give the epsilon None with a matrix (the design's ε is its own)", field)
    m = np.asarray(matrix, dtype=float)
    if m.shape != (k, k) or not np.all(np.isfinite(m)) or np.any(m < 0) or np.any(np.abs(m.sum(axis=0) - 1) > 1e-9):
        raise SamplingDesignError(
            f"{field}: a {k} × {k} matrix of probabilities (reports × answers) whose columns add up "
            "to 1 needed", field)
    if np.linalg.matrix_rank(m) < k:
        raise SamplingDesignError(
            f"{field}: the matrix is singular (two answers have the same report distribution)", field)
    affine = []
    for j in range(k):
        others = np.delete(m[j], j)
        flat = others.max() - others.min() <= AFFINE_TOLERANCE and abs(m[j, j] - others.mean()) > AFFINE_TOLERANCE
        affine.append((float(m[j, j]), float(others.mean())) if flat else None)
    return np.linalg.inv(m), affine, bool(np.array_equal(m, np.eye(k)))


def weighted_crosstab(row_reports, col_reports, row_epsilon, col_epsilon, design: SurveyDesign, *, k_row: int,
                      k_col: int, confidence: float = 0.95, row_matrix=None,
                      col_matrix=None) -> WeightedCrosstabResult:
    """The joint distribution of two randomized questions under a survey design.

    Parameters
    ----------
    row_reports, col_reports : array of int
        Each respondent's report of each question, ``0..k−1``, or −1 when not answered (such a
        respondent keeps its place in the design with weight 0: the estimate is of those who
        answered both, a domain).
    row_epsilon, col_epsilon : float or None
        Each question's declared ε (None: asked directly, or randomized by a design's matrix).
    design : SurveyDesign
    k_row, k_col : int
    confidence : float, default 0.95
    row_matrix, col_matrix : array (k × k), optional
        A question randomized by a randomized-response design (forced response, Warner, Kuk, a
        custom matrix, …): its realized misclassification matrix ``M[r, t] = P(report r | answer t)``
        (:attr:`deniable.client.designs.Design.matrix`; report r stored as option r), in place of
        k-ary randomized response at ε (that question's ε must then be None).

    Notes
    -----
    The two questions are randomized independently, so the channel of a report pair is the
    Kronecker product ``M₁ ⊗ M₂`` and its inverse ``M₁⁻¹ ⊗ M₂⁻¹``.  The joint share of the true
    answers (a, b) is therefore ``π̂_ab = Σ_cd A_ac B_bd λ̂_cd`` with ``λ̂_cd`` the weighted (Hájek)
    share of report pairs (c, d) and ``A = M₁⁻¹``, ``B = M₂⁻¹`` (:func:`debiasing_matrix` for k-ary
    randomized response, the inverse of the design's matrix for a design: any invertible M) —
    the weighted mean of each respondent's debiased indicator ``z_i = A[a, r₁ᵢ] · B[b, r₂ᵢ]``.  Its
    variance is the linearized variance of that mean (module notes; R: ``svymean(~z)``).  The
    conditional share of b given a is the ratio ``π̂_ab / π̂_a·`` with ``π̂_a· = Σ_b π̂_ab``, its
    variance by linearizing the ratio: the linearized variance of the mean of
    ``(z_ab − R̂ z_a·)/π̂_a·`` (Wolter 2007, §6.5; R: ``svyratio(~z_ab, ~z_a, design)``).

    Intervals: with both questions asked directly, a joint cell is a proportion, and its interval
    is Korn & Graubard's (R: ``svyciprop(method = "beta")``).  Otherwise the debiased cell is a
    linear combination of several report shares (no single proportion to map), and the interval
    is ``estimate ± t_df · se`` on the design's degrees of freedom (R: ``confint(svymean(~z), df =
    degf(design))``).  Conditional shares: the t interval on the linearized ratio undercovers when
    the row's share is uncertain (a ratio's sampling distribution is skewed by its denominator), so

    * with the row question asked directly, the shares given row a are a domain's — the weighted
      report shares of the column question among the respondents who answered a, debiased by its
      mechanism — and get Korn & Graubard's interval with the domain's respondents and the degrees
      of freedom :func:`weighted_estimate` gives a subset (:func:`weights_degrees_of_freedom`),
      mapped through the column's mechanism: the ``--by`` estimate of the same group, interval
      included (R: ``svyby(~[r₂ = b], ~r₁, design, svyciprop, method = "beta")`` at those degrees
      of freedom).  A column randomized by a design maps report b's interval through
      ``λ_b = q_b + (p_b − q_b) π_b`` where report b has one probability ``q_b`` under every other
      answer (binary designs, forced response; the ends swap when ``p_b < q_b``), and otherwise
      gets the union of the t interval ``π̂ ± t_ν · se`` on the domain's degrees of freedom and Korn
      and Graubard's at the share's own effective sample size (:func:`_unaffine_interval`) — as
      :func:`weighted_design_estimate` with that ``subset`` does;
    * with the row question randomized, the row's share is itself a debiased estimate, and a
      ratio's distribution is skewed two ways: by its uncertain denominator, which Fieller's
      interval for the ratio of the two debiased weighted shares takes into account
      (:func:`fieller`, with their linearized variances and covariance — R: ``vcov(svymean(~z_ab +
      z_a·, design))`` — and the design's t quantile; [0, 1] when the row's share cannot be told
      from 0), and near 0 or 1 as a small share is, which Korn & Graubard's beta interval takes
      into account (:func:`korn_graubard`, the recipe of ``svyciprop(method = "beta")``, with the
      ratio's linearized variance ``Var(R̂)``), twice: at the ratio's own effective sample size
      ``R̂(1 − R̂)/Var(R̂)``, and on the column question's report scale ``λ = q₂ + (p₂ − q₂)R̂``
      (variance ``(p₂ − q₂)² Var(R̂)``, mapped back: the domain's interval above, with the row's
      randomization in the variance; for a designed column, report b's ``(p_b, q_b)`` when it has
      them), each when its share lies in (0, 1).  The interval is the
      union of the three (from the lowest lower end to the highest upper end): conservative where
      any one approximation fails (the simulation: every cell at or above nominal − 2 MC SE,
      wider than the t interval at small samples).
    Every interval is kept in [0, 1].  Coverage by simulation: ``scripts/weights_coverage.py
    --crosstab`` (docs/statistics.md, "Weighted estimates, by simulation").
    """
    confidence = check_confidence(confidence)
    r1, r2 = np.asarray(row_reports), np.asarray(col_reports)
    for name, r, k in (("row_reports", r1, k_row), ("col_reports", r2, k_col)):
        if r.shape != (design.n,) or r.dtype.kind not in "iu" or r.max(initial=-1) >= k or r.min(initial=0) < -1:
            raise SamplingDesignError(
                f"{name}: one option index 0..{k - 1} (or −1) per respondent ({design.n}) needed", name)
    both = (r1 >= 0) & (r2 >= 0)
    if not both.any():
        raise SamplingDesignError("reports: no respondent answered both questions", "reports")
    df = design.degrees_of_freedom

    def domain(members):  # a row asked directly: its respondents, and the degrees of freedom the --by
        return int(members.sum()), weights_degrees_of_freedom(design, members)  # group's interval takes

    return _crosstab(r1, r2, both, design.weights * both, np.ones(design.n), _variance_of_totals(design),
                     design.n, df, domain, row_epsilon, col_epsilon, k_row, k_col, confidence,
                     row_matrix=row_matrix, col_matrix=col_matrix)


def _crosstab(r1, r2, both, w, c, variance_of, n_all: int, df: int, domain, row_epsilon, col_epsilon,
              k_row: int, k_col: int, confidence: float, *, row_matrix=None,
              col_matrix=None) -> WeightedCrosstabResult:
    """:func:`weighted_crosstab`'s estimates (its notes) from the rows' reports ``r1``, ``r2``, the
    mask ``both``, the weights ``w`` (0 outside ``both``), the respondents ``c`` each row stands for,
    the variance of a linear statistic's influence values ``variance_of`` (per respondent), the
    respondents ``n_all`` and degrees of freedom ``df`` for Korn and Graubard's interval, and
    ``domain(mask) → (n, df)`` of a row asked directly: one computation for a sampling design and
    for raked weights (:func:`raked_crosstab`); ``row_matrix``, ``col_matrix``: a design's matrix
    (:func:`_channel`)."""
    a, b = np.where(both, r1, 0), np.where(both, r2, 0)
    cw = c * w
    inv_a, _, row_direct = _channel(k_row, row_epsilon, row_matrix, "row_matrix")
    inv_b, col_affine, col_direct = _channel(k_col, col_epsilon, col_matrix, "col_matrix")
    notes = []
    direct = row_direct and col_direct
    t_half = float(t.ppf(0.5 + confidence / 2, df)) if df > 0 else math.nan
    total = float(cw.sum())
    shape = (k_row, k_col)
    share, joint, joint_se, joint_low, joint_high = (np.zeros(shape) for _ in range(5))

    def z(i, j):  # each respondent's debiased indicator of cell (i, j), made when needed (memory: one column)
        return inv_a[i, a] * inv_b[j, b]

    for i in range(k_row):
        for j in range(k_col):
            share[i, j] = float(cw @ ((a == i) & (b == j)) / total)
            zij = z(i, j)
            joint[i, j] = float(cw @ zij / total)
            variance = variance_of(w * (zij - joint[i, j]) / total)
            joint_se[i, j] = math.sqrt(variance)
            if direct:
                joint_low[i, j], joint_high[i, j] = korn_graubard(joint[i, j], variance, n_all, df, confidence,
                                                                  float(c[cw > 0].sum()))
            else:
                joint_low[i, j], joint_high[i, j] = joint[i, j] - t_half * joint_se[i, j], \
                    joint[i, j] + t_half * joint_se[i, j]
    kish_both = total**2 / float(c @ w**2)
    if direct:  # a joint cell of two questions asked directly is a proportion: the exact interval at Kish's n
        n_kish = kish_respondents(kish_both)
        floors = [exact_at(float(v), n_kish, 1.0, 0.0, confidence) for v in share.ravel()]
        low, high, floored = _with_floor(joint_low.ravel(), joint_high.ravel(), floors)
        joint_low, joint_high = low.reshape(shape), high.reshape(shape)
        if floored.any():
            notes.append(f"{int(floored.sum())} joint cell interval{'s' if floored.sum() > 1 else ''} widened to "
                         f"contain the exact interval of {n_kish:,} unweighted respondents (Kish's effective "
                         f"sample size {kish_both:,.1f}, rounded down)")
    cond, cond_se = np.full(shape, math.nan), np.full(shape, math.nan)
    cond_low, cond_high = np.zeros(shape), np.ones(shape)
    n_both = int(round(float(c @ both)))
    for i in range(k_row):
        row_total = joint[i].sum()
        if row_total <= 0:
            continue  # no one (estimated) gives answer i: no conditional share
        z_row = inv_a[i, a]  # Σ_b z_ab: a column of M₂⁻¹ adds up to 1, since one of M₂ does
        u_row = w * (z_row - row_total) / total
        v_row = variance_of(u_row)
        if row_direct:  # the conditional shares are a domain's (the respondents who answered i)
            members = both & (a == i)
            n_i, df_i = domain(members)
            positive_i = float(c[(cw > 0) & members].sum())
        for j in range(k_col):
            zij = z(i, j)
            cond[i, j] = joint[i, j] / row_total
            # the ratio's influence values; their weighted mean is 0 (R: svyratio)
            variance = variance_of(w * (zij - cond[i, j] * z_row) / (row_total * total))
            cond_se[i, j] = math.sqrt(variance)
            if row_direct and col_affine[j] is None:  # no report affine in this share: as the domain's --by
                cond_low[i, j], cond_high[i, j] = _unaffine_interval(cond[i, j], variance, n_i, df_i, confidence,
                                                                     positive_i)
            elif row_direct:
                p_j, q_j = col_affine[j]
                lam = float(cw @ (members & (b == j)) / (cw @ members))  # the domain's report share of j
                low, high = korn_graubard(lam, variance * (p_j - q_j) ** 2, n_i, df_i, confidence, positive_i)
                cond_low[i, j], cond_high[i, j] = sorted(((low - q_j) / (p_j - q_j), (high - q_j) / (p_j - q_j)))
            else:
                v_joint = joint_se[i, j] ** 2
                v_both = (variance_of(w * (zij - joint[i, j]) / total + u_row) - v_joint - v_row) / 2
                low, high = fieller(joint[i, j], row_total, v_joint, v_both, v_row, t_half)
                if variance > 0 and df > 0:  # and a small share's skew, on the ratio's scale and the reports'
                    scales = [(0.0, 1.0)]
                    if col_affine[j] is not None:
                        scales.append((col_affine[j][1], col_affine[j][0] - col_affine[j][1]))
                    for floor, span in scales:
                        scaled = floor + span * cond[i, j]
                        if 0 < scaled < 1:
                            kg_low, kg_high = korn_graubard(scaled, variance * span**2, n_both, df, confidence)
                            ends = ((kg_low - floor) / span, (kg_high - floor) / span)
                            low, high = min(low, *ends), max(high, *ends)
                cond_low[i, j], cond_high[i, j] = low, high
        if row_direct:  # the domain's intervals, as --by gives them: never narrower than exact at its Kish n
            wm = w * members
            kish_i = float((c @ wm) ** 2 / (c @ wm**2))
            n_kish = kish_respondents(kish_i)
            lam_i = np.array([float(cw @ (members & (b == j)) / (cw @ members)) for j in range(k_col)])
            if col_matrix is None:
                floors = [exact_at(float(lam_i[j]), n_kish, *col_affine[j], confidence) for j in range(k_col)]
            else:
                floors = _matrix_floor(col_matrix, lam_i, n_kish, confidence, col_affine)
            cond_low[i], cond_high[i], floored = _with_floor(cond_low[i], cond_high[i], floors)
            if floored.any():
                notes.append(f"{int(floored.sum())} conditional interval{'s' if floored.sum() > 1 else ''} given "
                             f"row option {i} widened to contain the exact interval of {n_kish:,} unweighted "
                             f"respondents (the row's Kish effective sample size {kish_i:,.1f}, rounded down)")
    return WeightedCrosstabResult(
        n=n_both, effective_n=float(kish_both), degrees_of_freedom=df, confidence=confidence,
        report_share=frozen(share), joint_estimate=frozen(joint), joint_std_error=frozen(joint_se),
        joint_ci_low=frozen(np.clip(joint_low, 0, 1)), joint_ci_high=frozen(np.clip(joint_high, 0, 1)),
        conditional_estimate=frozen(cond), conditional_std_error=frozen(cond_se),
        conditional_ci_low=frozen(np.clip(cond_low, 0, 1)), conditional_ci_high=frozen(np.clip(cond_high, 0, 1)),
        method=(("Korn-Graubard beta interval (joint)" if direct else
                 "t interval on the design's degrees of freedom (joint, linearization)") + "; "
                + ("Korn-Graubard beta interval of the row's domain (conditional)" if row_direct else
                   "the union of Fieller's and Korn-Graubard's intervals for the ratio (conditional)")
                + ("; the union of the t interval and Korn-Graubard's beta interval at the share's effective sample "
                   "size, on the domain's degrees of freedom, where no report of the column is affine in its share"
                   if row_direct and None in col_affine else "")),
        note=("; ".join(notes) + ": Korn–Graubard's interval from the weighted variance was narrower, more certain "
              "than that many randomized reports can be") if notes else None)


def raked_crosstab(row_reports, col_reports, row_epsilon, col_epsilon, weights, variables=(), *, k_row: int,
                   k_col: int, counts=None, confidence: float = 0.95, row_matrix=None,
                   col_matrix=None, base: SurveyDesign | None = None) -> WeightedCrosstabResult:
    """:func:`weighted_crosstab` under raked ``weights`` (:func:`rake`): the same estimates and
    intervals, each variance the calibration variance of :func:`raked_mean` (the influence values
    less their projection on the raking ``variables``, respondents sampled with replacement: R's
    ``svymean(~z_ab, rake(svydesign(ids = ~1, …), …))`` and ``svyratio`` on it), Korn and
    Graubard's intervals on n − 1 degrees of freedom with n the respondents — and a row asked
    directly, a domain of the calibrated design, with the same n and degrees of freedom (R keeps a
    calibrated design's rows in a subset), as :func:`raked_estimate` with a ``domain`` has them.
    ``counts``: the respondents each row (answer pattern) stands for; reports −1: not answered.
    ``row_matrix``, ``col_matrix``: a question randomized by a randomized-response design (its
    epsilon None), as :func:`weighted_crosstab` takes them.

    ``base``: raking started from a sample's design weights (one row per respondent, no ``counts``),
    whose strata and clusters the variance keeps: each statistic's influence values are calibrated
    as above, then go through the design's stratified, clustered formula (:func:`linearized_variance`'s,
    as :func:`raked_mean` with a ``design``; R: ``svymean(~z_ab, des)`` and ``svyratio(~z_ab, ~z_a, des)``
    with ``des = rake(svydesign(ids = ~cluster, strata = ~stratum, weights = ~w), …)``, whose
    ``svyrecvar`` calibrates the influence values before the multistage formula).  The intervals then
    take the design's degrees of freedom (R's ``degf`` of the raked design), and a row asked directly
    the smaller of those and the raked weights' Satterthwaite ones over its domain
    (:func:`weights_degrees_of_freedom`), as :func:`raked_design_estimate` with that ``domain`` and
    ``sample`` has them — so the conditional shares given a row asked directly are that group's
    ``--rake --weights --by`` estimates, intervals included."""
    confidence = check_confidence(confidence)
    w = _given_weights(weights)
    c = _frequencies(counts, w.size)
    if base is not None and (base.n != w.size or (counts is not None and np.any(c != 1))):
        raise SamplingDesignError(f"weights: raking from a sample's design needs one row per respondent ({base.n})",
                                  "weights")
    r1, r2 = np.asarray(row_reports), np.asarray(col_reports)
    for name, r, k in (("row_reports", r1, k_row), ("col_reports", r2, k_col)):
        if r.shape != w.shape or r.dtype.kind not in "iu" or r.max(initial=-1) >= k or r.min(initial=0) < -1:
            raise SamplingDesignError(f"{name}: one option index 0..{k - 1} (or −1) per row ({w.size}) needed", name)
    both = (r1 >= 0) & (r2 >= 0)
    if not np.any(both & (c > 0)):
        raise SamplingDesignError("reports: no respondent answered both questions", "reports")
    n = float(c.sum())
    raking = list(variables)

    design_variance = None if base is None else _variance_of_totals(base)

    def variance_of(u):
        x = calibration_residuals(u, w, raking, c) if raking else u
        if design_variance is not None:
            return design_variance(x)
        return n / (n - 1) * (float(c @ x**2) - float(c @ x) ** 2 / n)

    n_all = int(round(n))
    if base is None:
        df, domain = n_all - 1, (lambda members: (n_all, n_all - 1))
    else:
        df = base.degrees_of_freedom

        def domain(members):  # as raked_design_estimate's interval with a domain and a sample
            return n_all, weights_degrees_of_freedom(replace(base, weights=w * members))
    return _crosstab(r1, r2, both, w * both, c, variance_of, n_all, df, domain,
                     row_epsilon, col_epsilon, k_row, k_col, confidence, row_matrix=row_matrix,
                     col_matrix=col_matrix)


def fieller(numerator: float, denominator: float, v_num: float, v_both: float, v_den: float,
            t_half: float) -> tuple[float, float]:
    """Fieller's (1954) interval for the ratio ``R = N/D`` of two estimates with variances ``v_num``,
    ``v_den`` and covariance ``v_both``, at the quantile ``t_half`` (the design's t).

    The set of ratios R that the data do not reject: ``N − R·D`` has mean 0 at the true R and
    variance ``V(R) = v_num − 2R·v_both + R²·v_den``, so ``(N − R·D)² ≤ t² V(R)``, a quadratic
    ``a R² − 2 b R + c ≤ 0`` with ``a = D² − t² v_den``, ``b = N·D − t² v_both``, ``c = N² − t² v_num``.
    When the denominator is told from 0 (``a > 0``) the interval is ``(b ± √(b² − ac))/a``; otherwise
    the set is unbounded (the data cannot say the row is not empty) and the interval is [0, 1]
    (Fieller 1954; Cochran 1977, §6.10; the delta method's ``R ± t·se`` is its first-order
    approximation, which ignores the denominator's skew and undercovers when D is uncertain).
    The caller keeps the ends in [0, 1].
    """
    if not math.isfinite(t_half):
        return 0.0, 1.0
    t2 = t_half * t_half
    a = denominator * denominator - t2 * v_den
    b = numerator * denominator - t2 * v_both
    c = numerator * numerator - t2 * v_num
    if a <= 0:
        return 0.0, 1.0
    disc = b * b - a * c
    root = math.sqrt(max(disc, 0.0))
    return (b - root) / a, (b + root) / a


@dataclass(frozen=True, eq=False)
class RakeResult(Result):
    """Raked weights, the margins they achieve, and what raking did to them."""

    weights: np.ndarray
    achieved: dict  # variable → achieved shares per category
    iterations: int
    converged: bool
    smallest: float  # the smallest positive raked weight × the mean weight (scale-free, as the bounds)
    largest: float  # the largest, × the mean weight
    effective_n: float
    bounds: tuple | None = None  # (low, high) × the mean weight: the trimming bounds, or None
    trimmed: int = 0  # respondents whose weight is at a bound


def _frequencies(counts, n: int) -> np.ndarray:
    if counts is None:
        return np.ones(n)
    c = np.asarray(counts, dtype=float)
    if c.shape != (n,) or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise SamplingDesignError(f"counts: one non-negative count per row ({n}) needed", "counts")
    return c


def rake(weights, variables: dict, margins: dict, *, tolerance: float = RAKE_TOLERANCE,
         iterations: int = RAKE_ITERATIONS, counts=None, bounds: tuple | None = None) -> RakeResult:
    """Rake ``weights`` so that each variable's weighted shares equal its population ``margins``.

    ``variables``: name → category index per respondent (0..m−1; a question asked directly);
    ``margins``: name → population share of each category (adding up to 1).  Iterative proportional
    fitting (module notes); the total of the weights is kept (weights beyond ``2^±256`` are first
    rescaled by a power of two, as :func:`survey_design` does; the result's ``smallest`` and
    ``largest`` are × the mean weight, so they do not depend on the scale).  ``counts`` (optional): how many
    identical respondents each row stands for (answer patterns), so that a row's weight is each
    of its respondents' weight.  ``bounds = (low, high)``: trimming — after each round of fitting,
    the weights are clipped to ``[low, high]`` × the mean weight, and fitting goes on until the
    margins are met within the bounds (so the trimmed weights are still calibrated).  Raises
    SamplingDesignError naming the variable for margins that do not add up to 1, a category with a
    population share but no respondent (or respondents but a share of 0), or raking that does not
    converge (``field``: ``trim`` when bounds were given).
    """
    w = survey_design(weights).weights.copy()
    c = _frequencies(counts, w.size)
    total = float(c @ w)
    columns = {}
    for name, target in margins.items():
        if name not in variables:
            raise SamplingDesignError(f"margins: {name!r} is not one of the variables ({', '.join(variables)})", name)
        target = np.asarray(target, dtype=float)
        if target.ndim != 1 or np.any(target < 0) or not np.all(np.isfinite(target)) or \
                abs(target.sum() - 1) > 1e-9:
            raise SamplingDesignError(f"{name}: the margin must be non-negative shares adding up to 1", name)
        codes = np.asarray(variables[name])
        if codes.shape != w.shape or codes.dtype.kind not in "iu" or codes.min() < 0 or codes.max() >= target.size:
            raise SamplingDesignError(f"{name}: one category 0..{target.size - 1} per respondent needed", name)
        present = np.bincount(codes, weights=c * w, minlength=target.size) > 0
        missing = np.flatnonzero(~present & (target > 0))
        if missing.size:
            raise SamplingDesignError(f"{name}: category {int(missing[0])} has a population share but no respondent "
                                      "(merge it with another)", name)
        extra = np.flatnonzero(present & (target == 0))
        if extra.size:
            raise SamplingDesignError(f"{name}: category {int(extra[0])} has respondents but a population share of 0",
                                      name)
        columns[name] = (codes, target)
    low = high = None
    if bounds is not None:
        low, high = (float(b) * total / c.sum() for b in bounds)
        if not (0 <= low < high) or not math.isfinite(high):
            raise SamplingDesignError("trim: the bounds must be 0 ≤ LOW < HIGH (times the mean weight)", "trim")
    if bounds is not None:
        _check_feasible(columns, c, low, high, total)
    done = 0
    converged = False
    start = w.copy()
    factors = {name: np.ones(target.size) for name, (codes, target) in columns.items()}
    for done in range(1, iterations + 1):
        for name, (codes, target) in columns.items():
            if bounds is None:
                current = np.bincount(codes, weights=c * w, minlength=target.size) / total
                factor = np.divide(target, current, out=np.zeros_like(target), where=current > 0)
                w = w * factor[codes]
                continue
            raw = start * np.prod([f[col[0]] for f, col in zip(factors.values(), columns.values())], axis=0)
            unscaled = raw / factors[name][codes]
            for g in np.flatnonzero(target > 0):
                rows = codes == g
                factors[name][g] = _bounded_factor(unscaled[rows], c[rows], low, high, target[g] * total, name)
        if bounds is not None:
            raw = start * np.prod([f[col[0]] for f, col in zip(factors.values(), columns.values())], axis=0)
            w = np.clip(raw, low, high)
        gap = max(float(np.max(np.abs(np.bincount(codes, weights=c * w, minlength=target.size) / total - target)))
                  for codes, target in columns.values())
        if gap < tolerance:
            converged = True
            break
    if not converged:
        if bounds is not None:
            raise SamplingDesignError(
                f"trim: raking within the bounds {bounds[0]:g}..{bounds[1]:g} × the mean weight did "
                f"not meet the margins in {iterations} rounds; widen the bounds", "trim")
        raise SamplingDesignError(
            f"margins: raking did not converge in {iterations} rounds (the margins may contradict "
            "each other on the respondents' combinations)", "margins")
    if not np.all(np.isfinite(w)):
        raise SamplingDesignError("margins: raking made weights that are not finite numbers", "margins")
    _check_squares(w, c, "margins: the raked weights", "margins")
    achieved = {name: (np.bincount(codes, weights=c * w, minlength=target.size) / float(c @ w)).tolist()
                for name, (codes, target) in columns.items()}
    positive = (w > 0) & (c > 0)
    trimmed = 0
    if bounds is not None:
        at_bound = np.isclose(w, low, rtol=1e-12, atol=0) | np.isclose(w, high, rtol=1e-12, atol=0)
        trimmed = int(round(float(c[at_bound].sum())))
    mean = float(c @ w) / float(c.sum())  # the weights' range × their mean: the same whatever their scale
    return RakeResult(weights=frozen(w), achieved=achieved, iterations=done, converged=converged,
                      smallest=float(w[positive].min()) / mean, largest=float(w[positive].max()) / mean,
                      effective_n=float((c @ w) ** 2 / (c @ w**2)),
                      bounds=None if bounds is None else (float(bounds[0]), float(bounds[1])), trimmed=trimmed)


def _check_feasible(columns: dict, c: np.ndarray, low: float, high: float, total: float) -> None:
    """Refuse bounds that no weights can keep while meeting the margins: a linear program over the
    cells (the combinations of the raking variables' categories) — some weights within the bounds
    meet the margins exactly when some mean weight per cell within them does."""
    from scipy.optimize import linprog

    codes = np.column_stack([col[0] for col in columns.values()])
    cells, inverse = np.unique(codes, axis=0, return_inverse=True)
    sizes = np.bincount(inverse.reshape(-1), weights=c, minlength=len(cells))
    rows, goals = [], []
    for m, (_, target) in enumerate(columns.values()):
        for g in range(target.size):
            rows.append(np.where(cells[:, m] == g, sizes, 0.0))
            goals.append(target[g] * total)
    found = linprog(np.zeros(len(cells)), A_eq=np.array(rows), b_eq=np.array(goals), bounds=[(low, high)] * len(cells),
                    method="highs")
    if found.status == 2:
        raise SamplingDesignError("trim: no weights within the bounds meet the margins; widen the bounds", "trim")


def _bounded_factor(a: np.ndarray, c: np.ndarray, low: float, high: float, goal: float, name: str) -> float:
    """The factor s with ``Σ c·clip(s·a, low, high) = goal`` (increasing in s: bisection on log s, to
    the last bit).  One category's step of raking within bounds: the weights clipped at a bound stay
    there, the others take the whole adjustment (Deville & Särndal 1992, calibration with a
    truncated distance, solved block by block as iterative proportional fitting solves raking)."""
    if goal < low * c.sum() * (1 - 1e-12) or goal > high * c.sum() * (1 + 1e-12) or \
            not np.all(np.isfinite(a) & (a > 0)) or not (1e-250 < a.min() and a.max() < 1e250):
        raise SamplingDesignError(f"trim: {name}: a category's population share cannot be met with weights within the "
                                  "bounds; widen them", "trim")
    lo, hi = math.log(low / a.max()) if low > 0 else math.log(1e-300 / a.max()), math.log(high / a.min())
    for _ in range(200):
        mid = (lo + hi) / 2
        if float(c @ np.clip(math.exp(mid) * a, low, high)) < goal:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return math.exp((lo + hi) / 2)


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


__all__ = ["RakeResult", "SamplingDesignError", "SurveyDesign", "WeightedCrosstabResult", "WeightedResult",
           "calibration_residuals", "debiasing_matrix", "domain_degrees_of_freedom", "exact_at", "fieller",
           "kish_note", "kish_respondents", "korn_graubard",
           "linearized_covariance", "linearized_variance", "rake", "raked_covariance", "raked_crosstab",
           "raked_design_estimate", "raked_difference", "raked_estimate", "raked_mean",
           "survey_design",
           "WeightedDifference", "weighted_crosstab", "weighted_design_estimate", "weighted_difference",
           "weighted_estimate", "weights_degrees_of_freedom", "DESIGN_UNION"]
