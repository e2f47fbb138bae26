"""scripts/weights_coverage.py, small and seeded: the simulation is what its notes say, and the
weighted intervals cover in one hard cell (CV of the weights 1.5, clusters, ICC 0.05, ε = 2)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from deniable.client.mechanism import resolve

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("weights_coverage", ROOT / "scripts" / "weights_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("clustered", [False, True])
@pytest.mark.parametrize("cv", [0.5, 1.5])
def test_the_population_and_the_samples_have_the_cells_icc_and_weights_cv(script, cv, clustered):
    pop = script.population(np.random.default_rng(5), cv, clustered)
    assert pop["icc"] == pytest.approx(0.05, abs=0.01)  # Dirichlet with total concentration 19
    assert pop["truth"] == pytest.approx(script.MEANS, abs=0.01)
    # the CV of the weights of many draws: the cell's (σ solved exactly for the population)
    _, weights, clusters = script.draw(pop, 200_000, np.random.default_rng(6))
    assert weights.std() / weights.mean() == pytest.approx(cv, rel=0.05)
    assert (clusters is not None) == clustered


def test_the_sampling_is_informative_so_weights_matter(script):
    """The people of option 0 are under-sampled: the unweighted share of option 0 is too small,
    the weighted (Hájek) share is the population's."""
    pop = script.population(np.random.default_rng(7), 1.5, False)
    answers, weights, _ = script.draw(pop, 200_000, np.random.default_rng(8))
    unweighted = np.mean(answers == 0)
    weighted = weights @ (answers == 0) / weights.sum()
    assert unweighted < pop["truth"][0] - 0.03
    assert weighted == pytest.approx(pop["truth"][0], abs=0.005)


def test_randomize_is_k_ary_randomized_response(script):
    answers = np.zeros(100_000, dtype=np.int64)
    reports = script.randomize(answers, 2.0, np.random.default_rng(9))
    mech = resolve(script.K, 2.0)
    assert np.bincount(reports, minlength=3) / answers.size == pytest.approx([mech.p, mech.q, mech.q], abs=0.005)
    assert np.array_equal(script.randomize(answers, None, np.random.default_rng(9)), answers)  # asked directly


def test_the_weighted_intervals_cover_in_a_clustered_cell_with_cv_1_5(script):
    """300 replicates (MC s.e. 0.0126 at 0.95): coverage ≥ 0.95 − 4 MC s.e.; the same estimator
    with equal weights misses the population's share almost always."""
    rng = np.random.default_rng(11)
    pop = script.population(rng, 1.5, True)
    result = script.cell(pop, 1000, 2.0, 300, rng)
    assert result["mc_se"] == pytest.approx(np.sqrt(0.95 * 0.05 / 300))
    assert 0.95 - 4 * result["mc_se"] <= result["coverage"] <= 1
    assert 0.95 - 4 * result["mc_se"] <= result["min_coverage"] <= result["coverage"]
    assert result["unweighted"] < 0.5
    assert 250 < result["kish"] < 450  # n/(1 + CV²) = 1000/3.25 ≈ 308


def test_the_crosstab_population_has_the_joint_shares_and_its_intervals_cover(script):
    """The cross-tab's simulation (--crosstab): the population's conditional shares are JOINT's, its
    row 0 is under-sampled; in a small cell (n = 200, CV 0.5, both questions at ε = 2: a rare
    conditional share of 0.2 given a row of 0.25) the conditional intervals cover, 300 replicates
    (≥ 0.95 − 4 MC s.e.), where the t interval on the linearized ratio fell short."""
    rng = np.random.default_rng(12)
    pop = script.crosstab_population(rng, 0.5, False)
    expected = script.JOINT / script.JOINT.sum(axis=1, keepdims=True)
    assert pop["truth"] == pytest.approx(expected, abs=0.02)
    cells, weights, _ = script.draw(pop, 100_000, np.random.default_rng(13))
    assert np.mean(cells // script.K_COL == 0) < script.JOINT[0].sum() - 0.03  # informative: row 0 under-sampled
    assert weights @ (cells // script.K_COL == 0) / weights.sum() == pytest.approx(script.JOINT[0].sum(), abs=0.01)
    result = script.crosstab_cell(pop, 200, (2.0, 2.0), 300, rng)
    floor = 0.95 - 4 * np.sqrt(0.95 * 0.05 / 300)
    assert result["min_coverage"] >= floor
    assert result["coverage"] >= result["min_coverage"]
    assert result["min_coverage"] > result["t_min_coverage"] + 0.02  # the t interval on the ratio fell short here
