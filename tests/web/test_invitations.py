"""Invitation links: hashed, single use, consumed with the response insert, never linkable to it."""

from __future__ import annotations

import csv
import inspect
import io
import re
import sqlite3
import textwrap
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from deniable.server.store import invitations
from deniable.server.store.db import connect, write_transaction
from deniable.server.store.demo import DEMO_DEFINITION
from deniable.server.store.invitations import InvitationError, generate, token_hash
from deniable.server.store.surveys import insert_survey
from deniable.server.survey.definition import parse_definition
from support.dashboard import csrf_token, own

API = "/api/v1/surveys/demo/responses"
REPORTS = {"drug_use": 1, "cheating": 0, "age_group": 2}


@pytest.fixture
def invited(app, open_demo):
    """The open demo survey switched to invitation-only, with three fresh tokens."""
    db = connect(app.config["DATABASE"])
    try:
        db.execute("UPDATE surveys SET invitation_only = 1 WHERE id = ?", [open_demo.id])
        return generate(db, open_demo.id, 3)
    finally:
        db.conn.close()


def state(app):
    conn = sqlite3.connect(app.config["DATABASE"])
    try:
        return (conn.execute("SELECT count(*) FROM responses").fetchone()[0],
                conn.execute("SELECT count(*) FROM invitations").fetchone()[0],
                conn.execute("SELECT sum(count) FROM counts").fetchone()[0])
    finally:
        conn.close()


def test_only_hashes_reach_the_database_file(app, invited, client):
    assert client.post(API, json={"reports": REPORTS, "invitation": invited[0]}).status_code == 201
    raw = b"".join(p.read_bytes() for p in Path(app.config["DATABASE"]).parent.glob("deniable.db*"))
    for token in invited:
        assert token.encode() not in raw
    assert token_hash(invited[1]).encode() in raw


def test_a_token_works_once_and_a_refusal_stores_nothing(app, invited, client):
    assert state(app) == (0, 3, 0)
    assert client.post(API, json={"reports": REPORTS, "invitation": invited[0]}).status_code == 201
    assert state(app) == (1, 2, 3)
    for body in ({"reports": REPORTS, "invitation": invited[0]},  # used
                 {"reports": REPORTS, "invitation": "not-a-token"},
                 {"reports": REPORTS}):
        response = client.post(API, json=body)
        assert response.status_code == 403 and response.get_json()["field"] == "invitation"
        assert state(app) == (1, 2, 3)


def test_an_invalid_response_does_not_use_up_the_token(app, invited, client):
    bad = client.post(API, json={"reports": {**REPORTS, "drug_use": 7}, "invitation": invited[1]})
    assert bad.status_code == 400 and state(app) == (0, 3, 0)
    assert client.post(API, json={"reports": REPORTS, "invitation": invited[1]}).status_code == 201


def assert_tokens_stay_with_their_survey(consume, db, survey_id: int, token: str) -> None:
    """``consume`` refuses a token of survey ``survey_id`` on another survey, where it leaves the
    token untouched, and accepts it on its own survey."""
    other = insert_survey(db, parse_definition({**DEMO_DEFINITION, "slug": "other"}), status="open").id
    with pytest.raises(InvitationError):
        with write_transaction(db):
            consume(db, other, token)
    with write_transaction(db):
        consume(db, survey_id, token)  # still there, and still this survey's


def test_a_token_belongs_to_its_survey(app, invited, open_demo, client):
    db = connect(app.config["DATABASE"])
    try:
        assert_tokens_stay_with_their_survey(invitations.consume, db, open_demo.id, invited[0])
        # the same through the API: survey `other2`, invitation-only, refuses demo's token
        other = insert_survey(db, parse_definition({**DEMO_DEFINITION, "slug": "other2"}), status="open")
        db.execute("UPDATE surveys SET invitation_only = 1 WHERE id = ?", [other.id])
    finally:
        db.conn.close()
    refused = client.post("/api/v1/surveys/other2/responses", json={"reports": REPORTS, "invitation": invited[1]})
    assert refused.status_code == 403 and refused.get_json()["field"] == "invitation"
    assert client.post(API, json={"reports": REPORTS, "invitation": invited[1]}).status_code == 201


