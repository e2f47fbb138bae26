"""Raked estimates of every question type weighting estimates — a single choice randomized by a
randomized-response design, a check-all question's ticks, a list experiment's prevalence — against
R's survey package, run for real (``rake()`` of ``svydesign(ids = ~1, weights = ~w)`` to the margins).

Each estimate is linear in per-respondent scores, so R's ``svymean`` of the score variable on the
raked design gives the same estimate and standard error (the calibration variance):

* a designed single choice: answer t's score is row t of the design's inverse ``M⁻¹`` indexed by
  the report;
* a check-all tick: ``([ticked] − q)/(p − q)`` with the tick's binary mechanism (p = 1, q = 0 asked
  directly);
* a list experiment: the difference of the arms' raked means of the count's unbiased score, R's
  ``svycontrast(svyby(~score, ~arm, rake(…), svymean, covmat = TRUE), c(-1, 1))`` — the covariance
  of the two domain means included.

A respondent who skipped a question is NA in R (``na.rm = TRUE``: a calibrated design keeps the row
with weight 0, a domain).  Intervals: Korn and Graubard's (``svyciprop(method = "beta")``) of the
report indicator mapped through the design where one report is affine in one share, else the union
of the t interval on n − 1 degrees of freedom (``confint(…, df = degf(design))``) and
``svyciprop(method = "beta")``'s recipe for the debiased score itself, clipped to [0, 1].
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta as beta_dist
from deniable.server.survey import sampling
from deniable.server.survey.dataset import Dataset
from deniable.server.survey.definition import parse_definition
from support.kish import exact_interval, join, kish_n, report_interval
from support.r_survey import RAKE_TO_MARGINS, _run, margins_csv, rake_design_svymean, rake_svymean, write_csv

SURVEY = {"slug": "typed", "title": "Typed", "questions": [
    {"id": "age", "text": "Age?", "options": ["young", "middle", "old"]},
    {"id": "sex", "text": "Sex?", "options": ["f", "m"]},
    {"id": "warner", "text": "Stolen?", "options": ["Yes", "No"], "design": {"name": "warner", "p": 0.75}},
    {"id": "forced", "text": "Cheated?", "options": ["never", "once", "often"], "required": False,
     "design": {"name": "forced", "p": 0.6, "forced": [0.2, 0.1, 0.1]}},
    {"id": "custom", "text": "Fought?", "options": ["a", "b", "c"],
     "design": {"name": "custom", "matrix": [[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]}},
    {"id": "sites", "text": "Which sites?", "type": "multi", "options": ["A", "B", "C"], "epsilon": 2.0,
     "required": False},
    {"id": "owns", "text": "Which do you own?", "type": "multi", "options": ["Car", "Bike"]},
    {"id": "shop", "text": "How many?", "type": "list", "items": ["I", "II", "III"], "sensitive": "S",
     "epsilon": 1.0, "required": False},
    {"id": "plain", "text": "How many?", "type": "list", "items": ["I", "II"], "sensitive": "T"}]}
MARGINS = {"age": {"young": 0.3, "middle": 0.45, "old": 0.25}, "sex": {"f": 0.52, "m": 0.48}}


def typed_sample(seed: int = 12, n: int = 400):
    """Codes per question: an unbalanced sample of age and sex, reports that depend on them, some
    skipping the questions that are not required."""
    rng = np.random.default_rng(seed)
    survey = parse_definition(SURVEY)
    age = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    sex = rng.choice(2, n, p=[0.7, 0.3])
    codes = {"age": age, "sex": sex}
    for q in survey.questions[2:]:
        cells = q.qtype.n_cells(q)
        codes[q.id] = np.minimum(rng.integers(0, cells, n) + (age * (rng.random(n) < 0.3)).astype(int), cells - 1)
    plain = survey.question("plain")
    codes["plain"] = np.where(codes["plain"] % plain.k == plain.k - 1, codes["plain"] - 1, codes["plain"])
    for qid in ("forced", "sites", "shop"):  # some skip these: domains
        codes[qid][rng.choice(n, 25, replace=False)] = -1
    return survey, codes


def _r_margins(survey, n: int) -> dict:
    return {qid: [MARGINS[qid][o] * n for o in survey.question(qid).options] for qid in MARGINS}


def _design_scores(q, codes):
    """Per answer t: the report indicator (per report r) and the debiased score ``M⁺[t, R]``, NA when skipped."""
    matrix = q.qtype.mechanism(q).design.matrix
    pinv = np.linalg.pinv(matrix)
    answered = codes >= 0
    filled = np.where(answered, codes, 0)
    scores = {t: np.where(answered, pinv[t, filled], np.nan) for t in range(matrix.shape[1])}
    reports = {r: np.where(answered, (codes == r).astype(float), np.nan) for r in range(matrix.shape[0])}
    return scores, reports


def _tick_scores(q, codes):
    bit = q.mechanism.bit
    out = {}
    for j in range(q.k):
        tick = np.where(codes >= 0, (codes >> j) & 1, np.nan)
        out[j] = tick, (tick - bit.q) / (bit.p - bit.q), bit
    return out


@pytest.mark.slow  # R itself
def test_designed_questions_raked_equal_r(tmp_path):
    """A binary design (Warner), forced response with three answers and a custom 3 × 3 design: each
    answer's raked estimate and standard error are R's svymean of the debiased score on the raked
    design; Warner's and forced response's intervals svyciprop's of a report mapped through its affine
    map, the custom design's the union of the t interval on n − 1 degrees of freedom and the beta
    recipe at the score's effective sample size, clipped — each joined with the exact interval of the
    same report shares at the raked weights' Kish effective sample size (support/kish.py; the custom
    design's exact region makes its interval R's or wider)."""
    survey, codes = typed_sample()
    n = len(codes["age"])
    raked = sampling.raked_estimates(Dataset(survey, dict(codes)), sampling.parse_margins(MARGINS, survey))
    ours = {q.id: (size, result) for q, size, result in raked.questions}
    columns, names = {"w": np.ones(n), "age": codes["age"], "sex": codes["sex"]}, []
    for qid in ("warner", "forced", "custom"):
        scores, reports = _design_scores(survey.question(qid), codes[qid])
        for t, z in scores.items():
            columns[f"z_{qid}_{t}"] = z
            names.append(f"z_{qid}_{t}")
        for r, y in reports.items():
            columns[f"r_{qid}_{r}"] = y
            names.append(f"r_{qid}_{r}")
    values, r_weights = rake_svymean(tmp_path, columns, _r_margins(survey, n), names)
    r = dict(zip(names, values))
    n_kish = {qid: kish_n(r_weights * (codes[qid] >= 0)) for qid in ("warner", "forced", "custom")}
    for qid in ("warner", "forced", "custom"):
        size, result = ours[qid]
        assert size == int((codes[qid] >= 0).sum())
        for t in range(3 if qid != "warner" else 2):
            mean, se, low, high = r[f"z_{qid}_{t}"]
            assert [result.estimate[t], result.std_error[t]] == pytest.approx([mean, se], abs=1e-8), (qid, t)
            if qid == "custom":  # no report affine in one share: R's t interval united with svyciprop's beta
                assert "the union of the t interval and Korn-Graubard" in result.method  # recipe at z's n_eff
                n_eff = mean * (1 - mean) / se**2  # on n − 1 degrees of freedom: no df adjustment
                kg = beta_dist.ppf(0.025, n_eff * mean, n_eff * (1 - mean) + 1), \
                    beta_dist.ppf(0.975, n_eff * mean + 1, n_eff * (1 - mean))
                union = np.clip([min(low, kg[0]), max(high, kg[1])], 0, 1)
                assert result.ci_low[t] <= union[0] + 1e-8 and result.ci_high[t] >= union[1] - 1e-8
                if not result.kish_floor[t]:
                    assert [result.ci_low[t], result.ci_high[t]] == pytest.approx(union, abs=1e-8)
    # Warner: report 0 rises with answer 0 (0.75 against 0.25)
    share, _, low, high = r["r_warner_0"]
    first = join((low - 0.25) / 0.5, (high - 0.25) / 0.5, report_interval(share, n_kish["warner"], 0.75, 0.25))
    warner = ours["warner"][1]
    assert [warner.ci_low[0], warner.ci_high[0]] == pytest.approx(first, abs=1e-6)
    assert [warner.ci_low[1], warner.ci_high[1]] == pytest.approx([1 - first[1], 1 - first[0]], abs=1e-6)
    # forced response: λ_t = f_t + p π_t
    forced = ours["forced"][1]
    for t, share in enumerate([0.2, 0.1, 0.1]):
        reported, _, low, high = r[f"r_forced_{t}"]
        floor = exact_interval(reported, n_kish["forced"], 0.6 + share, share)
        assert [forced.ci_low[t], forced.ci_high[t]] == pytest.approx(
            list(join((low - share) / 0.6, (high - share) / 0.6, floor)), abs=1e-6), t
    assert "raking: calibration variance" in forced.method and forced.degrees_of_freedom == n - 1


@pytest.mark.slow  # R itself
def test_check_all_ticks_raked_equal_r(tmp_path):
    """Each tick of a check-all question (randomized at ε/K, and asked directly: p = 1) is a two-option
    question: R's svymean of its debiased indicator and svyciprop of the tick, mapped through p and q and
    joined with the exact interval of the same tick share at the raked weights' Kish effective sample size."""
    survey, codes = typed_sample(13)
    n = len(codes["age"])
    raked = sampling.raked_estimates(Dataset(survey, dict(codes)), sampling.parse_margins(MARGINS, survey))
    ours = {q.id: (size, result) for q, size, result in raked.questions}
    columns, names = {"w": np.ones(n), "age": codes["age"], "sex": codes["sex"]}, []
    ticks = {qid: _tick_scores(survey.question(qid), codes[qid]) for qid in ("sites", "owns")}
    for qid, per in ticks.items():
        for j, (tick, z, _) in per.items():
            columns[f"r_{qid}_{j}"], columns[f"z_{qid}_{j}"] = tick, z
            names += [f"z_{qid}_{j}", f"r_{qid}_{j}"]
    values, r_weights = rake_svymean(tmp_path, columns, _r_margins(survey, n), names)
    r = dict(zip(names, values))
    for qid, per in ticks.items():
        size, result = ours[qid]
        assert size == int((codes[qid] >= 0).sum()) and result.k == len(per)
        for j, (_, _, bit) in per.items():
            mean, se, _, _ = r[f"z_{qid}_{j}"]
            share, _, low, high = r[f"r_{qid}_{j}"]
            assert [result.estimate[j], result.std_error[j], result.report_share[j]] == \
                pytest.approx([mean, se, share], abs=1e-8), (qid, j)
            floor = exact_interval(share, kish_n(r_weights * (codes[qid] >= 0)), bit.p, bit.q)
            assert [result.ci_low[j], result.ci_high[j]] == pytest.approx(
                list(join((low - bit.q) / (bit.p - bit.q), (high - bit.q) / (bit.p - bit.q), floor)), abs=1e-7)
    unraked = raked.unweighted["owns"]  # the same estimator with equal weights, beside
    assert unraked.estimate[0] == pytest.approx(float(np.mean((codes["owns"] & 1) == 1)), abs=1e-12)


