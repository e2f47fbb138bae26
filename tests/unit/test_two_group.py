"""The two-group designs (CDM, CDMsym, SLD, UQTunknown): RRreg 0.7.5's numbers, the constrained maximum
checked by a generic optimizer in the original parameters, the exact intervals' coverage summed over
every outcome, and the refusals."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import binom

from deniable.errors import FieldError
from deniable.estimators import MODELS, TwoGroupResult, estimate_two_group, two_group_counts

REFERENCE = Path("/work/shared/reference/rrreg")
FILES = sorted(REFERENCE.glob("*.json")) if REFERENCE.is_dir() else []
NUISANCE = {"CDM": "gamma", "CDMsym": "gamma", "SLD": "t", "UQTunknown": "piUQ"}


def reference(path: Path):
    data = json.loads(path.read_text())
    with open(path.with_suffix(".csv"), newline="") as handle:
        rows = list(csv.DictReader(handle))
    yes, n = two_group_counts([int(r["response"]) for r in rows], [int(r["group"]) for r in rows])
    return data, yes, n


@pytest.mark.skipif(not FILES, reason="the RRreg reference folder is not on this machine")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_rrreg_reference(path):
    data, yes, n = reference(path)
    assert yes == data["yes_counts"] and n == data["group_sizes"]
    result = estimate_two_group(data["design"], data["p"], yes, n)
    moment = data["rruni_moment"]
    for name, value in moment["estimates"].items():
        assert result.moment[name] == pytest.approx(value, abs=1e-9, rel=0)
    for name, value in moment["se"].items():
        if value is None:  # CDMsym's beta: RRreg gives no SE
            assert math.isnan(result.moment_se[name])
        else:
            assert result.moment_se[name] == pytest.approx(value, rel=1e-9, abs=0)
    check = data["constrained_mle_check_base_R"]
    assert check["par2_name"] == NUISANCE[data["design"]]
    assert result.estimate["pi"] == pytest.approx(check["pi"], abs=1e-5)
    assert result.estimate[check["par2_name"]] == pytest.approx(check["par2"], abs=1e-5)
    assert result.loglik == pytest.approx(check["loglik_bernoulli"], abs=1e-6, rel=0)
    assert result.on_boundary == check["on_boundary"]
    ml = data["rruni_ml"]
    if ml["estimates_admissible"]:
        for name, value in ml["estimates"].items():
            assert result.estimate[name] == pytest.approx(value, abs=1e-5)
        if data["loglik_at_rruni_ml"]["bernoulli"] is not None and not ml["ml_branch_used"]:
            assert result.loglik == pytest.approx(data["loglik_at_rruni_ml"]["bernoulli"], abs=1e-6, rel=0)
    for name in result.parameters:  # the constrained estimate lies in its intervals
        assert result.lower[name] - 1e-12 <= result.estimate[name] <= result.upper[name] + 1e-12
        assert result.profile_lower[name] - 1e-9 <= result.estimate[name] <= result.profile_upper[name] + 1e-9


@pytest.mark.parametrize("model", list(MODELS))
def test_the_affine_form_is_the_stated_map(model):
    spec = MODELS[model]
    p = {"CDM": [0.3, 0.7], "CDMsym": [0.2, 0.1, 0.7, 0.15], "SLD": [0.25, 0.75], "UQTunknown": [0.7, 0.3]}[model]
    geometry = spec.geometry(p)
    rng = np.random.default_rng(5)
    for _ in range(20):
        pi, nuisance = rng.uniform(size=2)
        theta = (pi, pi * nuisance) if model == "SLD" else (pi, nuisance)
        assert geometry.prob(theta) == pytest.approx(spec.yes_probability(pi, nuisance, p), abs=1e-14)


# -- the constrained maximum against a generic optimizer in (π, nuisance) ------------------------------

BOUNDARY_DATA = [  # model, p, yes, n: moment estimates outside the admissible region
    ("CDM", [0.3, 0.7], [57, 112], [150, 150]),  # γ̂ < 0
    ("CDM", [0.3, 0.7], [20, 120], [150, 150]),  # π̂ < 0
    ("CDM", [0.3, 0.7], [5, 140], [150, 150]),  # far out
    ("CDMsym", [0.2, 0.1, 0.7, 0.15], [40, 120], [150, 150]),
    ("SLD", [0.25, 0.75], [124, 62], [150, 150]),  # t̂ > 1
    ("SLD", [0.25, 0.75], [120, 30], [150, 150]),  # π̂ < 0
    ("SLD", [0.25, 0.75], [60, 70], [150, 150]),  # π̂ > 1
    ("UQTunknown", [0.7, 0.3], [20, 60], [150, 150]),  # π̂_UQ > ..., π̂ < 0
    ("UQTunknown", [0.7, 0.3], [140, 80], [150, 150]),
    ("UQTunknown", [0.7, 0.3], [4, 0], [40, 30]),  # a group with no "yes"
]


def generic_maximum(model, p, yes, n):
    """Maximize the Bernoulli log-likelihood in (π, nuisance) with SLSQP from several starts."""
    spec = MODELS[model]

    def minus(x):
        probs = np.clip(spec.yes_probability(x[0], x[1], p), 1e-300, 1 - 1e-16)
        return -sum(y * math.log(q) + (m - y) * math.log1p(-q) for q, y, m in zip(probs, yes, n))

    constraints = [{"type": "ineq", "fun": lambda x: 1 - x[0] - x[1]}] if spec.nuisance == "gamma" else []
    best = None
    for start in ((0.2, 0.2), (0.5, 0.3), (0.1, 0.7), (0.8, 0.1), (0.4, 0.5)):
        fit = minimize(minus, start, method="SLSQP", bounds=[(0, 1), (0, 1)], constraints=constraints,
                       options={"ftol": 1e-15, "maxiter": 500})
        if best is None or fit.fun < best.fun:
            best = fit
    return best.x, -best.fun


@pytest.mark.parametrize("model, p, yes, n", BOUNDARY_DATA)
def test_constrained_mle_against_a_generic_optimizer(model, p, yes, n):
    result = estimate_two_group(model, p, yes, n)
    x, best = generic_maximum(model, p, yes, n)
    assert result.loglik >= best - 1e-9  # never worse than the generic optimizer
    assert result.loglik == pytest.approx(best, abs=1e-6, rel=0)
    assert result.estimate["pi"] == pytest.approx(x[0], abs=1e-4)
    nuisance = MODELS[model].nuisance
    if not (model == "SLD" and result.estimate["pi"] < 1e-6):
        assert result.estimate[nuisance] == pytest.approx(x[1], abs=1e-4)
    assert result.on_boundary


def test_sld_at_zero_prevalence_has_no_t():
    result = estimate_two_group("SLD", [0.25, 0.75], [120, 30], [150, 150])
    assert result.estimate["pi"] == 0 and math.isnan(result.estimate["t"])
    assert "cannot be estimated" in result.statement()
    json.dumps(result.to_dict(), allow_nan=False)


# -- exact coverage of the exact intervals, summed over every (y1, y2) ---------------------------------

TRUTHS = {  # p, then (π, nuisance) points, boundaries included
    "CDM": ([0.3, 0.7], [(0, 0), (0.2, 0), (0, 0.3), (0.3, 0.15), (0.6, 0.4), (0.05, 0.9), (1, 0)]),
    "CDMsym": ([0.2, 0.1, 0.7, 0.15], [(0, 0), (0.25, 0), (0, 0.3), (0.15, 0.2), (0.5, 0.5), (0, 1)]),
    "SLD": ([0.25, 0.75], [(0, 0.5), (0.2, 1), (0.5, 1), (0.3, 0.7), (1, 0.5), (0.1, 0), (1, 1)]),
    "UQTunknown": ([0.7, 0.3], [(0, 0), (0.2, 0), (0, 0.4), (0.3, 0.5), (1, 1), (0.5, 1), (0.1, 0.6)]),
}
N1, N2 = 12, 9


@pytest.mark.parametrize("confidence", [0.95, 0.8])
@pytest.mark.parametrize("model", list(TRUTHS))
def test_exact_interval_coverage_summed_over_every_outcome(model, confidence):
    p, truths = TRUTHS[model]
    spec = MODELS[model]
    outcomes = [(y1, y2) for y1 in range(N1 + 1) for y2 in range(N2 + 1)]
    fits = {yes: estimate_two_group(model, p, list(yes), [N1, N2], confidence=confidence) for yes in outcomes}
    for pi, nuisance in truths:
        probs = spec.yes_probability(pi, nuisance, p)
        weight = {yes: binom.pmf(yes[0], N1, probs[0]) * binom.pmf(yes[1], N2, probs[1]) for yes in outcomes}
        truth = {"pi": pi, spec.nuisance: nuisance}
        if spec.nuisance == "gamma":
            truth["beta"] = 1 - pi - nuisance
        if model == "SLD" and pi == 0:
            del truth["t"]  # not defined
        for name, value in truth.items():
            covered = sum(w for yes, w in weight.items()
                          if fits[yes].lower[name] - 1e-9 <= value <= fits[yes].upper[name] + 1e-9)
            assert covered >= confidence - 1e-12, (model, pi, nuisance, name, covered)


# -- the result's shape and text ----------------------------------------------------------------------

def test_result_shape_and_sentence():
    result = estimate_two_group("CDM", [0.3, 0.7], [300, 600], [1000, 1000])
    assert isinstance(result, TwoGroupResult)
    assert result.parameters == ("pi", "gamma", "beta") and result.method == "exact"
    assert set(result.lower) == set(result.upper) == set(result.profile_lower) == set(result.parameters)
    text = result.statement()
    assert text.startswith("an estimated ") and text.endswith("of respondents did not follow the instructions")
    assert "%" in text and "[" in text
    assert "carriers answered truthfully" in estimate_two_group("SLD", [0.25, 0.75], [500, 300],
                                                                [1000, 1000]).statement()
    assert "unrelated question" in estimate_two_group("UQTunknown", [0.7, 0.3], [400, 500],
                                                      [1000, 1000]).statement()
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["model"] == "CDM" and set(data["lower"]) == {"pi", "gamma", "beta"}
    summary = result.summary()
    assert "exact" in summary and "profile" in summary and "did not follow" in summary
    assert result.interval("gamma", "wald") == (result.wald_lower["gamma"], result.wald_upper["gamma"])


def test_outside_model_gives_a_point():
    # group 1 all "yes" at p1 = 0.3 but group 2 never: no admissible CDM comes near
    result = estimate_two_group("CDM", [0.3, 0.7], [200, 0], [200, 200])
    assert result.outside_model and result.note
    assert "no interval" in result.statement()
    for name in result.parameters:
        assert result.lower[name] == result.upper[name] == result.estimate[name]


# -- refusals -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, field", [
    (dict(model="CDM", p=[0.3, 0.7, 0.1]), "p"),
    (dict(model="CDMsym", p=[0.3, 0.7]), "p"),
    (dict(model="CDM", p=[0.3, 1.2]), "p"),
    (dict(model="SLD", p=[-0.1, 0.5]), "p"),
    (dict(model="UQTunknown", p=[0.5, 0.5]), "p"),
    (dict(model="CDM", p=[0.4, 0.4]), "p"),
    (dict(model="CDMsym", p=[0.2, 0.1, 0.2, 0.1]), "p"),
    (dict(model="RRR"), "model"),
    (dict(model=["CDM"]), "model"),
    (dict(yes=[11, 3]), "yes"),
    (dict(yes=[-1, 3]), "yes"),
    (dict(yes=[1.5, 3]), "yes"),
    (dict(yes=[1, 2, 3]), "yes"),
    (dict(n=[1, 10], yes=[0, 3]), "n"),
    (dict(n=[-5, 10]), "n"),
    (dict(confidence=1.5), "confidence"),
])
def test_field_errors(kwargs, field):
    args = dict(model="CDM", p=[0.3, 0.7], yes=[4, 6], n=[10, 10]) | kwargs
    model, p, yes, n = args.pop("model"), args.pop("p"), args.pop("yes"), args.pop("n")
    with pytest.raises(FieldError) as caught:
        estimate_two_group(model, p, yes, n, **args)
    assert caught.value.field == field and str(caught.value)


@pytest.mark.parametrize("response, group, field", [
    ([1, 0, 1], [1, 2, 3], "group"),
    ([1, 0, 1], [0, 1, 2], "group"),
    ([1, 0, 2], [1, 2, 2], "response"),
    ([1, 0], [1, 2, 2], "group"),
])
def test_count_field_errors(response, group, field):
    with pytest.raises(FieldError) as caught:
        two_group_counts(response, group)
    assert caught.value.field == field


def test_counts():
    assert two_group_counts([1, 0, 1, 1, 0], [1, 1, 2, 2, 2]) == ([1, 2], [2, 3])


def test_profile_at_a_vertex_uses_chi_square_two():
    # SLD's π = 0 pins (π, t π) to the origin, a vertex: 2Δℓ = 4.51 there, above χ²₁ (3.84) and below
    # χ²₂ (5.99), so 0 is in the profile interval
    from deniable.estimators.two_group_fit import loglik

    result = estimate_two_group("SLD", [0.25, 0.75], [103, 30], [150, 150])
    gap = 2 * (result.loglik - loglik((0.75, 0.25), [103, 30], [150, 150]))
    assert 3.85 < gap < 5.98
    assert result.profile_lower["pi"] == 0 < result.estimate["pi"]


def test_estimate_outside_the_box_widens_the_exact_interval():
    # group 1 all "yes", group 2 (5 people) none: the constrained estimate weighs group 1 more than the box does
    result = estimate_two_group("UQTunknown", [0.88, 0.13], [36, 0], [36, 5])
    assert not result.outside_model and "widened" in result.note
    for name in result.parameters:
        assert result.lower[name] <= result.estimate[name] <= result.upper[name]


def test_random_data_give_ordered_intervals_in_the_unit_interval():
    rng = np.random.default_rng(7)
    for i in range(100):
        model = list(MODELS)[i % 4]
        p = list(rng.uniform(size=MODELS[model].p_length))
        n = [int(rng.integers(2, 60)), int(rng.integers(2, 10**6))][:: 1 if i % 2 else -1]
        yes = [int(rng.choice([0, m, rng.integers(0, m + 1)])) for m in n]
        try:
            result = estimate_two_group(model, p, yes, n, confidence=float(rng.choice([0.8, 0.95, 0.999])))
        except FieldError as error:  # a random p can be (nearly) singular
            assert error.field == "p"
            continue
        for name in result.parameters:
            estimate = result.estimate[name]
            for low, high in (result.interval(name), result.interval(name, "profile")):
                assert 0 <= low <= high <= 1
                if math.isfinite(estimate):
                    assert low - 1e-7 <= estimate <= high + 1e-7, (model, p, yes, n, name)
