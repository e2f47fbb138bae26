"""Regression under raked weights (:func:`deniable.server.survey.sampling.fit_raked_formula`,
:func:`deniable.estimators.regress` with ``calibration=``) against R's survey package, run for real.

* A question asked directly as the outcome (p = 1): R's ``svyglm(y ~ x1 + x2, design = rake(svydesign(ids
  = ~1, weights = ~w), list(~sex, ~region), …), family = quasibinomial())`` — the same coefficients and
  standard errors (the sandwich with the calibration variance), with some respondents who skipped the
  outcome (NA in R: a calibrated design keeps their rows with weight 0).
* A randomized outcome (ε = 1), against an independent computation: the raked weights from R's
  ``rake()``, the pseudo-likelihood maximized here by Newton steps on one row per respondent (its own
  score, a finite-difference Hessian), and the middle of the sandwich from R: ``vcov(svytotal(~s1 + s2 +
  s3, raked))`` of the per-respondent scores at the estimate — the covariance of the calibrated total
  of the scores, which R computes by its own ``svyrecvar``.
"""

from __future__ import annotations

import numpy as np
import pytest

from deniable.client.mechanism import resolve
from deniable.estimators.regression import Calibration, RegressionError, regress
from deniable.server.survey import sampling
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.patterns import from_dataset
from support.r_survey import _run, rake_svymean, write_csv
from support.rr_fit import fit_independently

SURVEY = {"slug": "raked-regression", "title": "Raked regression", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "required": False},
    {"id": "stole", "text": "Stole?", "options": ["Yes", "No"], "epsilon": 1},
    {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"]},
    {"id": "sex", "text": "Sex?", "options": ["f", "m"]},
    {"id": "region", "text": "Region?", "options": ["north", "south", "east"]}]}
MARGINS = {"sex": np.array([0.5, 0.5]), "region": np.array([0.2, 0.3, 0.5])}


def sample(seed: int = 5, n: int = 700):
    """Respondents over-representing women and the north, answers depending on year, sex and region;
    ``drugs`` asked directly (skipped by some), ``stole`` randomized at ε = 1."""
    rng = np.random.default_rng(seed)
    sex = (rng.random(n) < 0.35).astype(np.int64)
    region = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    year = rng.integers(0, 3, n)
    truth = rng.random(n) < 0.15 + 0.1 * year + 0.15 * sex + 0.05 * region
    drugs = np.where(truth, 0, 1)
    drugs[rng.random(n) < 0.04] = -1
    mech = resolve(2, 1.0)
    stolen = rng.random(n) < 0.2 + 0.12 * year + 0.1 * sex
    keep = rng.random(n) < mech.p
    stole = np.where(keep, np.where(stolen, 0, 1), np.where(stolen, 1, 0))
    survey = parse_definition(SURVEY)
    return survey, Dataset(survey, {"drugs": drugs, "stole": stole, "year": year, "sex": sex, "region": region})


