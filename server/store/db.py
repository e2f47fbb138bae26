"""SQLite through sqlite-utils: opening the database and write transactions (no Flask here).

SQLite allows one writer at a time, so writes are short and a transaction that reads before
it writes starts with ``BEGIN IMMEDIATE`` (taking the write lock up front instead of failing
to upgrade a read lock).  WAL mode lets readers run beside the writer; the dashboard reads
through read-only connections.  The schema is :mod:`deniable.server.store.schema`; the web
app's per-request handles are :mod:`deniable.server.web.connections`.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from .schema import migrations

BUSY_TIMEOUT_MS = 10_000


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
