"""``deniable estimate --weights COLUMN --strata COLUMN --cluster COLUMN``: design-based estimates of a
responses file with design columns, equal to R's survey package, run for real; and every bad design
column is one ``Error:`` line naming the column.

R's numbers: ``svydesign(ids = ~c, strata = ~s, weights = ~w, nest = TRUE)``, then ``svymean`` of each
option's debiased indicator ``([report = j] − q)/(p − q)`` (the estimate and its standard error) and
``svyciprop(method = "beta")`` of the report indicator, mapped through the mechanism (the interval);
tests/support/r_survey.py runs them.  ``deniable regress --weights`` is R's ``svyglm``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from deniable.client.mechanism import resolve
from deniable.server.cli import cli
from deniable.server.survey.definition import load_definition
from support.kish import exact_interval, join, kish_n, with_floor
from support.r_survey import svyglm, svymean, write_csv

ROOT = Path(__file__).resolve().parents[2]
SURVEY = ROOT / "examples" / "survey.json"  # drugs (ε 1, 2 options), cheated (ε 2, 3), year (asked directly, 3)


def design_sample(seed: int = 11):
    """Reports of the example survey from a stratified cluster sample with unequal weights; the cluster
    labels repeat across strata (clusters are nested in their stratum)."""
    rng = np.random.default_rng(seed)
    survey = load_definition(SURVEY)
    rows = {"s": [], "c": [], "w": [], **{q.id: [] for q in survey.questions}}
    for h, stratum in enumerate(["north", "south", "east"]):
        for c in range(int(rng.integers(3, 6))):
            for _ in range(int(rng.integers(5, 12))):
                rows["s"].append(stratum)
                rows["c"].append(str(c + 1))
                rows["w"].append(float(rng.gamma(2.0, 30.0)) * (1 + h))
                for q in survey.questions:
                    rows[q.id].append(int(rng.integers(q.k)))
    return survey, {key: np.array(values) for key, values in rows.items()}


def responses_csv(path: Path, survey, rows, extra=("w", "s", "c")) -> Path:
    """The rows as a responses CSV: the question columns as labels, then the design columns."""
    columns = {q.id: [q.options[i] if i >= 0 else "" for i in rows[q.id]] for q in survey.questions}
    columns.update({name: rows[name] for name in extra})
    return write_csv(path, columns)


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def estimate_json(*args) -> dict:
    result = run("estimate", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow  # R itself
@pytest.mark.parametrize("skipped", [0, 9], ids=["all answered", "cheated skipped by some"])
def test_weighted_estimates_equal_r_survey(tmp_path, skipped):
    """Every option's estimate, standard error and interval equal R's (the interval joined with the exact
    interval of the same report share at the question's Kish effective sample size: support/kish.py); a
    question some respondents skipped is a domain (R: ``na.rm = TRUE``, the design keeping its clusters)."""
    survey, rows = design_sample()
    rows["cheated"][np.random.default_rng(1).choice(len(rows["w"]), skipped, replace=False)] = -1
    path = responses_csv(tmp_path / "responses.csv", survey, rows)
    ours = estimate_json(SURVEY, path, "--weights", "w", "--strata", "s", "--cluster", "c")

    columns, variables = {"s": rows["s"], "c": rows["c"], "w": rows["w"]}, []
    for q in survey.questions:
        m = resolve(q.k, q.epsilon)
        answered = rows[q.id] >= 0
        for j in range(q.k):
            report = np.where(answered, (rows[q.id] == j).astype(float), np.nan)
            columns[f"r_{q.id}_{j}"] = report
            columns[f"z_{q.id}_{j}"] = (report - m.q) / (m.p - m.q)
            variables += [f"z_{q.id}_{j}", f"r_{q.id}_{j}"]
    r = dict(zip(variables, svymean(tmp_path, columns, variables, weights="w", strata="s", cluster="c",
                                    kg_weights_df=True)))  # svyciprop's recipe on the weights' df

    assert ours["weighted"] is True
    w = rows["w"]
    clusters = len({(s, c) for s, c in zip(rows["s"], rows["c"])})
    assert ours["design"] == {"weights": "w", "strata": "s", "cluster": "c", "fpc": None, "n": len(w),
                              "n_strata": 3, "n_clusters": clusters, "degrees_of_freedom": clusters - 3,
                              "effective_n": pytest.approx(w.sum() ** 2 / (w ** 2).sum(), rel=1e-12)}
    for q, record in zip(survey.questions, ours["questions"]):
        m = resolve(q.k, q.epsilon)
        assert record["weighted"] is True and record["n"] == int((rows[q.id] >= 0).sum())
        for j, option in enumerate(record["options"]):
            mean, se, _, _ = r[f"z_{q.id}_{j}"]
            share, _, low, high = r[f"r_{q.id}_{j}"]
            assert option["estimate"] == pytest.approx(mean, abs=1e-8), (q.id, j)
            assert option["std_error"] == pytest.approx(se, abs=1e-8), (q.id, j)
            assert option["report_share"] == pytest.approx(share, abs=1e-8), (q.id, j)
            expected = with_floor((low - m.q) / (m.p - m.q), (high - m.q) / (m.p - m.q), share,
                                  kish_n(w * (rows[q.id] >= 0)), m.p, m.q)
            assert [option["ci_low"], option["ci_high"]] == pytest.approx(expected, abs=1e-8), (q.id, j)


NUMBERS_SURVEY = {"slug": "numbers", "title": "Numbers", "questions": [
    {"id": "age", "text": "Age?", "type": "numeric", "min": 0, "max": 12, "epsilon": 2.0, "mechanism": "grid",
     "grid": 4},
    {"id": "hours", "text": "Hours?", "type": "numeric", "min": 0, "max": 10, "step": 0.5, "epsilon": 1.0,
     "mechanism": "laplace"},
    {"id": "kids", "text": "Children?", "type": "numeric", "min": 0, "max": 5, "required": False}]}


@pytest.mark.slow  # R itself
def test_weighted_numeric_means_equal_r_survey(tmp_path):
    """A numeric question's weighted mean is the weighted mean of each report's unbiased score —
    the grid value debiased, ``(v(R) − q Σ_j v_j)/(p − q)``, or a Laplace report's value — with R's
    linearized standard error and t interval on the design's degrees of freedom."""
    survey = load_definition(_json(tmp_path, NUMBERS_SURVEY))
    rng = np.random.default_rng(4)
    _, rows = design_sample(9)
    n = len(rows["w"])
    codes = {q.id: rng.integers(q.qtype.n_cells(q), size=n) for q in survey.questions}
    codes["kids"][:6] = -1  # skipped: a domain
    columns = {q.id: ["" if c < 0 else q.qtype.text_of(q, c) for c in codes[q.id]] for q in survey.questions}
    path = write_csv(tmp_path / "r.csv", {**columns, "w": rows["w"], "s": rows["s"], "c": rows["c"]})
    ours = estimate_json(tmp_path / "survey.json", path, "--weights", "w", "--strata", "s", "--cluster", "c")

    scores = {}
    for q in survey.questions:
        values = np.array([np.nan if c < 0 else float(q.value(q.qtype.steps_of(q, c))) for c in codes[q.id]])
        if q.id == "age":  # grid randomized response: G + 1 = 5 grid points 0, 3, 6, 9, 12
            rr = resolve(5, 2.0)
            values = (values - rr.q * (0 + 3 + 6 + 9 + 12)) / (rr.p - rr.q)
        scores[q.id] = values
    expected = svymean(tmp_path, {**scores, "w": rows["w"], "s": rows["s"], "c": rows["c"]}, list(scores),
                       weights="w", strata="s", cluster="c")
    for (mean, se, low, high), record in zip(expected, ours["questions"]):
        assert record["weighted"] is True
        got = record["mean"]
        assert [got["estimate"], got["std_error"], got["ci_low"], got["ci_high"]] == \
            pytest.approx([mean, se, low, high], abs=1e-8), record["id"]
    assert ours["questions"][2]["n"] == n - 6


def test_parquet_design_columns_give_the_numbers_of_the_csv(tmp_path):
    survey, rows = design_sample(3)
    csv_path = responses_csv(tmp_path / "r.csv", survey, rows)
    table = pa.table({**{q.id: pa.array([q.options[i] for i in rows[q.id]]).dictionary_encode()
                         for q in survey.questions},
                      "w": pa.array(rows["w"]), "s": pa.array(rows["s"]),
                      "c": pa.array(rows["c"].astype(int))})  # clusters as numbers: labels all the same
    pq.write_table(table, tmp_path / "r.parquet")
    args = ("--weights", "w", "--strata", "s", "--cluster", "c")
    assert estimate_json(SURVEY, tmp_path / "r.parquet", *args) == estimate_json(SURVEY, csv_path, *args)


def test_the_table_says_the_estimates_are_weighted_and_names_the_design(tmp_path):
    survey, rows = design_sample(5)
    path = responses_csv(tmp_path / "r.csv", survey, rows)
    result = run("estimate", SURVEY, path, "--weights", "w", "--strata", "s", "--cluster", "c")
    assert result.exit_code == 0, result.output
    w = rows["w"]
    assert "design: weighted by column 'w' · 3 strata (column 's') · " in result.stdout
    assert f"Kish effective sample size {w.sum() ** 2 / (w ** 2).sum():,.1f} of {len(w):,}" in result.stdout
    assert result.stdout.count("· weighted ·") == len(survey.questions)
    only_weights = responses_csv(tmp_path / "w.csv", survey, rows, extra=("w",))
    csv_out = run("estimate", SURVEY, only_weights, "--weights", "w", "--format", "csv")
    assert csv_out.exit_code == 0, csv_out.output
    header, first = csv_out.stdout.splitlines()[:2]
    assert header.endswith("weights,strata,cluster,fpc") and first.endswith(",w,,,")


def test_sampling_weights_change_the_estimate_and_widen_the_interval(tmp_path):
    """Weighted by w (unequal), the shares move and the interval is wider than the unweighted one."""
    survey, rows = design_sample(7)
    path = responses_csv(tmp_path / "r.csv", survey, rows, extra=("w",))
    plain_path = responses_csv(tmp_path / "plain.csv", survey, rows, extra=())
    weighted = estimate_json(SURVEY, path, "--weights", "w")["questions"][2]["options"][0]  # year: asked directly
    plain = estimate_json(SURVEY, plain_path)["questions"][2]["options"][0]
    assert weighted["estimate"] != pytest.approx(plain["estimate"], abs=1e-6)
    assert weighted["ci_high"] - weighted["ci_low"] > plain["ci_high"] - plain["ci_low"]


def _csv(tmp_path, rows_text: str, header="drugs,cheated,year,w,s,c") -> Path:
    path = tmp_path / "bad.csv"
    path.write_text(header + "\n" + rows_text, encoding="utf-8")
    return path


GOOD_ROWS = "Yes,Never,First,1.5,a,1\nNo,Once,Second,2,a,2\nNo,Never,First,1,b,1\nYes,Once,Third or later,3,b,2\n"
DESIGN = ("--weights", "w", "--strata", "s", "--cluster", "c")
MULTI_SURVEY = {"slug": "m", "title": "M", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "sites", "text": "Which sites?", "type": "multi", "options": ["A", "B"], "epsilon": 1.0}]}
FORCED = {"slug": "m", "title": "M", "questions": [
    MULTI_SURVEY["questions"][0],
    {"id": "forced", "text": "Forced?", "options": ["Yes", "No"],
     "design": {"name": "forced", "p": 0.4, "forced": [0.35, 0.25]}}]}
