"""Weighted estimates of a single choice randomized by a design (estimators.weights.weighted_design_estimate)
against R's survey package, run for real.

R's numbers: ``svydesign(ids = ~c, strata = ~s, weights = ~w, nest = TRUE)``; the estimate of answer t
and its standard error are ``svymean`` of the debiased indicator ``z_t = M⁺[t, R]`` (the report
indicator mapped through the design's pseudo-inverse); where a report is affine in one share
(binary designs, forced response) the interval is ``svyciprop(method = "beta")``'s recipe on the
weights' degrees of freedom for that report's indicator, mapped through the same affine map; a custom
design's shares (no report affine in one) the union of the t interval and that recipe for ``z_t`` itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta as beta_dist
from scipy.stats import t as student_t

from deniable.client import designs
from deniable.estimators.design_region import rounded_region_intervals
from deniable.estimators.weights import (DESIGN_UNION, SamplingDesignError, survey_design, weighted_design_estimate,
                                         weighted_estimate, weights_degrees_of_freedom)
from support.kish import exact_interval, join, kish_n
from support.r_survey import svymean


def _sample(seed: int, design, n_strata: int = 3):
    """A stratified cluster sample with unequal weights and reports drawn through ``design``."""
    rng = np.random.default_rng(seed)
    s, c, w, truth = [], [], [], []
    for h in range(n_strata):
        for cluster in range(int(rng.integers(3, 6))):
            for _ in range(int(rng.integers(6, 14))):
                s.append(h)
                c.append(cluster)
                w.append(float(rng.gamma(2.0, 30.0)) * (1 + h))
                truth.append(int(rng.integers(design.k)))
    truth = np.array(truth)
    reports = np.array([int(np.searchsorted(np.cumsum(design.matrix[:, t]), rng.random(), side="right"))
                        for t in truth])
    return np.array(s), np.array(c), np.array(w), np.minimum(reports, design.k_reports - 1)


DESIGNS = {
    "forced k=3": designs.forced(0.6, [0.2, 0.1, 0.1], ["a", "b", "c"]),
    "warner": designs.warner(0.75, ["Yes", "No"]),
    "unrelated": designs.unrelated(0.7, 0.3, ["Yes", "No"]),
    "kuk": designs.kuk(0.8, 0.3, ["Yes", "No"]),
    "custom k=3": designs.custom([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]], ["a", "b", "c"]),
}


@pytest.mark.slow  # R itself
@pytest.mark.parametrize("name", list(DESIGNS))
def test_designed_estimates_equal_r_survey(tmp_path, name):
    design = DESIGNS[name]
    s, c, w, reports = _sample(sum(map(ord, name)), design)
    sample = survey_design(w, strata=s, clusters=[f"{h}.{x}" for h, x in zip(s, c)])
    ours = weighted_design_estimate(reports, design, sample)

    pinv = np.linalg.pinv(design.matrix)
    columns, variables = {"s": s, "c": c, "w": w}, []
    for answer in range(design.k):
        columns[f"z{answer}"] = pinv[answer, reports]
        variables.append(f"z{answer}")
    for r in range(design.k_reports):
        columns[f"r{r}"] = (reports == r).astype(float)
        variables.append(f"r{r}")
    got = dict(zip(variables, svymean(tmp_path, columns, variables, weights="w", strata="s", cluster="c",
                                      kg_weights_df=True)))
    for answer in range(design.k):
        mean, se, _, _ = got[f"z{answer}"]
        assert ours.estimate[answer] == pytest.approx(mean, abs=1e-8)
        assert ours.std_error[answer] == pytest.approx(se, abs=1e-8)
    m = design.matrix
    if design.k == 2:  # report 0's indicator, mapped through its affine map in answer 0
        a, b = m[0, 0], m[0, 1]
        _, _, low, high = got["r0"]
        ends = sorted([(low - b) / (a - b), (high - b) / (a - b)])
        assert ours.ci_low[0] == pytest.approx(max(0.0, ends[0]), abs=1e-8)
        assert ours.ci_high[0] == pytest.approx(min(1.0, ends[1]), abs=1e-8)
        assert ours.ci_low[1] == pytest.approx(1 - ours.ci_high[0], abs=1e-12)
    elif design.name == "forced":  # joined with the exact interval of the same report share at Kish's n
        p, forced = 0.6, [0.2, 0.1, 0.1]
        for answer in range(3):
            share, _, low, high = got[f"r{answer}"]
            floor = exact_interval(share, kish_n(w), p + forced[answer], forced[answer])
            expected = join((low - forced[answer]) / p, (high - forced[answer]) / p, floor)
            assert (ours.ci_low[answer], ours.ci_high[answer]) == pytest.approx(expected, abs=1e-8)
    else:  # the union of the t interval and svyciprop's beta recipe at z's effective n, on the weights' df,
        assert ours.method == DESIGN_UNION  # joined with the exact region of the report shares at Kish's n
        df = weights_degrees_of_freedom(sample)
        shares = [got[f"r{r}"][0] for r in range(design.k_reports)]
        region = rounded_region_intervals(shares, kish_n(w), design.matrix, 0.95)
        for a in range(design.k):
            mean, se = got[f"z{a}"][:2]
            half = student_t.ppf(0.975, df) * se
            n_eff = mean * (1 - mean) / se**2 * (student_t.ppf(0.025, w.size - 1) / student_t.ppf(0.025, df)) ** 2
            kg = (beta_dist.ppf(0.025, n_eff * mean, n_eff * (1 - mean) + 1),
                  beta_dist.ppf(0.975, n_eff * mean + 1, n_eff * (1 - mean)))
            expected = join(min(mean - half, kg[0]), max(mean + half, kg[1]), (region[0][a], region[1][a]))
            assert (ours.ci_low[a], ours.ci_high[a]) == pytest.approx(expected, abs=1e-8)


def test_a_design_that_is_k_ary_randomized_response_gives_weighted_estimate():
    """Forced response with p and equal forced shares is the same channel as k-ary randomized
    response with that p and q: both estimators give the same numbers (independent code paths)."""
    k, p_truth, share = 3, 0.7, 0.1
    design = designs.forced(p_truth, [share] * k, ["a", "b", "c"])
    s, c, w, reports = _sample(5, design)
    sample = survey_design(w, strata=s, clusters=[f"{h}.{x}" for h, x in zip(s, c)])
    ours = weighted_design_estimate(reports, design, sample)
    # weighted_estimate with ε such that p/q of k-ary RR = (p_truth + share)/share
    epsilon = float(np.log((p_truth + share) / share))
    plain = weighted_estimate(reports, epsilon, sample, k=k)
    assert np.asarray(ours.estimate) == pytest.approx(np.asarray(plain.estimate), abs=1e-6)
    assert np.asarray(ours.std_error) == pytest.approx(np.asarray(plain.std_error), abs=1e-6)
    assert np.asarray(ours.ci_low) == pytest.approx(np.asarray(plain.ci_low), abs=1e-6)
    assert np.asarray(ours.ci_high) == pytest.approx(np.asarray(plain.ci_high), abs=1e-6)


def test_bad_reports_name_the_field():
    design = designs.warner(0.75, ["Yes", "No"])
    sample = survey_design([1.0, 2.0, 3.0])
    with pytest.raises(SamplingDesignError) as info:
        weighted_design_estimate(np.array([0, 1, 2]), design, sample)
    assert info.value.field == "reports"
    with pytest.raises(SamplingDesignError) as info:
        weighted_design_estimate(np.array([0, 1, 1]), design, sample, subset=np.array([False, False, False]))
    assert info.value.field == "subset"
