"""The two-group designs' logistic regression (estimators/group_logit.py) against RRreg 0.7.5's RRlog fits in
the shared reference data, and against an independent maximization (scipy's bounded quasi-Newton on the
likelihood written out here from the designs' definitions, with a finite-difference Hessian)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from deniable.errors import FieldError
from deniable.estimators.group_logit import group_logit

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "rrreg"


def _data(design: str):
    with open(REFERENCE / f"{design}_n2000.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    y = np.array([int(r["response"]) for r in rows])
    g = np.array([int(r["group"]) for r in rows])
    x = np.array([float(r["x"]) for r in rows])
    return json.loads((REFERENCE / f"{design}_n2000.json").read_text()), y, g, np.column_stack([np.ones_like(x), x])


@pytest.mark.parametrize("design", ["SLD", "UQTunknown"])
def test_rrlog_fits_are_reproduced(design):
    ref, y, g, X = _data(design)
    fit = group_logit(design, ref["p"], y, g, X, ["(Intercept)", "x"])
    rrlog = ref["rrlog"]
    assert fit.coefficients == pytest.approx(rrlog["coefficients"], abs=1e-4)
    assert fit.se == pytest.approx(rrlog["se"], rel=1e-3)
    assert fit.loglik == pytest.approx(rrlog["logLik"], abs=1e-6)
    assert fit.loglik >= rrlog["logLik"] - 1e-9  # never a worse maximum than optim's


@pytest.mark.parametrize("design", ["CDM", "CDMsym"])
def test_rrlog_without_gamma_is_reproduced_on_request(design):
    ref, y, g, X = _data(design)
    fit = group_logit(design, ref["p"], y, g, X, ["(Intercept)", "x"], gamma="ignore")
    rrlog = ref["rrlog"]
    assert fit.names == ("(Intercept)", "x")
    assert fit.coefficients == pytest.approx(rrlog["coefficients"][:2], abs=1e-4)
    assert fit.se == pytest.approx(rrlog["se_regression_from_hessian_without_gamma"], rel=1e-3)
    assert fit.loglik == pytest.approx(rrlog["logLik"], abs=1e-6)


def _independent(design, p, y, g, X):
    """The likelihood from the designs' definitions (P(yes | carrier), P(yes | non-carrier) per group),
    maximized by L-BFGS-B with ν in [0, 1]; standard errors from a central-difference Hessian."""
    p = np.asarray(p)

    def prob(theta):
        pi = expit(X @ theta[:-1])
        nu = theta[-1]
        j = g - 1
        if design == "CDM":
            carrier, other = (1 - nu) * np.ones(2), (1 - nu) * p
        elif design == "CDMsym":
            carrier, other = (1 - nu) * (1 - p[1::2]), (1 - nu) * p[0::2]
        elif design == "SLD":
            carrier, other = np.array([nu, nu]), 1 - p
        else:
            carrier, other = p + (1 - p) * nu, (1 - p) * nu
        return carrier[j] * pi + other[j] * (1 - pi)

    def nll(theta):
        q = prob(theta)
        return -np.sum(y * np.log(q) + (1 - y) * np.log1p(-q))

    best = minimize(nll, np.r_[np.zeros(X.shape[1]), 0.5], method="L-BFGS-B",
                    bounds=[(None, None)] * X.shape[1] + [(1e-9, 1 - 1e-9)], options={"ftol": 1e-15, "gtol": 1e-10})
    h = 1e-4
    k = best.x.size
    hess = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            ei, ej = np.eye(k)[i] * h, np.eye(k)[j] * h
            hess[i, j] = (nll(best.x + ei + ej) - nll(best.x + ei - ej) - nll(best.x - ei + ej)
                          + nll(best.x - ei - ej)) / (4 * h * h)
    return best.x, np.sqrt(np.diag(np.linalg.inv(hess))), -best.fun


@pytest.mark.parametrize("design", ["CDM", "CDMsym", "SLD", "UQTunknown"])
def test_the_fit_with_the_nuisance_parameter_is_the_maximum(design):
    ref, y, g, X = _data(design)
    fit = group_logit(design, ref["p"], y, g, X, ["(Intercept)", "x"])
    theta, se, loglik = _independent(design, ref["p"], y, g, X)
    assert fit.coefficients == pytest.approx(theta, abs=2e-4)
    assert fit.se == pytest.approx(se, rel=2e-3)
    assert fit.loglik == pytest.approx(loglik, abs=1e-6)
    assert fit.loglik >= loglik - 1e-9


def test_cdm_with_gamma_recovers_the_generating_model():
    """On a large sample simulated as RRreg's RRgen does (cheaters say "no" whatever they carry), the fit with
    γ finds the carriers' coefficients and γ; RRlog's likelihood, without γ, is off by far more than its SEs."""
    rng = np.random.default_rng(38)
    n = 60_000
    x = rng.standard_normal(n)
    g = rng.integers(1, 3, n)
    carrier = rng.random(n) < expit(-1.0 + 0.7 * x)
    cheat = rng.random(n) < 0.15
    prompted = rng.random(n) < np.where(g == 1, 0.3, 0.7)
    y = np.where(cheat, 0, carrier | prompted).astype(int)
    X = np.column_stack([np.ones(n), x])
    fit = group_logit("CDM", [0.3, 0.7], y, g, X)
    assert np.all(np.abs(fit.coefficients - [-1.0, 0.7, 0.15]) < 4 * fit.se)
    naive = group_logit("CDM", [0.3, 0.7], y, g, X, gamma="ignore")
    assert abs(naive.coefficients[0] - (-1.0)) > 10 * naive.se[0]


def test_a_nuisance_parameter_on_its_bound_is_held_there():
    y = np.repeat([1, 0, 1, 0], [75, 25, 25, 75])
    g = np.repeat([1, 2], 100)
    fit = group_logit("UQTunknown", [0.7, 0.3], y, g, np.ones((200, 1)))
    assert fit.nuisance_on_bound and fit.coefficients[-1] == 0.0 and np.isnan(fit.se[-1])
    assert "at a bound" in fit.summary()


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"model": "Warner"}, "model"),
    ({"p": [0.3]}, "p"),
    ({"p": [0.3, 1.2]}, "p"),
    ({"response": [0, 1, 2, 1]}, "response"),
    ({"group": [1, 1, 3, 2]}, "group"),
    ({"X": np.array([[1.0], [1.0], [np.nan], [1.0]])}, "X"),
    ({"gamma": "drop"}, "gamma"),
])
def test_bad_input_names_its_field(kwargs, field):
    args = {"model": "SLD", "p": [0.25, 0.75], "response": [0, 1, 1, 0], "group": [1, 1, 2, 2],
            "X": np.ones((4, 1)), **kwargs}
    gamma = args.pop("gamma", "estimate")
    with pytest.raises(FieldError) as caught:
        group_logit(args["model"], args["p"], args["response"], args["group"], args["X"], gamma=gamma)
    assert caught.value.field == field
