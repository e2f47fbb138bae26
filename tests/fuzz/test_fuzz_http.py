"""Hostile HTTP input: property-based fuzzing (hypothesis) of every endpoint of ``app.url_map``.

Each test builds its own app on a fresh SQLite file with CSRF **enabled** (a survey in each
state, stored reports, a researcher) and sends hypothesis-generated requests through Flask's
test client: wrong types, huge numbers, missing and extra fields, bad or missing CSRF tokens,
wrong content types, oversized bodies, closed and unknown surveys, cross-origin headers,
random query strings, logged in and logged out.  For every request:

* the status is never 5xx;
* a refused request (4xx) carries a message — JSON ``{"error", …}`` under ``/api/``
  (``{"error", "field"}`` for the respondents' API), an HTML page with the message elsewhere —
  and leaves every table (surveys, questions, responses, counts, researchers) unchanged;
* a request that changes the database answered 2xx/3xx;
* where the outcome is fully determined (the respondents' JSON API and form, logging in,
  the lifecycle, importing a definition) the exact status and the exact stored rows are checked
  against an oracle written from the rules in docs/design.md.

``test_every_endpoint_is_fuzzed`` fails when a route is added without a fuzz test here, and
every fuzz test asserts that its routes were really reached.

Run with more examples: ``DENIABLE_FUZZ_PROFILE=fuzz-thorough .venv/bin/python -m pytest
tests/test_fuzz_http.py`` (profiles in ``fuzz_strategies``).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sqlite3
from urllib.parse import quote, urlencode, urlsplit

import numpy as np
from flask import request_started
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from werkzeug.datastructures import MultiDict
from werkzeug.http import parse_options_header
from werkzeug.test import EnvironBuilder

from support.fuzz import FUZZ, FUZZ_SLOW, json_values, near_valid_definition, table_snapshot
from deniable.server.web.app import create_app
from deniable.server.web.respondent import submit_route
from deniable.server.store.accounts import set_researcher
from deniable.server.store.db import connect
from deniable.server.survey.definition import DefinitionError, loads_definition, parse_definition
from deniable.server.store.demo import DEMO_DEFINITION
from deniable.server.store.responses import insert_many
from deniable.server.store.surveys import get_survey, insert_survey

pytestmark = pytest.mark.slow  # about a minute together: the full suite runs them, the fast lane does not

EMAIL = "ada@example.org"
PASSWORD = "correct horse battery"
LIMIT = 64 * 1024  # MAX_CONTENT_LENGTH of create_app
DEMO = {q["id"]: q for q in DEMO_DEFINITION["questions"]}
DEMO_K = {qid: len(q["options"]) for qid, q in DEMO.items()}
DEMO_REQUIRED = {qid for qid, q in DEMO.items() if q.get("required", True)}
HABITS = {
    "slug": "habits", "title": "Habits", "description": "",
    "questions": [
        {"id": "drugs", "text": "Drugs?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "Cheated?", "options": ["Never", "Once", "Often"], "epsilon": 2.0},
        {"id": "age", "text": "Age", "options": ["<30", "30+"]},
    ],
}
# slug → status, as created by World; "nope" does not exist.
SLUGS = {"demo": "open", "closed": "closed", "drafty": "draft", "habits": "open", "nope": None}
DEMO_LIKE = {"demo", "closed", "drafty", "nope"}  # the demo's questions (or no survey): the oracles apply
CSRF_RE = re.compile(r'name="csrf_token" type="hidden" value="([^"]+)"')
MESSAGE_RES = [  # where each template puts a message a person can act on
    re.compile(r'class="error-message">\s*[^<\s]'),                        # error.html
    re.compile(r'class="form-error"[^>]*>\s*<p><strong>[^<]+</strong>\s*[^<\s]'),  # survey.html
    re.compile(r'<ul class="errors"[^>]*><li>\s*[^<\s]'),                   # dashboard field errors
    re.compile(r'class="errors form-errors"[^>]*><ul><li>\s*[^<\s]'),       # dashboard form errors
    re.compile(r'class="errors" role="alert">\s*[^<\s]'),                   # crosstab, subgroups
    re.compile(r'class="closed-message">\s*[^<\s]'),                        # closed.html
    re.compile(r'class="error-summary".*?<li><a href="#[^"]+">\s*[^<\s]', re.S),  # the dashboard's summaries
]

COVERED: set[tuple[str, str]] = set()
SUBMIT = ("api.submit", "POST")  # POST /api/v1/surveys/<slug>/responses: its rule is listed, submit_route answers


def covers(*routes: tuple[str, str]):
    """Declare the ``(endpoint, method)`` pairs a fuzz test sends requests to."""
    def mark(test):
        COVERED.update(routes)
        test.routes = routes
        return test
    return mark


class World:
    """An app with CSRF enabled on a fresh database: the demo survey (open), ``closed``,
    ``drafty`` (draft), ``habits`` (open, 60 stored reports), all owned by the one researcher."""

    def __init__(self, tmp_path):
        self.db_path = str(tmp_path / "fuzz.db")
        self.app = create_app({"TESTING": True, "DATABASE": self.db_path, "SECRET_KEY": "fuzz-secret",
                               "WTF_CSRF_ENABLED": True, "RATELIMIT_ENABLED": False})
        self.hits: set[tuple[str, str]] = set()
        request_started.connect(self._hit, self.app)
        self.app.wsgi_app = self._recording(self.app.wsgi_app)
        db = connect(self.db_path)
        try:
            owner = set_researcher(db, EMAIL, PASSWORD)
            for slug, status in (("demo", "open"), ("closed", "closed"), ("drafty", "draft")):
                insert_survey(db, parse_definition({**DEMO_DEFINITION, "slug": slug}), status=status, owner_id=owner)
            habits = insert_survey(db, parse_definition(HABITS), status="open", owner_id=owner)
            rng = np.random.default_rng(3)
            insert_many(db, habits, {"drugs": rng.integers(0, 2, 60), "cheat": rng.integers(0, 3, 60),
                                     "age": rng.integers(0, 2, 60)})
        finally:
            db.conn.close()
        # Another session's token: well-formed and signed with the right key, but not ours.
        self.foreign_token = self.token(self.app.test_client())

    def _recording(self, inner):
        """Note the requests the submission route answers in front of Flask (no Flask signal)."""
        def app(environ, start_response):
            if environ["REQUEST_METHOD"] == "POST" and submit_route.PATH.fullmatch(environ.get("PATH_INFO", "")):
                self.hits.add(SUBMIT)
            return inner(environ, start_response)
        return app

    def _hit(self, sender, **extra):
        from flask import request

        self.hits.add((request.endpoint, request.method))

    def snapshot(self) -> dict:
        conn = sqlite3.connect(self.db_path)
        try:
            return table_snapshot(conn)
        finally:
            conn.close()

    def stored(self, slug: str):
        """The survey ``slug`` as stored, after checking that it reads back as its own definition."""
        db = connect(self.db_path)
        try:
            stored = get_survey(db, slug)
        finally:
            db.conn.close()
        assert stored is not None and parse_definition(stored.survey.to_dict()) == stored.survey
        return stored

    def status(self, slug: str) -> str | None:
        with sqlite3.connect(self.db_path) as conn:
            row = conn.execute("SELECT status FROM surveys WHERE slug = ?", [slug]).fetchone()
        conn.close()
        return row[0] if row else None

    @staticmethod
    def token(client, url: str = "/auth/login") -> str:
        match = CSRF_RE.search(client.get(url).get_data(as_text=True))
        assert match, f"no CSRF token on {url}"
        return match.group(1)

    def researcher(self):
        """A logged-in test client and its CSRF token."""
        client = self.app.test_client()
        response = client.post("/auth/login", data={"csrf_token": self.token(client), "email": EMAIL,
                                                    "password": PASSWORD})
        assert response.status_code == 302
        return client, self.token(client, "/dashboard/")

    def anonymous(self):
        client = self.app.test_client()
        return client, self.token(client)

    def assert_reached(self, test) -> None:
        missing = set(test.routes) - self.hits
        assert not missing, f"the fuzzing never reached {sorted(missing)}"


def assert_message(response, client=None) -> None:
    """A refused request says why: JSON with ``error`` under /api/, else an HTML message."""
    status = response.status_code
    path = response.request.path
    if path.startswith("/api/") or (path == "/dashboard/plan.json" and status == 400):  # its own refusals: JSON
        assert response.mimetype == "application/json", (status, response.mimetype)
        body = response.get_json()
        assert isinstance(body, dict) and isinstance(body.get("error"), str) and body["error"].strip(), body
        if not path.endswith("/estimates"):  # the respondents' API names the field
            assert "field" in body, body
        return
    assert response.mimetype == "text/html", (status, response.mimetype)
    if response.headers.get("Location"):
        # A refused lifecycle change redirects back to the editor with the reason flashed.
        with client.session_transaction() as session:
            flashes = session.get("_flashes", [])
        assert any(category == "error" and message.strip() for category, message in flashes), flashes
        return
    text = response.get_data(as_text=True)
    assert any(pattern.search(text) for pattern in MESSAGE_RES), text[:3000]


def check(world: World, response, before: dict, *, client=None, refused: bool = False) -> dict:
    """The properties every request must have; returns the database after it."""
    status = response.status_code
    assert status < 500, response.get_data(as_text=True)[:3000]
    after = world.snapshot()
    if refused:
        assert 400 <= status < 500, status
    if status >= 400:
        assert after == before, f"a refused request ({status}) changed the database"
        assert_message(response, client)
    if after != before:
        assert 200 <= status < 400, status
    response.close()  # a static file is sent from an open file
    return after


# ---------------------------------------------------------------- strategies

printable = st.characters(min_codepoint=32, max_codepoint=126)
header_text = st.text(printable, max_size=30)
ORIGIN = st.one_of(st.sampled_from(["http://localhost", "http://localhost/", "https://localhost",
                                    "http://localhost:5000", "https://evil.example", "null", ""]), header_text)
FETCH_SITE = st.one_of(st.sampled_from(["same-origin", "same-site", "none", "cross-site", "Cross-Site"]),
                       header_text)
HEADERS = st.fixed_dictionaries({}, optional={
    "Origin": ORIGIN, "Sec-Fetch-Site": FETCH_SITE, "Referer": header_text,
    "Accept": st.sampled_from(["application/json", "text/html", "*/*", ""]), "X-Requested-With": header_text,
})
SLUG = st.one_of(st.sampled_from(sorted(SLUGS)), st.sampled_from(sorted(SLUGS)), st.text(max_size=12))
QUERY_KEYS = ["method", "confidence", "simultaneous", "fake", "row", "col", "question", "by", "margin",
              "next", "slug", "monitoring", "formula", "reference", "to", "k", "epsilon", "target", "chart"]
QUERY_VALUES = st.one_of(
    st.sampled_from(["exact", "wilson", "wald", "profile", "clopper-pearson", "0.90", "0.95", "0.99", "1", "0",
                     "y", "", "nan", "inf", "-inf", "1e999", "-1", "0.0001", "0.5", "0.6", "10000000000",
                     "drugs", "cheat", "age", "drug_use", "cheating", "age_group", str(10**400),
                     "drugs ~ age", "cheat ~ num(age)", "drugs ~ cheat", "drug_use ~ age_group", "Yes", "~",
                     "open", "close", "reopen", "delete", "2", "4", "64", "65", "100"]),
    st.text(max_size=8),
)
QUERY = st.lists(st.tuples(st.one_of(st.sampled_from(QUERY_KEYS), st.text(max_size=5)), QUERY_VALUES),
                 max_size=5).map(urlencode)
CONTENT_TYPE = st.one_of(
    st.sampled_from(["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "text/plain",
                     "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "",
                     "application/json-patch+json", "application/jsonx"]),
    header_text,
)


def path(template: str, slug: str) -> str:
    return template.replace("<slug>", quote(slug, safe=""))


# ---------------------------------------------------------------- the respondents' JSON API

REPORT_VALUE = st.one_of(st.integers(-2, 5), st.integers(), st.sampled_from([10**400, 2**63, -(2**63)]),
                         st.booleans(), st.floats(), st.text(max_size=3), st.none(), json_values)
VALID_REPORTS = st.fixed_dictionaries({"drug_use": st.integers(0, 1), "cheating": st.integers(0, 3)},
                                      optional={"age_group": st.integers(0, 3)})
ANY_REPORTS = st.dictionaries(st.one_of(st.sampled_from([*DEMO, "other", "csrf_token"]), st.text(max_size=5)),
                              REPORT_VALUE, max_size=4)
API_BODY = st.one_of(
    st.fixed_dictionaries({"reports": VALID_REPORTS}),
    st.fixed_dictionaries({"reports": st.one_of(VALID_REPORTS, ANY_REPORTS)},
                          optional={"extra": json_values, "reports ": json_values}),
    json_values,
)


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


def api_expected(slug: str, headers: dict, raw: bytes) -> int:
    """The status docs/design.md's rules give a POST to /api/v1/surveys/<slug>/responses."""
    origin = headers.get("Origin")
    if origin is not None and origin.rstrip("/") != "http://localhost":
        return 403
    if headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
        return 403
    if parse_options_header(headers.get("Content-Type", ""))[0].lower() != "application/json":
        return 415
    if SLUGS.get(slug) not in ("open", "closed"):
        return 404
    if len(raw) > LIMIT:
        return 413
    try:
        body = json.loads(raw, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError):
        return 400
    if not isinstance(body, dict) or set(body) != {"reports"}:
        return 400
    if SLUGS[slug] == "closed":
        return 409
    return 201 if valid_demo_reports(body["reports"]) else 400


