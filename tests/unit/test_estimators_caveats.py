"""What an estimate is: the bias of the consistent estimate, tiny ε, few respondents (result notes)."""

import math

import numpy as np
import pytest
from scipy.stats import binom, chi2, entropy

from deniable.client.mechanism import mechanism
from deniable.estimators import estimate, point
from deniable.estimators.caveats import FEW_RESPONDENTS, consistent_bias, respondents_to_inform


def consistent_bias_by_enumeration(n, epsilon, pi):
    """E[consistent[0]] − π for two options, summing the estimator itself over every count."""
    m = mechanism(2, epsilon)
    lam = m.q + (m.p - m.q) * pi
    values = [point.consistent(np.array([x, n - x]), m.p, m.q)[0] for x in range(n + 1)]
    return binom.pmf(np.arange(n + 1), n, lam) @ values - pi


@pytest.mark.parametrize("n,epsilon,pi,golden", [
    # golden: the audit's numbers (issue 14), reproduced by the enumeration above
    (12, 0.3, 0.0, 0.306), (333, 0.3, 0.0, 0.073), (40, 0.9, 0.0, 0.068), (2000, 0.3, 0.0, 0.030),
    (12, 0.3, 1.0, -0.306), (100, 1.0, 0.5, 0.0),
])
def test_consistent_bias_is_exact(n, epsilon, pi, golden):
    m = mechanism(2, epsilon)
    exact = consistent_bias_by_enumeration(n, epsilon, pi)
    assert exact == pytest.approx(golden, abs=6e-4)
    assert consistent_bias(n, m.p, m.q, [pi])[0] == pytest.approx(exact, abs=1e-12)


def test_consistent_bias_normal_limit_beyond_the_exact_sum():
    # 50,000 counts and more: the normal limit, against the exact sum over every count
    m = mechanism(2, 0.01)
    n = 3_000_000
    for pi in (0.0, 0.2):
        lam = m.q + (m.p - m.q) * pi
        sd = math.sqrt(n * lam * (1 - lam))
        x = np.arange(int(n * lam - 12 * sd), int(n * lam + 12 * sd))
        exact = binom.pmf(x, n, lam) @ np.clip((x / n - m.q) / (m.p - m.q), 0, 1) - pi
        assert consistent_bias(n, m.p, m.q, [pi])[0] == pytest.approx(exact, abs=2e-3)


def test_the_note_says_when_the_consistent_estimate_is_biased():
    r = estimate([5, 95], 1.0)  # option 1 estimated at 1: its bias there is about −0.038
    assert "consistent estimate" in r.note and "-0.03" in r.note
    assert estimate([700, 300], 1.0).note == ""  # both options far from 0 and 1


def test_tiny_epsilon_says_the_intervals_show_the_range():
    # issue 14: estimate([60, 40], 0.001) gives π₀ ∈ [0.5, 1], valid but misleading
    r = estimate([60, 40], 0.001)
    assert "cannot tell an option nobody holds from one everybody holds" in r.note
    m = mechanism(2, 0.001)
    kl = min(entropy([m.p, 1 - m.p], [m.q, 1 - m.q]), entropy([m.q, 1 - m.q], [m.p, 1 - m.p]))
    needed = math.ceil(chi2.ppf(0.95, 1) / 2 / kl)
    assert f"{needed:,} respondents" in r.note
    assert math.ceil(respondents_to_inform(m.p, m.q, 0.95)) == needed
    # the rule's edge: just below the needed n there is the note, just above there is not
    below = estimate([needed // 2 - 1, needed // 2 - 1], 0.001)
    above = estimate([needed // 2 + 1, needed // 2 + 1], 0.001)
    assert "cannot tell" in below.note and "cannot tell" not in above.note
    # a question asked directly is always informative
    assert "cannot tell" not in estimate([6, 4], None).note


def test_few_respondents_note_on_the_standard_error():
    assert "few respondents" in estimate([20, 20], 2.0).note
    assert "few respondents" not in estimate([21, 20], 2.0).note
    assert FEW_RESPONDENTS == 40


def test_documented_standard_error_range_at_forty_or_fewer():
    # the note's numbers: E[std_error]/sd over n ∈ {12, 20, 40}, the audit's ε and k, 101 π
    ratios = []
    for n in (12, 20, 40):
        x = np.arange(n + 1)
        for epsilon in (0.3, 0.9, 2.5, 5.0):
            for k in (2, 4, 10):
                m = mechanism(k, epsilon)
                clipped = np.clip(x / n, m.q, m.p)
                se = np.sqrt(clipped * (1 - clipped) / n) / (m.p - m.q)
                for pi in np.linspace(0, 1, 101):
                    lam = m.q + (m.p - m.q) * pi
                    ratios.append(binom.pmf(x, n, lam) @ se / (np.sqrt(lam * (1 - lam) / n) / (m.p - m.q)))
    assert round(min(ratios), 2) == 0.84 and round(max(ratios), 2) == 1.24
