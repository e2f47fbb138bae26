"""Between researchers and over time: who sees which survey, and sessions that really end
(docs/design.md, invariant 7)."""

from __future__ import annotations

import re
import time

import pytest

from deniable.server.store.accounts import end_sessions, set_researcher
from support.dashboard import (EMAIL, PASSWORD, csrf_token, ensure_researcher, login, make_survey, open_db,
                               sample_columns, store_reports)

OTHER = "bob@example.org"
ADMIN = "root@example.org"


def logged_in(app, email):
    ensure_researcher(app, email, admin=email == ADMIN)
    client = app.test_client()
    assert login(client, email=email).status_code == 302
    return client


def survey_routes(app):
    """Every (method, URL) of the app that names survey ``habits``, with the rule it came from."""
    routes = []
    for rule in app.url_map.iter_rules():
        if "slug" not in rule.arguments or rule.endpoint.startswith("respond.") or rule.endpoint.startswith("api."):
            continue
        values = {"slug": "habits"}
        values.update({k: v for k, v in (("position", 0), ("qid", "drugs"), ("language", "fr")) if k in rule.arguments})  # charts, a translation
        if "name" in rule.arguments:
            names = re.findall(r"'([^']+)'", rule.rule)
            for name in names:
                for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                    routes.append((method, rule.build({**values, "name": name})[1]))
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            routes.append((method, rule.build(values)[1]))
    return routes


@pytest.fixture
def owned(app):
    stored = make_survey(app, status="open")  # owned by EMAIL
    store_reports(app, "habits", sample_columns(50))
    return stored


def test_the_route_list_covers_the_survey_routes(app):
    routes = {url.split("?")[0] for _, url in survey_routes(app)}
    for expected in ("/dashboard/habits/edit", "/dashboard/habits/results", "/dashboard/habits/shares",
                     "/dashboard/habits/export/responses.csv", "/api/v1/surveys/habits/estimates",
                     "/dashboard/habits/invitations", "/dashboard/habits/status", "/dashboard/habits/definition.json"):
        assert expected in routes


def test_another_researcher_gets_404_on_every_route_of_a_survey_not_shared(app, owned):
    bob = logged_in(app, OTHER)
    token = csrf_token(bob, "/dashboard/")
    for method, url in survey_routes(app):
        response = bob.open(url, method=method, data={"csrf_token": token, "count": "3", "generate": "1",
                                                       "status": "closed", "email": OTHER, "role": "editor",
                                                       "share": "1", "title": "taken"} if method == "POST" else None)
        assert response.status_code == 404, (method, url, response.status_code)
        # the same page as for a slug that does not exist: nothing about the survey, not even its title
        unknown = bob.open(url.replace("/habits/", "/nosuch1/"), method=method,
                           data={"csrf_token": token} if method == "POST" else None)
        assert unknown.status_code == 404, url
        assert response.data == unknown.data.replace(b"nosuch1", b"habits"), url
        assert b"Habits" not in response.data, url
    index = bob.get("/dashboard/").get_data(as_text=True)
    assert "habits" not in index
    db = open_db(app)
    try:
        row = db.execute("SELECT title, status FROM surveys WHERE slug = 'habits'").fetchone()
        assert row == ("Habits", "open")  # nothing changed
        assert db.execute("SELECT count(*) FROM invitations").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM survey_shares").fetchone()[0] == 0
    finally:
        db.conn.close()


def test_a_viewer_sees_results_and_exports_but_changes_nothing(app, owned):
    owner = logged_in(app, EMAIL)
    ensure_researcher(app, OTHER)
    token = csrf_token(owner, "/dashboard/habits/edit")
    assert owner.post("/dashboard/habits/shares", data={"csrf_token": token, "email": OTHER, "role": "viewer",
                                                        "share": "1"}).status_code == 303
    bob = logged_in(app, OTHER)
    index = bob.get("/dashboard/").get_data(as_text=True)
    assert "habits" in index and ">viewer<" in index and "/dashboard/habits/edit" not in index
    for url in ("/dashboard/habits/results", "/dashboard/habits/crosstab", "/dashboard/habits/subgroups",
                "/dashboard/habits/export/responses.csv", "/dashboard/habits/export/codebook.json",
                "/dashboard/habits/export/estimates.json", "/api/v1/surveys/habits/estimates"):
        assert bob.get(url).status_code == 200, url
    token = csrf_token(bob, "/dashboard/")
    assert bob.get("/dashboard/habits/edit").status_code == 403
    for url, data in (("/dashboard/habits/status", {"status": "closed"}),
                      ("/dashboard/habits/invitations", {"count": "2", "generate": "1"}),
                      ("/dashboard/habits/shares", {"email": OTHER, "role": "editor", "share": "1"})):
        refused = bob.post(url, data={"csrf_token": token, **data})
        assert refused.status_code == 403 and b"viewer" in refused.data, url


