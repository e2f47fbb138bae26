"""Fixtures: an app on a real temporary SQLite file, its test client and CLI runner, a live
server on a free loopback port, Debian's chromium driven by Playwright, and a researcher
logged in to the dashboard.  Helpers that are not fixtures live in ``tests/support``."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from deniable.server.web.app import create_app
from support.dashboard import EMAIL, ensure_researcher, login

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("DENIABLE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
ARTIFACTS = ROOT / "test-artifacts"


def pytest_report_header(config):
    return f"SQLite {sqlite3.sqlite_version}; chromium: {CHROMIUM if shutil.which(CHROMIUM) else 'MISSING'}"


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "deniable.db")


@pytest.fixture
def app(db_path):
    # Rate limits off: tests submit far faster than any person; tests/test_security.py turns them on.
    return create_app({"TESTING": True, "DATABASE": db_path, "SECRET_KEY": "test-secret",
                       "RATELIMIT_ENABLED": False})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


def _whole_bodies(app):
    """``app`` with each response body read whole, and closed, before the server sends it.

    werkzeug's development server does not close a body whose client dropped the connection (a
    browser cancelling a static file it no longer needs), so the file stays open until the garbage
    collector reports it: a ResourceWarning, which this suite makes an error."""
    def serve(environ, start_response):
        body = app(environ, start_response)
        try:
            return [b"".join(body)]
        finally:
            if hasattr(body, "close"):
                body.close()
    return serve


@pytest.fixture
def live_server(app):
    """Serve ``app`` over real HTTP on a free 127.0.0.1 port; yields the base URL."""
    server = make_server("127.0.0.1", 0, _whole_bodies(app), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium under Playwright. Missing chromium is a failure, never a skip."""
    if not shutil.which(CHROMIUM):
        pytest.fail(f"chromium not found at {CHROMIUM}: install Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def open_demo(app):
    """The demo survey (two protected questions, one direct), open, in the app's database."""
    from deniable.server.store.db import connect
    from deniable.server.store.demo import ensure_demo

    db = connect(app.config["DATABASE"])
    try:
        return ensure_demo(db)
    finally:
        db.conn.close()


@pytest.fixture
def stored_state(db_path):
    """A function returning ``(responses rows, counts rows)`` of the test database, for
    asserting that a rejected submission stored nothing."""
    from deniable.server.store.db import connect

    def state():
        db = connect(db_path)
        try:
            rows = [dict(r) for r in db["responses"].rows]
            counts = [dict(r) for r in db["counts"].rows_where(order_by="survey_id, qid, option")]
            return rows, counts
        finally:
            db.conn.close()

    return state


@pytest.fixture
def researcher(app):
    """The researcher EMAIL / PASSWORD (see ``support.dashboard.ensure_researcher``)."""
    ensure_researcher(app)
    return EMAIL


@pytest.fixture
def auth_client(client, researcher):
    response = login(client)
    assert response.status_code == 302, response.get_data(as_text=True)
    return client
