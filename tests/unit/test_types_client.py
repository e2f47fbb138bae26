"""The samplers of numeric, check-all-that-apply and list-experiment questions (deniable.client):
integer thresholds with realized ε ≤ declared, exact distributions, the ε accounting, the vectors."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from deniable.client.listexp import arm_one, check_list_report, count_one, list_mechanism
from deniable.client.mechanism import TWO_32, MechanismError, mechanism
from deniable.client.multi import bit_epsilon, multi_mechanism, multi_one, randomize_multi
from deniable.client.numeric import (grid_mechanism, grid_one, laplace, laplace_one, randomize_grid, randomize_laplace, stochastic_round, uniform_limit)

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "tests" / "type_vectors.json").read_text())
ALPHA = 1e-4  # each distribution test; all seeded, so deterministic


def exp_bounds(x: Fraction, terms: int = 400) -> tuple[Fraction, Fraction]:
    """Rational bounds on e^x for 0 < x ≤ 20 from the Taylor series (independent of ``decimal``)."""
    total, term = Fraction(0), Fraction(1)
    for n in range(terms):
        total += term
        term = term * x / (n + 1)
    return total, total + term / (1 - x / (terms + 1))


# ---------------------------------------------------------------- vectors


def test_type_vectors_reproduce_in_python():
    for case in VECTORS["laplace"]:
        mech = laplace(case["m"], case["epsilon"])
        assert (mech.threshold, mech.tail) == (case["threshold"], case["tail"])
        draws = iter(case["draws"])
        assert [laplace_one(v, mech, draws) for v in case["values"]] == case["reports"]
        assert next(draws, None) is None
    for case in VECTORS["grid"]:
        mech = grid_mechanism(case["m"], case["grid"], case["epsilon"])
        draws = iter(case["draws"])
        assert [grid_one(v, mech, draws) for v in case["values"]] == case["reports"]
        assert next(draws, None) is None
    for case in VECTORS["multi"]:
        mech = multi_mechanism(case["k"], case["epsilon"])
        draws = iter(case["draws"])
        assert [multi_one(v, mech, draws) for v in case["values"]] == case["reports"]
        assert next(draws, None) is None
    for case in VECTORS["list"]:
        mech = list_mechanism(case["items"], case["epsilon"])
        draws = iter(case["draws"])
        got = []
        for count in case["values"]:
            arm = arm_one(draws)
            got.append([arm, count_one(count, arm, mech, draws)])
        assert got == case["reports"] and next(draws, None) is None


def test_type_vectors_reach_the_edges():
    laplace_draws = [d for c in VECTORS["laplace"] for d in c["draws"]]
    assert 2**31 - 1 in laplace_draws and 2**31 in laplace_draws
    assert any(r == c["m"] + c["tail"] for c in VECTORS["laplace"] for r in c["reports"])  # clamped high
    assert any(r == -c["tail"] for c in VECTORS["laplace"] for r in c["reports"])  # clamped low
    for c in VECTORS["grid"]:
        d = c["m"] // c["grid"]
        if uniform_limit(d) < TWO_32:
            assert any(u >= uniform_limit(d) for u in c["draws"]), c  # a rejected rounding draw
    assert {c["epsilon"] for c in VECTORS["list"]} >= {None, 1.0}


def test_type_vectors_file_matches_its_generator():
    spec = importlib.util.spec_from_file_location("make_type_vectors", ROOT / "scripts" / "make_type_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert json.loads(json.dumps(module.make_all())) == {k: v for k, v in VECTORS.items() if k != "generated_by"}, \
        "regenerate with: python scripts/make_type_vectors.py"


# ---------------------------------------------------------------- discrete Laplace


@pytest.mark.parametrize("m", [1, 4, 40, 1000])
@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 4.0, 20.0])
def test_laplace_threshold_is_the_ceiling_and_realized_epsilon_is_at_most_declared(m, epsilon):
    mech = laplace(m, epsilon)
    low, high = exp_bounds(Fraction(epsilon) / m)  # e^(ε/m) between low and high
    # ceil(2^32 / e^(ε/m)): both bounds must give the same integer
    assert math.ceil(TWO_32 / high) == math.ceil(TWO_32 / low) == mech.threshold
    assert mech.epsilon <= epsilon
    assert epsilon - mech.epsilon < m * 2.0**-31 / mech.t  # the rounding costs less than one threshold step
    t = Fraction(mech.threshold, TWO_32)
    assert t ** mech.tail <= Fraction(1, 2**40) < t ** (mech.tail - 1)


def clamped_pmf(mech, x: int) -> dict[int, Fraction]:
    """P(report = y | x) exactly, as a Fraction, with the clamped ends collecting the tails."""
    t = Fraction(mech.threshold, TWO_32)
    norm = (1 - t) / (1 + t)
    out = {y: norm * t ** abs(y - x) for y in range(mech.low + 1, mech.high)}
    out[mech.low] = t ** (x - mech.low) / (1 + t)  # P(Z ≤ −L − x)
    out[mech.high] = t ** (mech.high - x) / (1 + t)  # P(Z ≥ m + L − x)
    return out


def test_laplace_report_distribution_is_epsilon_ldp_exactly():
    mech = laplace(3, 2.0)
    pmfs = [clamped_pmf(mech, x) for x in range(mech.m + 1)]
    assert all(sum(p.values()) == 1 for p in pmfs)
    bound = Fraction(TWO_32, mech.threshold) ** mech.m  # t^(−m) = e^(realized ε)
    worst = max(pmfs[a][y] / pmfs[b][y] for a in range(4) for b in range(4) for y in pmfs[0])
    assert worst == bound  # reached on the tails, never exceeded
    assert math.log(bound) <= 2.0


@pytest.mark.parametrize("vectorized", [False, True])
def test_laplace_sampler_follows_its_distribution(vectorized):
    mech = laplace(4, 1.0)
    rng = np.random.default_rng(7)
    n = 200_000
    if vectorized:
        reports = randomize_laplace(np.full(n, 1), mech, rng)
    else:
        draws = iter(rng.integers(0, TWO_32, size=60 * n, dtype=np.uint64).tolist())
        reports = np.array([laplace_one(1, mech, draws) for _ in range(n)])
    pmf = clamped_pmf(mech, 1)
    inner = range(-15, 20)
    observed = [np.count_nonzero(reports == y) for y in inner] + [np.count_nonzero((reports < -15) | (reports >= 20))]
    expected = [float(pmf[y]) * n for y in inner]
    expected.append(n - sum(expected))
    assert stats.chisquare(observed, expected).pvalue > ALPHA


def test_laplace_refuses_what_it_cannot_realize():
    with pytest.raises(MechanismError, match="too small"):
        laplace(1000, 1e-7)
    with pytest.raises(MechanismError, match="between 2 and 1001"):
        laplace(1001, 1.0)
    with pytest.raises(MechanismError, match="answer index 0..4"):
        laplace_one(5, laplace(4, 1.0), iter([0] * 10))


# ---------------------------------------------------------------- grid randomized response


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7, 10, 40, 333])
def test_rounding_accepts_a_multiple_of_d_draws(d):
    limit = uniform_limit(d)
    assert limit % d == 0 and TWO_32 - limit < d  # u mod d is uniform on the accepted draws


def test_rounding_is_unbiased_and_exact():
    mech = grid_mechanism(40, 4, 1.0)  # d = 10
    rng = np.random.default_rng(3)
    values = np.full(100_000, 13)
    rounded = stochastic_round(values, mech, rng)
    assert set(np.unique(rounded)) == {1, 2}
    assert stats.binomtest(int(np.count_nonzero(rounded == 2)), values.size, 0.3).pvalue > ALPHA
    on_grid = stochastic_round(np.array([0, 10, 40]), mech, rng)
    assert on_grid.tolist() == [0, 1, 4]


def test_grid_report_distribution():
    mech = grid_mechanism(12, 3, 2.0)  # d = 4, k = 4
    rng = np.random.default_rng(5)
    reports = randomize_grid(np.full(100_000, 5), mech, rng)  # 5 = 1·4 + 1: J = 1 (3/4) or 2 (1/4)
    p, q = mech.rr.p, mech.rr.q
    expected = np.array([q, 0.75 * p + 0.25 * q, 0.25 * p + 0.75 * q, q]) * reports.size
    assert stats.chisquare(np.bincount(reports, minlength=4), expected).pvalue > ALPHA
    assert mech.epsilon == mechanism(4, 2.0).epsilon <= 2.0  # rounding first costs nothing


def test_grid_must_divide_the_steps():
    with pytest.raises(MechanismError, match="grid must divide the 40 steps"):
        grid_mechanism(40, 3, 1.0)


# ---------------------------------------------------------------- check all that apply


@pytest.mark.parametrize("k, epsilon", [(2, 1.0), (3, 2.0), (4, 0.5)])
def test_multi_accounting_any_two_subsets(k, epsilon):
    """Every report r and subsets a, b: P(r | a)/P(r | b) ≤ (p/(1 − p))^K = e^(K ε_bit) ≤ e^ε, reached."""
    mech = multi_mechanism(k, epsilon)
    assert mech.bit == mechanism(2, bit_epsilon(epsilon, k))
    p = Fraction(mech.threshold, TWO_32)
    subsets = list(itertools.product((0, 1), repeat=k))

    def prob(report, answer):
        return math.prod(p if r == a else 1 - p for r, a in zip(report, answer))

    worst = max(prob(r, a) / prob(r, b) for r in subsets for a in subsets for b in subsets)
    assert worst == (p / (1 - p)) ** k
    assert math.log(worst) == pytest.approx(mech.epsilon) and mech.epsilon <= epsilon


def test_multi_sampler_flips_each_tick_independently():
    mech = multi_mechanism(3, 3.0)
    rng = np.random.default_rng(9)
    reports = randomize_multi(np.full(100_000, 0b101), mech, rng)
    for j, truth in enumerate((1, 0, 1)):
        bits = (reports >> j) & 1
        expected = mech.p if truth else mech.q
        assert stats.binomtest(int(bits.sum()), bits.size, expected).pvalue > ALPHA
    flips = ((reports ^ 0b101)[:, None] >> np.arange(3)) & 1
    table = np.histogram2d(flips[:, 0], flips[:, 1], bins=2)[0]
    assert stats.chi2_contingency(table).pvalue > ALPHA  # independence of two bits' flips


# ---------------------------------------------------------------- list experiment


def test_list_reports_and_arms():
    plain, protected = list_mechanism(3, None), list_mechanism(3, 1.0)
    assert arm_one([2**31 - 1]) == 1 and arm_one([2**31]) == 0
    assert check_list_report({"arm": 1, "count": 4}, plain) == (1, 4)
    with pytest.raises(MechanismError, match="0..3 in the control arm"):
        check_list_report({"arm": 0, "count": 4}, plain)
    assert check_list_report({"arm": 0, "count": 4}, protected) == (0, 4)  # randomized counts reach J + 1
    with pytest.raises(MechanismError, match="arm must be 0"):
        check_list_report({"arm": True, "count": 1}, protected)
    with pytest.raises(MechanismError, match='must be {"arm"'):
        check_list_report({"arm": 1}, protected)
    assert protected.k == 5 and protected.epsilon <= 1.0
