"""Fixtures: an app on a real temporary SQLite file, its test client and CLI runner, a live
server on a free loopback port, Debian's chromium driven by Playwright, and a researcher
logged in to the dashboard.  Helpers that are not fixtures live in ``tests/support``.

Each test has its own app and its own database file; what the tests share is read-only: the
bytes of an empty migrated database (each test's file starts as a copy) and Jinja's compiled
templates."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import threading
from pathlib import Path

import jinja2
import pytest
from werkzeug.serving import make_server

# Cache compiled modules even where PYTHONDONTWRITEBYTECODE is set, in this process (pytest's
# rewritten test modules, the project's modules) and in the command-line processes tests start:
# compiling every module again in every process cost seconds per worker.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

from deniable.server.store.db import init_db  # noqa: E402  after the bytecode setting
from deniable.server.web import connections  # noqa: E402
from deniable.server.web.app import create_app
from support.dashboard import EMAIL, ensure_researcher, login

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("DENIABLE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
ARTIFACTS = ROOT / "test-artifacts"


# One test process makes thousands of apps, each on its own database file, and each app's
# scrubber ticks for as long as its file exists: at the default 0.1 s they would wake ten
# thousand times a second and, scrubbing at once, hold more files open than select() takes.
# In-process apps tick every second; every server process the tests start runs the default.
connections.SCRUB_SECONDS = 1.0


@pytest.fixture(autouse=True)
def _close_idle_connections():
    """Each test's files are its own: the process's pool keeps no connection to them after it (each
    would hold three descriptors, and select() takes none above 1,023)."""
    yield
    connections._process_pool().close_idle()


def pytest_report_header(config):
    return f"SQLite {sqlite3.sqlite_version}; chromium: {CHROMIUM if shutil.which(CHROMIUM) else 'MISSING'}"


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "deniable.db")


@pytest.fixture(scope="session")
def migrated_bytes(tmp_path_factory) -> bytes:
    """The file of an empty database with every migration applied, made once per test process."""
    path = tmp_path_factory.mktemp("migrated") / "deniable.db"
    init_db(str(path)).conn.close()  # the last connection's close checkpoints the WAL into the file
    assert not Path(f"{path}-wal").exists()
    return path.read_bytes()


@pytest.fixture
def migrated_db(db_path, migrated_bytes) -> str:
    """``db_path``, holding a copy of the empty migrated database unless a file is there already.

    Migrating a new file takes about 20 ms, copying one 0.1 ms; the app (``init_db``) then finds
    every migration applied.  The copy is private (0600) like a file ``connect`` creates.  Migrating
    for real: tests/store/test_migrations.py and every test that calls ``create_app`` itself."""
    if not os.path.exists(db_path):
        fd = os.open(db_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(migrated_bytes)
    return db_path


class CompiledTemplates(jinja2.BytecodeCache):
    """Jinja's compiled templates, kept for the whole test process.

    Every test makes its own app, and every app would compile each template it renders again:
    parsing and compiling the templates was a fifth of the fast lane's CPU.  An entry is used only
    while its template's source is unchanged (Jinja's checksum of it), so an edited template is
    compiled again; every app of the fixture has the same Jinja options (the cache is only theirs).
    """

    def __init__(self):
        self.code = {}

    def load_bytecode(self, bucket):
        checksum, code = self.code.get(bucket.key, (None, None))
        if checksum == bucket.checksum:
            bucket.code = code

    def dump_bytecode(self, bucket):
        self.code[bucket.key] = (bucket.checksum, bucket.code)


COMPILED_TEMPLATES = CompiledTemplates()


@pytest.fixture
def app(migrated_db):
    # Rate limits off: tests submit far faster than any person; tests/test_security.py turns them on.
    app = create_app({"TESTING": True, "DATABASE": migrated_db, "SECRET_KEY": "test-secret",
                      "RATELIMIT_ENABLED": False})
    app.jinja_env.bytecode_cache = COMPILED_TEMPLATES
    return app


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
