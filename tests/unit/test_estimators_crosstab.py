"""Cross-tabs of two protected questions: exact moments, EM, recovery on simulated data."""

import itertools

import numpy as np
import pytest
from scipy.stats import multinomial

from deniable.client.mechanism import mechanism
from deniable.client.randomizer import randomize
from deniable.estimators import crosstab
from deniable.estimators.joint import mechanism_matrix


def test_joint_estimate_unbiased_and_covariance_exact():
    # exact expectation over every 2x2 table of n = 8 reports (multinomial pmf, no simulation)
    pi = np.array([[0.4, 0.1], [0.2, 0.3]])
    m1, m2 = mechanism(2, 1.0), mechanism(2, 2.0)
    lam = (mechanism_matrix(2, m1.p, m1.q) @ pi @ mechanism_matrix(2, m2.p, m2.q).T).ravel()
    n = 8
    mean = np.zeros(4)
    second = np.zeros((4, 4))
    for cells in itertools.product(range(n + 1), repeat=3):
        if sum(cells) > n:
            continue
        counts = np.array([*cells, n - sum(cells)])
        w = multinomial.pmf(counts, n, lam)
        est = crosstab(counts.reshape(2, 2), 1.0, 2.0).joint_estimate.ravel()
        mean += w * est
        second += w * np.outer(est, est)
    np.testing.assert_allclose(mean, pi.ravel(), atol=1e-12)
    inv = np.kron(np.linalg.inv(mechanism_matrix(2, m1.p, m1.q)), np.linalg.inv(mechanism_matrix(2, m2.p, m2.q)))
    cov = inv @ (np.diag(lam) - np.outer(lam, lam)) @ inv.T / n
    np.testing.assert_allclose(second - np.outer(mean, mean), cov, atol=1e-12)


def test_recovers_known_joint_on_large_simulated_data():
    rng = np.random.default_rng(20240601)
    truth = np.array([[0.30, 0.05, 0.05], [0.10, 0.20, 0.00], [0.05, 0.05, 0.20]])
    n = 200_000
    cells = rng.choice(9, size=n, p=truth.ravel())
    rows, cols = np.divmod(cells, 3)
    noisy_rows = randomize(rows, 3, 1.5, rng=rng)
    noisy_cols = randomize(cols, 3, 2.0, rng=rng)
    joint = np.zeros((3, 3), dtype=np.int64)
    np.add.at(joint, (noisy_rows, noisy_cols), 1)
    c = crosstab(joint, 1.5, 2.0)
    assert c.n == n and c.epsilon == pytest.approx(mechanism(3, 1.5).epsilon + mechanism(3, 2.0).epsilon)
    assert np.all(np.abs(c.joint_estimate - truth) < 4 * c.joint_std_error)
    assert np.all(np.abs(c.joint_consistent - truth) < 0.01)
    assert np.all(c.joint_consistent >= 0) and c.joint_consistent.sum() == pytest.approx(1)
    conditional = truth / truth.sum(axis=1, keepdims=True)
    assert np.all(np.abs(c.conditional_estimate - conditional) < 4 * c.conditional_std_error + 1e-3)
    np.testing.assert_allclose(c.conditional_estimate.sum(axis=1), 1)
    assert np.all(c.joint_ci_low <= c.joint_ci_high) and np.all(c.conditional_ci_high > c.conditional_ci_low)
    np.testing.assert_allclose(c.row.estimate, c.joint_estimate.sum(axis=1), atol=1e-12)


def test_em_matches_independent_em_on_small_table():
    counts = np.array([[30, 2], [5, 0]])
    m1, m2 = mechanism(2, 1.0), mechanism(2, 1.0)
    big = np.kron(mechanism_matrix(2, m1.p, m1.q), mechanism_matrix(2, m2.p, m2.q))
    pi = np.full(4, 0.25)
    for _ in range(200_000):  # the EM of Kairouz et al. on the vectorized problem
        pi = pi * (big.T @ (counts.ravel() / (big @ pi))) / counts.sum()
    np.testing.assert_allclose(crosstab(counts, 1.0, 1.0).joint_consistent.ravel(), pi, atol=1e-5)


def test_crosstab_bad_input_and_empty():
    with pytest.raises(ValueError, match="joint_counts must be a 2-d array"):
        crosstab([1, 2, 3], 1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        crosstab([[1, 2], [3, 4]], 0, 1.0)
    c = crosstab([[0, 0], [0, 0]], 1.0, 1.0)
    assert c.n == 0 and np.all(c.joint_ci_high == 1)
