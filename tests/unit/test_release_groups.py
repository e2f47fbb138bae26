"""Central-DP releases within groups for every protected question type: the table's columns, the
noise at sensitivity 2w, and intervals that keep their coverage (conservative by construction).

Coverage is checked on seeded simulations of the whole path (the type's own simulator, the real
geometric mechanism, the consistent counts, the type's group estimates); the linear programme that
bounds a mean (:func:`mean_range`) is checked against scipy's solver.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from deniable.client import discrete
from deniable.estimators.release import TABLE, consistent_counts, mean_range, simultaneous_group_intervals
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.questions.base import NotAvailable


def question(spec: dict):
    return parse_definition({"slug": "g", "title": "g", "questions": [{"id": "q", **spec}]}).questions[0]


def test_mean_range_is_the_linear_programme_over_the_box_and_the_simplex():
    rng = np.random.default_rng(3)
    for _ in range(200):
        k = int(rng.integers(2, 7))
        values = np.sort(rng.integers(0, 20, size=k)).astype(float)
        centre = rng.dirichlet(np.ones(k))
        low = np.clip(centre - rng.random(k) * 0.2, 0, 1)
        high = np.clip(centre + rng.random(k) * 0.2, 0, 1)
        ours = mean_range(values, low, high)
        bounds = list(zip(low, high))
        lo = linprog(values, A_eq=[np.ones(k)], b_eq=[1], bounds=bounds).fun
        hi = -linprog(-values, A_eq=[np.ones(k)], b_eq=[1], bounds=bounds).fun
        assert ours == pytest.approx((lo, hi), abs=1e-9)


def test_mean_range_of_an_infeasible_box_is_the_whole_range():
    assert mean_range([1, 5, 9], [0.5, 0.5, 0.5], [1, 1, 1]) == (1.0, 9.0)
    assert mean_range([1, 5, 9], [0, 0, 0], [0.2, 0.2, 0.2]) == (1.0, 9.0)


def test_simultaneous_intervals_are_wider_than_each_alone():
    from deniable.estimators.release import noisy_group_interval

    row = np.array([4000, 2500, 3000, 500])
    low, high = simultaneous_group_intervals(row, 0.6, 0.4 / 3, 0.6)
    for j in range(3):  # the fourth's λ is below q: both intervals are [0, 0]
        alone = noisy_group_interval(row, j, 0.6, 0.4 / 3, 0.6)
        assert low[j] <= alone[0] and high[j] >= alone[1]
        assert (low[j], high[j]) != alone


# Each case: a protected question, a truth for its simulator, and the true value of each label.
# A list experiment's difference in means is far noisier than a share (its own overall interval at
# ε = 1 and n = 600 is about ±0.8), so its groups are larger.
CASES = {
    "choice": ({"text": "t", "options": ["a", "b", "c"], "epsilon": 1.5}, [0.5, 0.3, 0.2],
               {"a": 0.5, "b": 0.3, "c": 0.2}),
    "grid-1": ({"text": "t", "type": "numeric", "min": 0, "max": 40, "epsilon": 1.0, "mechanism": "grid", "grid": 1},
               {"values": [0, 2, 5, 10, 20], "probabilities": [0.3, 0.3, 0.2, 0.15, 0.05]},
               {"mean": 0.6 + 1.0 + 1.5 + 1.0}),
    "grid-4": ({"text": "t", "type": "numeric", "min": 0, "max": 40, "epsilon": 2.0, "mechanism": "grid", "grid": 4},
               {"values": [0, 2, 5, 10, 20], "probabilities": [0.3, 0.3, 0.2, 0.15, 0.05]},
               {"mean": 0.6 + 1.0 + 1.5 + 1.0}),
    "multi": ({"text": "t", "type": "multi", "options": ["x", "y", "z"], "epsilon": 2.0}, [0.3, 0.05, 0.6],
              {"x": 0.3, "y": 0.05, "z": 0.6}),
    "list": ({"text": "t", "type": "list", "items": ["i", "j", "k"], "sensitive": "s", "epsilon": 1.0},
             {"control": [0.1, 0.3, 0.4, 0.2], "sensitive": 0.15}, {"s": 0.15}),
}


def release_groups_once(q, truth, sizes, epsilon, rng, draw):
    """One release of ``q`` within groups of the given sizes: the type's rows for each group."""
    labels, columns = q.qtype.group_columns(q)
    width = int(columns.sum(axis=1)[0])
    assert np.all(columns.sum(axis=1) == width)
    table = np.vstack([np.bincount(q.qtype.simulate(q, truth, n, rng), minlength=columns.shape[0]) @ columns
                       for n in sizes])
    noisy, threshold = discrete.geometric_mechanism(table, epsilon, TABLE * width, draw)
    totals = table.sum(axis=0)
    consistent = np.column_stack([consistent_counts(noisy[:, j], int(totals[j])) for j in range(table.shape[1])])
    return [q.qtype.group_estimates(q, consistent[g], noisy[g], threshold / 2**32, 0.95) for g in range(len(sizes))]


@pytest.mark.parametrize("case", sorted(CASES))
def test_group_intervals_cover_the_truth_in_every_type(case):
    spec, truth_spec, true = CASES[case]
    q = question(spec)
    truth = q.qtype.truth(q, truth_spec, "truth")
    rng = np.random.default_rng(17)
    draw = discrete.source(rng)
    misses = total = 0
    widths = []
    sizes = (40_000, 20_000) if case == "list" else (3000, 1500)
    for _ in range(100):
        for rows in release_groups_once(q, truth, sizes, 2.0, rng, draw):
            for row in rows:
                total += 1
                misses += not row["ci_low"] - 1e-9 <= true[row["label"]] <= row["ci_high"] + 1e-9
                widths.append((row["ci_high"] - row["ci_low"]) / (row["upper"] - row["lower"]))
    assert misses / total <= 0.05, (case, misses, total)
    assert np.median(widths) < 0.9, case  # informative, not the whole range


def test_a_laplace_number_says_why_it_is_not_released_within_groups():
    q = question({"text": "t", "type": "numeric", "min": 0, "max": 20, "epsilon": 1.0, "mechanism": "laplace"})
    with pytest.raises(NotAvailable, match="too many values"):
        q.qtype.group_columns(q)


def test_a_check_all_tick_moves_two_cells_per_option_so_the_sensitivity_is_2k():
    q = question(CASES["multi"][0])
    labels, columns = q.qtype.group_columns(q)
    assert labels[:2] == ["x: not ticked", "x: ticked"] and columns.shape == (8, 6)
    assert columns[0b101].tolist() == [0, 1, 1, 0, 0, 1]  # x and z ticked, y not
