"""Colleagues invited from the dashboard (issue 27): an admin makes a one-time link, the colleague sets a
password at it and is logged in; a link that does not work gets one answer and stores nothing; the
database keeps only the token's hash; non-admins find no such page."""

from __future__ import annotations

import datetime
import hashlib
import logging
import re
import secrets
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from deniable.server.store import backup
from support.dashboard import EMAIL, csrf_token, ensure_researcher, login, open_db

NEW = "grace@example.org"
GOOD = "plum kayak thunder orbit"  # zxcvbn score 4
LINK_RE = re.compile(r'id="invite-url" value="([^"]+)"')
TABLES = ("researchers", "researcher_invites", "sessions")


@pytest.fixture
def admin(client, app):
    ensure_researcher(app, admin=True)
    assert login(client).status_code == 302
    return client


def invite(client, email: str = NEW, **extra):
    token = csrf_token(client, "/dashboard/colleagues/")
    return client.post("/dashboard/colleagues/invite", data={"csrf_token": token, "email": email, **extra})


def invite_path(client, email: str = NEW, **extra) -> str:
    response = invite(client, email, **extra)
    assert response.status_code == 200, response.get_data(as_text=True)
    path = urlsplit(LINK_RE.search(response.get_data(as_text=True)).group(1)).path
    assert path.startswith("/auth/join/")
    return path


def join(client, path: str, password: str = GOOD, confirm: str | None = None):
    page = client.get(path)
    token = csrf_token(client, path if page.status_code == 200 else "/auth/login")
    return client.post(path, data={"csrf_token": token, "password": password,
                                   "confirm": password if confirm is None else confirm})


def snapshot(app) -> dict:
    db = open_db(app)
    try:
        return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall()) for t in TABLES}
    finally:
        db.conn.close()


def file_bytes(app) -> bytes:
    """Every byte of the database, its WAL and its shared-memory file, as an attacker copies them."""
    path = Path(app.config["DATABASE"])
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())


def test_an_admin_invites_and_the_colleague_joins_logged_in_and_can_log_in_again(admin, app, caplog):
    caplog.set_level(logging.DEBUG)
    path = invite_path(admin, NEW.upper() + " ")  # normalized as create-researcher does
    token = path.rsplit("/", 1)[1]
    assert len(token) >= 43  # 32 random bytes
    # The database holds the token's SHA-256, never the token (read as raw bytes, WAL included).
    stored = file_bytes(app)
    assert hashlib.sha256(token.encode()).hexdigest().encode() in stored
    assert token.encode() not in stored
    listed = admin.get("/dashboard/colleagues/").get_data(as_text=True)
    assert NEW in listed and token not in listed  # pending, and the link is not shown again

    colleague = app.test_client()
    page = colleague.get(path)
    assert page.status_code == 200 and NEW in page.get_data(as_text=True)
    assert page.headers["Referrer-Policy"] == "no-referrer"
    response = join(colleague, path)
    assert response.status_code == 303 and urlsplit(response.headers["Location"]).path == "/dashboard/"
    home = colleague.get("/dashboard/")
    assert home.status_code == 200 and NEW in home.get_data(as_text=True)  # logged in: a session of the new account
    assert colleague.get("/dashboard/colleagues/").status_code == 404  # not an admin

    after = snapshot(app)
    assert after["researcher_invites"] == []  # the link is used up
    assert [(email, admin_) for _, email, _, _, admin_ in after["researchers"]] == [(EMAIL, 1), (NEW, 0)]
    assert token.encode() not in file_bytes(app)
    assert not [r for r in caplog.records if token in r.getMessage()]

    again = app.test_client()
    assert login(again, NEW, GOOD).status_code == 302  # the password chosen at the link
    assert login(app.test_client(), NEW, "wrong " + GOOD).status_code == 401


def test_an_invitation_can_make_an_admin(admin, app):
    path = invite_path(admin, admin="y")
    assert "as an admin" in app.test_client().get(path).get_data(as_text=True)
    colleague = app.test_client()
    assert join(colleague, path).status_code == 303
    assert colleague.get("/dashboard/colleagues/").status_code == 200


@pytest.mark.parametrize("how", ["GET", "POST invite", "POST revoke"])
def test_a_researcher_who_is_not_an_admin_finds_no_such_page(client, app, how):
    ensure_researcher(app)
    assert login(client).status_code == 302
    assert "Colleagues" not in client.get("/dashboard/").get_data(as_text=True)
    before = snapshot(app)
    token = csrf_token(client, "/dashboard/")
    if how == "GET":
        response = client.get("/dashboard/colleagues/")
    else:
        response = client.post(f"/dashboard/colleagues/{how.split()[1]}", data={"csrf_token": token, "email": NEW})
    assert response.status_code == 404
    assert response.get_data() == client.get("/dashboard/no-such-page/at-all").get_data()  # as for no page at all
    assert snapshot(app) == before


