"""Sessions that a copy of the files cannot forge, and failed logins that lock no one out of their own
device (issue 23).

A session is a random token in the signed cookie; the database keeps only its SHA-256.  These tests
play the attacker who copied every file the server wrote (the database, its -wal and -shm, the
.secret): they sign cookies with Flask's own serializer under the copied secret, for everything a
copy tells, and get the login page.  Logout, a password change and ``deniable end-sessions`` revoke
a cookie someone copied before.  Failed logins: a device cookie from an earlier login lets the
right password through whatever failures came from elsewhere, and the per-account count is exact
under 40 parallel attempts.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from flask.sessions import SecureCookieSessionInterface

from deniable.server.cli import cli
from deniable.server.store import migrations as history
from deniable.server.store.accounts import set_researcher
from deniable.server.store.db import connect
from deniable.server.web.app import create_app
from deniable.server.web.dashboard.auth import device_serializer
from support.dashboard import (EMAIL, PASSWORD, csrf_token, ensure_researcher, login, make_survey, open_db,
                               sample_columns, store_reports)

DATA = Path(__file__).parents[1] / "data"
OTHER = "bob@example.org"
EXPORT = "/dashboard/habits/export/responses.csv"
API = "/api/v1/surveys/habits/estimates"
DEVICE_COOKIE = "deniable_device"


def client_at(app, address: str):
    """A test client whose requests come from ``address``."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client


def session_cookie(client, app) -> str:
    cookie = client.get_cookie(app.config.get("SESSION_COOKIE_NAME", "session"))
    assert cookie is not None, "no session cookie"
    return cookie.value


def with_cookie(app, value: str, address: str = "203.0.113.9"):
    """A fresh client (another machine) that presents ``value`` as its session cookie."""
    client = client_at(app, address)
    client.set_cookie(app.config.get("SESSION_COOKIE_NAME", "session"), value)
    return client


def refused(client) -> bool:
    """The client is sent to login by the dashboard and gets 401 from the results API."""
    page, api = client.get(EXPORT), client.get(API)
    return (page.status_code == 302 and page.headers["Location"].startswith("/auth/login")
            and api.status_code == 401)


def logout(client) -> None:
    response = client.post("/auth/logout", data={"csrf_token": csrf_token(client, "/dashboard/")})
    assert response.status_code == 302


@pytest.fixture
def served(tmp_path):
    """An app as ``deniable serve`` runs it: its own ``.secret`` beside the database, rate limits on."""
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "data" / "survey.db"),
                      "RATELIMIT_LOGIN": "1000 per day"})
    assert (tmp_path / "data" / "survey.db.secret").exists()
    make_survey(app, status="open")
    store_reports(app, "habits", sample_columns(30))
    return app


# ---------------------------------------------------------------- a copy of the files


def copy_files(app, into: Path) -> dict[str, bytes]:
    """Every file of the data folder, as bytes (read while the server still runs: the WAL too)."""
    folder = Path(app.config["DATABASE"]).parent
    into.mkdir()
    files = {}
    for path in folder.iterdir():
        files[path.name] = path.read_bytes()
        (into / path.name).write_bytes(files[path.name])
    return files


def test_a_copy_of_every_file_forges_no_session(served, tmp_path):
    client = served.test_client()
    assert login(client).status_code == 302
    assert client.get(EXPORT).status_code == 200 and client.get(API).status_code == 200
    with client.session_transaction() as live:
        live = dict(live)
    files = copy_files(served, tmp_path / "copy")
    assert {"survey.db", "survey.db.secret"} <= set(files)

    # What the copy tells: the secret, the researcher's id, and whatever the researchers' and
    # sessions' rows hold (token hashes, not tokens).
    secret = files["survey.db.secret"].decode().strip()
    with sqlite3.connect(tmp_path / "copy" / "survey.db") as copy:
        researcher_id = copy.execute("SELECT id FROM researchers WHERE email = ?", [EMAIL]).fetchone()[0]
        hashes = [h for (h,) in copy.execute("SELECT token_hash FROM sessions")]
    copy.close()
    assert hashes, "the copy holds the session's hash"
    forger = Flask("attacker")
    forger.secret_key = secret
    sign = SecureCookieSessionInterface().get_signing_serializer(forger).dumps
    now = int(time.time())
    forged = [{"researcher_id": researcher_id}, {"researcher_id": researcher_id, "seen": now, "since": now}]
    forged += [{"researcher_id": researcher_id, "epoch": epoch, "seen": now, "since": now} for epoch in range(4)]
    for guess in [*hashes, secrets.token_urlsafe(32), ""]:
        forged += [{"researcher_id": researcher_id, "sid": guess, "seen": now, "since": now},
                   {"sid": guess, "seen": now, "since": now}]
    forged += [{**live, "sid": h} for h in hashes]
    for fields in forged:
        assert refused(with_cookie(served, sign(fields))), fields
    # The forger's cookies are what the server signs: with the token itself (which no file holds),
    # the same serializer makes a cookie that works.  So the refusals above are the token's doing.
    assert not refused(with_cookie(served, sign(live)))


