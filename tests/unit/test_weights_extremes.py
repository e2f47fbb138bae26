"""Weights beyond what floating point can square are refused by name, never turned into NaN (and a
RuntimeWarning at the moment of a request): sampling weights of 1e308 (Kish's Σw² overflows), and
raking to a share of 1e-320 (the raked weights square to 0, and the calibration divides by them)."""

import numpy as np
import pytest

from deniable.estimators.weights import DesignError, rake, survey_design


@pytest.mark.parametrize("weights", [[1e308, 1e308, 1.0], [1e-170, 1.0, 1.0], [1e200, 1.0, 1.0]])
def test_weights_that_cannot_be_squared_are_refused(weights):
    with pytest.raises(DesignError, match=r"^weights: the weights range from .* beyond what floating point can "
                                          r"square") as caught:
        survey_design(weights)
    assert caught.value.field == "weights"


def test_weights_that_can_be_squared_are_kept():
    design = survey_design([1e150, 1e-150, 1.0])
    assert np.isfinite(design.effective_n) and design.effective_n > 0


def test_raking_to_a_share_whose_weights_cannot_be_squared_is_refused():
    codes = np.array([0, 1, 1, 0, 1])
    with pytest.raises(DesignError, match=r"^margins: the raked weights range from") as caught:
        rake(np.ones(5), {"age": codes}, {"age": np.array([1e-320, 1.0])})
    assert caught.value.field == "margins"
