"""Exact integer samplers of the central release mechanisms: thresholds, test vectors, distributions, audit.

Invariant 8 (docs/design.md): uniform 32-bit draws and integer thresholds only, rounded so that
the realized ε is never above the declared one.  The audit runs the release mechanisms as the
server runs them (``geometric_mechanism``, ``exponential_choice``) on neighbouring data.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy.stats import chisquare

from deniable.client import discrete
from deniable.client.mechanism import TWO_32, MechanismError
from deniable.estimators.release_audit import neighbour_epsilon_bound


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 19.0])
@pytest.mark.parametrize("scale", [1, 2, 4])
def test_threshold_is_the_ceiling_so_the_realized_epsilon_is_never_above(epsilon, scale):
    threshold = discrete.base_threshold(epsilon, scale)
    getcontext().prec = 80  # independent: higher precision, and the defining inequalities
    exact = (Decimal(-epsilon) / scale).exp() * TWO_32
    assert threshold - 1 < exact <= threshold
    assert discrete.realized_epsilon(threshold, scale) <= epsilon
    assert -scale * math.log((threshold - 1) / TWO_32) > epsilon  # one less would be too little noise


def test_a_tiny_epsilon_is_refused():
    with pytest.raises(MechanismError, match="too small"):
        discrete.base_threshold(1e-12, 2)
    with pytest.raises(MechanismError, match="sensitivity"):
        discrete.geometric_mechanism([1, 2], 1.0, 0)


def test_geometric_consumes_draws_round_by_round_from_fixed_vectors():
    t = 1000
    # three samples: round 1 draws (0, 999, 1000) → samples 0 and 1 continue, 2 stops at 0;
    # round 2 draws (5, 2^32 − 1) → sample 0 continues, 1 stops at 1; round 3 draws (1000,) → 0 stops at 2.
    draws = discrete.sequence([0, 999, 1000, 5, TWO_32 - 1, 1000])
    assert discrete.geometric(3, t, draws).tolist() == [2, 1, 0]


def test_uniform_index_rejects_the_biased_top():
    limit = TWO_32 - TWO_32 % 3
    # round 1 draws (limit, 7): sample 0 is rejected, sample 1 is 7 mod 3; then sample 0 alone
    # draws 2^32 − 1 (rejected) and 8.
    draws = discrete.sequence([limit, 7, TWO_32 - 1, 8])
    assert discrete.uniform_index(2, 3, draws).tolist() == [8 % 3, 7 % 3]


def test_exponential_mechanism_from_fixed_vectors():
    t = TWO_32 // 2  # β' = 1/2
    # proposal u = 1 → option 1 (gap 2 from the best); geometric draws 0, 0, then ≥ t: G = 2 ≥ 2 → accept.
    draws = discrete.sequence([1, 0, 0, t])
    assert discrete.exponential_mechanism([5, 3], t, 1, draws).tolist() == [1]
    # proposal option 1, G = 1 < 2 → reject; proposal option 0 (gap 0), G = 0 → accept.
    draws = discrete.sequence([1, 0, t, 0, t])
    assert discrete.exponential_mechanism([5, 3], t, 1, draws).tolist() == [0]


def test_discrete_laplace_has_the_two_sided_geometric_distribution():
    rng = np.random.default_rng(1)
    threshold = discrete.base_threshold(1.0, 2)
    beta = threshold / TWO_32
    z = discrete.discrete_laplace(200_000, threshold, discrete.source(rng))
    support = np.arange(-8, 9)
    expected = (1 - beta) / (1 + beta) * beta ** np.abs(support)
    observed = np.array([np.count_nonzero(z == y) for y in support])
    tail = 200_000 - observed.sum()
    stat = chisquare(np.append(observed, tail), 200_000 * np.append(expected, 1 - expected.sum()))
    assert stat.pvalue > 1e-3
    assert abs(z.mean()) < 0.02


def test_exponential_mechanism_has_the_exponential_distribution():
    rng = np.random.default_rng(2)
    scores = np.array([10, 8, 8, 5])
    chosen, threshold = discrete.exponential_choice(scores, 1.0, 1, discrete.source(rng), size=100_000)
    beta = threshold / TWO_32
    weights = beta ** (scores.max() - scores)
    observed = np.bincount(chosen, minlength=4)
    assert chisquare(observed, 100_000 * weights / weights.sum()).pvalue > 1e-3


def test_the_default_source_is_the_os_csprng():
    values = discrete.source()(1000)
    assert values.dtype == np.uint32 and len(set(values.tolist())) > 990


# ---------------------------------------------------------------- the empirical privacy audit


def histogram_audit(epsilon_used, runs, rng):
    """Run the histogram release on neighbours (5, 3) and (4, 4) (one respondent changed their
    answer), declared sensitivity 2, and bound ε from the event {Y0 ≥ 5, Y1 ≤ 3}, where the
    discrete Laplace is tight: P = (1/(1+β))² under D, (β/(1+β))² under D'."""
    draw = discrete.source(rng)
    a, _ = discrete.geometric_mechanism([5, 3], epsilon_used, 2, draw, repeats=runs)
    b, _ = discrete.geometric_mechanism([4, 4], epsilon_used, 2, draw, repeats=runs)
    event_a = np.count_nonzero((a[:, 0] >= 5) & (a[:, 1] <= 3))
    event_b = np.count_nonzero((b[:, 0] >= 5) & (b[:, 1] <= 3))
    return neighbour_epsilon_bound([event_a, runs - event_a], [event_b, runs - event_b])


def test_the_histogram_release_gives_no_more_than_its_epsilon():
    bound = histogram_audit(1.0, 1_000_000, np.random.default_rng(11))
    assert bound.lower_bound <= 1.0
    assert bound.lower_bound > 0.97  # and the audit is not blind: the event is tight


def test_a_histogram_release_five_percent_too_weak_is_caught():
    bound = histogram_audit(1.05, 1_000_000, np.random.default_rng(12))  # declares 1.0, uses 1.05
    assert bound.lower_bound > 1.0


def most_common_audit(epsilon_used, runs, rng):
    """The exponential mechanism on neighbours (20, 10) and (19, 11): option 1 is rare, where the
    mechanism comes close to its ε (ratio e^ε (1 + β^10)/(1 + β^8), 0.989 ε at ε = 1)."""
    draw = discrete.source(rng)
    a, _ = discrete.exponential_choice([20, 10], epsilon_used, 1, draw, size=runs)
    b, _ = discrete.exponential_choice([19, 11], epsilon_used, 1, draw, size=runs)
    return neighbour_epsilon_bound(np.bincount(a, minlength=2), np.bincount(b, minlength=2))


@pytest.mark.slow
def test_the_most_common_answer_release_gives_no_more_than_its_epsilon_and_five_percent_more_is_caught():
    correct = most_common_audit(1.0, 10_000_000, np.random.default_rng(13))
    assert 0.95 < correct.lower_bound <= 1.0
    weak = most_common_audit(1.05, 10_000_000, np.random.default_rng(14))
    assert weak.lower_bound > 1.0
