"""Planning a two-group design (estimators/group_plan.py): the plan meets its margin, is the smallest n that
does at its split, the split minimizes n, and the exact intervals at the plan's expected counts are within it."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from deniable.errors import FieldError
from deniable.estimators import group_plan
from deniable.estimators.group_plan import _half_width, _smallest, half_width_at, plan_two_group
from deniable.estimators.two_group import MODELS, estimate_two_group

DESIGNS = [("CDM", [0.3, 0.7]), ("CDMsym", [0.2, 0.1, 0.7, 0.15]), ("SLD", [0.25, 0.75]), ("UQTunknown", [0.8, 0.35])]


def test_doctests():
    assert doctest.testmod(group_plan).failed == 0


@pytest.mark.parametrize(("model", "p"), DESIGNS)
@pytest.mark.parametrize("interval", ["exact", "wald"])
def test_the_plan_meets_its_margin_and_is_the_smallest_that_does(model, p, interval):
    plan = plan_two_group(model, p, 0.06, interval=interval)
    assert plan.half_width <= 0.06 < half_width_at(plan, plan.n - 1)
    assert sum(plan.n_groups) == plan.n and plan.n_equal >= plan.n * 0.999


@pytest.mark.parametrize(("model", "p"), DESIGNS)
def test_the_exact_interval_at_the_expected_counts_is_within_the_margin(model, p):
    """The plan bounds the exact interval by the unclipped box; the interval itself (clipped) is no wider."""
    plan = plan_two_group(model, p, 0.06)
    spec = MODELS[model]
    geometry = spec.geometry(p)
    theta = (plan.at["pi"], plan.at["pi"] * plan.at["t"]) if model == "SLD" else \
        geometry.theta(spec.yes_probability(plan.at["pi"], plan.at[spec.nuisance], p))
    lam = np.array(geometry.prob(theta))
    yes = [int(round(lam[g] * plan.n_groups[g])) for g in (0, 1)]
    r = estimate_two_group(model, p, yes, list(plan.n_groups))
    assert (r.upper["pi"] - r.lower["pi"]) / 2 <= 0.06 + 1e-12


@pytest.mark.parametrize(("model", "p"), DESIGNS)
@pytest.mark.parametrize("interval", ["exact", "wald"])
def test_the_split_minimizes_n(model, p, interval):
    """No split of a grid of 1 % steps needs more than 0.5 % fewer respondents (the optimum is the normal
    approximation's; at the expected counts the rounding moves n by a few)."""
    plan = plan_two_group(model, p, 0.06, interval=interval)
    spec = MODELS[model]
    geometry = spec.geometry(p)
    theta = (plan.at["pi"], plan.at["pi"] * plan.at["t"]) if model == "SLD" else \
        geometry.theta(spec.yes_probability(plan.at["pi"], plan.at[spec.nuisance], p))
    lam = np.array(geometry.prob(theta))
    w = np.abs(np.linalg.inv(geometry.a)[0])
    best = min(_smallest(lambda total, s=s: _half_width(plan, w, lam, total, s), 0.06, plan.n)
               for s in np.arange(0.05, 0.96, 0.01))
    assert plan.n <= best * 1.005


def test_wald_plan_is_the_closed_form():
    """Neyman's allocation: N = (z/m)² (Σ |w_g| σ_g)², written out for UQTunknown at π = 0.2, π_UQ = 0.4."""
    p1, p2, pi, uq, m = 0.8, 0.35, 0.2, 0.4, 0.05
    lam = np.array([p1 * pi + (1 - p1) * uq, p2 * pi + (1 - p2) * uq])
    w = np.abs([(1 - p2) / (p1 - p2), (1 - p1) / (p1 - p2)])  # π̂ = [λ1(1 − p2) − λ2(1 − p1)] / (p1 − p2)
    ws = w * np.sqrt(lam * (1 - lam))
    n = (1.959963984540054 / m) ** 2 * ws.sum() ** 2
    plan = plan_two_group("UQTunknown", [p1, p2], m, interval="wald", pi=pi, nuisance=uq)
    assert plan.share == pytest.approx(ws[0] / ws.sum(), rel=1e-12)
    assert abs(plan.n - n) <= 3


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"model": "Warner"}, "model"), ({"p": [0.3]}, "p"), ({"margin": 0}, "margin"), ({"margin": 1.5}, "margin"),
    ({"interval": "profile"}, "interval"), ({"pi": 0.1}, "nuisance"), ({"pi": 0.8, "nuisance": 0.5}, "nuisance"),
    ({"pi": 2, "nuisance": 0.1}, "pi"), ({"confidence": 1.2}, "confidence"),
])
def test_bad_arguments_name_their_field(kwargs, field):
    args = {"model": "CDM", "p": [0.3, 0.7], "margin": 0.05, **kwargs}
    with pytest.raises(FieldError) as caught:
        plan_two_group(args.pop("model"), args.pop("p"), args.pop("margin"), **args)
    assert caught.value.field == field
    assert not math.isnan(plan_two_group("CDM", [0.3, 0.7], 0.05).half_width)
