"""Forensic hygiene: no file the server writes keeps, for long, what a recent write revealed.

In WAL mode SQLite appends every committed page to ``FILE-wal``, and ``FILE-shm`` lists which
page each frame holds, in commit order, until the WAL restarts.  Someone holding a copy of the
files could replay the WAL commit by commit and see, say, which invitation token's hash
vanished in the commit that inserted which response, or in which order recent responses
arrived.  Write connections zero deleted bytes (``secure_delete``, :func:`.db.connect`); what
remains is the WAL and the shm.

:func:`scrub` removes both traces: a ``RESTART`` checkpoint (every frame copied into the
database, and no reader left on the WAL, so the next commit restarts it), then one write to the
one-row ``scrub`` table.  The commit that restarts the WAL, this write or another connection's
that got there first, rewrites its header, zeroes the shm's frame list as it writes the first frame,
and cuts the file back to its own frames (every write connection has ``journal_size_limit = 0``,
:func:`.db.connect`): the WAL then holds the ``scrub`` page and any commit made since, and the shm
lists exactly those frames.  The WAL is not truncated afterwards: another writer may commit between
a scrub's write and a ``TRUNCATE`` checkpoint, which would copy that commit into the database and
empty the WAL but leave the shm listing the pages it wrote, in commit order, beside an empty WAL.
So a server killed at any moment of a scrub, with other writers at work, leaves a shm that lists no
page beyond the WAL's frames (``tests/store/test_at_rest.py`` copies the files at every step).
:func:`needs_scrub` tells a WAL that holds nothing but a scrub's own commit from one that holds more.

:func:`start` runs a :class:`Scrubber` in the background of each server process: every
``interval`` seconds it scrubs if the WAL holds anything but a scrub's commit, so every trace of a
write is gone ``interval`` seconds after it plus the time of one scrub — unless a reader holds an
old snapshot of the database, in which case the checkpoint is busy and is retried at the next tick.

**File times.**  Every tick also sets the modification time of the database, ``-wal`` and
``-shm`` to the tick's moment (:func:`touch`), whether or not anything was written, and
``deniable serve`` starts the timer before the first request.  So the files' times (mtime, and
ctime, which the touch itself moves) show when the server last ticked, not when a response
came: only a write in the last ``interval`` before the server stopped (a crash, or a stop
between two ticks) is dated by them, to within that interval.  Access times are not kept
(``noatime``/``relatime`` mounts; the touch sets them too).

**Forks.**  ``deniable serve`` starts the scrubber in gunicorn's master, which forks the workers
(at start and whenever one is replaced).  A fork copies SQLite's internal locks as they are, so a
child forked while the scrubber's thread was inside SQLite could inherit a lock that nobody will
release and hang in its first ``connect``.  Every fork of the process therefore waits for the
scrubber to be outside SQLite (:data:`_outside_sqlite`, held around each pass and taken by an
``os.register_at_fork`` hook), which is at most one scrub (:data:`SCRUB_BUSY_MS` per checkpoint).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from .db import connect, pragmas, write_transaction

SCRUB_BUSY_MS = 200  # how long a scrub waits for readers before it tries again at the next tick

_outside_sqlite = threading.Lock()  # held by a scrubber's pass; a fork waits for it (module notes)
os.register_at_fork(before=_outside_sqlite.acquire, after_in_parent=_outside_sqlite.release,
                    after_in_child=_outside_sqlite.release)


def scrub_page(db) -> int | None:
    """The page of the one-row ``scrub`` table, which every scrub rewrites."""
    row = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'scrub'").fetchone()
    return row[0] if row else None


def scrub(db) -> bool:
    """Checkpoint the WAL and restart it with a write of the ``scrub`` table; True if nothing was busy.

    Waits at most :data:`SCRUB_BUSY_MS` for readers (the connection's own busy timeout is restored).
    """
    with pragmas(db, busy_timeout=SCRUB_BUSY_MS):
        if db.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()[0]:
            return False
        with write_transaction(db):
            db.execute("UPDATE scrub SET passes = passes + 1")
        return True


def scrub_before_answering(db, seconds: float = 1.0) -> bool:
    """:func:`scrub` now, retrying while another connection checkpoints or reads, for at most
    ``seconds``; the background scrubber does what is left after that.  True once scrubbed."""
    deadline = time.monotonic() + seconds
    while not scrub(db):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


WAL_HEADER, FRAME_HEADER = 32, 24  # bytes (https://sqlite.org/fileformat2.html#walformat)


def needs_scrub(path: str, page: int | None = None) -> bool:
    """Whether the database's WAL holds any frame but a scrub's own commit: the single frame of the
    ``scrub`` table's ``page`` (:func:`scrub_page`; None: any frame needs a scrub)."""
    try:
        with open(f"{path}-wal", "rb") as wal:
            head, size = wal.read(WAL_HEADER + FRAME_HEADER), os.fstat(wal.fileno()).st_size
    except OSError:
        return False
    if size < WAL_HEADER + FRAME_HEADER:
        return size > 0
    page_size = int.from_bytes(head[8:12], "big")
    return size != WAL_HEADER + FRAME_HEADER + page_size or int.from_bytes(head[32:36], "big") != page


def touch(path: str) -> None:
    """Set the modification (and so the change) time of the database, its ``-wal`` and ``-shm`` to now,
    the same nanosecond for all three: after a tick their times tell when the tick ran, not when
    anything was last written (module notes)."""
    now = time.time_ns()
    for name in (path, f"{path}-wal", f"{path}-shm"):
        try:
            os.utime(name, ns=(now, now))
        except OSError:  # not there (no connection open), or gone: nothing to hide
            pass


class Scrubber(threading.Thread):
    """Scrubs one database file every ``interval`` seconds while its WAL holds more than a scrub's
    commit.

    It opens a connection only for a scrub, so an idle scrubber holds no file open, and it ends
    when the database file is gone.
    """

    def __init__(self, path: str, interval: float):
        super().__init__(name=f"deniable-scrub {Path(path).name}", daemon=True)
        self.path, self.interval = path, interval
        self.stopped = threading.Event()
        self.page: int | None = None  # the scrub table's page, once a scrub has read it
        self.wanted = True  # False once it has ended (its file is gone, or it was stopped)

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.interval):
                if not Path(self.path).exists():
                    return
                with _outside_sqlite:
                    if needs_scrub(self.path, self.page):
                        self.scrub_once()
                touch(self.path)
        finally:
            self.wanted = False

    def scrub_once(self) -> bool:
        try:
            db = connect(self.path)
        except sqlite3.Error:
            return False
        try:
            self.page = scrub_page(db)
            return scrub(db)
        except sqlite3.Error:  # busy beyond the short timeout, or the file went away: next tick
            return False
        finally:
            db.conn.close()


_running: dict[tuple[str, int], Scrubber] = {}
_lock = threading.Lock()


def start(path: str, interval: float) -> Scrubber | None:
    """Make sure this process scrubs ``path`` every ``interval`` seconds (0: never).

    Called at the end of every request that wrote, so the common case takes no lock.  The lock is
    never held across ``Thread.start()``: under gevent that call yields to other greenlets, and
    the lock (made before gunicorn's workers patch threading) would then block the whole worker.
    """
    if interval <= 0:
        return None
    key = (str(path), os.getpid())  # a forked worker starts its own
    scrubber = _running.get(key)
    if scrubber is not None and scrubber.wanted:
        return scrubber
    with _lock:
        scrubber = _running.get(key)
        fresh = scrubber is None or not scrubber.wanted
        if fresh:
            scrubber = _running[key] = Scrubber(str(path), interval)
    if fresh:
        scrubber.start()
    return scrubber
