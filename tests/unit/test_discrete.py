"""Exact integer samplers of the central release mechanisms: thresholds, test vectors, distributions, audit.

Invariant 8 (docs/design.md): uniform 32-bit draws and integer thresholds only, rounded so that
the realized ε is never above the declared one.  The audit runs the release mechanisms as the
server runs them (``geometric_mechanism``, ``exponential_choice``) on neighbouring data.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binomtest, chisquare

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
    # proposal u = 1 → option 1 (gap 2 from the best); its coin of β'^2 = 1/4: u = 2^30 − 1 < 2^32/4 → accept.
    draws = discrete.sequence([1, 2**30 - 1])
    assert discrete.exponential_mechanism([5, 3], t, 1, draws).tolist() == [1]
    # proposal option 1, coin 2^30 ≥ 2^32/4 → reject; proposal option 0 (gap 0), its coin always succeeds.
    draws = discrete.sequence([1, 2**30, 0, TWO_32 - 1])
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


def counting(draw):
    """A uint32 source that counts what it hands out (``.used``)."""

    def counted(size):
        counted.used += size
        return draw(size)

    counted.used = 0
    return counted


@pytest.mark.parametrize("threshold, m", [(3_000_000_001, 3), (TWO_32 - 1, 5), (2_605_029_348, 2), (TWO_32 - 2, 7)])
def test_power_coin_is_exactly_bernoulli_of_the_power_even_when_the_first_word_straddles(threshold, m):
    p = Fraction(threshold, TWO_32) ** m  # exact: m is small
    digits = math.floor(p * 2**96)  # the first 96 bits of p: words that agree with p as long as possible
    words = [digits >> 64, digits >> 32 & 0xFFFFFFFF, digits & 0xFFFFFFFF]
    cases = [words[:1] + [w2, 0, 0] for w2 in (0, words[1], TWO_32 - 1)]
    cases += [words[:2] + [w3, 7] for w3 in (0, max(words[2] - 1, 0), words[2], words[2] + 1, TWO_32 - 1)]
    cases += [[max(words[0] - 1, 0), 0, 0, 0], [words[0] + 1, 0, 0, 0], [0, 0, 0, 0], [TWO_32 - 1] * 4]
    lo, hi = discrete._power_bounds(m, threshold, 32)
    assert lo <= p * TWO_32 <= hi and hi - lo <= 2 * 2 * m.bit_length()
    for case in cases:
        x = Fraction(sum(w << 32 * (3 - i) for i, w in enumerate(case)), 2**128)
        got = discrete.power_coin([m], threshold, discrete.sequence(case))
        assert got.tolist() == [x < p], (case, float(x - p))
    # X agreeing with p on 64 bits needs a third word, unless p has no more bits than that
    draw = counting(discrete.sequence(words[:2] + [words[2] + 1, 0]))
    assert discrete.power_coin([m], threshold, draw).tolist() == [False]
    assert draw.used == (2 if p * 2**64 == int(p * 2**64) else 3)


def test_power_coin_at_huge_exponents_matches_an_independent_high_precision_power():
    threshold, m = TWO_32 - 2, 2**31 + 12345  # β'^m ≈ e^(−1): 2^31 trials one by one
    getcontext().prec = 80
    p = (Decimal(threshold) / TWO_32) ** m  # Decimal's integer power: exact to 80 digits here
    lo, hi = discrete._power_bounds(m, threshold, 32 + 64)
    assert Decimal(lo) / 2**96 <= p <= Decimal(hi) / 2**96
    first = int(p * TWO_32)
    assert discrete.power_coin([m], threshold, discrete.sequence([first - 100])).tolist() == [True]
    assert discrete.power_coin([m], threshold, discrete.sequence([first + 100])).tolist() == [False]


def test_the_block_sampler_has_the_geometric_distribution_exactly_binned():
    rng = np.random.default_rng(5)
    threshold = discrete.base_threshold(0.02, 1)  # β' = e^(−0.02): blocks of L = 50 trials
    assert discrete.block_length(threshold) == 50
    beta = Fraction(threshold, TWO_32)
    g = discrete.geometric(200_000, threshold, discrete.source(rng))
    edges = list(range(0, 400, 7)) + [None]  # bins of 7: not aligned with the blocks of 50
    observed, expected = [], []
    for low, high in zip(edges, edges[1:]):
        inside = (g >= low) & (g < high) if high is not None else g >= low
        observed.append(np.count_nonzero(inside))
        tail = beta ** low - (beta ** high if high is not None else 0)  # P(G ≥ g) = β'^g exactly
        expected.append(200_000 * float(tail))
    assert chisquare(observed, expected).pvalue > 1e-3


def test_at_epsilon_1e9_the_noise_takes_a_few_draws_and_has_its_exact_tail():
    threshold = discrete.base_threshold(1e-9, 2)  # β' = 1 − 2^−31: the old loop drew ~2^31 times
    rng = np.random.default_rng(6)
    draw = counting(discrete.source(rng))
    noisy, t = discrete.geometric_mechanism(np.zeros(20_000, dtype=np.int64), 1e-9, 2, draw)
    assert t == threshold and draw.used < 30 * 20_000  # fewer than 13 per geometric expected (module notes)
    getcontext().prec = 50
    beta = Decimal(threshold) / TWO_32
    # P(|Y| ≥ y) = 2 β'^y / (1 + β'): at y = 2^31 about 2/(e (1 + β')) = 0.368; at 2^32, 0.135
    for y in (2**29, 2**31, 2**32):
        exact = float(2 * beta ** y / (1 + beta))
        count = np.count_nonzero(np.abs(noisy) >= y)
        assert binomtest(count, noisy.size, exact).pvalue > 1e-3, (y, count / noisy.size, exact)
    draw = counting(discrete.source(rng))
    chosen, _ = discrete.exponential_choice([10**9, 0, 5], 1e-9, 1, draw, size=2000)
    assert draw.used < 60 * 2000 and set(chosen.tolist()) == {0, 1, 2}


def never_failing(size):
    """A real uint32 source that is always 0: every coin succeeds, so no geometric ever ends."""
    return np.zeros(size, dtype=np.uint32)


@pytest.mark.parametrize("epsilon", [1e-9, 1.0, 5.0])  # the block sampler, and trial by trial (L = 1)
def test_a_source_that_never_lets_the_sampler_stop_is_refused_at_the_draw_limit(epsilon):
    draw = counting(never_failing)
    with pytest.raises(discrete.DrawLimitError, match="random draws"):
        discrete.geometric_mechanism([3, 4, 5], epsilon, 2, draw)
    assert draw.used <= discrete.draw_limit(3) + 3
    # the exponential mechanism's uniform proposal among 3 rejects 2^32 − 1 (modulo bias) forever
    with pytest.raises(discrete.DrawLimitError):
        discrete.exponential_choice([3, 4, 5], epsilon, 1, lambda size: np.full(size, TWO_32 - 1, dtype=np.uint32))


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