def valid_demo_reports(reports) -> bool:
    return (isinstance(reports, dict) and set(reports) <= set(DEMO) and DEMO_REQUIRED <= set(reports)
            and all(type(v) is int and 0 <= v < DEMO_K[qid] for qid, v in reports.items()))


def assert_one_response_stored(before: dict, after: dict, reports: dict) -> None:
    """Exactly one new row holding ``reports``, and the counts of those options bumped by one."""
    new = [row for row in after["responses"] if row not in before["responses"]]
    assert len(new) == 1 and len(after["responses"]) == len(before["responses"]) + 1
    assert json.loads(new[0][3]) == reports
    old_counts = {row[:3]: row[3] for row in before["counts"]}
    survey_id = new[0][1]
    bumped = {(survey_id, qid, option) for qid, option in reports.items()}
    for key, count in ((row[:3], row[3]) for row in after["counts"]):
        assert count == old_counts[key] + (key in bumped), key
    for table in ("surveys", "questions", "researchers"):
        assert after[table] == before[table]


@covers(SUBMIT)
def test_api_submit(tmp_path):
    world = World(tmp_path)
    client = world.app.test_client()

    @FUZZ
    @given(slug=st.one_of(st.sampled_from(["demo", "demo", "demo", "closed", "drafty", "nope"]), SLUG),
           body=API_BODY, raw=st.one_of(st.none(), st.binary(max_size=60)),
           pad=st.sampled_from([0, 0, 0, 10, LIMIT, 70_000]),
           content_type=st.one_of(st.just("application/json"), CONTENT_TYPE), headers=HEADERS)
    @example(slug="demo", body=None, raw=b'{"reports": {"drug_use": 1, "drug_use": 0, "cheating": 0}}', pad=0,
             content_type="application/json", headers={})
    @example(slug="demo", body=None, raw=b"[" * 50_000 + b"]" * 10_000, pad=0, content_type="application/json",
             headers={})
    @example(slug="demo", body={"reports": {"drug_use": 1, "cheating": 0}}, raw=None, pad=0,
             content_type="application/json; charset=utf-16", headers={"Origin": "http://localhost/"})
    def run(slug, body, raw, pad, content_type, headers):
        if raw is None:
            try:
                raw = json.dumps(body).encode()
            except ValueError:  # an integer beyond Python's 4300-digit limit
                raw = b"{}"
        raw += b" " * pad
        headers = {**headers, "Content-Type": content_type}
        before = world.snapshot()
        response = client.post(path("/api/v1/surveys/<slug>/responses", slug), data=raw, headers=headers)
        after = check(world, response, before)
        if slug in DEMO_LIKE:
            expected = api_expected(slug, headers, raw)
            assert response.status_code == expected, (response.status_code, expected, response.get_json())
            if expected == 201:
                assert set(response.get_json()) == {"id"}
                assert_one_response_stored(before, after, json.loads(raw)["reports"])

    run()
    world.assert_reached(test_api_submit)


@covers(("api.survey", "GET"))
def test_api_design(tmp_path):
    world = World(tmp_path)
    client = world.app.test_client()

    @FUZZ
    @given(slug=SLUG, query=QUERY, headers=HEADERS)
    def run(slug, query, headers):
        before = world.snapshot()
        response = client.get(path("/api/v1/surveys/<slug>", slug), query_string=query, headers=headers)
        check(world, response, before)
        if slug in SLUGS:
            assert response.status_code == (200 if SLUGS[slug] in ("open", "closed") else 404)

    run()
    world.assert_reached(test_api_design)


# ---------------------------------------------------------------- the survey page and form

FIELD_NAME = st.one_of(st.sampled_from([*DEMO, *DEMO, "csrf_token"]),
                       st.text(max_size=8).filter(lambda name: not name.endswith("csrf_token")))
FIELD_VALUE = st.one_of(
    st.integers(0, 4).map(str),
    st.sampled_from(["", "-1", "01", "1.0", " 1", "1 ", "\uff11", "\u0663", "1e3", "999999", "1000000", "9" * 50,
                     "true", "null", "0x1"]),
    st.text(max_size=6),
)
VALID_FIELDS = st.tuples(st.integers(0, 1), st.integers(0, 3), st.one_of(st.none(), st.just(""), st.integers(0, 3))
                         ).map(lambda t: [("drug_use", str(t[0])), ("cheating", str(t[1]))]
                               + ([] if t[2] is None else [("age_group", str(t[2]))]))
FORM_FIELDS = st.one_of(
    VALID_FIELDS,
    st.lists(st.tuples(FIELD_NAME, FIELD_VALUE), max_size=6),
    st.tuples(VALID_FIELDS, st.lists(st.tuples(FIELD_NAME, FIELD_VALUE), max_size=2)).map(lambda t: t[0] + t[1]),
)
TOKEN_KIND = st.sampled_from(["valid", "valid", "valid", "missing", "empty", "garbage", "foreign", "twice",
                              "empty-then-valid"])
HEADER_TOKEN = st.sampled_from([None, None, "valid", "garbage", "foreign"])
FORM_ENCODING = st.sampled_from(["urlencoded", "urlencoded", "multipart", "json", "text", "none"])