def test_no_file_holds_a_session_token_in_clear(served, tmp_path):
    client = served.test_client()
    assert login(client).status_code == 302
    with client.session_transaction() as live:
        token = live["sid"]
    files = copy_files(served, tmp_path / "copy")
    everything = b"".join(files.values())
    assert len(token) >= 43  # 32 random bytes, URL-safe base64
    assert token.encode() not in everything
    assert hashlib.sha256(token.encode()).hexdigest().encode() in everything  # the search reads those bytes
    device = client.get_cookie(DEVICE_COOKIE, path="/auth/")
    assert device is not None and device.value.encode() not in everything


# ---------------------------------------------------------------- revocation


def test_logout_revokes_a_copied_cookie(served):
    client = served.test_client()
    assert login(client).status_code == 302
    copied = session_cookie(client, served)
    assert not refused(with_cookie(served, copied))
    logout(client)
    assert refused(client) and refused(with_cookie(served, copied))


def test_a_password_change_revokes_every_session(served):
    laptop, phone = served.test_client(), served.test_client()
    assert login(laptop).status_code == 302 and login(phone).status_code == 302
    copied = session_cookie(laptop, served)
    db = open_db(served)
    try:
        set_researcher(db, EMAIL, "a new long passphrase for ada")
    finally:
        db.conn.close()
    assert refused(laptop) and refused(phone) and refused(with_cookie(served, copied))


def test_the_end_sessions_command_ends_one_account_or_every_account(served):
    db_path = served.config["DATABASE"]
    ensure_researcher(served, OTHER)
    ada, ada_phone, bob = served.test_client(), served.test_client(), served.test_client()
    for client, email in ((ada, EMAIL), (ada_phone, EMAIL), (bob, OTHER)):
        assert login(client, email=email).status_code == 302
    copied = session_cookie(ada, served)
    result = CliRunner().invoke(cli, ["end-sessions", "--email", EMAIL.upper(), "--db", db_path])
    assert result.exit_code == 0, result.output
    assert result.output == f"ended 2 sessions of {EMAIL}\n"
    assert refused(ada) and refused(ada_phone) and refused(with_cookie(served, copied))
    assert bob.get("/dashboard/").status_code == 200  # another account's session is kept
    assert login(ada).status_code == 302 and ada.get("/dashboard/").status_code == 200  # and Ada logs in again

    result = CliRunner().invoke(cli, ["end-sessions", "--db", db_path])
    assert result.exit_code == 0, result.output
    assert result.output == "ended 2 sessions of every account\n"
    assert bob.get("/dashboard/").status_code == 302 and refused(ada)


def test_the_end_sessions_command_refuses_an_unknown_email(served):
    before = open_db(served)
    try:
        rows = before.execute("SELECT count(*) FROM sessions").fetchone()[0]
    finally:
        before.conn.close()
    result = CliRunner().invoke(cli, ["end-sessions", "--email", "nobody@example.org", "--db",
                                      served.config["DATABASE"]])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "email" in result.output and "nobody@example.org" in result.output
    assert "Traceback" not in result.output
    after = open_db(served)
    try:
        assert after.execute("SELECT count(*) FROM sessions").fetchone()[0] == rows
    finally:
        after.conn.close()


def test_an_upgrade_ends_the_sessions_of_todays_main(tmp_path):
    """A database as today's main leaves it (every migration before m14, on the compat file), with a
    researcher whose epoch cookie logged them in there: after the upgrade, that cookie is refused."""
    path = tmp_path / "old.db"
    shutil.copy(DATA / "compat.db", path)
    db = connect(path)
    history.migrations.apply(db, stop_before="m14_sessions_as_token_hashes")
    db.execute("INSERT INTO researchers (email, password_hash, created_on, is_admin, session_epoch) "
               "VALUES (?, 'x', '2026-01-01', 1, 3)", [EMAIL])
    researcher_id = db.execute("SELECT id FROM researchers WHERE email = ?", [EMAIL]).fetchone()[0]
    db.conn.close()
    app = create_app({"TESTING": True, "DATABASE": str(path), "SECRET_KEY": "the old secret"})
    sign = SecureCookieSessionInterface().get_signing_serializer(app).dumps
    now = int(time.time())
    # today's main's cookie: the id, the account's epoch, when it was last used and when it began
    old = {"researcher_id": researcher_id, "epoch": 3, "seen": now, "since": now}
    client = with_cookie(app, sign(old))
    response = client.get("/dashboard/")
    assert response.status_code == 302 and response.headers["Location"].startswith("/auth/login")
    assert client.get("/api/v1/surveys/habits/estimates").status_code == 401
    db = connect(path)
    try:
        assert "session_epoch" not in {c.name for c in db["researchers"].columns}
        assert db.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
    finally:
        db.conn.close()


