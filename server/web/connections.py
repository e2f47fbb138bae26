"""The request's database handles, checked out of a per-process pool and returned at its end.

SQLite access itself is :mod:`deniable.server.store.db`; this module only decides which
connection a request uses, leaves no transaction open at its end, and starts the process's
scrubber (:mod:`deniable.server.store.scrub`) once it has written.  Opening a connection (and
SQLite's schema parse on first use) costs more than a whole submission's transaction, so
connections are kept between requests; the pool works the same for threads and for gevent's
greenlets.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager

import sqlite_utils
from flask import current_app, g

from deniable.server.store import scrub
from deniable.server.store.db import WEB_BUSY_TIMEOUT_MS, connect
from deniable.server.store.integrity import open_repaired

MAX_IDLE = 8  # connections kept per (file, mode) in a process

SCRUB_SECONDS = 0.1  # the scrubber's tick (docs/security.md): what a crash leaves in the WAL, what file times date


class Pool:
    """Idle connections per (file, inode, read-only) of this process; never shared across fork."""

    def __init__(self):
        self.pid = os.getpid()
        self.idle: dict[tuple, list[sqlite_utils.Database]] = {}
        self.lock = threading.Lock()

    def checkout(self, path: str, readonly: bool) -> tuple[tuple | None, sqlite_utils.Database]:
        key = file_key(path, readonly)
        if key is not None:
            with self.lock:
                idle = self.idle.get(key)
                if idle:
                    return key, idle.pop()
        db = connect(path, readonly=readonly)
        # Waits for another worker's write happen in begin_immediate, cooperatively (store.db).
        db.conn.execute(f"PRAGMA busy_timeout = {WEB_BUSY_TIMEOUT_MS}")
        return key or file_key(path, readonly), db  # a file connect just created has a key now

    def checkin(self, key: tuple | None, db: sqlite_utils.Database) -> None:
        if db.conn.in_transaction:
            db.conn.rollback()
        with self.lock:
            idle = self.idle.setdefault(key, []) if key is not None else None
            if idle is not None and len(idle) < MAX_IDLE and os.getpid() == self.pid:
                idle.append(db)
                return
        db.conn.close()


    def close_idle(self) -> None:
        """Close every idle connection (a process that is done with its files, such as a test's)."""
        with self.lock:
            idle = [db for dbs in self.idle.values() for db in dbs]
            self.idle.clear()
        for db in idle:
            db.conn.close()


_pool = Pool()


def file_key(path: str, readonly: bool) -> tuple | None:
    """The file's identity: a database file replaced on disk is never served by old connections."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return path, stat.st_dev, stat.st_ino, readonly


def _new_pool_after_fork() -> None:
    global _pool
    _pool = Pool()  # a forked process (a gunicorn worker) starts with no inherited connection


os.register_at_fork(after_in_child=_new_pool_after_fork)


def _process_pool() -> Pool:
    """This process's pool (made anew in a forked child, so no connection crosses a fork)."""
    return _pool


def _handle(name: str, readonly: bool) -> sqlite_utils.Database:
    if name not in g:
        key, db = _process_pool().checkout(current_app.config["DATABASE"], readonly)
        setattr(g, name, (key, db))
    return getattr(g, name)[1]


def get_db() -> sqlite_utils.Database:
    """The request's read-write handle."""
    return _handle("db", readonly=False)


def get_readonly_db() -> sqlite_utils.Database:
    """The request's read-only handle (dashboard reads)."""
    return _handle("db_ro", readonly=True)


@contextmanager
def pooled(app):
    """A read-write handle outside a Flask request (the submission route): returned to the pool
    at the end, and the scrubber started, as :func:`close_db` does for a request."""
    key, db = _process_pool().checkout(app.config["DATABASE"], False)
    try:
        yield db
    finally:
        _process_pool().checkin(key, db)
        scrub.start(app.config["DATABASE"], float(app.config["SCRUB_SECONDS"]))


def close_db(exc=None) -> None:
    """End of request: roll back anything left open and return the handles to the pool."""
    wrote = "db" in g
    for name in ("db", "db_ro"):
        held = g.pop(name, None)
        if held is not None:
            _process_pool().checkin(*held)
    if wrote:
        scrub.start(current_app.config["DATABASE"], float(current_app.config["SCRUB_SECONDS"]))


def init_app(app) -> None:
    app.config.setdefault("SCRUB_SECONDS", SCRUB_SECONDS)
    open_repaired(app.config["DATABASE"]).conn.close()
    app.teardown_appcontext(close_db)