def token_value(world: World, kind: str | None, valid: str) -> str | None:
    return {"valid": valid, "garbage": "garbage.token", "foreign": world.foreign_token, None: None}[kind]


def with_token(fields: list, kind: str, valid: str, world: World) -> list:
    tokens = {"missing": [], "empty": [""], "garbage": ["x" * 40], "foreign": [world.foreign_token],
              "valid": [valid], "twice": [valid, valid], "empty-then-valid": ["", valid]}[kind]
    return [("csrf_token", t) for t in tokens] + fields


def encode_form(fields: list, encoding: str, pad: int) -> tuple[dict, list]:
    """Request keyword arguments for ``fields`` sent as ``encoding``, and the fields the server
    will see in ``request.form``."""
    if pad:
        fields = [*fields, ("padding", "x" * pad)]
    if encoding == "multipart":
        kwargs = {"data": MultiDict(fields), "content_type": "multipart/form-data"}
        # Names with CR, LF or a backslash do not survive multipart (werkzeug reads ``None``),
        # '"' is dropped: the fields as the server parses them.
        parsed = EnvironBuilder(method="POST", **kwargs).get_request().form
        return kwargs, list(parsed.items(multi=True))
    if encoding == "json":
        return {"data": json.dumps(dict(fields)), "content_type": "application/json"}, []
    content_type = {"urlencoded": "application/x-www-form-urlencoded", "text": "text/plain", "none": None}[encoding]
    kwargs = {"data": urlencode(fields).encode()}
    if content_type:
        kwargs["content_type"] = content_type
    return kwargs, fields if encoding == "urlencoded" else []


def unreadable(form_fields: list) -> bool:
    """A multipart part without a readable name: refused (400) before the CSRF check."""
    return any(not isinstance(name, str) for name, _ in form_fields)


def csrf_passes(form_fields: list, header_token: str | None, valid: str) -> bool:
    """Flask-WTF's rule: the first ``csrf_token`` form value if non-empty, else the X-CSRFToken header."""
    if unreadable(form_fields):
        return False  # the request is refused before the check
    sent = [value for name, value in form_fields if name == "csrf_token"]
    token = sent[0] if sent and sent[0] else header_token
    return token == valid


def form_expected(slug: str, form_fields: list, token_ok: bool) -> tuple[int, dict | None]:
    """The status (and stored reports) docs/design.md's rules give a POST to /s/<slug>."""
    status = SLUGS.get(slug)
    if status not in ("open", "closed"):
        return 404, None
    # A closed survey's page is 410 Gone, which is what a re-rendered form becomes there.
    refused = 400 if status == "open" else 410
    if not token_ok:
        return refused, None
    names = [name for name, _ in form_fields if name != "csrf_token"]
    if any(name not in DEMO for name in names) or len(names) != len(set(names)):
        return refused, None
    reports = {}
    for name, value in form_fields:
        if name == "csrf_token" or value == "":
            continue
        if not (value.isascii() and value.isdigit() and len(value) <= 6):
            return refused, None
        reports[name] = int(value)
    if status == "closed":
        return 409, None  # checked before the answers' range
    if not DEMO_REQUIRED <= set(reports) or any(v >= DEMO_K[qid] for qid, v in reports.items()):
        return 400, None
    return 303, reports


@covers(("respond.submit", "POST"), ("respond.thanks", "GET"))
def test_survey_form_submit(tmp_path):
    world = World(tmp_path)
    client, valid = world.anonymous()

    @FUZZ
    @given(slug=st.one_of(st.sampled_from(["demo", "demo", "demo", "closed", "drafty", "nope"]), SLUG),
           fields=FORM_FIELDS, token=TOKEN_KIND, header_token=HEADER_TOKEN, encoding=FORM_ENCODING,
           pad=st.sampled_from([0, 0, 0, 0, 70_000]), headers=HEADERS)
    @example(slug="demo", fields=[("a", "1")] * 3000, token="valid", header_token=None, encoding="urlencoded",
             pad=0, headers={})
    @example(slug="closed", fields=[("drug_use", "0"), ("\\", "1")], token="valid", header_token=None,
             encoding="multipart", pad=0, headers={})  # bug: AttributeError in Flask-WTF's CSRF check
    @example(slug="demo", fields=[('"', "1")], token="valid", header_token=None, encoding="multipart", pad=0,
             headers={})
    def run(slug, fields, token, header_token, encoding, pad, headers):
        kwargs, seen = encode_form(with_token(fields, token, valid, world), encoding, pad)
        header_value = token_value(world, header_token, valid)
        if header_value is not None:
            headers = {**headers, "X-CSRFToken": header_value}
        before = world.snapshot()
        response = client.post(path("/s/<slug>", slug), headers=headers, **kwargs)
        after = check(world, response, before)
        if slug not in DEMO_LIKE:
            return
        if pad:  # beyond MAX_CONTENT_LENGTH, whatever the content type
            assert response.status_code == 413
            return
        if unreadable(seen):
            assert response.status_code == 400
            return
        expected, reports = form_expected(slug, seen, csrf_passes(seen, header_value, valid))
        assert response.status_code == expected, (response.status_code, expected, seen)
        if expected == 303:
            assert response.headers["Location"] == f"/s/{slug}/thanks"
            assert_one_response_stored(before, after, reports)
            thanks = client.get(f"/s/{slug}/thanks")
            assert thanks.status_code == 200
            text = thanks.get_data(as_text=True)
            for qid, option in reports.items():
                assert DEMO[qid]["options"][option].replace("'", "&#39;") in text

    run()
    world.assert_reached(test_survey_form_submit)


@covers(("respond.survey", "GET"), ("respond.thanks", "GET"))
def test_survey_page_and_thanks(tmp_path):
    world = World(tmp_path)
    client = world.app.test_client()

    @FUZZ
    @given(slug=SLUG, query=QUERY, headers=HEADERS, thanks=st.booleans(),
           sent=st.one_of(st.none(), json_values,
                          st.fixed_dictionaries({"slug": st.sampled_from(["demo", "closed", "x"])},
                                                optional={"reports": st.one_of(json_values, ANY_REPORTS)})))
    @example(slug="demo", query="", headers={}, thanks=True, sent={"slug": "demo"})  # bug: KeyError
    @example(slug="demo", query="", headers={}, thanks=True, sent={"slug": "demo", "reports": [1, 2]})
    def run(slug, query, headers, thanks, sent):
        with client.session_transaction() as session:
            session.pop("sent", None)
            if sent is not None:
                session["sent"] = sent
        before = world.snapshot()
        url = path("/s/<slug>/thanks" if thanks else "/s/<slug>", slug)
        response = client.get(url, query_string=query, headers=headers)
        check(world, response, before)
        if slug in SLUGS:
            published = SLUGS[slug] in ("open", "closed")
            if thanks:
                assert response.status_code == (200 if published else 404)
            else:
                assert response.status_code == {"open": 200, "closed": 410}.get(SLUGS[slug], 404)

    run()
    world.assert_reached(test_survey_page_and_thanks)


# ---------------------------------------------------------------- logging in and out

NEXT = st.one_of(st.none(), st.sampled_from(["/dashboard/", "//evil.example/", "https://evil.example/",
                                             "/\\evil.example", "javascript:alert(1)", "/dashboard/habits/results",
                                             "\\\\evil", "/%2F%2Fevil.example", " /x"]), st.text(max_size=10))


@covers(("auth.login", "GET"), ("auth.login", "POST"))
def test_login(tmp_path):
    world = World(tmp_path)

    @FUZZ_SLOW  # each attempt that passes the CSRF check costs a password hash (about 0.1 s)
    @given(method=st.sampled_from(["GET", "POST", "POST", "POST"]), token=TOKEN_KIND,
           email=st.one_of(st.just(EMAIL), st.just(EMAIL.upper() + " "), st.text(max_size=20), st.just("x" * 300)),
           password=st.one_of(st.just(PASSWORD), st.text(max_size=10), st.just("p" * 2000)),
           extra=st.lists(st.tuples(FIELD_NAME, FIELD_VALUE), max_size=2), next_url=NEXT,
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]))
    def run(method, token, email, password, extra, next_url, encoding):
        client, valid = world.anonymous()
        fields = with_token([("email", email), ("password", password), *extra], token, valid, world)
        kwargs, seen = encode_form(fields, encoding, 0)
        url = "/auth/login" + (f"?{urlencode({'next': next_url})}" if next_url is not None else "")
        before = world.snapshot()
        response = client.open(url, method=method, **(kwargs if method == "POST" else {}))
        after = check(world, response, before)
        accounts = ("sessions", "devices")  # a login stores its session's and its device's token hashes
        assert {t: rows for t, rows in after.items() if t not in accounts} == {
            t: rows for t, rows in before.items() if t not in accounts}  # and writes nothing else
        if method == "GET":
            assert response.status_code == 200
            return
        first = {}
        for name, value in seen:
            first.setdefault(name, value)
        good = (csrf_passes(seen, None, valid) and first.get("email", "").strip().lower() == EMAIL
                and first.get("password") == PASSWORD)
        if not csrf_passes(seen, None, valid):
            assert response.status_code == 400
        elif good:
            assert response.status_code == 302
            location = urlsplit(response.headers["Location"])
            # Never an open redirect: a path on this site only.
            assert not location.scheme and not location.netloc, response.headers["Location"]
            assert location.path.startswith("/") and not location.path.startswith("//")
            assert client.get("/dashboard/").status_code == 200
        else:
            assert response.status_code in (200, 401)
            assert client.get("/dashboard/").status_code == 302

    run()
    world.assert_reached(test_login)


