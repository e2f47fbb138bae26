"""Cross-tabs of a question randomized by a design (issue 24): the joint matrix is the Kronecker product
of the two questions' matrices (:mod:`deniable.estimators.joint`, "A randomized-response design").

Checked independently: the exact expectation of the unbiased joint estimate (summing the multinomial
over every table of a small n) equals the truth, and the exact coverage of the intervals (the same
sum) is at least the confidence for every cell."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import multinomial

from deniable.client.designs import custom, forced, kuk
from deniable.client.mechanism import mechanism
from deniable.estimators import crosstab
from deniable.estimators.joint import (conditional_intervals, joint_intervals, mechanism_matrix, option_channels,
                                       per_cell, row_share_low)
from deniable.server.cli import cli
from deniable.server.survey.analysis import AnalysisError, check_crosstab
from deniable.server.survey.definition import parse_definition

FORCED = forced(0.6, [0.3, 0.1])  # p₁ ≠ p₀: not k-ary randomized response
FORCED3 = forced(0.5, [0.1, 0.3, 0.1])
TRIANGULAR = custom([[0.6, 0.0], [0.4, 1.0]])  # a zero cell: not ε-LDP


def all_tables(n, cells):
    """Every table of n reports over ``cells`` cells (compositions of n)."""
    for split in itertools.combinations(range(n + cells - 1), cells - 1):
        edges = (-1,) + split + (n + cells - 1,)
        yield [edges[i + 1] - edges[i] - 1 for i in range(cells)]


def kary(k, epsilon):
    m = mechanism(k, epsilon)
    return mechanism_matrix(k, m.p, m.q)


@pytest.mark.parametrize("row_design, col_eps, truth", [
    (FORCED, 1.0, [[0.1, 0.2], [0.3, 0.4]]),
    (FORCED, None, [[0.05, 0.25], [0.5, 0.2]]),  # against a question asked directly
    (FORCED3, 2.0, [[0.1, 0.2], [0.05, 0.15], [0.3, 0.2]]),
    (TRIANGULAR, 1.0, [[0.1, 0.2], [0.3, 0.4]]),
])
def test_the_unbiased_joint_estimate_has_the_truth_as_its_exact_expectation(row_design, col_eps, truth):
    """E Π̂ = Σ_tables P(table) Π̂(table) = Π exactly, P the multinomial of Λ = M1 Π M2ᵀ (n = 4)."""
    truth = np.array(truth)
    k1, k2 = truth.shape
    m2 = kary(k2, col_eps) if col_eps else np.eye(k2)
    lam = (row_design.matrix @ truth @ m2.T).ravel()
    n = 4
    expected = np.zeros_like(truth)
    for table in all_tables(n, k1 * k2):
        weight = multinomial.pmf(table, n, lam)
        result = crosstab(np.array(table).reshape(k1, k2), None, col_eps, row_design=row_design)
        expected += weight * result.joint_estimate
    assert expected == pytest.approx(truth, abs=1e-12)


@pytest.mark.parametrize("row_design, col_design, truth", [
    (FORCED, None, [[0.0, 0.1], [0.4, 0.5]]),
    (FORCED, FORCED, [[0.02, 0.08], [0.3, 0.6]]),
    (TRIANGULAR, None, [[0.25, 0.25], [0.25, 0.25]]),
    (FORCED, None, [[0.5, 0.0], [0.0, 0.5]]),
])
def test_joint_and_conditional_intervals_cover_by_exact_enumeration(row_design, col_design, truth):
    """Coverage summed exactly over every table of n = 18 reports; the column is k-ary RR at ε = 1 or a design."""
    n, truth, confidence = 18, np.array(truth), 0.95
    m2 = col_design.matrix if col_design else kary(2, 1.0)
    pq2 = option_channels(col_design) if col_design else [(m2[0, 0], m2[1, 0])] * 2
    pq1 = option_channels(row_design)
    lam = (row_design.matrix @ truth @ m2.T).ravel()
    tables = np.array(list(all_tables(n, 4)))
    weights = multinomial.pmf(tables, n, lam)
    assert weights.sum() == pytest.approx(1, abs=1e-12)
    tables = tables.reshape(-1, 2, 2)
    low, high = per_cell(joint_intervals, tables, pq1, pq2, confidence)
    covered = np.einsum("t,tij->ij", weights, ((low <= truth) & (truth <= high)).astype(float))
    assert covered.min() >= confidence
    c_low, c_high = per_cell(conditional_intervals, tables, pq1, pq2, confidence)
    estimable = np.stack([row_share_low(tables, pq1[i], confidence)[:, i] > 0 for i in range(2)], axis=1)
    with np.errstate(invalid="ignore"):
        theta = truth / truth.sum(axis=1, keepdims=True)
    held = np.where(np.isnan(theta), True, (c_low <= theta) & (theta <= c_high))
    conditional = np.einsum("t,tij->ij", weights, np.where(estimable[:, :, None], held, True).astype(float))
    assert conditional.min() >= confidence


def test_one_pair_for_every_option_gives_the_kary_intervals():
    """per_cell with each option's (p, q) equal to the k-ary (p, q) is the vectorized k-ary path."""
    counts = np.array([[30, 12, 9], [7, 25, 11], [5, 8, 40]])
    m1, m2 = mechanism(3, 1.0), mechanism(3, 2.0)
    row, col = (m1.p, m1.q), (m2.p, m2.q)
    for function in (joint_intervals, conditional_intervals):
        assert np.array_equal(per_cell(function, counts, [row] * 3, [col] * 3, 0.9), function(counts, row, col, 0.9))


