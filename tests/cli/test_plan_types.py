"""``deniable plan --numeric / --multi / --list``: the real command, checked against the variance
formulas evaluated directly (and one Monte Carlo run of the real randomizer and estimator)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import norm
from support.plan_cache import assert_decided

from deniable.client.listexp import list_mechanism
from deniable.client.mechanism import mechanism
from deniable.client.multi import multi_mechanism
from deniable.client.numeric import grid_mechanism, laplace, randomize_grid
from deniable.estimators import sample_size
from deniable.server.cli import cli

DENIABLE = [sys.executable, "-c", "from deniable.server.cli import cli; cli()"]


def plan_json(*args):
    result = CliRunner().invoke(cli, ["plan", *map(str, args), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_numeric_plan_is_grid_one_and_its_n_is_the_binary_variance_formula():
    # G = 1: a report is 1 with probability λ = q + (p − q)·θ, θ = mean/range; the unbiased mean is
    # range·(R̄ − q)/(p − q) with variance range²·λ(1 − λ)/((p − q)² n) ≤ range²/(4 (p − q)² n).
    data = plan_json("--numeric", 0, 40, "--margin", 2, "--epsilon", 1, "--epsilon", 2)
    assert (data["type"], data["min"], data["max"], data["step"], data["answers"]) == ("numeric", 0, 40, 1, 41)
    z = norm.ppf(0.975)
    for row, eps in zip(data["plans"], (1.0, 2.0)):
        assert (row["mechanism"], row["grid"]) == ("grid", 1)
        mech = mechanism(2, eps)
        assert row["n"] == math.ceil((z * 40 / (2 * (mech.p - mech.q)) / 2) ** 2)
        assert row["n_without_privacy"] == math.ceil((z * 20 / 2) ** 2)  # answers at 0 and 40: sd 20
        best = row["candidates"][0]
        assert best["margin_worst"] == pytest.approx(2, rel=2e-3) and best["needed"] == row["n"]
        laplace_row = next(c for c in row["candidates"] if c["mechanism"] == "laplace")
        t = laplace(40, eps).t  # Var(x + Z) = Var x + 2t/(1 − t)², worst Var x = 40²/4
        assert laplace_row["margin_worst"] == pytest.approx(z * math.sqrt((400 + 2 * t / (1 - t) ** 2) / row["n"]))
        assert all(c["margin_worst"] >= best["margin_worst"] for c in row["candidates"])


def test_numeric_margin_is_in_the_question_units():
    # 0..20 in steps of 0.5 is 40 steps: the same plan as 0..40 with the margin doubled in steps
    halves = plan_json("--numeric", 0, 20, "--step", 0.5, "--margin", 1, "--epsilon", 1)["plans"][0]
    whole = plan_json("--numeric", 0, 40, "--margin", 2, "--epsilon", 1)["plans"][0]
    assert halves["n"] == whole["n"]
    assert [c["margin_worst"] * 2 for c in halves["candidates"]] == pytest.approx(
        [c["margin_worst"] for c in whole["candidates"]])


def test_numeric_plan_margin_holds_by_monte_carlo():
    """Seeded: 4,000 surveys of the planned size from a population half at 0 and half at 40 (the worst
    case; respondents sampled, as the intervals assume), randomized by the Python twin; the 95% spread
    of the estimated mean is the planned margin."""
    row = plan_json("--numeric", 0, 40, "--margin", 2, "--epsilon", 1)["plans"][0]
    n, mech = row["n"], grid_mechanism(40, 1, 1.0)
    rng = np.random.default_rng(20261123)
    values = 40 * rng.integers(0, 2, size=(4000, n))
    reports = randomize_grid(values, mech, rng)
    means = 40 * (reports.mean(axis=1) - mech.rr.q) / (mech.rr.p - mech.rr.q)
    assert abs(means.mean() - 20) < 0.1
    assert norm.ppf(0.975) * means.std() == pytest.approx(2, rel=0.05)


def test_multi_plan_is_the_yes_no_plan_at_epsilon_over_k():
    data = plan_json("--multi", 4, "--margin", 0.05, "--epsilon", 2, "--epsilon", 4)
    assert data["type"] == "multi" and data["options"] == 4
    for row, eps in zip(data["plans"], (2.0, 4.0)):
        mech = multi_mechanism(4, eps)
        assert row["bit_epsilon"] == eps / 4 and row["epsilon"] == pytest.approx(mech.epsilon)
        # the same number the single-choice planner gives a yes/no question at ε/4, through the CLI
        choice = plan_json("--k", 2, "--margin", 0.05, "--epsilon", eps / 4)["plans"][0]
        assert row["n"] == choice["n"] and row["exact"]
        # the decided search (issue 40): the margin met exactly, within 1 % above the exhaustive n
        assert_decided(row["n"], eps / 4, 2, 0.05)
        # and within 2% of the large-sample formula z²/(4 margin² (p − q)²)
        assert row["n"] == pytest.approx((norm.ppf(0.975) / (2 * 0.05 * (mech.p - mech.q))) ** 2, rel=0.02)
        assert_decided(row["n_without_privacy"], None, 2, 0.05, exhaustive=sample_size(None, 2, 0.05))


def test_multi_plan_beyond_a_million_respondents_is_large_sample_and_says_so():
    data = plan_json("--multi", 20, "--margin", 0.01, "--epsilon", 0.5)
    row = data["plans"][0]
    mech = multi_mechanism(20, 0.5)
    assert not row["exact"]
    assert row["n"] == math.ceil((norm.ppf(0.975) / (2 * 0.01 * (mech.p - mech.q))) ** 2)
    table = CliRunner().invoke(cli, ["plan", "--multi", "20", "--margin", "0.01", "--epsilon", "0.5"]).output
    assert f"~{row['n']:,}" in table and "large-sample" in table


def arm_variance(k, p, q, values, weights):
    """Var of the unbiased score (R − q·k(k−1)/2)/(p − q) of k-ary randomized response, computed
    from the report distribution itself (not the module's formula)."""
    reports = np.arange(k)
    dist = sum(w * np.where(reports == v, p, q) for v, w in zip(values, weights))
    score = (reports - q * k * (k - 1) / 2) / (p - q)
    mean = dist @ score
    return dist @ (score - mean) ** 2


@pytest.mark.parametrize("items,epsilon", [(3, None), (3, 1.0), (5, 2.0)])
def test_list_plan_n_is_the_difference_in_means_variance(items, epsilon):
    args = ["--list", items, "--margin", 0.1] + ([] if epsilon is None else ["--epsilon", epsilon])
    data = plan_json(*args)
    assert data["type"] == "list" and data["items"] == items
    plain, *protected = data["plans"]
    assert plain["declared_epsilon"] is None and plain["epsilon"] is None
    row = plain if epsilon is None else protected[0]
    mech = list_mechanism(items, epsilon)
    p, q = (1.0, 0.0) if epsilon is None else (mech.rr.p, mech.rr.q)
    # worst case: control counts at 0 or J, treatment at 0 or J + 1, half each
    v = arm_variance(items + 2, p, q, [0, items], [0.5, 0.5]) + arm_variance(items + 2, p, q, [0, items + 1], [0.5, 0.5])
    assert row["needed_worst"] == 2 * math.ceil(norm.ppf(0.975) ** 2 * v / 0.1**2)
    assert row["needed_worst"] % 2 == 0 and row["needed_typical"] <= row["needed_worst"]
    if epsilon is not None:
        assert row["declared_epsilon"] == epsilon and row["needed_worst"] > plain["needed_worst"]


def test_default_epsilons_and_the_plain_row_in_the_table():
    out = CliRunner().invoke(cli, ["plan", "--list", "3", "--margin", "0.1"]).output
    assert "plain (not protected by ε)" in out
    for eps in ("0.5", "1", "2", "4"):
        assert f"\n  {eps} " in out


def test_numeric_plan_table_in_a_real_process():
    done = subprocess.run(DENIABLE + ["plan", "--numeric", "0", "40", "--margin", "2", "--epsilon", "1"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Respondents needed for a margin of ±2 on the mean")
    row = next(line.split() for line in lines if line.startswith("  1 "))
    assert row[1:4] == ["grid", "G=1", "1.0000"]
    assert int(row[4].replace(",", "")) == plan_json("--numeric", 0, 40, "--margin", 2, "--epsilon", 1)["plans"][0]["n"]
    assert "Laplace" in done.stdout and "grid G=2" in done.stdout


BAD = [
    (["--numeric", "0", "x", "--margin", "2"], "'--numeric' / '--step': 'x' is not a number"),
    (["--numeric", "5", "1", "--margin", "2"], "--numeric: max: must be greater than min (5)"),
    (["--numeric", "0", "10", "--step", "3", "--margin", "1"], "--step: max − min (10) must be a whole number"),
    (["--numeric", "0", "5000", "--margin", "1"], "--numeric: step: a numeric question has at most 1001"),
    (["--numeric", "0", "10", "--margin", "0"], "Invalid value for '--margin'"),
    (["--numeric", "0", "10", "--margin", "1", "--epsilon", "1e-12"], "--epsilon: epsilon 1e-12 is too small"),
    (["--multi", "1", "--margin", "0.05"], "--multi: a check-all-that-apply question needs between 2 and 20"),
    (["--multi", "4", "--margin", "0.7"], "--margin: margin must be a number in (0, 0.5)"),
    (["--list", "11", "--margin", "0.05"], "--list: a list experiment needs between 1 and 10 control items"),
    (["--list", "3", "--margin", "1.5"], "Invalid value for '--margin'"),
    (["--list", "3", "--margin", "0.1", "--epsilon", "nan"], "--epsilon: epsilon must be a finite number"),
    (["--k", "2", "--list", "3", "--margin", "0.1"], "give exactly one of --k, --numeric, --multi, --list and --design"),
    (["--margin", "0.1"], "give exactly one of --k, --numeric, --multi, --list and --design"),
    (["--k", "2", "--step", "2", "--margin", "0.1"], "--step goes with --numeric"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_a_usage_error_naming_the_option(args, message):
    result = CliRunner().invoke(cli, ["plan", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
