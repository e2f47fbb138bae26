"""``deniable estimate --weights … --by QUESTION`` and ``--crosstab Q1 Q2``: subgroups as domains and
cross-tabs debiased with the Kronecker inverse, equal to R's survey package, run for real.

R's numbers (tests/support/r_survey.py): ``svyby(~z, ~g, design, svymean, na.rm = TRUE)`` of each
option's debiased indicator ``z = ([report = j] − q)/(p − q)`` (the estimate and its standard error),
``svyby(~r, ~g, design, svyciprop, method = "beta")`` of the report indicator, mapped through the
mechanism (the interval); for a cross-tab ``svymean`` of the cell's debiased indicator
``z_ab = ([r₁ = a] − q₁)/(p₁ − q₁) · ([r₂ = b] − q₂)/(p₂ − q₂)`` and ``svyratio(~z_ab, ~z_a)`` for the
conditional share.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from deniable.client.mechanism import resolve
from deniable.server.survey.definition import load_definition
from support.kish import kish_n, with_floor
from support.r_survey import _run, svyby, svycontrast_arms, svymean, svyratio, write_csv

from .test_weights_cli import SURVEY, _csv, _json, design_sample, estimate_json, responses_csv, run

DESIGN = ("--weights", "w", "--strata", "s", "--cluster", "c")
GROUPED = {"slug": "grouped", "title": "Grouped", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "cheated", "text": "Cheated?", "options": ["Never", "Once", "Several times"], "epsilon": 2.0,
     "required": False},
    {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"], "required": False},
    {"id": "age", "text": "Age?", "type": "numeric", "min": 0, "max": 12, "epsilon": 2.0, "mechanism": "grid",
     "grid": 4}]}


def _grouped_sample(tmp_path, seed=21):
    """The design sample's strata, clusters and weights with GROUPED's answers: some skip cheated, some
    the grouping question ``year``; ``age`` as grid codes."""
    survey = load_definition(_json(tmp_path, GROUPED))
    _, rows = design_sample(seed)
    n = len(rows["w"])
    rng = np.random.default_rng(seed)
    codes = {q.id: rng.integers(q.qtype.n_cells(q), size=n) for q in survey.questions}
    codes["year"] = np.where(rows["s"] == "east", rng.integers(0, 2, n), codes["year"])  # a group not in a stratum
    codes["cheated"][rng.choice(n, 7, replace=False)] = -1
    codes["year"][rng.choice(n, 10, replace=False)] = -1
    cells = {q.id: ["" if c < 0 else q.qtype.text_of(q, c) for c in codes[q.id]] for q in survey.questions}
    path = write_csv(tmp_path / "r.csv", {**cells, "w": rows["w"], "s": rows["s"], "c": rows["c"]})
    return survey, rows, codes, path


@pytest.mark.slow  # R itself
def test_weighted_subgroups_equal_r_svyby(tmp_path):
    """Each group's estimates, standard errors and intervals are R's domain estimates: svyby, with
    the group's own respondents and degrees of freedom in Korn and Graubard's interval; a numeric
    mean's t interval on the group's degrees of freedom; the respondents who skipped the grouping
    question are a group too.  Each interval is joined with the exact interval of the same report share at
    the group's Kish effective sample size (support/kish.py)."""
    survey, rows, codes, path = _grouped_sample(tmp_path)
    ours = estimate_json(tmp_path / "survey.json", path, *DESIGN, "--by", "year")

    year = survey.question("year")
    columns = {"s": rows["s"], "c": rows["c"], "w": rows["w"],
               "g": np.array(["not answered" if c < 0 else year.options[c] for c in codes["year"]])}
    variables = []
    for q in (survey.question("drugs"), survey.question("cheated")):
        m = resolve(q.k, q.epsilon)
        for j in range(q.k):
            report = np.where(codes[q.id] >= 0, (codes[q.id] == j).astype(float), np.nan)
            columns[f"r_{q.id}_{j}"], columns[f"z_{q.id}_{j}"] = report, (report - m.q) / (m.p - m.q)
            variables += [f"z_{q.id}_{j}", f"r_{q.id}_{j}"]
    rr = resolve(5, 2.0)  # age: grid randomized response over 0, 3, 6, 9, 12
    columns["age"] = (3.0 * codes["age"] - rr.q * 30) / (rr.p - rr.q)
    variables.append("age")
    r = svyby(tmp_path, columns, variables, weights="w", strata="s", cluster="c", kg_weights_df=True)

    assert ours["weighted"] is True and ours["by"] == "year"
    assert [q["id"] for q in ours["questions"]] == ["drugs", "cheated", "age"]
    checked = 0
    for record in ours["questions"]:
        q = survey.question(record["id"])
        labels = [g["group"] for g in record["groups"]]
        assert labels == [*year.options, "not answered"]
        for group in record["groups"]:
            members = columns["g"] == group["group"]
            assert group["n"] == int((members & (codes[q.id] >= 0)).sum())
            assert group["not_answered"] is (group["group"] == "not answered")
            if q.id == "age":
                mean, se, low, high = r["age", group["group"]]
                got = group["mean"]
                assert [got["estimate"], got["std_error"], got["ci_low"], got["ci_high"]] == \
                    pytest.approx([mean, se, low, high], abs=1e-8), group["group"]
                checked += 1
                continue
            m = resolve(q.k, q.epsilon)
            for j, option in enumerate(group["options"]):
                mean, se, _, _ = r[f"z_{q.id}_{j}", group["group"]]
                share, _, low, high = r[f"r_{q.id}_{j}", group["group"]]
                assert option["estimate"] == pytest.approx(mean, abs=1e-8), (q.id, group["group"], j)
                assert option["std_error"] == pytest.approx(se, abs=1e-8), (q.id, group["group"], j)
                assert option["report_share"] == pytest.approx(share, abs=1e-8)
                n_kish = kish_n(rows["w"] * (members & (codes[q.id] >= 0)))
                assert [option["ci_low"], option["ci_high"]] == pytest.approx(
                    with_floor((low - m.q) / (m.p - m.q), (high - m.q) / (m.p - m.q), share, n_kish, m.p, m.q),
                    abs=1e-8)
                checked += 1
    assert checked == 4 * (2 + 3 + 1)