# svyglm of the raked design: rake() to the population totals (MARGINS.csv, as tests/support/r_survey.py
# writes it) run to 1e-13 of the total, IRLS to 1e-14; the coefficients, then their standard errors.
SVYGLM_RAKED = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
m <- read.csv(args[2])
des <- svydesign(ids = ~1, weights = ~w, data = d)
vars <- unique(m$var)
pop <- lapply(vars, function(v) { s <- m[m$var == v, ]; p <- data.frame(s$level, s$freq); names(p) <- c(v, "Freq"); p })
des <- rake(des, lapply(vars, function(v) as.formula(paste0("~", v))), pop, control = list(maxit = 1000, epsilon = 1e-13))
g <- svyglm(y ~ x1 + x2, design = des, family = quasibinomial(), control = glm.control(epsilon = 1e-14, maxit = 100))
cat(sprintf("%.15g", c(coef(g), sqrt(diag(vcov(g))))), sep = "\n")
"""

# vcov(svytotal) of the score columns s1, s2, s3 under the same raked design: the calibrated meat.
SVYTOTAL_RAKED = SVYGLM_RAKED.replace(
    "g <- svyglm(y ~ x1 + x2, design = des, family = quasibinomial(), control = glm.control(epsilon = 1e-14, maxit = 100))\n"
    'cat(sprintf("%.15g", c(coef(g), sqrt(diag(vcov(g))))), sep = "\\n")',
    'cat(sprintf("%.15g", as.vector(vcov(svytotal(~s1 + s2 + s3, des)))), sep = "\\n")')


def _margins_csv(tmp_path, n: int):
    rows = {"var": [], "level": [], "freq": []}
    for name, shares in MARGINS.items():
        for level, share in enumerate(shares):
            rows["var"].append(name)
            rows["level"].append(level)
            rows["freq"].append(float(share * n))
    return write_csv(tmp_path / "margins.csv", rows)


@pytest.mark.slow  # R itself
def test_a_question_asked_directly_equals_r_svyglm_on_the_raked_design(tmp_path):
    survey, data = sample()
    cols = data.columns
    formula, built, result, raked = sampling.fit_raked_formula(data, MARGINS, "drugs ~ year")
    assert built.left_out == int(np.sum(cols["drugs"] < 0)) > 0
    y = np.where(cols["drugs"] < 0, np.nan, (cols["drugs"] == 0).astype(float))
    path = write_csv(tmp_path / "d.csv", {"y": y, "x1": (cols["year"] == 1).astype(int),
                                          "x2": (cols["year"] == 2).astype(int), "sex": cols["sex"],
                                          "region": cols["region"], "w": np.ones(data.n_rows)})
    values = np.array(_run(SVYGLM_RAKED, tmp_path, str(path), str(_margins_csv(tmp_path, data.n_rows))))
    assert result.params == pytest.approx(values[:3], rel=1e-6, abs=1e-9)
    assert result.std_error == pytest.approx(values[3:], rel=1e-6)
    assert result.n == data.n_rows - built.left_out
    assert "calibration" in result.note and np.isnan(result.lr_stat)
    # the raking that was fitted under: the margins met, Kish's n below the respondents
    assert raked.raking.achieved["region"] == pytest.approx(MARGINS["region"].tolist(), abs=1e-9)
    assert raked.raking.effective_n < data.n_rows
    # the calibration matters: the same weights as a plain sampling design give other standard errors
    from deniable.estimators.weights import survey_design

    complete = cols["drugs"] >= 0
    plain = regress(cols["drugs"][complete], np.column_stack([cols["year"] == 1, cols["year"] == 2])[complete],
                    None, k=2, design=survey_design(np.asarray(raked.raking.weights)[complete]), profile=False)
    assert plain.params == pytest.approx(result.params, rel=1e-9)
    assert np.max(np.abs(plain.std_error / result.std_error - 1)) > 1e-3


@pytest.mark.slow  # R itself
def test_a_randomized_outcome_equals_an_independent_computation(tmp_path):
    survey, data = sample(seed=8, n=900)
    cols = data.columns
    _, _, result, _ = sampling.fit_raked_formula(from_dataset(data).dataset(), MARGINS, "stole ~ year",
                                                 survey=survey)
    mech = resolve(2, 1.0)
    totals = {name: shares * data.n_rows for name, shares in MARGINS.items()}
    _, weights = rake_svymean(tmp_path, {"w": np.ones(data.n_rows), "sex": cols["sex"], "region": cols["region"]},
                              totals, [])
    Z = np.column_stack([np.ones(data.n_rows), cols["year"] == 1, cols["year"] == 2]).astype(float)
    y = (cols["stole"] == 0).astype(float)
    beta, s, information = fit_independently(y, Z, weights, mech.p, mech.q)
    path = write_csv(tmp_path / "s.csv", {"s1": s[:, 0], "s2": s[:, 1], "s3": s[:, 2], "sex": cols["sex"],
                                          "region": cols["region"], "w": np.ones(data.n_rows)})
    meat = np.array(_run(SVYTOTAL_RAKED, tmp_path, str(path), str(_margins_csv(tmp_path, data.n_rows)))).reshape(3, 3)
    bread = np.linalg.inv(information)
    se = np.sqrt(np.diag(bread @ meat @ bread))
    assert result.params == pytest.approx(beta, rel=1e-6, abs=1e-9)
    assert result.std_error == pytest.approx(se, rel=1e-6)
    assert result.p == pytest.approx(mech.p) and result.n == data.n_rows


def test_answer_patterns_give_the_numbers_of_one_row_per_respondent():
    """A pattern's respondents share their raked weight and score: the fit and its calibration variance
    from the answer patterns (with counts) are those of the rows."""
    survey, data = sample(seed=3, n=500)
    rows = sampling.fit_raked_formula(data, MARGINS, "stole ~ year + sex", trim=(0.3, 3))[2]
    patterns = sampling.fit_raked_formula(from_dataset(data).dataset(), MARGINS, "stole ~ year + sex",
                                          trim=(0.3, 3), survey=survey)[2]
    assert patterns.params == pytest.approx(rows.params, rel=1e-10)
    assert patterns.std_error == pytest.approx(rows.std_error, rel=1e-8)
    assert patterns.n == rows.n == 500


def test_bad_calibrations_are_refused_naming_the_problem():
    reports = np.array([0, 1, 0, 1, 1, 0])
    x = np.array([0.0, 0, 1, 1, 2, 2])
    ok = Calibration(weights=np.ones(6), variables=(np.array([0, 1, 0, 1, 0, 1]),))
    with pytest.raises(RegressionError, match="calibration weights"):
        regress(reports, x, None, k=2, calibration=Calibration(weights=np.zeros(6), variables=ok.variables))
    with pytest.raises(RegressionError, match="calibration variables"):
        regress(reports, x, None, k=2, calibration=Calibration(weights=np.ones(6), variables=(np.ones(5, int),)))
    from deniable.estimators.weights import survey_design

    with pytest.raises(RegressionError, match="not both"):
        regress(reports, x, None, k=2, calibration=ok, design=survey_design(np.ones(6)))
