"""Design-based estimates (deniable.estimators.weights) against R's survey package, run for real.

With a question asked directly (p = 1) the weighted shares, their linearized standard errors and
the Korn–Graubard intervals must equal R's ``svymean`` and ``svyciprop(method = "beta")`` on
``svydesign(ids = ~cluster, strata = ~stratum, weights = ~w, fpc = ~N)`` to 1e-6; with randomized
reports, the report shares' numbers are R's and the mechanism maps them.  R and ``r-cran-survey``
are installed by the test command (scripts/test.sh); a missing R fails here, it does not skip.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from deniable import estimators
from deniable.client.mechanism import mechanism
from deniable.estimators.weights import (SamplingDesignError, korn_graubard, rake, survey_design, weighted_estimate,
                                         weights_degrees_of_freedom)
from support.kish import kish_n, with_floor
from support.r_survey import r_survey, sample, svyglm


@pytest.mark.slow  # R itself, six times: the full suite
@pytest.mark.parametrize("seed,fpc", [(1, False), (2, True), (3, False)])
def test_weighted_shares_standard_errors_and_intervals_equal_r_survey(tmp_path, seed, fpc):
    """The estimates and standard errors are R's ``svymean``; the interval is ``svyciprop(method =
    "beta")``'s recipe (korn_graubard at R's degf gives R's interval) on the smaller of degf and the
    weights' Satterthwaite degrees of freedom, ν computed in R from R's design object — so with these
    unequal weights it is wider than R's, and holds R's — joined with the exact interval of the same share
    at Kish's effective sample size (support/kish.py), which sets the third option's lower end at seed 3."""
    stratum, cluster, w, y, big_n = sample(seed)
    r_own = r_survey(tmp_path, stratum, cluster, w, y, big_n, fpc)
    expected = r_survey(tmp_path, stratum, cluster, w, y, big_n, fpc, kg_weights_df=True)
    design = survey_design(w, strata=stratum, clusters=cluster, population_clusters=big_n if fpc else None)
    ours = weighted_estimate(y, None, design, k=3)
    assert ours.estimate == pytest.approx(r_own[:, 0], abs=1e-10)
    assert ours.std_error == pytest.approx(r_own[:, 1], rel=1e-8)
    for share, se, low, high in r_own:  # R's own interval is the recipe at R's degrees of freedom
        assert korn_graubard(share, se**2, design.n, design.degrees_of_freedom, 0.95) == \
            pytest.approx((low, high), abs=1e-6)
    floored = [with_floor(low, high, share, kish_n(w)) for share, _, low, high in expected]
    assert ours.ci_low == pytest.approx([f[0] for f in floored], abs=1e-6)
    assert ours.ci_high == pytest.approx([f[1] for f in floored], abs=1e-6)
    assert weights_degrees_of_freedom(design) < design.degrees_of_freedom
    assert np.all(ours.ci_low < r_own[:, 2]) and np.all(ours.ci_high > r_own[:, 3])


@pytest.mark.slow  # R itself: the full suite
def test_randomized_reports_map_r_surveys_report_shares_through_the_mechanism(tmp_path):
    stratum, cluster, w, y, big_n = sample(4)  # y read as the reports of a 3-option question at ε = 1
    expected = r_survey(tmp_path, stratum, cluster, w, y, big_n, False, kg_weights_df=True)
    design = survey_design(w, strata=stratum, clusters=cluster)
    ours = weighted_estimate(y, 1.0, design, k=3)
    m = mechanism(3, 1.0)
    assert ours.report_share == pytest.approx(expected[:, 0], abs=1e-10)
    assert ours.estimate == pytest.approx((expected[:, 0] - m.q) / (m.p - m.q), abs=1e-9)
    assert ours.std_error == pytest.approx(expected[:, 1] / (m.p - m.q), rel=1e-8)
    mapped = np.clip((expected[:, 2:] - m.q) / (m.p - m.q), 0, 1)
    assert np.column_stack([ours.ci_low, ours.ci_high]) == pytest.approx(mapped, abs=1e-6)


def test_sampling_weights_are_not_frequency_weights():
    """The same numbers as frequency weights (each row w identical responses) claim far more precision."""
    rng = np.random.default_rng(7)
    w = rng.integers(1, 30, 200)
    y = rng.integers(0, 2, 200)
    sampling = weighted_estimate(y, 1.0, survey_design(w.astype(float)), k=2)
    frequency = estimators.estimate(np.bincount(np.repeat(y, w), minlength=2), 1.0, method="wald")
    assert sampling.estimate == pytest.approx(frequency.estimate, abs=1e-12)
    assert sampling.std_error[0] > 2 * frequency.std_error[0]


def test_raking_meets_the_margins_and_says_what_it_did():
    rng = np.random.default_rng(3)
    age = rng.choice(3, 500, p=[0.5, 0.3, 0.2])
    sex = rng.choice(2, 500, p=[0.3, 0.7])
    raked = rake(np.ones(500), {"age": age, "sex": sex}, {"age": [0.3, 0.4, 0.3], "sex": [0.5, 0.5]})
    assert raked.converged
    assert raked.achieved["age"] == pytest.approx([0.3, 0.4, 0.3], abs=1e-9)
    assert raked.achieved["sex"] == pytest.approx([0.5, 0.5], abs=1e-9)
    assert raked.weights.sum() == pytest.approx(500)
    assert raked.effective_n == pytest.approx(500 ** 2 / np.sum(raked.weights ** 2))
    assert 0 < raked.smallest < 1 < raked.largest


@pytest.mark.parametrize("call,field", [
    (lambda: survey_design([1, -1, 2]), "weights"),
    (lambda: survey_design([1, math.nan, 2]), "weights"),
    (lambda: survey_design([0.0, 0.0]), "weights"),
    (lambda: survey_design([1, 1, 1, 1], strata=[0, 0, 1, 1], clusters=[1, 2, 3, 3]), "strata"),
    (lambda: rake([1, 1, 1], {"a": np.array([0, 1, 1])}, {"a": [0.5, 0.6]}), "a"),
    (lambda: rake([1, 1, 1], {"a": np.array([0, 0, 0])}, {"a": [0.5, 0.5]}), "a"),
    (lambda: rake([1, 1], {"a": np.array([0, 1])}, {"b": [0.5, 0.5]}), "b"),
])
def test_bad_designs_name_their_field(call, field):
    with pytest.raises(SamplingDesignError) as caught:
        call()
    assert caught.value.field == field


def test_results_serialize_themselves():
    stratum, cluster, w, y, _ = sample(5)
    result = weighted_estimate(y, 2.0, survey_design(w, strata=stratum, clusters=cluster), k=3)
    json.dumps(result.to_dict(), allow_nan=False)
    assert "WeightedResult" in result.summary()


def _regression_sample(seed: int):
    rng = np.random.default_rng(seed)
    s = np.repeat(np.arange(3), 60)
    c = np.repeat(np.arange(18), 10) % 6  # six clusters of ten in each stratum, labels repeated across strata
    x1 = rng.normal(size=180) + 0.3 * c
    x2 = rng.integers(0, 2, 180).astype(float)
    w = rng.gamma(2.0, 20.0, 180)
    truth = rng.random(180) < 1 / (1 + np.exp(-(0.4 + 0.8 * x1 - 0.6 * x2 + 0.2 * s)))
    return s, c, x1, x2, w, truth


@pytest.mark.slow  # R itself
def test_design_regression_equals_r_svyglm(tmp_path):
    """Asked directly (p = 1): the pseudo-likelihood fit and its sandwich standard errors are R's
    ``svyglm(family = quasibinomial())`` on the same design."""
    s, c, x1, x2, w, truth = _regression_sample(5)
    coef, se = svyglm(tmp_path, {"y": truth.astype(int), "x1": x1, "x2": x2, "s": s, "c": c, "w": w})
    design = survey_design(w, strata=s, clusters=c)
    reports = np.where(truth, 0, 1)  # option 0 = the event, against the reference option 1
    ours = estimators.regress(reports, np.column_stack([x1, x2]), None, k=2, design=design, profile=False)
    assert ours.params == pytest.approx(coef, rel=1e-8)
    assert ours.std_error == pytest.approx(se, rel=1e-8)


def test_frequency_and_sampling_weights_give_different_standard_errors():
    """The same reports, covariates and numbers as weights: frequency weights (each row w identical
    responses) and sampling weights (each respondent stands for w people) fit the same coefficients,
    but the sampling design's standard errors come from the respondents, not from Σw."""
    s, c, x1, x2, w, truth = _regression_sample(6)
    reports = np.where(truth, 0, 1)
    X = np.column_stack([x1, x2])
    counts = np.rint(w).astype(int)
    frequency = estimators.regress(reports, X, 2.0, k=2, weights=counts, profile=False)
    sampling = estimators.regress(reports, X, 2.0, k=2, design=survey_design(counts.astype(float), strata=s,
                                                                              clusters=c), profile=False)
    assert sampling.params == pytest.approx(frequency.params, rel=1e-6)
    assert np.all(sampling.std_error > 2 * frequency.std_error)
    assert sampling.n == 180 and frequency.n == counts.sum()


