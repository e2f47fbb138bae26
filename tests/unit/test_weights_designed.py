"""Weighted (design-based) estimates of questions randomized by a randomized-response design, beyond
the marginal shares: cross-tabs (``M_row⁻¹ ⊗ M_col⁻¹`` on the weighted shares of report pairs), the
regression of a designed outcome (the design's matrix in the pseudo-likelihood, sandwich standard
errors), check-all questions with a binary design on each tick, and ``--simultaneous`` cross-tabs.

The references are independent computations: R's survey package run for real on the debiased
per-respondent scores (``svydesign(ids = ~c, strata = ~s, weights = ~w, nest = TRUE)``; a linear
estimator's estimate and linearized standard error are ``svymean`` of its scores, a conditional
share's ``svyratio``; tests/support/r_survey.py), the Kronecker product of the two matrices
inverted by numpy, and the weighted pseudo-likelihood's score equations and sandwich written out
here with scipy and plain loops.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import beta as beta_dist
from scipy.stats import t as student_t

from deniable import estimators
from deniable.client import designs
from deniable.client.mechanism import resolve
from deniable.estimators.weights import (SamplingDesignError, survey_design, weighted_crosstab,
                                         weighted_design_estimate, weights_degrees_of_freedom)
from deniable.server.survey.definition import load_definition
from support.kish import join, kish_n, report_interval
from support.r_survey import svyglm, svymean, svyratio, write_csv

from ..cli.test_weights_cli import _json, run
from .test_weights import _regression_sample

FORCED3 = designs.forced(0.6, [0.2, 0.1, 0.1], ["a", "b", "c"])
WARNER = designs.warner(0.75, ["Yes", "No"])
KUK = designs.kuk(0.8, 0.3, ["Yes", "No"])
LOPSIDED = designs.custom([[0.6, 0.3, 0.2], [0.2, 0.5, 0.2], [0.2, 0.2, 0.6]], ["a", "b", "c"])  # report 0 not affine
MIXED = designs.custom([[0.6, 0.3, 0.1], [0.3, 0.5, 0.2], [0.1, 0.2, 0.7]], ["a", "b", "c"])  # no report affine


def kary(k: int, epsilon) -> np.ndarray:
    """k-ary randomized response's matrix, built from its realized p and q."""
    m = resolve(k, epsilon)
    return np.full((k, k), m.q) + np.eye(k) * (m.p - m.q)


def _design(seed: int, n_strata: int = 3):
    """A stratified cluster sample with unequal weights: (strata, clusters, weights, rng)."""
    rng = np.random.default_rng(seed)
    s, c, w = [], [], []
    for h in range(n_strata):
        for cluster in range(int(rng.integers(4, 7))):
            for _ in range(int(rng.integers(8, 16))):
                s.append(h)
                c.append(f"{h}.{cluster}")
                w.append(float(rng.gamma(2.0, 30.0)) * (1 + h))
    return np.array(s), np.array(c), np.array(w), rng


