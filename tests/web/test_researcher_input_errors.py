"""The researcher inputs of the issue "Nothing lost" (item 7), each once in the fast lane: a 400 naming
the field on the page, one ``Error:`` line naming it on the command line, nothing stored.
tests/fuzz/test_researcher_inputs.py fuzzes around them."""

from __future__ import annotations

import html
import json
import re
import sqlite3
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner

from deniable.server.cli import cli
from support.dashboard import csrf_token, make_survey, sample_columns, store_reports
from support.fuzz import table_snapshot

MINUSES = "drugs ~ " + "-" * 470 + "age"
ALERT = re.compile(r'class="errors" role="alert">\s*(.*?)</p>', re.S)


@pytest.fixture
def habits(app, auth_client):
    make_survey(app, status="open")
    store_reports(app, "habits", sample_columns(300))
    return auth_client


def _snapshot(app) -> dict:
    conn = sqlite3.connect(app.config["DATABASE"])
    try:
        return table_snapshot(conn)
    finally:
        conn.close()


def _alerts(response) -> list[str]:
    return [html.unescape(m) for m in ALERT.findall(response.get_data(as_text=True))]


def _one_error_line(result) -> str:
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    (line,) = [line for line in result.stderr.splitlines() if line]
    assert line.startswith("Error: ")
    return line


@pytest.mark.parametrize("formula, message", [
    (MINUSES, "cannot read the covariate '" + "-" * 470 + "age'"),  # refused before, for its name
    ("drugs ~ I(" + "-" * 470 + "age)", "more than 100 operators and parentheses in the formula"),  # RecursionError
    ("drugs ~ I(age * " + "9" * 400 + ")", "in the formula is beyond a float's range"),  # OverflowError
])
def test_a_formula_too_deep_or_too_large_is_a_400_and_one_line(app, habits, formula, message):
    before = _snapshot(app)
    response = habits.get("/dashboard/habits/regression", query_string={"formula": formula})
    assert response.status_code == 400 and any(message in m for m in _alerts(response)), _alerts(response)
    line = _one_error_line(CliRunner().invoke(cli, ["regress", "--db", app.config["DATABASE"], "habits", formula]))
    assert message in line
    assert _snapshot(app) == before


@pytest.mark.parametrize("share, message", [
    ("1e-320", "margins.age.<30: a share must be 0 or at least 1e-09 (got 9.99989e-321)"),
    ("1" + "0" * 3999, "margins.age.<30: a share must be a finite number ≥ 0 (got inf)"),
])
def test_a_share_too_small_or_too_large_is_a_400_on_its_field(app, habits, share, message):
    before = _snapshot(app)
    token = csrf_token(habits, "/dashboard/habits/weighting")
    response = habits.post("/dashboard/habits/weighting", data={"csrf_token": token, "share_0_0": share,
                                                                "share_0_1": "1"})
    assert response.status_code == 400
    assert f'<ul class="errors" id="share_0_0-errors"><li>{message}</li>' in html.unescape(
        response.get_data(as_text=True))
    assert _snapshot(app) == before


@pytest.mark.parametrize("share", [1e-320, int("1" + "0" * 3999)], ids=["1e-320", "4000 digits"])
@pytest.mark.parametrize("page", ["results", "crosstab?row=age&col=drugs", "subgroups?question=drugs&by=age",
                                  "regression?formula=drugs+~+age"])
def test_margins_in_an_address_that_cannot_weight_are_a_400_above_the_unweighted_page(app, habits, tmp_path, share,
                                                                                      page):
    rake = json.dumps({"age": {"<30": share, "30+": 1 if share < 1 else 0}})
    response = habits.get(f"/dashboard/habits/{page}{'&' if '?' in page else '?'}{urlencode({'rake': rake})}")
    assert response.status_code == 400
    assert any(m.startswith("margins.age.<30: a share must be") for m in _alerts(response)), _alerts(response)
    (tmp_path / "margins.json").write_text(rake)
    line = _one_error_line(CliRunner().invoke(cli, ["estimate", "--db", app.config["DATABASE"], "habits", "--rake",
                                                    str(tmp_path / "margins.json")]))
    assert line.startswith("Error: margins.age.<30: a share must be")


def test_weights_of_1e308_are_one_line_naming_the_column(tmp_path):
    survey = {"slug": "w", "title": "W", "questions": [
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1},
        {"id": "age", "text": "Age", "options": ["<30", "30+"]}]}
    (tmp_path / "survey.json").write_text(json.dumps(survey))
    (tmp_path / "responses.csv").write_text("drugs,age,w\nYes,<30,1e308\nNo,30+,1e308\nYes,30+,1e308\nNo,<30,1\n")
    line = _one_error_line(CliRunner().invoke(cli, ["estimate", str(tmp_path / "survey.json"),
                                                    str(tmp_path / "responses.csv"), "--weights", "w"]))
    assert line.startswith("Error: column 'w' (weights): the weights range from 1 to 1e+308, beyond what floating "
                           "point can square")


def test_a_lone_surrogate_in_a_definition_is_one_line_naming_its_field(tmp_path):
    (tmp_path / "survey.json").write_text('{"slug": "sur", "title": "T\\ud800", "questions": '
                                          '[{"id": "q", "text": "Q?", "options": ["a", "b"], "epsilon": 1}]}')
    db = tmp_path / "x.db"
    result = CliRunner().invoke(cli, ["import", str(tmp_path / "survey.json"), "--db", str(db)])
    line = _one_error_line(result)
    assert line.startswith(f"Error: {tmp_path / 'survey.json'}: title: holds a lone surrogate (\\ud800)")
    assert not db.exists()  # refused before the database is opened
