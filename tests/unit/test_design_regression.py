"""Regression with a randomized-response design's matrix in the likelihood (issue 24).

``P(report r | x) = Σ_t M[r, t] π_t(x)`` (:mod:`deniable.estimators.rrlogit`, "Any design"): the fit
recovers a known logit model, equals a maximum-likelihood fit written out here independently, and
with k-ary randomized response's matrix equals the k-ary fit.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.optimize import minimize
from scipy.special import expit

from deniable.client.designs import custom, forced, sample
from deniable.client.mechanism import TWO_32, resolve
from deniable.estimators import RegressionError, regress
from deniable.estimators.rrlogit import Data, derivatives, loglik
from deniable.server.cli import cli
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.regression import parse_formula

DESIGN = forced(0.6, [0.3, 0.1])  # truth with 0.6, else "Yes" 0.3, "No" 0.1: p₁ ≠ p₀
BETA = (-0.4, 0.7)  # log-odds of "Yes" (option 0; "No" is the reference) = −0.4 + 0.7 x


def simulate(design, n, seed, beta=BETA):
    """x ∈ {−2, …, 2}; true answer "Yes" (0) with probability expit(β₀ + β₁x); reports through the design."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, size=n).astype(float)
    truth = np.where(rng.random(n) < expit(beta[0] + beta[1] * x), 0, 1)
    reports = sample(design, truth, rng.integers(0, TWO_32, size=n, dtype=np.uint64))
    return x, reports


def collapse(x, reports):
    """Weighted patterns (x, report): the independent fit sums over them."""
    keys, counts = np.unique(np.column_stack([x, reports]), axis=0, return_counts=True)
    return keys[:, 0], keys[:, 1].astype(int), counts.astype(float)


def independent_fit(matrix, x, reports):
    """The likelihood written out for a binary outcome: π = expit(b₀ + b₁x) the share of option 0,
    ``P(r | x) = M[r, 0] π + M[r, 1] (1 − π)``; maximized by scipy (Nelder–Mead, then BFGS)."""
    xs, rs, ws = collapse(x, reports)
    total = ws.sum()

    def negative(b):
        pi = expit(b[0] + b[1] * xs)
        return -float(ws @ np.log(matrix[rs, 0] * pi + matrix[rs, 1] * (1 - pi))) / total

    def gradient(b):
        pi = expit(b[0] + b[1] * xs)
        lik = matrix[rs, 0] * pi + matrix[rs, 1] * (1 - pi)
        g = ws * (matrix[rs, 0] - matrix[rs, 1]) * pi * (1 - pi) / lik
        return -np.array([g.sum(), g @ xs]) / total

    start = minimize(negative, np.zeros(2), method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-14}).x
    return minimize(negative, start, jac=gradient, method="BFGS", options={"gtol": 1e-12}).x


def test_forced_response_with_unequal_forcing_equals_an_independent_fit_and_recovers_the_model():
    x, reports = simulate(DESIGN, 200_000, seed=1)
    result = regress(reports, x, None, matrix=DESIGN.matrix, names=["x"], options=["Yes", "No"], profile=False)
    assert list(result.params) == pytest.approx(list(independent_fit(DESIGN.matrix, x, reports)), abs=1e-6)
    # consistency: at n = 200,000 the estimate is within 4 standard errors of the truth, which are small
    assert np.all(np.abs(result.params - np.array(BETA)) < 4 * result.std_error)
    assert np.all(result.std_error < 0.05)
    assert result.epsilon == pytest.approx(DESIGN.epsilon) and math.isnan(result.p)
    assert "misclassification matrix" in result.summary()
    # the k-ary model ignoring the design (p and q of randomized response at the same ε) is biased here
    wrong = regress(reports, x, DESIGN.epsilon, names=["x"], profile=False)
    assert abs(wrong.params[0] - BETA[0]) > 10 * result.std_error[0]


def test_the_kary_matrix_gives_exactly_the_kary_fit():
    """M = q + (p − q) I at ε: the matrix path equals the p/q path (k = 3, a covariate, profile intervals)."""
    rng = np.random.default_rng(4)
    n, k, eps = 3000, 3, 1.5
    x = rng.normal(size=n)
    eta = np.column_stack([0.3 + 0.8 * x, -0.2 - 0.5 * x, np.zeros(n)])
    pi = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    truth = (rng.random(n)[:, None] > np.cumsum(pi, axis=1)).sum(axis=1)
    mech = resolve(k, eps)
    keep = rng.random(n) < mech.p - mech.q
    reports = np.where(keep, truth, rng.integers(0, k, size=n))  # keep, else uniform: P(r = t) = p
    matrix = np.full((k, k), mech.q) + np.eye(k) * (mech.p - mech.q)
    kary = regress(reports, x, eps, k=k, names=["x"])
    general = regress(reports, x, None, matrix=matrix, names=["x"])
    assert list(general.params) == pytest.approx(list(kary.params), abs=1e-9)
    assert list(general.std_error) == pytest.approx(list(kary.std_error), rel=1e-7)
    assert list(general.profile_low) == pytest.approx(list(kary.profile_low), abs=1e-7)
    assert general.loglik == pytest.approx(kary.loglik, rel=1e-12)
    assert general.loglik_null == pytest.approx(kary.loglik_null, rel=1e-9)
    assert general.epsilon == pytest.approx(kary.epsilon, rel=1e-12)
    for mine, theirs in zip(general.effects, kary.effects):
        assert (mine.prevalence, mine.effect) == pytest.approx((theirs.prevalence, theirs.effect), abs=1e-8, nan_ok=True)


