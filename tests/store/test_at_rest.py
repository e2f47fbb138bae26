"""What the store leaves on disk: random keys, no order, private files, clean WAL, guarded status."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from deniable.server.store import scrub as scrubbing
from deniable.server.store.db import connect
from deniable.server.store.invitations import generate, token_hash
from deniable.server.store.responses import insert_many
from support.forensics import frames_held, shm_pages, wal_frames
from support.store import store_response
from deniable.server.store.surveys import get_survey, set_status

REPORTS = {"drug_use": 1, "cheating": 2}


def files(db_path) -> bytes:
    folder = Path(db_path).parent
    return b"".join(path.read_bytes() for path in folder.iterdir() if path.is_file())


def test_new_database_files_are_readable_by_their_owner_only(db, stored, db_path):
    store_response(db, stored, REPORTS)
    for suffix in ("", "-wal", "-shm"):
        path = f"{db_path}{suffix}"
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, (path, oct(os.stat(path).st_mode))


def test_response_ids_are_random_and_the_table_has_no_rowid(db, stored):
    ids = [store_response(db, stored, REPORTS) for _ in range(50)]
    assert len(set(ids)) == 50 and all(len(i) == 16 for i in ids)
    assert ids != sorted(ids)
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'response_slots'").fetchone()[0]
    assert "WITHOUT ROWID" in sql and "PRIMARY KEY (survey_id, id)" in sql  # responses: a view of its filled slots
    listed = [r[0] for r in db.execute("SELECT id FROM responses WHERE survey_id = ?", [stored.id])]
    assert listed == sorted(ids)  # the table's order is the random keys' order, not submission order


def test_bulk_inserts_are_unordered_too(db, stored):
    import numpy as np

    columns = {"drug_use": np.arange(2000) % 2, "cheating": np.arange(2000) % 4}
    insert_many(db, stored, columns)
    reports = [json.loads(r[0]) for r in db.execute("SELECT reports FROM responses")]
    inserted = [{"drug_use": int(d), "cheating": int(c)} for d, c in zip(columns["drug_use"], columns["cheating"])]
    assert sorted(map(json.dumps, reports)) == sorted(map(json.dumps, inserted)) and reports != inserted


def test_an_invited_response_leaves_no_trace_of_its_token(db, stored, db_path):
    reader = connect(db_path)  # another connection keeps the WAL alive, as a running server does
    try:
        db.execute("UPDATE surveys SET invitation_only = 1 WHERE id = ?", [stored.id])
        tokens = generate(db, stored.id, 3)
        store_response(db, get_survey(db, "demo"), REPORTS, tokens[0])
        assert not scrubbing.needs_scrub(db_path, scrubbing.scrub_page(db))  # scrubbed before the caller acknowledges
        everything = files(db_path)
        assert token_hash(tokens[0]).encode() not in everything and tokens[0].encode() not in everything
        assert token_hash(tokens[1]).encode() in everything  # the unused ones are there to be found
    finally:
        reader.conn.close()


def test_scrub_restarts_the_wal_with_its_own_commit_and_overwrites_the_frame_list(db, stored, db_path):
    reader = connect(db_path)
    try:
        page = scrubbing.scrub_page(db)
        for _ in range(20):
            store_response(db, stored, REPORTS)
        assert scrubbing.needs_scrub(db_path, page) and wal_frames(Path(f"{db_path}-wal").read_bytes()) > 20
        assert scrubbing.scrub(db)
        assert not scrubbing.needs_scrub(db_path, page) and scrubbing.needs_scrub(db_path)
        wal = Path(f"{db_path}-wal").read_bytes()
        assert wal_frames(wal) == 1 and len(wal) == 32 + 24 + db.execute("PRAGMA page_size").fetchone()[0]
        assert shm_pages(Path(f"{db_path}-shm").read_bytes()) == [page]  # only the scrub table's page
        store_response(db, stored, REPORTS)
        assert scrubbing.needs_scrub(db_path, page)  # a commit after the scrub's
        assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000  # restored for the pool
    finally:
        reader.conn.close()


def copies_through_a_scrub(db, stored, db_path, *, another_writer: bool) -> list[tuple[str, bytes, bytes]]:
    """``(moment, -wal, -shm)`` before each statement of a scrub of 20 commits, and after it.

    A SIGKILL leaves the files as they are (SQLite writes through to the operating system), so a copy
    taken before each statement is what a kill at that moment would leave.  With ``another_writer``,
    another connection commits a response wherever the scrub holds no write lock, as a running
    server's other workers and the dashboard may, and the files are copied after each such commit."""
    other = connect(db_path)  # keeps the WAL and shm alive, as a running server does
    copies, writing = [], False

    def copy(moment):
        copies.append((moment, *(Path(f"{db_path}{suffix}").read_bytes() for suffix in ("-wal", "-shm"))))

    def between(statement):
        nonlocal writing
        copy(statement)
        writing = writing or statement.startswith("BEGIN")
        if another_writer and not writing:
            store_response(other, stored, REPORTS)
            copy(f"another writer's commit, before {statement}")
        writing = writing and statement not in ("COMMIT", "ROLLBACK")

    try:
        for _ in range(20):
            store_response(db, stored, REPORTS)
        db.conn.set_trace_callback(between)
        try:
            assert scrubbing.scrub(db)
        finally:
            db.conn.set_trace_callback(None)
        copy("after")
        if another_writer:
            store_response(other, stored, REPORTS)
            copy("another writer's commit, after")
    finally:
        other.conn.close()
    return copies


