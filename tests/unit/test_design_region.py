"""The simultaneous region intervals of designs with more than two answers
(:mod:`deniable.estimators.design_region`): the vertex enumeration against independent linear
programs, and the coverage summed exactly over every multinomial outcome."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.stats import beta, multinomial

from deniable.client.designs import custom
from deniable.estimators.design_region import METHOD, region_intervals, report_box
from deniable.estimators.designs import estimate_design

GRADED = [[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.2, 0.7]]


def test_the_report_box_is_clopper_pearson_at_the_bonferroni_level():
    x = np.array([0, 7, 13])
    low, high = report_box(x, 0.95)
    tail = 0.05 / 6
    assert low == pytest.approx([0.0, beta.ppf(tail, 7, 14), beta.ppf(tail, 13, 8)], rel=1e-10)
    assert high == pytest.approx([beta.ppf(1 - tail, 1, 20), beta.ppf(1 - tail, 8, 13), beta.ppf(1 - tail, 14, 7)],
                                 rel=1e-10)


def test_the_vertices_give_the_linear_programs_optima():
    """Each end is min/max of π_t over {π ∈ Δ : l ≤ Mπ ≤ u}, solved here by HiGHS, independently."""
    rng = np.random.default_rng(7)
    m = np.array(GRADED)
    for _ in range(60):
        n = int(rng.integers(3, 300))
        x = rng.multinomial(n, rng.dirichlet([1, 1, 1]))
        low, high = region_intervals(x, m, 0.9)
        lo_box, hi_box = report_box(x, 0.9)
        for t in range(3):
            ends = []
            for sign in (1.0, -1.0):
                c = np.zeros(3)
                c[t] = sign
                fit = linprog(c, A_ub=np.vstack([m, -m]), b_ub=np.concatenate([hi_box, -lo_box]),
                              A_eq=np.ones((1, 3)), b_eq=[1.0], bounds=[(0, 1)] * 3, method="highs")
                ends.append(sign * fit.fun if fit.status == 0 else None)
            if ends[0] is None:
                assert (low[t], high[t]) == (0.0, 1.0)
            else:
                assert (low[t], high[t]) == pytest.approx(tuple(ends), abs=1e-9)


@pytest.mark.parametrize("truth", [(1 / 3, 1 / 3, 1 / 3), (0.7, 0.2, 0.1), (0.9, 0.1, 0.0), (1.0, 0.0, 0.0)])
def test_the_coverage_summed_over_every_outcome_is_at_least_nominal(truth):
    """Every (x₁, x₂, x₃) of n = 25 reports, its probability under λ = Mπ: the intervals hold every
    share at once with probability ≥ 0.95 (the construction guarantees it: module notes)."""
    m = np.array(GRADED)
    n = 25
    xs = np.array([(a, b, n - a - b) for a in range(n + 1) for b in range(n + 1 - a)])
    prob = multinomial.pmf(xs, n, m @ np.array(truth))
    held = np.array([np.all((lo <= np.array(truth) + 1e-12) & (np.array(truth) - 1e-12 <= hi))
                     for lo, hi in (region_intervals(x, m, 0.95) for x in xs)])
    assert prob.sum() == pytest.approx(1.0)
    assert prob @ held >= 0.95


def test_estimate_design_gives_a_custom_three_answer_design_these_intervals():
    design = custom(GRADED)
    result = estimate_design([120, 50, 30], design, confidence=0.9)
    low, high = region_intervals([120, 50, 30], design.matrix, 0.9)
    assert result.method == METHOD and result.note is None
    assert result.ci_low.tolist() == low.tolist() and result.ci_high.tolist() == high.tolist()
    assert np.all(low <= np.clip(result.consistent, 0, 1) + 1e-12) and np.all(result.consistent <= high + 1e-12)
    assert f"90% {METHOD} intervals" in result.summary()
