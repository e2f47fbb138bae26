"""The fast submission path stays honest: the cached design never lets a closed survey accept,
a draft is never served, a cookie-less API request gets no session, and the route answered in
front of Flask (server/web/respondent/submit_route.py) keeps what Flask gave it: the host check,
the headers, the JSON error shape, a logged 500 that stores nothing."""

from __future__ import annotations

import json
import logging
import re

import pytest
from flask import url_for
from flask.cli import routes_command
from werkzeug.exceptions import HTTPException

from deniable.server.store.db import connect
from deniable.server.survey.definition import parse_definition
from deniable.server.store.demo import DEMO_DEFINITION
from deniable.server.store.surveys import insert_survey, set_status
from deniable.server.web import logs
from deniable.server.web.app import create_app
from deniable.server.web.security import HEADERS

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


def test_closing_and_reopening_within_the_routes_snapshot_second_is_seen_at_once(app, client, open_demo, stored_state):
    """The route uses an open survey's lookup again for a second (SubmitRoute.launched); the write
    transaction reads the status itself, so each change is seen by the very next submission."""
    assert post(client, VALID).status_code == 201  # the process now holds the open survey's snapshot
    for status, expected in (("closed", 409), ("open", 201), ("closed", 409), ("open", 201)):
        change_status(app, "demo", status)
        before = stored_state()
        response = post(client, VALID)
        assert response.status_code == expected, status
        if expected == 409:
            assert stored_state() == before and "closed" in response.json["error"]
    assert len(stored_state()[0]) == 3


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


def test_the_route_answers_as_flask_did(client, open_demo):
    response = post(client, VALID)
    assert response.status_code == 201 and response.mimetype == "application/json"
    assert response.data == json.dumps({"id": response.json["id"]}, separators=(",", ":")).encode() + b"\n"
    assert response.headers["Cache-Control"] == "no-store"
    assert all(response.headers[name] == value for name, value in HEADERS.items())
    assert int(response.headers["Content-Length"]) == len(response.data)
    for method in ("GET", "PUT", "DELETE", "HEAD"):
        refused = client.open(URL, method=method)
        assert refused.status_code == 405 and refused.headers["Allow"] == "POST"
    assert client.post(URL + "/", json=VALID).status_code == 404  # only the exact path
    assert client.post("/api/v1/surveys/a/b/responses", json=VALID).status_code == 404



def test_flask_routes_lists_the_route(app):
    """Its rule, api.submit, is in the url_map, so ``flask routes`` lists it and url_for builds it."""
    listed = app.test_cli_runner().invoke(routes_command)
    assert listed.exit_code == 0, listed.output
    assert re.search(r"^api\.submit +POST +/api/v1/surveys/<slug>/responses *$", listed.output, re.M), listed.output
    with app.test_request_context():
        assert url_for("api.submit", slug="demo") == URL


@pytest.mark.parametrize("path", [URL, "//api/v1/surveys/demo/responses", "/api/v1//surveys/demo/responses"])
def test_flask_never_matches_the_listed_rule(app, client, open_demo, path):
    """The rule is built, never matched: submit_route answers its path before Flask sees the request, and
    Flask answers the paths werkzeug would have taken for it (leading or doubled slashes) as before it was
    listed: 404, not the rule's 405, nor its view."""
    called = []
    app.view_functions["api.submit"] = lambda slug: called.append(slug) or ("", 204)
    adapter = app.url_map.bind("localhost")
    for method in ("POST", "GET"):
        with pytest.raises(HTTPException) as caught:
            adapter.match(path, method=method)
        assert caught.value.code == 404
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": path, "CONTENT_TYPE": "application/json"}
    answered = client.open(URL, method="POST", data=json.dumps(VALID), environ_overrides=environ)
    assert answered.status_code == (201 if path == URL else 404)
    assert client.open(URL, method="GET", environ_overrides={"PATH_INFO": path}).status_code == \
        (405 if path == URL else 404)
    assert called == []

def test_an_untrusted_host_cannot_submit(db_path, open_demo, stored_state):
    app = create_app({"TESTING": True, "DATABASE": db_path, "SECRET_KEY": "k", "RATELIMIT_ENABLED": False,
                      "TRUSTED_HOSTS": ["survey.example.org"]})
    before = stored_state()
    refused = app.test_client().post(URL, json=VALID, headers={"Host": "evil.example"})
    assert refused.status_code == 400 and refused.json["field"] == "Host"
    assert "--public-host evil.example" in refused.json["error"]
    assert stored_state() == before
    ok = app.test_client().post(URL, json=VALID, headers={"Host": "survey.example.org"})
    assert ok.status_code == 201


@pytest.mark.parametrize("origin, status", [("http://localhost", 201), ("http://localhost/", 201),
                                            ("https://localhost", 403), ("http://localhost:8000", 403)])
def test_the_origin_must_be_the_servers_own(client, open_demo, origin, status):
    assert post_with(client, {"Origin": origin}).status_code == status


def post_with(client, headers):
    return client.post(URL, data=json.dumps(VALID), content_type="application/json", headers=headers)


def test_an_unexpected_failure_is_a_counted_json_500_that_stores_nothing(db_path, open_demo,
                                                                        caplog):
    """A real fault: the counts table is gone (another process broke the file), so the
    transaction fails after the response row was inserted; it is rolled back.  It writes no log
    line (the line's time would date the request): it is counted, and the summary has it."""
    app = create_app({"DATABASE": db_path, "SECRET_KEY": "k", "RATELIMIT_ENABLED": False})
    db = connect(db_path)
    try:
        db.conn.execute("ALTER TABLE counts RENAME TO counts_elsewhere")
        db.conn.commit()
        rows_before = db.execute("SELECT count(*) FROM responses").fetchone()[0]
    finally:
        db.conn.close()
    logs.TALLY.take()
    with caplog.at_level(logging.INFO):
        response = app.test_client().post(URL, json=VALID, environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert response.status_code == 500 and response.json == {
        "error": "An unexpected error happened on the server. Nothing was stored.", "field": None}
    assert caplog.text == ""
    with caplog.at_level(logging.INFO):
        assert logs.summarize() == 1
    assert "1 × unexpected errors in POST /api/v1/surveys/<slug>/responses: OperationalError" in caplog.text
    assert "no such table: counts" in caplog.text and "203.0.113.9" not in caplog.text
    db = connect(db_path)
    try:
        assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == rows_before
    finally:
        db.conn.close()
