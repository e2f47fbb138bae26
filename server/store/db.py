"""SQLite through sqlite-utils: opening the database and write transactions (no Flask here).

SQLite allows one writer at a time, so writes are short and a transaction that reads before
it writes starts with ``BEGIN IMMEDIATE`` (taking the write lock up front instead of failing
to upgrade a read lock).  WAL mode lets readers run beside the writer; the dashboard reads
through read-only connections.  The schema is :mod:`deniable.server.store.migrations`; the web
app's per-request handles are :mod:`deniable.server.web.connections`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from .migrations import migrations

BUSY_TIMEOUT_MS = 10_000
WEB_BUSY_TIMEOUT_MS = 2  # the web app's connections: a write lock is waited for in begin_immediate


def connect(path, *, readonly: bool = False) -> sqlite_utils.Database:
    """Open the database at ``path`` in autocommit mode with WAL, a busy timeout and foreign keys.

    A new file is created readable by its owner only (SQLite gives its ``-wal`` and ``-shm`` the
    same permissions), and write connections zero deleted content (``secure_delete``), so a
    consumed invitation token is not left in a page's free space, and never cut the WAL file
    (``journal_size_limit = -1``): SQLite would cut it back to the commit that restarts it before
    that commit rewrites the ``-shm``'s list of pages, and a kill in between would leave that list
    naming pages the WAL no longer holds.  The scrub cuts it instead (:mod:`.scrub`).
    """
    if not readonly:
        _create_private(Path(path))
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
        conn.execute("PRAGMA secure_delete = ON")
        # No commit cuts the WAL file (the default, stated: a build may set another): SQLite cuts it
        # before it rewrites the -shm's list of pages.  The scrub cuts it (deniable.server.store.scrub).
        conn.execute("PRAGMA journal_size_limit = -1")
    return sqlite_utils.Database(conn)


def _create_private(path: Path) -> None:
    """Create an empty database file with mode 0600 unless it exists (umask cannot widen it)."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:  # another process made it first
        pass


def init_db(path) -> sqlite_utils.Database:
    """Create or upgrade the schema at ``path`` and return a read-write handle."""
    db = connect(path)
    migrations.apply(db)
    # sqlite-utils records when each migration ran, to the microsecond: keep the day only, like
    # every other date in the file (docs/design.md, invariant 6).
    db.execute("UPDATE _sqlite_migrations SET applied_at = substr(applied_at, 1, 10) WHERE length(applied_at) > 10")
    return db


@contextmanager
def pragmas(db: sqlite_utils.Database, **values: int):
    """Set integer PRAGMAs of the connection (``busy_timeout=0``) for the block; restore them after."""
    before = {name: int(db.conn.execute(f"PRAGMA {name}").fetchone()[0]) for name in values}
    for name, value in values.items():
        db.conn.execute(f"PRAGMA {name} = {int(value)}")
    try:
        yield
    finally:
        for name, value in before.items():
            db.conn.execute(f"PRAGMA {name} = {value}")


def begin_immediate(db: sqlite_utils.Database, timeout: float = BUSY_TIMEOUT_MS / 1000, *,
                    cooperative: bool = False) -> None:
    """``BEGIN IMMEDIATE``, retried in Python while another connection writes, for ``timeout`` seconds.

    SQLite's busy handler sleeps inside C: under gunicorn's gevent workers that would stall every
    connection of the worker while it waits for another worker's short write.  The web app's
    connections therefore keep a busy timeout of :data:`WEB_BUSY_TIMEOUT_MS` and wait here, with
    ``time.sleep`` (cooperative once gevent has patched it), from 0.1 ms doubling to 5 ms.  Other
    connections keep SQLite's own wait (:data:`BUSY_TIMEOUT_MS`) and rarely come back here.
    ``cooperative=True`` waits only here (busy timeout 0 during the attempts, then
    :data:`WEB_BUSY_TIMEOUT_MS` again: for the web app's connections), for a caller that wants its
    process's other requests to run while it waits (the submissions' group commit).
    """
    if cooperative:
        db.conn.execute("PRAGMA busy_timeout = 0")  # (not pragmas(): two statements, not three, on every batch)
        try:
            return begin_immediate(db, timeout)
        finally:
            db.conn.execute(f"PRAGMA busy_timeout = {WEB_BUSY_TIMEOUT_MS}")
    deadline, delay = None, 0.0001
    while True:
        try:
            db.conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            deadline = deadline or time.monotonic() + timeout
            if time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(2 * delay, 0.005)


@contextmanager
def write_transaction(db: sqlite_utils.Database, *, cooperative: bool = False):
    """Run the block in one ``BEGIN IMMEDIATE`` transaction (:func:`begin_immediate`); roll back on any exception."""
    begin_immediate(db, cooperative=cooperative)
    try:
        yield db
    except BaseException:
        db.conn.execute("ROLLBACK")
        raise
    db.conn.execute("COMMIT")