DESIGNED_MULTI = {"slug": "m", "title": "M", "questions": [
    MULTI_SURVEY["questions"][0],
    {"id": "sites", "text": "Which sites?", "type": "multi", "options": ["A", "B"],
     "design": {"name": "warner", "p": 0.75}}]}

# (name, how to make the arguments, substrings of the one Error: line)
BAD_DESIGNS = [
    ("missing column", lambda d: [SURVEY, _csv(d, GOOD_ROWS), "--weights", "weight"],
     ["bad.csv:1: no column 'weight' for the sampling design"]),
    ("negative weight", lambda d: [SURVEY, _csv(d, GOOD_ROWS + "No,Never,First,-2,b,1\n"), *DESIGN],
     ["bad.csv:6: column 'w' (the sampling weights): must be a finite number greater than 0, got '-2'"]),
    ("zero weight", lambda d: [SURVEY, _csv(d, "No,Never,First,0,b,1\n" + GOOD_ROWS), *DESIGN],
     ["bad.csv:2: column 'w'", "got '0'"]),
    ("nan weight", lambda d: [SURVEY, _csv(d, GOOD_ROWS + "No,Never,First,NaN,b,1\n"), *DESIGN],
     ["bad.csv:6: column 'w'", "got 'NaN'"]),
    ("infinite weight", lambda d: [SURVEY, _csv(d, GOOD_ROWS.replace("1.5", "inf")), *DESIGN],
     ["bad.csv:2: column 'w'", "got 'inf'"]),
    ("text weight", lambda d: [SURVEY, _csv(d, GOOD_ROWS + "No,Never,First,heavy,b,1\n"), *DESIGN],
     ["bad.csv:6: column 'w'", "got 'heavy'"]),
    ("empty weight", lambda d: [SURVEY, _csv(d, GOOD_ROWS.replace("1.5", "")), *DESIGN],
     ["bad.csv:2: column 'w'", "got an empty cell"]),
    ("empty stratum", lambda d: [SURVEY, _csv(d, GOOD_ROWS.replace("2,a,2", "2,,2")), *DESIGN],
     ["bad.csv:3: column 's' (the strata): empty"]),
    ("unnamed design column", lambda d: [SURVEY, _csv(d, GOOD_ROWS)],
     ["bad.csv:1: unknown column 'w'", "--weights COLUMN"]),
    ("unnamed extra column", lambda d: [SURVEY, _csv(d, GOOD_ROWS), "--weights", "w", "--strata", "s"],
     ["bad.csv:1: unknown column 'c'"]),
    ("a question as weights", lambda d: [SURVEY, _csv(d, GOOD_ROWS), "--weights", "year"],
     ["column 'year' is a question, not a design column"]),
    ("single cluster stratum", lambda d: [SURVEY, _csv(d, GOOD_ROWS + "No,Never,First,2,z,1\n"), *DESIGN],
     ["column 's' (strata): a stratum has a single cluster"]),
    ("fpc below the clusters", lambda d: [SURVEY, _csv(d, GOOD_ROWS.replace("\n", ",1\n"),
                                                       "drugs,cheated,year,w,s,c,N"), *DESIGN, "--fpc", "N"],
     ["column 'N' (fpc): must be one number per stratum, at least the clusters sampled in it"]),
    ("database", lambda d: ["--db", d / "x.db", "student-life", "--weights", "w"],
     ["--weights: a database has no weight column"]),
    ("counts without the weights' column", lambda d: [SURVEY, "--counts", _csv(d, "Yes,3\n", "drugs,count"),
                                                      "--weights", "w"],
     ["no column 'w' for the sampling design"]),
    ("counts with a weight of 0", lambda d: [SURVEY, "--counts", _csv(d, "Yes,3,0\nNo,2,1\n", "drugs,count,w"),
                                             "--weights", "w"],
     ["line 2", "column 'w' (the sampling weights)"]),
]


