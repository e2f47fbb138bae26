"""Interval methods: golden values from independent computations and property tests."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import xlogy
from scipy.stats import beta, binom, norm

from deniable.client.mechanism import mechanism
from deniable.estimators import METHODS, estimate


def brute_force_fc(n, q, p, confidence, points=100_001):
    """Feldman–Cousins by definition on a fine λ grid: sort counts by likelihood ratio at each λ."""
    lam = np.linspace(q, p, points)[:, None]
    x = np.arange(n + 1)[None, :]
    lam_hat = np.clip(x / n, q, p)
    log_ratio = xlogy(x, lam) + xlogy(n - x, 1 - lam) - xlogy(x, lam_hat) - xlogy(n - x, 1 - lam_hat)
    pmf = binom.pmf(x, n, lam)
    order = np.argsort(-log_ratio, axis=1, kind="stable")
    mass_before = np.cumsum(np.take_along_axis(pmf, order, axis=1), axis=1) - np.take_along_axis(pmf, order, axis=1)
    accepted_sorted = mass_before < confidence
    accepted = np.zeros_like(accepted_sorted)
    np.put_along_axis(accepted, order, accepted_sorted, axis=1)
    low = np.array([lam[accepted[:, i], 0].min() for i in range(n + 1)])
    high = np.array([lam[accepted[:, i], 0].max() for i in range(n + 1)])
    return (low - q) / (p - q), (high - q) / (p - q)


@pytest.mark.parametrize("n,k,epsilon", [(10, 2, 1.0), (12, 3, 2.0)])
def test_exact_matches_brute_force_feldman_cousins(n, k, epsilon):
    m = mechanism(k, epsilon)
    low, high = brute_force_fc(n, m.q, m.p, 0.95)
    step = 1 / 100_000
    for x in range(n + 1):
        r = estimate([x, n - x] + [0] * (k - 2), epsilon)
        assert r.ci_low[0] == pytest.approx(low[x], abs=1.5 * step)
        assert r.ci_high[0] == pytest.approx(high[x], abs=1.5 * step)


@pytest.mark.parametrize("counts,epsilon", [([3, 37], 1.0), ([20, 20], 1.0), ([33, 7], 2.0), ([0, 40], 4.0)])
def test_clopper_pearson_golden_from_beta_quantiles(counts, epsilon):
    # independent: beta quantiles mapped by π = (λ − q)/(p − q) and clipped to [0, 1]
    m = mechanism(2, epsilon)
    x, n = counts[0], sum(counts)
    lam_low = beta.ppf(0.025, x, n - x + 1) if x > 0 else 0.0
    lam_high = beta.ppf(0.975, x + 1, n - x) if x < n else 1.0
    r = estimate(counts, epsilon, method="clopper-pearson")
    expected_low = min(max((lam_low - m.q) / (m.p - m.q), 0), 1)
    expected_high = min(max((lam_high - m.q) / (m.p - m.q), 0), 1)
    if expected_high > 0:
        assert r.ci_low[0] == pytest.approx(expected_low, abs=1e-12)
        assert r.ci_high[0] == pytest.approx(expected_high, abs=1e-12)


def test_wilson_golden_and_never_collapses():
    # Wilson 1927 by formula: (x + z²/2)/(n + z²) ± z/(n + z²) sqrt(x(n − x)/n + z²/4)
    z = norm.ppf(0.975)
    x, n = 30, 100
    m = mechanism(2, 1.0)
    center = (x + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * np.sqrt(x * (n - x) / n + z * z / 4)
    r = estimate([x, n - x], 1.0, method="wilson")
    assert r.ci_low[0] == pytest.approx(max(0, (center - half - m.q) / (m.p - m.q)), abs=1e-12)
    assert r.ci_high[0] == pytest.approx((center + half - m.q) / (m.p - m.q), abs=1e-12)
    # 0 reports of option 0 at high ε with many respondents: truncation would give [0, 0]
    r = estimate([0, 400], 0.5, method="wilson")
    assert r.ci_low[0] == 0 and r.ci_high[0] > 0


def test_likelihood_interval_is_the_chi2_level_set():
    x, n, epsilon = 40, 100, 1.0
    m = mechanism(2, epsilon)
    r = estimate([x, n - x], epsilon, method="likelihood")
    crit = 3.841458820694124  # scipy.stats.chi2.ppf(0.95, 1)
    for end in (r.ci_low[0], r.ci_high[0]):
        lam = m.q + (m.p - m.q) * end
        stat = 2 * (xlogy(x, x / n) + xlogy(n - x, 1 - x / n) - xlogy(x, lam) - xlogy(n - x, 1 - lam))
        assert stat == pytest.approx(crit, abs=1e-8)


def test_simultaneous_is_bonferroni():
    counts = [40, 30, 20, 10]
    joint = estimate(counts, 1.0, simultaneous=True, method="wilson")
    single = estimate(counts, 1.0, confidence=1 - 0.05 / 4, method="wilson")
    np.testing.assert_array_equal(joint.ci_low, single.ci_low)
    assert joint.simultaneous and joint.confidence == 0.95


counts_strategy = st.integers(2, 5).flatmap(lambda k: st.lists(st.integers(0, 60), min_size=k, max_size=k)).filter(
    lambda c: sum(c) > 0
)
epsilon_strategy = st.sampled_from([0.5, 1.0, 2.0, 4.0])
method_strategy = st.sampled_from(METHODS)


@settings(max_examples=60, deadline=None)
@given(counts_strategy, epsilon_strategy, method_strategy)
def test_consistent_on_simplex_and_clipped_unbiased_inside_interval(counts, epsilon, method):
    r = estimate(counts, epsilon, method=method)
    assert np.all(r.consistent >= 0) and r.consistent.sum() == pytest.approx(1, abs=1e-12)
    clipped = np.clip(r.estimate, 0, 1)
    assert np.all(r.ci_low <= clipped + 1e-9) and np.all(clipped <= r.ci_high + 1e-9)
    assert np.all(0 <= r.ci_low) and np.all(r.ci_high <= 1)
    if method != "wald":
        assert np.all(r.ci_high > r.ci_low)  # never empty or zero width


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=2, max_size=2).filter(lambda c: sum(c) > 0), epsilon_strategy, method_strategy)
def test_two_options_interval_contains_consistent(counts, epsilon, method):
    r = estimate(counts, epsilon, method=method)
    assert np.all(r.ci_low <= r.consistent + 1e-9) and np.all(r.consistent <= r.ci_high + 1e-9)


@settings(max_examples=40, deadline=None)
@given(counts_strategy, epsilon_strategy, st.sampled_from(["exact", "likelihood", "wilson", "clopper-pearson"]))
def test_wider_at_higher_confidence(counts, epsilon, method):
    narrow = estimate(counts, epsilon, confidence=0.8, method=method)
    wide = estimate(counts, epsilon, confidence=0.99, method=method)
    assert np.all(wide.ci_low <= narrow.ci_low + 1e-9) and np.all(narrow.ci_high <= wide.ci_high + 1e-9)


@settings(max_examples=40, deadline=None)
@given(counts_strategy, epsilon_strategy, method_strategy, st.randoms(use_true_random=False))
def test_invariant_to_relabelling(counts, epsilon, method, random):
    order = list(range(len(counts)))
    random.shuffle(order)
    r = estimate(counts, epsilon, method=method)
    s = estimate([counts[i] for i in order], epsilon, method=method)
    for field in ("estimate", "consistent", "std_error", "ci_low", "ci_high"):
        np.testing.assert_allclose(getattr(s, field), getattr(r, field)[order], atol=1e-12)