def test_design_regression_scores_add_up_to_the_gradient():
    """The rows' scores at the fit, weighted and summed, are the gradient: zero at the maximum."""
    from deniable.estimators.regression import row_scores
    from deniable.estimators.rrlogit import Data, derivatives

    s, c, x1, x2, w, truth = _regression_sample(7)
    reports = np.where(truth, 0, 1)
    data = Data(np.column_stack([np.ones(180), x1, x2]), reports, w, 2, 0.7, 0.3, 1)
    theta = np.array([0.1, -0.2, 0.3])
    _, gradient, _ = derivatives(theta, data)
    assert (w[:, None] * row_scores(theta, data)).sum(axis=0) == pytest.approx(gradient, rel=1e-10)


def test_the_weighted_crosstab_is_the_kronecker_inverse_of_the_report_pairs_shares():
    """The joint estimate is ``(M₁ ⊗ M₂)⁻¹ λ̂`` with the channel matrices built from p and q and inverted
    by numpy (an independent computation of the per-respondent indicator the estimator averages), and
    the conditional shares are the joint ones over their row's total."""
    from deniable.estimators.weights import weighted_crosstab

    stratum, cluster, w, y, _ = sample(4)
    rng = np.random.default_rng(4)
    x = rng.integers(0, 2, y.size)
    x[:3] = -1  # skipped: weight 0
    design = survey_design(w, strata=stratum, clusters=cluster)
    ours = weighted_crosstab(x, y, 1.0, 2.0, design, k_row=2, k_col=3)
    m1, m2 = mechanism(2, 1.0), mechanism(3, 2.0)
    channel = [np.full((k, k), m.q) + np.eye(k) * (m.p - m.q) for k, m in ((2, m1), (3, m2))]
    both = x >= 0
    shares = np.array([[w[both] @ ((x[both] == a) & (y[both] == b)) for b in range(3)] for a in range(2)])
    shares /= w[both].sum()
    joint = (np.linalg.inv(np.kron(*channel)) @ shares.reshape(-1)).reshape(2, 3)
    assert ours.report_share == pytest.approx(shares, abs=1e-12)
    assert ours.joint_estimate == pytest.approx(joint, abs=1e-12)
    assert ours.conditional_estimate == pytest.approx(joint / joint.sum(axis=1, keepdims=True), abs=1e-12)
    assert ours.n == int(both.sum()) and np.all(ours.joint_std_error > 0)