@pytest.mark.parametrize("matrix", [
    [[0.6, 0.0, 0.1], [0.3, 0.7, 0.2], [0.1, 0.3, 0.7]],  # a zero cell: not ε-LDP, still a likelihood
    [[0.5, 0.2, 0.1], [0.2, 0.5, 0.3], [0.2, 0.2, 0.5], [0.1, 0.1, 0.1]],  # four reports of three answers
])
def test_the_derivatives_are_those_of_the_likelihood(matrix):
    """Gradient and Hessian of the matrix likelihood against central finite differences of ℓ."""
    rng = np.random.default_rng(2)
    m = np.array(matrix)
    X = np.column_stack([np.ones(40), rng.normal(size=40)])
    r = rng.integers(0, m.shape[0], size=40)
    r[m[r, 0] + m[r, 1] + m[r, 2] == 0] = 1
    data = Data(X, r, rng.integers(1, 5, size=40).astype(float), 3, math.nan, math.nan, 2, m)
    theta = rng.normal(size=4) * 0.5
    value, gradient, hessian = derivatives(theta, data)
    assert value == pytest.approx(loglik(theta, data), rel=1e-12)
    h = 1e-5
    numeric_g = np.array([(loglik(theta + h * e, data) - loglik(theta - h * e, data)) / (2 * h) for e in np.eye(4)])
    numeric_h = np.array([(derivatives(theta + h * e, data)[1] - derivatives(theta - h * e, data)[1]) / (2 * h)
                          for e in np.eye(4)])
    assert gradient == pytest.approx(numeric_g, abs=1e-6)
    assert hessian == pytest.approx(numeric_h, abs=1e-5)


def test_a_design_with_a_zero_cell_fits_and_is_labelled_not_ldp():
    design = custom([[0.6, 0.0], [0.4, 1.0]])  # "Yes" reported only by those whose answer is Yes
    x, reports = simulate(design, 40_000, seed=3)
    result = regress(reports, x, None, matrix=design.matrix, names=["x"], profile=False, matrix_label="custom design · not ε-LDP")
    assert math.isinf(result.epsilon) and "not ε-LDP" in result.summary()
    assert list(result.params) == pytest.approx(list(independent_fit(design.matrix, x, reports)), abs=1e-6)
    assert json.dumps(result.as_dict(), allow_nan=False)  # p and q are null, not NaN


@pytest.mark.parametrize("matrix, epsilon, words", [
    ([[0.5, 0.5], [0.5, 0.5]], None, "matrix is singular"),
    ([[0.5, 0.2], [0.4, 0.8]], None, "summing to 1"),
    ([[0.6, 0.2], [0.4, 0.8]], 1.0, "give epsilon=None"),
])
def test_a_bad_matrix_is_refused(matrix, epsilon, words):
    with pytest.raises(RegressionError, match=words):
        regress(np.array([0, 1, 0, 1]), None, epsilon, matrix=matrix)


def designed_survey():
    return parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"],
         "design": {"name": "forced", "p": 0.6, "forced": [0.3, 0.1]}},
        {"id": "year", "text": "Year?", "options": ["First", "Second"]}]})


def test_deniable_regress_fits_a_designed_outcome_with_its_matrix(tmp_path):
    """Through the command line: simulate a survey, regress the designed question on a direct one, and
    compare with the estimator on the CSV's rows with the design's matrix (not k-ary RR at its ε)."""
    from deniable.server.survey.responses_csv import read_responses_csv

    s = designed_survey()
    definition, truth, out = tmp_path / "s.json", tmp_path / "truth.json", tmp_path / "r.csv"
    definition.write_text(json.dumps(s.to_dict()))
    truth.write_text(json.dumps({"cheated": [0.3, 0.7], "year": [0.5, 0.5]}))
    runner = CliRunner()
    made = runner.invoke(cli, ["simulate", str(definition), "--n", "5000", "--truth", str(truth), "--seed", "2",
                               "-o", str(out)])
    assert made.exit_code == 0, made.output
    shown = runner.invoke(cli, ["regress", str(definition), str(out), "cheated ~ year", "--format", "json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    rows = read_responses_csv(out, s)
    direct = regress(rows.columns["cheated"], (rows.columns["year"] == 1).astype(float), None, matrix=DESIGN.matrix)
    assert [c["estimate"] for c in data["coefficients"]] == pytest.approx(list(direct.params), abs=1e-8)
    assert data["p"] is None and data["epsilon"] == pytest.approx(DESIGN.epsilon)
    table = runner.invoke(cli, ["regress", str(definition), str(out), "cheated ~ year"])
    assert table.exit_code == 0 and "forced design" in table.output, table.output


def test_a_designed_question_is_an_outcome_but_not_a_covariate():
    s = designed_survey()
    assert parse_formula("cheated ~ year", s).outcome.id == "cheated"
    with pytest.raises(Exception, match="covariate 'cheated'"):
        parse_formula("year ~ cheated", s)
