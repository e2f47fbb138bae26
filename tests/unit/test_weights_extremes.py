"""Weights far from 1 never give a traceback, a NaN or a wrong number (issue 36, item 4): every
number a weighted estimate reports is scale-free in the weights, so weights beyond 2^±256 are
rescaled by a power of two (no digit of them changes) and estimate exactly what weights of 1 do —
1e308, whose squares overflowed (Sigma w^2 infinite: effective_n None, a TypeError in deniable estimate
--weights, -0.582 for both options with an SE of 0 in the Python API), and 1e-300, whose squares are 0
(a NaN Kish n) — and weights whose largest is more than 1e300 times their smallest positive one are
refused, naming that bound (no scale keeps both squares in floating point).  Raking to a share of
1e-320 (the raked weights square to 0, and the calibration divides by them) is refused by name."""

import json
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.errors import FieldError
from deniable.estimators.weights import (SamplingDesignError, rake, raked_estimate, survey_design,
                                         weighted_design_estimate, weighted_estimate)
from deniable.client import designs


@pytest.mark.parametrize("weights", [[1e308, 1e308, 1.0], [5e-324, 1.0, 1.0], [1e-310, 1e10, 1.0]])
def test_weights_that_cannot_be_squared_are_refused_naming_the_bound(weights):
    with pytest.raises(SamplingDesignError, match=r"^weights: the weights range from .* beyond what floating point can "
                                          r"square .*: the largest may be at most 1e\+300 times the smallest "
                                          r"positive one$") as caught:
        survey_design(weights)
    assert caught.value.field == "weights" and isinstance(caught.value, FieldError)


@pytest.mark.parametrize("weights", [[1e150, 1e-150, 1.0], [1e-170, 1.0, 1.0], [1e200, 1.0, 1.0]])
def test_weights_within_the_bound_are_kept(weights):
    design = survey_design(weights)
    exact = [Fraction(w) for w in weights]  # Kish's n in exact rational arithmetic
    kish = sum(exact) ** 2 / sum(w * w for w in exact)
    assert np.isfinite(design.effective_n) and design.effective_n == pytest.approx(float(kish), rel=1e-12)


REPORTS = np.random.default_rng(4).integers(0, 3, 60)
SCALES = [1e308, 1e200, 1e100, 1e-300, 1e-320, 5e-324]


@pytest.mark.parametrize("scale", SCALES)
def test_weights_far_from_one_estimate_what_weights_of_one_do(scale):
    w = np.random.default_rng(5).gamma(2.0, 1.0, 60)
    w = w / w.max()
    if scale < 1e-307:  # a subnormal scale keeps fewer digits: equal weights, which it keeps exactly
        w = np.ones(60)
    plain = weighted_estimate(REPORTS, 1.0, survey_design(w), k=3)
    far = weighted_estimate(REPORTS, 1.0, survey_design(w * scale), k=3)
    assert np.isfinite(far.effective_n) and far.effective_n == pytest.approx(plain.effective_n, rel=1e-12)
    for name in ("estimate", "std_error", "ci_low", "ci_high", "report_share"):
        assert getattr(far, name) == pytest.approx(getattr(plain, name), rel=1e-9, abs=1e-12), name
    assert np.all(far.std_error > 0)
    designed = weighted_design_estimate(REPORTS, designs.forced(0.6, [0.2, 0.1, 0.1]), survey_design(w * scale))
    assert np.all(np.isfinite(designed.estimate)) and np.isfinite(designed.effective_n)
    raked = raked_estimate(REPORTS, 1.0, w * scale, [REPORTS % 2], k=3)
    assert raked.effective_n == pytest.approx(plain.effective_n, rel=1e-9)


def test_raking_from_weights_of_1e308_gives_the_range_and_kish_of_weights_of_one():
    codes = np.array([0, 1, 1, 0, 1, 1, 0, 1])
    one = rake(np.ones(8), {"age": codes}, {"age": np.array([0.5, 0.5])})
    far = rake(np.full(8, 1e308), {"age": codes}, {"age": np.array([0.5, 0.5])})
    assert (far.smallest, far.largest, far.effective_n) == pytest.approx((one.smallest, one.largest,
                                                                          one.effective_n), rel=1e-12)
    assert (one.smallest, one.largest) == pytest.approx((0.8, 4 / 3))  # × the mean weight


def test_raking_to_a_share_whose_weights_cannot_be_squared_is_refused():
    codes = np.array([0, 1, 1, 0, 1])
    with pytest.raises(SamplingDesignError, match=r"^margins: the raked weights range from") as caught:
        rake(np.ones(5), {"age": codes}, {"age": np.array([1e-320, 1.0])})
    assert caught.value.field == "margins"


def test_raked_estimators_refuse_weights_that_are_not_finite():
    with pytest.raises(SamplingDesignError, match="^weights: every weight must be a finite number") as caught:
        raked_estimate(REPORTS, 1.0, np.full(60, np.inf), [], k=3)
    assert isinstance(caught.value, FieldError)


SURVEY = {"slug": "far", "title": "Far", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "age", "text": "Age", "options": ["<30", "30+"]}]}


@pytest.mark.parametrize("scale", ["1e308", "1e200", "1e-300"])
def test_deniable_estimate_with_weights_far_from_one(tmp_path, scale):
    """The command line gives the numbers of weights of 1 (it crashed with a TypeError at 1e200 and 1e308)."""
    from deniable.server.cli import cli

    (tmp_path / "survey.json").write_text(json.dumps(SURVEY))
    rows = ["Yes,<30", "No,30+", "Yes,30+", "No,<30", "No,<30", "Yes,30+"]
    outputs = []
    for weight in ("1", scale):
        path = tmp_path / f"r{weight}.csv"
        path.write_text("drugs,age,w\n" + "".join(f"{row},{weight}\n" for row in rows))
        result = CliRunner().invoke(cli, ["estimate", str(tmp_path / "survey.json"), str(path), "--weights", "w",
                                          "--format", "json"])
        assert result.exit_code == 0, result.output
        outputs.append(json.loads(result.stdout))
    assert outputs[1]["design"]["effective_n"] == pytest.approx(6.0, rel=1e-12)
    for plain, far in zip(outputs[0]["questions"], outputs[1]["questions"]):
        for a, b in zip(plain["options"], far["options"]):
            assert {k: b[k] for k in ("estimate", "std_error", "ci_low", "ci_high")} == pytest.approx(
                {k: a[k] for k in ("estimate", "std_error", "ci_low", "ci_high")}, rel=1e-9, abs=1e-12)
