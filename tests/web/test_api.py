"""The JSON API: the published design, valid submissions, and a table of refused ones."""

from __future__ import annotations

import json

import pytest

from deniable.client.submit import SubmitError, fetch_mechanisms, make_reports, post_reports, submit
from deniable.server.store.db import connect
from deniable.server.survey.definition import parse_definition
from deniable.server.store.demo import DEMO_DEFINITION
from deniable.server.store.surveys import insert_survey

URL = "/api/v1/surveys/demo/responses"
VALID = {"reports": {"drug_use": 1, "cheating": 2}}


@pytest.fixture
def surveys(app, open_demo):
    """The open demo survey, plus a closed one (`closed`) and a draft (`drafty`)."""
    db = connect(app.config["DATABASE"])
    try:
        for slug, status in (("closed", "closed"), ("drafty", "draft")):
            insert_survey(db, parse_definition({**DEMO_DEFINITION, "slug": slug}), status=status)
    finally:
        db.conn.close()
    return open_demo


def post(client, body, *, url=URL, content_type="application/json", headers=None):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post(url, data=data, content_type=content_type, headers=headers or {})


BAD = [
    # (id, url, body, content type, headers, status, field, message fragment)
    ("bool", URL, {"reports": {"drug_use": True, "cheating": 0}}, None, None, 400, "drug_use", "got true"),
    ("float", URL, {"reports": {"drug_use": 1.0, "cheating": 0}}, None, None, 400, "drug_use", "got 1.0"),
    ("string", URL, {"reports": {"drug_use": "1", "cheating": 0}}, None, None, 400, "drug_use", 'got "1"'),
    ("null", URL, {"reports": {"drug_use": None, "cheating": 0}}, None, None, 400, "drug_use", "got null"),
    ("list value", URL, {"reports": {"drug_use": [1], "cheating": 0}}, None, None, 400, "drug_use", "got [1]"),
    ("out of range", URL, {"reports": {"drug_use": 1, "cheating": 4}}, None, None, 400, "cheating", "0..3, got 4"),
    ("negative", URL, {"reports": {"drug_use": -1, "cheating": 0}}, None, None, 400, "drug_use", "got -1"),
    ("direct out of range", URL, {"reports": {"drug_use": 0, "cheating": 0, "age_group": 9}}, None, None,
     400, "age_group", "0..3, got 9"),
    ("huge int", URL, '{"reports": {"drug_use": 1' + "0" * 5000 + ', "cheating": 0}}', None, None,
     400, "body", "not valid JSON"),
    ("NaN", URL, '{"reports": {"drug_use": NaN, "cheating": 0}}', None, None, 400, "drug_use", "got NaN"),
    ("missing required", URL, {"reports": {"drug_use": 1}}, None, None, 400, "cheating", "required"),
    ("empty reports", URL, {"reports": {}}, None, None, 400, "drug_use", "required"),
    ("unknown question", URL, {"reports": {"drug_use": 1, "cheating": 0, "sneaky": 1}}, None, None,
     400, "sneaky", "no question"),
    ("duplicate key", URL, '{"reports": {"drug_use": 1, "drug_use": 0, "cheating": 0}}', None, None,
     400, "drug_use", "more than once"),
    ("reports not an object", URL, {"reports": [1, 0]}, None, None, 400, "reports", "must be an object"),
    ("no reports", URL, {"answers": {"drug_use": 1}}, None, None, 400, "answers", "unknown key"),
    ("reports missing", URL, {}, None, None, 400, "reports", "is required"),
    ("extra top-level key", URL, {**VALID, "ip": "1.2.3.4"}, None, None, 400, "ip", "unknown key"),
    ("body not an object", URL, [1, 2], None, None, 400, "body", "must be a JSON object"),
    ("not JSON", URL, "drug_use=1", None, None, 400, "body", "not valid JSON"),
    ("not UTF-8", URL, b'{"reports": {"\xff": 1}}', None, None, 400, "body", "not valid JSON"),
    ("deep nesting", URL, "[" * 30_000 + "]" * 30_000, None, None, 400, "body", "nested"),
    ("form content type", URL, "drug_use=1&cheating=0", "application/x-www-form-urlencoded", None,
     415, "Content-Type", "application/json"),
    ("text/plain", URL, json.dumps(VALID), "text/plain", None, 415, "Content-Type", "application/json"),
    ("no content type", URL, json.dumps(VALID), "", None, 415, "Content-Type", "application/json"),
    ("cross origin", URL, VALID, None, {"Origin": "https://evil.example"}, 403, "Origin", "cross-origin"),
    ("null origin", URL, VALID, None, {"Origin": "null"}, 403, "Origin", "cross-origin"),
    ("sec-fetch-site", URL, VALID, None, {"Sec-Fetch-Site": "cross-site"}, 403, "Origin", "cross-site"),
    ("oversized", URL, {"reports": {"drug_use": 1, "cheating": 0}, "pad": "x" * 70_000}, None, None,
     413, "body", "larger than the limit"),
    ("unknown survey", "/api/v1/surveys/nope/responses", VALID, None, None, 404, "slug", "no survey"),
    ("draft survey", "/api/v1/surveys/drafty/responses", VALID, None, None, 404, "slug", "no survey"),
    ("closed survey", "/api/v1/surveys/closed/responses", VALID, None, None, 409, "slug", "closed"),
]