@pytest.mark.parametrize("another_writer", [False, True], ids=["alone", "beside-another-writer"])
def test_a_scrub_killed_at_any_step_leaves_no_page_listed_beyond_the_wal(db, stored, db_path, another_writer):
    """Whatever the moment of the kill, the -shm lists no page beyond the WAL's frames.  Beside another
    writer a scrub that truncated the WAL last failed this: a commit made between its write and its
    truncation was cut from the WAL, and the -shm still listed the pages it wrote."""
    copies = copies_through_a_scrub(db, stored, db_path, another_writer=another_writer)
    scrub_page = scrubbing.scrub_page(db)
    assert any("wal_checkpoint" in moment for moment, *_ in copies)
    assert wal_frames(copies[0][1]) > 20 and len(shm_pages(copies[0][2])) > 20  # the 20 commits, before
    assert (sum("another writer" in moment for moment, *_ in copies) >= 4) == another_writer
    for moment, wal, shm in copies:
        listed = [page for page in shm_pages(shm) if page != scrub_page]
        assert len(listed) <= wal_frames(wal), (moment, len(listed), wal_frames(wal))
    if not another_writer:  # the scrub's own commit, alone, and no older frame behind it
        assert frames_held(copies[-1][1]) == wal_frames(copies[-1][1]) == 1 and shm_pages(copies[-1][2]) == [scrub_page]
    else:  # the scrub's cut left only the WAL's current generation, whoever restarted it
        moment, wal, _ = next(copy for copy in copies if copy[0] == "after")
        assert frames_held(wal) == wal_frames(wal) >= 1, moment


def test_a_busy_reader_makes_the_scrub_wait_for_the_next_tick(db, stored, db_path):
    reader = connect(db_path)
    try:
        store_response(db, stored, REPORTS)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM responses").fetchone()  # a snapshot before the next write
        store_response(db, stored, REPORTS)
        page = scrubbing.scrub_page(db)
        assert scrubbing.scrub(db) is False and scrubbing.needs_scrub(db_path, page)
        reader.execute("COMMIT")
        assert scrubbing.scrub(db) and not scrubbing.needs_scrub(db_path, page)
    finally:
        reader.conn.close()


