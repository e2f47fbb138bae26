"""A sampling design's variances by Taylor linearization, and their degrees of freedom.

The stratified, clustered variance of a weighted mean (with the finite-population correction), the
covariance of several scores (the middle of a sandwich), a domain's degrees of freedom and the
weights' Satterthwaite degrees of freedom.  The statistics ("module notes" below) are in the notes of
:mod:`deniable.estimators.weights`: "Its variance" and "Intervals".
"""

from __future__ import annotations

import numpy as np

from .weights import SurveyDesign


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