@pytest.mark.parametrize("url, body, content_type, headers, status, field, fragment",
                         [case[1:] for case in BAD], ids=[case[0] for case in BAD])
def test_refused_submissions_store_nothing(client, surveys, stored_state, url, body, content_type,
                                           headers, status, field, fragment):
    before = stored_state()
    response = post(client, body, url=url, headers=headers,
                    content_type="application/json" if content_type is None else content_type)
    assert response.status_code == status
    assert response.is_json
    assert fragment in response.json["error"]
    assert response.json["field"] == field
    assert stored_state() == before


def test_valid_submission_stores_exactly_the_reports(client, open_demo, stored_state):
    response = post(client, {"reports": {"cheating": 3, "drug_use": 0, "age_group": 1}},
                    headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"})
    assert response.status_code == 201
    rows, counts = stored_state()
    assert [r["id"] for r in rows] == [response.json["id"]]
    assert json.loads(rows[0]["reports"]) == {"drug_use": 0, "cheating": 3, "age_group": 1}
    assert json.loads(rows[0]["design"])["age_group"] == [4, None]
    nonzero = {(c["qid"], c["option"]) for c in counts if c["count"]}
    assert nonzero == {("drug_use", 0), ("cheating", 3), ("age_group", 1)}
    assert all(c["count"] in (0, 1) for c in counts)


def test_charset_parameter_is_accepted(client, open_demo):
    response = post(client, VALID, content_type="application/json; charset=utf-8")
    assert response.status_code == 201


def test_get_on_the_responses_endpoint_is_json_405(client, open_demo):
    response = client.get(URL)
    assert response.status_code == 405 and response.is_json


def test_unknown_api_path_is_json_404(client):
    response = client.get("/api/v1/nothing")
    assert response.status_code == 404 and response.json["error"]


def test_design_endpoint(client, surveys):
    design = client.get("/api/v1/surveys/demo").json
    assert design["status"] == "open"
    by_id = {q["id"]: q for q in design["questions"]}
    assert by_id["drug_use"]["threshold"] == 3221225472 and by_id["drug_use"]["p"] == 0.75
    assert by_id["age_group"]["protected"] is False and "threshold" not in by_id["age_group"]
    assert client.get("/api/v1/surveys/drafty").status_code == 404
    assert client.get("/api/v1/surveys/closed").json["status"] == "closed"


def test_python_client_against_a_live_server(live_server, open_demo, stored_state):
    assert fetch_mechanisms(live_server, "demo")["cheating"][0] == 4
    response_id = submit(live_server, "demo", {"drug_use": 1, "cheating": 0, "age_group": 2})
    rows, _ = stored_state()
    assert [r["id"] for r in rows] == [response_id]
    stored = json.loads(rows[0]["reports"])
    assert stored["age_group"] == 2  # asked directly: sent as answered
    assert stored["drug_use"] in (0, 1) and stored["cheating"] in range(4)
    # A retry re-sends the same reports (one randomization per question).
    reports = make_reports({"drug_use": 0, "cheating": 1}, fetch_mechanisms(live_server, "demo"))
    first = post_reports(live_server, "demo", reports)
    second = post_reports(live_server, "demo", reports)
    rows, _ = stored_state()
    assert [json.loads(r["reports"]) for r in rows].count(reports) == 2
    assert first != second and {first, second} <= {r["id"] for r in rows}  # random ids: no order
    with pytest.raises(SubmitError, match="cheating: an answer is required") as info:
        submit(live_server, "demo", {"drug_use": 1})
    assert info.value.status == 400 and info.value.field == "cheating"
    with pytest.raises(ValueError, match="drug_use: answer must be an option index 0..1"):
        submit(live_server, "demo", {"drug_use": 5, "cheating": 0})
