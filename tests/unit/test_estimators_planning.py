"""The planner: exact worst-case expected half-widths, and sample sizes that deliver them.

The reference sums the binomial pmf over every count 0..n with the exact intervals of all
counts (no window, no search): ``½ Σ_x b(x; n, λ)(ci_high − ci_low)`` on a fine grid of π.
"""

import numpy as np
import pytest
from scipy.stats import binom

from deniable.client.mechanism import resolve
from deniable.estimators import estimate, margin_of_error, plan, sample_size, worst_case
from deniable.estimators.intervals import interval


def half_widths_by_brute_force(n, k, epsilon, pi, confidence=0.95):
    m = resolve(k, epsilon)
    x = np.arange(n + 1)
    low, high = interval("exact", x, n, m.p, m.q, confidence)
    lam = m.q + (m.p - m.q) * np.asarray(pi)
    return binom.pmf(x[None, :], n, lam[:, None]) @ (high - low) / 2


GRID = np.linspace(0, 1, 1001)


def test_the_audit_case_now_delivers():
    # issue 14: k = 2, ε = 1, margin 0.05 gave n = 1,799, whose worst-case half-width is 0.0503
    n = sample_size(1.0, 2, 0.05)
    assert n == 1819  # golden: from the exact sums below (n = 1818 gives 0.050027 at π = 0.5)
    assert half_widths_by_brute_force(n, 2, 1.0, GRID).max() <= 0.05
    assert half_widths_by_brute_force(n - 1, 2, 1.0, [0.5])[0] > 0.05
    assert half_widths_by_brute_force(1799, 2, 1.0, [0.5])[0] > 0.05


@pytest.mark.parametrize("epsilon,k,margin", [(None, 2, 0.05), (2.0, 4, 0.04), (0.5, 3, 0.1), (4.0, 10, 0.08)])
def test_plan_delivers_and_one_fewer_does_not(epsilon, k, margin):
    r = plan(epsilon, k, margin)
    assert r.half_width <= margin < r.half_width_one_fewer
    assert half_widths_by_brute_force(r.n, k, epsilon, GRID).max() <= margin + 1e-12
    assert half_widths_by_brute_force(r.n - 1, k, epsilon, [r.worst_pi])[0] > margin - 1e-12
    assert r.n == sample_size(epsilon, k, margin)


@pytest.mark.parametrize("epsilon,k,n", [(1.0, 2, 250), (1.0, 2, 1000), (0.3, 10, 700), (2.5, 4, 3000), (None, 3, 50)])
def test_margin_of_error_is_the_exact_worst_case(epsilon, k, n):
    w = worst_case(epsilon, k, n)
    brute = half_widths_by_brute_force(n, k, epsilon, GRID)
    # the search's maximum is at least the grid's, and not above it by more than the grid misses
    assert brute.max() - 1e-12 <= w.half_width <= brute.max() * (1 + 2e-3)
    assert half_widths_by_brute_force(n, k, epsilon, [w.worst_pi])[0] == pytest.approx(w.half_width, abs=1e-10)
    assert margin_of_error(epsilon, k, n) == w.half_width


def test_worst_case_pi_is_reported_where_the_width_peaks():
    # two options: λ = ½ at π = ½, where binomial intervals are widest
    assert abs(worst_case(1.0, 2, 2000).worst_pi - 0.5) < 0.1
    # ten options at ε = 0.3: p < ½, so the widest λ is p, but truncation at p narrows the
    # interval there: the worst case is inside, and moves toward π = 1 as n grows
    small, large = worst_case(0.3, 10, 2000), worst_case(0.3, 10, 200_000)
    assert 0.3 < small.worst_pi < 0.95 and small.worst_pi < large.worst_pi


@pytest.mark.slow
def test_large_n_plan_delivers():
    r = plan(1.0, 2, 0.01)
    assert r.half_width <= 0.01 < r.half_width_one_fewer
    # the expected half-width at n, summed over every count (45k intervals)
    assert half_widths_by_brute_force(r.n, 2, 1.0, [r.worst_pi, 0.5]).max() <= 0.01


def test_more_privacy_needs_more_respondents():
    ns = [sample_size(epsilon, 4, 0.05) for epsilon in (None, 4.0, 2.0, 1.0)]
    assert ns == sorted(ns) and len(set(ns)) == 4


def test_plan_rejects_impossible_margins():
    with pytest.raises(ValueError, match="needs more than 1,000,000,000 respondents"):
        plan(0.01, 10, 0.001)
    with pytest.raises(ValueError, match="n must be at most"):
        margin_of_error(1.0, 2, 10**10)


def test_estimates_at_the_planned_n_have_about_that_half_width():
    # a sanity link between planner and estimator: at π = worst_pi, the typical count's interval
    r = plan(2.0, 2, 0.05)
    m = resolve(2, 2.0)
    count = round(r.n * (m.q + (m.p - m.q) * r.worst_pi))
    e = estimate([count, r.n - count], 2.0)
    assert (e.ci_high[0] - e.ci_low[0]) / 2 == pytest.approx(r.half_width, rel=0.05)
