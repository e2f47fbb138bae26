"""Regression under weights raked from a sampling design (:func:`deniable.estimators.regress` with
``calibration=Calibration(…, design=…)``, :func:`deniable.server.survey.sampling.fit_raked_formula` with
``base=``) against R's survey package, run for real, on a stratified cluster sample with unequal
weights and a finite-population correction:

* the estimator itself, given R's raked weights: R's ``svyglm(y ~ x1 + x2, design = rake(svydesign(ids
  = ~c, strata = ~s, weights = ~w, fpc = ~N, nest = TRUE), …), family = quasibinomial())`` — the same
  coefficients and standard errors (the calibrated scores' cluster totals within strata), with some
  respondents who skipped the outcome (their rows kept in the calibration with weight 0);
* a randomized outcome (ε = 1, and Warner's design), against an independent computation: the raked
  weights from R's ``rake()``, the pseudo-likelihood maximized here by Newton steps on one row per
  respondent (a finite-difference Hessian), and the middle of the sandwich from R: ``vcov(svytotal(~s1
  + s2 + s3, raked))`` of the per-respondent scores at the estimate — the calibrated total's variance
  under the design, by R's own ``svyrecvar``.
"""

from __future__ import annotations

import numpy as np
import pytest

from deniable.client.mechanism import resolve
from deniable.estimators.regression import Calibration, RegressionError, regress
from deniable.estimators.weights import survey_design
from deniable.server.survey import sampling
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from support.r_survey import rake_design_svyglm, rake_design_total_vcov, rake_design_weights
from support.rr_fit import fit_independently

from ..cli.test_regress_rake_weights import DEFINITION, MARGINS, r_columns, r_totals, sample


def _base(design) -> object:
    return survey_design(design["w"], strata=design["s"], clusters=design["c"],
                         population_clusters=design["N"].astype(float))


@pytest.mark.slow  # R itself
def test_the_estimator_given_r_raked_weights_equals_r_svyglm(tmp_path):
    codes, design = sample(seed=31)
    coef, se, r_weights = rake_design_svyglm(tmp_path, r_columns(codes, design, design["w"]), r_totals(design["w"]),
                                             "y ~ x1 + x2", cluster="c", strata="s", fpc="N")
    drugs, year = codes["drugs"], codes["year"]
    answered = drugs >= 0
    assert not answered.all()
    result = regress(np.where(answered, drugs, 0), np.column_stack([year == 1, year == 2]).astype(float), None, k=2,
                     reference=1, profile=False,
                     calibration=Calibration(weights=r_weights, variables=(codes["sex"], codes["region"]),
                                             domain=answered, design=_base(design)))
    assert result.params == pytest.approx(coef, rel=1e-7, abs=1e-10)
    assert result.std_error == pytest.approx(se, rel=1e-7)
    assert result.n == answered.sum()
    # the design matters: the same raked weights with each respondent its own cluster give other errors
    plain = regress(np.where(answered, drugs, 0), np.column_stack([year == 1, year == 2]).astype(float), None, k=2,
                    reference=1, profile=False,
                    calibration=Calibration(weights=r_weights, variables=(codes["sex"], codes["region"]),
                                            domain=answered))
    assert plain.params == pytest.approx(result.params, rel=1e-12)
    assert np.max(np.abs(plain.std_error / result.std_error - 1)) > 1e-2


@pytest.mark.slow  # R itself
@pytest.mark.parametrize("outcome", ["stole", "warner"])
def test_a_randomized_outcome_equals_an_independent_computation(tmp_path, outcome):
    codes, design = sample(seed=32, n=800)
    survey = parse_definition(DEFINITION)
    dataset = Dataset(survey, {k: np.asarray(v) for k, v in codes.items()})
    _, _, result, raked = sampling.fit_raked_formula(dataset, sampling.parse_margins(MARGINS, survey),
                                                     f"{outcome} ~ year", base=_base(design), base_column="w")
    columns = r_columns(codes, design, design["w"])
    weights = rake_design_weights(tmp_path, columns, r_totals(design["w"]), cluster="c", strata="s", fpc="N")
    assert np.asarray(raked.raking.weights) == pytest.approx(weights, rel=1e-9)
    if outcome == "stole":
        mech = resolve(2, 1.0)
        p, q = mech.p, mech.q
    else:  # Warner's design: a Yes report with probability M[Yes, Yes] π + M[Yes, No] (1 − π)
        matrix = survey.question("warner").qtype.mechanism(survey.question("warner")).design.matrix
        p, q = matrix[0, 0], matrix[0, 1]
    year = codes["year"]
    Z = np.column_stack([np.ones(year.size), year == 1, year == 2]).astype(float)
    beta, s, information = fit_independently((codes[outcome] == 0).astype(float), Z, weights, p, q)
    meat = rake_design_total_vcov(tmp_path, {**columns, "s1": s[:, 0], "s2": s[:, 1], "s3": s[:, 2]},
                                  r_totals(design["w"]), ["s1", "s2", "s3"], cluster="c", strata="s", fpc="N")
    bread = np.linalg.inv(information)
    assert result.params == pytest.approx(beta, rel=1e-6, abs=1e-9)
    assert result.std_error == pytest.approx(np.sqrt(np.diag(bread @ meat @ bread)), rel=1e-6)
    assert result.n == year.size


def test_a_design_of_single_respondents_is_the_with_replacement_variance():
    """Raking from unequal weights without strata or clusters (each respondent its own cluster, one
    stratum, no fpc): the design's formula is the with-replacement one the calibration uses without a
    design, to rounding."""
    codes, design = sample(seed=33, n=300)
    answered = codes["drugs"] >= 0
    x = np.column_stack([codes["year"] == 1, codes["year"] == 2]).astype(float)
    w = design["w"] * (1 + 0.3 * codes["sex"])
    args = (np.where(answered, codes["drugs"], 0), x, None)
    common = {"k": 2, "profile": False}
    with_design = regress(*args, **common, calibration=Calibration(
        weights=w, variables=(codes["sex"],), domain=answered, design=survey_design(design["w"])))
    without = regress(*args, **common, calibration=Calibration(weights=w, variables=(codes["sex"],), domain=answered))
    assert with_design.std_error == pytest.approx(without.std_error, rel=1e-12)


def test_a_calibration_design_must_fit_the_rows():
    reports = np.array([0, 1, 0, 1, 1, 0])
    x = np.array([0.0, 0, 1, 1, 2, 2])
    sex = np.array([0, 1, 0, 1, 0, 1])
    with pytest.raises(RegressionError, match="sampling design must have one row per report"):
        regress(reports, x, None, k=2, calibration=Calibration(weights=np.ones(6), variables=(sex,),
                                                               design=survey_design(np.ones(5))))
    with pytest.raises(RegressionError, match="no frequency weights"):
        regress(reports, x, None, k=2, weights=np.full(6, 2), calibration=Calibration(
            weights=np.ones(6), variables=(sex,), design=survey_design(np.ones(6))))