def test_the_weighted_difference_of_two_arms_is_the_difference_of_their_weighted_means():
    from deniable.estimators.weights import weighted_difference

    stratum, cluster, w, y, _ = sample(6)
    arm = np.arange(y.size) % 2
    arm[:4] = -1
    design = survey_design(w, strata=stratum, clusters=cluster)
    ours = weighted_difference(y.astype(float), arm, design)
    means = [w[arm == g] @ y[arm == g] / w[arm == g].sum() for g in (0, 1)]
    assert ours.estimate == pytest.approx(means[1] - means[0], abs=1e-12)
    assert ours.n_groups == (int((arm == 0).sum()), int((arm == 1).sum()))
    assert ours.ci_low < ours.estimate < ours.ci_high
    with pytest.raises(SamplingDesignError, match="no respondent with a positive weight in group 1"):
        weighted_difference(y.astype(float), np.where(arm == 1, 0, arm), design)


def test_a_subset_with_no_weight_is_refused_by_name():
    design = survey_design([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(SamplingDesignError, match="subset: one flag per respondent"):
        weighted_estimate(np.array([0, 1, 0, 1]), None, design, k=2, subset=[True, False])
    with pytest.raises(SamplingDesignError, match="subset: no respondent"):
        weighted_estimate(np.array([0, 1, 0, 1]), None, design, k=2, subset=[False] * 4)


def test_fiellers_interval_is_the_set_of_ratios_the_data_do_not_reject():
    """Every ratio R inside the interval has (N − R·D)² ≤ t² Var(N − R·D), none just outside it;
    a denominator that cannot be told from 0 gives [0, 1]."""
    from deniable.estimators.weights import fieller

    n, d, v_n, v_nd, v_d, t_half = 0.06, 0.25, 4e-4, 2e-4, 9e-4, 1.97
    low, high = fieller(n, d, v_n, v_nd, v_d, t_half)

    def rejected(r):
        return (n - r * d) ** 2 > t_half**2 * (v_n - 2 * r * v_nd + r * r * v_d)

    grid = np.linspace(low, high, 201)
    assert not any(rejected(r) for r in grid)
    assert rejected(low - 1e-6) and rejected(high + 1e-6)
    assert low < n / d < high
    delta = t_half * math.sqrt((v_n - 2 * n / d * v_nd + (n / d) ** 2 * v_d) / d**2)  # the delta method's half-width
    assert high - n / d > delta and n / d - low > delta  # wider than the delta method's R ± t·se
    low0, high0 = fieller(n, d, v_n, 0.0, v_d, t_half)
    assert high0 - n / d > n / d - low0  # skewed upwards: the denominator's uncertainty
    assert fieller(0.01, 0.02, 1e-4, 0.0, 1e-3, 1.97) == (0.0, 1.0)


def test_a_crosstab_with_a_direct_row_has_the_subgroups_conditional_intervals():
    """With the row asked directly, the shares given a row are the --by domain estimates of that group,
    intervals included (Korn and Graubard's of the domain, through the column's mechanism)."""
    from deniable.estimators.weights import weighted_crosstab

    rng = np.random.default_rng(3)
    n = 300
    design = survey_design(rng.gamma(2.0, 1.0, n), clusters=rng.integers(0, 40, n))
    rows, cols = rng.integers(0, 2, n), rng.integers(0, 3, n)
    ct = weighted_crosstab(rows, cols, None, 1.5, design, k_row=2, k_col=3)
    for a in range(2):
        group = weighted_estimate(cols, 1.5, design, k=3, subset=rows == a)
        assert ct.conditional_estimate[a] == pytest.approx(group.estimate, abs=1e-12)
        assert ct.conditional_std_error[a] == pytest.approx(group.std_error, abs=1e-12)
        assert ct.conditional_ci_low[a] == pytest.approx(group.ci_low, abs=1e-12)
        assert ct.conditional_ci_high[a] == pytest.approx(group.ci_high, abs=1e-12)
    assert "Korn-Graubard beta interval of the row's domain" in ct.method


def _satterthwaite_by_hand(w, strata, clusters, big_n=None):
    """ν = (Σ_c a_c T_c²)²/Σ_c a_c² T_c⁴, one cluster at a time in plain Python (no numpy grouping)."""
    totals, stratum_of = {}, {}
    for wi, h, c in zip(w, strata, clusters):
        totals[(h, c)] = totals.get((h, c), 0.0) + float(wi)
        stratum_of[(h, c)] = h
    per_stratum = {h: sum(1 for key in totals if key[0] == h) for h in set(strata)}
    population = {h: n for h, n in zip(strata, big_n)} if big_n is not None else {}
    num = den = 0.0
    for key, total in totals.items():
        n_h = per_stratum[key[0]]
        a = n_h / (n_h - 1) * (1 - n_h / population[key[0]] if population else 1.0)
        num += a * total**2
        den += (a * total**2) ** 2
    return num**2 / den


@pytest.mark.parametrize("seed,fpc", [(1, False), (2, True), (3, False)])
def test_the_weights_degrees_of_freedom_are_satterthwaites(seed, fpc):
    """ν from the cluster totals of the weights (by hand), capped at clusters − strata; for a domain,
    the same with the weights outside it counted as 0, capped at the domain's clusters − strata."""
    stratum, cluster, w, y, big_n = sample(seed)
    design = survey_design(w, strata=stratum, clusters=cluster, population_clusters=big_n if fpc else None)
    by_hand = _satterthwaite_by_hand(w, stratum, cluster, big_n if fpc else None)
    assert weights_degrees_of_freedom(design) == pytest.approx(min(by_hand, design.degrees_of_freedom), rel=1e-12)
    rows = y == 1
    domain = _satterthwaite_by_hand(w * rows, stratum, cluster, big_n if fpc else None)
    from deniable.estimators.weights import domain_degrees_of_freedom
    assert weights_degrees_of_freedom(design, rows) == \
        pytest.approx(min(domain, domain_degrees_of_freedom(design, rows)), rel=1e-12)


def test_satterthwaites_degrees_of_freedom_match_the_variance_estimates_spread():
    """The derivation, checked by simulation: under its model (each cluster's mean residual normal
    with one variance), the linearized variance of a weighted mean has 2 E[V̂]²/Var[V̂] degrees of
    freedom; with 40 clusters of very unequal weight totals ν is far below 39, and the simulated
    value is within 5 % of it (less about one for the centring that ν leaves out)."""
    rng = np.random.default_rng(11)
    clusters = np.repeat(np.arange(40), 5)
    w = np.exp(1.2 * rng.standard_normal(200))
    design = survey_design(w, clusters=clusters)
    nu = weights_degrees_of_freedom(design)
    assert 3 < nu < 20
    totals = np.bincount(clusters, weights=w)
    draws = rng.standard_normal((40_000, 40)) * totals  # U_c ∝ T_c ē_c
    v = 40 / 39 * ((draws - draws.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    simulated = 2 * v.mean() ** 2 / v.var()
    assert nu - 1 - 0.05 * nu < simulated < nu + 0.05 * nu


def test_equal_weights_keep_r_surveys_interval_and_unequal_ones_widen_it():
    """With equal weights (and clusters of equal size) ν is the number of clusters, above the design's
    clusters − 1, so the interval is svyciprop(method = "beta")'s at degf (joined with the exact interval
    of the same share at Kish's n, here all 200); with weights of coefficient of variation about 1.5 and
    200 respondents ν is near a dozen and the interval holds R's."""
    rng = np.random.default_rng(5)
    reports = rng.integers(0, 3, 200)
    for clusters in (None, np.repeat(np.arange(20), 10)):
        equal = survey_design(np.full(200, 3.0), clusters=clusters)
        assert weights_degrees_of_freedom(equal) == equal.degrees_of_freedom
        ours = weighted_estimate(reports, 2.0, equal, k=3)
        m = mechanism(3, 2.0)
        for j in range(3):
            low, high = korn_graubard(ours.report_share[j], ours.report_std_error[j] ** 2, 200,
                                      equal.degrees_of_freedom, 0.95)
            kg = np.clip([(low - m.q) / (m.p - m.q), (high - m.q) / (m.p - m.q)], 0, 1)
            assert (ours.ci_low[j], ours.ci_high[j]) == pytest.approx(
                with_floor(*kg, ours.report_share[j], 200, m.p, m.q), abs=1e-12)
    sigma = math.sqrt(math.log(1 + 1.5**2))
    unequal = survey_design(np.exp(sigma * rng.standard_normal(200)))
    nu = weights_degrees_of_freedom(unequal)
    assert nu == pytest.approx(np.sum(unequal.weights**2) ** 2 / np.sum(unequal.weights**4), rel=1e-12)
    assert nu < 40
    ours = weighted_estimate(reports, None, unequal, k=3)
    for j in range(3):
        low, high = korn_graubard(ours.report_share[j], ours.report_std_error[j] ** 2, 200, 199, 0.95)
        assert ours.ci_low[j] < low and ours.ci_high[j] > high
    assert "Satterthwaite" in ours.method