@covers(("auth.logout", "POST"))
def test_logout(tmp_path):
    world = World(tmp_path)
    logged_in, logged_in_token = world.researcher()
    anonymous, anonymous_token = world.anonymous()
    with logged_in.session_transaction() as session:
        logged_in_session = dict(session)
    tokens = {"researcher": logged_in_token, "anonymous": anonymous_token}

    @FUZZ
    @given(who=st.sampled_from(["researcher", "anonymous"]), token=TOKEN_KIND, header_token=HEADER_TOKEN,
           encoding=FORM_ENCODING, extra=st.lists(st.tuples(FIELD_NAME, FIELD_VALUE), max_size=2),
           headers=HEADERS)
    def run(who, token, header_token, encoding, extra, headers):
        client = logged_in if who == "researcher" else anonymous
        valid = tokens[who]
        kwargs, seen = encode_form(with_token(extra, token, valid, world), encoding, 0)
        header_value = token_value(world, header_token, valid)
        if header_value is not None:
            headers = {**headers, "X-CSRFToken": header_value}
        before = world.snapshot()
        response = client.post("/auth/logout", headers=headers, **kwargs)
        check(world, response, before)
        if csrf_passes(seen, header_value, valid):
            assert response.status_code == 302 and response.headers["Location"] == "/auth/login"
            assert client.get("/dashboard/").status_code == 302
            if who == "researcher":  # logged in again for the next example (without a password hash)
                with sqlite3.connect(world.db_path) as conn:  # logging out ended the account's sessions
                    conn.execute("INSERT INTO sessions SELECT ?, id, date('now') FROM researchers",
                                 [hashlib.sha256(logged_in_session["sid"].encode()).hexdigest()])
                conn.close()
                with client.session_transaction() as session:
                    session.update(logged_in_session)
            tokens[who] = world.token(client, "/dashboard/" if who == "researcher" else "/auth/login")
        else:
            assert response.status_code == 400

    run()
    world.assert_reached(test_logout)


JOINED = "plum kayak thunder orbit"  # a password the policy accepts


@covers(("join.join", "GET"), ("join.join", "POST"))
def test_join(tmp_path):
    """An invitation link, working or not, with random passwords, CSRF tokens and encodings: a link that
    does not work is a 404 and stores nothing; a refused password or CSRF token is a 400 and stores
    nothing; an account (its session, and the invitation deleted) only for a working link, a valid
    token and two equal passwords the policy accepts."""
    from deniable.server.store.accounts import invite

    world = World(tmp_path)
    made = iter(range(10**6))

    @FUZZ_SLOW  # each accepted password costs a password hash
    @given(method=st.sampled_from(["GET", "POST", "POST", "POST"]),
           link=st.one_of(st.just("working"), st.just("working"), st.text(max_size=60)), token=TOKEN_KIND,
           password=st.one_of(st.just(JOINED), st.just(JOINED), st.just("password1234"), st.text(max_size=14),
                              st.just("p" * 2000)),
           confirm=st.one_of(st.none(), st.text(max_size=6)), extra=st.lists(st.tuples(FIELD_NAME, FIELD_VALUE),
                                                                               max_size=2),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]))
    def run(method, link, token, password, confirm, extra, encoding):
        client, valid = world.anonymous()
        email = f"new{next(made)}@example.org"
        if link == "working":
            db = connect(world.db_path)
            try:
                url = "/auth/join/" + invite(db, email)
            finally:
                db.conn.close()
        else:
            url = "/auth/join/" + quote(link, safe="")
        fields = [("password", password), ("confirm", password if confirm is None else confirm), *extra]
        kwargs, seen = encode_form(with_token(fields, token, valid, world), encoding, 0)
        before = world.snapshot()
        response = client.open(url, method=method, **(kwargs if method == "POST" else {}))
        after = check(world, response, before)
        if link != "working" or method == "GET":
            assert after == before
            assert response.status_code == (200 if link == "working" else 404) or (
                method == "POST" and response.status_code == 400)
            return
        first = {}
        for name, value in seen:
            first.setdefault(name, value)
        if not csrf_passes(seen, None, valid):
            assert response.status_code == 400
        elif first.get("password") == first.get("confirm") == JOINED:
            assert response.status_code == 303
        if response.status_code == 303:
            changed = {t for t in after if after[t] != before[t]}
            assert changed == {"researchers", "researcher_invites", "sessions"}
            assert [r[1] for r in after["researchers"] if r not in before["researchers"]] == [email]
            assert client.get("/dashboard/").status_code == 200
        else:
            assert response.status_code == 400

    run()
    world.assert_reached(test_join)


@covers(("dashboard.colleagues.colleagues", "GET"), ("dashboard.colleagues.invite", "POST"),
        ("dashboard.colleagues.revoke", "POST"))
def test_colleagues_as_an_admin(tmp_path):
    """The admins' page with random emails and CSRF tokens: an invitation or a withdrawal changes the
    invitations only; anything refused is a 4xx with its message and stores nothing."""
    world = World(tmp_path)
    with sqlite3.connect(world.db_path) as conn:
        conn.execute("UPDATE researchers SET is_admin = 1")
    conn.close()
    client, valid = world.researcher()
    emails = st.one_of(st.sampled_from(["grace@example.org", "GRACE@example.org ", EMAIL, "x" * 300 + "@e.org", "",
                                        "no-at-sign"]), st.text(max_size=12))

    @FUZZ
    @given(action=st.sampled_from(["invite", "invite", "revoke", "read"]), email=emails,
           admin=st.sampled_from([None, "y", "", "0"]), token=st.sampled_from(["valid", "valid", "missing", "garbage"]),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]))
    def run(action, email, admin, token, encoding):
        if action == "read":
            response = client.get("/dashboard/colleagues/")
            assert response.status_code == 200
            response.close()
            return
        fields = [("email", email)] + ([] if admin is None else [("admin", admin)])
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        before = world.snapshot()
        response = client.post(f"/dashboard/colleagues/{action}", **kwargs)
        after = check(world, response, before, client=client)
        assert {t for t in after if after[t] != before[t]} <= {"researcher_invites"}
        if not token_ok:
            assert response.status_code == 400
        elif action == "invite" and response.status_code == 200:
            assert 'id="invite-url"' in response.get_data(as_text=True)

    run()
    world.assert_reached(test_colleagues_as_an_admin)


# ---------------------------------------------------------------- the dashboard and the results API

DASHBOARD = [  # (endpoint, method, path template)
    ("dashboard.views.index", "GET", "/dashboard/"),
    ("dashboard.views.create", "GET", "/dashboard/new"),
    ("dashboard.views.create", "POST", "/dashboard/new"),
    ("dashboard.views.import_definition", "POST", "/dashboard/import"),
    ("dashboard.views.edit", "GET", "/dashboard/<slug>/edit"),
    ("dashboard.views.edit", "POST", "/dashboard/<slug>/edit"),
    ("dashboard.lifecycle.change_status", "POST", "/dashboard/<slug>/status"),
    ("dashboard.views.manage_invitations", "POST", "/dashboard/<slug>/invitations"),
    ("dashboard.views.export_definition", "GET", "/dashboard/<slug>/definition.json"),
    ("dashboard.views.results", "GET", "/dashboard/<slug>/results"),
    ("dashboard.views.report", "GET", "/dashboard/<slug>/report"),
    ("dashboard.views.crosstab", "GET", "/dashboard/<slug>/crosstab"),
    ("dashboard.views.subgroups", "GET", "/dashboard/<slug>/subgroups"),
    ("dashboard.views.export_responses", "GET", "/dashboard/<slug>/export/responses.csv"),
    ("dashboard.views.export_responses", "GET", "/dashboard/<slug>/export/codebook.json"),
    ("dashboard.views.export_estimates", "GET", "/dashboard/<slug>/export/estimates.json"),
    ("dashboard.views.export_estimates", "GET", "/dashboard/<slug>/export/estimates.csv"),
    ("dashboard.analysis.regression", "GET", "/dashboard/<slug>/regression"),
    ("dashboard.analysis.monitoring", "GET", "/dashboard/<slug>/monitoring"),
    ("dashboard.weighting.weighting", "GET", "/dashboard/<slug>/weighting"),
    ("dashboard.embedding.embed", "GET", "/dashboard/<slug>/embed"),
    ("dashboard.chart_files.results_chart", "GET", "/dashboard/<slug>/results/chart/q0.svg"),
    ("dashboard.chart_files.crosstab_chart", "GET", "/dashboard/<slug>/crosstab/chart/joint.svg"),
    ("dashboard.chart_files.subgroups_chart", "GET", "/dashboard/<slug>/subgroups/chart.svg"),
    ("dashboard.analysis.regression_chart", "GET", "/dashboard/<slug>/regression/chart/effect0.svg"),
    ("dashboard.analysis.monitoring_chart", "GET", "/dashboard/<slug>/monitoring/chart/band0.svg"),
    ("dashboard.weighting.weighting", "POST", "/dashboard/<slug>/weighting"),
    ("dashboard.publish.publish", "GET", "/dashboard/<slug>/publish"),
    ("dashboard.publish.set_budget", "POST", "/dashboard/<slug>/publish/budget"),
    ("dashboard.publish.release", "POST", "/dashboard/<slug>/publish/release"),
    ("dashboard.publish.visibility", "POST", "/dashboard/<slug>/publish/visibility"),
    ("dashboard.views.export_responses", "GET", "/dashboard/<slug>/export/responses.sav"),
    ("dashboard.views.export_responses", "GET", "/dashboard/<slug>/export/responses.dta"),
    ("dashboard.lifecycle.confirm", "GET", "/dashboard/<slug>/confirm"),
    ("dashboard.lifecycle.preview", "GET", "/dashboard/<slug>/preview"),
    ("dashboard.planner.types_css", "GET", "/dashboard/types.css"),
    ("dashboard.planner.plan_json", "GET", "/dashboard/plan.json"),
    ("dashboard.lifecycle.duplicate", "POST", "/dashboard/<slug>/duplicate"),
    ("dashboard.lifecycle.delete", "POST", "/dashboard/<slug>/delete"),
    ("dashboard.lifecycle.wording", "POST", "/dashboard/<slug>/wording"),
    ("dashboard.lifecycle.translation", "POST", "/dashboard/<slug>/wording/fr"),
    ("dashboard.lifecycle.add_language", "POST", "/dashboard/<slug>/translations"),
    ("dashboard.colleagues.colleagues", "GET", "/dashboard/colleagues/"),  # admins only: 404 for the others
    ("dashboard.colleagues.invite", "POST", "/dashboard/colleagues/invite"),
    ("dashboard.colleagues.revoke", "POST", "/dashboard/colleagues/revoke"),
    ("dashboard.api.estimates", "GET", "/api/v1/surveys/<slug>/estimates"),
]
DASHBOARD_ROUTES = sorted({(endpoint, method) for endpoint, method, _ in DASHBOARD})
READS = [route for route in DASHBOARD if route[1] == "GET"
         and not route[0].startswith("dashboard.colleagues.")]  # admins only: test_colleagues_as_an_admin

