"""The mechanism's realized parameters: threshold = floor(p · 2^32), realized ε ≤ declared ε."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from deniable.client.mechanism import TWO_32, MechanismError, mechanism, threshold_for

K_GRID = (2, 3, 4, 5, 7, 10, 16, 64)
EPSILON_GRID = (0.01, 0.1, 0.5, math.log(3), 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 8.0, 10.0, 15.0, 20.0)


def exp_bounds(x: Fraction, terms: int = 200) -> tuple[Fraction, Fraction]:
    """Rational lower and upper bounds on e^x for 0 < x ≤ 20 from the Taylor series.

    Independent of the implementation (which uses ``decimal``): the partial sum is a lower
    bound, and the tail after ``N`` terms is at most ``x^(N+1)/(N+1)! · 1/(1 − x/(N+2))``.
    """
    total, term = Fraction(0), Fraction(1)
    for n in range(terms):
        total += term
        term = term * x / (n + 1)
    return total, total + term / (1 - x / (terms + 1))


def exact_threshold(k: int, epsilon: float) -> int:
    """floor(e^ε · 2^32 / (e^ε + k − 1)), which increases with e^ε: both bounds must agree."""
    low, high = exp_bounds(Fraction(epsilon))  # a float is an exact dyadic rational
    floor_low = math.floor(low * TWO_32 / (low + k - 1))
    floor_high = math.floor(high * TWO_32 / (high + k - 1))
    assert floor_low == floor_high, "bounds not tight enough to decide the floor"
    return floor_low


@pytest.mark.parametrize("k", K_GRID)
@pytest.mark.parametrize("epsilon", EPSILON_GRID)
def test_threshold_is_floor_of_p_times_2_32(k, epsilon):
    assert threshold_for(k, epsilon) == exact_threshold(k, epsilon)


@pytest.mark.parametrize("k", K_GRID)
@pytest.mark.parametrize("epsilon", EPSILON_GRID)
def test_realized_parameters(k, epsilon):
    mech = mechanism(k, epsilon)
    assert mech.k == k and mech.declared_epsilon == epsilon
    # Exact: realized p = threshold / 2^32 and ε = ln(p/q) never exceeds the declared ε.
    p = Fraction(mech.threshold, TWO_32)
    q = (1 - p) / (k - 1)
    assert mech.p == float(p) and mech.q == pytest.approx(float(q), rel=1e-15)
    assert p / q <= Fraction(exp_bounds(Fraction(epsilon))[1])
    assert mech.epsilon <= epsilon
    assert mech.p > mech.q
    assert mech.p + (k - 1) * mech.q == pytest.approx(1.0, abs=1e-15)
    if epsilon <= 10:
        # Rounding p · 2^32 down by less than one unit moves ε very little.
        assert epsilon - mech.epsilon < 1e-4
    data = mech.as_dict()
    assert data["threshold"] == mech.threshold and data["epsilon"] == mech.epsilon


def test_known_value():
    # ε = ln 3, k = 2: p = 3/4 exactly, so threshold = 3 · 2^30.
    mech = mechanism(2, math.log(3))
    assert mech.threshold == 3 * 2**30 and mech.p == 0.75 and mech.q == 0.25


@pytest.mark.parametrize(
    "k,epsilon,message",
    [
        (1, 1.0, "k must be an integer >= 2, got 1"),
        (0, 1.0, "k must be an integer >= 2, got 0"),
        (2.0, 1.0, "k must be an integer >= 2, got 2.0"),
        ("3", 1.0, 'k must be an integer >= 2, got "3"'),
        (True, 1.0, "k must be an integer >= 2, got true"),
        (2, 0, "epsilon must be a finite number in (0, 20], got 0"),
        (2, -1.0, "epsilon must be a finite number in (0, 20], got -1.0"),
        (2, 20.5, "epsilon must be a finite number in (0, 20], got 20.5"),
        (2, math.inf, "epsilon must be a finite number in (0, 20], got Infinity"),
        (2, math.nan, "epsilon must be a finite number in (0, 20], got NaN"),
        (2, "1", 'epsilon must be a number in (0, 20], got "1"'),
        (2, None, "epsilon must be a number in (0, 20], got null"),
        (2, True, "epsilon must be a number in (0, 20], got true"),
        (64, 1e-12, "epsilon 1e-12 is too small to realize with 32-bit thresholds for k=64"),
    ],
)
def test_bad_k_or_epsilon(k, epsilon, message):
    with pytest.raises(MechanismError) as info:
        mechanism(k, epsilon)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)