def _cell_columns(survey, rows, row_id, col_id):
    """Per cell the debiased indicator of the pair, NaN unless both answered, and per row option its
    debiased indicator (the conditional share's denominator), written from the mechanism's p and q."""
    row, col = survey.question(row_id), survey.question(col_id)
    mr, mc = resolve(row.k, row.epsilon), resolve(col.k, col.epsilon)
    both = (rows[row_id] >= 0) & (rows[col_id] >= 0)
    columns = {"s": rows["s"], "c": rows["c"], "w": rows["w"]}
    for a in range(row.k):
        za = np.where(both, ((rows[row_id] == a) - mr.q) / (mr.p - mr.q), np.nan)
        columns[f"d_{a}"] = za
        for b in range(col.k):
            columns[f"z_{a}_{b}"] = za * (((rows[col_id] == b) - mc.q) / (mc.p - mc.q))
    return row, col, columns


# The conditional share's interval with a randomized row, written in R from R's numbers: Fieller's
# interval for svymean(~z_ab + z_a)'s ratio with its vcov and qt(0.975, degf(design)) ([0, 1] when
# the denominator's quadratic coefficient is not positive), joined with Korn and Graubard's recipe
# (svyciprop's "beta") from svyratio's variance, at the ratio's effective sample size and on the
# column's report scale q2 + (p2 - q2)R (mapped back), each when it lies in (0, 1).  Arguments: the
# CSV, the column's p2 and q2, then NUM:DEN pairs; one line per number: the two ends per pair.
CONDITIONAL_SCRIPT = r"""
suppressMessages(library(survey))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1], stringsAsFactors = FALSE)
des <- svydesign(ids = ~c, strata = ~s, weights = ~w, nest = TRUE, data = d)
tq <- qt(0.975, degf(des))
p2 <- as.numeric(args[2]); q2 <- as.numeric(args[3])
out <- c()
for (pair in args[-(1:3)]) {
  parts <- strsplit(pair, ":")[[1]]
  m <- svymean(as.formula(paste0("~", parts[1], " + ", parts[2])), des, na.rm = TRUE)
  N <- coef(m)[[1]]; D <- coef(m)[[2]]; V <- vcov(m)
  a <- D^2 - tq^2 * V[2, 2]; b <- N * D - tq^2 * V[1, 2]; cc <- N^2 - tq^2 * V[1, 1]
  ends <- if (a > 0) (b + c(-1, 1) * sqrt(max(b^2 - a * cc, 0))) / a else c(0, 1)
  r <- svyratio(as.formula(paste0("~", parts[1])), as.formula(paste0("~", parts[2])), des, na.rm = TRUE)
  R <- coef(r)[[1]]; v <- vcov(r)[[1]]
  n <- sum(!is.na(d[[parts[1]]]))
  for (scale in list(c(0, 1), c(q2, p2 - q2))) {
    s <- scale[1] + scale[2] * R
    if (s > 0 && s < 1) {
      neff <- s * (1 - s) / (v * scale[2]^2) * (qt(0.025, n - 1) / qt(0.025, degf(des)))^2
      x <- neff * s
      kg <- (c(qbeta(0.025, x, neff - x + 1), qbeta(0.975, x + 1, neff - x)) - scale[1]) / scale[2]
      ends <- c(min(ends[1], kg[1]), max(ends[2], kg[2]))
    }
  }
  out <- c(out, ends)
}
cat(sprintf("%.15g", out), sep = "\n")
"""


