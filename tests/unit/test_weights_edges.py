"""Weighted and raked intervals never claim more certainty than the randomized reports allow (issue 36,
item 2): each contains the exact unweighted interval of the same report shares at Kish's effective
sample size (rounded down, at least 1), rows of weight 0 count for nothing, and the result's note says
when that rule, not Korn and Graubard's interval, set an interval (estimators/weights.py, module notes).

The exact intervals here come from the unweighted estimators themselves (``estimators.estimate`` for
k-ary randomized response, ``estimators.estimate_design`` for a design) at the whole counts on either
side of ``n · share``, and Kish's n from the weights: ``floor((Σw)²/Σw²)``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from deniable import estimators
from deniable.client import designs
from deniable.client.mechanism import resolve
from deniable.estimators.design_region import region_intervals, rounded_region_intervals
from deniable.estimators.weights import (korn_graubard, rake, raked_design_estimate, raked_estimate, survey_design,
                                         weighted_crosstab, weighted_design_estimate, weighted_estimate)

CUSTOM = designs.custom([[0.6, 0.3, 0.2], [0.2, 0.5, 0.2], [0.2, 0.2, 0.6]], ["a", "b", "c"])
FORCED = designs.forced(0.6, [0.2, 0.1, 0.1], ["a", "b", "c"])


def kish(weights) -> int:
    w = np.asarray(weights, dtype=float)
    w = w[w > 0]
    return max(1, math.floor(w.sum() ** 2 / np.sum(w**2) * (1 + 1e-12)))


def unweighted(share: float, n: int, k: int, epsilon) -> tuple[float, float]:
    """``estimators.estimate``'s exact interval of one option reported by ``n · share`` of n respondents
    (both whole counts beside it when it is not whole: the hull)."""
    x = share * n
    counts = {round(x)} if abs(x - round(x)) < 1e-9 * n else {math.floor(x), math.ceil(x)}
    ends = []
    for c in counts:
        result = estimators.estimate([c, n - c] + [0] * (k - 2), epsilon, method="exact")
        ends.append((float(result.ci_low[0]), float(result.ci_high[0])))
    return min(e[0] for e in ends), max(e[1] for e in ends)


def holds(result, j: int, interval, tolerance: float = 1e-9) -> bool:
    return result.ci_low[j] <= interval[0] + tolerance and result.ci_high[j] >= interval[1] - tolerance


def test_one_heavy_weight_gives_one_reports_interval():
    """One weight of 10⁶ beside seven of 1 at ε = 1 (Kish's n ≈ 1): the interval was [1, 1]; one report at
    ε = 1 cannot tell π = 0 from π = 1, so it is [0, 1], and the note says the rule set it."""
    design = survey_design([1e6] + [1.0] * 7)
    assert kish(design.weights) == 1
    result = weighted_estimate(np.zeros(8, dtype=np.int64), 1.0, design, k=2)
    one_report = unweighted(1.0, 1, 2, 1.0)
    assert one_report == (0.0, 1.0)
    for j in range(2):
        assert holds(result, j, unweighted(result.report_share[j], 1, 2, 1.0))
        assert result.ci_low[j] < result.ci_high[j]
    assert result.kish_floor.tolist() == [True, True]
    assert result.note.startswith("the intervals of option 0 and option 1 are widened to contain the exact interval "
                                  "of 1 unweighted respondent with the same report shares (Kish's effective sample "
                                  "size 1.0, rounded down)")


def test_rows_of_weight_zero_count_for_nothing():
    """One weighted respondent among 8 rows at ε = 1 gave [0, 0.217]: the seven rows of weight 0 counted
    toward n when the variance was 0.  Korn and Graubard's interval at a variance of 0 now takes the
    respondents with a positive weight, and the interval is one report's: [0, 1]."""
    result = weighted_estimate(np.zeros(8, dtype=np.int64), 1.0, survey_design([1.0] + [0.0] * 7), k=2)
    assert (result.ci_low[1], result.ci_high[1]) == (0.0, 1.0)
    assert korn_graubard(0.0, 0.0, 8, 7, 0.95, positive=1) == pytest.approx((0.0, 0.975))
    assert korn_graubard(0.0, 0.0, 8, 7, 0.95)[1] == pytest.approx(1 - 0.025 ** (1 / 8))  # as before: n rows


def test_a_custom_design_with_identical_reports_keeps_its_exact_region():
    """A custom 3 × 3 design with 8 identical reports gave [1, 1], [0, 0], [0, 0]: now each interval
    contains the unweighted design's (the simultaneous exact region) at Kish's n."""
    for weights in (np.ones(8), np.arange(1.0, 9.0)):
        result = weighted_design_estimate(np.zeros(8, dtype=np.int64), CUSTOM, survey_design(weights))
        n = kish(weights)
        plain = estimators.estimate_design([n, 0, 0], CUSTOM)
        for t in range(3):
            assert holds(result, t, (plain.ci_low[t], plain.ci_high[t]))
            assert result.ci_high[t] - result.ci_low[t] > 0.1
        assert result.kish_floor.all() and "answer 0, answer 1 and answer 2" in result.note


def test_a_region_of_shares_contains_the_region_of_every_rounding():
    rng = np.random.default_rng(3)
    for _ in range(20):
        shares = rng.dirichlet([1, 1, 1])
        n = int(rng.integers(5, 60))
        low, high = rounded_region_intervals(shares, n, CUSTOM.matrix, 0.95)
        down = np.floor(shares * n).astype(int)
        for extra in ((0, 1, 2), (0,), (1,), (2,), (0, 1), (0, 2), (1, 2)):
            counts = down.copy()
            counts[list(extra)] += 1
            if counts.sum() != n:
                continue
            lo, hi = region_intervals(counts, CUSTOM.matrix, 0.95)
            assert np.all(low <= lo + 1e-12) and np.all(high >= hi - 1e-12)
    whole = np.array([3, 5, 2])
    assert np.allclose(rounded_region_intervals(whole / 10, 10, CUSTOM.matrix, 0.95),
                       region_intervals(whole, CUSTOM.matrix, 0.95), atol=1e-12)


def _lognormal(rng, n: int, cv: float = 1.5) -> np.ndarray:
    return np.exp(math.sqrt(math.log(1 + cv**2)) * rng.standard_normal(n))


def _randomize(truth: np.ndarray, k: int, epsilon, rng) -> np.ndarray:
    mech = resolve(k, epsilon)
    keep = rng.random(truth.size) < mech.p
    return np.where(keep, truth, (truth + rng.integers(1, k, truth.size)) % k).astype(np.int64)


@pytest.mark.parametrize("epsilon", [4.0, 2.0])
def test_lognormal_weights_never_give_a_point_and_hold_the_exact_interval(epsilon):
    """k-ary randomized response (k = 3), lognormal weights of CV 1.5, n = 200, everyone holding option 1
    (π₀ = 0 and π₁ = 1): at ε = 4 about 11 % of the intervals of option 0 were [0, 0] (and of option 1
    [1, 1]); now none, and each contains the exact unweighted interval at Kish's n."""
    rng = np.random.default_rng(36)
    for _ in range(150):
        w = _lognormal(rng, 200)
        reports = _randomize(np.ones(200, dtype=np.int64), 3, epsilon, rng)
        result = weighted_estimate(reports, epsilon, survey_design(w), k=3)
        n = kish(w)
        for j in range(3):
            assert result.ci_low[j] < result.ci_high[j]
            assert holds(result, j, unweighted(result.report_share[j], n, 3, epsilon)), j


def test_forced_response_with_lognormal_weights_never_gives_a_point():
    """Forced response (p = 0.6, forced shares 0.2, 0.1, 0.1), lognormal weights of CV 1.5, n = 200, everyone
    holding answer 1: no interval is a point, and each holds the exact interval of its report share at Kish's
    n (report t's probability ``f_t + p π_t``; support/kish.py, from the weights)."""
    from support.kish import exact_interval

    rng = np.random.default_rng(12)
    for _ in range(100):
        w = _lognormal(rng, 200)
        reports = np.minimum((rng.random(200)[:, None] > np.cumsum(FORCED.matrix[:, 1])).sum(axis=1), 2)
        result = weighted_design_estimate(reports, FORCED, survey_design(w))
        for t, share in enumerate([0.2, 0.1, 0.1]):
            assert result.ci_low[t] < result.ci_high[t]
            assert holds(result, t, exact_interval(result.report_share[t], kish(w), 0.6 + share, share))


def test_forced_response_and_a_binary_design_hold_the_unweighted_intervals():
    """With equal weights Kish's n is n and n · share is whole: the weighted interval contains the
    unweighted design's own (``estimate_design``) at every count, including the ends."""
    warner = designs.warner(0.75, ["yes", "no"])
    respondent_side = designs.crosswise_respondent(0.25, "Born in Jan-Mar?", [0.23, 0.27])
    rng = np.random.default_rng(5)
    for design in (FORCED, warner, respondent_side):
        for _ in range(30):
            reports = rng.integers(0, design.k_reports, 12)
            reports[: rng.integers(0, 13)] = 0  # often all alike
            result = weighted_design_estimate(reports, design, survey_design(np.full(12, 2.5)))
            plain = estimators.estimate_design(np.bincount(reports, minlength=design.k_reports), design)
            for t in range(design.k):
                assert holds(result, t, (plain.ci_low[t], plain.ci_high[t])), (design.name, reports)


def test_the_respondent_side_crosswise_interval_holds_over_the_stated_range():
    """Weighted, as unweighted (issue 36, item 5): the interval of the respondent-side crosswise model
    holds the weighted intervals of its device-side twins at both ends of the fact's stated prevalence
    range and at the stated prevalence; the estimate is the stated prevalence's."""
    design = designs.crosswise_respondent(0.25, "Born in Jan-Mar?", [0.23, 0.27])
    rng = np.random.default_rng(2)
    w = _lognormal(rng, 3000, 0.5)
    reports = (rng.random(3000) < 0.62).astype(np.int64)
    sample = survey_design(w)
    result = weighted_design_estimate(reports, design, sample)
    for prevalence in (0.23, 0.25, 0.27):
        twin = weighted_design_estimate(reports, designs.crosswise(prevalence), sample)
        assert all(holds(result, t, (twin.ci_low[t], twin.ci_high[t])) for t in range(2)), prevalence
        if prevalence == 0.25:
            assert result.estimate == pytest.approx(twin.estimate, abs=1e-12)
    assert result.ci_high[0] - result.ci_low[0] > twin.ci_high[0] - twin.ci_low[0] + 0.01


def test_raked_intervals_hold_the_exact_interval_at_the_raked_weights_kish_n():
    """Raked weights: each interval contains the exact unweighted one at the raked weights' Kish n, over
    the question's domain (the rows that answered); identical reports never give a point."""
    rng = np.random.default_rng(9)
    for _ in range(60):
        n = 40
        age = rng.choice(3, n, p=[0.7, 0.2, 0.1])
        age[:3] = [0, 1, 2]  # every category has a respondent
        raked = np.asarray(rake(np.ones(n), {"age": age}, {"age": np.array([0.2, 0.3, 0.5])}).weights)
        answered = rng.random(n) < 0.8
        reports = np.where(rng.random(n) < 0.5, 0, rng.integers(0, 2, n)).astype(np.int64)
        result = raked_estimate(reports, 4.0, raked, [age], k=2, domain=answered)
        m = kish(raked * answered)
        for j in range(2):
            assert result.ci_low[j] < result.ci_high[j]
            assert holds(result, j, unweighted(result.report_share[j], m, 2, 4.0))
        designed = raked_design_estimate(np.zeros(n, dtype=np.int64), CUSTOM, raked, [age], domain=answered)
        plain = estimators.estimate_design([m, 0, 0], CUSTOM)
        assert all(holds(designed, t, (plain.ci_low[t], plain.ci_high[t])) for t in range(3))


def test_a_direct_crosstab_cell_holds_the_exact_interval():
    w = np.array([1e6] + [1.0] * 9)
    a = np.array([0] * 10)
    b = np.array([1] * 10)
    ct = weighted_crosstab(a, b, None, None, survey_design(w), k_row=2, k_col=2)
    one = unweighted(1.0, 1, 2, None)  # one respondent asked directly: [0.05, 1]
    for low, high in ((ct.joint_ci_low, ct.joint_ci_high), (ct.conditional_ci_low, ct.conditional_ci_high)):
        assert low[0, 1] <= one[0] and high[0, 1] >= one[1] and low[0, 0] == 0.0 and high[0, 0] >= 1 - one[0]
    assert "joint cell intervals widened" in ct.note and "conditional intervals given row option 0" in ct.note


def test_no_note_where_korn_graubard_is_wider():
    """Equal weights, many respondents, a share far from the ends: Korn and Graubard's interval (Clopper and
    Pearson's at n) already holds the exact one, and there is no note."""
    rng = np.random.default_rng(1)
    reports = rng.integers(0, 2, 2000)
    result = weighted_estimate(reports, None, survey_design(np.ones(2000)), k=2)
    assert not result.kish_floor.any() and result.note is None


SURVEY = {"slug": "edges", "title": "Edges", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]}


def test_the_command_line_says_which_intervals_the_rule_set(tmp_path):
    from deniable.server.cli import cli

    (tmp_path / "survey.json").write_text(json.dumps(SURVEY))
    (tmp_path / "r.csv").write_text("drugs,w\n" + "Yes,1000000\n" + "Yes,1\n" * 7)
    result = CliRunner().invoke(cli, ["estimate", str(tmp_path / "survey.json"), str(tmp_path / "r.csv"),
                                      "--weights", "w", "--format", "json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)["questions"][0]
    assert [(o["ci_low"], o["ci_high"], o["kish_floor"]) for o in record["options"]] == [(0.0, 1.0, True)] * 2
    assert record["note"].startswith("the intervals of 'Yes' and 'No' are widened to contain the exact interval of "
                                     "1 unweighted respondent")
    text = CliRunner().invoke(cli, ["estimate", str(tmp_path / "survey.json"), str(tmp_path / "r.csv"),
                                    "--weights", "w"])
    assert text.exit_code == 0 and "  note: the intervals of 'Yes' and 'No' are widened" in text.output
