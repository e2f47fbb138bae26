"""Design-based estimates (deniable.estimators.weights) against R's survey package, run for real.

With a question asked directly (p = 1) the weighted shares, their linearized standard errors and
the Korn–Graubard intervals must equal R's ``svymean`` and ``svyciprop(method = "beta")`` on
``svydesign(ids = ~cluster, strata = ~stratum, weights = ~w, fpc = ~N)`` to 1e-6; with randomized
reports, the report shares' numbers are R's and the mechanism maps them.  R and ``r-cran-survey``
are installed by the test command (scripts/test.sh); a missing R fails here, it does not skip.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import numpy as np
import pytest

from deniable import estimators
from deniable.client.mechanism import mechanism
from deniable.estimators.weights import DesignError, rake, survey_design, weighted_estimate

R_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
fpc <- if (args[2] == "fpc") ~N else NULL
des <- svydesign(ids = ~cluster, strata = ~stratum, weights = ~w, fpc = fpc, data = d)
out <- list()
for (j in sort(unique(d$y))) {
  d[[paste0("y", j)]] <- as.numeric(d$y == j)
}
des <- update(des, y0 = as.numeric(y == 0), y1 = as.numeric(y == 1), y2 = as.numeric(y == 2))
for (j in 0:2) {
  f <- as.formula(paste0("~y", j))
  m <- svymean(f, des)
  ci <- svyciprop(f, des, method = "beta", level = 0.95)
  out[[j + 1]] <- c(coef(m)[[1]], SE(m)[[1]], attr(ci, "ci")[[1]], attr(ci, "ci")[[2]])
}
cat(sprintf("%.15g", unlist(out)), sep = "\n")
"""


def sample(seed: int, n_strata: int = 3):
    """A stratified cluster sample with unequal weights and a 3-option answer."""
    rng = np.random.default_rng(seed)
    rows = []
    for h in range(n_strata):
        for c in range(int(rng.integers(3, 7))):
            size = int(rng.integers(4, 15))
            level = rng.dirichlet([2, 2, 2])
            for _ in range(size):
                rows.append((h, f"{h}-{c}", float(rng.gamma(2.0, 50.0)), int(rng.choice(3, p=level)), 40 + 10 * h))
    stratum, cluster, w, y, big_n = (np.array(v) for v in zip(*rows))
    return stratum, cluster, w, y, big_n


