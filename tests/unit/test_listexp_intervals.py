"""The list experiment's interval is never silently a point, and a control count above J is refused (issue 24)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.errors import FieldError
from deniable.estimators.listexp import estimate_list
from deniable.server.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def test_both_arms_constant_is_an_interval_of_0_to_1_that_says_why():
    r = estimate_list([0, 10, 0, 0, 0], [0, 9, 0, 0, 0], 3, None)
    assert r.estimate == 0 and (r.ci_low, r.ci_high) == (0.0, 1.0)
    assert "one constant count" in r.note and "the control arm's counts are all 1" in r.note


def test_one_arm_constant_says_the_interval_may_be_too_narrow():
    r = estimate_list([0, 10, 0, 0, 0], [0, 5, 5, 0, 0], 3, None)
    assert 0 < r.ci_low < 0.5 < r.ci_high < 1
    assert "the control arm's counts are all 1" in r.note and "too narrow" in r.note


def test_an_interval_outside_0_1_is_a_point_with_a_note():
    r = estimate_list([0, 0, 10, 0, 0], [5, 5, 0, 0, 0], 3, None)
    assert r.ci_low == r.ci_high == 0.0 and "lies outside [0, 1]" in r.note


def test_no_silent_zero_width_interval_at_small_n():
    """n = 8, J = 3, control items held by 5% each, τ = 0.1: many arms report one constant count; every
    interval of zero width says why (before: such intervals were a silent [0, 0] or a point)."""
    rng = np.random.default_rng(1)
    control = np.array([0.95**3, 3 * 0.05 * 0.95**2, 3 * 0.05**2 * 0.95, 0.05**3, 0.0])
    treatment = 0.9 * control + 0.1 * np.roll(control, 1)
    constant = 0
    for _ in range(400):
        n_t = int(rng.binomial(8, 0.5))
        if min(n_t, 8 - n_t) < 2:
            continue
        r = estimate_list(rng.multinomial(8 - n_t, control), rng.multinomial(n_t, treatment), 3, None)
        assert r.ci_low < r.ci_high or r.note, (r.noisy_control, r.noisy_treatment)
        constant += (r.ci_low, r.ci_high) == (0.0, 1.0)
    assert constant > 30  # the case is common here (the fix is exercised)


def test_a_control_count_above_j_is_refused_naming_the_field():
    with pytest.raises(FieldError, match=r"control: 2 control report\(s\) of 4 items.*J = 3") as caught:
        estimate_list([3, 4, 2, 1, 2], [2, 3, 4, 2, 1], 3, None)
    assert caught.value.field == "control"
    # randomized counts range over 0..J + 1 in both arms: allowed with ε
    assert estimate_list([3, 4, 2, 1, 2], [2, 3, 4, 2, 1], 3, 1.0).n_control == 12


def test_types_coverage_script_prints_its_tables():
    """The script the estimator's notes cite runs (a few replicates) and prints both tables."""
    spec = importlib.util.spec_from_file_location("types_coverage", ROOT / "scripts" / "types_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cell = module.list_cell(0.05, 0.1, 8, None, 100, np.random.default_rng(3))
    assert cell["silent_zero"] == 0 and cell["constant"] > 0 and 0 <= cell["coverage"] <= 1
    ticked = module.ticked_cell("independent", 500, 2.0, 300, np.random.default_rng(3))
    assert 0.85 < ticked["coverage"] <= 1  # nominal 0.95, 300 replicates
    # the true count distributions: the treatment arm's mean is the control's plus τ
    control, treatment = module.list_truth(0.5, 0.3)
    assert treatment @ np.arange(5) - control @ np.arange(5) == pytest.approx(0.3)