# RAKE_SCRIPT's raking (support/r_survey.py), then for each score column v with its arm column arm_v
# (0 control, 1 treatment, -1 not answered): each arm's mean is a domain mean, the ratio of the totals
# of v·[arm = g] and [arm = g]; svyratio(~n0 + n1, ~d0 + d1, des, covmat = TRUE) gives both with their
# covariance (R's svyby(covmat = TRUE) stops on a calibrated design whose rows a subset keeps:
# "number of items to replace is not a multiple of replacement length"), and svycontrast the
# treatment − control difference, its SE and the t interval on degf(des); then each arm's mean and SE.
RAKE_CONTRAST_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
m <- read.csv(args[2], stringsAsFactors = FALSE)
des <- if (args[3] == "") svydesign(ids = ~1, weights = ~w, data = d) else
  svydesign(ids = as.formula(paste0("~", args[3])), strata = as.formula(paste0("~", args[4])), weights = ~w,
            nest = TRUE, data = d)
""" + RAKE_TO_MARGINS + r"""out <- c()
for (v in args[-(1:4)]) {
  arm <- d[[paste0("arm_", v)]]
  des <- update(des, n0 = ifelse(arm == 0, d[[v]], 0), n1 = ifelse(arm == 1, d[[v]], 0),
                d0 = as.numeric(arm == 0), d1 = as.numeric(arm == 1))
  r <- svyratio(~n0 + n1, ~d0 + d1, des, covmat = TRUE)
  ctr <- svycontrast(r, c("n1/d1" = 1, "n0/d0" = -1))
  half <- qt(0.975, degf(des)) * SE(ctr)[[1]]
  v2 <- vcov(r)
  out <- c(out, coef(ctr)[[1]], SE(ctr)[[1]], coef(ctr)[[1]] - half, coef(ctr)[[1]] + half,
           coef(r)[["n0/d0"]], coef(r)[["n1/d1"]], sqrt(v2["n0/d0", "n0/d0"]), sqrt(v2["n1/d1", "n1/d1"]))
}
cat(sprintf("%.15g", out), sep = "\n")
"""


def rake_contrast(tmp_path, columns: dict, margins: dict, scores: list[str], *, cluster: str = "",
                  strata: str = "") -> dict:
    """R's treatment − control contrast of each score column on the raked design: ``{score: (difference,
    SE, ci_low, ci_high, control mean, treatment mean, control SE, treatment SE)}``."""
    path = write_csv(tmp_path / "contrast.csv", columns)
    margins_path = margins_csv(tmp_path / "contrast-margins.csv", margins, keep_zero=True)
    values = np.array(_run(RAKE_CONTRAST_SCRIPT, tmp_path, str(path), str(margins_path), cluster, strata, *scores))
    return dict(zip(scores, values.reshape(len(scores), 8)))


def _list_columns(survey, codes, qids):
    from deniable.client.listexp import list_mechanism

    columns = {}
    for qid in qids:
        q = survey.question(qid)
        rr = list_mechanism(len(q.options), q.epsilon).rr
        k = q.k
        answered = codes[qid] >= 0
        count = codes[qid] % k
        columns[f"score_{qid}"] = np.where(answered, (count - rr.q * k * (k - 1) / 2) / (rr.p - rr.q), 0.0)
        columns[f"arm_score_{qid}"] = np.where(answered, codes[qid] // k, -1)
    return columns


@pytest.mark.slow  # R itself
def test_list_experiment_raked_equals_r_svycontrast(tmp_path):
    """The prevalence is the difference of the arms' raked means of the count's unbiased score, its
    calibration variance with the covariance of the two domain means: R's svycontrast of svyby(covmat =
    TRUE) on the raked design, the t interval on n − 1 degrees of freedom; randomized counts and a
    plain list (p = 1)."""
    survey, codes = typed_sample(14)
    n = len(codes["age"])
    raked = sampling.raked_estimates(Dataset(survey, dict(codes)), sampling.parse_margins(MARGINS, survey))
    ours = {q.id: (size, result) for q, size, result in raked.questions}
    columns = {"w": np.ones(n), "age": codes["age"], "sex": codes["sex"],
               **_list_columns(survey, codes, ["shop", "plain"])}
    r = rake_contrast(tmp_path, columns, _r_margins(survey, n), ["score_shop", "score_plain"])
    for qid in ("shop", "plain"):
        diff, se, low, high, mean0, mean1, se0, se1 = r[f"score_{qid}"]
        size, result = ours[qid]
        k = survey.question(qid).k
        assert size == result.n == int((codes[qid] >= 0).sum())
        assert result.n_groups == (int(((codes[qid] >= 0) & (codes[qid] // k == 0)).sum()),
                                   int((codes[qid] // k == 1).sum()))
        assert [result.estimate, result.std_error, result.ci_low, result.ci_high] == \
            pytest.approx([diff, se, low, high], abs=1e-8), qid
        assert [*result.means, *result.mean_std_errors] == pytest.approx([mean0, mean1, se0, se1], abs=1e-8), qid
        assert result.degrees_of_freedom == n - 1
        # the covariance of the arms' means matters: the difference's SE is not √(se0² + se1²)
        assert abs(result.std_error - np.hypot(se0, se1)) > 1e-6 * result.std_error
    record = raked.question_dict(survey.question("shop"), *ours["shop"])
    assert record["raked"] is True and record["prevalence"]["estimate"] == pytest.approx(ours["shop"][1].estimate)
    assert record["unweighted"]["estimate"] == pytest.approx(raked.unweighted["shop"].estimate, abs=0)


@pytest.mark.slow  # R itself
def test_raking_from_sampling_weights_keeps_the_strata_and_clusters(tmp_path):
    """Raking from a stratified, clustered sample's weights (``--rake`` with ``--weights``): a designed
    question's and a list experiment's raked estimates and standard errors are R's on ``rake()`` of the
    weighted ``svydesign(ids = ~c, strata = ~s, weights = ~w)``."""
    from deniable.estimators.weights import survey_design

    survey, codes = typed_sample(15, n=300)
    n = len(codes["age"])
    rng = np.random.default_rng(15)
    strata = rng.integers(0, 3, n)
    clusters = strata * 10 + rng.integers(0, 5, n)
    w = rng.gamma(2.0, 1.0, n)
    base = survey_design(w, strata=strata, clusters=clusters)
    raked = sampling.raked_estimates(Dataset(survey, dict(codes)), sampling.parse_margins(MARGINS, survey),
                                     base=base, base_column="w")
    ours = {q.id: result for q, _, result in raked.questions}
    margins = {qid: [MARGINS[qid][o] * w.sum() for o in survey.question(qid).options] for qid in MARGINS}
    columns = {"w": w, "s": strata, "c": clusters, "age": codes["age"], "sex": codes["sex"]}
    scores, _ = _design_scores(survey.question("forced"), codes["forced"])
    names = []
    for t, z in scores.items():
        columns[f"z{t}"] = z
        names.append(f"z{t}")
    values, _ = rake_design_svymean(tmp_path, columns, margins, names, strata="s", cluster="c")
    assert ours["forced"].estimate == pytest.approx(values[:, 0], abs=1e-8)
    assert ours["forced"].std_error == pytest.approx(values[:, 1], abs=1e-8)
    contrast = rake_contrast(tmp_path, {**columns, **_list_columns(survey, codes, ["shop"])}, margins,
                             ["score_shop"], cluster="c", strata="s")["score_shop"]
    shop = ours["shop"]
    assert [shop.estimate, shop.std_error, shop.ci_low, shop.ci_high] == pytest.approx(contrast[:4], abs=1e-8)
    assert shop.degrees_of_freedom == base.degrees_of_freedom


def test_every_weighted_type_is_raked_and_the_rest_is_skipped_by_name():
    """Raking estimates each type weighting estimates; a check-all question randomized by a design on each
    tick, and the types without a weighted estimator, are named in ``skipped``, never a crash."""
    survey, codes = typed_sample(16, n=120)
    raked = sampling.raked_estimates(Dataset(survey, dict(codes)), sampling.parse_margins(MARGINS, survey))
    assert [q.id for q, _, _ in raked.questions] == [q.id for q in survey.questions]
    assert raked.skipped == []
    document = raked.to_dict()
    assert {q["id"] for q in document["questions"]} == {q.id for q in survey.questions}
    csv_rows = raked.to_csv().splitlines()
    assert sum(row.startswith("shop,") for row in csv_rows) == 3  # prevalence, control, treatment
    assert sum(row.startswith("sites,") for row in csv_rows) == 3


@pytest.mark.slow  # R itself
def test_raked_subgroups_of_a_list_experiment_and_a_designed_question_equal_r(tmp_path):
    """Within each group of a question asked directly (``--rake … --by``): a list experiment's
    prevalence is the contrast of the arms' raked means among the group's respondents (the others, and
    those who skipped, in a group of their own: weight 0 in the arms' domains), a designed question's
    answers R's svymean of the debiased score with NA outside the group."""
    survey, codes = typed_sample(17)
    n = len(codes["age"])
    dataset = Dataset(survey, dict(codes))
    margins = sampling.parse_margins(MARGINS, survey)
    by = survey.question("sex")
    shop = sampling.raked_subgroups(dataset, margins, survey.question("shop"), by).groups
    forced = sampling.raked_subgroups(dataset, margins, survey.question("forced"), by).groups
    base = {"w": np.ones(n), "age": codes["age"], "sex": codes["sex"]}
    columns, names = dict(base), []
    k = survey.question("shop").k
    for g in (0, 1):
        inside = codes["sex"] == g
        list_codes = np.where(inside, codes["shop"], -1)
        for key, value in _list_columns(survey, {"shop": list_codes}, ["shop"]).items():
            columns[key.replace("shop", f"shop{g}")] = value
        names.append(f"score_shop{g}")
    r = rake_contrast(tmp_path, columns, _r_margins(survey, n), names)
    for g in (0, 1):
        label, not_answered, size, result = shop[g]
        assert label == by.options[g] and not not_answered
        assert size == int(((codes["sex"] == g) & (codes["shop"] >= 0)).sum())
        diff, se, low, high, *_ = r[f"score_shop{g}"]
        assert [result.estimate, result.std_error, result.ci_low, result.ci_high] == \
            pytest.approx([diff, se, low, high], abs=1e-8), g
        assert result.n_groups[1] == int(((codes["sex"] == g) & (codes["shop"] // k == 1)).sum())
    assert shop[2][2] == 0 and shop[2][3] is None  # nobody skipped sex: an empty group
    columns, names = dict(base), []
    scores, _ = _design_scores(survey.question("forced"), codes["forced"])
    for g in (0, 1):
        for t, z in scores.items():
            columns[f"z{g}_{t}"] = np.where(codes["sex"] == g, z, np.nan)
            names.append(f"z{g}_{t}")
    values, _ = rake_svymean(tmp_path, columns, _r_margins(survey, n), names)
    got = dict(zip(names, values))
    for g in (0, 1):
        result = forced[g][3]
        assert result.estimate == pytest.approx([got[f"z{g}_{t}"][0] for t in range(3)], abs=1e-8)
        assert result.std_error == pytest.approx([got[f"z{g}_{t}"][1] for t in range(3)], abs=1e-8)


@pytest.mark.slow  # R itself
def test_raked_crosstab_of_designed_questions_equals_r(tmp_path):
    """The joint cells of two designed questions under raked weights: each cell's score is the product of
    the two designs' inverses indexed by the reports, ``M₁⁻¹[a, R₁] · M₂⁻¹[b, R₂]`` (the Kronecker
    inverse), so R's svymean of it on the raked design gives the estimate and standard error."""
    survey, codes = typed_sample(18)
    n = len(codes["age"])
    ct = sampling.raked_crosstab_of(Dataset(survey, dict(codes)), sampling.parse_margins(MARGINS, survey),
                                    survey.question("warner"), survey.question("forced")).result
    first, _ = _design_scores(survey.question("warner"), codes["warner"])
    second, _ = _design_scores(survey.question("forced"), codes["forced"])
    columns, names = {"w": np.ones(n), "age": codes["age"], "sex": codes["sex"]}, []
    for a in range(2):
        for b in range(3):
            columns[f"z{a}{b}"] = first[a] * second[b]  # NA where forced was skipped
            names.append(f"z{a}{b}")
    values, _ = rake_svymean(tmp_path, columns, _r_margins(survey, n), names)
    assert ct.n == int((codes["forced"] >= 0).sum())
    assert ct.joint_estimate.ravel() == pytest.approx(values[:, 0], abs=1e-8)
    assert ct.joint_std_error.ravel() == pytest.approx(values[:, 1], abs=1e-8)


def test_a_design_that_is_not_ldp_never_weights():
    """A single choice randomized by a design with no ε (a zero in its matrix: not ε-LDP) is not asked
    directly: its answers are randomized, so it may not be a raking margin — and it is raked itself."""
    survey = parse_definition({**SURVEY, "questions": [*SURVEY["questions"][:2], {
        "id": "zero", "text": "Zero?", "options": ["Yes", "No"],
        "design": {"name": "custom", "matrix": [[0.6, 0], [0.4, 1]]}}]})
    zero = survey.question("zero")
    assert zero.epsilon is None and not zero.protected  # what made it look asked directly
    assert not sampling.rakeable(zero)
    with pytest.raises(sampling.SamplingDesignError) as exc:
        sampling.parse_margins({"zero": {"Yes": 0.5, "No": 0.5}}, survey)
    assert exc.value.field == "margins.zero" and "asked directly" in str(exc.value)
    rng = np.random.default_rng(2)
    codes = {"age": rng.integers(0, 3, 90), "sex": rng.integers(0, 2, 90), "zero": rng.integers(0, 2, 90)}
    raked = sampling.raked_estimates(Dataset(survey, codes), sampling.parse_margins(MARGINS, survey))
    assert [q.id for q, _, _ in raked.questions] == ["age", "sex", "zero"]
    assert "raking: calibration variance" in raked.questions[2][2].method


# RAKE_CONTRAST_SCRIPT's raked design (with strata and clusters), then svyratio(~NUM, ~DEN, des) of
# each NUM:DEN pair: the ratio and its SE, one line per number.  A row outside a ratio's domain has
# NUM = DEN = 0 (no NA: a calibrated design's subset is not needed), so a domain mean is a ratio.
RAKE_RATIO_SCRIPT = RAKE_CONTRAST_SCRIPT[:RAKE_CONTRAST_SCRIPT.index("out <- c()")] + r"""
out <- c()
for (pair in args[-(1:4)]) {
  parts <- strsplit(pair, ":")[[1]]
  r <- svyratio(as.formula(paste0("~", parts[1])), as.formula(paste0("~", parts[2])), des)
  out <- c(out, coef(r)[[1]], SE(r)[[1]])
}
cat(sprintf("%.15g", out), sep = "\n")
"""


def rake_design_svyratio(tmp_path, columns: dict, margins: dict, pairs: list, *, cluster: str, strata: str):
    """R's ``svyratio`` of each (numerator, denominator) pair on ``rake()`` of the weighted, stratified,
    clustered design: rows (ratio, SE)."""
    path = write_csv(tmp_path / "ratio.csv", columns)
    margins_path = margins_csv(tmp_path / "ratio-margins.csv", margins, keep_zero=True)
    values = _run(RAKE_RATIO_SCRIPT, tmp_path, str(path), str(margins_path), cluster, strata,
                  *(f"{a}:{b}" for a, b in pairs))
    return np.array(values).reshape(len(pairs), 2)


def _stratified_base(n: int, seed: int):
    from deniable.estimators.weights import survey_design

    rng = np.random.default_rng(seed)
    strata = rng.integers(0, 3, n)
    clusters = strata * 10 + rng.integers(0, 5, n)
    w = rng.gamma(2.0, 1.0, n)
    return strata, clusters, w, survey_design(w, strata=strata, clusters=clusters)


@pytest.mark.slow  # R itself
def test_raked_crosstab_from_sampling_weights_keeps_the_strata_and_clusters(tmp_path):
    """``--rake`` with ``--weights`` and ``--crosstab``: raking starts from a stratified, clustered
    sample's weights, and each joint cell and conditional share of a Warner row and a forced-response
    column (some skipped it) is R's on ``rake(svydesign(ids = ~c, strata = ~s, weights = ~w), …)``:
    the joint cell ``svyratio(~z_ab, ~both)`` (the debiased score ``M₁⁻¹[a, R₁] · M₂⁻¹[b, R₂]`` among
    those who answered both: a domain mean), the conditional share ``svyratio(~z_ab, ~z_a)``."""
    survey, codes = typed_sample(19, n=300)
    n = len(codes["age"])
    strata, clusters, w, base = _stratified_base(n, 19)
    ct = sampling.raked_crosstab_of(Dataset(survey, dict(codes)), sampling.parse_margins(MARGINS, survey),
                                    survey.question("warner"), survey.question("forced"), base=base, base_column="w")
    unbased = sampling.raked_crosstab_of(Dataset(survey, dict(codes)), sampling.parse_margins(MARGINS, survey),
                                         survey.question("warner"), survey.question("forced")).result
    first, _ = _design_scores(survey.question("warner"), codes["warner"])
    second, _ = _design_scores(survey.question("forced"), codes["forced"])
    both = codes["forced"] >= 0
    columns = {"w": w, "s": strata, "c": clusters, "age": codes["age"], "sex": codes["sex"],
               "both": both.astype(float)}
    pairs = []
    for a in range(2):
        columns[f"za{a}"] = np.where(both, first[a], 0.0)
        for b in range(3):
            columns[f"z{a}{b}"] = np.where(both, first[a] * np.nan_to_num(second[b]), 0.0)
            pairs.append((f"z{a}{b}", "both"))
    pairs += [(f"z{a}{b}", f"za{a}") for a in range(2) for b in range(3)]
    margins = {qid: [MARGINS[qid][o] * w.sum() for o in survey.question(qid).options] for qid in MARGINS}
    r = rake_design_svyratio(tmp_path, columns, margins, pairs, cluster="c", strata="s")
    result = ct.result
    assert ct.base == "w" and result.n == int(both.sum()) and result.degrees_of_freedom == base.degrees_of_freedom
    assert result.joint_estimate.ravel() == pytest.approx(r[:6, 0], abs=1e-8)
    assert result.joint_std_error.ravel() == pytest.approx(r[:6, 1], abs=1e-8)
    assert result.conditional_estimate.ravel() == pytest.approx(r[6:, 0], abs=1e-8)
    assert result.conditional_std_error.ravel() == pytest.approx(r[6:, 1], abs=1e-8)
    # the strata and clusters matter: without them (raking from equal weights) the numbers differ
    assert np.max(np.abs(result.joint_std_error - unbased.joint_std_error)) > 1e-4


def test_raked_crosstab_from_sampling_weights_given_a_direct_row_is_that_groups_raked_estimate():
    """With the row asked directly, the shares given row a under raking from a sample's design are the
    column's ``--rake --weights --by`` estimates of group a (:func:`sampling.raked_subgroups` with the
    same ``base``), intervals included — for a custom design none of whose reports is affine in one
    share too (the union interval)."""
    survey, codes = typed_sample(20, n=300)
    mixed = [[0.6, 0.3, 0.1], [0.3, 0.5, 0.2], [0.1, 0.2, 0.7]]
    survey = parse_definition({**SURVEY, "questions": [
        {**q, "design": {"name": "custom", "matrix": mixed}} if q["id"] == "custom" else q
        for q in SURVEY["questions"]]})
    n = len(codes["age"])
    *_, base = _stratified_base(n, 20)
    dataset, margins = Dataset(survey, dict(codes)), sampling.parse_margins(MARGINS, survey)
    age, custom = survey.question("age"), survey.question("custom")
    ct = sampling.raked_crosstab_of(dataset, margins, age, custom, base=base).result
    groups = sampling.raked_subgroups(dataset, margins, custom, age, base=base).groups
    for a in range(3):
        group = groups[a][3]
        for name in ("estimate", "std_error", "ci_low", "ci_high"):
            assert getattr(ct, f"conditional_{name}")[a] == pytest.approx(np.asarray(getattr(group, name)),
                                                                            abs=1e-10), (a, name)
    assert "the union of the t interval and Korn-Graubard" in ct.method


def test_raked_crosstab_from_a_design_needs_one_row_per_respondent():
    from deniable.estimators.weights import SamplingDesignError, raked_crosstab, survey_design

    base = survey_design(np.ones(4), clusters=[0, 0, 1, 1])
    with pytest.raises(SamplingDesignError) as exc:
        raked_crosstab(np.array([0, 1, 0, 1]), np.array([1, 0, 0, 1]), None, None, np.ones(4), k_row=2, k_col=2,
                       counts=[1, 2, 1, 1], base=base)
    assert exc.value.field == "weights" and "one row per respondent" in str(exc.value)
