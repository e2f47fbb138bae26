"""No dead ends for respondents: the no-JavaScript notice first, an invitation-only survey that says on
arrival (before anything is answered) that a link is missing, unknown or used — checking the link
without using it up — and the consent tick box before the questions when it is asked for."""

from __future__ import annotations

import re
import sqlite3

import pytest

from deniable.server.store.db import connect
from deniable.server.store.invitations import generate
from support.dashboard import make_survey

GATE = 'id="invitation-gate"'


@pytest.fixture
def invited(app, open_demo):
    """The open demo survey switched to invitation-only, with two fresh tokens."""
    db = connect(app.config["DATABASE"])
    try:
        db.execute("UPDATE surveys SET invitation_only = 1 WHERE id = ?", [open_demo.id])
        return generate(db, open_demo.id, 2)
    finally:
        db.conn.close()


def unused_tokens(app) -> int:
    conn = sqlite3.connect(app.config["DATABASE"])
    try:
        return conn.execute("SELECT count(*) FROM invitations").fetchone()[0]
    finally:
        conn.close()


def test_the_no_javascript_notice_comes_before_everything_else(client, open_demo):
    page = client.get("/s/demo").get_data(as_text=True)
    main = page[page.index('<main id="main"'):]
    assert main.index('class="noscript"') < main.index("<h1>") < main.index('id="survey-form"')


@pytest.mark.parametrize("query, words", [
    ("", "by invitation only: please open it through the invitation link you received"),
    ("?t=not-a-token", "This invitation link is not valid for this survey, or it has been used already"),
])
def test_a_missing_or_unknown_link_is_said_on_arrival_with_no_questions(app, client, invited, query, words):
    response = client.get(f"/s/demo{query}")
    page = response.get_data(as_text=True)
    assert response.status_code == 403 and GATE in page and words in page
    assert 'id="survey-form"' not in page and 'class="question' not in page  # nothing to fill in in vain
    assert "Your answers were not sent" not in page  # nothing was answered
    assert unused_tokens(app) == 2


def test_a_used_link_is_said_on_arrival_and_a_good_one_is_not_used_up_by_opening_it(app, client, invited):
    good, used = invited
    for _ in range(2):  # opening the page twice uses nothing
        page = client.get(f"/s/demo?t={good}").get_data(as_text=True)
        assert GATE not in page and f'name="invitation" value="{good}"' in page
    assert unused_tokens(app) == 2
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    form = {"csrf_token": token, "drug_use": "0", "cheating": "1", "age_group": "0"}
    assert client.post("/s/demo", data={**form, "invitation": used}).status_code == 303
    assert unused_tokens(app) == 1
    response = client.get(f"/s/demo?t={used}")
    assert response.status_code == 403 and "has been used already" in response.get_data(as_text=True)
    # a refused POST still shows the answers given with the reason (the person did answer)
    refused = client.post("/s/demo", data={**form, "invitation": used})
    assert refused.status_code == 403 and "Your answers were not sent" in refused.get_data(as_text=True)


def test_the_gate_speaks_the_respondents_language(client, invited):
    page = client.get("/s/demo?t=nope", headers={"Accept-Language": "fr"}).get_data(as_text=True)
    assert "Ce lien d’invitation n’est pas valable" in page


def test_a_survey_open_to_anyone_has_no_gate(client, open_demo):
    assert GATE not in client.get("/s/demo?t=whatever").get_data(as_text=True)


def test_the_consent_box_comes_before_the_questions(app, client):
    make_survey(app, {"slug": "agree", "title": "Agree", "information": "We study habits.", "consent": True,
                      "questions": [{"id": "a", "text": "A?", "options": ["Yes", "No"], "epsilon": 1.0}]},
                status="open")
    page = client.get("/s/agree").get_data(as_text=True)
    assert page.index('id="survey-form"') < page.index('id="consent-agree"') < page.index('id="q-a"')


def test_a_whole_number_rule_is_offered_in_the_respondents_language(client, open_demo):
    page = client.get("/s/demo", headers={"Accept-Language": "es"}).get_data(as_text=True)
    assert 'data-msg-number-whole="Indica un número entero de {min} a {max}."' in page
