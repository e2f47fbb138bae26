"""Researcher accounts: create-researcher, login/logout, the session cookie, CSRF, safe redirects."""

from __future__ import annotations

import pytest
from werkzeug.security import check_password_hash

from deniable.server.web.app import create_app
from deniable.server.store.accounts import authenticate, new_session, session_account
from deniable.server.cli import cli
from deniable.server.store.demo import DEMO_EMAIL, ensure_demo_researcher
from deniable.server.store.db import connect, init_db
from support.dashboard import EMAIL, PASSWORD, csrf_token, login, open_db


def rows(app):
    db = open_db(app)
    try:
        return list(db["researchers"].rows)
    finally:
        db.conn.close()


def test_create_researcher_prompts_twice_and_stores_only_a_hash(app, db_path):
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["create-researcher", "Ada@Example.org", "--db", db_path],
                                input=f"{PASSWORD}\n{PASSWORD}\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("Password") == 1 and "Repeat for confirmation" in result.output
    assert PASSWORD not in result.output
    [row] = rows(app)
    assert row["email"] == "ada@example.org"
    assert PASSWORD not in row["password_hash"]
    assert check_password_hash(row["password_hash"], PASSWORD)
    assert len(row["created_on"]) == 10  # a date, nothing finer


def test_create_researcher_refuses_a_mismatch_then_accepts(app, db_path):
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["create-researcher", "ada@example.org", "--db", db_path],
                                input=f"{PASSWORD}\nsomething else\n{PASSWORD}\n{PASSWORD}\n")
    assert result.exit_code == 0, result.output
    assert "do not match" in result.output
    assert len(rows(app)) == 1


@pytest.mark.parametrize("email, password, message", [
    ("not-an-email", PASSWORD, "email: not an email address"),
    ("ada@example.org", "short", "password: must be at least 12 characters"),
    ("ada@example.org", "12345678", "password: must be at least 12 characters"),
    ("ada@example.org", "password1234", "password: too easy to guess"),
    ("ada@example.org", "aaaaaaaaaaaaaaaa", "password: too easy to guess"),
    ("ada@example.org", "ada@example.org!", "password: too easy to guess"),  # the email itself
])
def test_create_researcher_errors_are_one_line(db_path, email, password, message):
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, ["create-researcher", email, "--db", db_path],
                                input=f"{password}\n{password}\n")
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_create_researcher_again_resets_the_password(app, db_path):
    from click.testing import CliRunner

    for password in (PASSWORD, "another long one"):
        result = CliRunner().invoke(cli, ["create-researcher", EMAIL, "--db", db_path], input=f"{password}\n{password}\n")
        assert result.exit_code == 0
    db = open_db(app)
    assert authenticate(db, EMAIL, "another long one") and not authenticate(db, EMAIL, PASSWORD)
    db.conn.close()


