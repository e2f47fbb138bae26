"""Display and skip logic through the real app: an answer to a question that the respondent was not
asked is refused (field error, nothing stored), a required question that was asked must be answered,
and a hidden one need not be — on the survey form and the JSON API alike.  The survey page marks
each question's condition and page for the browser (client/static/logic.js; in chromium:
tests/e2e/test_display_logic.py)."""

from __future__ import annotations

import html
import json
import re

import pytest

from deniable.server.store.db import connect
from deniable.server.store.surveys import get_survey, insert_survey
from deniable.server.survey.definition import parse_definition

DEFINITION = {"slug": "logic", "title": "Logic", "questions": [
    {"id": "smoke", "text": "Do you smoke?", "options": ["Yes", "No", "Sometimes"]},
    {"id": "many", "text": "How many a day?", "options": ["1-5", "6+"], "epsilon": 2.0,
     "show_if": {"question": "smoke", "in": ["Yes", "Sometimes"]}},
    {"id": "kinds", "text": "Which?", "type": "multi", "options": ["Pipe", "Cigar"], "page_break": True,
     "show_if": {"question": "smoke", "in": ["Yes"]}},
    {"id": "pipe", "text": "Pipe brand?", "options": ["A", "B"], "show_if": {"question": "kinds", "in": ["Pipe"]}},
    {"id": "end", "text": "Anything else?", "options": ["Yes", "No"], "page_break": True},
]}
API = "/api/v1/surveys/logic/responses"


@pytest.fixture
def logic_survey(app):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, parse_definition(DEFINITION), status="open")
    finally:
        db.conn.close()


def token(client) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', client.get("/s/logic").get_data(as_text=True)).group(1)


# (reports, field refused or None, words)
CASES = [
    ({"smoke": 1, "end": 0}, None, ""),  # "No": nothing else asked
    ({"smoke": 2, "many": 1, "end": 0}, None, ""),  # "Sometimes": many asked, kinds not
    ({"smoke": 0, "many": 0, "kinds": [1, 0], "pipe": 1, "end": 1}, None, ""),
    ({"smoke": 0, "many": 0, "kinds": [0, 1], "end": 1}, None, ""),  # no pipe ticked: pipe not asked
    ({"smoke": 1, "many": 0, "end": 0}, "many", "not asked of this respondent (asked of respondents who answered "
     "smoke = “Yes” or “Sometimes”)"),
    ({"smoke": 2, "many": 0, "kinds": [1, 0], "end": 0}, "kinds", "not asked"),
    ({"smoke": 0, "many": 0, "kinds": [0, 1], "pipe": 0, "end": 0}, "pipe", "not asked"),
    ({"many": 0, "end": 0}, "smoke", "required"),
    ({"smoke": 0, "kinds": [1, 0], "pipe": 1, "end": 0}, "many", "required"),  # asked, so required
    ({"smoke": 0, "many": 0, "kinds": [1, 0], "end": 0}, "pipe", "required"),
]


def _form_fields(reports):
    return {qid: "".join(map(str, value)) if isinstance(value, list) else str(value) for qid, value in reports.items()}


@pytest.mark.parametrize(("reports", "field", "words"), CASES)
def test_the_json_api_refuses_answers_to_hidden_questions_and_requires_the_asked_ones(
        client, logic_survey, stored_state, reports, field, words):
    before = stored_state()
    response = client.post(API, data=json.dumps({"reports": reports}), content_type="application/json")
    if field is None:
        assert response.status_code == 201, response.get_json()
        rows, _ = stored_state()
        assert [json.loads(r["reports"]) for r in rows] == [reports]
        return
    assert response.status_code == 400 and response.get_json()["field"] == field, response.get_json()
    assert words in response.get_json()["error"]
    assert stored_state() == before


@pytest.mark.parametrize(("reports", "field", "words"), CASES)
def test_the_form_refuses_answers_to_hidden_questions_and_requires_the_asked_ones(
        client, logic_survey, stored_state, reports, field, words):
    before = stored_state()
    response = client.post("/s/logic", data={"csrf_token": token(client), **_form_fields(reports)})
    if field is None:
        assert response.status_code == 303, html.unescape(response.get_data(as_text=True))[:1500]
        rows, _ = stored_state()
        assert [json.loads(r["reports"]) for r in rows] == [reports]
        return
    page = html.unescape(response.get_data(as_text=True))
    assert response.status_code == 400 and words in page
    assert re.search(rf'<fieldset[^>]*has-error[^>]*id="q-{field}"', page)
    assert stored_state() == before