EPSILON_TEXT = st.one_of(st.sampled_from(["1", "0.5", "2", "20", "20.0000001", "21", "0", "-1", "nan", "inf",
                                          "-inf", "1e999", "1e-320", str(10**400), " 1 ", "", "1,5"]),
                         st.floats().map(repr), st.text(max_size=5))
TARGET_N = st.one_of(st.sampled_from(["1000", "1", "100000000", "100000001", "0", "-5", "1e3", "", " 7 ",
                                      "1_000", str(10**400), "\u0663"]), st.text(max_size=5))


@st.composite
def design_fields(draw) -> list:
    """The editor's form fields (``questions-N-…`` as WTForms' FieldList names them), mostly sensible."""
    fields = [("slug", draw(st.one_of(st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True),
                                      st.sampled_from(["demo", "drafty", ""]), st.text(max_size=8)))),
              ("title", draw(st.one_of(st.just("A title"), st.text(max_size=12), st.just("t" * 300)))),
              ("description", draw(st.text(max_size=12))),
              ("target_n", draw(TARGET_N))]
    for i in range(draw(st.integers(0, 3))):
        prefix = f"questions-{draw(st.sampled_from([i, i, i, 99999999]))}-"
        options = draw(st.one_of(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=4).map("\n".join),
                                 st.just("Yes\nNo"), st.just("Yes\n\nNo"), st.just("a\na"), st.text(max_size=20)))
        fields += [(prefix + "qid", draw(st.one_of(st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True),
                                                   st.just("csrf_token"), st.text(max_size=6)))),
                   (prefix + "text", draw(st.one_of(st.just("Question?"), st.text(max_size=10)))),
                   (prefix + "options", options),
                   (prefix + "protection", draw(st.sampled_from(["protected", "direct", "maybe", ""]))),
                   (prefix + "epsilon", draw(EPSILON_TEXT))]
        if draw(st.booleans()):  # a single choice's randomization: k-ary at ε or a design and its parameters
            fields += [(prefix + "randomization", draw(st.sampled_from(["rr", "forced", "warner", "kuk", ""]))),
                       (prefix + "design_p", draw(st.one_of(st.sampled_from(["0.6", "0,75", "0.5", "1", "0", "nan",
                                                                            "1e-999"]), st.text(max_size=6)))),
                       (prefix + "design_forced", draw(st.one_of(st.sampled_from(["0.25\n0.15", "0.2\n0.2", "0.4"]),
                                                                 st.text(max_size=10))))]
        if draw(st.booleans()):
            fields.append((prefix + "required", draw(st.sampled_from(["y", "", "false", "0"]))))
    if draw(st.integers(0, 4)) == 0:
        fields.append(("add_question", "1"))
    fields.append(("save", "1"))
    fields += draw(st.lists(st.tuples(st.one_of(st.sampled_from(["questions--1-qid", "questions-x-qid",
                                                                 "questions-0", "slug"]), FIELD_NAME),
                                      FIELD_VALUE), max_size=2))
    return fields


def posted_form(world: World, fields: list, token: str, valid: str, encoding: str):
    kwargs, seen = encode_form(with_token(fields, token, valid, world), encoding, 0)
    return kwargs, csrf_passes(seen, None, valid)


@covers(*DASHBOARD_ROUTES)
def test_dashboard_logged_out(tmp_path):
    """Every dashboard URL and the results API, logged out: a login redirect, a 401 or a CSRF 400."""
    world = World(tmp_path)

    @FUZZ
    @given(route=st.sampled_from(DASHBOARD), slug=SLUG, query=QUERY, token=TOKEN_KIND,
           fields=st.lists(st.tuples(FIELD_NAME, FIELD_VALUE), max_size=3),
           encoding=st.sampled_from(["urlencoded", "multipart", "json"]), headers=HEADERS)
    def run(route, slug, query, token, fields, encoding, headers):
        client, valid = world.anonymous()
        endpoint, method, template = route
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        before = world.snapshot()
        response = client.open(path(template, slug), method=method, query_string=query, headers=headers,
                               **(kwargs if method == "POST" else {}))
        after = check(world, response, before)
        assert after == before
        if "<slug>" in template and slug not in SLUGS:
            return  # a slug may route elsewhere ("" merges slashes, "a/b"): the checks above hold
        if method == "POST" and not token_ok:
            assert response.status_code == 400
        elif endpoint.startswith("dashboard.api."):
            assert response.status_code == 401
        else:
            assert response.status_code == 302
            assert response.headers["Location"].startswith("/auth/login?next=")

    run()
    for route in DASHBOARD:  # every route at least once, whatever hypothesis drew
        run.hypothesis.inner_test(route=route, slug="habits", query="", token="valid", fields=[],
                                  encoding="urlencoded", headers={})
    world.assert_reached(test_dashboard_logged_out)


@covers(*sorted({(endpoint, method) for endpoint, method, _ in READS}))
def test_dashboard_reads_logged_in(tmp_path):
    """Every GET of the dashboard and the results API with random slugs and query strings."""
    world = World(tmp_path)
    client, _ = world.researcher()

    @FUZZ
    @given(route=st.sampled_from(READS), slug=st.one_of(st.sampled_from(["habits", "habits", "demo"]), SLUG),
           query=QUERY, headers=HEADERS)
    @example(route=READS[2], slug="drafty", query="margin=nan", headers={})
    @example(route=READS[2], slug="demo", query="margin=1e999", headers={})
    @example(route=READS[2], slug="drafty", query="margin=0.5", headers={})  # bug: ValueError in sample_size
    @example(route=READS[4], slug="habits", query="fake=" + "9" * 400, headers={})  # bug: OverflowError
    @example(route=READS[-1], slug="habits", query="fake=" + "9" * 400, headers={})  # bug: OverflowError
    @example(route=("dashboard.views.crosstab", "GET", "/dashboard/<slug>/crosstab"), slug="habits",
             query="slug=exact", headers={})  # bug: the chart links' url_for got slug twice (a 500)
    @example(route=("dashboard.views.subgroups", "GET", "/dashboard/<slug>/subgroups"), slug="habits",
             query="slug=exact&_external=1", headers={})
    def run(route, slug, query, headers):
        endpoint, method, template = route
        before = world.snapshot()
        response = client.get(path(template, slug), query_string=query, headers=headers)
        check(world, response, before)
        if slug in SLUGS and "<slug>" in template:
            if SLUGS[slug] is None:
                assert response.status_code == 404
            elif "/chart" in template:  # a chart's SVG: none for this question or position (404) or yet (409)
                assert response.status_code in (200, 400, 404, 409)
            else:
                assert response.status_code in (200, 400)
        elif endpoint == "dashboard.planner.plan_json":
            assert response.status_code in (200, 400)  # the parameters come from the query
            if response.status_code == 400:
                assert response.get_json()["field"] in ("k", "epsilon", "target", "margin")
        elif slug in SLUGS:
            assert response.status_code == 200

    run()
    for route in READS:  # every route at least once, whatever hypothesis drew
        run.hypothesis.inner_test(route=route, slug="habits", query="", headers={})
    world.assert_reached(test_dashboard_reads_logged_in)


