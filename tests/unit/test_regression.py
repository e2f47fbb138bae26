"""The randomized-response logit: against statsmodels, against independent fits, and its errors."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import chi2

from deniable.client.mechanism import mechanism
from deniable.client.randomizer import randomize
from deniable.estimators import RegressionError, Term, estimate, regress
from deniable.estimators.result import Result
from deniable.estimators.rrlogit import Data, derivatives, loglik

YEAR = Term("year", (0, 1), ("1", "2", "3"))
GENDER = Term("gender", (2,), ("m", "f"))


def survey_data(n, epsilon, seed=1, beta=(-1.0, 0.5, 1.0, -0.5), numeric=False):
    """Option 0 = "Yes" with a logit in year (3 levels) and gender; reports randomized at ε."""
    rng = np.random.default_rng(seed)
    year = rng.choice(3, size=n, p=[0.4, 0.35, 0.25])
    gender = rng.integers(0, 2, size=n)
    columns = [year == 1, year == 2, gender == 1]
    if numeric:
        columns.append(rng.normal(size=n))
    X = np.column_stack(columns).astype(float)
    coef = np.array(beta + ((0.4,) if numeric else ()))
    truth = np.where(rng.random(n) < expit(np.column_stack([np.ones(n), X]) @ coef), 0, 1)
    reports = truth if epsilon is None else randomize(truth, 2, epsilon, rng=rng)
    return X, truth, reports


@pytest.mark.parametrize("epsilon,tolerance", [(None, 1e-8), (20.0, 1e-6)])
def test_binary_fit_equals_statsmodels_logit_when_p_is_one(epsilon, tolerance):
    X, truth, _ = survey_data(3000, None, numeric=True)
    result = regress(truth, X, epsilon, k=2, profile=False)
    # statsmodels models P(y = 1): our reference option is the last (1), so its coefficients are
    # those of P(option 0) — fit statsmodels to 1 − truth.
    reference = sm.Logit(1 - truth, sm.add_constant(X)).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
    np.testing.assert_allclose(result.params, reference.params, atol=tolerance)
    np.testing.assert_allclose(result.std_error, reference.bse, atol=tolerance)
    assert result.loglik == pytest.approx(reference.llf, abs=1e-5)
    assert result.lr_stat == pytest.approx(reference.llr, abs=1e-5)


@pytest.mark.parametrize("epsilon,tolerance", [(None, 1e-8), (20.0, 1e-6)])
def test_multinomial_fit_equals_statsmodels_mnlogit_when_p_is_one(epsilon, tolerance):
    rng = np.random.default_rng(2)
    n = 3000
    X = np.column_stack([rng.integers(0, 2, n), rng.normal(size=n)]).astype(float)
    design = sm.add_constant(X)
    eta = np.column_stack([np.zeros(n), design @ [0.2, 0.5, -0.3], design @ [-0.4, 0.1, 0.6]])
    prob = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(prob, axis=1)).sum(axis=1)
    result = regress(y, X, epsilon, k=3, reference=0, profile=False)
    reference = sm.MNLogit(y, design).fit(disp=0, method="newton", tol=1e-12, maxiter=100)
    np.testing.assert_allclose(result.params, np.asarray(reference.params).T.reshape(-1), atol=tolerance)
    np.testing.assert_allclose(result.std_error, np.asarray(reference.bse).T.reshape(-1), atol=tolerance)


def test_derivatives_match_finite_differences():
    rng = np.random.default_rng(0)
    for k, q in ((2, 0.2), (3, 0.1), (4, 0.05)):
        X = np.column_stack([np.ones(40), rng.normal(size=(40, 2))])
        data = Data(X, rng.integers(0, k, 40), rng.integers(1, 5, 40).astype(float), k, 1 - (k - 1) * q, q, 1)
        theta = rng.normal(size=(k - 1) * 3) * 0.5
        value, gradient, hessian = derivatives(theta, data)
        h = 1e-6
        unit = np.eye(theta.size)
        numeric_gradient = [(loglik(theta + h * e, data) - loglik(theta - h * e, data)) / (2 * h) for e in unit]
        numeric_hessian = [(derivatives(theta + h * e, data)[1] - derivatives(theta - h * e, data)[1]) / (2 * h)
                           for e in unit]
        np.testing.assert_allclose(gradient, numeric_gradient, atol=1e-6)
        np.testing.assert_allclose(hessian, numeric_hessian, atol=1e-6)


def test_frequency_weights_equal_the_expanded_rows():
    X, _, reports = survey_data(2000, 1.0)
    rows = regress(reports, X, 1.0, k=2, profile=False)
    patterns, inverse, counts = np.unique(np.column_stack([X, reports]), axis=0, return_inverse=True,
                                          return_counts=True)
    weighted = regress(patterns[:, -1].astype(int), patterns[:, :-1], 1.0, k=2, weights=counts, profile=False)
    np.testing.assert_allclose(weighted.params, rows.params, atol=1e-9)
    np.testing.assert_allclose(weighted.std_error, rows.std_error, atol=1e-9)
    assert weighted.n == rows.n == 2000 and weighted.patterns == rows.patterns == 12


def test_the_fit_maximizes_the_likelihood_of_the_reports_against_a_generic_optimizer():
    X, _, reports = survey_data(1500, 1.0, seed=5)
    result = regress(reports, X, 1.0, k=2, terms=[YEAR, GENDER])
    m = mechanism(2, 1.0)
    data = Data(np.column_stack([np.ones(len(X)), X]), reports, np.ones(len(X)), 2, m.p, m.q, 1)
    generic = minimize(lambda t: -loglik(t, data), np.zeros(4), method="Nelder-Mead",
                       options={"xatol": 1e-9, "fatol": 1e-10, "maxiter": 20_000, "maxfev": 40_000})
    np.testing.assert_allclose(result.params, generic.x, atol=2e-4)
    assert result.loglik >= -generic.fun - 1e-9


def test_profile_interval_ends_are_where_the_profile_drops_by_half_chi2():
    X, _, reports = survey_data(1500, 2.0, seed=6)
    result = regress(reports, X, 2.0, k=2, terms=[YEAR, GENDER])
    m = mechanism(2, 2.0)
    data = Data(np.column_stack([np.ones(len(X)), X]), reports, np.ones(len(X)), 2, m.p, m.q, 1)
    drop = chi2.ppf(0.95, 1) / 2
    for index in (0, 3):
        for end in (result.profile_low[index], result.profile_high[index]):
            others = [i for i in range(4) if i != index]

            def negative(sub, end=end, index=index, others=others):
                theta = np.empty(4)
                theta[index], theta[others] = end, sub
                return -loglik(theta, data)

            # independent: a derivative-free fit of the other coefficients at the end
            profile = minimize(negative, np.delete(result.params, index), method="Nelder-Mead",
                               options={"xatol": 1e-10, "fatol": 1e-11, "maxiter": 20_000})
            assert result.loglik + profile.fun == pytest.approx(drop, abs=1e-5)
        assert result.profile_low[index] < result.params[index] < result.profile_high[index]


def test_saturated_model_gives_each_groups_consistent_estimate_and_its_std_error():
    # One categorical covariate: the model is saturated, so the predicted prevalence of each group
    # is the group's own maximum-likelihood estimate, which deniable.estimators.estimate computes
    # independently (and its standard error is the exact one of the unbiased estimate there).
    rng = np.random.default_rng(8)
    group = rng.choice(3, size=6000, p=[0.5, 0.3, 0.2])
    truth = np.where(rng.random(6000) < np.array([0.2, 0.35, 0.5])[group], 0, 1)
    reports = randomize(truth, 2, 1.0, rng=rng)
    X = np.column_stack([group == 1, group == 2]).astype(float)
    result = regress(reports, X, 1.0, k=2, terms=[Term("g", (0, 1), ("a", "b", "c"))], profile=False)
    for g, level in enumerate("abc"):
        alone = estimate(np.bincount(reports[group == g], minlength=2), 1.0)
        effect = next(e for e in result.effects if e.level == level and e.option == 0)
        assert effect.prevalence == pytest.approx(alone.consistent[0], abs=1e-8)
        se = (effect.prevalence_high - effect.prevalence_low) / (2 * 1.959964)  # roughly, on this scale
        assert se == pytest.approx(alone.std_error[0], rel=0.05)


def test_lr_test_against_a_separately_fitted_intercept_only_model():
    X, _, reports = survey_data(3000, 2.0, seed=9)
    full = regress(reports, X, 2.0, k=2, profile=False)
    null = regress(reports, None, 2.0, k=2, profile=False)
    assert full.loglik_null == pytest.approx(null.loglik, abs=1e-6)
    assert full.lr_stat == pytest.approx(2 * (full.loglik - null.loglik), abs=1e-5)
    assert full.lr_df == 3 and full.lr_p_value == pytest.approx(chi2.sf(full.lr_stat, 3))


def test_average_marginal_effect_of_a_numeric_covariate_matches_finite_differences():
    X, _, reports = survey_data(3000, 2.0, seed=10, numeric=True)
    result = regress(reports, X, 2.0, k=2, names=["y2", "y3", "f", "age"],
                     terms=[YEAR, GENDER, Term("age", (3,))], profile=False)
    ame = next(e for e in result.effects if e.term == "age" and e.option == 0).effect
    beta = result.params
    design = np.column_stack([np.ones(len(X)), X])
    h = 1e-5
    up, down = design.copy(), design.copy()
    up[:, 4] += h
    down[:, 4] -= h
    assert ame == pytest.approx(np.mean((expit(up @ beta) - expit(down @ beta)) / (2 * h)), abs=1e-7)


def test_summary_and_json_say_what_was_fitted():
    X, _, reports = survey_data(1000, 1.0)
    result = regress(reports, X, 1.0, k=2, names=["year[2]", "year[3]", "gender[f]"], terms=[YEAR, GENDER],
                     outcome="drugs", options=["Yes", "No"])
    text = result.summary()
    for expected in ("drugs", "reference option: No", "ε = 1.0000", "LR test", "profile", "year[3]",
                     "Predicted prevalence by group"):
        assert expected in text
    data = result.to_dict()
    assert data["reference"] == "No" and len(data["coefficients"]) == 4 and data["lr_test"]["df"] == 3
    assert isinstance(result, Result) and result.as_dict() == data  # of the Result family; as_dict, its alias
    assert {e["level"] for e in data["effects"] if e["term"] == "year"} == {"1", "2", "3"}


def test_the_first_line_names_the_modelled_option():
    """A yes/no outcome's coefficients are the log-odds of the option that is not the reference against it."""
    X, _, reports = survey_data(1000, 1.0)
    for reference, models in ((None, "log-odds of Yes against No"), (0, "log-odds of No against Yes")):
        result = regress(reports, X, 1.0, k=2, names=["year[2]", "year[3]", "gender[f]"], terms=[YEAR, GENDER],
                         outcome="drugs", options=["Yes", "No"], reference=reference, profile=False)
        assert result.models == models and result.summary().splitlines()[0].endswith(f": {models}")
        assert next(iter(result.to_dict().items())) == ("models", models)
    from deniable.estimators.regression_result import modelled
    assert modelled(["Never", "Once", "Several times"], 0) == "log-odds of each of Once, Several times against Never"


