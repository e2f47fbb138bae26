"""The request's database handles: this worker thread's pooled connections, on ``g``.

SQLite access itself is :mod:`deniable.server.store.db`; this module only decides which
connection a request uses and leaves no transaction open at its end.
"""

from __future__ import annotations

import os
import threading

import sqlite_utils
from flask import current_app, g

from deniable.server.store.db import connect, init_db

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
