"""SQLite through sqlite-utils: connections, the schema (as Migrations), write transactions.

SQLite allows one writer at a time, so writes are short and a transaction that reads before
it writes starts with ``BEGIN IMMEDIATE`` (taking the write lock up front instead of failing
to upgrade a read lock).  WAL mode lets readers run beside the writer; the dashboard reads
through read-only connections.  No table has a column for an IP address, a user agent or a
time finer than the day (DESIGN.md, invariant 2).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils
from flask import current_app, g
from sqlite_utils import Migrations

BUSY_TIMEOUT_MS = 10_000

migrations = Migrations("deniable")


@migrations()
def m001_surveys_questions_responses_counts(db: sqlite_utils.Database) -> None:
    db["surveys"].create(
        {
            "id": int,
            "slug": str,
            "title": str,
            "description": str,
            "status": str,  # draft -> open -> closed
            "target_n": int,
            "created_on": str,  # YYYY-MM-DD
            "opened_on": str,
            "closed_on": str,
        },
        pk="id",
        not_null={"slug", "title", "description", "status"},
        defaults={"status": "draft", "description": "", "target_n": 1000},
    )
    db["surveys"].create_index(["slug"], unique=True)
    db["questions"].create(
        {
            "id": int,
            "survey_id": int,
            "position": int,
            "qid": str,  # the question id of the definition
            "text": str,
            "options": str,  # JSON list of labels
            "required": int,
            "epsilon": float,  # declared; NULL = asked directly (not protected)
            "k": int,
            "threshold": int,  # floor(p * 2^32); NULL for a direct question
        },
        pk="id",
        foreign_keys=[("survey_id", "surveys", "id")],
        not_null={"survey_id", "position", "qid", "text", "options", "required", "k"},
    )
    db["questions"].create_index(["survey_id", "qid"], unique=True)
    db["responses"].create(
        {
            "id": int,
            "survey_id": int,
            "submitted_on": str,  # YYYY-MM-DD: nothing finer than the day
            "reports": str,  # JSON {qid: reported option index}; randomized for protected questions
            "design": str,  # JSON {qid: [k, threshold]}: the mechanism each report was made under
        },
        pk="id",
        foreign_keys=[("survey_id", "surveys", "id")],
        not_null={"survey_id", "submitted_on", "reports", "design"},
    )
    db["responses"].create_index(["survey_id"])
    # Invariant 4: a survey's design is frozen once it opens; the database refuses it too.
    for event, row in (("INSERT", "NEW"), ("UPDATE", "OLD"), ("DELETE", "OLD")):
        db.execute(
            f"""CREATE TRIGGER questions_frozen_{event.lower()} BEFORE {event} ON questions
            WHEN (SELECT status FROM surveys WHERE id = {row}.survey_id) != 'draft'
            BEGIN SELECT RAISE(ABORT, 'the survey is not a draft: its questions are frozen'); END"""
        )
    db["counts"].create(
        {"survey_id": int, "qid": str, "option": int, "count": int},
        pk=("survey_id", "qid", "option"),
        foreign_keys=[("survey_id", "surveys", "id")],
        not_null={"count"},
        defaults={"count": 0},
    )


@migrations()
def m002_researchers(db: sqlite_utils.Database) -> None:
    db["researchers"].create(
        {"id": int, "email": str, "password_hash": str, "created_on": str},  # created_on: YYYY-MM-DD
        pk="id",
        not_null={"email", "password_hash"},
    )
    db["researchers"].create_index(["email"], unique=True)


@migrations()
def m003_invitations(db: sqlite_utils.Database) -> None:
    # Only SHA-256 hashes of unused tokens, and no rowid: nothing records when a token was
    # made or used, so nothing can be lined up with the order of the responses.
    db.execute("CREATE TABLE invitations (token_hash TEXT PRIMARY KEY, "
               "survey_id INTEGER NOT NULL REFERENCES surveys(id)) WITHOUT ROWID")
    db["surveys"].add_column("invitation_only", int, not_null_default=0)


def connect(path, *, readonly: bool = False) -> sqlite_utils.Database:
    """Open the database at ``path`` in autocommit mode with WAL, a busy timeout and foreign keys."""
    if readonly:
        conn = sqlite3.connect(
            f"{Path(path).resolve().as_uri()}?mode=ro", uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False,
        )
    else:
        conn = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    if not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
        # WAL + NORMAL survives a killed process (not a power cut) and keeps commits cheap.
        conn.execute("PRAGMA synchronous = NORMAL")
    return sqlite_utils.Database(conn)


def init_db(path) -> sqlite_utils.Database:
    """Create or upgrade the schema at ``path`` and return a read-write handle."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = connect(path)
    migrations.apply(db)
    return db


@contextmanager
def write_transaction(db: sqlite_utils.Database):
    """Run the block in one ``BEGIN IMMEDIATE`` transaction; roll back on any exception."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


# Each worker thread keeps its connections between requests: opening one (and SQLite's schema
# parse on first use) costs more than a whole submission's transaction.
_pool = threading.local()


def _thread_connection(readonly: bool) -> sqlite_utils.Database:
    """This thread's connection to the app's database, reopened if the file or process changed.

    The key holds the file's inode and the process id, so a database file replaced on disk or
    a connection inherited across ``fork`` is never reused.
    """
    path = current_app.config["DATABASE"]
    try:
        stat = os.stat(path)
        key = (path, stat.st_dev, stat.st_ino, os.getpid())
    except OSError:
        key = None
    slot = "ro" if readonly else "rw"
    cached = getattr(_pool, slot, None)
    if cached is not None and key is not None and cached[0] == key:
        return cached[1]
    if cached is not None and cached[0][-1] == os.getpid():
        cached[1].conn.close()
    db = connect(path, readonly=readonly)
    if key is None:  # created just now by connect: key it by the new file
        stat = os.stat(path)
        key = (path, stat.st_dev, stat.st_ino, os.getpid())
    setattr(_pool, slot, (key, db))
    return db


def get_db() -> sqlite_utils.Database:
    """The request's read-write handle (this thread's pooled connection)."""
    if "db" not in g:
        g.db = _thread_connection(readonly=False)
    return g.db


def get_readonly_db() -> sqlite_utils.Database:
    """The request's read-only handle (dashboard reads)."""
    if "db_ro" not in g:
        g.db_ro = _thread_connection(readonly=True)
    return g.db_ro


def close_db(exc=None) -> None:
    """End of request: leave no transaction open on the pooled connections."""
    for key in ("db", "db_ro"):
        db = g.pop(key, None)
        if db is not None and db.conn.in_transaction:
            db.conn.rollback()


def init_app(app) -> None:
    init_db(app.config["DATABASE"]).conn.close()
    app.teardown_appcontext(close_db)