def _reports(rng, matrix: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Each true answer's report drawn from its column of ``matrix``."""
    cumulative = np.cumsum(matrix, axis=0)
    u = rng.random(truth.size)
    return np.minimum((u[:, None] > cumulative[:, truth].T).sum(axis=1), matrix.shape[0] - 1)


# ---------------------------------------------------------------- cross-tabs


PAIRS = {  # name: (row matrix or None with its ε, column matrix or None with its ε)
    "forced × warner": ((FORCED3.matrix, None), (WARNER.matrix, None)),
    "direct × lopsided custom": ((None, None), (LOPSIDED.matrix, None)),
    "kuk × k-ary": ((KUK.matrix, None), (None, 1.5)),
}


def _pair_sample(name: str, seed: int):
    (m1, e1), (m2, e2) = PAIRS[name]
    s, c, w, rng = _design(seed)
    n = w.size
    a1 = kary(2, e1) if m1 is None else m1
    a2 = kary(3, e2) if m2 is None else m2
    truth1 = rng.integers(0, a1.shape[1], n)
    truth2 = np.where(rng.random(n) < 0.6, truth1 % a2.shape[1], rng.integers(0, a2.shape[1], n))  # associated
    r1, r2 = _reports(rng, a1, truth1), _reports(rng, a2, truth2)
    r1[rng.choice(n, 6, replace=False)] = -1  # skipped: a domain, the respondents keep their clusters
    r2[rng.choice(n, 4, replace=False)] = -1
    return s, c, w, r1, r2, a1, a2, (m1, e1), (m2, e2)


@pytest.mark.slow  # R itself
@pytest.mark.parametrize("name", list(PAIRS))
def test_a_designed_crosstab_equals_r_survey_on_the_debiased_scores(tmp_path, name):
    """Joint cell (a, b): svymean of ``z_ab = M₁⁻¹[a, r₁] · M₂⁻¹[b, r₂]`` (estimate, standard error and
    the t interval on the design's degrees of freedom); conditional share: svyratio(~z_ab, ~z_a·)."""
    s, c, w, r1, r2, a1, a2, (m1, e1), (m2, e2) = _pair_sample(name, sum(map(ord, name)))
    k1, k2 = a1.shape[1], a2.shape[1]
    design = survey_design(w, strata=s, clusters=c)
    ours = weighted_crosstab(r1, r2, e1, e2, design, k_row=k1, k_col=k2, row_matrix=m1, col_matrix=m2)
    inv1, inv2 = np.linalg.inv(a1), np.linalg.inv(a2)
    both = (r1 >= 0) & (r2 >= 0)
    columns, variables, pairs = {"s": s, "c": c, "w": w}, [], []
    for a in range(k1):
        columns[f"row{a}"] = np.where(both, inv1[a, np.maximum(r1, 0)], np.nan)
        for b in range(k2):
            columns[f"z{a}{b}"] = np.where(both, inv1[a, np.maximum(r1, 0)] * inv2[b, np.maximum(r2, 0)], np.nan)
            variables.append(f"z{a}{b}")
            pairs.append((f"z{a}{b}", f"row{a}"))
    joint = svymean(tmp_path, columns, variables, weights="w", strata="s", cluster="c").reshape(k1, k2, 4)
    ratio = svyratio(tmp_path, columns, pairs, weights="w", strata="s", cluster="c").reshape(k1, k2, 4)
    assert np.asarray(ours.joint_estimate) == pytest.approx(joint[:, :, 0], abs=1e-8)
    assert np.asarray(ours.joint_std_error) == pytest.approx(joint[:, :, 1], abs=1e-8)
    assert np.asarray(ours.joint_ci_low) == pytest.approx(np.clip(joint[:, :, 2], 0, 1), abs=1e-8)
    assert np.asarray(ours.joint_ci_high) == pytest.approx(np.clip(joint[:, :, 3], 0, 1), abs=1e-8)
    assert np.asarray(ours.conditional_estimate) == pytest.approx(ratio[:, :, 0], abs=1e-8)
    assert np.asarray(ours.conditional_std_error) == pytest.approx(ratio[:, :, 1], abs=1e-8)
    # and the joint estimate is the Kronecker product of the two matrices, inverted, on the report pairs' shares
    wb = w * both
    shares = np.array([[wb @ ((r1 == i) & (r2 == j)) for j in range(k2)] for i in range(k1)]) / wb.sum()
    assert np.asarray(ours.report_share) == pytest.approx(shares, abs=1e-12)
    kron = (np.linalg.inv(np.kron(a1, a2)) @ shares.reshape(-1)).reshape(k1, k2)
    assert np.asarray(ours.joint_estimate) == pytest.approx(kron, abs=1e-12)
    assert ours.n == int(both.sum())
    assert np.all(np.asarray(ours.conditional_ci_low) <= np.asarray(ours.conditional_ci_high))


@pytest.mark.parametrize("epsilons", [(1.0, 2.0), (None, 1.5), (0.7, None)])
def test_k_ary_randomized_responses_matrix_gives_the_epsilon_crosstab(epsilons):
    """k-ary randomized response is the special case: its matrix, given as a design's, gives every
    number of the ε path (joint and conditional estimates, standard errors, intervals, method)."""
    s, c, w, rng = _design(3)
    r1, r2 = rng.integers(0, 2, w.size), rng.integers(0, 3, w.size)
    r1[:4] = -1
    design = survey_design(w, strata=s, clusters=c)
    by_epsilon = weighted_crosstab(r1, r2, *epsilons, design, k_row=2, k_col=3)
    by_matrix = weighted_crosstab(r1, r2, None, None, design, k_row=2, k_col=3, row_matrix=kary(2, epsilons[0]),
                                  col_matrix=kary(3, epsilons[1]))
    for name in ("report_share", "joint_estimate", "joint_std_error", "joint_ci_low", "joint_ci_high",
                 "conditional_estimate", "conditional_std_error", "conditional_ci_low", "conditional_ci_high"):
        assert np.asarray(getattr(by_matrix, name)) == pytest.approx(np.asarray(getattr(by_epsilon, name)),
                                                                     abs=1e-12, nan_ok=True), name
    assert by_matrix.method == by_epsilon.method


@pytest.mark.parametrize("column", [FORCED3, WARNER, KUK, MIXED], ids=lambda d: d.name)
def test_a_direct_row_gives_the_designed_columns_domain_estimates(column):
    """With the row asked directly, the shares given row a are the column's weighted design estimate
    on the domain of a (weighted_design_estimate with that subset), intervals included: Korn and
    Graubard's for a report affine in its answer's share; with no report affine (MIXED), the union
    of the t interval and Korn and Graubard's at the share's effective sample size."""
    s, c, w, rng = _design(8)
    rows = rng.integers(0, 2, w.size)
    cols = _reports(rng, column.matrix, rng.integers(0, column.k, w.size))
    design = survey_design(w, strata=s, clusters=c)
    ct = weighted_crosstab(rows, cols, None, None, design, k_row=2, k_col=column.k, col_matrix=column.matrix)
    for a in range(2):
        group = weighted_design_estimate(cols, column, design, subset=rows == a)
        assert ct.conditional_estimate[a] == pytest.approx(np.asarray(group.estimate), abs=1e-12)
        assert ct.conditional_std_error[a] == pytest.approx(np.asarray(group.std_error), abs=1e-12)
        assert ct.conditional_ci_low[a] == pytest.approx(np.asarray(group.ci_low), abs=1e-8)
        assert ct.conditional_ci_high[a] == pytest.approx(np.asarray(group.ci_high), abs=1e-8)
    assert "Korn-Graubard beta interval of the row's domain" in ct.method
    assert ("where no report of the column is affine" in ct.method) == (column is MIXED)


def test_a_column_report_not_affine_in_its_share_gets_the_domains_union_interval():
    """LOPSIDED's report 0 has two probabilities under the other answers: its conditional share's
    interval is the union of ``π̂ ± t_ν · se`` on the domain's Satterthwaite degrees of freedom and
    Korn and Graubard's beta interval at the share's effective sample size ``π̂(1 − π̂)/se²`` (its n
    the domain's respondents), clipped; the other two reports are affine in their shares and keep
    Korn and Graubard's of the report."""
    s, c, w, rng = _design(9)
    rows = rng.integers(0, 2, w.size)
    cols = _reports(rng, LOPSIDED.matrix, rng.integers(0, 3, w.size))
    design = survey_design(w, strata=s, clusters=c)
    ct = weighted_crosstab(rows, cols, None, None, design, k_row=2, k_col=3, col_matrix=LOPSIDED.matrix)
    for a in range(2):
        df = weights_degrees_of_freedom(design, rows == a)
        se, estimate = ct.conditional_std_error[a, 0], ct.conditional_estimate[a, 0]
        half = student_t.ppf(0.975, df) * se
        n_eff = estimate * (1 - estimate) / se**2 * (student_t.ppf(0.025, (rows == a).sum() - 1)
                                                     / student_t.ppf(0.025, df)) ** 2
        kg = (beta_dist.ppf(0.025, n_eff * estimate, n_eff * (1 - estimate) + 1),
              beta_dist.ppf(0.975, n_eff * estimate + 1, n_eff * (1 - estimate)))
        assert [ct.conditional_ci_low[a, 0], ct.conditional_ci_high[a, 0]] == pytest.approx(
            list(np.clip([min(estimate - half, kg[0]), max(estimate + half, kg[1])], 0, 1)), abs=1e-12)
        group = weighted_design_estimate(cols, LOPSIDED, design, subset=rows == a)
        assert ct.conditional_estimate[a] == pytest.approx(np.asarray(group.estimate), abs=1e-12)
    assert "the union of the t interval and Korn-Graubard's beta interval at the share's effective sample size, " \
        "on the domain's degrees of freedom, where no report of the column is affine" in ct.method


@pytest.mark.parametrize("kwargs,field", [
    ({"row_matrix": [[0.7, 0.3], [0.3, 0.7]], "row_epsilon": 1.0}, "row_matrix"),  # both an ε and a matrix
    ({"col_matrix": [[0.7, 0.3], [0.3, 0.7]]}, "col_matrix"),  # 2 × 2 for a 3-option column
    ({"row_matrix": [[0.5, 0.5], [0.5, 0.5]]}, "row_matrix"),  # singular
    ({"row_matrix": [[0.7, 0.3], [0.4, 0.7]]}, "row_matrix"),  # a column that does not add up to 1
    ({"row_matrix": [[1.2, 0.3], [-0.2, 0.7]]}, "row_matrix"),  # not probabilities
])
def test_a_bad_matrix_is_refused_by_name(kwargs, field):
    design = survey_design([1.0, 2.0, 1.5, 3.0, 2.5, 1.0])
    args = {"row_epsilon": None, "col_epsilon": None, **kwargs}
    rows, cols = np.array([0, 1, 0, 1, 0, 1]), np.array([0, 1, 2, 0, 1, 2])
    with pytest.raises(SamplingDesignError) as info:
        weighted_crosstab(rows, cols, args.pop("row_epsilon"), args.pop("col_epsilon"), design, k_row=2, k_col=3,
                          **args)
    assert info.value.field == field


# ---------------------------------------------------------------- the survey files, through the command line

DESIGNED = {"slug": "designed", "title": "Designed", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "forced", "text": "Forced?", "options": ["a", "b", "c"],
     "design": {"name": "forced", "p": 0.6, "forced": [0.2, 0.1, 0.1]}, "required": False},
    {"id": "sites", "text": "Which sites?", "type": "multi", "options": ["A", "B", "C"],
     "design": {"name": "warner", "p": 0.7}, "required": False},
    {"id": "owns", "text": "Which do you own?", "type": "multi", "options": ["Car", "Bike"],
     "design": {"name": "forced", "p": 0.4, "forced": [0.35, 0.25]}},
    {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"]}]}
DESIGN_ARGS = ("--weights", "w", "--strata", "s", "--cluster", "c")


def _designed_file(tmp_path, seed=41):
    """Reports of DESIGNED through each question's mechanism, from a stratified cluster sample with
    unequal weights; some skip ``forced`` and ``sites``.  Returns (survey, codes, design columns, path)."""
    survey = load_definition(_json(tmp_path, DESIGNED))
    s, c, w, rng = _design(seed)
    n = w.size
    year = rng.integers(0, 3, n)
    truth = np.where(rng.random(n) < 0.5, year, rng.integers(0, 3, n))
    codes = {"year": year, "drugs": _reports(rng, kary(2, 1.0), (truth > 0).astype(int)),
             "forced": _reports(rng, survey.question("forced").mechanism.design.matrix, truth)}
    for qid, k in (("sites", 3), ("owns", 2)):
        tick = survey.question(qid).mechanism.design.matrix
        code = np.zeros(n, dtype=np.int64)
        for j in range(k):  # answer 0 "ticked", its report 0 sent as a tick (bit j)
            answer = (rng.random(n) >= 0.25 + 0.2 * j + 0.1 * (year == j)).astype(int)
            code |= (_reports(rng, tick, answer) == 0).astype(np.int64) << j
        codes[qid] = code
    codes["forced"][rng.choice(n, 5, replace=False)] = -1
    codes["sites"][rng.choice(n, 7, replace=False)] = -1
    cells = {q.id: ["" if v < 0 else q.qtype.text_of(q, v) for v in codes[q.id]] for q in survey.questions}
    path = write_csv(tmp_path / "r.csv", {**cells, "w": w, "s": s, "c": c})
    return survey, codes, {"s": s, "c": c, "w": w}, path


def _estimate(*args) -> dict:
    result = run("estimate", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow  # R itself
def test_check_all_ticks_with_a_design_equal_r_survey(tmp_path):
    """Each option of a check-all question with a binary design on each tick: its share is svymean of
    the tick's debiased score ``M⁻¹[0, report]`` (report 0: ticked), its interval Korn and Graubard's
    of the ticked-report indicator (on the weights' degrees of freedom) mapped through
    ``λ₀ = M[0, 1] + (M[0, 0] − M[0, 1]) π₀``, joined with the exact interval of the same report share at
    the domain's Kish effective sample size (support/kish.py)."""
    survey, codes, design_columns, path = _designed_file(tmp_path)
    ours = {q["id"]: q for q in _estimate(tmp_path / "survey.json", path, *DESIGN_ARGS)["questions"]}
    columns, variables = dict(design_columns), []
    for qid in ("sites", "owns"):
        inverse = np.linalg.inv(survey.question(qid).mechanism.design.matrix)
        for j in range(survey.question(qid).k):
            ticked = np.where(codes[qid] >= 0, (codes[qid] >> j) & 1, np.nan)
            columns[f"z_{qid}_{j}"] = np.where(ticked == 1, inverse[0, 0], inverse[0, 1])
            columns[f"z_{qid}_{j}"][np.isnan(ticked)] = np.nan
            columns[f"r_{qid}_{j}"] = ticked
            variables += [f"z_{qid}_{j}", f"r_{qid}_{j}"]
    r = dict(zip(variables, svymean(tmp_path, columns, variables, weights="w", strata="s", cluster="c",
                                    kg_weights_df=True)))
    for qid in ("sites", "owns"):
        q = survey.question(qid)
        m = q.mechanism.design.matrix
        record = ours[qid]
        assert record["weighted"] and record["n"] == int((codes[qid] >= 0).sum()) and record["design"] == \
            q.mechanism.design.name
        assert record["epsilon"] == pytest.approx(q.mechanism.epsilon)
        for j, option in enumerate(record["options"]):
            mean, se, _, _ = r[f"z_{qid}_{j}"]
            share, _, low, high = r[f"r_{qid}_{j}"]
            assert [option["estimate"], option["std_error"], option["report_share"]] == \
                pytest.approx([mean, se, share], abs=1e-8), (qid, j)
            ends = sorted([(low - m[0, 1]) / (m[0, 0] - m[0, 1]), (high - m[0, 1]) / (m[0, 0] - m[0, 1])])
            floor = report_interval(share, kish_n(columns["w"] * (codes[qid] >= 0)), m[0, 0], m[0, 1])
            assert [option["ci_low"], option["ci_high"]] == pytest.approx(list(join(*ends, floor)), abs=1e-8)


def test_check_all_ticks_with_a_design_go_by_group_and_simultaneous(tmp_path):
    """--by and --simultaneous take a designed check-all question as any other: each group a domain,
    and Bonferroni over its options (each interval at 1 − α/K, as the run at that level gives it)."""
    _, codes, _, path = _designed_file(tmp_path, seed=42)
    by = _estimate(tmp_path / "survey.json", path, *DESIGN_ARGS, "--by", "year")
    sites = next(q for q in by["questions"] if q["id"] == "sites")
    assert [g["n"] for g in sites["groups"][:3]] == [int(((codes["year"] == g) & (codes["sites"] >= 0)).sum())
                                                     for g in range(3)]
    together = {q["id"]: q for q in _estimate(tmp_path / "survey.json", path, *DESIGN_ARGS,
                                              "--simultaneous")["questions"]}["sites"]
    alone = {q["id"]: q for q in _estimate(tmp_path / "survey.json", path, *DESIGN_ARGS, "--confidence",
                                           str(1 - 0.05 / 3))["questions"]}["sites"]
    assert together["simultaneous"] is True and together["confidence"] == 0.95
    assert [[o["ci_low"], o["ci_high"]] for o in together["options"]] == \
        pytest.approx(np.array([[o["ci_low"], o["ci_high"]] for o in alone["options"]]), abs=1e-12)


@pytest.mark.slow  # R itself
def test_a_weighted_crosstab_of_a_designed_question_equals_r_survey(tmp_path):
    """``deniable estimate --weights … --crosstab forced drugs``: a forced-response row and a k-ary
    column, each cell svymean of its debiased score, each conditional share svyratio's."""
    survey, codes, design_columns, path = _designed_file(tmp_path)
    document = _estimate(tmp_path / "survey.json", path, *DESIGN_ARGS, "--crosstab", "forced", "drugs")
    inv1 = np.linalg.inv(survey.question("forced").mechanism.design.matrix)
    inv2 = np.linalg.inv(kary(2, 1.0))
    both = (codes["forced"] >= 0) & (codes["drugs"] >= 0)
    columns, variables, pairs = dict(design_columns), [], []
    for a in range(3):
        columns[f"row{a}"] = np.where(both, inv1[a, np.maximum(codes["forced"], 0)], np.nan)
        for b in range(2):
            columns[f"z{a}{b}"] = columns[f"row{a}"] * inv2[b, codes["drugs"]]
            variables.append(f"z{a}{b}")
            pairs.append((f"z{a}{b}", f"row{a}"))
    joint = svymean(tmp_path, columns, variables, weights="w", strata="s", cluster="c")
    ratio = svyratio(tmp_path, columns, pairs, weights="w", strata="s", cluster="c")
    cells = document["cells"]
    assert document["n"] == int(both.sum()) and document["simultaneous"] is False
    assert np.array([[cell["estimate"], cell["std_error"]] for cell in cells]) == pytest.approx(joint[:, :2], abs=1e-8)
    assert np.array([[cell["conditional_estimate"], cell["conditional_std_error"]] for cell in cells]) == \
        pytest.approx(ratio[:, :2], abs=1e-8)
    assert [(cell["row_label"], cell["col_label"]) for cell in cells] == [(a, b) for a in "abc" for b in ("Yes", "No")]


def test_a_simultaneous_weighted_crosstab_is_bonferroni_over_its_cells(tmp_path):
    """--simultaneous with --weights and --crosstab: every interval at 1 − α/(k₁k₂), the level stated
    as asked (0.95) and the method saying so; the estimates and standard errors unchanged."""
    _, _, _, path = _designed_file(tmp_path, seed=43)
    args = (tmp_path / "survey.json", path, *DESIGN_ARGS, "--crosstab", "forced", "drugs")
    together = _estimate(*args, "--simultaneous")
    alone = _estimate(*args, "--confidence", str(1 - 0.05 / 6))
    plain = _estimate(*args)
    assert together["simultaneous"] is True and together["confidence"] == 0.95
    assert "Bonferroni over the 6 cells" in together["method"]
    for key in ("ci_low", "ci_high", "conditional_ci_low", "conditional_ci_high"):
        assert [cell[key] for cell in together["cells"]] == pytest.approx([cell[key] for cell in alone["cells"]],
                                                                         abs=1e-12)
    for key in ("estimate", "std_error"):
        assert [cell[key] for cell in together["cells"]] == [cell[key] for cell in plain["cells"]]
    wider = [t["ci_high"] - t["ci_low"] >= p["ci_high"] - p["ci_low"] for t, p in zip(together["cells"], plain["cells"])]
    assert all(wider) and any(t["ci_high"] - t["ci_low"] > p["ci_high"] - p["ci_low"] + 1e-9
                              for t, p in zip(together["cells"], plain["cells"]))
    table = run("estimate", *args, "--simultaneous")
    assert table.exit_code == 0 and "simultaneous: Bonferroni over the 6 cells" in table.stdout, table.output


# ---------------------------------------------------------------- regression of a designed outcome


def _independent_weighted_fit(matrix, X, reports, w, strata, clusters):
    """A binary outcome (answer 0 against answer 1) under ``matrix``: the weighted pseudo-likelihood
    ``Σ w_i log(M[r_i, 0] π_i + M[r_i, 1] (1 − π_i))``, π = expit(Xβ), maximized by scipy; its score
    ``g_i = (M[r_i, 0] − M[r_i, 1]) π_i(1 − π_i)/L_i · x_i`` and Hessian written out; the sandwich
    ``H⁻¹ J H⁻¹`` with ``J = Σ_h n_h/(n_h − 1) Σ_c (U_hc − Ū_h)(U_hc − Ū_h)ᵀ``, U_hc the weighted
    scores' total of cluster c of stratum h — cluster by cluster in plain Python."""
    a, b = matrix[reports, 0], matrix[reports, 1]
    total = w.sum()

    def parts(beta):
        pi = expit(X @ beta)
        lik = b + (a - b) * pi
        return pi, lik

    def negative(beta):
        _, lik = parts(beta)
        return -float(w @ np.log(lik)) / total

    def gradient(beta):
        pi, lik = parts(beta)
        return -((w * (a - b) * pi * (1 - pi) / lik) @ X) / total

    start = minimize(negative, np.zeros(X.shape[1]), method="Nelder-Mead",
                     options={"xatol": 1e-9, "fatol": 1e-15, "maxiter": 20000}).x
    beta = minimize(negative, start, jac=gradient, method="BFGS", options={"gtol": 1e-13}).x
    pi, lik = parts(beta)
    d1 = (a - b) * pi * (1 - pi) / lik  # dℓ_i/dη
    d2 = (a - b) * pi * (1 - pi) * (1 - 2 * pi) / lik - d1**2  # d²ℓ_i/dη²
    hessian = (X * (w * d2)[:, None]).T @ X
    scores = (w * d1)[:, None] * X
    totals = {}
    for i in range(len(w)):
        key = (strata[i], clusters[i])
        totals[key] = totals.get(key, 0) + scores[i]
    meat = np.zeros((X.shape[1], X.shape[1]))
    for h in set(strata):
        cluster_totals = [u for key, u in totals.items() if key[0] == h]
        mean = sum(cluster_totals) / len(cluster_totals)
        n_h = len(cluster_totals)
        meat += n_h / (n_h - 1) * sum(np.outer(u - mean, u - mean) for u in cluster_totals)
    inverse = np.linalg.inv(hessian)
    return beta, np.sqrt(np.diag(inverse @ meat @ inverse))


REGRESSION = {"slug": "reg", "title": "Reg", "questions": [
    {"id": "forced", "text": "Forced?", "options": ["Yes", "No"],
     "design": {"name": "forced", "p": 0.6, "forced": [0.3, 0.1]}},
    {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"]}]}


def test_weighted_regression_of_a_designed_outcome_solves_the_weighted_score_equations(tmp_path):
    """``deniable regress … "forced ~ year" --weights w --strata s --cluster c``: the coefficients solve
    the weighted pseudo-likelihood's score equations with the design's matrix, and the standard
    errors are the sandwich with the strata and clusters (an independent fit)."""
    survey = load_definition(_json(tmp_path, REGRESSION))
    matrix = survey.question("forced").mechanism.design.matrix
    s, c, w, rng = _design(51)
    year = rng.integers(0, 3, w.size)
    truth = np.where(rng.random(w.size) < expit(-0.3 + 0.5 * year - 0.1 * s), 0, 1)
    reports = _reports(rng, matrix, truth)
    path = write_csv(tmp_path / "r.csv", {"forced": np.array(["Yes", "No"])[reports],
                                          "year": np.array(["First", "Second", "Third"])[year], "w": w, "s": s, "c": c})
    result = run("regress", tmp_path / "survey.json", path, "forced ~ year", *DESIGN_ARGS, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    X = np.column_stack([np.ones(w.size), year == 1, year == 2]).astype(float)
    beta, se = _independent_weighted_fit(matrix, X, reports, w, s, c)
    got = document["coefficients"]
    assert [row["estimate"] for row in got] == pytest.approx(beta.tolist(), abs=1e-6)
    assert [row["std_error"] for row in got] == pytest.approx(se.tolist(), rel=1e-6)
    assert "sandwich" in document["note"]
    table = run("regress", tmp_path / "survey.json", path, "forced ~ year", *DESIGN_ARGS)
    assert table.exit_code == 0 and "forced design (its misclassification matrix in the pseudo-likelihood)" in \
        table.stdout, table.output
    # the k-ary fit at the design's ε, ignoring the design, is another model: the matrix is what is fitted
    wrong = estimators.regress(reports, X[:, 1:], survey.question("forced").epsilon, k=2,
                               design=survey_design(w, strata=s, clusters=c), profile=False)
    assert np.max(np.abs(np.asarray(wrong.params) - beta)) > 0.05


@pytest.mark.slow  # R itself
def test_a_designed_regression_with_the_identity_matrix_equals_r_svyglm(tmp_path):
    """A design that reports the answer (M = I, p = 1): the matrix path's pseudo-likelihood fit and
    sandwich are R's ``svyglm(family = quasibinomial())`` on the same design."""
    s, c, x1, x2, w, truth = _regression_sample(5)
    coef, se = svyglm(tmp_path, {"y": truth.astype(int), "x1": x1, "x2": x2, "s": s, "c": c, "w": w})
    design = survey_design(w, strata=s, clusters=c)
    ours = estimators.regress(np.where(truth, 0, 1), np.column_stack([x1, x2]), None, matrix=np.eye(2),
                              design=design, profile=False)
    assert np.asarray(ours.params) == pytest.approx(coef, rel=1e-8)
    assert np.asarray(ours.std_error) == pytest.approx(se, rel=1e-8)