# ---------------------------------------------------------------- lockout without denial


@pytest.fixture
def guarded(tmp_path):
    """Rate limits on, per day (windows end on the clock: a per-minute one could end mid-test)."""
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "guarded.db"), "SECRET_KEY": "k",
                      "RATELIMIT_LOGIN": "1000 per day", "RATELIMIT_LOGIN_ACCOUNT": "5 per day",
                      "RATELIMIT_LOGIN_DEVICE": "3 per day"})
    ensure_researcher(app)
    ensure_researcher(app, OTHER)
    return app


def device(app, address: str = "198.51.100.7", email: str = EMAIL):
    """A client that logged in once (and so holds a device cookie), then logged out."""
    client = client_at(app, address)
    assert login(client, email=email).status_code == 302
    assert client.get_cookie(DEVICE_COOKIE, path="/auth/") is not None
    logout(client)
    return client


def attack(app, attempts: int, email: str = EMAIL) -> list[int]:
    """``attempts`` wrong passwords, each from a fresh client at another address."""
    return [login(client_at(app, f"192.0.2.{i + 1}"), email=email,
                  password="wrong guess").status_code for i in range(attempts)]


def test_failures_from_elsewhere_do_not_lock_out_a_known_device(guarded):
    mine = device(guarded)
    assert attack(guarded, 40) == [401] * 5 + [429] * 35
    fresh = client_at(guarded, "203.0.113.50")
    response = login(fresh)
    assert response.status_code == 429 and b"Too many failed logins for this account" in response.data
    assert login(mine).status_code == 302  # the right password, from the device that logged in before
    assert mine.get("/dashboard/").status_code == 200
    assert login(fresh).status_code == 429  # the account stays locked for everyone else


def test_failures_with_a_device_cookie_count_against_that_device_only(guarded):
    mine = device(guarded)
    assert [login(mine, password="typo").status_code for _ in range(4)] == [401] * 3 + [429]
    response = login(mine)
    assert response.status_code == 429 and b"Too many failed logins from this device" in response.data
    fresh = client_at(guarded, "203.0.113.51")
    assert login(fresh).status_code == 302  # the account itself counted none of them


@pytest.mark.parametrize("how", ["forged", "forged from a stored hash", "another account's"])
def test_a_device_cookie_that_is_not_this_accounts_is_no_exemption(guarded, how):
    """Signed with the app's secret, as someone with a copy of the files could, the cookie names the
    account but holds no token the account's device logged in with: the account's limits hold."""
    ours = device(guarded)  # the researcher's own device, so that a hash is stored
    if how.startswith("forged"):
        db = open_db(guarded)
        try:
            [stored] = [h for (h,) in db.execute("SELECT token_hash FROM devices")]
        finally:
            db.conn.close()
        client = client_at(guarded, "198.51.100.8")
        token = stored if how.endswith("hash") else secrets.token_urlsafe(32)
        client.set_cookie(DEVICE_COOKIE, device_serializer(guarded).dumps(
            {"account": ensure_researcher(guarded), "token": token}), path="/auth/")
    else:
        client = device(guarded, address="198.51.100.8", email=OTHER)
    assert attack(guarded, 5) == [401] * 5
    assert login(client).status_code == 429
    assert login(ours).status_code == 302


def test_parallel_wrong_passwords_check_at_most_the_limit(tmp_path):
    """40 wrong passwords at once, from 40 addresses, against 5 failures per account: at most 5
    passwords are checked (a 401 each), the others are refused before (429).  The hash is scrypt,
    so each check takes long enough for the others to arrive meanwhile."""
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "race.db"), "SECRET_KEY": "k",
                      "RATELIMIT_LOGIN": "1000 per day", "RATELIMIT_LOGIN_ACCOUNT": "5 per day"})
    db = open_db(app)
    try:
        set_researcher(db, EMAIL, PASSWORD)
    finally:
        db.conn.close()
    clients = [client_at(app, f"192.0.2.{i + 1}") for i in range(40)]
    tokens = [csrf_token(client) for client in clients]
    start, codes = threading.Barrier(40, timeout=30), [None] * 40

    def attempt(i):
        start.wait()
        codes[i] = clients[i].post("/auth/login", data={"csrf_token": tokens[i], "email": EMAIL,
                                                        "password": "wrong guess"}).status_code

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    assert sorted(codes) == [401] * 5 + [429] * 35
