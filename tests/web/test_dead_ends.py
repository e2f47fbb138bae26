"""Respondent dead ends, through the real app and a real SQLite file: an invitation-only survey checks
its link on arrival (no link, an unknown, used, foreign or overlong one: the same words as the
submission's refusal, no form, nothing stored, nothing used up); a number error names the question's
real rule in English, Spanish and French; every question type is numbered "1.", "2." … once; and the
builder's planning panel quotes the sentence the respondent actually reads."""

from __future__ import annotations

import html
import re
import sqlite3

import pytest

from deniable.server.store.db import connect
from deniable.server.store.invitations import generate
from deniable.server.survey import questions
from deniable.server.survey.definition import parse_definition
from deniable.server.survey.explain import explain
from deniable.server.survey.simulate import TruthError
from support.dashboard import make_survey

GATE = 'id="invitation-gate"'
UNKNOWN_OR_USED = "This invitation link is not valid for this survey, or it has been used already."
NO_LINK = "This survey is by invitation only: please open it through the invitation link you received."
FORM = {"drug_use": "0", "cheating": "1", "age_group": "0"}


def counts(app) -> tuple[int, int]:
    """(stored responses, unused invitations) in the test's database file."""
    conn = sqlite3.connect(app.config["DATABASE"])
    try:
        return (conn.execute("SELECT count(*) FROM responses").fetchone()[0],
                conn.execute("SELECT count(*) FROM invitations").fetchone()[0])
    finally:
        conn.close()


def csrf(client, url="/s/demo") -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', client.get(url).get_data(as_text=True)).group(1)


@pytest.fixture
def links(app, open_demo):
    """The demo survey, invitation-only, with a fresh link, a used one, and a link of another survey."""
    other = make_survey(app, {"slug": "other", "title": "Other", "questions": [
        {"id": "a", "text": "A?", "options": ["Yes", "No"], "epsilon": 1.0}]}, status="open")
    db = connect(app.config["DATABASE"])
    try:
        db.execute("UPDATE surveys SET invitation_only = 1 WHERE id = ?", [open_demo.id])
        fresh, used = generate(db, open_demo.id, 2)
        [foreign] = generate(db, other.id, 1)
    finally:
        db.conn.close()
    client = app.test_client()  # `used` is spent the way a respondent spends a link
    token = csrf(client, f"/s/demo?t={used}")
    assert client.post("/s/demo", data={**FORM, "csrf_token": token, "invitation": used}).status_code == 303
    assert counts(app) == (1, 2)
    return {"fresh": fresh, "used": used, "foreign": foreign}


@pytest.mark.parametrize("link, words", [
    (None, NO_LINK), ("", NO_LINK), ("not-a-token", UNKNOWN_OR_USED), ("used", UNKNOWN_OR_USED),
    ("foreign", UNKNOWN_OR_USED), ("x" * 65, NO_LINK),
])
def test_a_link_that_cannot_answer_is_said_on_arrival_and_nothing_is_stored_or_used(app, client, links, link,
                                                                                      words):
    before = counts(app)
    query = "" if link is None else f"?t={links.get(link, link)}"
    response = client.get(f"/s/demo{query}")
    page = response.get_data(as_text=True)
    assert response.status_code == 403 and GATE in page and words in html.unescape(page)
    assert 'id="survey-form"' not in page and "<fieldset" not in page and "Send my answers" not in page
    assert "Your answers were not sent" not in page  # nothing was answered yet
    assert "x" * 65 not in page  # an overlong link is not echoed into the page
    assert counts(app) == before  # nothing stored, no link used up


def test_the_gate_reveals_no_more_than_the_submission_does(app, client, links):
    """An unknown, a used and another survey's link get one and the same words, on arrival and on
    submission: opening the page cannot tell them apart where sending could not."""
    token = csrf(client, f"/s/demo?t={links['fresh']}")
    gates, refusals = set(), set()
    for name in ("used", "foreign", "not-a-token"):
        link = links.get(name, name)
        page = client.get(f"/s/demo?t={link}").get_data(as_text=True)
        gates.add(re.search(r'id="invitation-gate">\s*<p>(.*?)</p>', page, re.S).group(1))
        refused = client.post("/s/demo", data={**FORM, "csrf_token": token, "invitation": link})
        assert refused.status_code == 403
        refusals.add(re.search(r'<div class="form-error"[^>]*>\s*<p>(.*?)</p>', refused.get_data(as_text=True),
                               re.S).group(1))
    assert len(gates) == 1 and len(refusals) == 1
    assert counts(app)[0] == 1  # only the response that spent the used link


def test_a_fresh_link_opens_the_form_and_is_spent_only_by_sending(app, client, links):
    before = counts(app)
    page = client.get(f"/s/demo?t={links['fresh']}").get_data(as_text=True)
    assert GATE not in page and 'id="survey-form"' in page
    assert counts(app) == before


