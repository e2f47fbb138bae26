"""A SQLite storage for the ``limits`` library, so rate limits hold across gunicorn workers.

The rate limiter (:mod:`.ratelimit`) counts requests in a storage shared by every worker
process; without redis or memcached on the machine, a small SQLite file beside the database does it
(``deniable+sqlite:///path/to/deniable.db.limits``).  Fixed-window counters only: one row per
key, ``count`` and ``expires`` (Unix seconds), updated by a single atomic upsert, so no
transaction is ever held open.  Counters are throwaway (``synchronous = OFF``: a power cut
may forget some; a crashed process cannot corrupt them).  Expired rows are pruned now and
then.  The keys are ``limits``' item keys around :meth:`.ratelimit.RateLimiter.client_key`, a
keyed hash, never an address.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time

from limits.storage import Storage

PRUNE_EVERY = 1000  # increments between deletions of expired counters
OPEN_TIMEOUT = 10  # seconds to wait for another writer (busy timeout)


class SQLiteStorage(Storage):
    """Fixed-window rate-limit counters in a SQLite file shared by processes and threads."""

    STORAGE_SCHEME = ["deniable+sqlite"]

    def __init__(self, uri: str, wrap_exceptions: bool = False, **options):
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.path = uri.split("://", 1)[1]
        if not self.path:
            raise ValueError(f"{uri}: needs a file path, e.g. deniable+sqlite:///var/lib/deniable.limits")
        self._local = threading.local()
        self._increments = 0

    @property
    def base_exceptions(self):
        return sqlite3.Error

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None or self._local.pid != os.getpid():  # never reuse a connection across fork
            conn = sqlite3.connect(self.path, timeout=OPEN_TIMEOUT, isolation_level=None,
                                   check_same_thread=False)
            try:
                self._setup(conn)
            except sqlite3.Error:
                conn.close()
                raise
            self._local.conn, self._local.pid = conn, os.getpid()
        return conn

    @staticmethod
    def _setup(conn: sqlite3.Connection) -> None:
        """WAL and the table, retried while another process does the same.

        Switching a new file to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at
        once, without its busy handler, when two connections race for it (workers that start
        together and take their first request at the same moment).
        """
        deadline = time.monotonic() + OPEN_TIMEOUT
        while True:
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = OFF")
                conn.execute("CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, "
                             "count INTEGER NOT NULL, expires REAL NOT NULL) WITHOUT ROWID")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.005)

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        now = time.time()
        conn = self._conn()
        (count,) = conn.execute(
            "INSERT INTO counters (key, count, expires) VALUES (:key, :amount, :now + :expiry) "
            "ON CONFLICT (key) DO UPDATE SET "
            "  count = CASE WHEN expires <= :now THEN :amount ELSE count + :amount END, "
            "  expires = CASE WHEN expires <= :now THEN :now + :expiry ELSE expires END "
            "RETURNING count",
            {"key": key, "amount": amount, "now": now, "expiry": expiry},
        ).fetchone()
        self._increments += 1
        if self._increments % PRUNE_EVERY == 0:
            conn.execute("DELETE FROM counters WHERE expires <= ?", [now])
        return count

    def get(self, key: str) -> int:
        row = self._conn().execute("SELECT count FROM counters WHERE key = ? AND expires > ?",
                                   [key, time.time()]).fetchone()
        return row[0] if row else 0

    def get_expiry(self, key: str) -> float:
        now = time.time()
        row = self._conn().execute("SELECT expires FROM counters WHERE key = ? AND expires > ?",
                                   [key, now]).fetchone()
        return row[0] if row else now

    def check(self) -> bool:
        try:
            self._conn().execute("SELECT 1").fetchone()
        except sqlite3.Error:
            return False
        return True

    def reset(self) -> int | None:
        return self._conn().execute("DELETE FROM counters").rowcount

    def clear(self, key: str) -> None:
        self._conn().execute("DELETE FROM counters WHERE key = ?", [key])