@pytest.mark.slow  # R itself
@pytest.mark.parametrize("pair", [("drugs", "cheated"), ("year", "drugs")], ids=["both randomized", "one direct"])
def test_weighted_crosstab_equals_r_survey(tmp_path, pair):
    """Joint cells: R's svymean of the cell's debiased indicator and its t interval on the design's
    degrees of freedom; conditional shares: R's svyratio (estimate, standard error), their interval
    with a randomized row Fieller's for R's svymean of numerator and denominator joined with Korn and
    Graubard's on the ratio's and the column's report scale, and with a row asked directly the --by
    estimate of the row's group (Korn and Graubard's of the domain, mapped through the column's
    mechanism); respondents who skipped one of the two keep their place with weight 0."""
    survey, rows = design_sample(17)
    rows["cheated"][np.random.default_rng(2).choice(len(rows["w"]), 8, replace=False)] = -1
    path = responses_csv(tmp_path / "responses.csv", survey, rows)
    ours = estimate_json(SURVEY, path, *DESIGN, "--crosstab", *pair)
    row, col, columns = _cell_columns(survey, rows, *pair)
    cells = [f"z_{a}_{b}" for a in range(row.k) for b in range(col.k)]
    pairs = [(f"z_{a}_{b}", f"d_{a}") for a in range(row.k) for b in range(col.k)]
    joint = svymean(tmp_path, columns, cells, weights="w", strata="s", cluster="c")
    ratio = svyratio(tmp_path, columns, pairs, weights="w", strata="s", cluster="c")
    if row.protected:
        mc = resolve(col.k, col.epsilon)
        ends = np.array(_run(CONDITIONAL_SCRIPT, tmp_path, str(write_csv(tmp_path / "cond.csv", columns)),
                             repr(mc.p), repr(mc.q), *(f"{a}:{b}" for a, b in pairs))).reshape(len(pairs), 2)
    else:  # the --by estimates of the row's groups (themselves checked against R's svyby above)
        groups = {g["group"]: g for g in estimate_json(SURVEY, path, *DESIGN, "--by", row.id)["questions"]
                  [[q.id for q in survey.questions if q.id != row.id].index(col.id)]["groups"]}
        ends = np.array([(groups[row.options[a]]["options"][b]["ci_low"], groups[row.options[a]]["options"][b]["ci_high"])
                         for a in range(row.k) for b in range(col.k)])
    assert ours["weighted"] is True and ours["n"] == int(((rows[pair[0]] >= 0) & (rows[pair[1]] >= 0)).sum())
    assert len(ours["cells"]) == len(cells)
    for cell, (mean, se, low, high), (cond, cond_se, _, _), (cond_low, cond_high) in zip(ours["cells"], joint,
                                                                                           ratio, ends):
        assert [cell["estimate"], cell["std_error"], cell["ci_low"], cell["ci_high"]] == pytest.approx(
            [mean, se, *np.clip([low, high], 0, 1)], abs=1e-8), cell
        assert [cell["conditional_estimate"], cell["conditional_std_error"], cell["conditional_ci_low"],
                cell["conditional_ci_high"]] == pytest.approx(
            [cond, cond_se, *np.clip([cond_low, cond_high], 0, 1)], abs=1e-8), cell
    # the intervals are not the t interval on the linearized ratio that the cross-tab gave before
    assert any(abs(cell["conditional_ci_high"] - min(1.0, t_high)) > 1e-4
               for cell, (_, _, _, t_high) in zip(ours["cells"], ratio))