def test_the_designed_crosstab_states_the_designs_epsilon_and_estimates():
    counts = np.array([[198, 282], [209, 311]])  # 1000 · M1 Π M2ᵀ for Π = [[0.1, 0.2], [0.2, 0.5]], rounded
    result = crosstab(counts, None, 1.0, row_design=FORCED)
    assert result.epsilon == pytest.approx(FORCED.epsilon + mechanism(2, 1.0).epsilon)
    assert result.joint_consistent.sum() == pytest.approx(1) and result.converged
    assert result.joint_consistent == pytest.approx(np.array([[0.1, 0.2], [0.2, 0.5]]), abs=2e-3)
    assert np.all(result.joint_ci_low <= result.joint_consistent) and np.all(result.joint_consistent <= result.joint_ci_high)
    assert result.row.estimate == pytest.approx(np.linalg.inv(FORCED.matrix) @ (counts.sum(axis=1) / 1000))
    assert np.isinf(crosstab(counts, None, 1.0, row_design=TRIANGULAR).epsilon)  # not ε-LDP
    with pytest.raises(ValueError, match="not likelier under its own answer"):  # report 3's two "others" differ
        crosstab(np.array([[100, 80], [90, 70], [60, 500]]), None, 1.0,
                 row_design=custom([[0.8, 0.1, 0.2], [0.1, 0.8, 0.2], [0.1, 0.1, 0.6]]))
    # Kuk's red card is likelier for a "No", the black for a "Yes": the two reports are swapped
    swapped = crosstab(counts, None, 1.0, row_design=kuk(0.2, 0.7))
    assert np.all(swapped.joint_ci_low <= swapped.joint_ci_high) and swapped.converged


def survey(design):
    return parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No"], "design": design},
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "year", "text": "Year?", "options": ["First", "Second"]}]})


def test_deniable_estimate_crosstab_of_a_designed_question(tmp_path):
    """Through the command line: the joint estimate is the Kronecker inverse of the reported shares."""
    s = survey({"name": "forced", "p": 0.6, "forced": [0.3, 0.1]})
    definition, truth, out = tmp_path / "s.json", tmp_path / "truth.json", tmp_path / "r.csv"
    definition.write_text(json.dumps(s.to_dict()))
    truth.write_text(json.dumps({"cheated": [0.3, 0.7], "drugs": [0.2, 0.8], "year": [0.5, 0.5]}))
    runner = CliRunner()
    made = runner.invoke(cli, ["simulate", str(definition), "--n", "3000", "--truth", str(truth), "--seed", "2",
                               "-o", str(out)])
    assert made.exit_code == 0, made.output
    shown = runner.invoke(cli, ["estimate", str(definition), str(out), "--crosstab", "cheated", "drugs",
                                "--format", "json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.output)
    data = data.get("crosstab", data)
    reported = np.array([c["noisy_count"] for c in data["cells"]], dtype=float).reshape(2, 2)
    shares = np.linalg.inv(FORCED.matrix) @ (reported / reported.sum()) @ np.linalg.inv(kary(2, 1.0)).T
    assert [c["estimate"] for c in data["cells"]] == pytest.approx(list(shares.ravel()), abs=1e-9)
    assert all(c["ci_low"] <= c["headline"] <= c["ci_high"] for c in data["cells"])


def test_a_design_without_the_exact_form_is_refused_naming_the_field():
    s = parse_definition({"slug": "s", "title": "S", "questions": [
        {"id": "cheated", "text": "Cheated?", "options": ["Yes", "No", "Maybe"],
         "design": {"name": "custom", "matrix": [[0.8, 0.1, 0.2], [0.1, 0.8, 0.2], [0.1, 0.1, 0.6]]}},
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]})
    assert check_crosstab(survey({"name": "kuk", "theta_1": 0.2, "theta_2": 0.7}), "cheated", "drugs")  # swapped
    with pytest.raises(AnalysisError, match="'cheated'.*not likelier under its own answer") as caught:
        check_crosstab(s, "cheated", "drugs")
    assert caught.value.field == "crosstab"
    assert check_crosstab(survey({"name": "forced", "p": 0.6, "forced": [0.3, 0.1]}), "cheated", "year")


def test_a_forced_share_realized_one_unit_apart_under_different_answers_still_crosses():
    """Each column of weights is realized on its own, so k-ary forced response with shares of 0.1
    realizes report 2's share as 429496730 under one answer and 429496729 under another (in 2^32):
    one unit apart counts as equal (q is their mean), while a design whose report really has two
    probabilities under other answers stays refused."""
    design = forced(0.7, [0.1, 0.1, 0.1])
    weights = np.array(design.weights)
    assert len({int(w) for w in np.delete(weights[1], 1)}) == 2  # the case this test is about
    channels = option_channels(design)
    assert np.array(channels) == pytest.approx(np.array([[0.8, 0.1]] * 3), abs=2**-32)
    with pytest.raises(ValueError, match="report 1 is not likelier"):
        option_channels(custom([[0.8, 0.1, 0.2], [0.1, 0.8, 0.2], [0.1, 0.1, 0.6]]))