NUMBERS = {"slug": "numbers", "title": "Numbers", "questions": [
    {"id": "days", "text": "Days?", "type": "numeric", "min": 0, "max": 30, "epsilon": 1.0},
    {"id": "hours", "text": "Hours?", "type": "numeric", "min": 0, "max": 30, "step": 0.5, "epsilon": 1.0},
    {"id": "fives", "text": "Fives?", "type": "numeric", "min": 10, "max": 50, "step": 5},
    {"id": "offset", "text": "Offset?", "type": "numeric", "min": 0.25, "max": 10.25, "step": 0.5, "epsilon": 1.0},
]}
MESSAGES = {  # language: the form's messages of the three rules (filled in by types/numeric.js)
    "en": ("Please give a whole number from {min} to {max}.", "Please give a multiple of {step} from {min} to {max}.",
           "Please give a number from {min} to {max} in steps of {step}."),
    "es": ("Indica un número entero de {min} a {max}.", "Indica un múltiplo de {step} de {min} a {max}.",
           "Indica un número de {min} a {max} en pasos de {step}."),
    "fr": ("Veuillez indiquer un nombre entier de {min} à {max}.",
           "Veuillez indiquer un multiple de {step} de {min} à {max}.",
           "Veuillez indiquer un nombre de {min} à {max} par pas de {step}."),
}


@pytest.mark.parametrize("lang", sorted(MESSAGES))
def test_each_number_question_names_its_own_rule_in_the_respondents_language(app, client, lang):
    make_survey(app, NUMBERS, status="open")
    page = client.get("/s/numbers", headers={"Accept-Language": lang}).get_data(as_text=True)
    whole, multiple, steps = MESSAGES[lang]
    assert f'data-msg-number-whole="{whole}"' in page
    assert f'data-msg-number-multiple="{multiple}"' in page
    assert f'data-msg-number-range-step="{steps}"' in page
    rules = dict(re.findall(r'id="q-(\w+)"[^>]*?data-rule="(\w+)"', page, re.S))
    assert rules == {"days": "whole", "hours": "multiple", "fives": "multiple", "offset": "steps"}


@pytest.mark.parametrize("qid, value, rule", [
    ("days", 2.5, "a whole number from 0 to 30"), ("hours", 0.3, "a multiple of 0.5 from 0 to 30"),
    ("fives", 12, "a multiple of 5 from 10 to 50"), ("offset", 0.5, "a number from 0.25 to 10.25 in steps of 0.5"),
])
def test_the_servers_message_for_a_number_off_its_rule_names_the_rule(qid, value, rule):
    q = next(q for q in parse_definition(NUMBERS).questions if q.id == qid)
    with pytest.raises(TruthError, match=re.escape(f"value {value!r} is not an answer of the question ({rule})")):
        q.qtype.truth(q, {"values": [value], "probabilities": [1.0]}, qid)


def every_type_survey() -> dict:
    examples = [definition for qtype in questions.all_types() for definition, _ in qtype.examples()]
    return {"slug": "every", "title": "Every type",
            "questions": [{"id": f"q{n}", **definition} for n, definition in enumerate(examples, start=1)]}


def test_every_question_type_is_numbered_once_in_order(app, client):
    definition = every_type_survey()
    make_survey(app, definition, status="open")
    page = client.get("/s/every").get_data(as_text=True)
    legends = re.findall(r'<legend id="q-(\w+)-legend"><span class="question-number">([^<]*)</span>', page)
    assert legends == [(f"q{n}", f"{n}.") for n in range(1, len(definition["questions"]) + 1)]
    assert page.count('class="question-number"') == len(definition["questions"])
    # no group inside a card is named by the legend again, so a screen reader reads the number once
    assert not re.search(r'aria-(labelledby|describedby)="[^"]*-legend\b', page)


def test_the_planning_panel_quotes_what_the_respondent_reads(app, auth_client):
    make_survey(app, {"slug": "plan", "title": "Plan", "questions": [
        {"id": "used", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]})
    info = explain(1.0, 2)
    panel = html.unescape(auth_client.get("/dashboard/plan/edit").get_data(as_text=True))
    assert f"Respondents read: “{info['short']}”" in panel
    more = re.search(r'<details class="explain-more">(.*?)</details>', panel, re.S).group(1)
    assert "What does this mean?" in more and f"“{info['coin']} {info['posterior']} {info['odds']}”" in more
    assert panel.count(info["posterior"]) == 1  # the long sentence only behind the disclosure
    # the same sentence the survey page shows beside the question
    make_survey(app, {"slug": "plan-open", "title": "Plan", "questions": [
        {"id": "used", "text": "Used drugs?", "options": ["Yes", "No"], "epsilon": 1.0}]}, status="open")
    survey_page = html.unescape(auth_client.get("/s/plan-open").get_data(as_text=True))
    note = re.search(r'<p class="note protected-note" id="used-note">(.*?)</p>', survey_page, re.S).group(1)
    assert info["short"] in note
    plan = auth_client.get("/dashboard/plan.json?k=2&epsilon=1&target=700&margin=0.05").get_json()
    assert (plan["short"], plan["odds"]) == (info["short"], info["odds"])  # what builder.js redraws
