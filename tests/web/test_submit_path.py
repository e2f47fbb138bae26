"""The fast submission path stays honest: the cached design never lets a closed survey accept,
a draft is never served, and a cookie-less API request gets no session."""

from __future__ import annotations

import json

from deniable.server.store.db import connect
from deniable.server.survey.definition import parse_definition
from deniable.server.store.demo import DEMO_DEFINITION
from deniable.server.store.surveys import insert_survey, set_status

URL = "/api/v1/surveys/demo/responses"
VALID = {"reports": {"drug_use": 1, "cheating": 2}}


def post(client, body, url=URL):
    return client.post(url, data=json.dumps(body), content_type="application/json")


def change_status(app, slug, status):
    """Change a survey's status through another connection, as the dashboard would."""
    db = connect(app.config["DATABASE"])
    try:
        set_status(db, slug, status)
    finally:
        db.conn.close()


def test_a_survey_closed_after_its_design_was_cached_accepts_nothing(app, client, open_demo, stored_state):
    assert post(client, VALID).status_code == 201  # the worker now holds the parsed design
    change_status(app, "demo", "closed")
    before = stored_state()

    response = post(client, VALID)

    assert response.status_code == 409
    assert response.json["field"] == "slug" and "closed" in response.json["error"]
    assert stored_state() == before
    assert client.get("/api/v1/surveys/demo").json["status"] == "closed"


def test_a_draft_is_not_served_until_it_opens_and_then_takes_responses(app, client, open_demo, stored_state):
    db = connect(app.config["DATABASE"])
    try:
        insert_survey(db, parse_definition({**DEMO_DEFINITION, "slug": "later"}), status="draft")
    finally:
        db.conn.close()
    later = "/api/v1/surveys/later"
    assert client.get(later).status_code == 404
    assert post(client, VALID, url=later + "/responses").status_code == 404

    change_status(app, "later", "open")

    assert client.get(later).json["status"] == "open"
    response = post(client, VALID, url=later + "/responses")
    assert response.status_code == 201
    rows, counts = stored_state()
    assert [json.loads(r["reports"]) for r in rows] == [VALID["reports"]]
    bumped = {(c["qid"], c["option"]) for c in counts if c["count"]}
    assert bumped == {("drug_use", 1), ("cheating", 2)}


def test_a_cookie_less_api_submission_gets_no_session_cookie(client, open_demo):
    response = post(client, VALID)
    assert response.status_code == 201
    assert "Set-Cookie" not in response.headers


def test_a_session_cookie_still_works_beside_the_api(client, open_demo):
    """The survey page's session (CSRF token) still round-trips: the shortcut only skips
    requests that carry no session cookie."""
    page = client.get("/s/demo")
    assert page.status_code == 200 and "Set-Cookie" in page.headers
    with client.session_transaction() as session:
        assert session.get("csrf_token")