def test_counts_with_design_columns_are_their_respondents(tmp_path):
    """A counts file whose rows carry the design columns of their ``count`` respondents (cells of a
    post-stratification, say) gives exactly what the responses file of those respondents gives."""
    survey, rows = design_sample()
    cluster_weight = {}  # one weight per cluster: its respondents who answered alike are one row of counts
    rows["w"] = np.array([cluster_weight.setdefault((s, c), w) for s, c, w in zip(rows["s"], rows["c"], rows["w"])])
    codes = np.stack([rows[q.id] for q in survey.questions], axis=1)
    keys = [tuple(map(int, c)) + (float(w), str(s), str(cl)) for c, w, s, cl in zip(codes, rows["w"], rows["s"],
                                                                                    rows["c"])]
    cells: dict = {}
    for key in keys:
        cells[key] = cells.get(key, 0) + 1
    assert len(cells) < len(keys)  # some rows stand for several respondents
    ids = [q.id for q in survey.questions]
    counts = write_csv(tmp_path / "counts.csv", {
        **{qid: [survey.question(qid).options[key[i]] for key in cells] for i, qid in enumerate(ids)},
        "count": list(cells.values()), "w": [key[-3] for key in cells], "s": [key[-2] for key in cells],
        "c": [key[-1] for key in cells]})
    responses = responses_csv(tmp_path / "r.csv", survey, rows)
    design = ("--weights", "w", "--strata", "s", "--cluster", "c")
    for extra in ((), ("--by", "year")):
        found, expected = (estimate_json(SURVEY, *given, *design, *extra) for given in (("--counts", counts),
                                                                                        (responses,)))
        assert numbers(found) == pytest.approx(numbers(expected), rel=1e-12, abs=1e-15)
        assert json.dumps(found).count('"') == json.dumps(expected).count('"')


