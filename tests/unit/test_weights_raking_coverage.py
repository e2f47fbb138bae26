"""Raked intervals hold at small effective sizes (issue 36, item 6): R survey's ``apipop``, samples of 200
schools drawn with sizes ×1/×10/×20 by school type and ×4 when the schoolwide target was not met, raked
to both margins (Kish's effective sample size about 33), the shares ``awards`` = Yes (0.67) and
``api00 > 850`` (0.079).  R's ``svyciprop(method = "beta")`` of the raked design falls short (0.889
and 0.764 over 3,000 samples); ``raked_estimate``'s interval, which holds the exact interval at the raked weights' Kish n,
covers.  A few hundred samples here (seeded); the 3,000-sample grid is ``scripts/weights_coverage.py
--raking`` (docs/statistics.md)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from support.kish import exact_interval, kish_n

ROOT = Path(__file__).resolve().parents[2]
REPS = 300


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("weights_coverage", ROOT / "scripts" / "weights_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pop(script, tmp_path_factory):
    return script.apipop(tmp_path_factory.mktemp("api") / "apipop.csv")  # R writes it


@pytest.mark.slow  # R itself (the data)
def test_apipop_is_the_issues_population(pop):
    assert pop["stype"].size == 6194
    assert pop["awards"].mean() == pytest.approx(0.6727, abs=1e-4)
    assert pop["api850"].mean() == pytest.approx(0.0788, abs=1e-4)
    assert np.bincount(pop["stype"]).tolist() == [4421, 755, 1018]


@pytest.mark.slow  # R itself (the data)
def test_raked_intervals_cover_where_r_surveys_fall_short(script, pop):
    c = script.raking_cell(pop, 200, 1.0, REPS, np.random.default_rng(36))
    floor = 0.95 - 2 * math.sqrt(0.95 * 0.05 / REPS)
    assert c["refused"] == 0 and 25 < c["kish"] < 40
    for name in script.RAKING_SHARES:
        assert c[name, "ours"][0] >= floor, name
        assert c[name, "r"][0] < floor, name  # R's interval alone: 0.88 and 0.77 in the issue's audit


@pytest.mark.slow  # R itself
def test_each_raked_interval_holds_the_exact_one_and_r_is_the_recipe(script, pop):
    """Each sample's interval contains the exact interval of its raked share at the raked weights' Kish n
    (computed here from the weights), and the recipe the table calls R's is R's own svyciprop."""
    from deniable.estimators.weights import rake, raked_estimate

    rng = np.random.default_rng(7)
    margins = {"stype": np.bincount(pop["stype"]) / pop["stype"].size,
               "wide": np.bincount(pop["wide"]) / pop["wide"].size}
    samples = []
    for _ in range(40):
        rows, w0 = script.raking_sample(pop, 200, 1.0, rng)
        variables = [pop["stype"][rows], pop["wide"][rows]]
        w = np.asarray(rake(w0, dict(zip(("stype", "wide"), variables)), margins).weights)
        for name in script.RAKING_SHARES:
            result = raked_estimate(pop[name][rows], None, w, variables, k=2)
            low, high = exact_interval(result.report_share[1], kish_n(w), 1.0, 0.0)
            assert result.ci_low[1] <= low + 1e-12 and result.ci_high[1] >= high - 1e-12
        samples.append((rows, w0))
    assert script.r_check_cell(pop, samples[:20], margins) < 1e-8
