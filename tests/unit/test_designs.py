"""The randomized-response design library (deniable.client.designs) and its estimators
(deniable.estimators.designs): ε from the matrix, the integer realization, the sampler, unbiasedness
and exact coverage summed over the binomial distribution, the EM estimate against a generic optimizer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import binom

from deniable.client import designs as d
from deniable.client.mechanism import TWO_32
from deniable.estimators.designs import estimate_design, maximum_likelihood, unbiased

CLOSED_FORMS = [  # (design, ε from the design's own probabilities, derived by hand)
    (d.forced(2 / 3, [1 / 6, 1 / 6]), math.log(5)),  # (p + p_r)/p_r = (5/6)/(1/6)
    (d.forced(0.7, [0.1, 0.1, 0.1]), math.log(8)),
    (d.forced(0.6, [0.3, 0.1]), math.log(7)),  # report 2: (0.6 + 0.1)/0.1
    (d.unrelated(0.7, 0.3), max(math.log((0.7 + 0.3 * 0.3) / (0.3 * 0.3)),
                                math.log((0.3 * 0.7 + 0.7) / (0.3 * 0.7)))),
    (d.warner(0.75), math.log(3)),
    (d.warner(0.2), math.log(4)),
    (d.kuk(0.8, 0.3), max(math.log(0.8 / 0.3), math.log(0.7 / 0.2))),
    (d.crosswise(0.25), math.log(3)),
    (d.custom([[0.5, 0.2, 0.1], [0.3, 0.5, 0.1], [0.2, 0.3, 0.8]]), math.log(5)),  # 0.5/0.1 and 0.5/0.1
]


@pytest.mark.parametrize("design,expected", CLOSED_FORMS, ids=lambda v: getattr(v, "name", ""))
def test_epsilon_is_the_largest_log_ratio_of_a_report_and_the_realization_stays_within_a_unit(design, expected):
    assert design.ldp and design.epsilon == pytest.approx(expected, abs=1e-7)
    weights = np.array(design.weights, dtype=np.int64)
    assert (weights.sum(axis=0) == TWO_32).all()
    assert design.matrix.sum(axis=0) == pytest.approx(np.ones(design.k), abs=0)


def test_designs_with_a_zero_cell_are_accepted_only_as_not_ldp():
    for design in (d.forced(0.5, [0.5, 0.0]), d.custom([[1.0, 0.3], [0.0, 0.7]])):  # a "yes-only" report
        assert not design.ldp and design.epsilon == math.inf and design.as_dict()["epsilon"] is None


def test_the_respondent_side_crosswise_model_states_a_range():
    low, high = d.crosswise_epsilon_range(0.24, 0.27)
    assert low == pytest.approx(math.log(0.73 / 0.27)) and high == pytest.approx(math.log(0.76 / 0.24))
    assert d.crosswise_epsilon_range(0.4, 0.6)[0] == 0.0  # a fact as common as not: no protection at ½


@pytest.mark.parametrize("call,field", [
    (lambda: d.custom([[0.5, 0.5], [0.5, 0.5]]), "matrix"),  # two answers, one distribution: singular
    (lambda: d.custom([[0.5, 0.2, 0.3], [0.5, 0.8, 0.7]]), "matrix"),  # 3 answers, 2 reports: rank 2
    (lambda: d.custom([[0.5, 0.2], [0.4, 0.8]]), "matrix"),  # a column adds up to 0.9
    (lambda: d.forced(0.5, [0.3, 0.3]), "forced"),
    (lambda: d.forced(0, [0.5, 0.5]), "p"),
    (lambda: d.forced(0.5, [0.5]), "forced"),
    (lambda: d.warner(0.5), "p"),
    (lambda: d.warner(1.5), "p"),
    (lambda: d.kuk(0.3, 0.3), "theta_2"),
    (lambda: d.unrelated(0.7, float("nan")), "prevalence"),
    (lambda: d.crosswise("half"), "prevalence"),
])
def test_bad_parameters_name_their_field(call, field):
    with pytest.raises(d.DesignError) as caught:
        call()
    assert caught.value.field == field and str(caught.value).startswith(f"{field}: ")


def test_the_sampler_reports_the_first_report_whose_cumulative_weight_exceeds_the_draw():
    design = d.forced(0.7, [0.1, 0.1, 0.1])
    table = design.cumulative()
    for t in range(3):
        edges = [0, *table[t].tolist()]
        for r in range(3):
            draws = [edges[r], edges[r + 1] - 1]  # the first and last draw that give report r
            assert d.sample(design, [t, t], draws).tolist() == [r, r]
    with pytest.raises(d.MechanismError, match="answers must be 0..2"):
        d.sample(design, [3], [0])


def test_the_sampler_matches_the_matrix_on_a_seeded_stream():
    design = d.unrelated(0.6, 0.25)
    rng = np.random.default_rng(4)
    truth = np.repeat([0, 1], 200_000)
    reports = d.sample(design, truth, rng.integers(0, TWO_32, truth.size, dtype=np.uint32))
    for t in (0, 1):
        share = np.mean(reports[truth == t] == 0)
        assert share == pytest.approx(design.matrix[0, t], abs=4 * math.sqrt(0.25 / 200_000))


BINARY = [d.forced(2 / 3, [1 / 6, 1 / 6]), d.unrelated(0.7, 0.3), d.warner(0.2), d.kuk(0.8, 0.3), d.crosswise(0.7)]


@pytest.mark.slow
@pytest.mark.parametrize("design", BINARY, ids=lambda v: v.name)
def test_binary_designs_are_unbiased_and_their_exact_intervals_cover_at_every_share(design):
    """Summed over the binomial distribution of the report count, exactly: E π̂ = π, and the coverage of
    the "exact" interval is at least 95 % at every π on a grid (n = 40)."""
    n = 40
    m = design.matrix
    r = int(np.argmax(np.abs(m[:, 0] - m[:, 1])))
    results = [estimate_design(np.array([x, n - x]) if r == 0 else np.array([n - x, x]), design)
               for x in range(n + 1)]
    for pi in np.linspace(0, 1, 41):
        lam = m[r, 0] * pi + m[r, 1] * (1 - pi)
        weights = binom.pmf(np.arange(n + 1), n, lam)
        mean = sum(w * res.estimate[0] for w, res in zip(weights, results))
        assert mean == pytest.approx(pi, abs=1e-9)
        covered = sum(w for w, res in zip(weights, results) if res.ci_low[0] - 1e-12 <= pi <= res.ci_high[0] + 1e-12)
        assert covered >= 0.95 - 1e-9, (design.name, pi, covered)


@pytest.mark.slow
def test_forced_response_with_three_answers_has_exact_intervals_per_answer():
    design = d.forced(0.7, [0.1, 0.1, 0.1])
    n = 30
    ends = []  # answer 0's interval depends only on its own count
    for x in range(n + 1):
        rest = n - x
        res = estimate_design([x, rest - rest // 2, rest // 2], design)
        ends.append((res.ci_low[0], res.ci_high[0]))
    for pi_0 in np.linspace(0, 1, 21):  # answer 0's report count is Binomial(n, 0.1 + 0.7 π₀) whatever the rest
        weights = binom.pmf(np.arange(n + 1), n, 0.1 + 0.7 * pi_0)
        covered = sum(w for w, (low, high) in zip(weights, ends) if low - 1e-12 <= pi_0 <= high + 1e-12)
        assert covered >= 0.95 - 1e-9, (pi_0, covered)


def test_forced_response_at_ln_5_equals_symmetric_randomized_response():
    """rr's Nigeria design (p = 2/3, p₁ = p₀ = 1/6) is k-ary randomized response at ε = ln 5."""
    from deniable import estimators

    ours = estimate_design([412, 188], d.forced(2 / 3, [1 / 6, 1 / 6]))
    theirs = estimators.estimate([412, 188], math.log(5))
    assert ours.estimate == pytest.approx(theirs.estimate, abs=1e-6)
    assert ours.ci_low == pytest.approx(theirs.ci_low, abs=1e-6)
    assert ours.ci_high == pytest.approx(theirs.ci_high, abs=1e-6)