def numbers(document) -> list:
    """Every number of a JSON document, in order (the rest compared through its shape)."""
    if isinstance(document, dict):
        return [x for key in sorted(document) for x in numbers(document[key])]
    if isinstance(document, list):
        return [x for item in document for x in numbers(item)]
    return [document] if isinstance(document, (int, float)) and not isinstance(document, bool) else []


def _json(folder: Path, data: dict) -> Path:
    path = folder / "survey.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _parquet(folder: Path, weights) -> Path:
    path = folder / "bad.parquet"
    pq.write_table(pa.table({"drugs": ["Yes", "No", "No"], "cheated": ["Never", "Once", "Never"],
                             "year": ["First", "First", "Second"], "w": pa.array(weights, pa.float64())}), path)
    return path


BAD_DESIGNS += [
    ("parquet negative weight", lambda d: [SURVEY, _parquet(d, [1.0, -0.5, 2.0]), "--weights", "w"],
     ["bad.parquet: row 2: column 'w' (the sampling weights): must be a finite number greater than 0, got -0.5"]),
    ("parquet nan weight", lambda d: [SURVEY, _parquet(d, [1.0, 2.0, float("nan")]), "--weights", "w"],
     ["bad.parquet: row 3: column 'w'", "got nan"]),
    ("parquet unnamed column", lambda d: [SURVEY, _parquet(d, [1.0, 1.0, 1.0])],
     ["bad.parquet: unknown column 'w'", "--weights COLUMN"]),
]


@pytest.mark.parametrize("make_args,expected", [pytest.param(m, e, id=n) for n, m, e in BAD_DESIGNS])
def test_bad_designs_fail_with_one_line_naming_the_column(tmp_path, make_args, expected):
    result = CliRunner().invoke(cli, ["estimate", *(str(a) for a in make_args(tmp_path))])
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # handled, not a crash
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    for text in expected:
        assert text in errors[0], errors[0]
    assert result.stdout == ""


@pytest.mark.parametrize("args,expected", [
    (("--strata", "s"), "--strata goes with --weights"),
    (("--weights", "w", "--method", "wilson"), "--method does not go with --weights"),
])
def test_options_that_do_not_go_with_weights_are_usage_errors(tmp_path, args, expected):
    result = run("estimate", SURVEY, _csv(tmp_path, GOOD_ROWS), *args)
    assert result.exit_code == 2 and expected in result.stderr, result.output


