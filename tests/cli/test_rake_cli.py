"""``deniable estimate --rake MARGINS.json``: the respondents raked to population margins of questions
asked directly, with R's calibration variance, equal to R's survey package run for real
(``rake()`` then ``svymean`` and ``svyciprop(method = "beta")``); the same numbers from a responses file
and from a database's answer patterns; trimming; and every bad margin is one ``Error:`` line naming
its field.

R's numbers: ``svydesign(ids = ~1, weights = ~w)`` with ``w = 1``, ``rake()`` to the margins (in the
file's order, as population totals) run to convergence, then ``svymean`` of each option's debiased
indicator ``([report = j] − q)/(p − q)`` and ``svyciprop`` of the report indicator, mapped through the
mechanism (tests/support/r_survey.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.client.mechanism import resolve
from deniable.server.cli import cli
from deniable.server.store.db import init_db
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition
from support.kish import kish_n, with_floor
from support.r_survey import rake_svymean, write_csv

DEFINITION = {"slug": "panel", "title": "Panel", "questions": [
    {"id": "drugs", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "cheat", "text": "Cheated?", "options": ["Never", "Once", "Often"], "epsilon": 2.0},
    {"id": "smoke", "text": "Smoke?", "options": ["Yes", "No"], "required": False},
    {"id": "age", "text": "Age group", "options": ["18-29", "30-49", "50+"]},
    {"id": "sex", "text": "Sex", "options": ["female", "male"]},
]}
MARGINS = {"age": {"18-29": 0.3, "30-49": 0.4, "50+": 0.3}, "sex": {"0": 0.52, "male": 0.48}}


def sample(n: int = 400, seed: int = 5):
    """Option indices per question: an unbalanced sample of age and sex, answers that depend on them,
    some not answering ``smoke``."""
    rng = np.random.default_rng(seed)
    age = rng.choice(3, n, p=[0.55, 0.3, 0.15])
    sex = rng.choice(2, n, p=[0.65, 0.35])
    rows = {"age": age, "sex": sex}
    rows["drugs"] = (rng.random(n) > 0.15 + 0.2 * age).astype(int)
    rows["cheat"] = np.minimum(rng.poisson(0.3 + 0.4 * sex), 2)
    rows["smoke"] = np.where(rng.random(n) < 0.1, -1, (rng.random(n) > 0.3 + 0.1 * age).astype(int))
    return rows


def survey():
    return parse_definition(DEFINITION)


def write_files(folder: Path, rows, margins=MARGINS) -> tuple[Path, Path, Path]:
    s = survey()
    definition = folder / "survey.json"
    definition.write_text(json.dumps(DEFINITION), encoding="utf-8")
    responses = write_csv(folder / "responses.csv", {q.id: [q.options[i] if i >= 0 else "" for i in rows[q.id]]
                                                     for q in s.questions})
    margins_path = folder / "margins.json"
    margins_path.write_text(margins if isinstance(margins, str) else json.dumps(margins), encoding="utf-8")
    return definition, responses, margins_path


def assert_close(a, b, path="") -> None:
    """Equal documents, their floats to 1e-12."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), path
        for key in a:
            assert_close(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-12, abs=1e-12), path
    else:
        assert a == b, path


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def estimate_json(*args) -> dict:
    result = run("estimate", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.slow  # R itself
def test_raked_estimates_equal_r_rake(tmp_path):
    """Every option's estimate, standard error and interval equal R's after ``rake()`` to 1e-6 (the interval
    joined with the exact interval of the same report share at the raked weights' Kish effective sample
    size, support/kish.py): a question asked directly (p = 1), randomized ones, and one some respondents
    skipped (a domain)."""
    rows = sample()
    definition, responses, margins_path = write_files(tmp_path, rows)
    ours = estimate_json(definition, responses, "--rake", margins_path)

    s = survey()
    n = rows["age"].size
    columns, variables = {"w": np.ones(n), "age": rows["age"], "sex": rows["sex"]}, []
    for q in s.questions:
        m = resolve(q.k, q.epsilon)
        answered = rows[q.id] >= 0
        for j in range(q.k):
            report = np.where(answered, (rows[q.id] == j).astype(float), np.nan)
            columns[f"r_{q.id}_{j}"] = report
            columns[f"z_{q.id}_{j}"] = (report - m.q) / (m.p - m.q)
            variables += [f"z_{q.id}_{j}", f"r_{q.id}_{j}"]
    totals = {"age": np.array([0.3, 0.4, 0.3]) * n, "sex": np.array([0.52, 0.48]) * n}
    values, r_weights = rake_svymean(tmp_path, columns, totals, variables)
    r = dict(zip(variables, values))

    raking = ours["raking"]
    assert raking["achieved"] == {"age": pytest.approx({"18-29": 0.3, "30-49": 0.4, "50+": 0.3}, abs=1e-9),
                                  "sex": pytest.approx({"female": 0.52, "male": 0.48}, abs=1e-9)}
    assert raking["weights"]["smallest"] == pytest.approx(r_weights.min(), rel=1e-8)
    assert raking["weights"]["largest"] == pytest.approx(r_weights.max(), rel=1e-8)
    assert raking["weights"]["effective_n"] == pytest.approx(r_weights.sum() ** 2 / (r_weights ** 2).sum(), rel=1e-8)
    checked = 0
    for q, record in zip(s.questions, ours["questions"]):
        m = resolve(q.k, q.epsilon)
        assert record["id"] == q.id and record["raked"] is True
        for j, option in enumerate(record["options"]):
            mean, se, _, _ = r[f"z_{q.id}_{j}"]
            share, _, low, high = r[f"r_{q.id}_{j}"]
            assert option["estimate"] == pytest.approx(mean, abs=1e-6), (q.id, j)
            assert option["report_share"] == pytest.approx(share, abs=1e-6), (q.id, j)
            if q.id in MARGINS:  # calibrated exactly: no variance (R's is rounding)
                assert option["std_error"] == pytest.approx(0, abs=1e-6)
                continue
            assert option["std_error"] == pytest.approx(se, abs=1e-6), (q.id, j)
            expected = with_floor((low - m.q) / (m.p - m.q), (high - m.q) / (m.p - m.q), share,
                                  kish_n(r_weights * (rows[q.id] >= 0)), m.p, m.q)
            assert [option["ci_low"], option["ci_high"]] == pytest.approx(expected, abs=1e-6), (q.id, j)
            checked += 1
    assert checked == 2 + 3 + 2


def test_raking_changes_the_estimates_and_the_standard_errors(tmp_path):
    """Weights that correct an unbalanced sample move the estimates of answers that depend on age; the
    unweighted numbers beside them are the unweighted estimator's."""
    rows = sample()
    definition, responses, margins_path = write_files(tmp_path, rows)
    raked = estimate_json(definition, responses, "--rake", margins_path)
    plain = estimate_json(definition, responses)
    drugs = raked["questions"][0]["options"][0]
    assert drugs["unweighted"]["estimate"] == pytest.approx(plain["questions"][0]["options"][0]["estimate"], abs=1e-12)
    assert abs(drugs["estimate"] - drugs["unweighted"]["estimate"]) > 0.01
    assert drugs["std_error"] != pytest.approx(drugs["unweighted"]["std_error"], rel=1e-3)


def test_the_database_gives_the_numbers_of_the_file(tmp_path):
    """From a database the numbers come from the answer patterns: the same as from the responses file."""
    rows = sample()
    definition, responses, margins_path = write_files(tmp_path, rows)
    db_path = tmp_path / "deniable.db"
    db = init_db(db_path)
    stored = insert_survey(db, survey(), status="open")
    insert_many(db, stored, rows)
    db.conn.close()
    from_db = estimate_json("--db", db_path, "panel", "--rake", margins_path)
    from_file = estimate_json(definition, responses, "--rake", margins_path)
    assert_close(from_db, from_file)  # the same numbers, summed in another order
    table = run("estimate", "--db", db_path, "panel", "--rake", margins_path)
    assert table.exit_code == 0, table.output
    assert "raked to the margins of 'age', 'sex'" in table.stdout and "Kish effective sample size" in table.stdout
    assert "achieved" in table.stdout


def test_trimming_bounds_the_weights_and_keeps_the_margins(tmp_path):
    rows = sample()
    definition, responses, margins_path = write_files(tmp_path, rows)
    untrimmed = estimate_json(definition, responses, "--rake", margins_path)["raking"]
    low, high = 0.41, 2.6  # feasible: a linear program finds cell weights within them that meet the margins
    assert untrimmed["weights"]["smallest"] < low and untrimmed["weights"]["largest"] > high  # it has work to do
    trimmed = estimate_json(definition, responses, "--rake", margins_path, "--trim", f"{low},{high}")["raking"]
    assert low - 1e-12 <= trimmed["weights"]["smallest"] and trimmed["weights"]["largest"] <= high + 1e-12
    assert trimmed["achieved"]["age"] == pytest.approx(MARGINS["age"], abs=1e-9)
    assert trimmed["trim"]["trimmed"] > 0
    assert trimmed["trim"]["untrimmed"] == untrimmed["weights"]
    assert trimmed["weights"]["effective_n"] != untrimmed["weights"]["effective_n"]
    table = run("estimate", definition, responses, "--rake", margins_path, "--trim", f"{low},{high}")
    assert f"trimmed to {low:g}..{high:g} × the mean" in table.stdout and "untrimmed: weights" in table.stdout


BAD_MARGINS = [
    ("protected", {"drugs": {"Yes": 0.2, "No": 0.8}}, ["margins.drugs:", "protected", "asked directly"]),
    ("not summing to 1", {"age": {"18-29": 0.3, "30-49": 0.4, "50+": 0.4}}, ["margins.age:", "add up to 1.1"]),
    ("empty cell", {"age": {"18-29": 0.5, "30-49": 0.5}}, None),  # replaced below: nobody 50+
    ("unknown question", {"income": {"low": 1}}, ["margins.income:", "no question 'income'"]),
    ("unknown option", {"sex": {"female": 0.5, "other": 0.5}}, ["margins.sex.other:", "no option 'other'"]),
    ("negative share", {"sex": {"female": 1.5, "male": -0.5}}, ["margins.sex.male:", "≥ 0"]),
    ("NaN share", '{"sex": {"female": NaN, "male": 0.5}}', ["margins.sex.female:", "finite", "nan"]),
    ("a string share", {"sex": {"female": "0.5", "male": 0.5}}, ["margins.sex.female:", "a number"]),
    ("share 0 but chosen", {"age": {"18-29": 0.5, "30-49": 0.5, "50+": 0}}, ["margins.age.50+:", "share is 0"]),
    ("skipped by some", {"smoke": {"Yes": 0.3, "No": 0.7}}, ["margins.smoke:", "did not answer 'smoke'"]),
    ("twice", {"sex": {"female": 0.5, "0": 0.5}}, ["margins.sex.0:", "given twice"]),
    ("not JSON", "{", ["--rake:", "not valid JSON"]),
    ("repeated key", '{"sex": {"female": 0.5, "female": 0.5}}', ["--rake:", "female"]),
    ("empty", {}, ["margins:", "at least one question"]),
]


@pytest.mark.parametrize("name,margins,expected", [pytest.param(*b, id=b[0]) for b in BAD_MARGINS])
def test_bad_margins_fail_with_one_line_naming_the_field(tmp_path, name, margins, expected):
    rows = sample()
    if name == "empty cell":
        rows["age"] = np.minimum(rows["age"], 1)  # nobody 50+
        margins, expected = MARGINS, ["margins.age.50+:", "no respondent chose '50+'", "empty cell"]
    definition, responses, margins_path = write_files(tmp_path, rows, margins)
    result = run("estimate", definition, responses, "--rake", margins_path)
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # handled, not a crash
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    for text in expected:
        assert text in errors[0], errors[0]
    assert result.stdout == ""


def test_raking_that_cannot_converge_says_so(tmp_path):
    """Margins that contradict the respondents' combinations (every 50+ respondent is male, and the
    margins want more 50+ than males) cannot be met: an error, not a number."""
    rows = sample()
    rows["sex"] = np.where(rows["age"] == 2, 1, 0)
    definition, responses, margins_path = write_files(
        tmp_path, rows, {"age": {"18-29": 0.3, "30-49": 0.2, "50+": 0.5}, "sex": {"female": 0.7, "male": 0.3}})
    result = run("estimate", definition, responses, "--rake", margins_path)
    assert result.exit_code == 1 and "margins: raking did not converge" in result.stderr, result.output
    definition, responses, margins_path = write_files(tmp_path, sample())
    result = run("estimate", definition, responses, "--rake", margins_path, "--trim", "0.99,1.01")
    assert result.exit_code == 1 and "trim: no weights within the bounds meet the margins" in result.stderr, \
        result.output


@pytest.mark.parametrize("args,expected", [
    (("--trim", "0.5,2"), "--trim goes with --rake"),
    (("--rake", "m.json", "--trim", "2,1"), "--trim: give LOW,HIGH"),
    (("--rake", "m.json", "--trim", "x"), "--trim: give LOW,HIGH"),
    (("--rake", "m.json", "--strata", "s"), "--strata goes with --weights"),
    (("--rake", "m.json", "--by", "drugs"), "--by: "),  # the one check of --by: a question asked directly
    (("--rake", "m.json", "--by", "age", "--crosstab", "drugs", "cheat"), "use --crosstab or --by, not both"),
    (("--rake", "m.json", "--from", "qualtrics", "--db", "x.db"), "--from qualtrics reads a results file"),
    (("--rake", "m.json", "--method", "wilson"), "--method does not go with --rake"),
])
def test_options_that_do_not_go_with_rake_are_usage_errors(tmp_path, args, expected):
    definition, responses, _ = write_files(tmp_path, sample())
    result = run("estimate", definition, responses, *args)
    assert result.exit_code == 2 and expected in result.stderr, result.output


# ---------------------------------------------------------------- raking everywhere: --by, --crosstab, --from

TYPED = {"slug": "typed", "title": "Typed", "questions": [
    {"id": "age", "text": "Age group", "options": ["18-29", "30-49", "50+"]},
    {"id": "sex", "text": "Sex", "options": ["female", "male"]},
    {"id": "year", "text": "Year?", "options": ["First", "Second"], "required": False},
    {"id": "drugs", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
    {"id": "forced", "text": "Cheated?", "options": ["never", "once", "often"], "required": False,
     "design": {"name": "forced", "p": 0.6, "forced": [0.2, 0.1, 0.1]}},
    {"id": "sites", "text": "Which sites?", "type": "multi", "options": ["A", "B", "C"], "epsilon": 2.0},
    {"id": "shop", "text": "How many?", "type": "list", "items": ["I", "II", "III"], "sensitive": "S",
     "epsilon": 1.0, "required": False}]}
TYPED_MARGINS = {"age": {"18-29": 0.3, "30-49": 0.4, "50+": 0.3}, "sex": {"female": 0.52, "male": 0.48}}


def typed_files(folder: Path, n: int = 300, seed: int = 21):
    """The TYPED survey's definition, a responses CSV of n simulated reports, its margins, and the codes."""
    s = parse_definition(TYPED)
    rng = np.random.default_rng(seed)
    codes = {"age": rng.choice(3, n, p=[0.55, 0.3, 0.15]), "sex": rng.choice(2, n, p=[0.65, 0.35])}
    for q in s.questions[2:]:
        codes[q.id] = rng.integers(0, q.qtype.n_cells(q), n)
    for qid in ("year", "forced", "shop"):
        codes[qid][rng.choice(n, 20, replace=False)] = -1
    definition = folder / "typed.json"
    definition.write_text(json.dumps(TYPED), encoding="utf-8")
    responses = write_csv(folder / "typed.csv", {
        q.id: ["" if c < 0 else q.qtype.text_of(q, int(c)) for c in codes[q.id]] for q in s.questions})
    margins_path = folder / "typed-margins.json"
    margins_path.write_text(json.dumps(TYPED_MARGINS), encoding="utf-8")
    return s, definition, responses, margins_path, codes


def _group_numbers(record):
    """The numbers of one raked record, whichever its type."""
    if "prevalence" in record:
        return [record["prevalence"][k] for k in ("estimate", "std_error", "ci_low", "ci_high")]
    return [o[k] for o in record["options"] for k in ("estimate", "std_error", "ci_low", "ci_high")]


def test_rake_by_gives_the_raked_subgroups_of_every_question(tmp_path):
    """``--rake … --by year``: every other question's records within each group are the raked subgroups
    the dashboard shows (sampling.raked_subgroups, checked against R in tests/unit), each type's —
    a designed single choice, a check-all question, a list experiment — in JSON, CSV and the table."""
    from deniable.server.survey import sampling
    from deniable.server.survey.dataset import Dataset

    s, definition, responses, margins_path, codes = typed_files(tmp_path)
    document = estimate_json(definition, responses, "--rake", margins_path, "--by", "year")
    assert document["by"] == "year" and document["weighted"] is True and document["skipped"] == []
    assert document["raking"]["achieved"]["age"] == pytest.approx(TYPED_MARGINS["age"], abs=1e-9)
    assert [q["id"] for q in document["questions"]] == [q.id for q in s.questions if q.id != "year"]
    dataset = Dataset(s, {qid: np.asarray(v) for qid, v in codes.items()})
    margins = sampling.parse_margins(TYPED_MARGINS, s)
    for record in document["questions"]:
        subgroups = sampling.raked_subgroups(dataset, margins, s.question(record["id"]), s.question("year"))
        expected = subgroups.groups
        mine = json.loads(json.dumps(subgroups.to_dict()))  # a Result: its own document, the --by entry's shape
        assert (mine["id"], mine["by"]) == (record["id"], record["by"])
        assert [list(g) for g in mine["groups"]] == [list(g) for g in record["groups"]]
        subgroups_text = subgroups.table()
        assert [g["group"] for g in record["groups"]] == ["First", "Second", "not answered"]
        for group, (label, _, n, result) in zip(record["groups"], expected):
            assert group["n"] == n and group["raked"] is True, (record["id"], label)
            want = _group_numbers(sampling.question_json(s.question(record["id"]), n, result))
            assert _group_numbers(group) == pytest.approx(want, rel=1e-12, abs=1e-12), (record["id"], label)
    shop = document["questions"][-1]["groups"][0]
    assert shop["prevalence"]["estimate"] is not None and shop["n_treatment"] > 0
    table = run("estimate", definition, responses, "--rake", margins_path, "--by", "year")
    assert table.exit_code == 0, table.output
    assert "raked to the margins of 'age', 'sex'" in table.stdout and "· year=First" in table.stdout
    assert subgroups_text in table.stdout  # the last question's blocks, as --by prints them
    assert "weighted mean count: control" in table.stdout and "forced design" in table.stdout
    lines = run("estimate", definition, responses, "--rake", margins_path, "--by", "year", "--format",
                "csv").stdout.splitlines()
    assert lines[0].startswith("by,group,question,option,label,n,")
    assert any(line.startswith("year,First,shop,prevalence,S,") for line in lines)
    assert any(line.startswith("year,Second,sites,2,C,") for line in lines)


def test_rake_crosstab_of_a_designed_and_a_randomized_question(tmp_path):
    """``--rake … --crosstab forced drugs``: the raked cross-tab the dashboard shows (the designs'
    Kronecker inverse on raked shares: tests/unit/test_rake_types.py checks it against R), in JSON with
    what raking did, in the table and in CSV."""
    from deniable.server.survey import sampling
    from deniable.server.survey.dataset import Dataset

    s, definition, responses, margins_path, codes = typed_files(tmp_path)
    document = estimate_json(definition, responses, "--rake", margins_path, "--crosstab", "forced", "drugs")
    expected = sampling.raked_crosstab_of(Dataset(s, {k: np.asarray(v) for k, v in codes.items()}),
                                          sampling.parse_margins(TYPED_MARGINS, s), s.question("forced"),
                                          s.question("drugs"))
    assert document["raked"] is True and document["n"] == int((codes["forced"] >= 0).sum())
    assert document["raking"]["margins"]["sex"] == {"female": 0.52, "male": 0.48}
    assert_close(document["cells"], json.loads(json.dumps(sampling.crosstab_cells(expected.row, expected.col,
                                                                                   expected.result))))
    table = run("estimate", definition, responses, "--rake", margins_path, "--crosstab", "forced", "drugs")
    assert table.exit_code == 0 and "forced × drugs" in table.stdout and "reported (raked)" in table.stdout
    csv_lines = run("estimate", definition, responses, "--rake", margins_path, "--crosstab", "forced", "drugs",
                    "--format", "csv").stdout.splitlines()
    assert len(csv_lines) == 1 + 3 * 2 and csv_lines[1].endswith(",age sex")


def test_rake_simultaneous_intervals_are_bonferroni_over_the_options(tmp_path):
    """``--rake … --simultaneous``: each option's interval at 1 − α/k, the estimates and standard errors
    unchanged; the list experiment's one number keeps its interval."""
    from deniable.server.survey import sampling
    from deniable.server.survey.dataset import Dataset

    s, definition, responses, margins_path, codes = typed_files(tmp_path)
    one = {q["id"]: q for q in estimate_json(definition, responses, "--rake", margins_path)["questions"]}
    both = {q["id"]: q for q in estimate_json(definition, responses, "--rake", margins_path,
                                              "--simultaneous")["questions"]}
    dataset = Dataset(s, {k: np.asarray(v) for k, v in codes.items()})
    margins = sampling.parse_margins(TYPED_MARGINS, s)
    for qid, k in (("drugs", 2), ("forced", 3), ("sites", 3)):
        raked = sampling.raked_estimates(dataset, margins, confidence=1 - 0.05 / k)
        at_level = {q.id: r for q, _, r in raked.questions}
        assert both[qid]["simultaneous"] is True and "Bonferroni over the" in both[qid]["method"]
        for i, (a, b) in enumerate(zip(one[qid]["options"], both[qid]["options"])):
            assert b["estimate"] == a["estimate"] and b["std_error"] == a["std_error"]
            assert [b["ci_low"], b["ci_high"]] == pytest.approx([at_level[qid].ci_low[i], at_level[qid].ci_high[i]],
                                                                abs=1e-12)
    assert both["shop"]["prevalence"] == one["shop"]["prevalence"]
    by = estimate_json(definition, responses, "--rake", margins_path, "--simultaneous", "--by", "year")
    assert all(g["simultaneous"] for q in by["questions"] if q["id"] != "shop"
               for g in q["groups"] if not g.get("empty"))
    ct = estimate_json(definition, responses, "--rake", margins_path, "--simultaneous", "--crosstab", "forced", "drugs")
    assert ct["simultaneous"] is True and "Bonferroni over the 6 cells" in ct["method"]


def test_rake_from_another_tools_export_gives_the_numbers_of_the_responses_file(tmp_path):
    """``--from surveyjs --rake``: the embed's reports read from SurveyJS results rake as the same
    reports in a responses file do."""
    from deniable.server.survey.definition import design_fingerprint

    s, definition, responses, margins_path, codes = typed_files(tmp_path, n=120)
    fingerprint = design_fingerprint(s)
    results = []
    for i in range(len(codes["age"])):
        entry = {}
        for q in s.questions:
            code = int(codes[q.id][i])
            if code >= 0:  # what the embed hands the host: the type's report of the code
                entry[q.id] = {"report": q.qtype.report_of(q, code), "design": fingerprint, "epsilon": q.epsilon}
        results.append(entry)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    from_tool = estimate_json(definition, path, "--from", "surveyjs", "--rake", margins_path)
    from_file = estimate_json(definition, responses, "--rake", margins_path)
    assert_close(from_tool, from_file)
    # a sampling weight beside each respondent's reports (SurveyJS: a key; oTree: a column), from which
    # raking starts, as from a responses file's weight column
    w = np.random.default_rng(8).gamma(2.0, 1.0, len(results)).round(6)
    path.write_text(json.dumps([{**entry, "w": float(x)} for entry, x in zip(results, w)]), encoding="utf-8")
    import csv

    otree = tmp_path / "otree.csv"
    with open(otree, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["participant.code", "participant.w", *(f"player.{q.id}" for q in s.questions)])
        for i, (entry, x) in enumerate(zip(results, w)):
            writer.writerow([f"p{i}", repr(float(x)),
                             *(json.dumps(entry[q.id]) if q.id in entry else "" for q in s.questions)])
    weighted = write_csv(tmp_path / "weighted.csv", {
        **{q.id: ["" if c < 0 else q.qtype.text_of(q, int(c)) for c in codes[q.id]] for q in s.questions}, "w": w})
    from_file = estimate_json(definition, weighted, "--rake", margins_path, "--weights", "w")
    assert_close(estimate_json(definition, path, "--from", "surveyjs", "--rake", margins_path, "--weights", "w"),
                 from_file)
    from_otree = estimate_json(definition, otree, "--from", "otree", "--rake", margins_path,
                               "--weights", "participant.w")
    assert from_otree["raking"]["base_weights"] == "participant.w"
    from_file["raking"]["base_weights"] = "participant.w"
    assert_close(from_otree, from_file)


def _qualtrics(path: Path, s, codes, extra: dict) -> Path:
    """A Qualtrics CSV export (three header rows) of the codes as the embed's reports in ``deniable_QID``
    fields, with the host's ``extra`` columns (name → cells) before them."""
    import csv

    from deniable.server.survey.definition import design_fingerprint

    fingerprint = design_fingerprint(s)
    names = ["ResponseId", *extra, *(f"deniable_{q.id}" for q in s.questions)]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(names)
        writer.writerow(names)
        writer.writerow([json.dumps({"ImportId": name}) for name in names])
        for i in range(len(codes["age"])):
            reports = ["" if int(codes[q.id][i]) < 0 else json.dumps(
                {"report": q.qtype.report_of(q, int(codes[q.id][i])), "design": fingerprint, "epsilon": q.epsilon})
                for q in s.questions]
            writer.writerow([f"R_{i}", *(cells[i] for cells in extra.values()), *reports])
    return path


def test_weights_and_rake_from_a_platform_export_give_the_numbers_of_the_responses_file(tmp_path):
    """``--from qualtrics --weights w`` (and ``--rake`` from those weights): the host's weight column is
    read beside the embed's reports, and the numbers are those of the same reports and weights in a
    responses file; a bad weight cell is one ``Error:`` line naming the row and the column."""
    s, definition, _, margins_path, codes = typed_files(tmp_path, n=150)
    rng = np.random.default_rng(3)
    w = rng.gamma(2.0, 1.0, len(codes["age"])).round(6)
    weights = [repr(float(x)) for x in w]
    export = _qualtrics(tmp_path / "qualtrics.csv", s, codes, {"w": weights})
    responses = write_csv(tmp_path / "weighted.csv", {
        **{q.id: ["" if c < 0 else q.qtype.text_of(q, int(c)) for c in codes[q.id]] for q in s.questions}, "w": w})
    for extra in ((), ("--rake", margins_path), ("--by", "year")):
        from_tool = estimate_json(definition, export, "--from", "qualtrics", "--weights", "w", *extra)
        from_file = estimate_json(definition, responses, "--weights", "w", *extra)
        assert_close(from_tool, from_file)
    weights[7] = "-1"
    bad = _qualtrics(tmp_path / "bad.csv", s, codes, {"w": weights})
    result = run("estimate", definition, bad, "--from", "qualtrics", "--weights", "w")
    assert result.exit_code == 1 and result.stdout == "", result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "row 11 (ResponseId R_7)" in errors[0] and "column 'w'" in errors[0], errors
    result = run("estimate", definition, export, "--from", "qualtrics", "--weights", "weight")
    assert result.exit_code == 1 and "no column 'weight' for the sampling design" in result.stderr, result.output


def test_rake_weights_crosstab_keeps_the_strata_and_clusters(tmp_path):
    """``--rake … --weights w --strata s --cluster c --crosstab forced drugs``: raking starts from the
    file's sampling weights, and the cross-tab is the one raked from that design
    (sampling.raked_crosstab_of with ``base``: tests/unit/test_rake_types.py checks it against R's
    ``rake()`` of the weighted ``svydesign``), not the one raked from equal weights; JSON, table and CSV."""
    from deniable.estimators.weights import survey_design
    from deniable.server.survey import sampling
    from deniable.server.survey.dataset import Dataset

    s, definition, _, margins_path, codes = typed_files(tmp_path)
    n = len(codes["age"])
    rng = np.random.default_rng(8)
    strata = rng.integers(0, 3, n)
    clusters = strata * 10 + rng.integers(0, 5, n)
    w = rng.gamma(2.0, 1.0, n).round(6)
    responses = write_csv(tmp_path / "designed.csv", {
        **{q.id: ["" if c < 0 else q.qtype.text_of(q, int(c)) for c in codes[q.id]] for q in s.questions},
        "w": w, "s": strata, "c": clusters})
    design = ("--rake", margins_path, "--weights", "w", "--strata", "s", "--cluster", "c")
    document = estimate_json(definition, responses, *design, "--crosstab", "forced", "drugs")
    dataset = Dataset(s, {k: np.asarray(v) for k, v in codes.items()})
    margins = sampling.parse_margins(TYPED_MARGINS, s)
    base = survey_design(w, strata=strata, clusters=clusters)
    expected = sampling.raked_crosstab_of(dataset, margins, s.question("forced"), s.question("drugs"), base=base)
    unbased = sampling.raked_crosstab_of(dataset, margins, s.question("forced"), s.question("drugs"))
    assert document["raked"] is True and document["raking"]["base_weights"] == "w"
    assert document["degrees_of_freedom"] == base.degrees_of_freedom
    assert_close(document["cells"], json.loads(json.dumps(sampling.crosstab_cells(expected.row, expected.col,
                                                                                   expected.result))))
    assert document["cells"][0]["std_error"] != pytest.approx(float(unbased.result.joint_std_error[0, 0]), rel=1e-3)
    table = run("estimate", definition, responses, *design, "--crosstab", "forced", "drugs")
    assert table.exit_code == 0 and "forced × drugs" in table.stdout, table.output
    csv_lines = run("estimate", definition, responses, *design, "--crosstab", "forced", "drugs",
                    "--format", "csv").stdout.splitlines()
    assert len(csv_lines) == 1 + 3 * 2