def test_the_admin_sees_the_accounts_and_the_nav_link(admin, app):
    ensure_researcher(app, "bob@example.org")
    page = admin.get("/dashboard/colleagues/").get_data(as_text=True)
    assert 'data-email="bob@example.org"' in page and f'data-email="{EMAIL}"' in page
    assert "/dashboard/colleagues/" in admin.get("/dashboard/").get_data(as_text=True)


def _day(days_ago: int) -> str:
    return (datetime.date.today() - datetime.timedelta(days=days_ago)).isoformat()


def _age(app, email: str, days_ago: int) -> None:
    db = open_db(app)
    try:
        db.execute("UPDATE researcher_invites SET created_on = ? WHERE email = ?", [_day(days_ago), email])
        db.conn.commit()
    finally:
        db.conn.close()


def test_a_used_revoked_expired_or_unknown_link_gets_one_answer_and_stores_nothing(admin, app):
    used = invite_path(admin, "used@example.org")
    assert join(app.test_client(), used).status_code == 303
    revoked = invite_path(admin, "revoked@example.org")
    token = csrf_token(admin, "/dashboard/colleagues/")
    assert admin.post("/dashboard/colleagues/revoke",
                      data={"csrf_token": token, "email": "revoked@example.org"}).status_code == 303
    page = admin.get("/dashboard/colleagues/").get_data(as_text=True)
    assert "invitation of revoked@example.org is withdrawn" in page  # the flash
    assert 'data-email="revoked@example.org"' not in page  # no longer pending
    expired = invite_path(admin, "expired@example.org")
    _age(app, "expired@example.org", 7)  # made 7 days ago: its seven days (that one and the 6 after) are over
    last_day = invite_path(admin, "lastday@example.org")
    _age(app, "lastday@example.org", 6)  # its seventh day: still works
    unknown = "/auth/join/" + secrets.token_urlsafe(32)

    assert app.test_client().get(last_day).status_code == 200
    before = snapshot(app)
    bodies = set()
    for path in (used, revoked, expired, unknown, "/auth/join/" + "x" * 500):
        client = app.test_client()
        page = client.get(path)
        assert page.status_code == 404 and page.headers["Referrer-Policy"] == "no-referrer"
        post = join(client, path)
        assert post.status_code == 404
        bodies |= {page.get_data(), post.get_data()}
    assert len(bodies) == 1  # the same page, whatever the reason
    assert b"does not work" in bodies.pop()
    assert snapshot(app) == before


@pytest.mark.parametrize("password, confirm, says", [
    ("short", None, "at least 12 characters"),
    ("password1234", None, "too easy to guess"),
    (GOOD, GOOD + "!", "The two passwords differ."),
    ("", None, "This field is required."),
])
def test_a_refused_password_is_said_at_its_field_stores_nothing_and_the_link_still_works(
        admin, app, password, confirm, says):
    path = invite_path(admin)
    before = snapshot(app)
    colleague = app.test_client()
    response = join(colleague, path, password, confirm)
    assert response.status_code == 400
    errors = re.search(r'<ul class="errors" id="(\w+)-errors">(.*?)</ul>', response.get_data(as_text=True), re.DOTALL)
    assert errors and says in errors.group(2)
    assert errors.group(1) == ("confirm" if confirm else "password")
    assert snapshot(app) == before
    assert colleague.get("/dashboard/").status_code == 302  # not logged in
    assert join(colleague, path).status_code == 303  # the link was not used up


@pytest.mark.parametrize("email, says", [
    ("not-an-email", "not an email address"),
    (EMAIL, "already has an account"),
    ("", "This field is required."),
])
def test_a_bad_invitation_is_said_at_the_email_field_and_stores_nothing(admin, app, email, says):
    before = snapshot(app)
    response = invite(admin, email)
    assert response.status_code == 400
    errors = re.search(r'<ul class="errors" id="email-errors">(.*?)</ul>', response.get_data(as_text=True), re.DOTALL)
    assert errors and says in errors.group(1)
    assert not LINK_RE.search(response.get_data(as_text=True))
    assert snapshot(app) == before


def test_a_second_invitation_of_the_same_email_replaces_the_first(admin, app):
    first = invite_path(admin)
    second = invite_path(admin)
    assert first != second
    assert app.test_client().get(first).status_code == 404
    assert len(snapshot(app)["researcher_invites"]) == 1
    assert join(app.test_client(), second).status_code == 303


def test_a_backup_holds_no_pending_invitation(admin, app, tmp_path):
    """As for sessions: a restore must not bring back a link used or withdrawn since the backup."""
    path = invite_path(admin)
    dest = tmp_path / "copy.db"
    backup.backup(app.config["DATABASE"], dest)
    conn = sqlite3.connect(dest)
    try:
        assert conn.execute("SELECT count(*) FROM researcher_invites").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM researchers").fetchone() == (1,)
    finally:
        conn.close()
    assert app.test_client().get(path).status_code == 200  # the live database keeps it