def test_simultaneous_weighted_intervals_are_bonferroni_over_the_options(tmp_path):
    """--simultaneous --weights: each option's Korn–Graubard interval at 1 − α/k (the estimator checked
    against R's svyciprop at any level above), so the k intervals hold together; wider than one at a
    time, the estimates and standard errors unchanged; with --by, in every group."""
    from deniable.estimators.weights import survey_design, weighted_estimate

    survey, rows = design_sample(23)
    path = responses_csv(tmp_path / "responses.csv", survey, rows)
    one = estimate_json(SURVEY, path, "--weights", "w", "--strata", "s", "--cluster", "c")
    both = estimate_json(SURVEY, path, "--weights", "w", "--strata", "s", "--cluster", "c", "--simultaneous")
    design = survey_design(rows["w"], strata=rows["s"], clusters=rows["c"])
    for q, single, joint in zip(survey.questions, one["questions"], both["questions"]):
        assert joint["simultaneous"] is True and single["simultaneous"] is False
        assert "Bonferroni over the" in joint["method"] and joint["confidence"] == 0.95
        direct = weighted_estimate(rows[q.id], q.epsilon, design, k=q.k, confidence=1 - 0.05 / q.k)
        for i, (a, b) in enumerate(zip(single["options"], joint["options"])):
            assert b["estimate"] == a["estimate"] and b["std_error"] == a["std_error"]
            assert [b["ci_low"], b["ci_high"]] == pytest.approx([direct.ci_low[i], direct.ci_high[i]], abs=1e-12)
            assert b["ci_high"] - b["ci_low"] > a["ci_high"] - a["ci_low"] or b["ci_high"] == 1 or b["ci_low"] == 0
    by = estimate_json(SURVEY, path, "--weights", "w", "--strata", "s", "--cluster", "c", "--simultaneous",
                       "--by", "year")
    groups = [g for q in by["questions"] for g in q["groups"] if not g.get("empty")]
    assert groups and all(g["simultaneous"] is True for g in groups)


def _examples():
    from deniable.server.survey import questions

    return [pytest.param(qtype, i, id=f"{qtype.name}-{i}") for qtype in questions.all_types()
            for i in range(len(qtype.examples()))]


@pytest.mark.parametrize("qtype,index", _examples())
def test_every_type_is_weighted_or_refused_by_name(tmp_path, qtype, index):
    """Each example question of every registered type: estimated with equal weights — then the same
    estimate as without weights — or refused with one line naming the question."""
    from deniable.server.survey.responses_csv import write_responses_csv
    from deniable.server.survey.simulate import load_truth, simulate_dataset

    definition, truth = qtype.examples()[index]
    survey_path = _json(tmp_path, {"slug": "one", "title": "One", "questions": [{"id": "x", **definition}]})
    survey = load_definition(survey_path)
    truth_path = tmp_path / "truth.json"
    truth_path.write_text(json.dumps({"x": truth}), encoding="utf-8")
    dataset = simulate_dataset(survey, load_truth(truth_path, survey), 400, np.random.default_rng(index))
    plain = tmp_path / "plain.csv"
    write_responses_csv(plain, dataset)
    lines = plain.read_text(encoding="utf-8").splitlines()
    weighted = tmp_path / "weighted.csv"
    weighted.write_text("\n".join([lines[0], lines[1] + ",w"] + [line + ",2.5" for line in lines[2:]]) + "\n",
                        encoding="utf-8")
    result = run("estimate", survey_path, weighted, "--weights", "w", "--format", "json")
    if result.exit_code == 1:
        assert result.stderr.startswith("Error: --weights: question 'x' is ") and result.stdout == "", result.output
        return
    assert result.exit_code == 0, result.output
    ours = json.loads(result.stdout)["questions"][0]
    reference = estimate_json(survey_path, plain)["questions"][0]
    assert ours["weighted"] is True and ours["n"] == reference["n"]
    if "mean" in ours:
        assert ours["mean"]["estimate"] == pytest.approx(reference["mean"]["estimate"], abs=1e-9)
    elif "prevalence" in ours:  # a list experiment: the difference of the arms' means
        assert ours["prevalence"]["estimate"] == pytest.approx(reference["estimate"], abs=1e-9)
        assert ours["control"]["estimate"] == pytest.approx(reference["control"]["estimate"], abs=1e-9)
    else:
        assert [o["estimate"] for o in ours["options"]] == pytest.approx(
            [o["estimate"] for o in reference["options"]], abs=1e-9)


DIRECT_SURVEY = {"slug": "direct", "title": "Direct", "questions": [
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"]},
    {"id": "year", "text": "Year?", "options": ["First", "Second", "Third"]}]}


