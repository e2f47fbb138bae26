"""A kill right after SQLite cuts the WAL file back leaves no -shm listing pages the WAL no longer holds.

SQLite zeroes the -shm's list of pages (the order of the last commits) only when a commit appends
the first frame of a new generation of the WAL, and a commit that restarts the WAL under
``journal_size_limit`` cuts the file back *before* it does so (``sqlite3WalFrames``: ``walLimitSize``,
then ``walIndexAppend``).  Killed between the two, a server left a WAL of one frame beside a -shm
listing every page of the previous generation (issue 41: 774 pages, ``tests/e2e/test_crash.py``).

Each case runs in a child process whose SQLite kills it right after any ``ftruncate`` of the WAL
(:mod:`support.syscalls`), so the files are what such a kill leaves; this process keeps a
connection open, as a server's other workers do, and reads them after the child ends.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from deniable.server.store.db import connect
from deniable.server.store.scrub import scrub_page
from deniable.server.store.demo import demo_survey
from deniable.server.store.surveys import insert_survey
from support.forensics import frames_held, shm_pages, wal_frames

TESTS = Path(__file__).resolve().parents[1]

CHILD = """
import sys
from support.syscalls import kill_right_after_wal_truncation
from support.store import store_response
from deniable.server.store import scrub
from deniable.server.store.db import connect
from deniable.server.store.surveys import get_survey

path, case = sys.argv[1:3]
kill_right_after_wal_truncation()
db, other = connect(path), connect(path)  # the scrubber's connection, and another worker's
if case == "journal_size_limit=0":  # what every write connection had before the fix
    for handle in (db, other):
        handle.execute("PRAGMA journal_size_limit = 0")
stored = get_survey(db, "demo")
reports = {"drug_use": 1, "cheating": 2}
for _ in range(20):
    store_response(db, stored, reports)
if case in ("scrub", "journal_size_limit=0"):
    assert scrub.scrub(db)
elif case == "another writer restarts the WAL":
    assert db.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()[0] == 0  # a scrub's checkpoint
    store_response(other, stored, reports)  # a worker's commit gets there before the scrub's write
    assert scrub.scrub(db)
elif case == "automatic checkpoint":  # no scrub: SQLite's own checkpoint after a commit, then a restart
    other.execute("PRAGMA wal_autocheckpoint = 10")  # 1,000 pages by default: the same, sooner
    for _ in range(20):
        store_response(other, stored, reports)
print("not killed", flush=True)
"""


def run_child(path: str, case: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-c", CHILD, path, case], capture_output=True, text=True,
                          timeout=120, env=env)


def leftovers(path: str, page: int) -> tuple[int, int, list[int]]:
    """The frames the WAL file holds (any generation), those of its current generation, and the pages
    the -shm lists but the ``scrub`` table's own."""
    wal, shm = Path(f"{path}-wal").read_bytes(), Path(f"{path}-shm").read_bytes()
    return frames_held(wal), wal_frames(wal), [p for p in shm_pages(shm) if p != page]


@pytest.fixture
def demo_db(migrated_db):
    db = connect(migrated_db)
    insert_survey(db, demo_survey(), status="open")
    yield migrated_db, scrub_page(db)
    db.conn.close()


@pytest.mark.parametrize("case", ["scrub", "another writer restarts the WAL", "automatic checkpoint"])
def test_no_kill_at_any_cut_of_the_wal_leaves_the_shm_listing_pages_beyond_it(demo_db, case):
    path, page = demo_db
    done = run_child(path, case)
    assert done.returncode in (0, -9), done.stderr
    held, current, listed = leftovers(path, page)
    assert len(listed) <= held, (f"{done.stderr.strip()}: the -shm lists {len(listed)} pages "
                                 f"for a WAL of {held} frames")
    assert done.returncode == 0 and "not killed" in done.stdout, done.stderr  # SQLite never cut the WAL
    if case != "automatic checkpoint":  # the scrub cut the file after its generation: no older frame
        assert held == current and current >= 1


def test_sqlite_cutting_the_wal_as_it_restarts_leaves_the_shm_listing_the_old_generation(demo_db):
    """The control: with ``journal_size_limit = 0`` the scrub's own restart cuts the WAL, and a kill
    right after leaves a WAL of its one frame beside a -shm listing the 20 commits before it."""
    path, page = demo_db
    done = run_child(path, "journal_size_limit=0")
    assert done.returncode == -9 and "killed right after SQLite's ftruncate" in done.stderr, done.stderr
    held, current, listed = leftovers(path, page)
    assert held == current == 1 and len(listed) > 20
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
