"""Central-DP release math: post-processing, intervals with the noise accounted for, the audit bound."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import binom

from deniable.client.mechanism import mechanism
from deniable.client.randomizer import randomize
from deniable.estimators.release import (consistent_counts, laplace_cdf, noise_bound, noisy_cdf,
                                         noisy_group_interval, noisy_share_interval)
from deniable.estimators.release_audit import neighbour_epsilon_bound


def laplace_pmf(z, beta):
    return (1 - beta) / (1 + beta) * beta ** np.abs(z)


@pytest.mark.parametrize("noisy,total", [([12, -3, 5], 15), ([0, 0, 0], 7), ([-5, -9], 4), ([3.5, 3.5], 7),
                                         ([100, 1, 2, -1], 90), ([4, 4, 4], 0)])
def test_consistent_counts_are_the_projection_rounded_to_the_total(noisy, total):
    out = consistent_counts(noisy, total)
    assert out.dtype.kind == "i" and out.sum() == total and np.all(out >= 0)
    # independent: the Euclidean projection by a generic constrained optimizer, then within 1 of it
    y = np.asarray(noisy, dtype=float)
    projection = minimize(lambda v: np.sum((v - y) ** 2), np.full(y.size, total / y.size), method="SLSQP",
                          bounds=[(0, None)] * y.size, constraints=[{"type": "eq", "fun": lambda v: v.sum() - total}],
                          options={"ftol": 1e-12})
    assert np.all(np.abs(out - projection.x) < 1 + 1e-6)


def test_laplace_cdf_sums_the_pmf():
    beta = 0.6
    z = np.arange(-60, 61)
    np.testing.assert_allclose(laplace_cdf(z, beta), np.cumsum(laplace_pmf(z, beta)) + laplace_pmf(-61, beta) / (1 - beta),
                               atol=1e-12)


def test_noisy_cdf_is_the_convolution():
    n, pi, beta = 30, 0.3, 0.55
    x = np.arange(n + 1)
    for y in (-3, 0, 9, 14, 40):
        # independent: a double sum over the binomial and the noise, noise range far into its tail
        z = np.arange(-200, 201)
        total = sum(binom.pmf(xi, n, pi) * laplace_pmf(z, beta)[(xi + z) <= y].sum() for xi in x)
        assert noisy_cdf(y, n, pi, beta) == pytest.approx(total, abs=1e-12)
        assert noisy_cdf(y, n, pi, beta, upper=True) == pytest.approx(1 - noisy_cdf(y - 1, n, pi, beta), abs=1e-12)


@pytest.mark.parametrize("n,beta", [(20, 0.6065), (60, 0.3679)])
def test_noisy_share_interval_covers_at_least_the_level_at_every_share(n, beta):
    ys = np.arange(-40, n + 41)
    intervals = [noisy_share_interval(int(y), n, beta) for y in ys]
    for pi in np.linspace(0, 1, 41):
        pmf = np.array([noisy_cdf(y, n, pi, beta) - noisy_cdf(y - 1, n, pi, beta) for y in ys])
        covered = np.array([low <= pi <= high for low, high in intervals])
        assert pmf @ covered >= 0.95 - 1e-9, (pi, pmf @ covered)


def test_noisy_share_interval_is_wider_than_clopper_pearson_without_noise():
    low, high = noisy_share_interval(30, 100, 0.5)
    from deniable.estimators.binomial import cp_lower, cp_upper

    assert low < cp_lower(30, 100, 0.025) and high > cp_upper(30, 100, 0.025)


def test_noise_bound_is_the_smallest_that_holds():
    for beta, cells, delta in ((0.5, 1, 0.01), (0.6065, 3, 0.01), (0.9, 4, 0.005)):
        t = noise_bound(beta, cells, delta)
        tail = lambda s: 2 * beta ** (s + 1) / (1 + beta)  # noqa: E731  P(|Z| > s)
        assert cells * tail(t) <= delta < cells * tail(t - 1)


def test_noisy_group_interval_covers_on_seeded_simulations():
    rng = np.random.default_rng(5)
    m = mechanism(2, 1.0)
    from deniable.client import discrete

    draw = discrete.source(rng)
    misses = 0
    for _ in range(400):
        truth = (rng.random(150) >= 0.3).astype(np.int64)
        counts = np.bincount(randomize(truth, 2, 1.0, rng=rng), minlength=2)
        noisy, threshold = discrete.geometric_mechanism(counts, 0.5, 2, draw)
        low, high = noisy_group_interval(noisy, 0, m.p, m.q, threshold / 2**32)
        misses += not low <= 0.3 <= high
    assert misses / 400 <= 0.05


def test_neighbour_bound_matches_the_ratio_and_refuses_bad_tables():
    bound = neighbour_epsilon_bound([700_000, 300_000], [300_000, 700_000])
    assert 0.83 < bound.lower_bound < bound.point == pytest.approx(np.log(7 / 3))
    with pytest.raises(ValueError, match="same positive number"):
        neighbour_epsilon_bound([1, 2], [1, 1])
    with pytest.raises(ValueError, match="same length"):
        neighbour_epsilon_bound([1, 2, 3], [1, 2])