@pytest.mark.slow  # R itself
def test_weighted_regression_equals_r_svyglm(tmp_path):
    """``deniable regress --weights`` on a question asked directly is R's ``svyglm(family =
    quasibinomial())``: the same coefficients and sandwich standard errors."""
    survey_path = _json(tmp_path, DIRECT_SURVEY)
    _, rows = design_sample(13)
    rng = np.random.default_rng(13)
    year = rng.integers(0, 3, len(rows["w"]))
    yes = rng.random(len(year)) < np.array([0.2, 0.35, 0.5])[year] + 0.1 * (rows["s"] == "east")
    path = write_csv(tmp_path / "r.csv", {"drugs": np.where(yes, "Yes", "No"),
                                          "year": np.array(["First", "Second", "Third"])[year],
                                          "w": rows["w"], "s": rows["s"], "c": rows["c"]})
    result = run("regress", survey_path, path, "drugs ~ year", "--weights", "w", "--strata", "s", "--cluster", "c",
                 "--format", "json")
    assert result.exit_code == 0, result.output
    ours = json.loads(result.stdout)
    coef, se = svyglm(tmp_path, {"y": yes.astype(int), "x1": (year == 1).astype(int), "x2": (year == 2).astype(int),
                                 "s": rows["s"], "c": rows["c"], "w": rows["w"]})
    got = ours["coefficients"]
    assert [c["estimate"] for c in got] == pytest.approx(coef, rel=1e-7)
    assert [c["std_error"] for c in got] == pytest.approx(se, rel=1e-7)


def test_weighted_regression_refuses_the_database_and_stray_design_options(tmp_path):
    result = run("regress", "--db", tmp_path / "x.db", "student-life", "drugs ~ year", "--weights", "w")
    assert result.exit_code == 1 and "Error: --weights: a database has no weight column" in result.stderr
    result = run("regress", SURVEY, tmp_path / "r.csv", "drugs ~ year", "--cluster", "c")
    assert result.exit_code == 2 and "--cluster goes with --weights" in result.stderr