def test_the_background_scrubber_cleans_within_its_interval(db, stored, db_path):
    reader = connect(db_path)
    try:
        scrubber = scrubbing.start(db_path, 0.2)
        store_response(db, stored, REPORTS)
        page = scrubbing.scrub_page(db)
        assert scrubbing.needs_scrub(db_path, page)
        deadline = time.monotonic() + 5
        while scrubbing.needs_scrub(db_path, page):
            assert time.monotonic() < deadline, "the scrubber did not run"
            time.sleep(0.05)
        assert scrubbing.start(db_path, 0.2) is scrubber  # one per process and file
        assert scrubbing.start(db_path, 0) is None  # 0: off
        scrubber.stopped.set()
    finally:
        reader.conn.close()


WRITES_FOREVER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA busy_timeout = 5000")
conn.execute("CREATE TABLE IF NOT EXISTS filler (x)")
while True:
    try:
        conn.execute("INSERT INTO filler VALUES (randomblob(100))")
    except sqlite3.OperationalError:
        pass
"""

FORKS_BESIDE_A_SCRUBBER = """
import os, signal, sqlite3, subprocess, sys, time
from deniable.server.store import scrub

path, forks = sys.argv[1], int(sys.argv[2])
writer = subprocess.Popen([sys.executable, "-c", sys.argv[3], path])
try:
    time.sleep(0.5)
    scrub.start(path, 0.0001)  # as deniable serve does in gunicorn's master, but scrubbing all the time
    stuck = 0
    for _ in range(forks):
        pid = os.fork()
        if pid == 0:  # a worker: its first connection
            conn = sqlite3.connect(path)
            conn.execute("PRAGMA busy_timeout = 2000")
            try:
                conn.execute("SELECT passes FROM scrub").fetchone()
            except sqlite3.Error:
                pass
            os._exit(0)
        deadline = time.monotonic() + 5
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                stuck += 1
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.001)
    passes = sqlite3.connect(path).execute("SELECT passes FROM scrub").fetchone()[0]
    print(stuck, passes)
finally:
    writer.kill()
"""


@pytest.mark.slow
def test_workers_forked_beside_the_scrubber_never_inherit_a_held_sqlite_lock(migrated_db):
    """gunicorn's master runs the scrubber and forks the workers; a worker forked while the scrubber
    was inside SQLite hung in its first connect (2 of 300 forks before the fork guard).  Run in a
    fresh process, as the master is, with a writer in another process keeping the WAL busy."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FORKS_BESIDE_A_SCRUBBER, migrated_db, "300", WRITES_FOREVER],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    stuck, passes = map(int, done.stdout.split())
    assert stuck == 0
    assert passes > 5, "the scrubber hardly ran: the test proves nothing"


@pytest.mark.parametrize("old, new", [("closed", "draft"), ("open", "draft"), ("draft", "closed")])
def test_the_database_refuses_status_changes_outside_the_lifecycle(db, stored, old, new):
    """Editing the file cannot reopen a closed survey as a draft (whose design could then change)."""
    if old == "closed":
        set_status(db, "demo", "closed")
    if old == "draft":
        db.execute("INSERT INTO surveys (slug, title, description, status, target_n) VALUES ('d', 'D', '', 'draft', 1)")
    slug = "d" if old == "draft" else "demo"
    with pytest.raises(sqlite3.IntegrityError, match="this status change is not allowed"):
        db.execute("UPDATE surveys SET status = ? WHERE slug = ?", [new, slug])


def test_a_launched_survey_cannot_be_deleted_from_the_file(db, stored):
    with pytest.raises(sqlite3.IntegrityError, match="cannot be deleted"):
        db.execute("DELETE FROM surveys WHERE id = ?", [stored.id])


def test_migration_timestamps_keep_the_day_only(db):
    assert {len(a) for (a,) in db.execute("SELECT applied_at FROM _sqlite_migrations")} == {10}
