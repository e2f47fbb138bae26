"""What the app does with request bodies, under any WSGI server: the rate limit comes before anything
parses a body; a chunked body over the limit is a 413; a body the client cut off is a 400 that
stores nothing and writes no log line."""

from __future__ import annotations

import io
import json
import logging

import pytest

from deniable.server.store.db import connect
from deniable.server.web import logs
from deniable.server.web.app import create_app

URL = "/api/v1/surveys/demo/responses"
VALID = json.dumps({"reports": {"drug_use": 1, "cheating": 2}}).encode()


@pytest.fixture
def limited_app(db_path, open_demo):  # open_demo puts the demo survey in db_path, the app's database
    return create_app({"DATABASE": db_path, "SECRET_KEY": "k", "RATELIMIT_SUBMIT": "1 per hour"})


def _responses(db_path) -> int:
    db = connect(db_path)
    try:
        return db.execute("SELECT count(*) FROM responses").fetchone()[0]
    finally:
        db.conn.close()


@pytest.mark.parametrize("body,content_type", [
    ("drug_use=0", "application/x-www-form-urlencoded"),  # no CSRF token: Flask-WTF would parse it and say so
    (b"--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--\r\n", "multipart/form-data; boundary=b"),
])
def test_the_survey_form_is_refused_by_its_rate_limit_before_its_body_is_parsed(limited_app, body, content_type):
    """Over its limit, a form that would fail the CSRF check or the unnamed-field check (both parse
    the body) gets the 429: the limit ran first."""
    client = limited_app.test_client()
    assert client.post("/s/demo", data=body, content_type=content_type).status_code == 400  # parsed, refused
    refused = client.post("/s/demo", data=body, content_type=content_type)
    assert refused.status_code == 429 and "Retry-After" in refused.headers


def test_the_login_form_is_refused_by_its_rate_limit_before_its_body_is_parsed(db_path):
    client = create_app({"DATABASE": db_path, "SECRET_KEY": "k", "RATELIMIT_LOGIN": "1 per hour"}).test_client()
    form = {"email": "someone@example.org", "password": "wrong"}  # and no CSRF token
    assert client.post("/auth/login", data=form).status_code == 400
    assert client.post("/auth/login", data=form).status_code == 429


def _chunked(client, stream):
    """A chunked POST as a WSGI server hands it on: de-chunked, and marked as ending by itself."""
    return client.post(URL, input_stream=stream, content_type="application/json",
                       headers={"Transfer-Encoding": "chunked"}, environ_overrides={"wsgi.input_terminated": True})


def test_a_chunked_submission_over_the_limit_is_a_413_and_under_it_is_stored(app, client, open_demo, db_path):
    before = _responses(db_path)
    too_large = _chunked(client, io.BytesIO(VALID + b" " * app.config["MAX_CONTENT_LENGTH"]))
    assert too_large.status_code == 413 and too_large.json["field"] == "body"
    assert _responses(db_path) == before
    assert _chunked(client, io.BytesIO(VALID)).status_code == 201
    assert _responses(db_path) == before + 1


class _CutOff(io.RawIOBase):
    """A request body whose client goes away after a few bytes, as a WSGI server's stream reports it."""

    def __init__(self):
        self.sent = False

    def readable(self):
        return True

    def readinto(self, buffer):
        if self.sent:
            raise ConnectionResetError(104, "Connection reset by peer")
        self.sent = True
        buffer[:5] = VALID[:5]
        return 5


@pytest.mark.parametrize("chunked", [True, False])
def test_a_body_cut_off_by_the_client_is_a_400_that_stores_nothing_and_logs_nothing(db_path, open_demo,
                                                                                     caplog, chunked):
    """Not a 500, and no log line (Flask's would carry the time): a count for the daily summary."""
    client = create_app({"DATABASE": db_path, "SECRET_KEY": "k", "RATELIMIT_ENABLED": False}).test_client()
    before, counted = _responses(db_path), logs.TALLY.peek(logs.CUT_OFF)
    framing = {"wsgi.input_terminated": True, "HTTP_TRANSFER_ENCODING": "chunked"} if chunked else {}
    with caplog.at_level(logging.INFO):
        response = client.post(URL, data=VALID, content_type="application/json",
                               environ_overrides={"wsgi.input": io.BufferedReader(_CutOff()), **framing})
    assert response.status_code == 400 and response.json["field"] == "body", response.json
    assert caplog.text == "" and _responses(db_path) == before
    assert logs.TALLY.peek(logs.CUT_OFF) == counted + 1
