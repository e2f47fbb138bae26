"""Point estimates, standard errors and input checks of estimators.estimate / subgroups."""

import math

import numpy as np
import pytest
from scipy.stats import binom, multinomial

from deniable.client.mechanism import mechanism
from deniable.estimators import METHODS, estimate, subgroups


@pytest.mark.parametrize("n,k,epsilon,option_pi", [(25, 2, 1.0, 0.3), (40, 3, 0.5, 0.6), (30, 5, 2.0, 0.1)])
def test_unbiased_and_exact_variance_from_binomial_sums(n, k, epsilon, option_pi):
    # exact expectations: sum over every count of the Binomial(n, λ) pmf (no simulation)
    m = mechanism(k, epsilon)
    lam = m.q + (m.p - m.q) * option_pi
    c = np.arange(n + 1)
    pmf = binom.pmf(c, n, lam)
    values = (c / n - m.q) / (m.p - m.q)
    mean = pmf @ values
    variance = pmf @ (values - mean) ** 2
    assert mean == pytest.approx(option_pi, abs=1e-12)
    assert variance == pytest.approx(lam * (1 - lam) / (n * (m.p - m.q) ** 2), rel=1e-10)


def test_unbiased_for_the_whole_vector_from_multinomial_sum():
    pi = np.array([0.5, 0.3, 0.2])
    m = mechanism(3, 1.0)
    lam = m.q + (m.p - m.q) * pi
    n = 12
    total = np.zeros(3)
    for a in range(n + 1):
        for b in range(n + 1 - a):
            counts = [a, b, n - a - b]
            total += multinomial.pmf(counts, n, lam) * estimate(counts, 1.0, method="wald").estimate
    np.testing.assert_allclose(total, pi, atol=1e-12)


def test_std_error_plugs_in_clipped_lambda():
    r = estimate([0, 100], 1.0)
    lam = np.clip(np.array([0, 1.0]), r.q, r.p)
    np.testing.assert_allclose(r.std_error, np.sqrt(lam * (1 - lam) / 100) / (r.p - r.q))
    assert np.all(r.std_error > 0)


def em_reference(counts, p, q, iterations=200_000):
    """Independent EM for the constrained MLE (Kairouz et al. 2016), straight from the definition."""
    counts = np.asarray(counts, dtype=float)
    k = counts.size
    matrix = np.full((k, k), q) + (p - q) * np.eye(k)
    pi = np.full(k, 1 / k)
    for _ in range(iterations):
        lam = matrix @ pi
        new = pi * (matrix.T @ (counts / lam)) / counts.sum()
        if np.abs(new - pi).max() < 1e-14:
            break
        pi = new
    return new


@pytest.mark.parametrize(
    "counts,epsilon",
    [([50, 30, 20], 1.0), ([90, 3, 4, 3], 2.0), ([10, 0, 0, 0, 0], 1.0), ([40, 38, 2, 20, 0], 0.5), ([5, 5], 0.5)],
)
def test_consistent_matches_independent_em(counts, epsilon):
    r = estimate(counts, epsilon)
    m = mechanism(len(counts), epsilon)
    np.testing.assert_allclose(r.consistent, em_reference(counts, m.p, m.q), atol=2e-5)


def test_result_fields_and_realized_parameters():
    r = estimate([700, 300], 1.0)
    m = mechanism(2, 1.0)
    assert (r.n, r.k, r.p, r.q, r.epsilon, r.declared_epsilon) == (1000, 2, m.p, m.q, m.epsilon, 1.0)
    assert r.method == "exact" and r.note == "" and r.confidence == 0.95 and not r.simultaneous
    assert r.noisy_counts.dtype.kind == "i"
    with pytest.raises(ValueError):
        r.estimate[0] = 1.0  # read-only arrays
    d = r.as_dict(["yes", "no"])
    assert d["options"][0]["label"] == "yes" and d["n"] == 1000


def test_zero_respondents_is_documented_result():
    r = estimate([0, 0, 0], 1.0)
    assert r.n == 0 and np.all(np.isnan(r.estimate)) and np.all(np.isnan(r.consistent))
    assert np.all(r.ci_low == 0) and np.all(r.ci_high == 1) and r.note
    assert r.as_dict()["options"][0]["estimate"] is None


def test_no_privacy_baseline():
    r = estimate([30, 70], None, method="clopper-pearson")
    assert (r.p, r.q) == (1.0, 0.0) and math.isinf(r.epsilon)
    np.testing.assert_allclose(r.estimate, [0.3, 0.7])


def test_subgroups_are_per_row_estimates():
    rows = subgroups([[70, 30], [0, 0], [20, 80]], 1.0)
    assert [r.n for r in rows] == [100, 0, 100]
    np.testing.assert_allclose(rows[2].estimate, estimate([20, 80], 1.0).estimate)


@pytest.mark.parametrize("n", [100_001, 10**8, 10**9])
def test_exact_stays_exact_at_any_n(n):
    # issue 14: above 10^5 "exact" used to become "likelihood"; nothing switches now
    r = estimate([n * 3 // 5, n - n * 3 // 5], 1.0)
    assert r.method == "exact" and r.note == ""
    assert np.all(r.ci_low < r.estimate) and np.all(r.estimate < r.ci_high)
    assert np.all(r.ci_high - r.ci_low < 10 * r.std_error)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(counts=[5]), "counts must have at least 2 options"),
        (dict(counts=[]), "counts must have at least 2 options"),
        (dict(counts=[3, -1]), "counts must contain non-negative integers, got a negative count"),
        (dict(counts=[2**62, 2**62]), "counts add up to 9,223,372,036,854,775,808, more than 2^53"),
        (dict(counts=[2.0**53, 2.0]), "counts add up to 9,007,199,254,740,994, more than 2^53"),
        (dict(counts=[1.5, 2]), "counts must contain non-negative integers, got non-integer values"),
        (dict(counts=["a", "b"]), "counts must contain non-negative integers"),
        (dict(counts=[[1, 2], [3, 4]]), "counts must be a 1-d array"),
        (dict(epsilon=0), "epsilon must be a finite number in (0, 20]"),
        (dict(epsilon=-1.0), "epsilon must be a finite number in (0, 20]"),
        (dict(epsilon=float("nan")), "epsilon must be a finite number"),
        (dict(epsilon="1"), "epsilon must be a number"),
        (dict(confidence=1.0), "confidence must be a number in (0, 1)"),
        (dict(confidence=0), "confidence must be a number in (0, 1)"),
        (dict(confidence="0.9"), "confidence must be a number in (0, 1)"),
        (dict(method="bayes"), "method must be one of exact, likelihood, wilson"),
        (dict(simultaneous="yes"), "simultaneous must be True or False"),
    ],
)
def test_bad_input_messages(kwargs, message):
    args = dict(counts=[10, 20], epsilon=1.0) | kwargs
    with pytest.raises(ValueError) as info:
        estimate(args.pop("counts"), args.pop("epsilon"), **args)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_methods_constant():
    assert METHODS == ("exact", "likelihood", "wilson", "clopper-pearson", "wald")
