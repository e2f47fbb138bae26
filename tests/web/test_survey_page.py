"""The survey page (``/s/<slug>``): what it shows, and the form POST with a table of bad input."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from deniable.server.store.db import connect
from deniable.server.survey.definition import parse_definition
from deniable.server.store.demo import DEMO_DEFINITION
from deniable.server.store.surveys import insert_survey, set_status


class Inputs(HTMLParser):
    """Collect the attributes of every <input>, <script> and <fieldset>."""

    def __init__(self):
        super().__init__()
        self.inputs, self.scripts, self.fieldsets, self.styles = [], [], [], 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "input":
            self.inputs.append(attrs)
        elif tag == "script":
            self.scripts.append(attrs)
        elif tag == "fieldset":
            self.fieldsets.append(attrs)
        elif tag == "style" or "style" in attrs:
            self.styles += 1


def parse(html: str) -> Inputs:
    parser = Inputs()
    parser.feed(html)
    return parser


def csrf_token(client, slug="demo") -> str:
    html = client.get(f"/s/{slug}").get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


def test_page_renders_the_questions_and_the_protection(client, open_demo):
    response = client.get("/s/demo")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    page = parse(html)
    assert '<meta name="viewport"' in html and 'class="skip-link"' in html
    for q in open_demo.survey.questions:
        assert q.text in html
        assert all(label in html for label in q.options)
    # The privacy meaning, per question and in total, with the coin picture.
    assert "Your device sends your true answer 75% of the time; otherwise it sends the other answer." in html
    assert ("could only guess your answer before (50/50), can be at most 75% sure of it" in html)
    assert "could only guess your answer before (a 1 in 4 chance), can be at most 71.2% sure of it" in html
    assert "two possible sets of answers for you (50/50 before), can be at most 95.7% sure" in html
    assert "ε" not in html  # no jargon for respondents
    assert "/static/coin.svg" in html
    assert "Not protected — sent as you answer." in html
    # The mechanism reaches the page only as integers.
    protected = {f["data-qid"]: f for f in page.fieldsets if "protected" in f["class"]}
    assert protected["drug_use"]["data-k"] == "2" and protected["drug_use"]["data-threshold"] == "3221225472"
    assert re.fullmatch(r"\d+", protected["cheating"]["data-threshold"])
    # No inline script or style; a module script; a disabled submit button and a noscript note.
    assert page.scripts == [{"type": "module", "src": "/static/survey.js"}]
    assert page.styles == 0
    assert re.search(r'<button type="submit" id="submit-answers" class="primary" disabled>', html)
    assert "<noscript>" in html
    assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")


def test_protected_inputs_have_no_name(client, open_demo):
    page = parse(client.get("/s/demo").get_data(as_text=True))
    radios = [i for i in page.inputs if i.get("type") == "radio"]
    protected_ids = [i["id"] for i in radios if i["id"].split("-")[0] in ("drug_use", "cheating")]
    assert len(protected_ids) == 6
    for radio in radios:
        qid = radio["id"].split("-option-")[0]
        if qid in ("drug_use", "cheating"):
            assert "name" not in radio, radio
        else:
            assert radio["name"] == "age_group"
    hidden = {i["name"]: i for i in page.inputs if i.get("type") == "hidden"}
    assert set(hidden) == {"csrf_token", "drug_use", "cheating"}
    assert hidden["drug_use"]["value"] == "" and hidden["cheating"]["value"] == ""


@pytest.mark.parametrize("slug, status", [("nope", 404), ("drafty", 404), ("closed", 410)])
def test_unpublished_or_closed_surveys(client, app, slug, status):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, parse_definition({**DEMO_DEFINITION, "slug": "drafty"}))
        insert_survey(db, parse_definition({**DEMO_DEFINITION, "slug": "closed"}), status="open")
        set_status(db, "closed", "closed")
    finally:
        db.conn.close()
    response = client.get(f"/s/{slug}")
    assert response.status_code == status
    assert response.mimetype == "text/html"
    assert "<form" not in response.get_data(as_text=True)


def test_valid_form_submission_and_thank_you_page(client, open_demo, stored_state):
    token = csrf_token(client)
    response = client.post("/s/demo", data={"csrf_token": token, "drug_use": "1", "cheating": "2",
                                            "age_group": "3"})
    assert response.status_code == 303
    assert response.headers["Location"].endswith("/s/demo/thanks")
    rows, counts = stored_state()
    assert len(rows) == 1
    assert json.loads(rows[0]["reports"]) == {"drug_use": 1, "cheating": 2, "age_group": 3}
    assert sum(c["count"] for c in counts) == 3
    # Nothing about the answers is in the session (a readable cookie): the thank-you page's
    # table is filled by the browser from what that tab sent (tests/e2e/test_browser_survey.py).
    with client.session_transaction() as session:
        assert set(session) <= {"csrf_token"}
    thanks = client.get("/s/demo/thanks").get_data(as_text=True)
    assert "Exactly what was sent" in thanks and "may differ from what you chose" in thanks
    assert thanks.count('<td class="sent-label"></td>') == 3  # empty cells, for thanks.js


def test_optional_question_may_be_left_empty(client, open_demo, stored_state):
    token = csrf_token(client)
    response = client.post("/s/demo", data={"csrf_token": token, "drug_use": "0", "cheating": "0",
                                            "age_group": ""})
    assert response.status_code == 303
    rows, _ = stored_state()
    assert json.loads(rows[0]["reports"]) == {"drug_use": 0, "cheating": 0}


BAD_FORMS = [
    # (id, form fields besides the CSRF token, field named, message fragment)
    ("missing required", {"drug_use": "1"}, "cheating", "an answer is required"),
    ("empty required", {"drug_use": "", "cheating": "1"}, "drug_use", "an answer is required"),
    ("out of range", {"drug_use": "2", "cheating": "1"}, "drug_use", "0..1, got 2"),
    ("negative", {"drug_use": "-1", "cheating": "1"}, "drug_use", "option index 0..1, got &#39;-1&#39;"),
    ("not a number", {"drug_use": "yes", "cheating": "1"}, "drug_use", "got &#39;yes&#39;"),
    ("float", {"drug_use": "1.0", "cheating": "1"}, "drug_use", "got &#39;1.0&#39;"),
    ("bool", {"drug_use": "true", "cheating": "1"}, "drug_use", "got &#39;true&#39;"),
    ("unicode digit", {"drug_use": "\u0661", "cheating": "1"}, "drug_use", "option index"),
    ("too many digits", {"drug_use": "1" * 50, "cheating": "1"}, "drug_use", "option index"),
    ("sent twice", {"drug_use": ["0", "1"], "cheating": "1"}, "drug_use", "sent 2 times"),
    ("unknown field", {"drug_use": "1", "cheating": "1", "true_answer": "1"}, "true_answer", "no question"),
    ("direct out of range", {"drug_use": "1", "cheating": "1", "age_group": "4"}, "age_group", "0..3, got 4"),
]


@pytest.mark.parametrize("fields, field, fragment", [c[1:] for c in BAD_FORMS], ids=[c[0] for c in BAD_FORMS])
def test_bad_form_submissions_rerender_with_message(client, open_demo, stored_state, fields, field, fragment):
    before = stored_state()
    response = client.post("/s/demo", data={"csrf_token": csrf_token(client), **fields})
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert "Your answers were not sent." in html and fragment in html
    if field in {q.id for q in open_demo.survey.questions}:
        assert re.search(rf'<p class="field-error" id="{field}-error">[^<]*{re.escape(fragment)}', html)
    assert '<form method="post"' in html  # the form comes back, with a fresh token
    assert stored_state() == before


@pytest.mark.parametrize("token", [None, "", "forged-token"])
def test_form_without_a_valid_csrf_token_is_refused(client, open_demo, stored_state, token):
    before = stored_state()
    client.get("/s/demo")
    data = {"drug_use": "1", "cheating": "1"}
    if token is not None:
        data["csrf_token"] = token
    response = client.post("/s/demo", data=data)
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert "security token was not accepted" in html and '<form method="post"' in html
    assert stored_state() == before


def test_form_post_to_a_closed_or_unknown_survey(client, app, open_demo, stored_state):
    token = csrf_token(client)
    db = connect(app.config["DATABASE"])
    try:
        set_status(db, "demo", "closed")
    finally:
        db.conn.close()
    before = stored_state()
    response = client.post("/s/demo", data={"csrf_token": token, "drug_use": "1", "cheating": "1"})
    closed = response.get_data(as_text=True)
    # the same friendly page as the survey's address gives, never "Error 409" or the slug in quotes
    assert response.status_code == 409 and "This survey is closed" in closed
    assert "no longer accepts answers. Thank you for your interest." in closed
    assert "Error 409" not in closed and "&#39;demo&#39;" not in closed
    page = client.get("/s/demo")
    assert page.status_code == 410 and "no longer accepts answers" in page.get_data(as_text=True)
    response = client.post("/s/nope", data={"csrf_token": token, "drug_use": "1"})
    assert response.status_code == 404
    assert stored_state() == before


def test_oversized_form_is_413_html(client, open_demo, stored_state):
    before = stored_state()
    response = client.post("/s/demo", data={"csrf_token": "x", "drug_use": "1" * 70_000})
    assert response.status_code == 413
    assert "larger than the limit" in response.get_data(as_text=True)
    assert stored_state() == before


def test_thank_you_without_a_submission(client, open_demo):
    html = client.get("/s/demo/thanks").get_data(as_text=True)
    assert "Thank you" in html and html.count('<td class="sent-label"></td>') == 3  # nothing known here
