"""Helpers shared by the dashboard tests: a test survey, logging in, storing reports (the
``researcher`` and ``auth_client`` fixtures that use them are in ``tests/conftest.py``)."""

from __future__ import annotations

import functools
import html
import re

import numpy as np
from werkzeug.security import generate_password_hash

from deniable.server.store.db import connect
from deniable.server.survey.definition import parse_definition
from deniable.server.store.surveys import get_survey, insert_survey

EMAIL = "ada@example.org"
PASSWORD = "correct horse battery"

DEFINITION = {
    "slug": "habits",
    "title": "Habits",
    "description": "A test survey.",
    "questions": [
        {"id": "drugs", "text": "Used drugs this year?", "options": ["Yes", "No"], "epsilon": 1.0},
        {"id": "cheat", "text": "Cheated on an exam?", "options": ["Never", "Once", "Often"], "epsilon": 2.0},
        {"id": "age", "text": "Age group", "options": ["<30", "30+"]},
    ],
}

CSRF_RE = re.compile(r'name="csrf_token" type="hidden" value="([^"]+)"')


def csrf_token(client, url: str = "/auth/login") -> str:
    """The CSRF token of the client's session, read from a page with a form."""
    html = client.get(url).get_data(as_text=True)
    match = CSRF_RE.search(html)
    assert match, f"no CSRF token on {url}"
    return match.group(1)


def post(client, url: str, data: dict):
    """POST a dashboard form with a fresh CSRF token (from the survey list)."""
    return client.post(url, data={"csrf_token": csrf_token(client, "/dashboard/"), **data})


def page_text(response) -> str:
    """A response's HTML with its entities unescaped (what a reader sees, tags included)."""
    return html.unescape(response.get_data(as_text=True))


def builder_form(token: str, fields: dict, questions: list[dict]) -> dict:
    """The builder's POST: the survey's ``fields`` (slug, title, …), then each question's fields as
    ``questions-<i>-<key>``, every question required."""
    data = {"csrf_token": token, **fields}
    for i, q in enumerate(questions):
        for key, value in q.items():
            data[f"questions-{i}-{key}"] = value
        data[f"questions-{i}-required"] = "y"
    return data


def login(client, email: str = EMAIL, password: str = PASSWORD, next_url: str | None = None):
    url = "/auth/login" + (f"?next={next_url}" if next_url else "")
    token = csrf_token(client, url)
    return client.post(url, data={"csrf_token": token, "email": email, "password": password})


def open_db(app):
    return connect(app.config["DATABASE"])


def share_survey(app, slug: str, email: str, role: str) -> None:
    """Share survey ``slug`` with the researcher ``email`` (made if needed) as ``role``, as the
    dashboard's sharing does (:func:`deniable.server.store.access.share`)."""
    from deniable.server.store.access import share

    ensure_researcher(app, email)
    db = open_db(app)
    try:
        share(db, get_survey(db, slug), email, role)
    finally:
        db.conn.close()


def ensure_researcher(app, email: str = EMAIL, *, admin: bool = False) -> int:
    """The researcher ``email`` (password PASSWORD) exists; return their id.

    Its hash is a cheap PBKDF2 one made once per session: logging in still runs the real
    ``check_password_hash`` (which reads the method from the hash), without 0.2 s of scrypt per
    test; ``tests/web/test_auth.py`` covers the scrypt path.
    """
    db = open_db(app)
    try:
        row = db.execute("SELECT id FROM researchers WHERE email = ?", [email]).fetchone()
        if row:
            return row[0]
        return db["researchers"].insert({"email": email, "password_hash": _cheap_hash(), "created_on": "2026-01-01",
                                         "is_admin": int(admin)}).last_pk
    finally:
        db.conn.close()


@functools.cache
def _cheap_hash() -> str:
    return generate_password_hash(PASSWORD, method="pbkdf2:sha256:1000")


def make_survey(app, definition=None, *, status: str = "draft", target_n: int = 1000, owner: str | None = EMAIL):
    """Store a test survey (DEFINITION by default) owned by ``owner`` (None: no owner, admins only)."""
    owner_id = ensure_researcher(app, owner) if owner else None
    db = open_db(app)
    try:
        return insert_survey(db, parse_definition(definition or DEFINITION), status=status, target_n=target_n,
                             owner_id=owner_id)
    finally:
        db.conn.close()


def own(app, slug: str, email: str = EMAIL) -> None:
    """Make ``email`` the owner of survey ``slug`` (e.g. the demo survey of ``open_demo``)."""
    owner_id = ensure_researcher(app, email)
    db = open_db(app)
    try:
        db.execute("UPDATE surveys SET owner_id = ? WHERE slug = ?", [owner_id, slug])
    finally:
        db.conn.close()


def store_reports(app, slug: str, columns: dict):
    """Store already-randomized reports through the respondent engineer's bulk insert."""
    from deniable.server.store.responses import insert_many

    db = open_db(app)
    try:
        return insert_many(db, get_survey(db, slug), {k: np.asarray(v) for k, v in columns.items()})
    finally:
        db.conn.close()


def sample_columns(n: int = 400, seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    return {"drugs": rng.integers(0, 2, n), "cheat": rng.integers(0, 3, n), "age": rng.integers(0, 2, n)}