def test_the_token_test_fails_without_the_survey_condition(app, invited, open_demo):
    """A mutation check: ``consume`` with ``AND survey_id = ?`` removed must fail the test above."""
    source = textwrap.dedent(inspect.getsource(invitations.consume))
    assert " AND survey_id = ?" in source and "[token_hash(token), survey_id]" in source
    mutant_source = source.replace(" AND survey_id = ?", "").replace("[token_hash(token), survey_id]",
                                                                     "[token_hash(token)]")
    namespace = dict(vars(invitations))
    exec(compile(mutant_source, "<consume without the survey condition>", "exec"), namespace)  # noqa: S102
    db = connect(app.config["DATABASE"])
    try:
        with pytest.raises(pytest.fail.Exception):
            assert_tokens_stay_with_their_survey(namespace["consume"], db, open_demo.id, invited[0])
    finally:
        db.conn.close()


def test_responses_hold_nothing_that_links_to_a_token(app, invited, client):
    client.post(API, json={"reports": REPORTS, "invitation": invited[2]})
    conn = sqlite3.connect(app.config["DATABASE"])
    try:
        columns = {r[1] for r in conn.execute("PRAGMA table_info(responses)")}
        row = conn.execute("SELECT * FROM responses").fetchone()
        invitation_columns = {r[1] for r in conn.execute("PRAGMA table_info(invitations)")}
        rowid = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'invitations'").fetchone()[0]
    finally:
        conn.close()
    assert columns == {"id", "survey_id", "submitted_on", "reports", "design", "text_version"}
    assert not any(invited[2] in str(v) or token_hash(invited[2]) in str(v) for v in row)
    assert invitation_columns == {"token_hash", "survey_id"} and "WITHOUT ROWID" in rowid


def test_the_survey_page_carries_the_token_from_the_link(app, invited, client):
    page = client.get(f"/s/demo?t={invited[0]}").get_data(as_text=True)
    assert f'name="invitation" value="{invited[0]}"' in page
    assert "by invitation only" in client.get("/s/demo").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    form = {"csrf_token": token, "drug_use": "0", "cheating": "1", "age_group": "0"}
    refused = client.post("/s/demo", data=form)
    assert refused.status_code == 403 and state(app)[0] == 0
    assert client.post("/s/demo", data={**form, "invitation": invited[0]}).status_code == 303
    assert state(app) == (1, 2, 3)


def test_researcher_generates_links_as_csv_and_switches_the_mode(app, auth_client, open_demo):
    own(app, "demo")
    token = csrf_token(auth_client, "/dashboard/demo/edit")
    response = auth_client.post("/dashboard/demo/invitations", data={"csrf_token": token, "count": "5", "generate": "1"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert len(rows) == 5 and len({r["token"] for r in rows}) == 5
    for r in rows:
        url = urlsplit(r["url"])
        assert url.path == "/s/demo" and parse_qs(url.query)["t"] == [r["token"].removeprefix("'")]
    assert state(app)[1] == 5
    page = auth_client.get("/dashboard/demo/edit").get_data(as_text=True)
    assert '<strong id="unused-invitations">5</strong>' in page

    assert auth_client.post("/dashboard/demo/invitations",
                            data={"csrf_token": token, "mode": "invited", "set_mode": "1"}).status_code == 302
    assert "by invitation only" in auth_client.get("/s/demo").get_data(as_text=True)
    for count in ("0", "100001", "many"):
        bad = auth_client.post("/dashboard/demo/invitations", data={"csrf_token": token, "count": count, "generate": "1"})
        assert bad.status_code == 400 and b"count" in bad.data
    assert state(app)[1] == 5


def test_links_begin_with_the_configured_base_url_not_the_request_host(app, auth_client, open_demo):
    own(app, "demo")
    app.config["BASE_URL"] = "https://survey.example.org"
    token = csrf_token(auth_client, "/dashboard/demo/edit")
    response = auth_client.post("/dashboard/demo/invitations", data={"csrf_token": token, "count": "2", "generate": "1"})
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert all(r["url"].startswith("https://survey.example.org/s/demo?t=") for r in rows)
    assert response.headers["Cache-Control"] == "no-store"


def test_logged_out_visitors_cannot_generate(client, open_demo, app):
    response = client.post("/dashboard/demo/invitations", data={"count": "5", "generate": "1"})
    assert response.status_code in (302, 400, 401)
    assert state(app)[1] == 0


@pytest.mark.browser
def test_an_invitation_link_in_chromium(app, page, live_server, invited):
    page.goto(f"{live_server}/s/demo?t={invited[0]}")
    page.wait_for_function("!window.location.search.includes('t=')")
    assert invited[0] not in page.url  # survey.js moved it out of the address bar into the form
    page.check("#drug_use-option-1")
    page.check("#cheating-option-0")
    page.check("#age_group-option-2")
    page.locator("#submit-answers:not([disabled])").wait_for()
    with page.expect_navigation():
        page.click("#submit-answers")
    assert "/thanks" in page.url
    assert state(app) == (1, 2, 3)