def test_the_em_estimate_is_the_maximum_likelihood_on_the_simplex():
    rng = np.random.default_rng(9)
    design = d.custom([[0.6, 0.2, 0.1], [0.3, 0.6, 0.2], [0.1, 0.2, 0.7]])
    m = design.matrix
    for _ in range(20):
        counts = rng.multinomial(80, m @ rng.dirichlet([0.3, 0.3, 0.3]))
        ours = maximum_likelihood(counts, m)

        def nll(z):
            pi = np.exp(z) / np.exp(z).sum()
            return -counts @ np.log(m @ pi)

        best = minimize(nll, np.zeros(3), method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12,
                                                                          "maxiter": 20_000})
        assert nll(np.log(np.maximum(ours, 1e-300))) <= best.fun + 1e-7
        inside = unbiased(counts, m)
        if (inside >= 0).all():
            assert ours == pytest.approx(inside, abs=1e-6)


def test_results_serialize_and_print_themselves():
    result = estimate_design([30, 50, 20], d.custom([[0.6, 0.2, 0.1], [0.3, 0.6, 0.2], [0.1, 0.2, 0.7]]))
    data = result.to_dict()
    assert data["n"] == 100 and data["method"] == "simultaneous exact region"  # tests/unit/test_design_region.py
    assert 0 <= data["answers"][0]["ci_low"] <= data["answers"][0]["ci_high"] <= 1
    assert "95% simultaneous exact region intervals" in result.summary()
    with pytest.raises(ValueError, match="3 non-negative integers"):
        estimate_design([1, 2], d.forced(0.7, [0.1, 0.1, 0.1]))
