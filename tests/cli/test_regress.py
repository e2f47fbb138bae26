"""``deniable regress``: the table and JSON, from a CSV or a database, and one-line errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from deniable.estimators import regress
from deniable.server.cli import cli
from deniable.server.store.db import init_db
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import load_definition
from deniable.server.survey.responses_csv import read_responses_csv

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path):
    survey, truth = tmp_path / "survey.json", tmp_path / "truth.json"
    shutil.copy(ROOT / "examples" / "survey.json", survey)
    shutil.copy(ROOT / "examples" / "truth.json", truth)
    responses = tmp_path / "responses.csv"
    result = CliRunner().invoke(cli, ["simulate", str(survey), "--n", "4000", "--truth", str(truth), "--seed", "3",
                                      "-o", str(responses)])
    assert result.exit_code == 0, result.output
    return survey, responses


def run(*args):
    return CliRunner().invoke(cli, ["regress", *map(str, args)])


def test_json_equals_the_estimator_on_the_rows(files):
    survey, responses = files
    result = run(survey, responses, "drugs ~ year", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    # independent of the pattern path: the rows of the CSV, dummies built here
    rows = read_responses_csv(responses, load_definition(survey))
    year = rows.columns["year"]
    direct = regress(rows.columns["drugs"], np.column_stack([year == 1, year == 2]).astype(float), 1.0, k=2)
    assert [c["estimate"] for c in data["coefficients"]] == pytest.approx(list(direct.params), abs=1e-9)
    assert [c["profile_high"] for c in data["coefficients"]] == pytest.approx(list(direct.profile_high), abs=1e-7)
    assert data["formula"] == "drugs ~ year" and data["reference"] == "No" and data["n"] == 4000
    assert [c["name"] for c in data["coefficients"]] == ["Intercept", "year[Second]", "year[Third or later]"]


def test_table_has_the_model_the_coefficients_and_the_effects(files):
    survey, responses = files
    result = run(survey, responses, "cheated ~ num(year)", "--reference", "Never")
    assert result.exit_code == 0, result.output
    for expected in ("cheated ~ num(year)", "num(year) uses option positions: First = 0",
                     "multinomial logit of cheated (reference option: Never)", "Once: num(year)",
                     "Average marginal effects", "LR test against the intercept-only model"):
        assert expected in result.output


def test_the_first_line_names_the_modelled_option(files):
    survey, responses = files
    table = run(survey, responses, "drugs ~ year", "--no-profile")
    assert table.exit_code == 0, table.output
    assert table.output.splitlines()[0] == "drugs ~ year: log-odds of Yes against No"
    data = json.loads(run(survey, responses, "drugs ~ year", "--format", "json", "--no-profile").output)
    assert next(iter(data)) == "models" and data["models"] == "log-odds of Yes against No"
    flipped = run(survey, responses, "drugs ~ year", "--reference", "Yes", "--no-profile")
    assert flipped.output.splitlines()[0] == "drugs ~ year: log-odds of No against Yes"
    several = run(survey, responses, "cheated ~ year", "--reference", "Never", "--no-profile")
    assert several.output.splitlines()[0] == "cheated ~ year: log-odds of each of Once, Several times against Never"


def test_an_outcome_its_type_does_not_allow_is_one_line_saying_why(tmp_path, files):
    survey, _ = files
    definition = json.loads(survey.read_text())
    definition["questions"].append({"id": "drinks", "text": "Drinks?", "type": "numeric", "min": 0, "max": 10,
                                    "epsilon": 1.0, "mechanism": "grid", "grid": 10})
    typed = tmp_path / "typed.json"
    typed.write_text(json.dumps(definition))
    responses = tmp_path / "typed.csv"
    responses.write_text("drugs,cheated,year,drinks\n" + "".join(
        f"{['Yes', 'No'][i % 2]},Never,{['First', 'Second'][i % 2]},{i % 11}\n" for i in range(40)))
    result = run(typed, responses, "drinks ~ year")
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert result.output.startswith("Error: outcome 'drinks' is a number question, not available for a regression: ")


def test_from_the_database(tmp_path, files):
    survey_path, responses = files
    db = init_db(tmp_path / "survey.db")
    try:
        stored = insert_survey(db, load_definition(survey_path), status="open")
        insert_many(db, stored, read_responses_csv(responses, stored.survey).columns)
    finally:
        db.conn.close()
    from_db = run("--db", tmp_path / "survey.db", "student-life", "drugs ~ year", "--format", "json", "--no-profile")
    from_csv = run(survey_path, responses, "drugs ~ year", "--format", "json", "--no-profile")
    assert from_db.exit_code == 0, from_db.output
    assert json.loads(from_db.output)["coefficients"] == json.loads(from_csv.output)["coefficients"]


def test_the_command_prints_the_regression_result(files):
    """``deniable regress`` prints a :class:`Regression` (a survey-level result): its table, its JSON."""
    from deniable.server.survey import readers
    from deniable.server.survey.estimates import SurveyResult
    from deniable.server.survey.patterns import from_dataset
    from deniable.server.survey.regression import Regression, fit_formula

    survey_path, responses = files
    survey = load_definition(survey_path)
    patterns = from_dataset(readers.read(str(responses), survey, codebook=str(survey_path)))
    fitted = Regression(survey.slug, *fit_formula(patterns, "cheated ~ num(year)", profile=False, survey=survey))
    assert isinstance(fitted, SurveyResult) and fitted.summary() == fitted.table()
    assert run(survey_path, responses, "cheated ~ num(year)", "--no-profile").output == fitted.table()
    shown = run(survey_path, responses, "cheated ~ num(year)", "--no-profile", "--format", "json").output
    assert json.loads(shown) == fitted.to_dict() and "raking" not in fitted.to_dict()


@pytest.mark.parametrize("formula,message", [
    ("drugs ~ yeer", "Error: unknown question 'yeer' in the formula (expected one of: drugs, cheated, year)"),
    ("drugs ~ cheated", "Error: covariate 'cheated' is protected"),
    ("drugs year", "Error: a formula is OUTCOME ~ COVARIATE"),
])
def test_formula_errors_are_one_line(files, formula, message):
    survey, responses = files
    result = run(survey, responses, formula)
    assert result.exit_code == 1 and result.output.startswith(message) and result.output.count("\n") == 1


@pytest.mark.slow  # four real processes: the full suite
def test_separation_empty_cells_and_collinearity_are_one_line_in_a_real_process(tmp_path, files):
    survey, _ = files
    # 30 responses: "Several times" never reported in the third year → the fit diverges
    lines = ["drugs,cheated,year"] + [f"No,{['Never', 'Once'][i % 2]},Third or later" for i in range(10)] + \
            [f"Yes,{['Never', 'Once', 'Several times'][i % 3]},{['First', 'Second'][i % 2]}" for i in range(20)]
    small = tmp_path / "small.csv"
    small.write_text("\n".join(lines) + "\n")
    definition = json.loads(survey.read_text())
    definition["questions"].append({"id": "year2", "text": "Year again", "options": ["First", "Second",
                                                                                     "Third or later"]})
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps(definition))
    doubled = tmp_path / "doubled.csv"
    doubled.write_text("drugs,cheated,year,year2\n" + "".join(
        f"{['Yes', 'No'][i % 2]},Never,{y},{y}\n" for i, y in enumerate(["First", "Second", "Third or later"] * 20)))
    cases = [
        (survey, small, "cheated ~ year", "Error: separation: the fit drives the share of 'Several times' to 0 "
                                          "where year = Third or later"),
        (survey, small, "cheated ~ year", ""),  # the same, checked for a traceback below
        (twice, doubled, "drugs ~ year + year2", "Error: collinear covariates: 'year2[Second]' is a linear "
                                                 "combination of"),
    ]
    for definition_path, csv_path, formula, prefix in cases:
        process = subprocess.run([sys.executable, "-c", "from deniable.server.cli import cli; cli()", "regress",
                                  str(definition_path), str(csv_path), formula], capture_output=True, text=True)
        assert process.returncode == 1, (formula, process.returncode, process.stdout[-500:], process.stderr[-2000:])
        assert process.stderr.startswith(prefix) and process.stderr.count("\n") == 1, process.stderr
        assert "Traceback" not in process.stderr and process.stdout == ""
    empty = tmp_path / "empty.csv"
    empty.write_text("drugs,cheated,year\n" + "".join(f"{['Yes', 'No'][i % 2]},Never,First\n" for i in range(40))
                     + "".join(f"{['Yes', 'No'][i % 2]},Never,Second\n" for i in range(40)))
    result = run(survey, empty, "drugs ~ year")
    assert result.exit_code == 1
    assert result.output == ("Error: empty cell: no response has year = 'Third or later'; drop that level or merge "
                             "it with another\n")


def test_usage_errors(files):
    survey, responses = files
    assert "give SURVEY.json RESPONSES.csv" in run(survey, responses).output
    assert "with --db, give the survey's SLUG and the FORMULA" in run("--db", responses, "x").output
    result = run(survey, responses, "drugs ~ year", "--reference", "Maybe")
    assert result.exit_code == 1 and "reference: 'drugs' has no option 'Maybe'" in result.output


def test_unreadable_inputs_are_one_line(tmp_path, files):
    survey, responses = files
    missing = run(tmp_path / "nope.json", responses, "drugs ~ year")
    assert missing.exit_code == 1 and missing.output.startswith("Error: ") and "nope.json" in missing.output
    bad = tmp_path / "bad.csv"
    bad.write_text("drugs,cheated,year\nMaybe,Never,First\n")
    result = run(survey, bad, "drugs ~ year")
    assert result.exit_code == 1 and "column 'drugs': unknown option label 'Maybe'" in result.output


def test_responses_of_another_design_are_refused_as_estimate_refuses_them(tmp_path, files):
    """The responses file's design line must agree with SURVEY.json (codebook.check_design), weighted or not."""
    survey, responses = files
    design, header, *rows = responses.read_text(encoding="utf-8").splitlines()
    assert "epsilon=1.0" in design
    for weighted in (False, True):
        extra = (",w", ",1") if weighted else ("", "")
        body = [header + extra[0], *(row + extra[1] for row in rows)]
        options = ["--weights", "w"] if weighted else []
        same = tmp_path / f"same-{weighted}.csv"
        same.write_text("\n".join([design, *body]) + "\n", encoding="utf-8")
        assert run(survey, same, "drugs ~ year", *options).exit_code == 0
        other = tmp_path / f"other-{weighted}.csv"
        other.write_text("\n".join([design.replace("epsilon=1.0", "epsilon=2.0"), *body]) + "\n", encoding="utf-8")
        result = run(survey, other, "drugs ~ year", *options)
        assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
        assert result.output.startswith(f"Error: {other}: question 'drugs': the responses were collected with ε = 2 ")


def test_a_parquet_file_gives_the_fit_of_the_same_responses_as_csv(tmp_path, files):
    """regress reads through the one reader, as estimate and regress --weights did: by the file's suffix
    (the unweighted fit read every file as CSV, and a Parquet file was 'not UTF-8 text')."""
    survey, responses = files
    parquet = tmp_path / "responses.parquet"
    made = CliRunner().invoke(cli, ["simulate", str(survey), "--n", "4000", "--truth", str(tmp_path / "truth.json"),
                                    "--seed", "3", "-o", str(parquet)])
    assert made.exit_code == 0, made.output
    from_csv, from_parquet = (run(survey, path, "drugs ~ year", "--format", "json") for path in (responses, parquet))
    assert from_parquet.exit_code == 0, from_parquet.output
    assert json.loads(from_parquet.output) == json.loads(from_csv.output)