@covers(("dashboard.views.create", "POST"), ("dashboard.views.edit", "POST"))
def test_dashboard_design(tmp_path):
    """The survey editor: a saved design is a valid definition; a frozen one is refused (409)."""
    world = World(tmp_path)
    client, valid = world.researcher()

    @FUZZ
    @given(target=st.sampled_from(["new", "new", "drafty", "drafty", "demo", "closed", "nope"]),
           fields=design_fields(), token=st.sampled_from(["valid", "valid", "valid", "valid", "missing",
                                                          "garbage", "foreign"]),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]), query=QUERY)
    @example(target="demo", fields=[("slug", "a"), ("\n", "0")], token="valid", encoding="multipart", query="")
    def run(target, fields, token, encoding, query):
        url = "/dashboard/new" if target == "new" else f"/dashboard/{target}/edit"
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        status = world.status(target) if target != "new" else None
        before = world.snapshot()
        response = client.post(url, query_string=query, **kwargs)
        after = check(world, response, before, client=client)
        code = response.status_code
        unreadable = encoding == "multipart" and any("\r" in name for name, _ in fields)
        if not token_ok or unreadable:  # a part name werkzeug cannot read: refused as a whole
            assert code == 400
        elif target == "nope":
            assert code == 404
        elif target != "new" and status != "draft":
            assert code == 409
        else:
            assert code in (200, 302, 422), code
        if code == 302:
            slug = urlsplit(response.headers["Location"]).path.split("/")[2]
            assert world.stored(slug).status == "draft"
            new_surveys = len(after["surveys"]) - len(before["surveys"])
            assert new_surveys == (1 if target == "new" else 0)

    run()
    world.assert_reached(test_dashboard_design)


@covers(("dashboard.lifecycle.change_status", "POST"))
def test_dashboard_lifecycle(tmp_path):
    """Only draft → open → closed (→ open again), by a researcher with a valid token; anything else changes nothing."""
    world = World(tmp_path)
    client, valid = world.researcher()

    @FUZZ
    @given(slug=st.one_of(st.sampled_from(["drafty", "demo", "closed", "habits", "nope"]), SLUG),
           new=st.one_of(st.sampled_from(["open", "closed", "draft"]), st.text(max_size=6)),
           token=st.sampled_from(["valid", "valid", "valid", "missing", "garbage", "foreign", "twice"]),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]), twice=st.booleans())
    def run(slug, new, token, encoding, twice):
        fields = [("status", new)] + ([("status", "closed")] if twice else [])
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        status = world.status(slug)
        before = world.snapshot()
        response = client.post(path("/dashboard/<slug>/status", slug), **kwargs)
        after = check(world, response, before, client=client)
        code = response.status_code
        if slug not in SLUGS:
            return  # a random slug may not route, or route elsewhere ("a//b" redirects): the checks above hold
        if not token_ok:
            assert code == 400
        elif status is None:
            assert code == 404
        elif encoding == "json" or new not in ("open", "closed"):
            assert code == 400
        elif (status, new) in (("draft", "open"), ("open", "closed"), ("closed", "open")):  # and reopening
            assert code == 302 and world.status(slug) == new
            assert after != before
        else:
            assert code == 409 and world.status(slug) == status

    run()
    world.assert_reached(test_dashboard_lifecycle)


WORDING_FIELDS = ["wording-title", "wording-description", "wording-contact", "wording-questions-0-text",
                  "wording-questions-0-options-0", "wording-questions-0-options-1", "wording-questions-1-options-3",
                  "wording-questions-2-text"]


@covers(("dashboard.lifecycle.duplicate", "POST"), ("dashboard.lifecycle.delete", "POST"),
        ("dashboard.lifecycle.wording", "POST"))
def test_dashboard_copy_delete_and_wording(tmp_path):
    """Duplicate makes a draft, delete removes only a draft, a wording fix changes only words; a refused
    request changes nothing and says why."""
    world = World(tmp_path)
    client, valid = world.researcher()

    @FUZZ
    @given(action=st.sampled_from(["duplicate", "delete", "wording", "wording"]),
           slug=st.one_of(st.sampled_from(["drafty", "demo", "closed", "habits", "nope"]), SLUG),
           fields=st.lists(st.tuples(st.one_of(st.sampled_from(WORDING_FIELDS), FIELD_NAME),
                                     st.one_of(st.sampled_from(["No", "Yes", "", " ", "Yes, really", "x" * 300,
                                                                "=SUM(1)", "Often"]), FIELD_VALUE)), max_size=4),
           token=st.sampled_from(["valid", "valid", "valid", "missing", "garbage", "foreign"]),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]))
    @example(action="wording", slug="demo", fields=[("wording-questions-0-options-0", "Yes")], token="valid",
             encoding="urlencoded")  # option 2's label moved to option 1: refused
    def run(action, slug, fields, token, encoding):
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        status = world.status(slug) if slug in SLUGS else None
        before = world.snapshot()
        response = client.post(path(f"/dashboard/<slug>/{action}", slug), **kwargs)
        after = check(world, response, before, client=client)
        code = response.status_code
        if slug not in SLUGS:
            return  # a random slug may not route, or route elsewhere: the checks above hold
        unreadable = encoding == "multipart" and any("\r" in name for name, _ in fields)
        if not token_ok or unreadable:
            assert code == 400
        elif status is None:
            assert code == 404
        elif action == "duplicate":
            assert code == 302 and len(after["surveys"]) == len(before["surveys"]) + 1
        elif action == "delete":
            assert (code, world.status(slug)) == ((302, None) if status == "draft" else (409, status))
            if status == "draft":  # put it back for the next example
                db = connect(world.db_path)
                try:
                    insert_survey(db, parse_definition({**DEMO_DEFINITION, "slug": slug}), owner_id=1)
                finally:
                    db.conn.close()
        else:
            assert code in (302, 409, 422), code
            if code == 302:
                # only words changed: every question row is the same but for its text and option labels
                # (id, survey_id, position, qid, text, options, required, epsilon, k, threshold)
                def design(rows):
                    return sorted((*r[:4], *r[6:], len(json.loads(r[5]))) for r in rows)
                assert design(after["questions"]) == design(before["questions"])
                assert world.stored(slug).status == status

    run()
    world.assert_reached(test_dashboard_copy_delete_and_wording)


TRANSLATION_FIELDS = ["translation-fr-title", "translation-fr-questions-0-text", "translation-fr-questions-0-options-0",
                      "translation-fr-questions-0-options-1", "translation-fr-questions-0-options-2",
                      "translation-fr-questions-1-text", "translation-fr-questions-0-epsilon", "translation-fr-contact"]


@covers(("dashboard.lifecycle.translation", "POST"))
def test_dashboard_translation_fix(tmp_path):
    """A translation's fix changes only that translation's words (and the text version); anything else,
    in any language, is refused with a message and changes nothing."""
    world = World(tmp_path)
    db = connect(world.db_path)
    try:
        insert_survey(db, parse_definition({**HABITS, "slug": "bilingual", "translations": {"fr": {
            "title": "Habitudes", "questions": {"drugs": {"text": "Drogues ?", "options": ["Oui", "Non"]},
                                                "cheat": {"text": "Triché ?"}}}}}), status="open", owner_id=1)
    finally:
        db.conn.close()
    client, valid = world.researcher()

    @FUZZ
    @given(slug=st.one_of(st.sampled_from(["bilingual", "bilingual", "habits", "drafty"]), SLUG),
           language=st.one_of(st.sampled_from(["fr", "fr", "es", "en", "de"]), st.text(max_size=6)),
           fields=st.lists(st.tuples(st.one_of(st.sampled_from(TRANSLATION_FIELDS), FIELD_NAME),
                                     st.one_of(st.sampled_from(["Oui", "Non", "", " ", "Oui, vraiment", "x" * 300,
                                                                "=SUM(1)"]), FIELD_VALUE)), max_size=4),
           token=st.sampled_from(["valid", "valid", "valid", "missing", "garbage"]),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]))
    @example(slug="bilingual", language="fr", fields=[("translation-fr-questions-0-options-0", "Non")], token="valid",
             encoding="urlencoded")  # option 2's label moved to option 1: refused
    def run(slug, language, fields, token, encoding):
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        before = world.snapshot()
        response = client.post(path("/dashboard/<slug>/wording/", slug) + quote(language, safe=""), **kwargs)
        after = check(world, response, before, client=client)
        if response.status_code == 302:
            assert slug == "bilingual" and language == "fr"
            assert after["questions"] == before["questions"]  # the design and the original words: untouched
            world.stored(slug)

    run()
    world.assert_reached(test_dashboard_translation_fix)


ADD_FIELDS = ["language", "language", "translation-new-title", "translation-new-questions-0-text",
              "translation-new-questions-0-options-0", "translation-new-questions-0-options-1",
              "translation-new-questions-0-options-2", "translation-new-questions-1-text",
              "translation-new-questions-0-epsilon", "translation-new-contact", "translation-new-description"]


@covers(("dashboard.lifecycle.add_language", "POST"))
def test_dashboard_add_language(tmp_path):
    """Adding a language to a launched survey adds only that translation (and the text version); anything
    else — a language it has or the app lacks, a draft, nothing to add, more than words — is refused with a
    message and changes nothing."""
    world = World(tmp_path)
    client, valid = world.researcher()

    @FUZZ
    @given(slug=st.one_of(st.sampled_from(["habits", "habits", "closed", "drafty", "demo"]), SLUG),
           fields=st.lists(st.tuples(st.one_of(st.sampled_from(ADD_FIELDS), FIELD_NAME),
                                     st.one_of(st.sampled_from(["es", "fr", "en", "de", "", "Sí", "No", " ",
                                                                "x" * 300, "=SUM(1)"]), FIELD_VALUE)), max_size=4),
           token=st.sampled_from(["valid", "valid", "valid", "missing", "garbage"]),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]))
    @example(slug="habits", fields=[("language", "es"), ("translation-new-questions-0-options-0", "Sí")],
             token="valid", encoding="urlencoded")
    def run(slug, fields, token, encoding):
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        before = world.snapshot()
        response = client.post(path("/dashboard/<slug>/translations", slug), **kwargs)
        after = check(world, response, before, client=client)
        if response.status_code == 302:
            assert SLUGS.get(slug) in ("open", "closed") and token_ok
            assert after["questions"] == before["questions"]  # the design and the original words: untouched
            world.stored(slug)

    run()
    world.assert_reached(test_dashboard_add_language)