def r_survey(tmp_path, stratum, cluster, w, y, big_n, fpc: bool) -> np.ndarray:
    rscript = shutil.which("Rscript")
    assert rscript, "R is not installed: bash scripts/test.sh installs r-base-core and r-cran-survey"
    path = tmp_path / "d.csv"
    with open(path, "w") as fh:
        fh.write("stratum,cluster,w,y,N\n")
        for row in zip(stratum, cluster, w, y, big_n):
            fh.write(",".join(repr(float(v)) if isinstance(v, float) else str(v) for v in row) + "\n")
    script = tmp_path / "s.R"
    script.write_text(R_SCRIPT)
    done = subprocess.run([rscript, str(script), str(path), "fpc" if fpc else "none"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return np.array([float(v) for v in done.stdout.split()]).reshape(3, 4)


@pytest.mark.slow  # R itself, three times: the full suite
@pytest.mark.parametrize("seed,fpc", [(1, False), (2, True), (3, False)])
def test_weighted_shares_standard_errors_and_intervals_equal_r_survey(tmp_path, seed, fpc):
    stratum, cluster, w, y, big_n = sample(seed)
    expected = r_survey(tmp_path, stratum, cluster, w, y, big_n, fpc)
    design = survey_design(w, strata=stratum, clusters=cluster, population_clusters=big_n if fpc else None)
    ours = weighted_estimate(y, None, design, k=3)
    assert ours.estimate == pytest.approx(expected[:, 0], abs=1e-10)
    assert ours.std_error == pytest.approx(expected[:, 1], rel=1e-8)
    assert ours.ci_low == pytest.approx(expected[:, 2], abs=1e-6)
    assert ours.ci_high == pytest.approx(expected[:, 3], abs=1e-6)


@pytest.mark.slow  # R itself: the full suite
def test_randomized_reports_map_r_surveys_report_shares_through_the_mechanism(tmp_path):
    stratum, cluster, w, y, big_n = sample(4)  # y read as the reports of a 3-option question at ε = 1
    expected = r_survey(tmp_path, stratum, cluster, w, y, big_n, False)
    design = survey_design(w, strata=stratum, clusters=cluster)
    ours = weighted_estimate(y, 1.0, design, k=3)
    m = mechanism(3, 1.0)
    assert ours.report_share == pytest.approx(expected[:, 0], abs=1e-10)
    assert ours.estimate == pytest.approx((expected[:, 0] - m.q) / (m.p - m.q), abs=1e-9)
    assert ours.std_error == pytest.approx(expected[:, 1] / (m.p - m.q), rel=1e-8)
    mapped = np.clip((expected[:, 2:] - m.q) / (m.p - m.q), 0, 1)
    assert np.column_stack([ours.ci_low, ours.ci_high]) == pytest.approx(mapped, abs=1e-6)


def test_sampling_weights_are_not_frequency_weights():
    """The same numbers as frequency weights (each row w identical responses) claim far more precision."""
    rng = np.random.default_rng(7)
    w = rng.integers(1, 30, 200)
    y = rng.integers(0, 2, 200)
    sampling = weighted_estimate(y, 1.0, survey_design(w.astype(float)), k=2)
    frequency = estimators.estimate(np.bincount(np.repeat(y, w), minlength=2), 1.0, method="wald")
    assert sampling.estimate == pytest.approx(frequency.estimate, abs=1e-12)
    assert sampling.std_error[0] > 2 * frequency.std_error[0]


def test_raking_meets_the_margins_and_says_what_it_did():
    rng = np.random.default_rng(3)
    age = rng.choice(3, 500, p=[0.5, 0.3, 0.2])
    sex = rng.choice(2, 500, p=[0.3, 0.7])
    raked = rake(np.ones(500), {"age": age, "sex": sex}, {"age": [0.3, 0.4, 0.3], "sex": [0.5, 0.5]})
    assert raked.converged
    assert raked.achieved["age"] == pytest.approx([0.3, 0.4, 0.3], abs=1e-9)
    assert raked.achieved["sex"] == pytest.approx([0.5, 0.5], abs=1e-9)
    assert raked.weights.sum() == pytest.approx(500)
    assert raked.effective_n == pytest.approx(500 ** 2 / np.sum(raked.weights ** 2))
    assert 0 < raked.smallest < 1 < raked.largest


@pytest.mark.parametrize("call,field", [
    (lambda: survey_design([1, -1, 2]), "weights"),
    (lambda: survey_design([1, math.nan, 2]), "weights"),
    (lambda: survey_design([0.0, 0.0]), "weights"),
    (lambda: survey_design([1, 1, 1, 1], strata=[0, 0, 1, 1], clusters=[1, 2, 3, 3]), "strata"),
    (lambda: rake([1, 1, 1], {"a": np.array([0, 1, 1])}, {"a": [0.5, 0.6]}), "a"),
    (lambda: rake([1, 1, 1], {"a": np.array([0, 0, 0])}, {"a": [0.5, 0.5]}), "a"),
    (lambda: rake([1, 1], {"a": np.array([0, 1])}, {"b": [0.5, 0.5]}), "b"),
])
def test_bad_designs_name_their_field(call, field):
    with pytest.raises(DesignError) as caught:
        call()
    assert caught.value.field == field


def test_results_serialize_themselves():
    stratum, cluster, w, y, _ = sample(5)
    result = weighted_estimate(y, 2.0, survey_design(w, strata=stratum, clusters=cluster), k=3)
    json.dumps(result.to_dict(), allow_nan=False)
    assert "WeightedResult" in result.summary()
