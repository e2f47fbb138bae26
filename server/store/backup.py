"""Backups that keep the promise: online, consistent, and no more revealing than the live file.

A backup (:func:`backup`) is made while the server runs:

1. **One consistent snapshot, copied to memory.**  SQLite's online-backup API copies every page
   of the database (its WAL included) into an in-memory database in a single step, under one
   read transaction: the copy is the database as of one commit.  A reader holds the scrub's
   checkpoint off (:mod:`.scrub`) only while it copies pages at memory speed (about a second per
   gigabyte), and the raw pages — their free space and the order of cells in them — never touch
   a disk.
2. **Rebuilt into the backup file.**  ``VACUUM INTO`` writes the in-memory copy to the
   destination table by table in key order: no free pages, no WAL, and cells laid out by their
   (random) keys, not by when they were written; then the file is synced and renamed into place,
   readable by its owner only.  The key file ``FILE.secret`` is not part of it: a restore keeps
   the server's own key (or makes a new one on a new machine), so a stolen backup cannot sign a
   session.  Nor does it hold a dashboard session (only hashes of their tokens are stored, but a
   restored backup would otherwise bring back sessions ended since): everyone logs in again.
   Pending invitations of colleagues are dropped likewise: an admin invites again.

A restore (:func:`restore`) puts a backup in place of a stopped server's database: it refuses
while a server holds the serving lock (:func:`hold_serving_lock`, a shared ``flock`` on
``FILE.lock`` that ``deniable serve`` holds for its lifetime), checks the backup, copies it
beside the database, removes the old ``-wal`` and ``-shm`` and renames the copy over the
database; opening it then upgrades its schema if the backup is older than the code.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from deniable.errors import FieldError

SQLITE_HEADER = b"SQLite format 3\x00"


class BackupError(FieldError):
    """A backup or restore that cannot be made; the message names the file and the problem."""


@dataclass(frozen=True)
class Summary:
    """What a backup or restore holds: its size, surveys and responses."""

    path: Path
    size: int
    surveys: int
    responses: int


def lock_path(path) -> Path:
    return Path(f"{path}.lock")


def _open_lock(path) -> int:
    return os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)


def hold_serving_lock(path) -> int:
    """Take the serving lock for the rest of the process (``deniable serve``); returns its descriptor.

    Forked workers share it; it is released when the last process holding it exits."""
    fd = _open_lock(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise BackupError(f"{path}: a restore is running on this database; start the server after it") from None
    return fd


def _counts(conn: sqlite3.Connection) -> tuple[int, int]:
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    if not {"surveys", "responses"} <= tables:
        raise BackupError("it is not a deniable database (no surveys or responses table)")
    surveys = conn.execute("SELECT count(*) FROM surveys").fetchone()[0]
    responses = conn.execute("SELECT count(*) FROM responses").fetchone()[0]
    return surveys, responses


def _sync_rename(partial: Path, final: Path) -> None:
    with open(partial, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(partial, final)
    directory = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def backup(path, dest) -> Summary:
    """Write a consistent, compact copy of the database at ``path`` to the new file ``dest`` (module notes)."""
    path, dest = Path(path), Path(dest)
    if not path.is_file():
        raise BackupError(f"{path}: no such database file")
    if dest.exists():
        raise BackupError(f"{dest}: already exists; a backup never overwrites a file (choose a new name)")
    if not dest.parent.is_dir():
        raise BackupError(f"{dest.parent}: no such folder")
    partial = dest.with_name(dest.name + ".partial")
    memory = sqlite3.connect(":memory:")
    try:
        try:
            source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        except sqlite3.Error as exc:
            raise BackupError(f"{path}: cannot open the database: {exc}") from None
        try:
            source.backup(memory)  # every page in one step: one read transaction, one commit's state
        except sqlite3.Error as exc:
            raise BackupError(f"{path}: cannot read the database: {exc}") from None
        finally:
            source.close()
        surveys, responses = _counts(memory)
        _end_sessions(memory)
        old_umask = os.umask(0o077)  # the file is the owner's only from its first byte
        try:
            memory.execute("VACUUM INTO ?", (str(partial),))
        except sqlite3.Error as exc:
            raise BackupError(f"{dest}: cannot write the backup: {exc}") from None
        finally:
            os.umask(old_umask)
        _sync_rename(partial, dest)
    finally:
        memory.close()
        if partial.exists():
            partial.unlink()
    return Summary(dest, dest.stat().st_size, surveys, responses)


def _end_sessions(conn: sqlite3.Connection) -> None:
    """A backup holds no dashboard session and no pending invitation of a colleague: a restore logs
    everyone out, even of sessions that were live when the backup was made, and brings back no
    link that was used or withdrawn since (only the in-memory copy loses them)."""
    for table in ("sessions", "researcher_invites"):
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [table]).fetchone():
            conn.execute(f"DELETE FROM {table}")
    conn.commit()


def check_backup(src) -> tuple[int, int]:
    """``(surveys, responses)`` of a backup file, or BackupError saying what is wrong with it."""
    src = Path(src)
    try:
        with open(src, "rb") as fh:
            header = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise BackupError(f"{src}: cannot read: {exc.strerror or exc}") from None
    if header != SQLITE_HEADER:
        raise BackupError(f"{src}: not an SQLite database file")
    try:
        conn = sqlite3.connect(f"{src.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BackupError(f"{src}: cannot open: {exc}") from None
    try:
        if conn.execute("PRAGMA quick_check").fetchone()[0] != "ok":
            raise BackupError(f"{src}: the file is damaged (PRAGMA quick_check failed)")
        try:
            return _counts(conn)
        except BackupError as exc:
            raise BackupError(f"{src}: {exc}") from None
    except sqlite3.Error as exc:
        raise BackupError(f"{src}: cannot read: {exc}") from None
    finally:
        conn.close()


def restore(src, path) -> Summary:
    """Put the backup ``src`` in place of the database at ``path``, refusing while a server runs on it."""
    src, path = Path(src), Path(path)
    surveys, responses = check_backup(src)
    if src.resolve() == path.resolve():
        raise BackupError(f"{src}: the backup is the database itself")
    if not path.parent.is_dir():
        raise BackupError(f"{path.parent}: no such folder")
    fd = _open_lock(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BackupError(f"{path}: a server is running on this database; stop it, then restore") from None
        partial = path.with_name(path.name + ".restoring")
        try:
            fd_new = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd_new, "wb") as out, open(src, "rb") as source:
                shutil.copyfileobj(source, out, 1 << 20)
            for stale in (Path(f"{path}-wal"), Path(f"{path}-shm")):
                stale.unlink(missing_ok=True)
            _sync_rename(partial, path)
        finally:
            partial.unlink(missing_ok=True)
    finally:
        os.close(fd)
    return Summary(path, path.stat().st_size, surveys, responses)