def test_an_editor_changes_the_design_and_lifecycle_but_does_not_share(app):
    make_survey(app)  # a draft owned by EMAIL
    owner = logged_in(app, EMAIL)
    ensure_researcher(app, OTHER)
    token = csrf_token(owner, "/dashboard/habits/edit")
    owner.post("/dashboard/habits/shares", data={"csrf_token": token, "email": OTHER, "role": "editor", "share": "1"})
    bob = logged_in(app, OTHER)
    assert bob.get("/dashboard/habits/edit").status_code == 200
    token = csrf_token(bob, "/dashboard/habits/edit")
    assert bob.post("/dashboard/habits/status", data={"csrf_token": token, "status": "open"}).status_code == 302
    refused = bob.post("/dashboard/habits/shares", data={"csrf_token": token, "email": ADMIN, "role": "viewer",
                                                         "share": "1"})
    assert refused.status_code == 403 and b"share" in refused.data


def test_the_owner_stops_sharing(app, owned):
    owner = logged_in(app, EMAIL)
    bob_id = ensure_researcher(app, OTHER)
    token = csrf_token(owner, "/dashboard/habits/edit")
    owner.post("/dashboard/habits/shares", data={"csrf_token": token, "email": OTHER, "role": "viewer", "share": "1"})
    page = owner.get("/dashboard/habits/edit").get_data(as_text=True)
    assert OTHER in page and "Stop sharing" in page
    owner.post("/dashboard/habits/shares", data={"csrf_token": token, "researcher_id": str(bob_id), "remove": "1"})
    assert logged_in(app, OTHER).get("/dashboard/habits/results").status_code == 404
    unknown = owner.post("/dashboard/habits/shares", data={"csrf_token": token, "email": "nobody@x.org",
                                                           "role": "viewer", "share": "1"}, follow_redirects=True)
    assert b"no researcher" in unknown.data


def test_an_admin_sees_every_survey_and_unowned_ones_are_admin_only(app, owned):
    make_survey(app, {"slug": "orphan", "title": "Orphan", "questions": [
        {"id": "a", "text": "A?", "options": ["x", "y"], "epsilon": 1}]}, owner=None)
    admin = logged_in(app, ADMIN)
    index = admin.get("/dashboard/").get_data(as_text=True)
    assert "habits" in index and "orphan" in index
    assert admin.get("/dashboard/orphan/edit").status_code == 200
    assert logged_in(app, EMAIL).get("/dashboard/orphan/results").status_code == 404


def test_the_migration_gives_existing_surveys_to_the_first_researcher(tmp_path):
    from deniable.server.store.db import connect, init_db
    from deniable.server.store.migrations import migrations

    path = tmp_path / "old.db"
    db = connect(path)
    migrations.apply(db, stop_before="m04_responses_without_order")
    db.execute("INSERT INTO researchers (email, password_hash, created_on) VALUES ('first@x.org', 'h', '2026-01-01')")
    db.execute("INSERT INTO researchers (email, password_hash, created_on) VALUES ('second@x.org', 'h', '2026-01-02')")
    db.execute("INSERT INTO surveys (slug, title, description, status, target_n) VALUES ('old', 'Old', '', 'draft', 1)")
    for i in range(30):
        db.execute("INSERT INTO responses (survey_id, submitted_on, reports, design) VALUES (1, '2026-01-01', ?, '{}')",
                   [f'{{"i": {i}}}'])
    db.conn.close()
    db = init_db(path)
    try:
        assert db.execute("SELECT owner_id FROM surveys").fetchone()[0] == 1
        rows = db.execute("SELECT id, reports FROM responses ORDER BY id").fetchall()
        assert sorted(int(r[1][6:-1]) for r in rows) == list(range(30))  # every response kept
        assert [int(r[1][6:-1]) for r in rows] != list(range(30))  # in no particular order now
        assert all(len(r[0]) == 16 and not r[0].isdigit() for r in rows)  # random ids
        assert all(len(a) == 10 for (a,) in db.execute("SELECT applied_at FROM _sqlite_migrations"))
    finally:
        db.conn.close()


# ---------------------------------------------------------------- sessions


def test_logout_ends_every_session_of_the_account(app, owned):
    laptop, phone = logged_in(app, EMAIL), logged_in(app, EMAIL)
    with laptop.session_transaction() as session:
        stolen = dict(session)  # what someone who copied the laptop's cookie would hold
    assert phone.get("/dashboard/").status_code == 200
    token = csrf_token(laptop, "/dashboard/")
    assert laptop.post("/auth/logout", data={"csrf_token": token}).status_code == 302
    assert phone.get("/dashboard/").status_code == 302  # back to the login page
    thief = app.test_client()
    with thief.session_transaction() as session:
        session.update(stolen)
    assert thief.get("/dashboard/habits/results").status_code == 302
    assert thief.get("/api/v1/surveys/habits/estimates").status_code == 401


