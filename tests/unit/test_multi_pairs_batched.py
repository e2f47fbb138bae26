"""Every pair of a check-all question's options at once (issue 29): :func:`deniable.estimators.joint.fit_joints`
and :func:`~deniable.estimators.joint.crosstabs` against the per-pair reference, :func:`fit_joint` and
:func:`crosstab`, on random tables, ε and designs, and at the boundary (empty cells, every report ticked, none,
one report)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from deniable.client.designs import custom, forced, kuk, tick_design
from deniable.client.multi import bit_epsilon
from deniable.estimators.joint import (
    KKT_TOLERANCE, _kkt_gap, _log_likelihood, crosstab, crosstabs, fit_joint, fit_joints, mechanism_matrix,
)
from deniable.estimators.multi import estimate_multi, estimate_multi_design, oriented, pair_table

EPSILONS = [0.02, 0.1, 1 / 3, 1.0, 2.5, 6.0]
DESIGNS = {"forced": forced(0.6, [0.3, 0.1]), "kuk": kuk(0.7, 0.3), "triangular": custom([[0.6, 0.0], [0.4, 1.0]])}
# the reference's fit meets the KKT conditions to KKT_TOLERANCE; where the likelihood is nearly flat (ε/K
# small) that leaves its Π̃ within ~1e-7 of the exact maximum (seen: 7e-8), so the fits agree to 1e-6
FIT_TOLERANCE = 1e-6
CROSSTAB_FIELDS = ("joint_estimate", "joint_consistent", "joint_std_error", "joint_ci_low", "joint_ci_high",
                   "conditional_estimate", "conditional_std_error", "conditional_ci_low", "conditional_ci_high",
                   "row_estimable")
EXACT_FIELDS = ("joint_estimate", "joint_ci_low", "joint_ci_high", "row_estimable")  # from the counts alone


def binary(epsilon):
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    return mechanism_matrix(2, p, 1 - p)


def random_tables(rng, n, size):
    """``size`` 2 × 2 tables of n reports: Dirichlet shares, shares with an empty cell or a single cell,
    and the boundary tables every pair of a check-all question can show (all ticked, none, one of each)."""
    tables = []
    for _ in range(size):
        kind = rng.integers(4)
        share = rng.dirichlet(np.full(4, 0.3 if kind == 3 else 1.0))
        if kind == 1:
            share[rng.integers(4)] = 0
        elif kind == 2:
            share = np.eye(4)[rng.integers(4)]
        tables.append(rng.multinomial(n, share / share.sum()).reshape(2, 2))
    tables += [[[n, 0], [0, 0]], [[0, 0], [0, n]], [[0, n], [0, 0]], [[0, 0], [n, 0]]]
    return np.array(tables, dtype=np.int64)


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("n", [1, 2, 7, 40, 1000, 50_000])
def test_fit_joints_is_the_reference_fit_on_random_and_boundary_tables(epsilon, n):
    rng = np.random.default_rng([int(epsilon * 1000), n])
    tables = random_tables(rng, n, 24)
    p = binary(epsilon)
    fitted, converged, steps = fit_joints(tables, p, p)
    assert converged.all()
    assert (steps == 0).all(), "the batched search answered every table itself (no fallback to fit_joint)"
    for table, pi in zip(tables, fitted):
        reference, reference_converged, _ = fit_joint(table, p, p)
        assert reference_converged
        np.testing.assert_allclose(pi, reference, rtol=0, atol=FIT_TOLERANCE, err_msg=str(table.tolist()))
        assert pi.min() >= 0 and pi.sum() == pytest.approx(1, abs=1e-12)
        counts = table.astype(float)
        assert _kkt_gap(pi, counts, p, p, n) < KKT_TOLERANCE
        ours, theirs = _log_likelihood(pi, counts, p, p), _log_likelihood(reference, counts, p, p)
        assert ours >= theirs - 1e-12 * abs(theirs)  # never a worse maximum than the reference's


def test_interior_maximum_is_the_inverse_of_the_mechanism():
    """Where ``A⁻¹ c/n`` is a distribution it is the fit, exactly (an independent solve)."""
    p = binary(1.5)
    truths = np.array([[0.4, 0.1, 0.2, 0.3], [0.25, 0.25, 0.25, 0.25], [0.05, 0.02, 0.03, 0.9]])
    tables = np.rint(1000 * truths @ np.kron(p, p).T).astype(np.int64).reshape(-1, 2, 2)
    fitted, _, _ = fit_joints(tables, p, p)
    for table, pi in zip(tables, fitted):
        direct = np.linalg.solve(np.kron(p, p), table.ravel() / table.sum())
        assert direct.min() > 0
        np.testing.assert_allclose(pi.ravel(), direct, rtol=0, atol=1e-14)


def assert_same_crosstab(ours, reference, context=""):
    for name in CROSSTAB_FIELDS:
        atol = 0 if name == "row_estimable" else 1e-12 if name in EXACT_FIELDS else FIT_TOLERANCE
        np.testing.assert_allclose(np.asarray(getattr(ours, name), dtype=float),
                                   np.asarray(getattr(reference, name), dtype=float), rtol=0, atol=atol,
                                   err_msg=f"{name} {context}")
    for name in ("n", "k_row", "k_col", "epsilon", "confidence", "method", "converged", "note"):
        assert getattr(ours, name) == getattr(reference, name), f"{name} {context}"
    for side in ("row", "col"):  # the marginal results: the same computation, field for field
        a, b = getattr(ours, side), getattr(reference, side)
        assert type(a) is type(b)
        for field in dataclasses.fields(a):
            x, y = getattr(a, field.name), getattr(b, field.name)
            if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
                np.testing.assert_array_equal(x, y, err_msg=f"{side}.{field.name} {context}")
            else:
                both_nan = isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)
                assert x == y or both_nan, f"{side}.{field.name} {context}"


@pytest.mark.parametrize("epsilon", [None, 0.05, 0.5, 3.0])
@pytest.mark.parametrize("n", [3, 60, 20_000])
def test_crosstabs_equal_crosstab_table_by_table(epsilon, n):
    rng = np.random.default_rng([n, 0 if epsilon is None else int(epsilon * 100)])
    tables = random_tables(rng, n, 12)
    for confidence in (0.95, 0.99):
        results = crosstabs(tables, epsilon, epsilon, confidence=confidence)
        assert len(results) == len(tables)
        for table, ours in zip(tables, results):
            assert_same_crosstab(ours, crosstab(table, epsilon, epsilon, confidence=confidence), table.tolist())


@pytest.mark.parametrize("name", sorted(DESIGNS))
@pytest.mark.parametrize("n", [5, 300, 20_000])
def test_crosstabs_equal_crosstab_with_a_design_on_both_sides(name, n):
    design = DESIGNS[name]
    rng = np.random.default_rng([n, len(name)])
    tables = random_tables(rng, n, 10)
    for table, ours in zip(tables, crosstabs(tables, None, None, row_design=design, col_design=design)):
        assert_same_crosstab(ours, crosstab(table, None, None, row_design=design, col_design=design), table.tolist())


def test_crosstabs_refuses_what_crosstab_refuses():
    with pytest.raises(ValueError, match="negative count"):
        crosstabs([[[5, -1], [2, 2]]], 1.0, 1.0)
    with pytest.raises(ValueError, match="2 × 2"):
        crosstabs(np.ones((3, 3, 3), dtype=int), 1.0, 1.0)
    assert crosstabs(np.zeros((0, 2, 2), dtype=int), 1.0, 1.0) == []
    with pytest.raises(ValueError, match="at least one report"):
        fit_joints(np.zeros((1, 2, 2)), binary(1.0), binary(1.0))
    # tables of different n (not the pairs of one question) and empty tables: each by the reference
    mixed = crosstabs([[[3, 1], [1, 5]], [[0, 0], [0, 0]]], 1.0, 1.0)
    assert mixed[0].n == 10 and mixed[1].n == 0 and "nothing to estimate" in mixed[1].note


def check_all_statistics(rng, n, k):
    """Sufficient statistics of n check-all reports: random tick rates, one option ticked by everyone, one by
    nobody (when k ≥ 4), and a pair ticked together."""
    rates = rng.uniform(0, 1, k)
    if k >= 4:
        rates[0], rates[1] = 1.0, 0.0
    bits = (rng.uniform(size=(n, k)) < rates).astype(np.int64)
    bits[:, -1] = bits[:, -2]  # the last two options ticked together
    ticks = bits.sum(axis=0)
    pairs = np.triu(bits.T @ bits, 1)
    return ticks, pairs, np.bincount(bits.sum(axis=1), minlength=k + 1)


@pytest.mark.parametrize("k,epsilon,n", [(2, 1.0, 50), (5, 3.0, 400), (9, 3.0, 20_000), (6, None, 100), (12, 8.0, 3)])
def test_estimate_multi_pairs_equal_the_per_pair_crosstab(k, epsilon, n):
    rng = np.random.default_rng([k, n])
    ticks, pairs, ticked = check_all_statistics(rng, n, k)
    result = estimate_multi(n, ticks, pairs, ticked, epsilon)
    per_bit = None if epsilon is None else bit_epsilon(epsilon, k)
    assert sorted(result.pairs) == [(j, l) for j in range(k) for l in range(j + 1, k)]
    for (j, l), ours in result.pairs.items():
        table = pair_table(n, int(ticks[j]), int(ticks[l]), int(pairs[j, l]))
        assert_same_crosstab(ours, crosstab(table, per_bit, per_bit), (j, l))


def test_estimate_multi_design_pairs_equal_the_per_pair_crosstab():
    n, k = 500, 5
    ticks, pairs, ticked = check_all_statistics(np.random.default_rng(29), n, k)
    for spec in ({"name": "forced", "p": 0.6, "forced": [0.25, 0.15]}, {"name": "forced", "p": 0.6, "forced": [0.1, 0.3]}):
        design = tick_design(spec)
        both_sides, flipped = oriented(design)
        result = estimate_multi_design(n, ticks, pairs, ticked, design)
        for (j, l), ours in result.pairs.items():
            table = pair_table(n, int(ticks[j]), int(ticks[l]), int(pairs[j, l]))
            reference = crosstab(table[::-1, ::-1] if flipped else table, None, None, row_design=both_sides,
                                 col_design=both_sides)
            assert_same_crosstab(ours, reference, (spec["forced"], j, l))


def test_no_reports_no_pairs():
    assert estimate_multi(0, [0, 0, 0], np.zeros((3, 3)), [0, 0, 0, 0], 2.0).pairs == {}
