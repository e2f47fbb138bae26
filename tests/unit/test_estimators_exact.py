"""The exact (Feldman–Cousins) belt: by definition at small n, at the boundaries, and at any n.

The references here do not use the module under test: acceptance sets are built from the
definition (sort the counts by likelihood ratio, accumulate probability), with scipy's binomial
pmf, on a grid of λ or at single λ values.
"""

import numpy as np
import pytest
from scipy.special import xlogy
from scipy.stats import binom

from deniable.client.mechanism import MechanismError, mechanism
from deniable.estimators import coverage, estimate
from deniable.estimators.evaluation import DENSE_N
from deniable.estimators.exact import PAD, TIE, Belt

TIE_REF = 1e-9  # the same tie rule as the definition in estimators/exact.py: within 1e-9 is a tie


def log_ratio_ref(y, n, lam, q, p):
    """log L(y | λ) − log L(y | clip(y/n, q, p)), straight from the definition."""
    hat = np.clip(y / n, q, p)
    return xlogy(y, lam) + xlogy(n - y, 1 - lam) - xlogy(y, hat) - xlogy(n - y, 1 - hat)


def accepted_ref(x, n, lam, q, p, confidence):
    """Whether count x is in the acceptance set at λ: mass strictly above it (ties excluded) < CL."""
    sd = np.sqrt(n * lam * (1 - lam))
    ys = np.arange(max(0, int(n * lam - 10 * sd - 50)), min(n, int(n * lam + 10 * sd + 50)) + 1)
    ys = np.union1d(ys, [x])
    r = log_ratio_ref(ys.astype(float), n, lam, q, p)
    rx = log_ratio_ref(float(x), n, lam, q, p)
    return binom.pmf(ys, n, lam)[r > rx + TIE_REF].sum() < confidence


def brute_force_belt(n, q, p, confidence, points=20_001):
    """Feldman–Cousins on a λ grid by definition: for each λ, which counts are accepted."""
    lam = np.linspace(q, p, points)[:, None]
    x = np.arange(n + 1)[None, :]
    r = log_ratio_ref(x.astype(float), n, lam, q, p)
    pmf = binom.pmf(x, n, lam)
    above = r[:, None, :] > r[:, :, None] + TIE_REF  # [λ, x, y]: y ranks above x
    mass = np.einsum("lxy,ly->lx", above, pmf)
    accepted = mass < confidence
    low = np.array([lam[accepted[:, i], 0].min() for i in range(n + 1)])
    high = np.array([lam[accepted[:, i], 0].max() for i in range(n + 1)])
    return low, high


@pytest.mark.parametrize("n,k,epsilon,confidence", [
    (10, 2, 1.0, 0.95), (12, 3, 2.0, 0.95), (12, 4, 0.3, 0.95), (15, 10, 2.5, 0.9), (20, 2, 5.0, 0.99),
    (25, 6, 0.9, 0.95), (8, 2, None, 0.95),
])
def test_belt_matches_the_definition_on_a_grid(n, k, epsilon, confidence):
    m = mechanism(k, epsilon) if epsilon else None
    q, p = (m.q, m.p) if m else (0.0, 1.0)
    step = (p - q) / 20_000
    low_ref, high_ref = brute_force_belt(n, q, p, confidence)
    low, high = Belt(n, q, p, confidence).interval(np.arange(n + 1))
    # the exact ends are within one grid step outside the grid's accepted points
    assert np.all(low <= low_ref + 1e-12) and np.all(low_ref - low <= 1.01 * step)
    assert np.all(high >= high_ref - 1e-12) and np.all(high - high_ref <= 1.01 * step)


@pytest.mark.parametrize("n,q,p,confidence", [
    (10**6, 0.2, 0.6, 0.95), (10**6, 0.0049574, 0.0134756, 0.95),
    pytest.param(10**9, 0.26894142, 0.73105858, 0.9, marks=pytest.mark.slow),  # 300,000-count sums
    pytest.param(10**9, 0.0966197, 0.1304229, 0.99, marks=pytest.mark.slow),
])
def test_ends_at_large_n_by_definition(n, q, p, confidence):
    # a few counts across [nq, np] and just outside: accepted just inside each end, rejected past it
    lam_mid = (q + p) / 2
    sd = np.sqrt(n * lam_mid * (1 - lam_mid))
    xs = np.array([n * q - 2 * sd, n * q + 0.5 * sd, n * lam_mid, n * p - 3 * sd, n * p + sd]).astype(np.int64)
    low, high = Belt(n, q, p, confidence).interval(xs)
    for x, lo, hi in zip(xs, low, high):
        if hi < p:
            assert accepted_ref(x, n, hi - 3 * PAD, q, p, confidence)
            for beyond in (hi, hi + 1e-9, hi + 1e-7, hi + 4 * sd / n):
                if beyond <= p:
                    assert not accepted_ref(x, n, beyond, q, p, confidence)
        if lo > q:
            assert accepted_ref(x, n, lo + 3 * PAD, q, p, confidence)
            for before in (lo, lo - 1e-9, lo - 1e-7, lo - 4 * sd / n):
                if before >= q:
                    assert not accepted_ref(x, n, before, q, p, confidence)


