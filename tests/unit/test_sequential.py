"""Confidence sequences (monitoring mode): the martingale, the interval, coverage at every n, width."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import beta as beta_dist

from deniable.client.mechanism import mechanism
from deniable.client.randomizer import randomize
from deniable.estimators import estimate, monitor, monitor_path
from deniable.estimators.sequential import (DEFAULT_TUNED_FOR, METHOD, PRIOR_FRACTION, confidence_sequence,
                                            lambda_sequence, log_martingale)

C = PRIOR_FRACTION * DEFAULT_TUNED_FOR


@pytest.mark.parametrize("x,n,lam,c", [(3, 10, 0.3, 5.0), (40, 100, 0.55, 50.0), (0, 20, 0.2, 1000.0),
                                       (700, 1000, 0.6, 1000.0)])
def test_log_martingale_is_the_mixture_of_likelihood_ratios(x, n, lam, c):
    # Independent: integrate the likelihood ratio against the Beta(cλ, c(1 − λ)) prior numerically.
    def integrand(theta):
        return math.exp(x * math.log(theta / lam) + (n - x) * math.log((1 - theta) / (1 - lam))) \
            * beta_dist.pdf(theta, c * lam, c * (1 - lam))

    value, _ = integrate.quad(integrand, 0, 1, points=[x / n if n else 0.5, lam], limit=400, epsabs=0, epsrel=1e-10)
    assert float(log_martingale(x, n, lam, c)) == pytest.approx(math.log(value), abs=1e-7)


def test_the_interval_is_the_hull_of_the_accepted_lambdas_on_a_dense_grid():
    rng = np.random.default_rng(4)
    threshold = math.log(1 / 0.05)
    for _ in range(40):
        k, epsilon = int(rng.choice([2, 4])), float(rng.choice([0.5, 1.0, 2.0]))
        m = mechanism(k, epsilon)
        n = int(10 ** rng.uniform(0.5, 5))
        x = int(rng.integers(0, n + 1))
        grid = np.linspace(m.q, m.p, 200_001)[1:-1]
        accepted = grid[log_martingale(x, n, grid, C) < threshold]
        low, high, empty = lambda_sequence(x, n, m.p, m.q, 0.95)
        if accepted.size == 0:
            assert empty
            continue
        step = grid[1] - grid[0]
        assert not empty
        assert float(low) <= accepted.min() + 1e-12 and float(low) >= accepted.min() - 2 * step, (n, x)
        assert float(high) >= accepted.max() - 1e-12 and float(high) <= accepted.max() + 2 * step, (n, x)


def test_time_uniform_coverage_on_seeded_paths():
    # A small version of scripts/sequence_coverage.py (2,000 paths of 10^5 there): 300 paths of
    # 3,000 respondents, checked at every n, must all-but-5% never exclude the truth.
    rng = np.random.default_rng(20)
    k, epsilon, pi = 2, 1.0, 0.3
    m = mechanism(k, epsilon)
    lam = m.q + (m.p - m.q) * pi
    truth = (rng.random((300, 3000)) >= pi).astype(np.int64)  # option 0 with probability π
    x = np.cumsum(randomize(truth, k, epsilon, rng=rng) == 0, axis=1)
    n = np.arange(1, 3001)
    crossed = np.any(log_martingale(x, n, lam, C) >= math.log(20), axis=1)
    assert crossed.mean() <= 0.05
    # and the martingale test is the interval's membership test, at a few looks
    for path in range(5):
        for look in (10, 300, 3000):
            low, high = confidence_sequence(x[path, look - 1], look, m.p, m.q)
            inside = bool(low <= pi <= high)
            assert inside == bool(log_martingale(x[path, look - 1], look, lam, C) < math.log(20))


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_width_at_ten_thousand_is_within_1_6_times_the_exact_interval(k, epsilon):
    m = mechanism(k, epsilon)
    for pi in (0.05, 0.3, 0.5):
        lam = m.q + (m.p - m.q) * pi
        x = round(10_000 * lam)
        counts = [x, 10_000 - x] + [0] * (k - 2) if k == 2 else [x] + [(10_000 - x) // 3] * 2 + [
            10_000 - x - 2 * ((10_000 - x) // 3)]
        fixed = estimate(counts, epsilon)
        sequence = monitor(counts, epsilon)
        ratio = (sequence.ci_high[0] - sequence.ci_low[0]) / (fixed.ci_high[0] - fixed.ci_low[0])
        assert 1.0 < ratio <= 1.6, (pi, ratio)


def test_monitor_keeps_the_point_estimates_and_names_its_method():
    fixed, sequence = estimate([620, 380], 1.0), monitor([620, 380], 1.0)
    assert sequence.method == METHOD == "confidence-sequence"
    np.testing.assert_array_equal(sequence.estimate, fixed.estimate)
    np.testing.assert_array_equal(sequence.std_error, fixed.std_error)
    assert np.all(sequence.ci_low <= fixed.ci_low) and np.all(sequence.ci_high >= fixed.ci_high)
    assert "every n" in sequence.note
    together = monitor([620, 380], 1.0, simultaneous=True)
    assert np.all(together.ci_low <= sequence.ci_low) and np.all(together.ci_high >= sequence.ci_high)


def test_monitor_at_n_zero_and_for_a_direct_question():
    empty = monitor([0, 0, 0], 1.0)
    assert empty.n == 0 and np.all(empty.ci_low == 0) and np.all(empty.ci_high == 1)
    direct = monitor([30, 70], None)
    assert direct.p == 1 and direct.ci_low[0] < 0.3 < direct.ci_high[0]


@pytest.mark.parametrize("tuned_for", [0, -5, 2.5, True, "100"])
def test_tuned_for_must_be_a_count(tuned_for):
    with pytest.raises(ValueError, match="tuned_for"):
        monitor([10, 10], 1.0, tuned_for=tuned_for)


def test_tuning_moves_where_the_sequence_is_narrowest():
    counts = [int(0.6 * 1000), 400]
    near, far = monitor(counts, 1.0, tuned_for=1000), monitor(counts, 1.0, tuned_for=1_000_000)
    assert (near.ci_high[0] - near.ci_low[0]) < (far.ci_high[0] - far.ci_low[0])


def test_monitor_path_accumulates_days_and_compares_with_the_fixed_interval():
    path = monitor_path([[30, 20], [0, 0], [40, 10]], 1.0, labels=["d1", "d2", "d3"])
    assert path.n.tolist() == [50, 50, 100]
    again = monitor([70, 30], 1.0)
    np.testing.assert_allclose(path.ci_low[2], again.ci_low)
    np.testing.assert_allclose(path.fixed_high[2], estimate([70, 30], 1.0).ci_high)
    with pytest.raises(ValueError, match="labels"):
        monitor_path([[1, 2]], 1.0, labels=["a", "b"])
    with pytest.raises(ValueError, match="non-negative"):
        monitor_path([[1, -2]], 1.0)
