"""group_logit's frequency weights (estimators/group_logit.py, "Frequency weights"): distinct rows weighted by how
many respondents share them fit exactly as the expanded rows, one per respondent (coefficients, standard errors,
log-likelihood, n), for every design and with the nuisance parameter held on a bound; rows of weight 0 are left out;
weights that do not count respondents are refused naming the argument.  And the survey-level result that turns
the signs for ``reference`` Yes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from deniable.errors import FieldError
from deniable.estimators.group_logit import GroupRegressionResult, group_logit

DESIGNS = [("CDM", [0.25, 0.7], 0.15), ("CDMsym", [0.1, 0.1, 0.6, 0.05], 0.15), ("SLD", [0.25, 0.8], 0.8),
           ("UQTunknown", [0.3, 0.8], 0.4)]


def _yes_probability(model, p, share, nu, g):
    p = np.asarray(p)
    if model == "CDM":
        return (1 - nu) * (share + (1 - share) * p[g])
    if model == "CDMsym":
        yes, no = p[0::2][g], p[1::2][g]
        return (1 - nu) * (share * (1 - no) + (1 - share) * yes)
    if model == "SLD":
        return share * nu + (1 - share) * (1 - p[g])
    return p[g] * share + (1 - p[g]) * nu


def _patterns(model, p, nu, seed, n=2500):
    """Respondents with a categorical and a small-integer covariate (so that rows repeat), and their distinct
    (response, group, covariates) rows with counts."""
    rng = np.random.default_rng(seed)
    level = rng.integers(0, 3, n)
    x = rng.integers(0, 5, n).astype(float)
    X = np.column_stack([np.ones(n), level == 1, level == 2, x]).astype(float)
    share = expit(X @ np.array([-1.0, 0.6, 1.1, 0.2]))
    g = rng.integers(0, 2, n)
    y = (rng.random(n) < _yes_probability(model, p, share, nu, g)).astype(int)
    rows = np.column_stack([y, g + 1, X])
    distinct, counts = np.unique(rows, axis=0, return_counts=True)
    return (y, g + 1, X), (distinct[:, 0], distinct[:, 1], distinct[:, 2:], counts)


@pytest.mark.parametrize(("model", "p", "nu"), DESIGNS)
@pytest.mark.parametrize("seed", [1, 2])
def test_weighted_patterns_fit_as_the_expanded_rows(model, p, nu, seed):
    (y, g, X), (py, pg, pX, counts) = _patterns(model, p, nu, seed)
    assert counts.size < y.size / 5  # the patterns are far fewer than the rows
    rows = group_logit(model, p, y, g, X)
    weighted = group_logit(model, p, py, pg, pX, weights=counts)
    assert weighted.n == rows.n == y.size and weighted.names == rows.names
    assert weighted.coefficients == pytest.approx(rows.coefficients, abs=1e-9)
    assert weighted.se == pytest.approx(rows.se, rel=1e-8, nan_ok=True)
    assert weighted.loglik == pytest.approx(rows.loglik, rel=1e-12)
    assert weighted.nuisance_on_bound == rows.nuisance_on_bound


def test_a_nuisance_parameter_on_its_bound_is_held_alike():
    """CDM without cheaters at a small n: γ's maximum is at 0, held there in both fits."""
    (y, g, X), (py, pg, pX, counts) = _patterns("CDM", [0.25, 0.7], 0.0, seed=5, n=600)
    rows, weighted = group_logit("CDM", [0.25, 0.7], y, g, X), group_logit("CDM", [0.25, 0.7], py, pg, pX,
                                                                             weights=counts)
    assert rows.nuisance_on_bound and weighted.nuisance_on_bound
    assert weighted.coefficients == pytest.approx(rows.coefficients, abs=1e-9)
    assert weighted.se == pytest.approx(rows.se, rel=1e-8, nan_ok=True)


def test_rows_of_weight_zero_are_left_out():
    (y, g, X), (py, pg, pX, counts) = _patterns("SLD", [0.25, 0.8], 0.8, seed=3)
    extra = np.r_[counts, 0, 0]
    fit = group_logit("SLD", [0.25, 0.8], np.r_[py, 1, 0], np.r_[pg, 1, 2], np.vstack([pX, pX[:2] + 7]),
                      weights=extra)
    plain = group_logit("SLD", [0.25, 0.8], py, pg, pX, weights=counts)
    assert fit.coefficients.tolist() == plain.coefficients.tolist() and fit.n == plain.n


@pytest.mark.parametrize("weights", [[1, 2, 1.5, 1], [1, -1, 1, 1], [1, 1, 1], [1, np.nan, 1, 1], [0, 0, 0, 0]])
def test_weights_that_do_not_count_respondents_are_refused(weights):
    with pytest.raises(FieldError) as refused:
        group_logit("SLD", [0.25, 0.8], [1, 0, 1, 0], [1, 1, 2, 2], np.ones((4, 1)), weights=weights)
    assert refused.value.field == "weights"


def test_the_survey_result_turns_the_signs_for_reference_yes():
    (y, g, X), _ = _patterns("UQTunknown", [0.3, 0.8], 0.4, seed=4)
    fit = group_logit("UQTunknown", [0.3, 0.8], y, g, X, ["Intercept", "a", "b", "x"])
    kept = GroupRegressionResult.of(fit, outcome="q", options=("Yes", "No"), reference=1,
                                    nuisance_words="yes to the unrelated question (π_UQ)", patterns=40)
    turned = GroupRegressionResult.of(fit, outcome="q", options=("Yes", "No"), reference=0,
                                      nuisance_words="yes to the unrelated question (π_UQ)", patterns=40)
    assert kept.models == "log-odds of Yes against No" and turned.models == "log-odds of No against Yes"
    assert turned.fit.coefficients[:4].tolist() == (-fit.coefficients[:4]).tolist()
    assert turned.fit.lower[:4].tolist() == (-fit.upper[:4]).tolist()
    assert turned.fit.coefficients[4] == fit.coefficients[4] and turned.nuisance == kept.nuisance
    assert [r["z"] for r in turned.coefficient_rows()] == pytest.approx([-r["z"] for r in kept.coefficient_rows()])
    assert [r["p_value"] for r in turned.coefficient_rows()] == pytest.approx(
        [r["p_value"] for r in kept.coefficient_rows()])
    assert "yes to the unrelated question (π_UQ), 95% interval [" in kept.summary()
    data = kept.to_dict()
    assert list(data)[:6] == ["models", "modelled", "outcome", "options", "reference", "patterns"]
    assert data["names"][-1] == "piUQ" and data["nuisance"]["name"] == "piUQ"
    with pytest.raises(FieldError):
        GroupRegressionResult.of(fit, outcome="q", options=("Yes", "No"), reference=2, nuisance_words="",
                                 patterns=1)
