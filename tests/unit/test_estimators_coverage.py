"""Exact coverage targets (part of the grid; scripts/coverage_table.py prints all) and planning."""

import numpy as np
import pytest

from deniable.estimators import coverage, estimate, expected_width, margin_of_error, sample_size
from deniable.estimators.intervals import interval
from deniable.client.mechanism import resolve


def pi_grid(method, n, k, epsilon):
    params = resolve(k, epsilon)
    low, high = interval(method, np.arange(n + 1), n, params.p, params.q, 0.95)
    ends = np.concatenate([low, high])
    return np.unique(np.clip(np.concatenate([np.linspace(0, 1, 2001), ends - 1e-9, ends + 1e-9]), 0, 1))


CELLS = [(30, 2, 1.0), (30, 5, 2.0), (100, 2, 0.5), (100, 5, 4.0), (1000, 2, 2.0)]


@pytest.mark.parametrize("n,k,epsilon", CELLS)
def test_exact_minimum_coverage(n, k, epsilon):
    cov = coverage("exact", n, k, epsilon, pi_grid("exact", n, k, epsilon))
    assert cov.min() >= 0.95 - 1e-9


@pytest.mark.parametrize("method", ["likelihood", "wilson"])
@pytest.mark.parametrize("n,k,epsilon", CELLS)
def test_mean_coverage_near_nominal(method, n, k, epsilon):
    cov = coverage(method, n, k, epsilon, np.linspace(0, 1, 2001))
    assert 0.948 <= cov.mean() <= 0.965


def test_exact_width_close_to_wilson():
    pi = np.linspace(0, 1, 2001)
    exact = np.mean([expected_width("exact", *cell, pi).mean() for cell in CELLS[:4]])
    wilson = np.mean([expected_width("wilson", *cell, pi).mean() for cell in CELLS[:4]])
    assert exact <= 1.03 * wilson


def test_coverage_matches_brute_force_sum():
    from scipy.stats import binom

    n, k, epsilon, pi = 20, 2, 1.0, 0.37
    params = resolve(k, epsilon)
    lam = params.q + (params.p - params.q) * pi
    total = sum(
        binom.pmf(x, n, lam)
        for x in range(n + 1)
        if (r := estimate([x, n - x], epsilon, method="wilson")).ci_low[0] <= pi <= r.ci_high[0]
    )
    assert coverage("wilson", n, k, epsilon, [pi])[0] == pytest.approx(total, abs=1e-14)


@pytest.mark.parametrize("n", [200, 1500])
@pytest.mark.parametrize("k,epsilon", [(2, None), (2, 0.5), (5, 0.5), (5, 1.0), (5, 4.0)])
def test_margin_of_error_is_the_exact_worst_case(n, k, epsilon):
    pi = np.linspace(0, 1, 201)
    exact = expected_width("exact", n, k, epsilon, pi).max() / 2
    assert exact - 1e-12 <= margin_of_error(epsilon, k, n) <= exact * 1.002


def test_sample_size_inverts_margin():
    n = sample_size(1.0, 2, 0.08)
    assert margin_of_error(1.0, 2, n) <= 0.08 < margin_of_error(1.0, 2, n - 1)
    assert sample_size(None, 2, 0.05) < sample_size(2.0, 2, 0.05) < sample_size(0.5, 2, 0.05)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: sample_size(1.0, 2, 0), "margin must be a number in (0, 0.5)"),
        (lambda: sample_size(1.0, 1, 0.05), "k must be an integer >= 2"),
        (lambda: margin_of_error(1.0, 2, 0), "n must be a positive integer"),
        (lambda: margin_of_error(1.0, 2, 100, confidence=2), "confidence must be a number in (0, 1)"),
        (lambda: coverage("magic", 10, 2, 1.0, [0.5]), "method must be one of"),
        (lambda: coverage("exact", 10, 2, 1.0, [1.5]), "pi must lie in [0, 1]"),
    ],
)
def test_planning_bad_input(call, message):
    with pytest.raises(ValueError) as info:
        call()
    assert message in str(info.value)
