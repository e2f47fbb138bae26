"""``deniable plan --k K --deff X``: a weighted or clustered sample needs X times the respondents of
a simple random sample (Kish's design effect); checked against the survey planner called directly (the
decided search, :func:`deniable.server.survey.planning.plan`), whose n follows the decided rule."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from support.plan_cache import assert_decided

from deniable.server.survey.planning import plan as plan_n
from deniable.estimators.weights import survey_design
from deniable.server.cli import cli


def run(*args):
    return CliRunner().invoke(cli, ["plan", *map(str, args)])


def test_deff_multiplies_the_respondents_needed_and_keeps_the_simple_random_samples():
    result = run("--k", 3, "--margin", 0.04, "--epsilon", 1, "--epsilon", 2, "--deff", 1.7, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["design_effect"] == 1.7
    baseline = plan_n(None, 3, 0.04).n
    for row, eps in zip(data["plans"], (1.0, 2.0)):
        srs = plan_n(eps, 3, 0.04).n
        assert (row["n_simple_random_sample"], row["n"]) == (srs, math.ceil(1.7 * srs))
        assert (row["n_without_privacy_simple_random_sample"], row["n_without_privacy"]) == \
            (baseline, math.ceil(1.7 * baseline))
        assert row["design_effect"] == 1.7


def test_deff_is_stated_in_the_table():
    result = run("--k", 2, "--margin", 0.03, "--epsilon", 2, "--deff", 2)
    assert result.exit_code == 0, result.output
    srs = plan_n(2.0, 2, 0.03).n
    assert "design effect 2: the respondents a simple random sample needs, multiplied by 2" in result.output
    assert "simple random sample" in result.output.splitlines()[3]
    row = result.output.splitlines()[4]
    assert f"{2 * srs:,}" in row and f"{srs:,}" in row


def test_without_deff_the_plan_is_unchanged():
    data = json.loads(run("--k", 2, "--margin", 0.03, "--epsilon", 2, "--format", "json").output)
    assert "design_effect" not in data and "n_simple_random_sample" not in data["plans"][0]
    assert data["plans"][0]["n"] == plan_n(2.0, 2, 0.03).n
    assert_decided(data["plans"][0]["n"], 2.0, 2, 0.03)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "two"])
def test_a_bad_deff_is_one_error_naming_it(value):
    result = run("--k", 2, "--margin", 0.03, "--deff", value)
    assert result.exit_code == 2
    assert "'--deff'" in result.output and "Traceback" not in result.output


def test_deff_goes_with_k_only():
    result = run("--list", 3, "--margin", 0.1, "--deff", 2)
    assert result.exit_code == 2 and "--deff goes with --k" in result.output


def test_the_weights_design_effect_in_the_help_is_kish_one_plus_cv_squared():
    """The help's 1 + CV²: n over Kish's effective sample size of the weights, for any weights."""
    w = np.random.default_rng(3).lognormal(0, 0.8, 500)
    assert w.size / survey_design(w).effective_n == pytest.approx(1 + (w.std() / w.mean()) ** 2)
