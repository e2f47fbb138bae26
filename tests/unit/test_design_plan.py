"""Planning a question randomized by a design (issue 24): ``deniable plan --design`` and the type's plan.

Exact for binary designs and forced response (checked against the expected half-width summed here
over the binomial with the estimate's own intervals); the normal approximation otherwise (checked
against a grid search of the unbiased estimate's variance over the simplex)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import binom, norm
from support.plan_cache import assert_decided_design

from deniable.client.designs import custom, forced, warner
from deniable.estimators.designs import design_channels, design_margin, estimate_design, plan_design, worst_variance
from deniable.estimators.planning import worst_case_channel
from deniable.server.cli import cli
from deniable.server.survey.definition import parse_definition

FORCED = forced(0.6, [0.3, 0.1])
CUSTOM3 = custom([[0.7, 0.2, 0.1], [0.2, 0.6, 0.1], [0.1, 0.2, 0.8]])


def widths(design, n, answer=0):
    """Each count x of answer ``answer``'s report: the width of estimate_design's own interval."""
    out = []
    for x in range(n + 1):
        counts = [0] * design.k
        counts[answer], counts[(answer + 1) % design.k] = x, n - x
        r = estimate_design(np.array(counts), design)
        out.append(r.ci_high[answer] - r.ci_low[answer])
    return np.array(out)


def half_width_by_sum(design, n, pi, width, answer=0):
    """½ E[width], summed over every count of the report: Binomial(n, λ), λ = q + (p − q)π."""
    p, q = design_channels(design)[answer]
    return float(binom.pmf(np.arange(n + 1), n, q + (p - q) * pi) @ width) / 2


@pytest.mark.parametrize("design", [FORCED, warner(0.8), custom([[0.6, 0.0], [0.4, 1.0]])], ids=["forced", "warner", "zero cell"])
def test_the_exact_half_width_is_the_binomial_sum_of_the_estimates_intervals(design):
    n = 60
    width = widths(design, n)
    planned = worst_case_channel(*design_channels(design)[0], n)
    assert half_width_by_sum(design, n, planned.worst_pi, width) == pytest.approx(planned.half_width, abs=1e-9)
    grid = [half_width_by_sum(design, n, pi, width) for pi in np.linspace(0, 1, 101)]
    assert max(grid) <= planned.half_width + 1e-9  # the worst case over π is the worst
    assert design_margin(design, n) == (pytest.approx(planned.half_width), True)


def test_the_plan_is_the_first_n_whose_worst_case_meets_the_margin():
    planned = plan_design(FORCED, 0.12)
    p, q = design_channels(FORCED)[0]
    assert planned.exact and planned.half_width <= 0.12
    assert worst_case_channel(p, q, planned.n).half_width <= 0.12 < worst_case_channel(p, q, planned.n - 1).half_width


def test_the_decided_plan_meets_the_margin_within_1_percent_of_the_first_n():
    """``decided=True`` (``deniable plan --design``, the builder): an n whose worst case meets the margin,
    at most 1 % above the exhaustive search's edge of the tooth."""
    for design, margin in ((FORCED, 0.12), (FORCED, 0.05), (forced(0.5, [0.2, 0.2, 0.1]), 0.1)):
        planned = plan_design(design, margin, decided=True)
        assert planned.exact and planned.half_width <= margin
        assert_decided_design(planned.n, design, margin)


def test_forced_response_with_three_answers_plans_its_worst_answer():
    design = forced(0.5, [0.1, 0.3, 0.1])
    planned = plan_design(design, 0.1)
    widths = {pq: worst_case_channel(*pq, planned.n).half_width for pq in design_channels(design)}
    assert planned.exact and max(widths.values()) <= 0.1 == pytest.approx(0.1)
    assert set(design_channels(design)) == {(0.6, 0.1), (0.8, 0.3)}


def test_the_normal_approximation_for_other_designs():
    """V (the unbiased estimate's worst-case variance per respondent) against a grid of the simplex."""
    a = np.linalg.inv(CUSTOM3.matrix)
    best = 0.0
    for i, j in itertools.product(range(101), repeat=2):
        if i + j <= 100:
            pi = np.array([i, j, 100 - i - j]) / 100
            lam = CUSTOM3.matrix @ pi
            best = max(best, float(np.max(np.diag(a @ (np.diag(lam) - np.outer(lam, lam)) @ a.T))))
    v = worst_variance(CUSTOM3.matrix)
    assert best <= v + 1e-12 and v - best < 1e-3
    planned = plan_design(CUSTOM3, 0.05)
    assert not planned.exact and "normal approximation" in planned.method
    assert planned.n == math.ceil(norm.ppf(0.975) ** 2 * v / 0.05 ** 2)


def plan_cli(*args):
    return CliRunner().invoke(cli, ["plan", *args])


def test_deniable_plan_design():
    shown = plan_cli("--design", json.dumps({"name": "warner", "p": 0.75}), "--margin", "0.05", "--format", "json")
    assert shown.exit_code == 0, shown.output
    row = json.loads(shown.output)["plans"][0]
    # Warner's design at p = 0.75 is binary randomized response at ε = ln 3: the same exact plan
    kary = json.loads(plan_cli("--k", "2", "--epsilon", repr(math.log(3)), "--margin", "0.05", "--format", "json").output)
    assert row["n"] == kary["plans"][0]["n"] and row["exact"] and row["epsilon"] == pytest.approx(math.log(3))
    table = plan_cli("--design", json.dumps({"name": "custom", "matrix": CUSTOM3.matrix.round(6).tolist()}),
                     "--margin", "0.05")
    assert table.exit_code == 0 and "normal approximation" in table.output and "~" in table.output, table.output


@pytest.mark.parametrize("args, words", [
    (["--design", '{"name": "forced", "p": 2}'], "--design: "),
    (["--design", "{not json"], "--design: not JSON"),
    (["--design", '{"name": "warner", "p": 0.75}', "--epsilon", "1"], "--epsilon: a design has its own"),
    (["--design", '{"name": "warner", "p": 0.75}', "--k", "2"], "exactly one of"),
])
def test_deniable_plan_design_refuses_bad_input_naming_the_option(args, words):
    result = plan_cli(*args, "--margin", "0.05")
    assert result.exit_code == 2 and words in result.output, result.output


def test_the_designed_question_type_plans():
    s = parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "cheated", "text": "?", "options": ["Yes", "No"], "design": {"name": "forced", "p": 0.6, "forced": [0.3, 0.1]}}]})
    q = s.questions[0]
    plan = q.qtype.plan(q, 1000, 0.05)
    # the builder plans by the decided search (issue 40): the margin met exactly, within 1 % of the exhaustive n
    assert plan["needed"] == plan_design(FORCED, 0.05, decided=True).n and plan["needed_exact"]
    assert_decided_design(plan["needed"], FORCED, 0.05)
    assert plan["design"] == "forced"
    assert plan["moe"] == pytest.approx(design_margin(FORCED, 1000)[0]) and plan["baseline_needed"] < plan["needed"]