DESIGNED_SURVEY = {"slug": "designed", "title": "Designed", "questions": [
    {"id": "forced", "text": "Forced?", "options": ["Never", "Once", "Often"],
     "design": {"name": "forced", "p": 0.6, "forced": [0.2, 0.1, 0.1]}, "required": False},
    {"id": "warner", "text": "Warner?", "options": ["Yes", "No"], "design": {"name": "warner", "p": 0.75}},
    {"id": "custom", "text": "Custom?", "options": ["a", "b", "c"],
     "design": {"name": "custom", "matrix": [[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]}}]}


@pytest.mark.slow  # R itself
def test_designed_questions_weighted_estimates_equal_r_survey(tmp_path):
    """A single choice randomized by a design: each answer's estimate and standard error are R's
    ``svymean`` of the debiased indicator ``M⁺[t, report]``; the interval of forced response and of a
    binary design is ``svyciprop(method = "beta")``'s recipe for one report's indicator mapped through
    its affine map, a custom design with three answers gets the labelled union of the t interval and that
    recipe for the debiased indicator; each joined with the exact interval of the same report shares at
    the question's Kish effective sample size (support/kish.py; the custom design's: it holds R's)."""
    survey = load_definition(_json(tmp_path, DESIGNED_SURVEY))
    _, rows = design_sample(21)
    rng = np.random.default_rng(21)
    n = len(rows["w"])
    reports = {q.id: rng.integers(q.k, size=n) for q in survey.questions}
    reports["forced"][:5] = -1  # skipped: a domain
    columns = {q.id: ["" if r < 0 else q.options[r] for r in reports[q.id]] for q in survey.questions}
    path = write_csv(tmp_path / "r.csv", {**columns, "w": rows["w"], "s": rows["s"], "c": rows["c"]})
    ours = estimate_json(tmp_path / "survey.json", path, "--weights", "w", "--strata", "s", "--cluster", "c")

    design_columns, variables = {"s": rows["s"], "c": rows["c"], "w": rows["w"]}, []
    for q in survey.questions:
        pinv = np.linalg.pinv(q.mechanism.design.matrix)
        answered = reports[q.id] >= 0
        for t in range(q.k):
            design_columns[f"z_{q.id}_{t}"] = np.where(answered, pinv[t, np.maximum(reports[q.id], 0)], np.nan)
            design_columns[f"r_{q.id}_{t}"] = np.where(answered, (reports[q.id] == t).astype(float), np.nan)
            variables += [f"z_{q.id}_{t}", f"r_{q.id}_{t}"]
    r = dict(zip(variables, svymean(tmp_path, design_columns, variables, weights="w", strata="s", cluster="c",
                                    kg_weights_df=True)))
    records = {record["id"]: record for record in ours["questions"]}
    for q in survey.questions:
        record = records[q.id]
        assert record["weighted"] is True and record["n"] == int((reports[q.id] >= 0).sum())
        for t, option in enumerate(record["options"]):
            mean, se, _, _ = r[f"z_{q.id}_{t}"]
            assert option["estimate"] == pytest.approx(mean, abs=1e-8), (q.id, t)
            assert option["std_error"] == pytest.approx(se, abs=1e-8), (q.id, t)
    for t, option in enumerate(records["forced"]["options"]):  # λ_t = p_t + p π_t
        reported, _, low, high = r[f"r_forced_{t}"]
        share = [0.2, 0.1, 0.1][t]
        floor = exact_interval(reported, kish_n(rows["w"] * (reports["forced"] >= 0)), 0.6 + share, share)
        assert [option["ci_low"], option["ci_high"]] == pytest.approx(
            list(join((low - share) / 0.6, (high - share) / 0.6, floor)), abs=1e-8)
    reported, _, low, high = r["r_warner_0"]  # λ_0 = 0.25 + 0.5 π_0
    yes = records["warner"]["options"][0]
    assert [yes["ci_low"], yes["ci_high"]] == pytest.approx(
        list(with_floor((low - 0.25) / 0.5, (high - 0.25) / 0.5, reported, kish_n(rows["w"]), 0.75, 0.25)), abs=1e-8)
    for t, option in enumerate(records["custom"]["options"]):  # the union of two approximations, or wider
        mean, se, _, _ = r[f"z_custom_{t}"]
        assert option["ci_low"] <= mean <= option["ci_high"]
    assert records["warner"]["p"] == pytest.approx(0.75) and records["warner"]["q"] == pytest.approx(0.25)
    assert [records[q]["design"] for q in ("forced", "warner", "custom")] == ["forced", "warner", "custom"]
    assert records["custom"]["method"].startswith("the union of the t interval") and "and Korn-Graubard's beta " \
        "interval at the estimate's effective sample size" in records["custom"]["method"] and "clipped to [0, 1]" in \
        records["custom"]["method"]


RAKED_SURVEY = {"slug": "raked", "title": "Raked", "questions": [
    {"id": "age", "text": "Age?", "options": ["18-29", "30-49", "50+"]},
    {"id": "sex", "text": "Sex?", "options": ["female", "male"]},
    {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "cheated", "text": "Cheated?", "options": ["Never", "Once", "Often"], "epsilon": 2.0, "required": False},
    {"id": "kids", "text": "Children?", "type": "numeric", "min": 0, "max": 5, "required": False}]}
RAKED_MARGINS = {"age": [0.3, 0.4, 0.3], "sex": [0.52, 0.48]}


@pytest.mark.slow  # R itself
def test_raking_from_sampling_weights_equals_r_rake_of_the_weighted_design(tmp_path):
    """``--rake MARGINS.json --weights w --strata s --cluster c`` starts raking from the sampling
    weights: the raked weights, every estimate, standard error and interval equal R's ``rake()`` of
    the weighted, stratified, clustered ``svydesign`` (the calibrated influence values through the
    design's strata and clusters, Korn–Graubard on the design's degrees of freedom, joined with the exact
    interval of the same report share at the raked weights' Kish effective sample size) to 1e-8, and the
    unraked estimates beside are ``deniable estimate --weights``'s own."""
    from support.r_survey import rake_design_svymean

    survey_path = _json(tmp_path, RAKED_SURVEY)
    survey = load_definition(survey_path)
    _, rows = design_sample(19)
    n = len(rows["w"])
    rng = np.random.default_rng(19)
    codes = {q.id: rng.integers(q.qtype.n_cells(q), size=n) for q in survey.questions}
    codes["cheated"][rng.choice(n, 7, replace=False)] = -1
    codes["kids"][rng.choice(n, 5, replace=False)] = -1
    cells = {q.id: ["" if c < 0 else q.qtype.text_of(q, c) for c in codes[q.id]] for q in survey.questions}
    path = write_csv(tmp_path / "r.csv", {**cells, "w": rows["w"], "s": rows["s"], "c": rows["c"]})
    margins = tmp_path / "margins.json"
    margins.write_text(json.dumps({qid: dict(zip(survey.question(qid).options, shares))
                                   for qid, shares in RAKED_MARGINS.items()}), encoding="utf-8")
    ours = estimate_json(survey_path, path, "--rake", margins, *DESIGN)
    weighted = estimate_json(survey_path, path, *DESIGN)

    columns, variables = {"w": rows["w"], "s": rows["s"], "c": rows["c"], "age": codes["age"],
                          "sex": codes["sex"]}, []
    for qid in ("drugs", "cheated"):
        q = survey.question(qid)
        m = resolve(q.k, q.epsilon)
        for j in range(q.k):
            report = np.where(codes[qid] >= 0, (codes[qid] == j).astype(float), np.nan)
            columns[f"r_{qid}_{j}"], columns[f"z_{qid}_{j}"] = report, (report - m.q) / (m.p - m.q)
            variables += [f"z_{qid}_{j}", f"r_{qid}_{j}"]
    columns["kids"] = np.where(codes["kids"] >= 0, codes["kids"].astype(float), np.nan)
    variables.append("kids")
    totals = {qid: np.array(shares) * rows["w"].sum() for qid, shares in RAKED_MARGINS.items()}
    values, r_weights = rake_design_svymean(tmp_path, columns, totals, variables, strata="s", cluster="c",
                                            kg_weights_df=True)
    r = dict(zip(variables, values))

    raking = ours["raking"]
    assert raking["base_weights"] == "w"
    assert raking["weights"]["effective_n"] == pytest.approx(r_weights.sum() ** 2 / (r_weights ** 2).sum(), rel=1e-8)
    assert raking["weights"]["largest"] / raking["weights"]["smallest"] == \
        pytest.approx(r_weights.max() / r_weights.min(), rel=1e-8)
    records = {record["id"]: record for record in ours["questions"]}
    plain = {record["id"]: record for record in weighted["questions"]}
    for qid in ("drugs", "cheated"):
        q = survey.question(qid)
        m = resolve(q.k, q.epsilon)
        for j, option in enumerate(records[qid]["options"]):
            mean, se, _, _ = r[f"z_{qid}_{j}"]
            share, _, low, high = r[f"r_{qid}_{j}"]
            assert [option["estimate"], option["std_error"], option["report_share"]] == \
                pytest.approx([mean, se, share], abs=1e-8), (qid, j)
            n_kish = kish_n(r_weights * (codes[qid] >= 0))
            assert [option["ci_low"], option["ci_high"]] == pytest.approx(
                with_floor((low - m.q) / (m.p - m.q), (high - m.q) / (m.p - m.q), share, n_kish, m.p, m.q),
                abs=1e-8), (qid, j)
            unraked = plain[qid]["options"][j]
            assert option["unraked"] == pytest.approx({key: unraked[key] for key in option["unraked"]}, abs=1e-12)
    got = records["kids"]["mean"]
    assert [got["estimate"], got["std_error"], got["ci_low"], got["ci_high"]] == pytest.approx(list(r["kids"]),
                                                                                                abs=1e-8)
    assert records["kids"]["unraked"]["estimate"] == pytest.approx(plain["kids"]["mean"]["estimate"], abs=1e-12)


def test_raking_from_sampling_weights_in_every_format_and_what_it_refuses(tmp_path):
    survey_path = _json(tmp_path, RAKED_SURVEY)
    path = _csv(tmp_path, "18-29,female,Yes,Never,1,2\n30-49,male,No,,0,1\n50+,female,No,Once,2,4\n"
                          "50+,male,Yes,Often,,3\n18-29,male,No,Never,3,1\n30-49,female,Yes,Once,1,2\n",
                header="age,sex,drugs,cheated,kids,w")
    margins = tmp_path / "m.json"
    margins.write_text(json.dumps({"sex": {"female": 0.5, "male": 0.5}}), encoding="utf-8")
    table = run("estimate", survey_path, path, "--rake", margins, "--weights", "w")
    assert table.exit_code == 0, table.output
    assert "raked from the sampling weights of column 'w' to the margins of 'sex'" in table.stdout
    csv_out = run("estimate", survey_path, path, "--rake", margins, "--weights", "w", "--trim", "0.2,5",
                  "--format", "csv")
    assert csv_out.exit_code == 0, csv_out.output
    header = csv_out.stdout.splitlines()[0].split(",")
    assert header[-4:] == ["unraked_estimate", "unraked_std_error", "raked_to", "base_weights"]
    assert csv_out.stdout.splitlines()[1].endswith(",sex,w")
    for args, expected, code in [
        (("--db", tmp_path / "x.db", "raked", "--rake", margins, "--weights", "w"),
         "Error: --weights: a database has no weight column", 1),
        ((survey_path, path, "--rake", margins, "--weights", "nope"), "no column 'nope' for the sampling design", 1),
        ((survey_path, path, "--rake", margins, "--cluster", "c"), "--cluster goes with --weights", 2),
    ]:
        result = run("estimate", *args)
        assert result.exit_code == code and expected in result.stderr, result.output
        assert result.stdout == ""


def test_raking_estimates_a_designed_question_through_its_design(tmp_path):
    """A designed question is raked through its design's inverse (tests/unit/test_rake_types.py checks
    it against R), never as k-ary randomized response."""
    survey_path = _json(tmp_path, {**DESIGNED_SURVEY, "questions": [
        DESIGNED_SURVEY["questions"][1], {"id": "year", "text": "Year?", "options": ["First", "Second"]}]})
    path = write_csv(tmp_path / "r.csv", {"warner": ["Yes", "No", "No", "Yes"], "year": ["First", "Second"] * 2})
    margins = tmp_path / "m.json"
    margins.write_text(json.dumps({"year": {"First": 0.4, "Second": 0.6}}), encoding="utf-8")
    result = run("estimate", survey_path, path, "--rake", margins)
    assert result.exit_code == 0, result.output
    assert "not weighted" not in result.stdout and "warner: Warner?" in result.stdout
    assert "warner design" in result.stdout and "raking: calibration variance" in result.stdout