@covers(("dashboard.views.manage_invitations", "POST"))
def test_dashboard_invitations(tmp_path):
    """Generate links or switch the mode: a CSV or a redirect when valid, else 4xx and nothing changed."""
    world = World(tmp_path)
    client, valid = world.researcher()

    @FUZZ
    @given(slug=st.one_of(st.sampled_from(["drafty", "demo", "closed", "nope"]), SLUG),
           fields=st.lists(st.tuples(st.sampled_from(["count", "generate", "mode", "set_mode"]),
                                     st.one_of(st.sampled_from(["1", "3", "0", "100001", "invited", "anyone",
                                                                str(10**400), ""]), FIELD_VALUE)), max_size=4),
           token=st.sampled_from(["valid", "valid", "valid", "missing", "garbage", "foreign"]),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]))
    def run(slug, fields, token, encoding):
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        before = world.snapshot()
        response = client.post(path("/dashboard/<slug>/invitations", slug), **kwargs)
        check(world, response, before, client=client)
        if slug in SLUGS and not token_ok:
            assert response.status_code == 400
        if response.status_code == 200:
            assert response.mimetype == "text/csv"

    run()
    world.assert_reached(test_dashboard_invitations)


@covers(("dashboard.views.manage_shares", "POST"))
def test_dashboard_shares(tmp_path):
    """Share, change a role or stop sharing: a redirect when valid, else 4xx and nothing changed;
    a share names an existing researcher other than the owner, with role viewer or editor."""
    world = World(tmp_path)
    client, valid = world.researcher()
    db = connect(world.db_path)
    try:
        other = set_researcher(db, "bob@example.org", "another long passphrase")
    finally:
        db.conn.close()

    @FUZZ
    @given(slug=SLUG,
           fields=st.lists(st.tuples(st.sampled_from(["email", "role", "researcher_id", "share", "remove"]),
                                     st.one_of(st.sampled_from(["bob@example.org", EMAIL, "nobody@x.org", "viewer",
                                                                "editor", "owner", str(other), "1", "",
                                                                str(10**400)]), FIELD_VALUE)), max_size=5),
           token=st.sampled_from(["valid", "valid", "valid", "missing", "garbage", "foreign"]),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]))
    def run(slug, fields, token, encoding):
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        before = world.snapshot()
        response = client.post(path("/dashboard/<slug>/shares", slug), **kwargs)
        after = check(world, response, before, client=client)
        if slug in SLUGS and SLUGS[slug] and not token_ok:
            assert response.status_code == 400
        if response.status_code < 400 and after != before:
            assert response.status_code == 303
        for survey_id, researcher_id, role in after["survey_shares"]:
            assert researcher_id == other and role in ("viewer", "editor")

    run()
    world.assert_reached(test_dashboard_shares)


@covers(("dashboard.views.import_definition", "POST"))
def test_dashboard_import(tmp_path):
    """An uploaded definition is stored as a draft iff ``loads_definition`` accepts it (and the slug is new)."""
    world = World(tmp_path)
    client, valid = world.researcher()

    @FUZZ
    @given(content=st.one_of(near_valid_definition().map(json.dumps).map(str.encode),
                             st.binary(max_size=100), st.text().map(lambda t: t.encode("utf-16")),
                             st.just(json.dumps({**HABITS, "slug": "demo"}).encode())),
           filename=st.one_of(st.sampled_from(["survey.json", "../../etc/passwd", "", "a b.json", "/", ".."]),
                              st.from_regex(r"[A-Za-z0-9._/ -]{1,12}", fullmatch=True)),
           target_n=TARGET_N, token=st.sampled_from(["valid", "valid", "valid", "missing", "garbage"]),
           no_file=st.integers(0, 9))
    def run(content, filename, target_n, token, no_file):
        fields = [("target_n", target_n)]
        kwargs, _ = encode_form(with_token(fields, token, valid, world), "multipart", 0)
        if no_file:
            kwargs["data"].add("definition", (io.BytesIO(content), filename))
        before = world.snapshot()
        response = client.post("/dashboard/import", **kwargs)
        after = check(world, response, before, client=client)
        code = response.status_code
        if token not in ("valid",):
            assert code == 400
            return
        try:
            survey = loads_definition(content.decode("utf-8"), "x")
        except (UnicodeDecodeError, DefinitionError):
            survey = None
        try:
            n_ok = 1 <= int(target_n) <= 100_000_000
        except ValueError:
            n_ok = False
        accepted = (no_file and filename and survey is not None and n_ok
                    and survey.slug not in {row[1] for row in before["surveys"]})
        if accepted:
            assert code == 302, response.get_data(as_text=True)[:2000]
            assert len(after["surveys"]) == len(before["surveys"]) + 1
            db = connect(world.db_path)
            try:
                stored = get_survey(db, survey.slug)
            finally:
                db.conn.close()
            assert stored.survey == survey and stored.status == "draft" and stored.target_n == int(target_n)
        else:
            assert code == 422, code

    run()
    world.assert_reached(test_dashboard_import)


# ---------------------------------------------------------------- every route: wrong methods, static files


def all_routes(app) -> set[tuple[str, str]]:
    """Flask's routes (the submission route's too: listed, though answered in front of Flask)."""
    return {(rule.endpoint, method) for rule in app.url_map.iter_rules()
            for method in rule.methods - {"HEAD", "OPTIONS"}}


@covers(("static", "GET"), ("dashboard.static", "GET"), ("respond.favicon", "GET"), ("home", "GET"))
def test_static_files(tmp_path):
    world = World(tmp_path)
    client = world.app.test_client()
    for query in ("", "?next=https://evil.example/", "?%ff=%00"):  # the redirect never follows the query
        home = client.get("/" + query)
        assert (home.status_code, home.headers["Location"]) == (302, "/dashboard/")
    favicon = client.get("/favicon.ico", headers={"Range": "bytes=5-1"})
    assert favicon.status_code in (200, 206, 416)
    favicon.close()

    @FUZZ
    @given(folder=st.sampled_from(["/static/", "/dashboard/static/"]),
           name=st.one_of(st.sampled_from(["rr.js", "survey.js", "style.css", "dashboard.css", "../server/__init__.py",
                                           "..%2F..%2Fpyproject.toml", "nope.js", "", "rr.js/x"]),
                          st.text(max_size=12)),
           headers=st.fixed_dictionaries({}, optional={"Range": st.sampled_from(["bytes=0-1", "bytes=9999-",
                                                                                 "bytes=x", "bytes=5-1"]),
                                                       "If-Modified-Since": header_text}))
    def run(folder, name, headers):
        before = world.snapshot()
        response = client.get(folder + (name if "%" in name else quote(name)), headers=headers)
        check(world, response, before)
        if response.status_code == 200:
            assert ".." not in name

    run()
    world.assert_reached(test_static_files)


def sample_value(match: re.Match) -> str:
    """A value a rule's placeholder accepts: 0 for an int, an any()'s first choice, else "demo"."""
    converter = match.group(0)[1:-1].split(":")[0] if ":" in match.group(0) else ""
    if converter == "int":
        return "0"
    if converter.startswith("any("):
        return re.search(r"'([^']*)'", converter).group(1)
    return "demo"


def test_wrong_methods_are_405_with_a_message(tmp_path):
    """Every rule, every method it does not allow: 405 with a message, nothing stored."""
    world = World(tmp_path)
    client, _ = world.researcher()
    for rule in world.app.url_map.iter_rules():
        if rule.build_only:  # listed only: the submission route, answered in front of Flask (test_api_submit)
            continue
        url = re.sub(r"<[^>]*>", sample_value, rule.rule).replace("/demo:", "/")
        allowed = world.app.url_map.bind("localhost").allowed_methods(url)
        assert set(rule.methods) <= set(allowed), (url, allowed)
        for method in {"GET", "POST", "PUT", "DELETE", "PATCH"} - set(allowed):
            before = world.snapshot()
            response = client.open(url, method=method)
            check(world, response, before, refused=True)
            assert response.status_code == 405, (rule.rule, method, response.status_code)


def test_every_endpoint_is_fuzzed(tmp_path):
    """A new route must get a fuzz test here (and each test asserts it reached its routes)."""
    world = World(tmp_path)
    routes = all_routes(world.app)
    assert routes - COVERED == set(), f"routes without a fuzz test: {sorted(routes - COVERED)}"
    assert COVERED - routes == set(), f"fuzz tests for routes that no longer exist: {sorted(COVERED - routes)}"


# ---------------------------------------------------------------- regressions the fuzzing found

HUGE = "9" * 400  # beyond float range: WTForms' NumberRange raised OverflowError (a 500)