def test_login_sets_a_fresh_httponly_lax_session(client, researcher):
    csrf_token(client)
    with client.session_transaction() as sess:
        sess["planted"] = "by someone else"
        old_token = sess["csrf_token"]
    response = login(client, next_url="/dashboard/")
    assert response.status_code == 302
    assert response.headers["Location"] == "/dashboard/"
    cookies = {c.split("=", 1)[0]: c for c in response.headers.getlist("Set-Cookie")}
    cookie = cookies["session"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie
    device = cookies["deniable_device"]  # the device cookie: only the login form needs it
    assert "HttpOnly" in device and "SameSite=Strict" in device and "Path=/auth/" in device
    with client.session_transaction() as sess:
        assert "planted" not in sess  # session.clear() on login: nothing fixed beforehand survives
        assert sess.get("csrf_token") != old_token
        assert isinstance(sess["researcher_id"], int)
    assert client.get("/dashboard/").status_code == 200


def test_secure_cookie_is_configurable(db_path, researcher):
    app = create_app({"TESTING": True, "DATABASE": db_path, "SECRET_KEY": "x", "SESSION_COOKIE_SECURE": True})
    client = app.test_client()
    response = login(client)
    assert response.status_code == 302
    assert all("Secure" in cookie for cookie in response.headers.getlist("Set-Cookie"))  # session and device


@pytest.mark.parametrize("email, password", [
    (EMAIL, "wrong password"), ("nobody@example.org", PASSWORD), (EMAIL.upper(), "x" * 9),
])
def test_wrong_credentials_are_refused(client, researcher, email, password):
    response = login(client, email, password)
    assert response.status_code == 401
    assert "Wrong email or password." in response.get_data(as_text=True)
    with client.session_transaction() as sess:
        assert "researcher_id" not in sess
    assert client.get("/dashboard/").status_code == 302


def test_email_is_case_insensitive(client, researcher):
    assert login(client, EMAIL.upper(), PASSWORD).status_code == 302


def test_login_without_csrf_token_is_refused(client, researcher):
    response = client.post("/auth/login", data={"email": EMAIL, "password": PASSWORD})
    assert response.status_code == 400
    with client.session_transaction() as sess:
        assert "researcher_id" not in sess


@pytest.mark.parametrize("next_url", ["//evil.example/", "https://evil.example/", "/\\evil.example"])
def test_login_never_redirects_off_site(client, researcher, next_url):
    response = login(client, next_url=next_url)
    assert response.status_code == 302
    assert response.headers["Location"] == "/dashboard/"


def test_redirect_back_to_the_page_asked_for(client, researcher):
    response = client.get("/dashboard/new")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/auth/login?next=/dashboard/new")
    response = login(client, next_url="/dashboard/new")
    assert response.headers["Location"] == "/dashboard/new"


def test_logout_needs_post_and_csrf_and_clears_the_session(auth_client):
    assert auth_client.get("/auth/logout").status_code == 405
    assert auth_client.post("/auth/logout").status_code == 400  # no CSRF token
    assert auth_client.get("/dashboard/").status_code == 200
    token = csrf_token(auth_client, "/dashboard/")
    response = auth_client.post("/auth/logout", data={"csrf_token": token})
    assert response.status_code == 302
    with auth_client.session_transaction() as sess:
        assert "researcher_id" not in sess
    assert auth_client.get("/dashboard/").status_code == 302


def test_a_deleted_researcher_is_logged_out(app, auth_client):
    db = open_db(app)
    db.execute("DELETE FROM researchers")
    db.conn.close()
    assert auth_client.get("/dashboard/").status_code == 302


def test_ensure_demo_researcher_gives_working_credentials(tmp_path):
    db = init_db(tmp_path / "demo.db")
    email, password, _, new = ensure_demo_researcher(db)
    assert email == DEMO_EMAIL and len(password) >= 12 and new
    assert authenticate(db, email, password)
    token = new_session(db, _)
    # the password of the last start is kept while it works: same password, sessions kept
    assert ensure_demo_researcher(db, password)[1:] == (password, _, False)
    assert session_account(db, token)["id"] == _
    email2, password2, _, new = ensure_demo_researcher(db)  # a reset: a new password, one account
    assert new and password2 != password and authenticate(db, email, password2) and not authenticate(db, email, password)
    assert session_account(db, token) is None  # every earlier session ended
    assert ensure_demo_researcher(db, "not the password")[3]  # a stale password: a new one
    assert db.execute("SELECT count(*) FROM researchers").fetchone()[0] == 1
    db.conn.close()


def test_migration_creates_the_researchers_table(db_path):
    db = init_db(db_path)
    columns = {c.name: c.type for c in db["researchers"].columns}
    assert set(columns) == {"id", "email", "password_hash", "created_on", "is_admin"}  # session_epoch: gone in m14
    assert any(index.unique and index.columns == ["email"] for index in db["researchers"].indexes)
    db.conn.close()
    connect(db_path).conn.close()


def test_helpers_log_in(auth_client):
    assert auth_client.get("/dashboard/").status_code == 200


def test_the_bare_address_leads_to_the_login_and_then_the_dashboard(client, researcher):
    response = client.get("/")
    assert response.status_code == 302 and response.headers["Location"] == "/dashboard/"
    assert client.get("/dashboard/").headers["Location"].startswith("/auth/login")
    login(client, next_url="/dashboard/")
    assert client.get("/", follow_redirects=True).request.path == "/dashboard/"
