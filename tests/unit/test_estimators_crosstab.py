"""Cross-tabs of two protected questions: exact moments, EM, exact coverage by enumeration, recovery."""

import itertools

import numpy as np
import pytest
from scipy.stats import multinomial

from deniable.client.mechanism import mechanism
from deniable.client.randomizer import randomize
from deniable.estimators import crosstab
from deniable.estimators.joint import (
    alpha_split, conditional_intervals, fit_joint, joint_intervals, mechanism_matrix, row_share_low,
)


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


# ---------------------------------------------------------------- exact conservative intervals


def all_tables(n, cells):
    """Every table of n reports over ``cells`` cells (compositions of n)."""
    for split in itertools.combinations(range(n + cells - 1), cells - 1):
        edges = (-1,) + split + (n + cells - 1,)
        yield [edges[i + 1] - edges[i] - 1 for i in range(cells)]


@pytest.mark.parametrize("truth,eps_row,eps_col", [
    ([[0.0, 0.1], [0.4, 0.5]], 1.0, 1.0),
    ([[0.02, 0.08], [0.3, 0.6]], 3.0, 3.0),
    ([[0.25, 0.25], [0.25, 0.25]], 0.5, 2.0),
    ([[0.0, 0.0], [0.0, 1.0]], 2.0, 2.0),
    ([[0.5, 0.0], [0.0, 0.5]], None, 1.0),
])
def test_joint_and_conditional_coverage_by_exact_enumeration(truth, eps_row, eps_col):
    # exact coverage: the multinomial pmf summed over every table of n = 18 reports (no simulation)
    n, truth = 18, np.array(truth)
    m1 = mechanism(2, eps_row) if eps_row else None
    m2 = mechanism(2, eps_col)
    row = (m1.p, m1.q) if m1 else (1.0, 0.0)
    p1, p2 = mechanism_matrix(2, *row), mechanism_matrix(2, m2.p, m2.q)
    lam = (p1 @ truth @ p2.T).ravel()
    tables = np.array(list(all_tables(n, 4)))
    weights = multinomial.pmf(tables, n, lam)
    assert weights.sum() == pytest.approx(1, abs=1e-12)
    tables = tables.reshape(-1, 2, 2)
    low, high = joint_intervals(tables, row, (m2.p, m2.q), 0.95)
    joint = np.einsum("t,tij->ij", weights, ((low <= truth) & (truth <= high)).astype(float))
    assert joint.min() >= 0.95
    c_low, c_high = conditional_intervals(tables, row, (m2.p, m2.q), 0.95)
    estimable = row_share_low(tables, row, 0.95) > 0
    with np.errstate(invalid="ignore"):
        theta = truth / truth.sum(axis=1, keepdims=True)
    held = np.where(np.isnan(theta), True, (c_low <= theta) & (theta <= c_high))
    conditional = np.einsum("t,tij->ij", weights, np.where(estimable[:, :, None], held, True).astype(float))
    assert conditional.min() >= 0.95


def test_identity_behind_the_joint_intervals():
    # Π_ij = [(1 − q1 − q2)Λ_A − q2Λ_B − q1Λ_C + q1q2]/(d1d2), for random Π (the module's (1))
    rng = np.random.default_rng(3)
    m1, m2 = mechanism(3, 0.7), mechanism(4, 2.2)
    p1, p2 = mechanism_matrix(3, m1.p, m1.q), mechanism_matrix(4, m2.p, m2.q)
    for _ in range(5):
        truth = rng.dirichlet(np.ones(12)).reshape(3, 4)
        lam = p1 @ truth @ p2.T
        for i in range(3):
            for j in range(4):
                a, b, c = lam[i, j], lam[i].sum() - lam[i, j], lam[:, j].sum() - lam[i, j]
                value = ((1 - m1.q - m2.q) * a - m2.q * b - m1.q * c + m1.q * m2.q) / ((m1.p - m1.q) * (m2.p - m2.q))
                assert value == pytest.approx(truth[i, j], abs=1e-12)


def test_alpha_split_spends_alpha_by_design_only():
    split = alpha_split([0.9, 0.05, 0.05], 0.05)
    assert split.sum() == pytest.approx(0.05, rel=1e-9) and split[0] > 10 * split[1]
    assert alpha_split([0.0, 1.0, 2.0], 0.05)[0] == 0
    assert alpha_split([1.0], 0.05)[0] == pytest.approx(0.05, rel=1e-9)


def test_rare_row_is_refused_with_a_note():
    c = crosstab([[3, 1, 2], [100, 200, 194]], 1.0, 2.0)
    assert list(c.row_estimable) == [False, True]
    assert np.all(np.isnan(c.conditional_estimate[0])) and np.all(c.conditional_ci_low[0] == 0)
    assert np.all(c.conditional_ci_high[0] == 1) and "too few respondents in row 0" in c.note
    np.testing.assert_allclose(c.conditional_estimate[1].sum(), 1)
    assert c.method == "exact" and c.converged


def test_em_converges_on_the_audit_case_and_meets_the_kkt_conditions():
    # issue 14: 3×3 at n = 50,000, ε = 1 stopped at its 20,000-step cap in 27% of runs
    rng = np.random.default_rng(11)
    m = mechanism(3, 1.0)
    p = mechanism_matrix(3, m.p, m.q)
    for _ in range(12):
        truth = rng.dirichlet(np.full(9, 0.5))
        truth[rng.random(9) < 0.3] = 0
        truth = (truth / truth.sum()).reshape(3, 3)
        table = rng.multinomial(50_000, (p @ truth @ p.T).ravel()).reshape(3, 3)
        fitted, converged, steps = fit_joint(table, p, p)
        assert converged and steps < 5_000
        # the KKT conditions, computed here: score 1 on the support, at most 1 off it
        score = p.T @ (table / (p @ fitted @ p.T)) @ p / table.sum()
        assert np.all(np.abs(score[fitted > 0] - 1) < 1e-8) and np.all(score[fitted == 0] <= 1 + 1e-8)
        assert np.all(fitted >= 0) and fitted.sum() == pytest.approx(1, abs=1e-12)


def test_non_convergence_is_reported(monkeypatch):
    from deniable.estimators import joint

    monkeypatch.setattr(joint, "SQUAREM_ITERATIONS", 0)
    monkeypatch.setattr(joint, "NEWTON_ROUNDS", 0)
    c = crosstab([[300, 10, 0], [5, 200, 30], [0, 40, 400]], 1.0, 1.0)
    assert not c.converged and "did not converge" in c.note
