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


Where the parts live
--------------------
This module is the sampling design itself (:class:`SurveyDesign`, :func:`survey_design`, the weights'
checks, :class:`SamplingDesignError`); the estimators are in modules of one concern each, and every
name is importable from here as before (imported when first used, as the package's names are:
those modules import this one):

* :mod:`.linearization` — the variances by Taylor linearization, their degrees of freedom;
* :mod:`.survey_intervals` — Korn and Graubard's interval, Fieller's, the Kish rule;
* :mod:`.weighted` — k-ary randomized response under a design, two groups' difference;
* :mod:`.weighted_designs` — a randomized-response design's question under a design;
* :mod:`.weighted_crosstabs` — cross-tabs under a design or raked weights;
* :mod:`.raking` — raking (:func:`rake`), with trimming;
* :mod:`.raked` — estimates under raked weights (the calibration variance).

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
from dataclasses import dataclass

import numpy as np

from deniable.errors import FieldError

from .lazy import lazy_exports


class SamplingDesignError(FieldError):
    """A sampling design (weights, strata, clusters, margins) that cannot be used; ``field`` names the part.

    Not :class:`deniable.client.designs.DesignError`, which is a randomized-response design's."""


# This class was named DesignError until issue 37, a second class of that name beside the
# randomized-response design's (deniable.client.designs.DesignError).  Code outside the repository
# may import it from here, a public module, so the old name
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


def _frequencies(counts, n: int) -> np.ndarray:
    if counts is None:
        return np.ones(n)
    c = np.asarray(counts, dtype=float)
    if c.shape != (n,) or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise SamplingDesignError(f"counts: one non-negative count per row ({n}) needed", "counts")
    return c


# Where each name of the estimators' modules lives: ``from deniable.estimators.weights import rake``
# imports raking.py when first asked (PEP 562), so this module imports none of them and they import it.
_HOMES = {
    "linearized_variance": "linearization", "linearized_covariance": "linearization",
    "domain_degrees_of_freedom": "linearization", "_variance_of_totals": "linearization",
    "weights_degrees_of_freedom": "linearization",
    "korn_graubard": "survey_intervals", "KISH_TOLERANCE": "survey_intervals",
    "kish_respondents": "survey_intervals", "_whole_counts": "survey_intervals", "exact_at": "survey_intervals",
    "kish_note": "survey_intervals", "_with_floor": "survey_intervals", "fieller": "survey_intervals",
    "WeightedResult": "weighted", "_domain": "weighted", "weighted_estimate": "weighted",
    "WeightedDifference": "weighted", "weighted_difference": "weighted",
    "DESIGN_UNION": "weighted_designs", "weighted_design_estimate": "weighted_designs",
    "_unaffine_interval": "weighted_designs", "_design_result": "weighted_designs",
    "_design_floor": "weighted_designs", "_range_matrices": "weighted_designs", "_matrix_floor": "weighted_designs",
    "debiasing_matrix": "weighted_crosstabs", "WeightedCrosstabResult": "weighted_crosstabs",
    "AFFINE_TOLERANCE": "weighted_crosstabs", "_channel": "weighted_crosstabs",
    "weighted_crosstab": "weighted_crosstabs", "_crosstab": "weighted_crosstabs",
    "raked_crosstab": "weighted_crosstabs",
    "RAKE_TOLERANCE": "raking", "RAKE_ITERATIONS": "raking", "RakeResult": "raking", "rake": "raking",
    "_check_feasible": "raking", "_bounded_factor": "raking",
    "CALIBRATION_ROUNDS": "raked", "calibration_residuals": "raked", "raked_mean": "raked",
    "raked_estimate": "raked", "raked_covariance": "raked", "RAKED_DESIGN_METHOD": "raked",
    "RAKED_DESIGN_UNION": "raked", "raked_design_estimate": "raked", "raked_difference": "raked",
}


__getattr__, __dir__ = lazy_exports(globals(), _HOMES, _HOMES)


__all__ = ["RakeResult", "SamplingDesignError", "SurveyDesign", "WeightedCrosstabResult", "WeightedResult",
           "calibration_residuals", "debiasing_matrix", "domain_degrees_of_freedom", "exact_at", "fieller",
           "kish_note", "kish_respondents", "korn_graubard",
           "linearized_covariance", "linearized_variance", "rake", "raked_covariance", "raked_crosstab",
           "raked_design_estimate", "raked_difference", "raked_estimate", "raked_mean",
           "survey_design",
           "WeightedDifference", "weighted_crosstab", "weighted_design_estimate", "weighted_difference",
           "weighted_estimate", "weights_degrees_of_freedom", "DESIGN_UNION"]
