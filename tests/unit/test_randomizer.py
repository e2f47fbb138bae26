"""The Python randomizer: the shared test vectors, its distribution, and its input checks."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from deniable.client import MechanismError, mechanism, randomize, randomize_draws
from deniable.client.mechanism import TWO_32
from deniable.client.randomizer import rejection_limit

ROOT = Path(__file__).resolve().parents[2]
VECTORS = json.loads((ROOT / "tests" / "rr_vectors.json").read_text())
# The significance level of the distribution tests.  With a fixed seed the seeded tests are
# deterministic; the level says how unlucky a correct sampler would have to be to fail one.
ALPHA = 1e-4


def test_vectors_header_and_coverage():
    assert VECTORS["generated_by"] == "python scripts/make_rr_vectors.py"
    cases = VECTORS["cases"]
    assert {c["k"] for c in cases} >= {2, 3, 4, 5, 7}
    assert {c["epsilon"] for c in cases} >= {0.5, 1.0, 2.0, 4.0, 20.0}
    for case in cases:
        draws = case["draws"]
        assert case["threshold"] - 1 in draws and case["threshold"] in draws
        assert all(0 <= d < TWO_32 for d in draws)
    # The rejection region is reached for k = 4 (u = 2^32 − 1) and k = 7 (u ≥ 2^32 − 4).
    for k in (4, 7):
        limit = rejection_limit(k)
        assert any(d >= limit for c in cases if c["k"] == k for d in c["draws"][1:])


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"k{c['k']}-eps{c['epsilon']}")
def test_vectors_reproduce(case):
    assert mechanism(case["k"], case["epsilon"]).threshold == case["threshold"]
    draws = iter(case["draws"])
    assert randomize_draws(case["values"], case["k"], case["epsilon"], draws) == case["reports"]
    assert next(draws, None) is None, "every draw is consumed, no more"


def test_vectors_file_matches_its_generator():
    spec = importlib.util.spec_from_file_location("make_rr_vectors", ROOT / "scripts" / "make_rr_vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rng = np.random.default_rng(module.SEED)
    made = [module.make_case(k, e, rng)[0] for k in module.KS for e in module.EPSILONS]
    assert made == VECTORS["cases"], "regenerate with: python scripts/make_rr_vectors.py"


def test_draws_one_value_by_hand():
    # k = 4, keep iff u < threshold; else draw u < 2^32 − 1 and report r = u mod 3, skipping the value.
    k, eps = 4, 1.0
    t = mechanism(k, eps).threshold
    assert randomize_draws([2], k, eps, [t - 1]) == [2]
    assert randomize_draws([2], k, eps, [t, TWO_32 - 1, 0]) == [0]  # 2^32 − 1 rejected, r = 0
    assert randomize_draws([2], k, eps, [t, 2]) == [3]  # r = 2 ≥ value → 3
    assert randomize_draws([0], 2, eps, [TWO_32 - 1]) == [1]  # k = 2 needs no second draw


def _transition_counts(k, epsilon, n_per_value, rng):
    values = np.repeat(np.arange(k), n_per_value)
    reports = randomize(values, k, epsilon, rng=rng)
    table = np.zeros((k, k), dtype=np.int64)
    np.add.at(table, (values, reports), 1)
    return table


@pytest.mark.parametrize("k,epsilon", [(2, 1.0), (3, 0.5), (4, 2.0), (5, 1.0), (7, 4.0), (12, 3.0)])
def test_vectorized_matches_p_and_q(k, epsilon):
    """Pearson chi-square on the k × k (true, reported) table against the realized p and q."""
    mech = mechanism(k, epsilon)
    n_per_value = 200_000
    table = _transition_counts(k, epsilon, n_per_value, np.random.default_rng(12345 + k))
    expected = np.full((k, k), n_per_value * mech.q)
    np.fill_diagonal(expected, n_per_value * mech.p)
    statistic = ((table - expected) ** 2 / expected).sum()
    df = k * (k - 1)  # each row's k cells sum to n_per_value
    assert statistic < stats.chi2.ppf(1 - ALPHA, df), (statistic, table)


def test_os_csprng_matches_p_and_q():
    # Unseeded: a correct sampler fails this with probability 1e-9.
    k, epsilon, n_per_value = 5, 1.0, 100_000
    mech = mechanism(k, epsilon)
    table = _transition_counts(k, epsilon, n_per_value, None)
    expected = np.full((k, k), n_per_value * mech.q)
    np.fill_diagonal(expected, n_per_value * mech.p)
    statistic = ((table - expected) ** 2 / expected).sum()
    assert statistic < stats.chi2.ppf(1 - 1e-9, k * (k - 1))


def test_seeded_is_reproducible_and_pinned():
    values = np.arange(12) % 4
    first = randomize(values, 4, 1.0, rng=np.random.default_rng(42))
    assert first.tolist() == randomize(values, 4, 1.0, rng=np.random.default_rng(42)).tolist()
    # Pinned so that a change of draw order (which would change every seeded simulation) shows.
    assert first.tolist() == [0, 0, 1, 3, 0, 0, 2, 1, 0, 1, 1, 2]


def test_shape_dtype_and_input_untouched():
    values = np.array([[0, 1, 2], [2, 1, 0]], dtype=np.int16)
    before = values.copy()
    out = randomize(values, 3, 1.0, rng=np.random.default_rng(0))
    assert out.shape == values.shape and out.dtype == np.int64
    assert np.array_equal(values, before)
    assert ((out >= 0) & (out < 3)).all()
    assert randomize([], 3, 1.0).shape == (0,)
    assert randomize([1, 0, 1], 2, 1.0).tolist() in ([a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1))


def test_moved_reports_never_keep_the_true_value():
    # With ε tiny the keep probability is near 1/k; a moved report must differ from the value.
    k = 6
    values = np.zeros(50_000, dtype=np.int64)
    reports = randomize(values, k, 0.01, rng=np.random.default_rng(3))
    share_kept = (reports == 0).mean()
    assert abs(share_kept - mechanism(k, 0.01).p) < 0.01
    assert set(np.unique(reports).tolist()) == set(range(k))


@pytest.mark.parametrize(
    "values,k,epsilon,error,message",
    [
        ([0.0, 1.0], 2, 1.0, ValueError, "dtype float64"),
        (["a"], 2, 1.0, ValueError, "dtype <U1"),
        ([0, 2], 2, 1.0, ValueError, "option indices 0..1, got 2"),
        ([-1, 0], 3, 1.0, ValueError, "option indices 0..2, got -1"),
        ([0], 1, 1.0, MechanismError, "k must be an integer >= 2"),
        ([0], 2, 0.0, MechanismError, "epsilon must be a finite number"),
        ([0], 2, float("nan"), MechanismError, "epsilon must be a finite number"),
    ],
)
def test_bad_inputs(values, k, epsilon, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(".", r"\.")):
        randomize(values, k, epsilon)


def test_draws_value_out_of_range():
    with pytest.raises(ValueError, match="option index 0..2, got 3"):
        randomize_draws([3], 3, 1.0, [0])