def test_a_password_reset_ends_every_session(app, owned, db_path):
    from click.testing import CliRunner

    from deniable.server.cli import cli

    client = logged_in(app, EMAIL)
    result = CliRunner().invoke(cli, ["create-researcher", EMAIL, "--db", db_path,
                                      "--password", "a new long passphrase for ada"])
    assert result.exit_code == 0, result.output
    assert client.get("/dashboard/").status_code == 302


def test_an_idle_session_expires(app, owned):
    app.config["SESSION_IDLE_MINUTES"] = 30
    client = logged_in(app, EMAIL)
    assert client.get("/dashboard/").status_code == 200
    with client.session_transaction() as session:
        session["seen"] = int(time.time()) - 31 * 60
    assert client.get("/dashboard/").status_code == 302


def test_a_session_ends_after_its_longest_life(app, owned):
    app.config["SESSION_MAX_HOURS"] = 12
    client = logged_in(app, EMAIL)
    with client.session_transaction() as session:
        session["since"] = int(time.time()) - 13 * 3600
    assert client.get("/dashboard/").status_code == 302


def test_ending_sessions_in_the_store_is_seen_at_once(app, owned):
    client = logged_in(app, EMAIL)
    db = open_db(app)
    try:
        researcher_id = db.execute("SELECT id FROM researchers WHERE email = ?", [EMAIL]).fetchone()[0]
        end_sessions(db, researcher_id)
    finally:
        db.conn.close()
    assert client.get("/dashboard/").status_code == 302


# ---------------------------------------------------------------- login


def test_failed_logins_back_off_per_account_whatever_the_address(db_path):
    from deniable.server.web.app import create_app

    app = create_app({"TESTING": True, "DATABASE": db_path, "SECRET_KEY": "k", "RATELIMIT_LOGIN": "1000 per minute"})
    ensure_researcher(app)
    codes = []
    for attempt in range(7):
        client = app.test_client()
        response = login(client, password="wrong guess", next_url=None) if attempt < 6 else login(client)
        codes.append(response.status_code)
        # every attempt from another address: a per-address limit alone would not stop this
        app.extensions["deniable.ratelimit"].client_key = (lambda address, n=attempt: f"address-{n}")
    assert codes[:5] == [401] * 5 and codes[5:] == [429, 429]  # even the right password waits
    refused = login(app.test_client())
    assert b"Too many failed logins for this account" in refused.data and "Retry-After" in refused.headers


def test_a_successful_login_starts_the_account_afresh(db_path):
    from deniable.server.web.app import create_app

    app = create_app({"TESTING": True, "DATABASE": db_path, "SECRET_KEY": "k"})
    ensure_researcher(app)
    client = app.test_client()
    assert [login(client, password="nope").status_code for _ in range(4)] == [401] * 4
    assert login(client).status_code == 302
    assert [login(app.test_client(), password="nope").status_code for _ in range(4)] == [401] * 4


@pytest.mark.parametrize("target", ["/%09/evil.example", "/%0A/x", "//evil.example", "/\\evil.example",
                                    "https://evil.example/", "/%2F%2Fevil.example", "/%5Cevil.example",
                                    "javascript:alert(1)", "/\t/evil.example"])
def test_login_never_redirects_off_site(app, target):
    ensure_researcher(app)
    response = login(app.test_client(), next_url=target)
    assert response.status_code == 302 and response.headers["Location"] == "/dashboard/"


def test_login_keeps_a_same_site_next(app):
    ensure_researcher(app)
    response = login(app.test_client(), next_url="/dashboard/habits/results?method=wilson")
    assert response.status_code == 302 and response.headers["Location"] == "/dashboard/habits/results?method=wilson"


@pytest.mark.parametrize("password", ["12345678", "password", "password1234", "correcthorse", "qwertyuiop12",
                                      "aaaaaaaaaaaaaaaa", "ada@example.org123"])
def test_common_and_short_passwords_are_refused(app, password):
    from deniable.server.store.accounts import AccountError

    db = open_db(app)
    try:
        with pytest.raises(AccountError, match="password: "):
            set_researcher(db, EMAIL, password)
        assert db.execute("SELECT count(*) FROM researchers").fetchone()[0] == 0
        assert set_researcher(db, EMAIL, PASSWORD)  # several unrelated words: fine
    finally:
        db.conn.close()