def test_the_audit_example_covers_pi_zero():
    # issue 14: ci_low was 3.45e-16 for every option, so an option nobody picks was excluded
    r = estimate([3, 3, 3, 3], epsilon=0.3)
    assert np.all(r.ci_low == 0.0)
    assert coverage("exact", 12, 4, 0.3, [0.0])[0] >= 0.95
    # simultaneous intervals keep π = 0 for every option, so a zero option is covered jointly
    assert np.all(estimate([3, 3, 3, 3], epsilon=0.3, simultaneous=True).ci_low == 0.0)


EPSILONS = [0.1, 0.2, 0.3, 0.45, 0.6, 0.75, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0,
            6.0, 8.0, 10.0]


def boundary_coverage(n, k, epsilon, confidence=0.95):
    try:
        mechanism(k, epsilon)
    except MechanismError:  # ε too small to realize for this k with 32-bit thresholds
        return None
    return coverage("exact", n, k, epsilon, [0.0, 1.0], confidence=confidence)


@pytest.mark.parametrize("k", range(2, 61))
def test_boundaries_covered_for_every_k(k):
    # every k from 2 to 60, with the ε grid visited in turn (the whole grid: the slow test below)
    for epsilon in (EPSILONS[k % len(EPSILONS)], EPSILONS[(3 * k + 7) % len(EPSILONS)]):
        cov = boundary_coverage(12, k, epsilon)
        if cov is not None:
            assert cov.min() >= 0.95, (k, epsilon, cov)


@pytest.mark.slow
@pytest.mark.parametrize("n", [12, 40])
def test_boundaries_covered_for_every_k_and_epsilon(n):
    for k in range(2, 61):
        for epsilon in EPSILONS:
            for confidence in (0.9, 0.99):
                cov = boundary_coverage(n, k, epsilon, confidence)
                if cov is not None:
                    assert cov.min() >= confidence, (n, k, epsilon, confidence, cov)


def test_boundary_ends_are_exactly_q_and_p():
    # the counts accepted at λ = q (by the definition) get ci_low = 0 exactly, not 1e-16
    m = mechanism(7, 0.45)  # k − 1 = 6: q is not a short binary fraction
    n = 30
    low, high = Belt(n, m.q, m.p, 0.95).interval(np.arange(n + 1))
    at_q = [x for x in range(n + 1) if accepted_ref(x, n, m.q, m.q, m.p, 0.95)]
    at_p = [x for x in range(n + 1) if accepted_ref(x, n, m.p, m.q, m.p, 0.95)]
    assert at_q and at_p
    assert np.all(low[at_q] == m.q) and np.all(high[at_p] == m.p)
    r = estimate([0, n] + [0] * 5, 0.45)
    assert r.ci_low[0] == 0.0 and r.ci_high[1] == 1.0


@pytest.mark.parametrize("n,k,epsilon", [
    (2_000, 4, 0.9), (DENSE_N + 1_000, 10, 2.5),
    # both levels end at the same swap point: it must come out the same to the last bit
    (12, 4, 5.0), (40, 10, 5.0),
])
def test_ends_nondecreasing_and_nested(n, k, epsilon):
    m = mechanism(k, epsilon)
    x = np.arange(n + 1)
    ends = {cl: Belt(n, m.q, m.p, cl).interval(x) for cl in (0.9, 0.95, 0.99)}
    for low, high in ends.values():
        assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) >= 0) and np.all(low < high)
    assert np.all(ends[0.99][0] <= ends[0.95][0]) and np.all(ends[0.95][0] <= ends[0.9][0])
    assert np.all(ends[0.9][1] <= ends[0.95][1]) and np.all(ends[0.95][1] <= ends[0.99][1])


def test_monotone_coverage_equals_the_full_sum():
    # above DENSE_N coverage of "exact" is P(x_a ≤ Y ≤ x_b); here against the sum over every count
    n, k, epsilon = DENSE_N + 500, 3, 1.5
    m = mechanism(k, epsilon)
    low, high = Belt(n, m.q, m.p, 0.95).interval(np.arange(n + 1))
    low, high = (low - m.q) / (m.p - m.q), (high - m.q) / (m.p - m.q)
    pi = np.array([0.0, 0.013, 0.25, 0.5, 0.77, 0.999, 1.0])
    lam = m.q + (m.p - m.q) * pi
    pmf = binom.pmf(np.arange(n + 1)[None, :], n, lam[:, None])
    covered = (np.clip(low, 0, 1)[None, :] <= pi[:, None]) & (pi[:, None] <= np.clip(high, 0, 1)[None, :])
    np.testing.assert_allclose(coverage("exact", n, k, epsilon, pi), (pmf * covered).sum(axis=1), atol=1e-12)


@pytest.mark.parametrize("n,k,epsilon,confidence", [(10**6, 2, 0.9, 0.95), (10**7, 10, 5.0, 0.9)])
def test_large_n_is_exact_with_coverage_at_least_nominal(n, k, epsilon, confidence):
    r = estimate([n // 3, n - n // 3] + [0] * (k - 2), epsilon, confidence=confidence)
    assert r.method == "exact" and r.note == ""
    pi = np.linspace(0, 1, 101)
    assert coverage("exact", n, k, epsilon, pi, confidence=confidence).min() >= confidence


def test_tie_rule_is_the_one_documented():
    assert TIE == TIE_REF
