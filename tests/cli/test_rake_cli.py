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
    """Every option's estimate, standard error and interval equal R's after ``rake()`` to 1e-6: a
    question asked directly (p = 1), randomized ones, and one some respondents skipped (a domain)."""
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
            assert option["ci_low"] == pytest.approx(max(0.0, (low - m.q) / (m.p - m.q)), abs=1e-6), (q.id, j)
            assert option["ci_high"] == pytest.approx(min(1.0, (high - m.q) / (m.p - m.q)), abs=1e-6), (q.id, j)
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
    (("--rake", "m.json", "--by", "age"), "--by does not go with --rake"),
    (("--rake", "m.json", "--method", "wilson"), "--method does not go with --rake"),
])
def test_options_that_do_not_go_with_rake_are_usage_errors(tmp_path, args, expected):
    definition, responses, _ = write_files(tmp_path, sample())
    result = run("estimate", definition, responses, *args)
    assert result.exit_code == 2 and expected in result.stderr, result.output