# ---------------------------------------------------------------- errors a person can act on


def test_separation_is_named_with_the_group():
    rng = np.random.default_rng(3)
    group = np.repeat([0, 1], 200)
    m = mechanism(2, 1.0)
    # group 1 reports "Yes" less often than randomization alone would (share < q): no finite maximum
    reports = np.where(group == 0, rng.random(400) < 0.5, rng.random(400) < m.q - 0.1).astype(int)
    reports = 1 - reports  # option 0 = "Yes"
    with pytest.raises(RegressionError, match=r"separation: .*'0' to 0 where g = b") as info:
        regress(reports, (group == 1).astype(float), 1.0, k=2, terms=[Term("g", (0,), ("a", "b"))])
    assert info.value.kind == "separation" and "\n" not in str(info.value)


def test_an_empty_cell_is_named():
    X = np.column_stack([np.zeros(50), np.tile([0.0, 1.0], 25)])
    with pytest.raises(RegressionError, match=r"empty cell: no response has year = '2'"):
        regress(np.tile([0, 1], 25), X, 1.0, k=2, terms=[Term("year", (0,), ("1", "2")), Term("x", (1,))])


def test_collinear_covariates_are_named():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2, 100).astype(float)
    X = np.column_stack([a, 1 - a])
    with pytest.raises(RegressionError, match=r"collinear covariates: 'sex\[m\]' is a linear combination of "
                                              r"'Intercept', 'sex\[f\]'"):
        regress(rng.integers(0, 2, 100), X, 1.0, k=2, names=["sex[f]", "sex[m]"])


@pytest.mark.parametrize("kwargs,match", [
    ({"reports": np.array([0.5, 1.0])}, "integer option indices"),
    ({"reports": np.array([0, 3]), "k": 2}, r"reports must be option indices 0\.\.1"),
    ({"covariates": np.array([[np.nan], [1.0]])}, "finite"),
    ({"covariates": np.ones((3, 1))}, "one row per report"),
    ({"weights": np.array([1.0, -1.0])}, "non-negative"),
    ({"names": ["a", "b"]}, "one entry per covariate column"),
    ({"reference": 5}, "reference must be an option index"),
    ({"epsilon": -1.0}, "epsilon must be"),
    ({"k": 1}, "k must be an integer >= 2"),
])
def test_bad_input_names_the_argument(kwargs, match):
    args = {"reports": np.array([0, 1]), "covariates": np.array([[0.0], [1.0]]), "epsilon": 1.0}
    args.update(kwargs)
    with pytest.raises(RegressionError, match=match):
        regress(args.pop("reports"), args.pop("covariates"), args.pop("epsilon"), profile=False, **args)
