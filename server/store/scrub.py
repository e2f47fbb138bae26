"""Forensic hygiene: no file the server writes keeps, for long, what a recent write revealed.

In WAL mode SQLite appends every committed page to ``FILE-wal``, and ``FILE-shm`` lists which
page each frame holds, in commit order, until the WAL restarts.  Someone holding a copy of the
files could replay the WAL commit by commit and see, say, which invitation token's hash
vanished in the commit that inserted which response, or in which order recent responses
arrived.  Write connections zero deleted bytes (``secure_delete``, :func:`.db.connect`); what
remains is the WAL and the shm.

:func:`scrub` removes both traces: a ``RESTART`` checkpoint (every frame copied into the
database, and no reader left on the WAL, so the next commit restarts it), one write to the one-row
``scrub`` table, then a cut of the WAL file (:func:`cut_wal`).  The commit that restarts the WAL,
this write or another connection's that got there first, rewrites its header (new salts, which
every frame of this generation repeats) and, as it lists its first frame, zeroes the shm's list of
pages.  The frames of earlier generations stay behind it in the file until the cut, made while the
scrub holds the write lock (``BEGIN IMMEDIATE``: nobody appends or restarts meanwhile), truncates
the file after the last frame that carries the header's salts.  The WAL then holds the ``scrub``
page and any commit made since, and the shm lists exactly those frames.
:func:`needs_scrub` tells a WAL that holds nothing but a scrub's own commit from one that holds more.

**Why the scrub cuts the file, not SQLite.**  SQLite shrinks the WAL in two places a running server
reaches, and both leave the shm listing pages that the file no longer holds:

- a commit that restarts the WAL under ``journal_size_limit`` cuts the file back to its own frames
  *before* it lists them in the shm (``sqlite3WalFrames`` in ``wal.c``: ``walLimitSize``, then
  ``walIndexAppend``, which zeroes the list as it appends frame 1).  Killed in between, a server
  left the previous generation's list of pages, in commit order, beside a WAL of one frame (issue
  41: 774 pages, under load; any worker's restart after an automatic checkpoint did it too);
- a ``TRUNCATE`` checkpoint resets the shm's header and empties the file but leaves the list:
  another worker's commit between a scrub's write and that checkpoint stayed listed beside an
  empty WAL.

No call of SQLite's API both leaves the shm listing nothing that matters and then cuts the file
without releasing the write lock, so another writer can always commit in between.  So no
connection lets SQLite cut the WAL (``journal_size_limit = -1``, :func:`.db.connect`), and
:func:`cut_wal` does what ``walLimitSize`` does, under the same lock, after the list is rewritten:
one ``truncate``, of frames no reader or checkpointer can need (they read frames of the current
generation only, up to the last commit).  It opens only the ``-wal``, on which SQLite holds no lock
(closing a descriptor of the database or ``-shm`` would drop the process's POSIX locks on it).  The
restarts other writers make after SQLite's automatic checkpoints no longer cut the file: the older
frames stay behind theirs until the next scrub, which the timer below bounds as it bounds the rest.

So a server killed at any moment, with other writers at work, leaves a shm that lists no page
beyond the WAL's frames: every rewrite of the list comes after the frames it names are in the file,
and the only shrink is one system call that keeps every frame the list can name.  What is left
needs a writer killed on its own, not the whole server: killed between writing the frames of a
commit that restarts the WAL and listing them, it leaves the old list until the next commit; a
cut in that interval (after the scrub's own commit, so only if another checkpoint and restart came
in between) would cut below it.  The list and file are whole again at the next commit.
``tests/store/test_at_rest.py`` copies the files at every step of a scrub, beside another writer;
``tests/store/test_wal_cut_kill.py`` kills a process right after any cut SQLite makes of the WAL:
with ``journal_size_limit = 0`` there was one, and such a kill broke this, in the scrub's restart, in
another writer's and in a restart after an automatic checkpoint; now there is none.

:func:`start` runs a :class:`Scrubber` in the background of each server process: every
``interval`` seconds it scrubs if the WAL holds anything but a scrub's commit, so every trace of a
write is gone ``interval`` seconds after it plus the time of one scrub — unless a reader holds an
old snapshot of the database, in which case the checkpoint is busy and is retried at the next tick.
Under ``deniable serve`` that background is the master's, one thread for the whole server: the
workers it forks leave the file to it (:func:`leave_to_parent`) while it lives, since a scrub
checkpoints the file whoever wrote.  A process not forked by one that scrubs the file (a test's
app, a worker whose master has gone) runs its own.

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

from .db import begin_immediate, connect, pragmas, write_transaction

SCRUB_BUSY_MS = 200  # how long a scrub waits for readers before it tries again at the next tick

_outside_sqlite = threading.Lock()  # held by a scrubber's pass; a fork waits for it (module notes)
os.register_at_fork(before=_outside_sqlite.acquire, after_in_parent=_outside_sqlite.release,
                    after_in_child=_outside_sqlite.release)


def scrub_page(db) -> int | None:
    """The page of the one-row ``scrub`` table, which every scrub rewrites."""
    row = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'scrub'").fetchone()
    return row[0] if row else None


def scrub(db) -> bool:
    """Checkpoint the WAL, restart it with a write of the ``scrub`` table and cut the file after that
    generation (:func:`cut_wal`); True if nothing was busy.

    Waits at most :data:`SCRUB_BUSY_MS` for readers (the connection's own busy timeout is restored).
    """
    with pragmas(db, busy_timeout=SCRUB_BUSY_MS):
        if db.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()[0]:
            return False
        with write_transaction(db):
            db.execute("UPDATE scrub SET passes = passes + 1")
        begin_immediate(db)  # the write lock, so that nobody writes or restarts the WAL during the cut
        try:
            cut_wal(database_file(db))
        finally:
            db.conn.execute("ROLLBACK")
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
WAL_MAGIC = (0x377F0682, 0x377F0683)  # checksums little- or big-endian


def database_file(db) -> str:
    """The path of the connection's main database file ("" for a temporary or in-memory one)."""
    return next(row[2] for row in db.conn.execute("PRAGMA database_list") if row[1] == "main")


def cut_wal(path: str) -> int | None:
    """Truncate ``path``'s WAL after the last frame of its current generation; the size left, or None
    when there is no WAL or nothing to cut.  Only while holding the write lock (``BEGIN IMMEDIATE``).

    The current generation is the frames from the start that carry the header's salts (committed or
    not: a transaction rolled back just after a restart leaves its frames listed in the shm); every
    later frame is of an earlier generation, which a restart changes the salts of (module notes).
    """
    if not path:
        return None
    name = f"{path}-wal"
    try:
        # The -wal carries no lock of SQLite's: closing this descriptor drops none of the process's.
        with open(name, "rb") as wal:
            head, size = wal.read(WAL_HEADER), os.fstat(wal.fileno()).st_size
            if len(head) < WAL_HEADER or int.from_bytes(head[:4], "big") not in WAL_MAGIC:
                return None
            frame, salts, end = FRAME_HEADER + int.from_bytes(head[8:12], "big"), head[16:24], WAL_HEADER
            while end + frame <= size:
                wal.seek(end + 8)
                if wal.read(8) != salts:
                    break
                end += frame
        if end >= size:
            return None
        os.truncate(name, end)
    except OSError:  # gone (no connection open), or not ours to cut: the next scrub tries again
        return None
    return end


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
_parents: set[tuple[str, int]] = set()  # (file, parent's pid): files the process that forked this one scrubs


def leave_to_parent() -> None:
    """In a server's worker, just forked: the files the master's scrubber scrubs are left to it.

    ``deniable serve`` starts a scrubber in gunicorn's master before it forks the workers
    (:mod:`deniable.server.cli.serve`), and that one thread, outside every worker, ticks for the
    whole server: a scrub is a checkpoint of the *file*, whoever wrote, so one per tick is what the
    bound needs (one tick and one scrub after a write, module notes).  A scrubber in every worker
    as well made a server of four workers scrub five times a tick under load, each scrub a
    ``RESTART`` checkpoint that blocks every writer while it copies, and each worker's a greenlet
    whose checkpoint waited for readers inside C, stalling the worker's every connection
    (docs/benchmarks.md, "Performance, round 4").  A worker whose master has gone (its parent is
    another process now) starts its own again at its next write (:func:`start`)."""
    parent = os.getppid()
    for (path, pid), scrubber in list(_running.items()):
        if pid == parent and scrubber.wanted:
            _parents.add((path, parent))


def start(path: str, interval: float) -> Scrubber | None:
    """Make sure this process scrubs ``path`` every ``interval`` seconds (0: never).

    Called at the end of every request that wrote, so the common case takes no lock.  The lock is
    never held across ``Thread.start()``: under gevent that call yields to other greenlets, and
    the lock (made before gunicorn's workers patch threading) would then block the whole worker.
    """
    if interval <= 0:
        return None
    if _parents and (str(path), os.getppid()) in _parents:  # the master scrubs it (:func:`leave_to_parent`)
        return None
    key = (str(path), os.getpid())  # a forked process starts its own
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