def test_huge_fake_count_is_refused_with_a_message(tmp_path):
    world = World(tmp_path)
    client, _ = world.researcher()
    for url in ("/dashboard/habits/results", "/dashboard/habits/export/estimates.json",
                "/api/v1/surveys/habits/estimates", "/dashboard/habits/subgroups"):
        response = client.get(url, query_string={"fake": HUGE})
        assert response.status_code in (200, 400), (url, response.status_code)
        assert "fake: Not a valid integer value: more than 18 digits." in response.get_data(as_text=True), url


def test_huge_target_n_is_refused_on_its_field(tmp_path):
    world = World(tmp_path)
    client, token = world.researcher()
    before = world.snapshot()
    response = client.post("/dashboard/new", data={
        "csrf_token": token, "slug": "big", "title": "Big", "target_n": HUGE, "questions-0-qid": "q",
        "questions-0-text": "Q?", "questions-0-options": "a\nb", "questions-0-protection": "direct"})
    assert response.status_code == 422
    assert re.search(r'<ul class="errors" id="target_n-errors"><li>Not a valid integer value: more than 18 digits',
                     response.get_data(as_text=True))
    response = client.post("/dashboard/import", data={
        "csrf_token": token, "target_n": HUGE,
        "definition": (io.BytesIO(json.dumps({**HABITS, "slug": "big"}).encode()), "big.json")})
    assert response.status_code == 422
    assert "Not a valid integer value: more than 18 digits" in response.get_data(as_text=True)
    assert world.snapshot() == before


def test_thanks_page_survives_a_session_without_reports(tmp_path):
    """A session whose ``sent`` lacks ``reports`` (or holds a list) raised KeyError/TypeError."""
    world = World(tmp_path)
    client = world.app.test_client()
    for sent in ({"slug": "demo"}, {"slug": "demo", "reports": [1, 0]}, {"slug": "demo", "reports": "x"}):
        with client.session_transaction() as session:
            session["sent"] = sent
        response = client.get("/s/demo/thanks")
        assert response.status_code == 200
        assert "Thank you" in response.get_data(as_text=True)


def test_bad_protection_choice_is_shown_on_its_field(tmp_path):
    """A 422 whose only error was on the protection radio group showed no message at all."""
    world = World(tmp_path)
    client, token = world.researcher()
    response = client.post("/dashboard/new", data={
        "csrf_token": token, "slug": "a", "title": "A", "target_n": "1000", "questions-0-qid": "q",
        "questions-0-text": "Q?", "questions-0-options": "Yes\nNo", "questions-0-protection": "maybe",
        "questions-0-epsilon": "1"})
    assert response.status_code == 422
    assert re.search(r'<ul class="errors" id="questions-0-protection-errors"><li>Not a valid choice',
                     response.get_data(as_text=True))


def test_multipart_part_without_a_readable_name_is_a_400(tmp_path):
    """A part whose name werkzeug cannot read came back as a ``None`` key and Flask-WTF's
    CSRF check raised AttributeError (a 500) on every form POST."""
    world = World(tmp_path)
    client, token = world.researcher()
    body = (b"--x\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n" + token.encode()
            + b"\r\n--x\r\nContent-Disposition: form-data\r\n\r\n0\r\n--x--\r\n")
    before = world.snapshot()
    for url in ("/s/demo", "/auth/logout", "/dashboard/new", "/dashboard/drafty/status"):
        response = client.post(url, data=body, content_type="multipart/form-data; boundary=x")
        check(world, response, before, refused=True)
        assert response.status_code == 400
        assert "form: a field has no readable name" in response.get_data(as_text=True)


def test_planning_margin_of_one_half_is_refused_on_its_field(tmp_path):
    """``?margin=0.5`` passed the form's inclusive NumberRange and sample_size raised ValueError (a 500)."""
    world = World(tmp_path)
    client, _ = world.researcher()
    response = client.get("/dashboard/drafty/edit", query_string={"margin": "0.5"})
    assert response.status_code == 200  # the panel falls back to ±0.05 and says why on the field
    assert re.search(r'<ul class="errors" id="margin-errors"><li>enter a margin between 0.001 and 0.499',
                     response.get_data(as_text=True))


# ---------------------------------------------------------------- publishing and the public page

RELEASE_FIELDS = ["budget", "public", "counts-age", "top-age", "groups-drugs-age", "groups-cheat-age",
                  "counts-age_group", "top-age_group", "groups-drug_use-age_group"]
RELEASE_VALUES = st.one_of(st.sampled_from(["1", "0.5", "2", "0", "-1", "nan", "inf", "1e999", "20", "21", "100",
                                            "101", "", "abc", str(10**400), "1e-300"]), FIELD_VALUE)


@covers(("dashboard.publish.set_budget", "POST"), ("dashboard.publish.release", "POST"),
        ("dashboard.publish.visibility", "POST"))
def test_publish(tmp_path):
    """Budgets, releases and the public switch, as the owner: refused requests change nothing, a
    change is a 303, and no survey's ledger ever spends more than its budget."""
    world = World(tmp_path)
    client, valid = world.researcher()

    @FUZZ
    @given(slug=st.one_of(st.sampled_from(["habits", "habits", "demo", "drafty", "closed", "nope"]), SLUG),
           action=st.sampled_from(["budget", "release", "visibility"]),
           fields=st.lists(st.tuples(st.sampled_from(RELEASE_FIELDS), RELEASE_VALUES), max_size=4),
           token=st.sampled_from(["valid", "valid", "valid", "missing", "garbage", "foreign"]),
           encoding=st.sampled_from(["urlencoded", "urlencoded", "multipart", "json"]))
    @example(slug="habits", action="budget", fields=[("budget", "3")], token="valid", encoding="urlencoded")
    @example(slug="habits", action="release", fields=[("counts-age", "1"), ("groups-drugs-age", "1")],
             token="valid", encoding="urlencoded")
    @example(slug="habits", action="release", fields=[("top-age", "5")], token="valid", encoding="urlencoded")
    @example(slug="habits", action="visibility", fields=[("public", "0")], token="valid", encoding="urlencoded")
    def run(slug, action, fields, token, encoding):
        kwargs, token_ok = posted_form(world, fields, token, valid, encoding)
        before = world.snapshot()
        response = client.post(path(f"/dashboard/<slug>/publish/{action}", slug), **kwargs)
        after = check(world, response, before, client=client)
        if slug in SLUGS and not token_ok:
            assert response.status_code == 400
        elif SLUGS.get(slug, "") is None:
            assert response.status_code == 404
        if after != before:
            assert response.status_code == 303
        budgets = {row[0]: row[1] for row in after["release_budgets"]}
        spent: dict[int, float] = {}
        for row in after["release_ledger"]:
            spent[row[1]] = spent.get(row[1], 0.0) + row[4]
        for survey_id, total in spent.items():
            assert total <= budgets[survey_id] * (1 + 1e-12)

    run()
    world.assert_reached(test_publish)


@covers(("public.results", "GET"), ("public.chart", "GET"))
def test_public_results(tmp_path):
    """The public page and its charts' SVG files: 200 for the published survey, the same 404 for every
    other slug, nothing written."""
    from deniable.server.store import releases
    from deniable.server.store.aggregates import pattern_counts
    from deniable.server.survey.release import draw_release, ledger_entries, parse_items

    world = World(tmp_path)
    db = connect(world.db_path)
    try:
        stored = get_survey(db, "habits")
        releases.set_budget(db, stored, 2.0)
        document = draw_release(pattern_counts(db, stored), parse_items(stored.survey, {"counts-age": "1"}))
        releases.record_release(db, stored, document, ledger_entries(document))
    finally:
        db.conn.close()
    client = world.app.test_client()

    @FUZZ
    @given(slug=SLUG, query=QUERY, headers=HEADERS, chart=st.sampled_from([None, "age", "drugs", "nope", "%00"]))
    def run(slug, query, headers, chart):
        before = world.snapshot()
        url = path("/r/<slug>", slug) + (f"/chart/{chart}.svg" if chart else "")
        response = client.get(url, query_string=query, headers=headers)
        after = check(world, response, before)
        assert after == before
        if slug == "habits" and chart in (None, "drugs"):
            assert response.status_code == 200
        elif slug in SLUGS and slug != "habits":
            assert response.status_code == 404

    run()
    run.hypothesis.inner_test(slug="habits", query="", headers={}, chart=None)
    run.hypothesis.inner_test(slug="habits", query="", headers={}, chart="drugs")
    world.assert_reached(test_public_results)


@covers(("embed.module", "GET"), ("embed.script", "GET"))
def test_embed_files(tmp_path):
    """The embed's files: 200 for other origins at the current version only, nothing written."""
    from deniable.client.embed import current

    world = World(tmp_path)
    client = world.app.test_client()
    version = current().version

    @FUZZ
    @given(name=st.one_of(st.just(version), st.text(max_size=20)), suffix=st.sampled_from(["mjs", "js"]),
           query=QUERY, headers=HEADERS)
    def run(name, suffix, query, headers):
        before = world.snapshot()
        response = client.get(f"/embed/{quote(name, safe='')}/deniable-embed.{suffix}", query_string=query,
                              headers=headers)
        after = check(world, response, before)
        assert after == before
        served = name == version
        assert (response.status_code == 200) == served and response.status_code in (200, 308, 404)
        assert (response.headers.get("Access-Control-Allow-Origin") == "*") == served

    run()
    for suffix in ("mjs", "js"):
        run.hypothesis.inner_test(name=version, suffix=suffix, query="", headers={})
    world.assert_reached(test_embed_files)