@pytest.mark.slow  # R itself
def test_weighted_crosstab_of_direct_questions_has_korn_graubard_cells(tmp_path):
    """Asked directly, a joint cell is a proportion: its interval is R's svyciprop(method = "beta"), joined
    with the exact interval of the same share at the respondents' Kish effective sample size."""
    survey_path = _json(tmp_path, {"slug": "d", "title": "D", "questions": [
        {"id": "sex", "text": "Sex?", "options": ["F", "M"]},
        {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"]}]})
    survey = load_definition(survey_path)
    _, rows = design_sample(5)
    rng = np.random.default_rng(5)
    rows["sex"], rows["year"] = rng.integers(0, 2, len(rows["w"])), rng.integers(0, 3, len(rows["w"]))
    path = responses_csv(tmp_path / "r.csv", survey, rows)
    ours = estimate_json(survey_path, path, *DESIGN, "--crosstab", "sex", "year")
    _, _, columns = _cell_columns(survey, rows, "sex", "year")
    cells = [f"z_{a}_{b}" for a in range(2) for b in range(3)]
    r = svymean(tmp_path, columns, cells, weights="w", strata="s", cluster="c")
    assert ours["method"].startswith("Korn-Graubard")
    for cell, (mean, se, low, high) in zip(ours["cells"], r):
        assert cell["report_share"] == pytest.approx(mean, abs=1e-12)
        assert [cell["estimate"], cell["std_error"], cell["ci_low"], cell["ci_high"]] == \
            pytest.approx([mean, se, *with_floor(low, high, mean, kish_n(rows["w"]))], abs=1e-8)


def test_equal_weights_give_the_unweighted_subgroup_and_crosstab_estimates(tmp_path):
    """With every weight 2.5 the domain estimates are each group's debiased shares, and the joint cells
    the unweighted cross-tab's unbiased estimates (the same inverse on the same shares)."""
    survey, rows = design_sample(8)
    rows["w"] = np.full(len(rows["w"]), 2.5)
    weighted = responses_csv(tmp_path / "w.csv", survey, rows, extra=("w",))
    plain = responses_csv(tmp_path / "plain.csv", survey, rows, extra=())
    ours = estimate_json(SURVEY, weighted, "--weights", "w", "--by", "year")
    reference = estimate_json(SURVEY, plain, "--by", "year")
    for got, want in zip(ours["questions"], reference["questions"]):
        for g, h in zip(got["groups"], want["groups"]):
            assert g["group"] == h["group"] and g["n"] == h["n"]
            if g["n"]:
                assert [o["estimate"] for o in g["options"]] == \
                    pytest.approx([o["estimate"] for o in h["options"]], abs=1e-12)
    ours = estimate_json(SURVEY, weighted, "--weights", "w", "--crosstab", "drugs", "cheated")
    reference = estimate_json(SURVEY, plain, "--crosstab", "drugs", "cheated")
    assert [c["estimate"] for c in ours["cells"]] == pytest.approx([c["estimate"] for c in reference["cells"]],
                                                                   abs=1e-12)


def test_the_weighted_tables_and_csv_name_the_design_and_the_groups(tmp_path):
    survey, rows = design_sample(3)
    path = responses_csv(tmp_path / "r.csv", survey, rows)
    table = run("estimate", SURVEY, path, *DESIGN, "--by", "year")
    assert table.exit_code == 0, table.output
    assert "design: weighted by column 'w' · 3 strata (column 's')" in table.stdout
    assert "drugs: Have you used an illegal drug in the last 12 months? · year=Second\n" in table.stdout
    assert "year not answered\n  n = 0: nobody answered" in table.stdout
    csv_out = run("estimate", SURVEY, path, *DESIGN, "--by", "year", "--format", "csv")
    lines = csv_out.stdout.splitlines()
    assert lines[0].startswith("by,group,question,option,label,n,") and lines[0].endswith(",weights,strata,cluster,fpc")
    assert lines[1].startswith("year,First,drugs,0,Yes,") and lines[1].endswith(",w,s,c,")
    assert "year,not answered,drugs,,,0," in csv_out.stdout
    ct = run("estimate", SURVEY, path, *DESIGN, "--crosstab", "drugs", "year")
    assert ct.exit_code == 0 and "· weighted ·" in ct.stdout and "Yes · Third or later" in ct.stdout, ct.output
    ct_csv = run("estimate", SURVEY, path, *DESIGN, "--crosstab", "drugs", "year", "--format", "csv")
    assert ct_csv.stdout.splitlines()[1].startswith("drugs,year,")
    assert len(ct_csv.stdout.splitlines()) == 1 + 2 * 3


GOOD_ROWS = "Yes,Never,First,1.5,a,1\nNo,Once,Second,2,a,2\nNo,Never,First,1,b,1\nYes,Once,Third or later,3,b,2\n"
NUMERIC = {"slug": "n", "title": "N", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "age", "text": "Age?", "type": "numeric", "min": 0, "max": 12, "epsilon": 2.0, "mechanism": "grid",
     "grid": 4}]}


@pytest.mark.parametrize("args,expected", [
    (("--by", "drugs"), "--by: question 'drugs' is randomized"),
    (("--by", "nope"), "--by: unknown question id 'nope'"),
    (("--crosstab", "drugs", "drugs"), "--crosstab: give two different questions"),
    (("--crosstab", "drugs", "cheated", "--by", "year"), "use --crosstab or --by, not both"),
])
def test_what_weighted_subgroups_and_crosstabs_refuse_is_one_usage_line(tmp_path, args, expected):
    result = run("estimate", SURVEY, _csv(tmp_path, GOOD_ROWS), *DESIGN, *args)
    assert result.exit_code == 2, result.output
    assert expected in result.stderr and result.stdout == "", result.stderr


def test_a_weighted_crosstab_of_a_numeric_question_is_refused_by_name(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("drugs,age,w\nYes,3,1\nNo,6,2\n", encoding="utf-8")
    result = run("estimate", _json(tmp_path, NUMERIC), path, "--weights", "w", "--crosstab", "drugs", "age")
    assert result.exit_code == 2 and "--crosstab: question 'age' is" in result.stderr, result.output
    assert len([line for line in result.stderr.splitlines() if line.startswith("Error:")]) == 1


def test_a_weighted_by_group_is_read_from_the_file_not_the_patterns(tmp_path):
    """The groups come from the respondents' rows (their weights differ), so the JSON says weighted."""
    survey, rows = design_sample(4)
    path = responses_csv(tmp_path / "r.csv", survey, rows)
    document = json.loads(run("estimate", SURVEY, path, *DESIGN, "--by", "year", "--format", "json").stdout)
    assert document["design"]["weights"] == "w" and document["n_responses"] == len(rows["w"])
    assert all(g.get("weighted") for q in document["questions"] for g in q["groups"])


TYPES = {"slug": "types", "title": "Types", "questions": [
    {"id": "sites", "text": "Which sites?", "type": "multi", "options": ["A", "B", "C"], "epsilon": 2.0,
     "required": False},
    {"id": "owns", "text": "Which do you own?", "type": "multi", "options": ["Car", "Bike"]},
    {"id": "shop", "text": "How many?", "type": "list", "items": ["I", "II", "III"], "sensitive": "S",
     "epsilon": 1.0, "required": False},
    {"id": "plain", "text": "How many?", "type": "list", "items": ["I", "II"], "sensitive": "T"},
    {"id": "year", "text": "Year?", "options": ["First", "Second"]}]}


def _types_sample(tmp_path, seed=31):
    survey = load_definition(_json(tmp_path, TYPES))
    _, rows = design_sample(seed)
    n = len(rows["w"])
    rng = np.random.default_rng(seed)
    codes = {q.id: rng.integers(q.qtype.n_cells(q), size=n) for q in survey.questions}
    plain = survey.question("plain")
    codes["plain"] = np.where(codes["plain"] == plain.k - 1, 0, codes["plain"])  # control counts at most J
    for qid in ("sites", "shop"):
        codes[qid][rng.choice(n, 6, replace=False)] = -1
    cells = {q.id: ["" if c < 0 else q.qtype.text_of(q, c) for c in codes[q.id]] for q in survey.questions}
    path = write_csv(tmp_path / "types.csv", {**cells, "w": rows["w"], "s": rows["s"], "c": rows["c"]})
    return survey, rows, codes, path


@pytest.mark.slow  # R itself
def test_weighted_check_all_ticks_equal_r_survey(tmp_path):
    """Each option of a check-all question is a binary randomized response at ε/K: its share is R's
    svymean of the tick's debiased indicator, its interval svyciprop's of the tick mapped through the
    tick's p and q, joined with the exact interval of the same tick share at Kish's n."""
    from deniable.client.multi import multi_mechanism

    survey, rows, codes, path = _types_sample(tmp_path)
    ours = {q["id"]: q for q in estimate_json(tmp_path / "survey.json", path, *DESIGN)["questions"]}
    columns, variables = {"s": rows["s"], "c": rows["c"], "w": rows["w"]}, []
    bits = {"sites": multi_mechanism(3, 2.0).bit, "owns": resolve(2, None)}
    for qid, k in (("sites", 3), ("owns", 2)):
        for j in range(k):
            tick = np.where(codes[qid] >= 0, (codes[qid] >> j) & 1, np.nan)
            columns[f"r_{qid}_{j}"] = tick
            columns[f"z_{qid}_{j}"] = (tick - bits[qid].q) / (bits[qid].p - bits[qid].q)
            variables += [f"z_{qid}_{j}", f"r_{qid}_{j}"]
    r = dict(zip(variables, svymean(tmp_path, columns, variables, weights="w", strata="s", cluster="c",
                                    kg_weights_df=True)))
    for qid, k in (("sites", 3), ("owns", 2)):
        m = bits[qid]
        record = ours[qid]
        assert record["weighted"] is True and record["n"] == int((codes[qid] >= 0).sum())
        assert [o["label"] for o in record["options"]] == list(survey.question(qid).options)
        for j, option in enumerate(record["options"]):
            mean, se, _, _ = r[f"z_{qid}_{j}"]
            share, _, low, high = r[f"r_{qid}_{j}"]
            assert [option["estimate"], option["std_error"], option["report_share"]] == \
                pytest.approx([mean, se, share], abs=1e-8), (qid, j)
            assert [option["ci_low"], option["ci_high"]] == pytest.approx(
                with_floor((low - m.q) / (m.p - m.q), (high - m.q) / (m.p - m.q), share,
                           kish_n(rows["w"] * (codes[qid] >= 0)), m.p, m.q), abs=1e-8), (qid, j)
    assert ours["sites"]["epsilon"] == pytest.approx(multi_mechanism(3, 2.0).epsilon)


@pytest.mark.slow  # R itself
@pytest.mark.parametrize("qid", ["shop", "plain"], ids=["randomized counts", "plain list"])
def test_weighted_list_experiment_equals_r_svycontrast(tmp_path, qid):
    """The prevalence is the difference of the arms' weighted means of each count's unbiased score
    ``(count − q·k(k − 1)/2)/(p − q)``: R's svycontrast of svyby(covmat = TRUE), with the t interval on
    the design's degrees of freedom."""
    from deniable.client.listexp import list_mechanism

    survey, rows, codes, path = _types_sample(tmp_path)
    q = survey.question(qid)
    rr = list_mechanism(len(q.options), q.epsilon).rr
    k = q.k
    answered = codes[qid] >= 0
    count = np.where(answered, codes[qid] % k, np.nan)
    columns = {"score": (count - rr.q * k * (k - 1) / 2) / (rr.p - rr.q),
               "arm": np.where(answered, codes[qid] // k, np.nan), "s": rows["s"], "c": rows["c"], "w": rows["w"]}
    diff, se, low, high, mean0, mean1, se0, se1 = svycontrast_arms(tmp_path, columns)
    record = {r["id"]: r for r in estimate_json(tmp_path / "survey.json", path, *DESIGN)["questions"]}[qid]
    assert record["n"] == int(answered.sum())
    assert record["n_treatment"] == int((codes[qid] // k == 1).sum())
    got = record["prevalence"]
    assert [got["estimate"], got["std_error"]] == pytest.approx([diff, se], abs=1e-8)
    assert [got["ci_low"], got["ci_high"]] == pytest.approx(np.clip([low, high], 0, 1), abs=1e-8)
    assert [record["control"]["estimate"], record["treatment"]["estimate"], record["control"]["std_error"],
            record["treatment"]["std_error"]] == pytest.approx([mean0, mean1, se0, se1], abs=1e-8)


def test_check_all_and_list_questions_weighted_by_group_and_in_every_format(tmp_path):
    """--by groups them as domains (a group's estimate is the whole sample's on the group's rows alone,
    with the design's strata and clusters); the table and the CSV show each, a list as three rows."""
    _, _, codes, path = _types_sample(tmp_path)
    grouped = estimate_json(tmp_path / "survey.json", path, *DESIGN, "--by", "year")
    by_id = {q["id"]: q["groups"] for q in grouped["questions"]}
    first = by_id["sites"][0]
    assert first["group"] == "First" and first["n"] == int(((codes["year"] == 0) & (codes["sites"] >= 0)).sum())
    assert len(first["options"]) == 3 and by_id["shop"][1]["prevalence"]["estimate"] is not None
    assert by_id["plain"][2] == {"group": "not answered", "not_answered": True, "n": 0, "empty": True,
                                 "weighted": True}
    table = run("estimate", tmp_path / "survey.json", path, *DESIGN)
    assert table.exit_code == 0, table.output
    assert "'S': " in table.stdout and "weighted mean count: control " in table.stdout
    assert "· weighted · ε = 2" in table.stdout
    csv_rows = run("estimate", tmp_path / "survey.json", path, *DESIGN, "--format", "csv").stdout.splitlines()
    assert [row.split(",")[1] for row in csv_rows if row.startswith("shop,")] == ["prevalence", "control", "treatment"]
    assert len([row for row in csv_rows if row.startswith("sites,")]) == 3