def test_the_page_marks_conditions_and_pages_and_the_store_keeps_them(app, client, logic_survey):
    db = connect(app.config["DATABASE"])
    try:
        assert get_survey(db, "logic").survey == parse_definition(DEFINITION)
    finally:
        db.conn.close()
    page = html.unescape(client.get("/s/logic").get_data(as_text=True))
    tags = {re.search(r'id="q-(\w+)"', tag).group(1): tag for tag in re.findall(r"<fieldset[^>]*>", page)}
    assert 'data-show-if="smoke" data-show-in="0 2"' in tags["many"]
    assert 'data-show-if="smoke" data-show-in="0"' in tags["kinds"]
    assert 'data-show-if="kinds" data-show-in="0"' in tags["pipe"]
    assert [re.search(r'data-page="(\d+)"', tags[q]).group(1) for q in ("smoke", "many", "kinds", "pipe", "end")] == \
        ["1", "1", "2", "2", "3"]
    assert "data-show-if" not in tags["smoke"] and "data-show-if" not in tags["end"]
    # the condition is said in words beside the question (it shows without JavaScript too)
    assert "Answer this only if you answered “Yes” or “Sometimes” to question 1." in page


def test_a_question_asked_of_some_respondents_is_labelled_a_subgroup_everywhere(app, auth_client, db_path):
    """The results page, the results JSON, ``deniable estimate`` (table and JSON) and the codebook say
    who was asked; its n counts only them."""
    from click.testing import CliRunner
    from support.dashboard import own

    from deniable.server.cli import cli

    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, parse_definition(DEFINITION), status="open")
    finally:
        db.conn.close()
    own(app, "logic")
    for reports in [{"smoke": 1, "end": 0}, {"smoke": 2, "many": 1, "end": 0}, {"smoke": 1, "end": 1}]:
        response = auth_client.post(API, data=json.dumps({"reports": reports}), content_type="application/json")
        assert response.status_code == 201, response.get_json()
    words = "asked of respondents who answered smoke = “Yes” or “Sometimes”"
    page = html.unescape(auth_client.get("/dashboard/logic/results").get_data(as_text=True))
    section = re.search(r'<section class="question-results card" id="q-many".*?</section>', page, re.S).group(0)
    assert words + "; these estimates are of them only." in section and "n = <span class=\"n\" data-value=\"1\">" in section
    assert "asked-of" not in re.search(r'<section class="question-results card" id="q-end".*?</section>', page,
                                       re.S).group(0)
    records = {q["id"]: q for q in auth_client.get("/dashboard/logic/export/estimates.json").get_json()["questions"]}
    assert records["many"]["asked_of"] == words and "asked_of" not in records["end"] and records["many"]["n"] == 1
    codebook = auth_client.get("/dashboard/logic/export/codebook.json").get_json()
    entries = {q["id"]: q for q in codebook["questions"]}
    assert entries["many"]["asked_of"] == words and entries["many"]["show_if"] == DEFINITION["questions"][1]["show_if"]
    assert parse_definition(codebook) == parse_definition(DEFINITION)  # the codebook reads back
    runner = CliRunner()
    table = runner.invoke(cli, ["estimate", "--db", db_path, "logic"])
    assert table.exit_code == 0, table.output
    assert f"many: How many a day?\n  {words}: its estimates are of them only" in table.output
    as_json = runner.invoke(cli, ["estimate", "--db", db_path, "logic", "--format", "json"])
    assert {q["id"]: q.get("asked_of") for q in json.loads(as_json.output)["questions"]}["many"] == words


def test_the_api_publishes_each_condition_and_page_break(client, logic_survey):
    """A client of the JSON API (the embed, deniable.client.submit) learns which questions are asked of whom."""
    questions = {q["id"]: q for q in client.get("/api/v1/surveys/logic").get_json()["questions"]}
    assert questions["many"]["show_if"] == {"question": "smoke", "in": ["Yes", "Sometimes"]}
    assert questions["pipe"]["show_if"] == {"question": "kinds", "in": ["Pipe"]}
    assert questions["kinds"]["page_break"] is True and questions["end"]["page_break"] is True
    assert "show_if" not in questions["smoke"] and "page_break" not in questions["smoke"]
